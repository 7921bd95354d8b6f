"""`rebalance-replay generate`: files, determinism, the size knobs and argument errors."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from jobs.cli import main
from rebalance_core.events import Event, format_ts
from rebalance_core.kafka_logs import parse_lines

REPO = Path(__file__).resolve().parents[2]


def generate(out: Path, *args: str) -> int:
    return main(["generate", "--out", str(out), "--workers", "1", *args])


def files(root: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(root)): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file() and p.name != "manifest.json"
    }


def read_events(root: Path) -> list[tuple[Path, Event]]:
    return [
        (path, Event.from_row(json.loads(line)))
        for path in sorted((root / "events").rglob("*.jsonl"))
        for line in path.read_text(encoding="utf-8").splitlines()
    ]


@pytest.fixture(scope="module")
def fleet(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("gen") / "fleet"
    assert generate(out, "--groups", "4", "--days", "2", "--seed", "5", "--format", "both") == 0
    return out


def test_writes_date_partitioned_events_kafka_logs_and_a_manifest(fleet):
    manifest = json.loads((fleet / "manifest.json").read_text())
    events = read_events(fleet)
    assert manifest["groups"] == 4 and manifest["events"] == len(events) > 0
    assert len({e.event_id for _, e in events}) == len(events)
    for path, event in events:  # each event lies in the folder of its UTC date
        assert path.parent.name == f"date={format_ts(event.ts)[:10]}"
        assert path.name.startswith("part-")
    logs = sorted((fleet / "kafka-logs").rglob("*.log"))
    assert any(p.name.endswith(".server.log") for p in logs) and any(
        p.name.endswith(".consumer.log") for p in logs
    )
    assert manifest["kafka_log_lines"] > 0 and manifest["events_bytes_per_million"] > 0


def test_kafka_logs_parse_without_quarantine(fleet):
    manifest = json.loads((fleet / "manifest.json").read_text())
    topic_ids = manifest["kafka_log_options"]["topic_ids"]
    parsed = 0
    for path in sorted((fleet / "kafka-logs").rglob("*.log")):
        cluster = path.parts[-3].removeprefix("cluster=")
        result = parse_lines(
            path.read_text().splitlines(), file=str(path), cluster=cluster, topic_ids=topic_ids
        )
        assert result.quarantine == []
        parsed += len(result.events)
    assert parsed > 0


def test_the_same_arguments_give_the_same_files(fleet, tmp_path):
    again = tmp_path / "again"
    assert generate(again, "--groups", "4", "--days", "2", "--seed", "5", "--format", "both") == 0
    assert files(again) == files(fleet)


def test_an_events_target_picks_the_fleet_size(tmp_path):
    out = tmp_path / "target"
    assert generate(out, "--events-target", "3000", "--days", "1", "--seed", "2") == 0
    manifest = json.loads((out / "manifest.json").read_text())
    assert 1_000 <= manifest["events"] <= 9_000
    assert not (out / "kafka-logs").exists()


def test_one_big_group(tmp_path):
    out = tmp_path / "single"
    assert generate(out, "--single-group-events", "2000", "--seed", "1") == 0
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["groups"] == 1 and manifest["plans"][0]["members"] == 150
    assert {e.group_id for _, e in read_events(out)} == {manifest["plans"][0]["group_id"]}


@pytest.mark.parametrize(
    "args",
    [
        ["--groups", "0"],
        ["--days", "0"],
        ["--start", "yesterday"],
    ],
)
def test_bad_arguments_are_one_line_errors(tmp_path, args, capsys):
    assert generate(tmp_path / "out", *args) == 2
    assert "rebalance-replay generate: error:" in capsys.readouterr().err


def test_refuses_a_non_empty_output_directory(tmp_path, capsys):
    (tmp_path / "keep.txt").write_text("mine")
    assert generate(tmp_path, "--groups", "1") == 2
    assert "not an empty directory" in capsys.readouterr().err
    assert (tmp_path / "keep.txt").read_text() == "mine"


def test_size_options_exclude_each_other(tmp_path):
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    run = subprocess.run(
        [sys.executable, "-m", "jobs.cli", "generate", "--out", str(tmp_path / "x"), "--groups", "2",
         "--events-target", "100"],
        capture_output=True, text=True, cwd=REPO, env=env, timeout=60,
    )  # fmt: skip
    assert run.returncode == 2 and "not allowed with argument" in run.stderr
