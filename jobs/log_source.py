"""Kafka's own log files as input: the file handling shared by `parse-logs` and the Spark job's
`--input-format kafka-log` reader (`read_kafka_logs`).

The parsing itself is `rebalance_core.kafka_logs.parse_lines` (pure). Here: which files, how their bytes
become lines (gzip by magic number, UTF-8 with replacement), and which cluster/source a file belongs
to (a path regex with named groups `cluster` and `source`, else the configured cluster and the source
read from the log prefix).

A file that cannot be read at all is one quarantined row (line 0) and counts as one line read and
quarantined. A gzip file that ends early (a copy cut off mid-stream) keeps its complete lines; what
follows the last complete line is one quarantined row that says so.

`read_kafka_logs` uses DataFrame APIs only (binaryFile source -> mapInPandas), so it runs on Spark
Connect and Databricks serverless as well as on a classic session.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import json
import os
import re
import zlib
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rebalance_core.events import format_ts
from rebalance_core.kafka_logs import ParseCounts, ParseResult, QuarantinedLine, parse_lines
from rebalance_core.kafka_logs.layouts import resolve_zone
from schemas.events import EVENT_COLUMN_NAMES, EVENT_COLUMNS
from schemas.fields import COUNTS, DATE, STRING, Column

GZIP_MAGIC = b"\x1f\x8b"
DEFAULT_CLUSTER = "default"


@dataclass(frozen=True)
class LogOptions:
    cluster: str = DEFAULT_CLUSTER
    tz: str = "UTC"
    path_pattern: str | None = None  # regex searched in each file path; named groups cluster, source
    topic_ids: dict[str, str] = field(default_factory=dict)  # topic name -> topic id (KIP-848 broker lines)
    date: dt.date | None = None  # the date of time-only lines in files whose name carries none

    @classmethod
    def from_mapping(cls, options: Mapping[str, Any] | None) -> LogOptions:
        """From the job's `input.options` (keys cluster, tz, path_pattern, topic_ids, date). ValueError on
        bad values."""
        options = dict(options or {})
        unknown = set(options) - {"cluster", "tz", "path_pattern", "topic_ids", "date"}
        if unknown:
            raise ValueError(f"unknown kafka-log option(s): {', '.join(sorted(unknown))}")
        result = cls(
            cluster=str(options.get("cluster") or DEFAULT_CLUSTER),
            tz=str(options.get("tz") or "UTC"),
            path_pattern=options.get("path_pattern") or None,
            topic_ids={str(k): str(v) for k, v in (options.get("topic_ids") or {}).items()},
            date=log_date(options.get("date")),
        )
        result.validate()
        return result

    def validate(self) -> None:
        resolve_zone(self.tz)
        if self.path_pattern is not None:
            try:
                compiled = re.compile(self.path_pattern)
            except re.error as exc:
                raise ValueError(f"path pattern {self.path_pattern!r}: {exc}") from None
            if not {"cluster", "source"} & set(compiled.groupindex):
                raise ValueError(
                    f"path pattern {self.path_pattern!r} has no named group 'cluster' or 'source'"
                )

    def identity(self, path: str) -> tuple[str, str | None]:
        """(cluster, source) of a file: the path pattern's named groups where they match."""
        cluster, source = self.cluster, None
        if self.path_pattern:
            m = re.search(self.path_pattern, path)
            if m:
                groups = m.groupdict()
                cluster = groups.get("cluster") or cluster
                source = groups.get("source") or None
        return cluster, source


def log_date(value: Any) -> dt.date | None:
    """The `date` option: a date (YAML reads an unquoted 2024-05-06 as one) or YYYY-MM-DD text."""
    if value is None or value == "":
        return None
    if isinstance(value, dt.datetime):
        return value.date()
    if isinstance(value, dt.date):
        return value
    try:
        return dt.date.fromisoformat(str(value))
    except ValueError:
        raise ValueError(f"date {value!r} is not a YYYY-MM-DD date") from None


def expand_paths(paths: Iterable[str]) -> list[str]:
    """Files named or found (recursively, hidden files skipped) under the given paths, sorted per
    argument. FileNotFoundError for a path that does not exist."""
    out: list[str] = []
    for path in paths:
        p = Path(path)
        if p.is_file():
            out.append(str(p))
        elif p.is_dir():
            found = []
            for root, dirs, files in os.walk(p):
                dirs[:] = [d for d in dirs if not d.startswith(".")]
                found.extend(os.path.join(root, f) for f in files if not f.startswith("."))
            out.extend(sorted(found))
        else:
            raise FileNotFoundError(path)
    return out


