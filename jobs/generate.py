"""`rebalance-replay generate`: a realistic fleet's rebalance history, for benchmarks and notebooks.

    rebalance-replay generate --groups 200 --days 7 --out /work/bench-data/fleet
    rebalance-replay generate --events-target 1000000 --days 7 --out DIR --format both
    rebalance-replay generate --single-group-events 10000000 --out DIR      # one huge group

The fleet, its incidents and how they are simulated: `rebalance_core.workload`. The same arguments and
seed give the same files. Work is split into batches of consecutive groups (one big group: one batch),
run in parallel processes; each batch streams its groups segment by segment to its own files, so
memory holds one simulation segment per process, never the whole history.

Layout of DIR (created; must be empty):
    events/date=YYYY-MM-DD/part-BBBBB-NNN.jsonl   canonical events (schemas.events, JSON lines), by UTC
                                                  date of ts; BBBBB = batch, NNN = file of that batch
    kafka-logs/cluster=C/date=YYYY-MM-DD/G.server.log    the coordinator's lines about group G (broker
    kafka-logs/cluster=C/date=YYYY-MM-DD/G.consumer.log  server.log) and its consumers' lines, as Kafka
                                                  3.9 logs them (rebalance_core.kafka_logs.writer); read
                                                  them with the manifest's kafka_log_options
    manifest.json                                 arguments, groups, counts, sizes, timing
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import sys
import time
from collections import Counter, OrderedDict
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from jobs.usage import UsageError
from rebalance_core.events import Event
from rebalance_core.kafka_logs.writer import KafkaLogWriter
from rebalance_core.kafka_logs.writer_lines import BROKER, CLIENT
from rebalance_core.measure_records import DAY_MS, date_of_day
from rebalance_core.workload.fleet import CONSUMER, GroupPlan, plan_group, single_group_plan, topic_id
from rebalance_core.workload.segments import GroupStream, estimated_events, group_segments, simulate_segment

FORMATS = ("events", "kafka-log", "both")
DEFAULT_GROUPS = 100
BATCH_EVENTS = 60_000  # estimated events per batch of groups (the unit of parallel work)
MAX_OPEN_FILES = 64
WRITE_CHUNK = 5_000  # events serialised at a time
KAFKA_LOG_PATH_PATTERN = r"cluster=(?P<cluster>[^/\\]+)"


def configure(parser: argparse.ArgumentParser) -> None:
    size = parser.add_mutually_exclusive_group()
    size.add_argument("--groups", type=int, help=f"number of consumer groups (default {DEFAULT_GROUPS})")
    size.add_argument(
        "--events-target", type=int, metavar="N", help="as many groups as make about N events over --days"
    )
    size.add_argument(
        "--single-group-events",
        type=int,
        metavar="N",
        help="one big group rebalancing around the clock until about N events, over as many days as that "
        "takes (--days does not apply; for memory benchmarks)",
    )
    parser.add_argument("--days", type=int, default=7, help="days of history (default 7)")
    parser.add_argument(
        "--out", required=True, metavar="DIR", help="output directory (created; must be empty)"
    )
    parser.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    parser.add_argument(
        "--start", default="2024-01-01", help="first UTC day, YYYY-MM-DD (default 2024-01-01)"
    )
    parser.add_argument("--format", choices=FORMATS, default="events", help="what to write (default events)")
    parser.add_argument("--workers", type=int, default=None, help="parallel processes (default: CPU count)")
    parser.add_argument(
        "--rows-per-file", type=int, default=1_000_000, help="events per JSON-lines file (default 1000000)"
    )


@dataclass(frozen=True)
class Batch:
    number: int
    plans: tuple[GroupPlan, ...]
    start_ms: int
    days: int
    out: str
    events: bool
    kafka_logs: bool
    rows_per_file: int
    events_target: int | None = None  # the single big group


@dataclass
class BatchResult:
    number: int
    groups: int = 0
    events: int = 0
    events_bytes: int = 0
    log_lines: int = 0
    log_bytes: int = 0
    first_ts: int | None = None
    last_ts: int | None = None
    by_type: Counter = field(default_factory=Counter)


def main(args: argparse.Namespace) -> int:
    out = Path(args.out)
    _check_args(args, out)
    start_ms = _start_ms(args.start)
    began = time.perf_counter()
    batches, plans = _batches(args, out, start_ms)
    workers = max(1, min(args.workers or os.cpu_count() or 1, len(batches)))
    planned = sum(len(b.plans) for b in batches)
    print(
        f"generate: {planned} group(s), {len(batches)} batch(es), {workers} worker(s) -> {out}",
        file=sys.stderr,
    )
    total = BatchResult(number=-1)
    try:
        with ProcessPoolExecutor(max_workers=workers) as pool:
            for result in pool.map(run_batch, batches):
                _add(total, result)
                elapsed = time.perf_counter() - began
                print(
                    f"generate: batch {result.number + 1}/{len(batches)}: {result.events:,} events "
                    f"(total {total.events:,}, {total.events / elapsed:,.0f} events/s)",
                    file=sys.stderr,
                )
    except OSError as exc:
        raise UsageError(f"cannot write under {out}: {exc.strerror or exc}") from None
    seconds = time.perf_counter() - began
    manifest = _manifest(args, plans, total, seconds, start_ms)
    (out / "manifest.json").write_text(json.dumps(manifest, indent=1) + "\n", encoding="utf-8")
    _print_summary(manifest)
    return 0


def _check_args(args: argparse.Namespace, out: Path) -> None:
    for name in ("groups", "events_target", "single_group_events", "days", "workers", "rows_per_file"):
        value = getattr(args, name)
        if value is not None and value < 1:
            raise UsageError(f"--{name.replace('_', '-')} must be >= 1, got {value}")
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise UsageError(f"{out} exists and is not an empty directory")


def _start_ms(text: str) -> int:
    try:
        day = dt.date.fromisoformat(text)
    except ValueError:
        raise UsageError(f"--start: expected a date YYYY-MM-DD, got {text!r}") from None
    return int(dt.datetime(day.year, day.month, day.day, tzinfo=dt.UTC).timestamp() * 1000)


def _batches(args: argparse.Namespace, out: Path, start_ms: int) -> tuple[list[Batch], list[GroupPlan]]:
    """Consecutive groups, BATCH_EVENTS estimated events per batch (deterministic for the arguments)."""
    common = {
        "start_ms": start_ms,
        "days": args.days,
        "out": str(out),
        "events": args.format in ("events", "both"),
        "kafka_logs": args.format in ("kafka-log", "both"),
        "rows_per_file": args.rows_per_file,
    }
    if args.single_group_events:
        plan = single_group_plan(args.seed)
        return [Batch(0, (plan,), events_target=args.single_group_events, **common)], [plan]
    plans: list[GroupPlan] = []
    estimates: list[int] = []
    target = args.events_target
    groups = args.groups or DEFAULT_GROUPS
    planned = 0
    while (len(plans) < groups) if target is None else (planned < target):
        plan = plan_group(len(plans), args.seed)
        plans.append(plan)
        estimates.append(estimated_events(group_segments(plan, start_ms, args.days)))
        planned += estimates[-1]
    batches: list[Batch] = []
    current: list[GroupPlan] = []
    weight = 0
    for plan, estimate in zip(plans, estimates, strict=True):
        current.append(plan)
        weight += estimate
        if weight >= BATCH_EVENTS:
            batches.append(Batch(len(batches), tuple(current), **common))
            current, weight = [], 0
    if current:
        batches.append(Batch(len(batches), tuple(current), **common))
    return batches, plans


# --------------------------------------------------------------------------------- one batch (worker)
def run_batch(batch: Batch) -> BatchResult:
    """Simulate the batch's groups segment by segment, appending each segment's events to the files."""
    result = BatchResult(number=batch.number)
    files = _AppendFiles(Path(batch.out))
    try:
        for plan in batch.plans:
            _run_group(batch, plan, files, result)
    finally:
        files.close()
    return result


def _run_group(batch: Batch, plan: GroupPlan, files: _AppendFiles, result: BatchResult) -> None:
    result.groups += 1
    segments = group_segments(plan, batch.start_ms, batch.days, events_target=batch.events_target)
    stream = GroupStream()
    topic_ids = {t: topic_id(plan.cluster, t) for t, _ in plan.topics}
    writer = KafkaLogWriter(consumer_protocol=plan.kind == CONSUMER, topic_ids=topic_ids)
    for segment in segments:
        events = stream.join(simulate_segment(segment))
        if not events:
            continue
        result.events += len(events)
        result.by_type.update(e.event_type for e in events)
        result.first_ts = min(events[0].ts, result.first_ts or events[0].ts)
        result.last_ts = max(events[-1].ts, result.last_ts or events[-1].ts)
        if batch.events:
            result.events_bytes += _write_events(batch, events, files)
        if batch.kafka_logs:
            final = segment is segments[-1]
            _write_logs(plan, writer, events, files, result, final)


def _write_events(batch: Batch, events: list[Event], files: _AppendFiles) -> int:
    written = 0
    for day, day_events in _by_day(events, lambda e: e.ts):
        for first in range(0, len(day_events), WRITE_CHUNK):
            chunk = day_events[first : first + WRITE_CHUNK]
            text = "".join(json.dumps(e.to_json_dict(), separators=(",", ":")) + "\n" for e in chunk)
            files.append_rows(
                f"events/date={day}", f"part-{batch.number:05d}", text, len(chunk), batch.rows_per_file
            )
            written += len(text.encode("utf-8"))
    return written


def _write_logs(
    plan: GroupPlan,
    writer: KafkaLogWriter,
    events: list[Event],
    files: _AppendFiles,
    result: BatchResult,
    final: bool,
) -> None:
    lines = [line for e in events for line in writer.write(e)]
    if final:
        lines.extend(writer.flush())
    for day, day_lines in _by_day(lines, lambda line: line.ts):
        folder = f"kafka-logs/cluster={plan.cluster}/date={day}"
        for stream, suffix in ((BROKER, "server"), (CLIENT, "consumer")):
            chosen = [line.text for line in day_lines if line.stream == stream]
            if chosen:
                text = "\n".join(chosen) + "\n"
                files.append(f"{folder}/{plan.group_id}.{suffix}.log", text)
                result.log_lines += len(chosen)
                result.log_bytes += len(text.encode("utf-8"))


def _by_day(items: list, ts_of) -> list[tuple[str, list]]:
    """Consecutive runs of items (in time order) per UTC date."""
    runs: list[tuple[str, list]] = []
    current_day = None
    for item in items:
        day = ts_of(item) // DAY_MS
        if day != current_day:
            current_day = day
            runs.append((date_of_day(day).isoformat(), []))
        runs[-1][1].append(item)
    return runs


class _AppendFiles:
    """Appends to files under a root, keeping at most MAX_OPEN_FILES open; JSON-lines parts roll over
    to a new file after `rows_per_file` rows."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.open: OrderedDict[str, object] = OrderedDict()
        self.parts: dict[tuple[str, str], tuple[int, int]] = {}  # (folder, stem) -> (file number, rows)

    def append(self, relative: str, text: str) -> None:
        handle = self.open.pop(relative, None)
        if handle is None:
            path = self.root / relative
            path.parent.mkdir(parents=True, exist_ok=True)
            handle = open(path, "a", encoding="utf-8")  # noqa: SIM115 - kept open across calls, closed in close()
            if len(self.open) >= MAX_OPEN_FILES:
                self.open.popitem(last=False)[1].close()
        self.open[relative] = handle
        handle.write(text)

    def append_rows(self, folder: str, stem: str, text: str, rows: int, rows_per_file: int) -> None:
        number, count = self.parts.get((folder, stem), (0, 0))
        if count and count + rows > rows_per_file:
            number, count = number + 1, 0
        self.parts[(folder, stem)] = (number, count + rows)
        self.append(f"{folder}/{stem}-{number:03d}.jsonl", text)

    def close(self) -> None:
        for handle in self.open.values():
            handle.close()
        self.open.clear()


