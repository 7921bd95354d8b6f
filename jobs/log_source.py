"""Kafka's own log files as input: the file handling shared by `parse-logs` and the Spark job's
`--input-format kafka-log` reader (`read_kafka_logs`).

The parsing itself is `rebalance_core.kafka_logs.parse_lines` (pure). Here: which files, how their bytes
become lines (gzip by magic number, UTF-8 with replacement), and which cluster/source a file belongs
to (a path regex with named groups `cluster` and `source`, else the configured cluster and the source
read from the log prefix).

A file that cannot be read at all is one quarantined row (line 0) and counts as one line read and
quarantined. A gzip file that ends early (a copy cut off mid-stream) keeps its complete lines; what
follows the last complete line is one quarantined row that says so.

`read_kafka_logs` reads plain files line by line (Spark's text source, split into blocks; a cheap filter in
the JVM; the kept lines of a file parsed in file order), and `.gz` files and small plain files
(`whole_file_bytes`) whole (binaryFile, inflated as a stream). DataFrame APIs only (text/binaryFile
sources, mapInArrow, mapInPandas), so it runs on Spark Connect and Databricks serverless as well as on a
classic session.
"""

from __future__ import annotations

import base64
import contextlib
import datetime as dt
import json
import os
import re
import zlib
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import quote, unquote

from rebalance_core.events import format_ts
from rebalance_core.kafka_logs import ParseCounts, ParseResult, QuarantinedLine, parse_lines
from rebalance_core.kafka_logs.layouts import resolve_zone
from schemas.events import EVENT_COLUMN_NAMES, EVENT_COLUMNS
from schemas.fields import COUNTS, DATE, STRING, Column
from schemas.tables import QUARANTINE

GZIP_MAGIC = b"\x1f\x8b"
DEFAULT_CLUSTER = "default"
# The `large_file_bytes` option's default: half of Spark's default split (spark.sql.files.maxPartitionBytes,
# 128 MiB). A broker's daily server.log (GBs) is far above it, a group-dense client log (KBs to MBs) far below.
LARGE_FILE_BYTES = 64 << 20
# At most this many files get a scan of their own (the largest first): each scan is a plan node the driver
# lists and plans; the rest share the `_metadata` scan.
MAX_OWN_SCANS = 64
# The `whole_file_bytes` option's default: Spark's default spark.sql.files.openCostInBytes, the bytes Spark
# reckons a file's opening costs. A plain file below it is read whole (binaryFile, like a `.gz`): one row per
# file, so no per-line file path, numbering, shuffle or sort; its lines, group-dense (client logs) or not,
# are parsed in order in the task that read it. Memory per task stays bounded by the partition's bytes.
WHOLE_FILE_BYTES = 4 << 20
KEYS = ("cluster", "tz", "path_pattern", "topic_ids", "date", "large_file_bytes", "whole_file_bytes")


