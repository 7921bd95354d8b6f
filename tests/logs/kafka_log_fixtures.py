"""Shared helpers of the Kafka-log tests: fixture paths, parsing a fixture, compact event views."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rebalance_core.events import Event, format_ts
from rebalance_core.kafka_logs import ParseResult, parse_lines

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "kafka_logs"
REAL = FIXTURES / "real"
EXCERPTS = FIXTURES / "excerpts"
REAL_LOGS = sorted(REAL.glob("*.log"))
EXCERPT_LOGS = sorted(p for p in EXCERPTS.iterdir() if not p.name.endswith(".expected.json"))


def file_lines(path: Path) -> list[str]:
    """Physical lines, split on \\n only (as the CLI and the Spark reader do)."""
    text = path.read_text(encoding="utf-8")
    lines = text.split("\n")
    return lines[:-1] if text.endswith("\n") else lines


def parse_fixture(path: Path, **options: Any) -> ParseResult:
    return parse_lines(file_lines(path), file=path.name, cluster="test", **options)


def compact(event: Event) -> dict[str, Any]:
    """An event as the *.expected.json files write it: JSON form, partitions as "topic-N", without the
    fields that depend on where the file lives (id, cluster, file, raw)."""
    out = event.to_json_dict()
    for key in ("event_id", "cluster", "raw", "file"):
        out.pop(key, None)
    if "partitions" in out:
        out["partitions"] = [f"{p['topic']}-{p['partition']}" for p in out["partitions"]]
    if "assignment" in out:
        out["assignment"] = {
            m: [f"{p['topic']}-{p['partition']}" for p in ps] for m, ps in out["assignment"].items()
        }
    return out


def at(ts: int) -> str:
    """ISO form of an event time, for readable asserts."""
    return format_ts(ts)


def tps(event: Event) -> list[str]:
    return [str(tp) for tp in event.partitions or ()]