class LogLines:
    """A file's content as physical lines (split on \\n only, so numbering matches `wc -l`/editors;
    UTF-8 with replacement), gunzipped when it starts with the gzip magic number (members concatenated
    by rotation tools included). Iterating yields the complete lines; when the compressed stream is cut
    off or corrupt, iteration stops there and `broken` says why and `tail` holds the text after the
    last complete line."""

    _CHUNK = 1 << 20

    def __init__(self, chunks: Iterable[bytes]) -> None:
        self._chunks = iter(chunks)
        self.broken: str | None = None
        self.tail = ""
        self.count = 0

    def __iter__(self) -> Iterator[str]:
        rest = b""
        for block in self._blocks():
            lines = (rest + block).split(b"\n")
            rest = lines.pop()
            self.count += len(lines)
            for line in lines:
                yield line.decode("utf-8", errors="replace").rstrip("\r")
        if rest and self.broken is None:  # a last line without a newline is complete
            self.count += 1
            yield rest.decode("utf-8", errors="replace").rstrip("\r")
        elif rest:
            self.tail = rest.decode("utf-8", errors="replace").rstrip("\r")

    def _blocks(self) -> Iterator[bytes]:
        first = next(self._chunks, b"")
        if first[:2] != GZIP_MAGIC:
            yield first
            yield from self._chunks
            return
        inflater, fed, pending = zlib.decompressobj(wbits=31), False, first
        while pending is not None:
            try:
                while pending:
                    fed = True
                    yield inflater.decompress(pending)
                    pending = b""
                    if inflater.eof:  # another gzip member may follow (rotation tools concatenate them)
                        pending = inflater.unused_data
                        inflater, fed = zlib.decompressobj(wbits=31), False
                        if pending and pending[:2] != GZIP_MAGIC:
                            if pending.strip(b"\x00"):  # zero padding after the stream is harmless
                                self.broken = "data after the end of the gzip stream"
                            return
            except zlib.error as exc:
                self.broken = f"corrupt gzip data ({exc})"
                return
            pending = next(self._chunks, None)
        if fed:
            self.broken = "the gzip stream ends early (the file is truncated)"


def open_chunks(path: str) -> Iterator[bytes]:
    with open(path, "rb") as stream:
        while block := stream.read(LogLines._CHUNK):
            yield block


def parse_file(path: str, options: LogOptions) -> ParseResult:
    """Parse one local file. An unreadable file (I/O error, not gzip) becomes one quarantine row; a
    truncated or corrupt gzip keeps its complete lines and quarantines what follows them."""
    try:
        lines = LogLines(open_chunks(path))
        return _parse(path, lines, options)
    except OSError as exc:
        return _unreadable(path, exc.strerror or str(exc))


def parse_bytes(path: str, data: bytes, options: LogOptions) -> ParseResult:
    """Parse a file whose content is already in memory (Spark's binaryFile rows)."""
    return _parse(path, LogLines([data]), options)


def _parse(path: str, lines: LogLines, options: LogOptions) -> ParseResult:
    cluster, source = options.identity(path)
    result = parse_lines(
        lines,
        file=path,
        cluster=cluster,
        tz=options.tz,
        source=source,
        topic_ids=options.topic_ids,
        log_date=options.date,
    )
    if lines.broken is not None:
        if lines.count == 0 and not lines.tail:
            return _unreadable(path, lines.broken)
        what = f"incomplete last line: {lines.broken}" if lines.tail else lines.broken
        result.quarantine.append(QuarantinedLine(path, lines.count + 1, lines.tail, what))
        result.counts.read += 1
        result.counts.quarantined += 1
    return result


def _unreadable(path: str, why: str) -> ParseResult:
    """One quarantine row for the whole file, counted as one line read and quarantined."""
    row = QuarantinedLine(file=path, line=0, raw="", reason=f"unreadable file: {why}")
    return ParseResult([], [row], ParseCounts(read=1, quarantined=1))


def quarantine_json(row: QuarantinedLine, cluster: str) -> dict[str, Any]:
    """A quarantine.jsonl line: the quarantine table's columns (dates as ISO text) plus `ts`."""
    out = row.to_row(cluster)
    out["event_date"] = out["event_date"].isoformat() if out["event_date"] is not None else None
    out["ts"] = format_ts(row.ts) if row.ts is not None else None
    return out


# ------------------------------------------------------------------------------------------ Spark
# mapInPandas yields one schema: the event columns, plus what quarantine and per-file count rows need.
RECORD_EVENT, RECORD_QUARANTINE, RECORD_COUNTS = "event", "quarantine", "counts"
PARSED_COLUMNS = (
    (Column("record", STRING, True),)
    + EVENT_COLUMNS
    + (Column("event_date", DATE), Column("quarantine_reason", STRING), Column("counts", COUNTS))
)