@dataclass(frozen=True)
class LogOptions:
    cluster: str = DEFAULT_CLUSTER
    tz: str = "UTC"
    path_pattern: str | None = None  # regex searched in each file path; named groups cluster, source
    topic_ids: dict[str, str] = field(default_factory=dict)  # topic name -> topic id (KIP-848 broker lines)
    date: dt.date | None = None  # the date of time-only lines in files whose name carries none
    # Spark reader only: a plain file of at least this many bytes is read by a scan of its own, its path a
    # literal (`_plain_files`); smaller files share one scan that reads the path from `_metadata`.
    large_file_bytes: int = LARGE_FILE_BYTES
    # Spark reader only: a plain file of fewer bytes is read whole (`_whole_files`), not line by line.
    whole_file_bytes: int = WHOLE_FILE_BYTES

    @classmethod
    def from_mapping(cls, options: Mapping[str, Any] | None) -> LogOptions:
        """From the job's `input.options` (keys cluster, tz, path_pattern, topic_ids, date,
        large_file_bytes, whole_file_bytes). ValueError on bad values."""
        options = dict(options or {})
        unknown = set(options) - set(KEYS)
        if unknown:
            raise ValueError(f"unknown kafka-log option(s): {', '.join(sorted(unknown))}")
        result = cls(
            cluster=str(options.get("cluster") or DEFAULT_CLUSTER),
            tz=str(options.get("tz") or "UTC"),
            path_pattern=options.get("path_pattern") or None,
            topic_ids={str(k): str(v) for k, v in (options.get("topic_ids") or {}).items()},
            date=log_date(options.get("date")),
            large_file_bytes=byte_count(
                "large_file_bytes", options.get("large_file_bytes", LARGE_FILE_BYTES)
            ),
            whole_file_bytes=byte_count(
                "whole_file_bytes", options.get("whole_file_bytes", WHOLE_FILE_BYTES)
            ),
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


def byte_count(name: str, value: Any) -> int:
    """A size option (`large_file_bytes`, `whole_file_bytes`): a whole number of bytes, 0 or more."""
    if isinstance(value, bool) or not isinstance(value, int | str) or not str(value).strip().isdigit():
        raise ValueError(f"{name} {value!r} is not a whole number of bytes")
    return int(value)


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
        self.tail: str | bytes = ""  # bytes while reading, then text
        self.count = 0
        self.not_utf8: dict[int, bytes] = {}  # line number -> the bytes of a line that is not UTF-8

    def __iter__(self) -> Iterator[str]:
        for number, line in self._lines():
            yield _decode(number, line, self.not_utf8)
        if self.tail:
            self.tail = _decode(self.count + 1, self.tail, self.not_utf8)

    def line_bytes(self, wanted: set[int]) -> dict[int, bytes]:
        """The exact bytes (without the \\n) of the lines numbered in `wanted` (a fresh LogLines)."""
        return {n: line for n, line in self._lines() if n in wanted}

    def _lines(self) -> Iterator[tuple[int, bytes]]:
        rest = b""
        for block in self._blocks():
            lines = (rest + block).split(b"\n")
            rest = lines.pop()
            for line in lines:
                self.count += 1
                yield self.count, line
        if rest and self.broken is None:  # a last line without a newline is complete
            self.count += 1
            yield self.count, rest
        elif rest:
            self.tail = rest

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
    from jobs.usage import printable_name

    name = printable_name(path)  # rows carry text, whatever the bytes of the file's name
    try:
        lines = LogLines(open_chunks(path))
        return _parse(name, lines, options, lambda wanted: LogLines(open_chunks(path)).line_bytes(wanted))
    except OSError as exc:
        return _unreadable(name, exc.strerror or str(exc))


def parse_bytes(path: str, data: bytes, options: LogOptions) -> ParseResult:
    """Parse a file whose content is already in memory (Spark's binaryFile rows), inflated chunk by chunk
    (a gzip's text is never held whole)."""
    view = memoryview(data)

    def chunks() -> Iterator[bytes]:
        return (bytes(view[i : i + LogLines._CHUNK]) for i in range(0, len(view), LogLines._CHUNK))

    return _parse(path, LogLines(chunks()), options, lambda wanted: LogLines(chunks()).line_bytes(wanted))


def _parse(
    path: str, lines: LogLines, options: LogOptions, line_bytes: Callable[[set[int]], Mapping[int, bytes]]
) -> ParseResult:
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
    keep_bytes(result, lines.not_utf8, line_bytes)
    if lines.broken is not None:
        if lines.count == 0 and not lines.tail:
            return _unreadable(path, lines.broken)
        what = f"incomplete last line: {lines.broken}" if lines.tail else lines.broken
        tail = QuarantinedLine(path, lines.count + 1, lines.tail, what)
        if lines.count + 1 in lines.not_utf8:
            tail.raw_base64 = base64.b64encode(lines.not_utf8[lines.count + 1]).decode("ascii")
        result.quarantine.append(tail)
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
    + (
        Column("event_date", DATE),
        Column("quarantine_reason", STRING),
        Column("raw_base64", STRING),
        Column("counts", COUNTS),
    )
)

