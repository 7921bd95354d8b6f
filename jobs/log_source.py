"""Kafka's own log files as input: the file handling shared by `parse-logs` and the Spark job's
`--input-format kafka-log` reader (`read_kafka_logs`).

The parsing itself is `rebalance_core.kafka_logs.parse_lines` (pure). Here: which files, how their bytes
become lines (gzip by magic number, UTF-8 with replacement), and which cluster/source a file belongs
to (a path regex with named groups `cluster` and `source`, else the configured cluster and the source
read from the log prefix).

`read_kafka_logs` uses DataFrame APIs only (binaryFile source -> mapInPandas), so it runs on Spark
Connect and Databricks serverless as well as on a classic session.
"""

from __future__ import annotations

import base64
import contextlib
import gzip
import json
import os
import re
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

    @classmethod
    def from_mapping(cls, options: Mapping[str, Any] | None) -> LogOptions:
        """From the job's `input.options` (keys cluster, tz, path_pattern, topic_ids). ValueError on bad values."""
        options = dict(options or {})
        unknown = set(options) - {"cluster", "tz", "path_pattern", "topic_ids"}
        if unknown:
            raise ValueError(f"unknown kafka-log option(s): {', '.join(sorted(unknown))}")
        result = cls(
            cluster=str(options.get("cluster") or DEFAULT_CLUSTER),
            tz=str(options.get("tz") or "UTC"),
            path_pattern=options.get("path_pattern") or None,
            topic_ids={str(k): str(v) for k, v in (options.get("topic_ids") or {}).items()},
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


def decode_lines(chunks: Iterable[bytes], not_utf8: dict[int, bytes] | None = None) -> Iterator[str]:
    """Physical lines (split on \\n only, so numbering matches `wc -l`/editors) as text. Bytes that are
    not UTF-8 become U+FFFD; such lines' bytes are kept in `not_utf8` (line number -> bytes, without
    the \\n) for the quarantine (`keep_bytes`)."""
    for number, chunk in enumerate(chunks, start=1):
        try:
            text = chunk.decode("utf-8")
        except UnicodeDecodeError:
            text = chunk.decode("utf-8", errors="replace")
            if not_utf8 is not None:
                not_utf8[number] = chunk.removesuffix(b"\n")
        yield text.rstrip("\r\n")


def keep_bytes(
    result: ParseResult, not_utf8: dict[int, bytes], lines: list[bytes] | None = None
) -> ParseResult:
    """Give each quarantined entry holding a line that is not UTF-8 its bytes (`raw_base64`: its lines
    joined by \\n, as `raw` joins them), so that the quarantine loses nothing of such a line. `lines`:
    all the file's lines when at hand (else the other lines of the entry are re-encoded from `raw`)."""
    if not not_utf8:
        return result
    for row in result.quarantine:
        texts = row.raw.split("\n")
        numbers = range(row.line, row.line + len(texts))
        if any(n in not_utf8 for n in numbers):
            if lines is not None:
                kept = lines[row.line - 1 : row.line - 1 + len(texts)]
            else:
                kept = [not_utf8.get(n, text.encode("utf-8")) for n, text in zip(numbers, texts)]
            row.raw_base64 = base64.b64encode(b"\n".join(kept)).decode("ascii")
    return result


def open_log(path: str):
    """A binary stream of the file's content, gunzipped when it starts with the gzip magic number."""
    stream = open(path, "rb")  # noqa: SIM115 - returned to the caller, who closes it
    if stream.peek(2)[:2] == GZIP_MAGIC:
        return gzip.GzipFile(fileobj=stream)
    return stream


def parse_file(path: str, options: LogOptions) -> ParseResult:
    """Parse one local file. An unreadable file (corrupt gzip, I/O error) becomes one quarantine row."""
    cluster, source = options.identity(path)
    not_utf8: dict[int, bytes] = {}
    try:
        with open_log(path) as stream:
            result = parse_lines(
                decode_lines(stream, not_utf8),
                file=path,
                cluster=cluster,
                tz=options.tz,
                source=source,
                topic_ids=options.topic_ids,
            )
    except (OSError, EOFError) as exc:
        return _unreadable(path, exc)
    return keep_bytes(result, not_utf8)


def parse_bytes(path: str, data: bytes, options: LogOptions) -> ParseResult:
    """Parse a file whose content is already in memory (Spark's binaryFile rows)."""
    cluster, source = options.identity(path)
    try:
        if data[:2] == GZIP_MAGIC:
            data = gzip.decompress(data)
    except (OSError, EOFError) as exc:
        return _unreadable(path, exc)
    lines = data.split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()
    not_utf8: dict[int, bytes] = {}
    result = parse_lines(
        decode_lines(lines, not_utf8),
        file=path,
        cluster=cluster,
        tz=options.tz,
        source=source,
        topic_ids=options.topic_ids,
    )
    return keep_bytes(result, not_utf8, lines)


def _unreadable(path: str, exc: BaseException) -> ParseResult:
    row = QuarantinedLine(file=path, line=0, raw="", reason=f"unreadable file: {exc}")
    return ParseResult([], [row], ParseCounts())


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
    + (
        Column("event_date", DATE),
        Column("quarantine_reason", STRING),
        Column("raw_base64", STRING),
        Column("counts", COUNTS),
    )
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
        F.col("raw_base64"),
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
            "raw_base64": q.raw_base64,
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