def read_kafka_logs(spark, paths: str | list[str], options: Mapping[str, Any] | None = None):
    """Kafka log files (any Hadoop path; directories recursively; gzip ok) -> (events_df, quarantine_df,
    counts). events_df has `schemas.events` columns, quarantine_df `schemas.tables.QUARANTINE` columns;
    counts = {"files", "read", "events", "event_lines", "skipped", "quarantined"} (one Spark action).
    A quarantined line without a readable time has a null event_date (the caller decides its date).
    The parsed rows are persisted when the session allows it, so the two DataFrames do not re-parse."""
    from pyspark.errors import PySparkException
    from pyspark.sql import functions as F

    from schemas.fields import spark_schema

    log_options = LogOptions.from_mapping(options)
    files = (
        spark.read.format("binaryFile")
        .option("recursiveFileLookup", "true")
        .load([paths] if isinstance(paths, str) else list(paths))
        .select("path", "content")
    )
    parsed = files.mapInPandas(_parse_batches(log_options), schema=spark_schema(PARSED_COLUMNS))
    with contextlib.suppress(PySparkException):  # serverless refuses caching: the two frames re-parse then
        parsed = parsed.persist()
    events_df = parsed.where(F.col("record") == RECORD_EVENT).select(*EVENT_COLUMN_NAMES)
    quarantine_df = parsed.where(F.col("record") == RECORD_QUARANTINE).select(
        F.col("cluster"),
        F.col("group_id"),
        F.lit("actual").alias("scenario"),
        F.col("event_date"),  # null for a line without a readable time: the job files it under its run
        F.col("file").alias("source_file"),
        F.col("line").alias("source_line"),
        F.col("raw"),
        F.col("quarantine_reason").alias("reason"),
    )
    counts = ParseCounts()
    files_seen = 0
    for row in parsed.where(F.col("record") == RECORD_COUNTS).select("counts").collect():
        files_seen += 1
        counts.add(_counts_from_map(row["counts"]))
    totals = counts.as_dict()
    totals.pop("skipped_by_reason")
    return events_df, quarantine_df, {"files": files_seen, **totals}


def _parse_batches(options: LogOptions):
    def parse(batches):
        import pandas as pd

        for batch in batches:
            rows: list[dict[str, Any]] = []
            for path, content in zip(batch["path"], batch["content"]):
                rows.extend(_parsed_rows(path, bytes(content), options))
            yield pd.DataFrame(rows, columns=[c.name for c in PARSED_COLUMNS])

    return parse


def _parsed_rows(path: str, data: bytes, options: LogOptions) -> Iterator[dict[str, Any]]:
    local_path = path[len("file:") :] if path.startswith("file:") else path
    local_path = re.sub(r"^/+", "/", local_path)
    result = parse_bytes(local_path, data, options)
    cluster, _ = options.identity(local_path)
    empty = dict.fromkeys(c.name for c in PARSED_COLUMNS)
    for event in result.events:
        row = {**empty, **event.to_row(), "record": RECORD_EVENT}
        row["event_date"] = row["ts"].date()
        yield row
    for q in result.quarantine:
        table_row = q.to_row(cluster)
        yield {
            **empty,
            "record": RECORD_QUARANTINE,
            "cluster": cluster,
            "group_id": q.group_id,
            "event_date": table_row["event_date"],
            "file": q.file,
            "line": q.line,
            "raw": q.raw,
            "quarantine_reason": q.reason,
        }
    yield {**empty, "record": RECORD_COUNTS, "file": local_path, "counts": _counts_to_map(result.counts)}


def _counts_to_map(counts: ParseCounts) -> dict[str, int]:
    out = {k: v for k, v in counts.as_dict().items() if k != "skipped_by_reason"}
    out.update({f"skipped.{k}": v for k, v in counts.skipped_by_reason.items()})
    return out


def _counts_from_map(values: Mapping[str, int] | list) -> ParseCounts:
    items = dict(values.items() if isinstance(values, Mapping) else values)
    counts = ParseCounts(
        read=items.get("read", 0),
        events=items.get("events", 0),
        event_lines=items.get("event_lines", 0),
        quarantined=items.get("quarantined", 0),
    )
    for key, value in items.items():
        if key.startswith("skipped."):
            counts.skip(key[len("skipped.") :], value)
    return counts


def counts_json(per_file: Mapping[str, ParseCounts]) -> str:
    total = ParseCounts()
    for counts in per_file.values():
        total.add(counts)
    doc = {"total": total.as_dict(), "files": {path: c.as_dict() for path, c in per_file.items()}}
    return json.dumps(doc, indent=2) + "\n"