# Line-oriented reading (plain files). Spark's text source splits a file into blocks, so no task holds a
# file whole. In the JVM each line gets a kind: GROUP_LINE when it carries one of the words every line
# about a group carries (the `[Consumer …, groupId=…]` / `[Worker …, groupId=…]` prefixes,
# `[GroupCoordinator …]`, `group <id>`, `rebalance`), else OTHER_HEAD when it has a time of day and a
# level word (the head of an entry not about groups: its text never leaves the JVM), else MAYBE_CONTINUED
# (stack traces, `\tAssigned partitions: …`, pretty-printed JSON). The numbering step then leaves out the
# MAYBE_CONTINUED lines that follow an OTHER_HEAD (the rest of an entry not about groups) and numbers
# every line, so every line is counted.
# Literal byte searches, no regex: "roup" finds group/Group and "ebalanc" rebalance/Rebalance in two scans of
# a line instead of four (a word that merely contains them, e.g. "troupe", only keeps a line more for the
# parser, which decides).
# "Config values: " keeps the head of a client's config dump (AbstractConfig.logAll: `ConsumerConfig values: `,
# `DistributedConfig values: `), whose own line carries no group word; its `\tkey = value` lines follow it.
GROUP_WORDS = ("roup", "ebalanc", "Config values: ")
HEAD_TIME = r"\d\d:\d\d:\d\d"
HEAD_LEVEL = r"\b(?:TRACE|DEBUG|INFO|WARN|WARNING|ERROR|FATAL)\b"
OTHER_HEAD, GROUP_LINE, MAYBE_CONTINUED = 0, 1, 2
# Whole-file reading (gzip: a stream Hadoop cannot resume, and whose truncation must be seen).
WHOLE_FILE = re.compile(r"\.gz$", re.IGNORECASE)
_COUNT_ROW = (1 << 62) - 1  # sorts a block's line count after the block's lines
# The numbering step's rows (intermediate, no table has them): `line` is 0-based within the block, or
# _COUNT_ROW on the block's count row (`count`: its number of lines); `path` and `bytes` (the line's exact
# bytes) on kept lines only.
NUMBERED_DDL = "fid long, block long, line long, path string, bytes binary, count long"


def line_kind(text: str) -> int:
    """The kind the JVM gives a line (`_plain_files`), for tests and local use."""
    if any(word in text for word in GROUP_WORDS):
        return GROUP_LINE
    if re.search(HEAD_TIME, text) and re.search(HEAD_LEVEL, text):
        return OTHER_HEAD
    return MAYBE_CONTINUED


def kept_lines(kinds: Iterable[int]) -> Iterator[bool]:
    """Which lines of a block go to the parser (`_number_blocks` does the same, vectorised)."""
    after_group = True  # a block may start inside a group entry of the previous block
    for kind in kinds:
        if kind != MAYBE_CONTINUED:
            after_group = kind == GROUP_LINE
        yield after_group


