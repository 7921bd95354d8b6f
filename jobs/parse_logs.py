"""`rebalance-replay parse-logs PATH... --out DIR`: Kafka's own logs -> canonical events, locally.

Files or directories (recursively; gzip detected by content) are parsed in parallel, one file per task
of a process pool. Writes DIR/events.jsonl (schemas.events, JSON form), DIR/quarantine.jsonl (the
quarantine table's columns plus `ts`) and DIR/counts.json (per file and total), in input order, and
prints how many lines were read, became events, were skipped or quarantined (an unreadable file counts
as one quarantined line). Rerunning gives the same files (event ids hash file and line).

Time-only lines (logback's default `HH:mm:ss.SSS`) take their date from the file name when it carries
one (`app.2024-05-06.log`), else from `--log-date`; otherwise their group lines are quarantined.
"""

from __future__ import annotations

import argparse
import json
import os
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import yaml

from jobs.log_source import (
    DEFAULT_CLUSTER,
    LogOptions,
    counts_json,
    expand_paths,
    log_date,
    parse_file,
    quarantine_json,
)
from jobs.usage import UsageError, printable_name
from rebalance_core.kafka_logs import ParseCounts

OUTPUT_FILES = ("events.jsonl", "quarantine.jsonl", "counts.json")


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("paths", nargs="+", metavar="PATH", help="log file or directory (recursive; .gz ok)")
    parser.add_argument(
        "--out", required=True, metavar="DIR", help="output directory (created; files replaced)"
    )
    parser.add_argument(
        "--cluster", default=DEFAULT_CLUSTER, help=f"cluster name (default {DEFAULT_CLUSTER!r})"
    )
    parser.add_argument("--tz", default="UTC", help="time zone of the logs' naive timestamps (default UTC)")
    parser.add_argument(
        "--log-date",
        metavar="YYYY-MM-DD",
        help="date of the first time-only line (e.g. logback's HH:mm:ss.SSS) in files whose name has no date",
    )
    parser.add_argument(
        "--path-pattern",
        metavar="RE",
        help="regex searched in each file path; named groups 'cluster' and 'source' override --cluster and "
        r"the source read from the log, e.g. '(?P<cluster>[^/]+)/(?P<source>[^/]+)\.log'",
    )
    parser.add_argument(
        "--topic-ids", metavar="FILE", help="JSON/YAML object topic name -> topic id (KIP-848 logs)"
    )
    parser.add_argument("--workers", type=int, default=None, help="parallel processes (default: CPU count)")


def main(args: argparse.Namespace) -> int:
    options = _options(args)
    try:
        files = expand_paths(args.paths)
    except FileNotFoundError as exc:
        raise UsageError(f"no such file or directory: {exc}") from None
    if not files:
        raise UsageError("no files found under the given paths")
    out = Path(args.out)
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise UsageError(f"cannot create output directory {out}: {exc.strerror}") from None

    per_file: dict[str, ParseCounts] = {}
    with (
        open(out / "events.jsonl", "w", encoding="utf-8") as events_out,
        open(out / "quarantine.jsonl", "w", encoding="utf-8") as quarantine_out,
    ):
        for path, event_lines, quarantine_lines, counts in _parse_all(files, options, args.workers):
            events_out.writelines(event_lines)
            quarantine_out.writelines(quarantine_lines)
            per_file[path] = counts
    (out / "counts.json").write_text(counts_json(per_file), encoding="utf-8")
    _print_summary(per_file, out)
    return 0


def _options(args: argparse.Namespace) -> LogOptions:
    topic_ids = {}
    if args.topic_ids:
        try:
            doc = yaml.safe_load(Path(args.topic_ids).read_text(encoding="utf-8"))  # JSON is YAML
        except (OSError, yaml.YAMLError) as exc:
            raise UsageError(f"cannot read --topic-ids {args.topic_ids}: {exc}") from None
        if not isinstance(doc, dict):
            raise UsageError("--topic-ids must hold an object topic name -> topic id")
        topic_ids = {str(k): str(v) for k, v in doc.items()}
    try:
        options = LogOptions(
            cluster=args.cluster,
            tz=args.tz,
            path_pattern=args.path_pattern,
            topic_ids=topic_ids,
            date=log_date(args.log_date),
        )
        options.validate()
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    return options


def _parse_all(files: list[str], options: LogOptions, workers: int | None):
    """(path, event JSON lines, quarantine JSON lines, counts) per file, in input order."""
    workers = min(workers or os.cpu_count() or 1, len(files))
    if workers <= 1:
        yield from (_parse_one(path, options) for path in files)
        return
    with ProcessPoolExecutor(max_workers=workers) as pool:
        yield from pool.map(_parse_one, files, [options] * len(files))


def _parse_one(path: str, options: LogOptions) -> tuple[str, list[str], list[str], ParseCounts]:
    result = parse_file(path, options)
    cluster, _ = options.identity(path)
    events = [json.dumps(e.to_json_dict(), ensure_ascii=False) + "\n" for e in result.events]
    quarantine = [
        json.dumps(quarantine_json(q, cluster), ensure_ascii=False) + "\n" for q in result.quarantine
    ]
    return printable_name(path), events, quarantine, result.counts  # a name that is not UTF-8 prints


def _print_summary(per_file: dict[str, ParseCounts], out: Path) -> None:
    total = ParseCounts()
    width = max(len(p) for p in per_file)
    print(f"{'file':<{width}}  {'read':>8} {'events':>8} {'skipped':>8} {'quarantined':>11}")
    for path, counts in per_file.items():
        total.add(counts)
        print(
            f"{path:<{width}}  {counts.read:>8} {counts.events:>8} {counts.skipped:>8} {counts.quarantined:>11}"
        )
    print(
        f"parse-logs: {len(per_file)} file(s), read {total.read} lines: {total.events} events "
        f"(from {total.event_lines} lines), {total.skipped} skipped, {total.quarantined} quarantined -> {out}"
    )