# --------------------------------------------------------------------------------------- reporting
def _add(total: BatchResult, result: BatchResult) -> None:
    total.groups += result.groups
    total.events += result.events
    total.events_bytes += result.events_bytes
    total.log_lines += result.log_lines
    total.log_bytes += result.log_bytes
    total.by_type.update(result.by_type)
    for ts in (result.first_ts, result.last_ts):
        if ts is not None:
            total.first_ts = min(ts, total.first_ts if total.first_ts is not None else ts)
            total.last_ts = max(ts, total.last_ts if total.last_ts is not None else ts)


def _manifest(args, plans: list[GroupPlan], total: BatchResult, seconds: float, start_ms: int) -> dict:
    per_million = (lambda b: round(b * 1_000_000 / total.events)) if total.events else (lambda b: None)
    return {
        "arguments": {
            "groups": args.groups,
            "events_target": args.events_target,
            "single_group_events": args.single_group_events,
            "days": args.days,
            "seed": args.seed,
            "start": args.start,
            "format": args.format,
        },
        "groups": len(plans),
        "group_kinds": dict(Counter(p.kind for p in plans)),
        "members": sum(p.members for p in plans),
        "events": total.events,
        "event_types": dict(sorted(total.by_type.items())),
        "first_ts": total.first_ts,
        "last_ts": total.last_ts,
        "seconds": round(seconds, 1),
        "events_per_second": round(total.events / seconds) if seconds else None,
        "events_bytes": total.events_bytes,
        "events_bytes_per_million": per_million(total.events_bytes),
        "kafka_log_lines": total.log_lines,
        "kafka_log_bytes": total.log_bytes,
        "kafka_log_bytes_per_million_events": per_million(total.log_bytes),
        "kafka_log_options": {
            "path_pattern": KAFKA_LOG_PATH_PATTERN,
            "topic_ids": {t: topic_id(p.cluster, t) for p in plans for t, _ in p.topics},
        },
        "start_ms": start_ms,
        "plans": [
            {
                "cluster": p.cluster,
                "group_id": p.group_id,
                "kind": p.kind,
                "assignor": p.assignor,
                "members": p.members,
                "partitions": sum(c for _, c in p.topics),
            }
            for p in plans
        ],  # fmt: skip
    }


def _print_summary(m: dict) -> None:
    mb = 1024 * 1024
    print(
        f"generate: {m['events']:,} events from {m['groups']} group(s) in {m['seconds']} s "
        f"({m['events_per_second'] or 0:,} events/s)",
        file=sys.stderr,
    )
    if m["events_bytes"]:
        print(
            f"generate: events {m['events_bytes'] / mb:,.1f} MiB "
            f"({(m['events_bytes_per_million'] or 0) / mb:,.1f} MiB per 1M events)",
            file=sys.stderr,
        )
    if m["kafka_log_bytes"]:
        print(
            f"generate: kafka logs {m['kafka_log_lines']:,} entries, {m['kafka_log_bytes'] / mb:,.1f} MiB "
            f"({(m['kafka_log_bytes_per_million_events'] or 0) / mb:,.1f} MiB per 1M events); parse with "
            f"path_pattern {KAFKA_LOG_PATH_PATTERN!r} and the manifest's topic_ids",
            file=sys.stderr,
        )