def read_kafka_logs(spark, paths: str | list[str], options: Mapping[str, Any] | None = None):
    """Kafka log files (any Hadoop path; directories recursively; gzip ok) -> (events_df, quarantine_df,
    counts). events_df has `schemas.events` columns, quarantine_df `schemas.tables.QUARANTINE` columns;
    counts = {"files", "read", "events", "event_lines", "skipped", "quarantined"}.
    A quarantined line without a readable time has a null event_date (the caller decides its date).
    Plain files are read line by line (`_plain_files`: split, memory per task bounded); `.gz` files and
    plain files smaller than `whole_file_bytes` whole (`_whole_files`: a task holds a file's bytes,
    inflated as a stream when compressed).
    The parsed rows are persisted when the session allows it, so the two DataFrames do not re-parse."""
    from pyspark.errors import PySparkException
    from pyspark.sql import functions as F

    log_options = LogOptions.from_mapping(options)
    listed = {
        row["path"]: row["length"]
        for row in spark.read.format("binaryFile")  # without `content`, only the listing is read
        .option("recursiveFileLookup", "true")
        .load([paths] if isinstance(paths, str) else list(paths))
        .select("path", "length")
        .collect()
    }
    plain = {
        p: n for p, n in listed.items() if not WHOLE_FILE.search(p) and n >= log_options.whole_file_bytes
    }
    whole = [p for p in listed if p not in plain]
    frames = []
    if plain:
        frames.append(_plain_files(spark, plain, log_options))
    if whole:
        frames.append(_whole_files(spark, whole, log_options))
    if not frames:  # no file Spark can open: the same (empty) frames, columns and all
        frames.append(_empty(spark))
    parsed = frames[0] if len(frames) == 1 else frames[0].unionByName(frames[1])
    with contextlib.suppress(PySparkException):  # serverless refuses caching: the two frames re-parse then
        parsed = parsed.persist()
    events_df = parsed.where(F.col("record") == RECORD_EVENT).select(*EVENT_COLUMN_NAMES)
    from_parsed = {
        "scenario": F.lit("actual"),
        "event_date": F.col("event_date"),  # null for a line without a readable time: the job dates it
        "source_file": F.col("file"),
        "source_line": F.col("line"),
        "reason": F.col("quarantine_reason"),
    }
    quarantine_df = parsed.where(F.col("record") == RECORD_QUARANTINE).select(
        *[from_parsed.get(c.name, F.col(c.name)).alias(c.name) for c in QUARANTINE]
    )
    counts = ParseCounts()
    files_seen = 0
    for row in parsed.where(F.col("record") == RECORD_COUNTS).select("counts").collect():
        files_seen += 1
        counts.add(_counts_from_map(row["counts"]))
    return events_df, quarantine_df, {"files": files_seen, **_totals(counts)}


def _totals(counts: ParseCounts) -> dict[str, int]:
    totals = counts.as_dict()
    totals.pop("skipped_by_reason")
    return totals


def _empty(spark):
    return spark.createDataFrame([], _parsed_schema())


def _plain_files(spark, files: Mapping[str, int], options: LogOptions):
    """Plain files (path -> bytes) through Spark's text source: (1) in the JVM, drop the text of lines
    that cannot be about a group; (2) number every line within its block (`_number_blocks`, one pass, no
    shuffle of the dropped lines); (3) the kept lines of each file, in file order, to the parser
    (`_parse_numbered`). Large files are each read by a scan of their own (`_own_scan`), the others
    together (`_shared_scan`)."""
    large = sorted((p for p, n in files.items() if n >= options.large_file_bytes), key=lambda p: -files[p])
    large = sorted(large[:MAX_OWN_SCANS])
    frames = [_own_scan(spark, path) for path in large]
    shared = sorted(set(files) - set(large))
    if shared:
        frames.append(_shared_scan(spark, shared))
    lines = frames[0]
    for frame in frames[1:]:
        lines = lines.union(frame)
    numbered = lines.mapInArrow(_number_blocks, schema=NUMBERED_DDL)
    ordered = numbered.repartition("fid").sortWithinPartitions("fid", "block", "line")
    return ordered.mapInPandas(_parse_numbered(options), schema=_parsed_schema())


def _line_kind():
    """The kind of a line (`line_kind`), as a column on the text source's `value`."""
    from pyspark.sql import functions as F

    value = F.col("value")
    group = value.contains(GROUP_WORDS[0])
    for word in GROUP_WORDS[1:]:
        group = group | value.contains(word)
    kind = (
        F.when(group, GROUP_LINE)
        .when(value.rlike(HEAD_TIME) & value.rlike(HEAD_LEVEL), OTHER_HEAD)
        .otherwise(MAYBE_CONTINUED)
    )
    return kind.cast("byte").alias("kind")


def _text(spark, files: str | list[str]):
    literal = _glob_literal(files) if isinstance(files, str) else [_glob_literal(f) for f in files]
    return spark.read.option("lineSep", "\n").text(literal)  # \n only: line numbers as `wc -l` counts them


_GLOB_CHARS = re.compile(r"[\\{}\[\]*?]")  # SparkHadoopUtil.isGlobPath's characters


def _glob_literal(path: str) -> str:
    """A listed file's path as a pattern that matches only it: Spark's file sources expand a path with
    glob characters (SparkHadoopUtil.isGlobPath; Hadoop's GlobPattern), so a file named `a[1].log` would
    be looked for as `a1.log`; a backslash escapes each."""
    return _GLOB_CHARS.sub(r"\\\g<0>", path)


# Both scans give the rows `_number_blocks` reads: fid, block, kind, and on kept lines (kind != OTHER_HEAD)
# path and bytes (the bytes as read, even if not UTF-8). The kind is computed in a projection of its own and
# used three times after it: Spark keeps such a projection apart (CollapseProject does not copy an expensive
# expression into several uses), so it runs once a line.


def _shared_scan(spark, files: list[str]):
    """Many (small) files in one scan: each line's file and block from `_metadata`, which costs Spark a
    copy of the metadata row per line (benchmarks/RESULTS.md: +1.4 to +3.6 CPU s per 300 MB)."""
    from pyspark.sql import functions as F

    classified = _text(spark, files).select(
        "value",
        F.col("_metadata.file_path").alias("_path"),
        F.col("_metadata.file_block_start").alias("block"),
        _line_kind(),
    )
    keep = F.col("kind") != OTHER_HEAD
    return classified.select(
        F.xxhash64("_path").alias("fid"),
        "block",
        "kind",
        F.when(keep, F.col("_path")).alias("path"),
        F.when(keep, F.col("value").cast("binary")).alias("bytes"),
    )


def _own_scan(spark, path: str):
    """One (large) file in a scan of its own: its path a literal and its block the partition index, so no
    `_metadata` field is read. This holds because Spark cuts a lone file into splits of equal size (the
    last smaller), orders them by size with a stable sort and packs them into partitions in that order
    (FilePartition.getFilePartitions): the partitions follow the file's byte order, each line in the
    partition of the split it starts in. Under `union` each task keeps its own scan's partition index."""
    from pyspark.sql import functions as F

    keep = F.col("kind") != OTHER_HEAD
    name = quote(path, safe="/:")  # as `_metadata.file_path` is: _numbered_file_rows unquotes it
    return (
        _text(spark, path)
        .select("value", _line_kind())
        .select(
            F.xxhash64(F.lit(name)).alias("fid"),
            F.spark_partition_id().cast("long").alias("block"),
            "kind",
            F.when(keep, F.lit(name)).alias("path"),
            F.when(keep, F.col("value").cast("binary")).alias("bytes"),
        )
    )


def _number_blocks(batches):
    """Per task (the rows of one or more blocks, in order): each kept line with its 0-based number within
    its block, and one count row per block. Vectorised: the dropped lines are never Python objects."""
    import numpy as np
    import pyarrow as pa

    schema = pa.schema(
        [
            ("fid", pa.int64()),
            ("block", pa.int64()),
            ("line", pa.int64()),
            ("path", pa.string()),
            ("bytes", pa.binary()),
            ("count", pa.int64()),
        ]
    )
    run: tuple[int, int] | None = None  # (fid, block) of the block being numbered
    run_lines = 0
    after_group = True  # the last head of the block being numbered was a group line (see kept_lines)

    def count_row(key: tuple[int, int], n: int) -> pa.RecordBatch:
        return pa.RecordBatch.from_pylist(
            [{"fid": key[0], "block": key[1], "line": _COUNT_ROW, "count": n}], schema=schema
        )

    for batch in batches:
        size = batch.num_rows
        if size == 0:
            continue
        fid = batch.column("fid").to_numpy(zero_copy_only=False)
        block = batch.column("block").to_numpy(zero_copy_only=False)
        kind = batch.column("kind").to_numpy(zero_copy_only=False)
        starts = np.empty(size, dtype=bool)
        starts[0] = run != (int(fid[0]), int(block[0]))
        starts[1:] = (fid[1:] != fid[:-1]) | (block[1:] != block[:-1])
        index = np.arange(size, dtype=np.int64)
        first_of_run = np.maximum.accumulate(np.where(starts, index, 0))
        line = index - first_of_run
        run_starts = np.flatnonzero(starts)
        carried = run_starts[0] if len(run_starts) else size  # rows continuing the previous batch's block
        line[:carried] += run_lines
        # kept_lines, vectorised: each row's last head (or block start, which counts as a group line)
        marker = np.where(kind != MAYBE_CONTINUED, kind == GROUP_LINE, np.where(starts, True, -1)).astype(
            np.int8
        )
        last = np.maximum.accumulate(np.where(marker >= 0, index, -1))
        state = np.where(last >= 0, marker[np.maximum(last, 0)], np.int8(after_group))
        kept = state == 1
        after_group = bool(kept[-1])
        if run is not None and len(run_starts):  # the block carried from the batches before ends here
            yield count_row(run, run_lines + int(carried))
        for begin, end in zip(run_starts[:-1], run_starts[1:]):
            yield count_row((int(fid[begin]), int(block[begin])), int(end - begin))
        if len(run_starts):
            run, run_lines = (
                (int(fid[run_starts[-1]]), int(block[run_starts[-1]])),
                int(size - run_starts[-1]),
            )
        else:
            run_lines += size
        if kept.any():
            mask = pa.array(kept)
            yield pa.RecordBatch.from_arrays(
                [
                    batch.column("fid").filter(mask),
                    batch.column("block").filter(mask),
                    pa.array(line).filter(mask),
                    batch.column("path").filter(mask),
                    batch.column("bytes").filter(mask),
                    pa.nulls(int(kept.sum()), pa.int64()),
                ],
                schema=schema,
            )
    if run is not None:
        yield count_row(run, run_lines)


def _parse_numbered(options: LogOptions):
    """Per task: rows sorted by (file, block, line). A file's kept lines are numbered from the counts of
    its earlier blocks and parsed together (entries and per-file client state span blocks); the lines
    left out are counted as skipped, not about groups."""

    def parse(batches):
        import pandas as pd

        columns = [c.name for c in PARSED_COLUMNS]
        current, lines, path, offset = None, [], None, 0
        for batch in batches:
            rows: list[dict[str, Any]] = []
            for fid, line, row_path, data, count in zip(
                batch["fid"], batch["line"], batch["path"], batch["bytes"], batch["count"]
            ):
                if fid != current:
                    if current is not None:
                        rows.extend(_numbered_file_rows(path, lines, offset, options))
                    current, lines, path, offset = fid, [], None, 0
                if line == _COUNT_ROW:
                    offset += int(count)
                else:
                    lines.append((offset + int(line) + 1, bytes(data)))
                    path = path or row_path
            yield pd.DataFrame(rows, columns=columns)
        if current is not None:
            yield pd.DataFrame(list(_numbered_file_rows(path, lines, offset, options)), columns=columns)

    return parse


def _numbered_file_rows(
    path: str | None, lines: list[tuple[int, bytes]], total: int, options: LogOptions
) -> Iterator[dict[str, Any]]:
    """One file's rows from its kept lines ((number, bytes), in order) and its number of lines. A file
    with no line kept (none about groups) has no name here, only its counts."""
    if path is None:
        counts = ParseCounts(read=total)
        counts.skip("not_group", total)
        yield {**_EMPTY_ROW, "record": RECORD_COUNTS, "counts": _counts_to_map(counts)}
        return
    local = _local_path(unquote(path))
    if lines and lines[0][0] == 1 and lines[0][1][:2] == GZIP_MAGIC:
        result = _unreadable(local, "gzip data in a file whose name does not end in .gz")
    else:
        not_utf8: dict[int, bytes] = {}
        cluster, source = options.identity(local)
        result = parse_lines(
            ((number, _decode(number, data, not_utf8)) for number, data in lines),
            file=local,
            cluster=cluster,
            tz=options.tz,
            source=source,
            topic_ids=options.topic_ids,
            log_date=options.date,
            numbered=True,
        )
        keep_bytes(result, not_utf8, lambda wanted: {n: data for n, data in lines if n in wanted})
        left_out = total - len(lines)
        result.counts.read += left_out
        result.counts.skip("not_group", left_out)
    yield from _result_rows(local, result, options)


def _decode(number: int, data: bytes, not_utf8: dict[int, bytes]) -> str:
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        not_utf8[number] = data
        text = data.decode("utf-8", errors="replace")
    return text.rstrip("\r")


def keep_bytes(
    result: ParseResult, not_utf8: Mapping[int, bytes], line_bytes: Callable[[set[int]], Mapping[int, bytes]]
) -> ParseResult:
    """Give each quarantined entry holding a line that is not UTF-8 its exact bytes (`raw_base64`: its
    lines joined by \\n, as `raw` joins them, even where `raw` is cut at its length limit), so that the
    quarantine loses nothing of such a line. `line_bytes(numbers)`: those lines' bytes, read again."""
    if not not_utf8:
        return result
    rows = []
    for row in result.quarantine:
        numbers = row.line_numbers or range(row.line, row.line + row.raw.count("\n") + 1)
        if any(n in not_utf8 for n in numbers):
            rows.append((row, numbers))
    if rows:
        found = line_bytes({n for _, numbers in rows for n in numbers})
        for row, numbers in rows:
            joined = b"\n".join(found.get(n, b"") for n in numbers)
            row.raw_base64 = base64.b64encode(joined).decode("ascii")
    return result


def _whole_files(spark, files: list[str], options: LogOptions):
    """`.gz` files and small plain files through the binaryFile source: one task holds a file's bytes (at
    most 2 GB, Spark's limit for a value) and parses them in order, inflated as a stream when compressed."""
    return (
        spark.read.format("binaryFile")
        .load([_glob_literal(f) for f in files])
        .select("path", "content")
        .mapInPandas(_parse_batches(options), schema=_parsed_schema())
    )


def _parsed_schema():
    from schemas.fields import spark_schema

    return spark_schema(PARSED_COLUMNS)


def _parse_batches(options: LogOptions):
    def parse(batches):
        import pandas as pd

        for batch in batches:
            rows: list[dict[str, Any]] = []
            for path, content in zip(batch["path"], batch["content"]):
                rows.extend(_parsed_rows(path, content, options))
            yield pd.DataFrame(rows, columns=[c.name for c in PARSED_COLUMNS])

    return parse


def _local_path(path: str) -> str:
    local = path[len("file:") :] if path.startswith("file:") else path
    return re.sub(r"^/+", "/", local)


_EMPTY_ROW = dict.fromkeys(c.name for c in PARSED_COLUMNS)


def _parsed_rows(path: str, data: bytes, options: LogOptions) -> Iterator[dict[str, Any]]:
    local_path = _local_path(path)
    yield from _result_rows(local_path, parse_bytes(local_path, data, options), options)


def _result_rows(local_path: str, result: ParseResult, options: LogOptions) -> Iterator[dict[str, Any]]:
    cluster, _ = options.identity(local_path)
    for event in result.events:
        row = {**_EMPTY_ROW, **event.to_row(), "record": RECORD_EVENT}
        row["event_date"] = row["ts"].date()
        yield row
    for q in result.quarantine:
        table_row = q.to_row(cluster)
        yield {
            **_EMPTY_ROW,
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
    yield {**_EMPTY_ROW, "record": RECORD_COUNTS, "file": local_path, "counts": _counts_to_map(result.counts)}


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
