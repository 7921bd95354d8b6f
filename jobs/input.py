"""Reading canonical events (JSON lines, Parquet, Delta, or Kafka logs through jobs.log_source) into
one DataFrame of candidate events, each with a verdict.

Columns of a candidate: the event columns of `schemas.events` with their schema types (`ts` truncated
to the millisecond, the core's clock; null when it cannot be parsed), then
  _input_file  the file the row was read from
  _raw         the row as read (JSON line, or the row rendered as JSON), kept for quarantined rows only;
               bytes that are not UTF-8 show as U+FFFD
  _raw_base64  where `_raw` is not the input's exact bytes (see `schemas.tables.QUARANTINE`), the
               bytes in base64, for quarantined rows only
  _reason      why the row goes to quarantine (null: valid)
  _date        UTC date of `ts`
`classify` adds `_status`: quarantine | skipped (outside the run's dates) | duplicate | event.
"""

from __future__ import annotations

import base64
import datetime as dt
import functools
import glob
import importlib.util
import os
import re
from pathlib import Path
from typing import Any

from jobs.usage import UsageError, printable_name
from schemas.events import EVENT_COLUMNS, EVENT_TYPES, REQUIRED_EVENT_COLUMNS, Side
from schemas.fields import spark_schema

SAMPLE_DATA = Path(__file__).parent / "sample_data" / "events.jsonl"

STATUS_EVENT = "event"
STATUS_QUARANTINE = "quarantine"
STATUS_DUPLICATE = "duplicate"
STATUS_SKIPPED = "skipped"

# Event times outside [EARLIEST_TS, LATEST_TS) are quarantined: Kafka's group coordinator did not exist
# before (0.9, 2015), and such a time is a broken clock or a misread field; one of them would otherwise
# stretch a run without --date over centuries of dates.
EARLIEST_TS = dt.datetime(2010, 1, 1, tzinfo=dt.UTC)
LATEST_TS = dt.datetime(2100, 1, 1, tzinfo=dt.UTC)
NOT_UTF8 = "not UTF-8"
_NUMBER = r"^-?\d+(\.\d+)?$"  # epoch milliseconds written as a number

_JSON_SUFFIXES = (".json", ".jsonl", ".ndjson")
_CORRUPT = "_corrupt_record"
_SIDES = [s.value for s in Side]
# Spark's error for a file it cannot read in the format asked (e.g. JSON lines read as Parquet)
_FAILED_READ = re.compile(r"\[FAILED_READ_FILE[^\]]*\][^\n]*")
_STRING_COLUMNS = [c.name for c in EVENT_COLUMNS if c.type == "string"]
_EVENT_SPARK_TYPES = [f.dataType for f in spark_schema(EVENT_COLUMNS)]


def resolve_input(path: str | None, fmt: str) -> tuple[str, str]:
    """(path, format) of the run's input: the packaged sample when `path` is None; the format from the
    file names when `fmt` is 'auto'. UsageError for a missing local path or an undecidable format."""
    if path is None:
        path = str(SAMPLE_DATA)
    local = "://" not in path or path.startswith("file://")
    local_path = path.removeprefix("file://")
    if local and not glob.glob(local_path):
        raise UsageError(f"input not found: {path}")
    if not _utf8_name(path):
        raise UsageError(
            f"input path {printable_name(path)} is not UTF-8, which Spark cannot open: rename it"
        )
    if fmt != "auto":
        return path, fmt
    detected = _detect_format(Path(local_path)) if local else _format_of_name(path)
    if detected is None:
        raise UsageError(
            f"cannot tell the format of {path}: pass --input-format json|parquet|delta|kafka-log"
        )
    return path, detected


def _format_of_name(name: str) -> str | None:
    name = name.lower().rstrip("/").removesuffix(".gz")
    if name.endswith(_JSON_SUFFIXES):
        return "json"
    if name.endswith(".parquet"):
        return "parquet"
    if name.endswith(".log"):
        return "kafka-log"
    return None


def _detect_format(path: Path) -> str | None:
    if path.is_file():
        return _format_of_name(path.name)
    if (path / "_delta_log").is_dir():
        return "delta"
    formats = {
        _format_of_name(f.name)
        for f in path.rglob("*")
        if f.is_file() and not any(part.startswith(("_", ".")) for part in f.relative_to(path).parts)
    }
    formats.discard(None)
    return formats.pop() if len(formats) == 1 else None


def _utf8_name(name: str) -> bool:
    """False for a file name holding bytes that are not UTF-8 (Python keeps them as surrogates)."""
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def files_spark_cannot_open(path: str) -> list[str]:
    """Files under a local input folder whose names are not UTF-8. Java decodes such a name with
    replacement characters and Hadoop's listing then skips the file as vanished, silently: the job
    quarantines one row per such file instead (`_unopenable_files`)."""
    root = path.removeprefix("file://")
    if "://" in root or not os.path.isdir(root):
        return []
    found = []
    for folder, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if not d.startswith(("_", ".")))  # Spark skips these too
        found.extend(
            os.path.join(folder, f)
            for f in sorted(files)
            if not f.startswith(("_", ".")) and not _utf8_name(f)
        )
        found.extend(os.path.join(folder, d) for d in dirs if not _utf8_name(d))
        dirs[:] = [d for d in dirs if _utf8_name(d)]
    return found


# ------------------------------------------------------------------------------------------ reading
def read_candidates(
    spark, path: str, fmt: str, options: dict | None = None, cluster: str | None = None
) -> tuple[Any, dict[str, int]]:
    """(candidates, uncounted): every input row as a candidate event with its verdict (`_reason`), see
    the module docstring; `uncounted` tells what the input held besides rows (kafka-log: the files,
    their lines, and `skipped` lines that are not about groups)."""
    options = dict(options or {})
    unopenable = _unopenable_files(spark, files_spark_cannot_open(path)) if fmt != "delta" else None
    try:
        candidates, uncounted = _read_candidates(spark, path, fmt, options, cluster)
    except Exception as exc:  # Py4JJavaError or pyspark's own: a file that is not of the format given
        unreadable = _FAILED_READ.search(str(exc))
        if unreadable is None:
            raise
        raise UsageError(f"cannot read {printable_name(path)} as {fmt}: {unreadable.group(0)}") from None
    if unopenable is not None:
        candidates = candidates.unionByName(unopenable)
    return candidates, uncounted


def _read_candidates(spark, path: str, fmt: str, options: dict, cluster: str | None):
    from pyspark.sql import functions as F

    if fmt == "kafka-log":
        events, quarantined, counts = _read_kafka_logs(spark, path, options)
        judged = _judge(_default_cluster(_conform(events.withColumn("_input_file", F.col("file"))), cluster))
        uncounted = {"skipped": counts["skipped"], "files": counts["files"], "lines": counts["read"]}
        return judged.unionByName(_parser_quarantine(quarantined)), uncounted
    if fmt == "json":
        frame = _read_json(spark, path)
    elif fmt == "parquet":
        frame = _conform(spark.read.options(**options).parquet(path).withColumn("_input_file", _file_path()))
    elif fmt == "delta":
        from jobs.delta_io import read_delta_path

        frame = _conform(read_delta_path(spark, path).withColumn("_input_file", _file_path()))
    else:
        raise UsageError(f"unknown input format {fmt!r}")
    return _judge(_default_cluster(frame, cluster)), {}


def _default_cluster(frame, cluster: str | None):
    from pyspark.sql import functions as F

    if not cluster:
        return frame
    return frame.withColumn("cluster", F.coalesce(F.nullif(F.trim("cluster"), F.lit("")), F.lit(cluster)))


def _file_path():
    from pyspark.sql import functions as F

    return F.col("_metadata.file_path")


def _read_json(spark, path: str):
    """JSON lines read as text, so a malformed line is kept whole (`_raw`) instead of being dropped;
    `ts` is parsed as text (ISO-8601 or epoch milliseconds) by `_parse_ts`. Spark's text reader does not
    decode: a line that is not UTF-8 (JSON must be, RFC 8259) is quarantined with its bytes."""
    from pyspark.sql import functions as F
    from pyspark.sql import types as T

    fields = [
        f if f.name != "ts" else T.StructField("ts", T.StringType()) for f in spark_schema(EVENT_COLUMNS)
    ]
    schema = T.StructType(fields + [T.StructField(_CORRUPT, T.StringType())])
    lines = (
        spark.read.option("recursiveFileLookup", "true")
        .text(path)
        .select(F.col("value").alias("_line"), _file_path().alias("_input_file"))
        .where(F.trim("_line") != "")
    )
    utf8 = F.is_valid_utf8("_line")
    parsed = lines.select(
        F.make_valid_utf8("_line").alias("_raw"),
        # (Spark's base64 may break lines MIME-style, spark.sql.chunkBase64String.enabled: one line here)
        F.when(~utf8, F.regexp_replace(F.base64(F.col("_line").cast("binary")), r"\s", "")).alias(
            "_raw_base64"
        ),
        "_input_file",
    ).withColumn(
        "_json", F.from_json("_raw", schema, {"mode": "PERMISSIVE", "columnNameOfCorruptRecord": _CORRUPT})
    )
    ts = F.col("_json.ts")
    return parsed.select(
        *[
            (
                _truncate_ms(_parse_ts(ts, T.StringType())) if f.name == "ts" else F.col(f"_json.{f.name}")
            ).alias(f.name)
            for f in fields
        ],
        ts.alias("_ts_text"),
        F.when(F.col("_raw_base64").isNotNull(), F.lit(f"{NOT_UTF8} (raw_base64 holds the line's bytes)"))
        .when(
            F.col(f"_json.{_CORRUPT}").isNotNull(),
            F.lit("malformed JSON (not an object, or a value of the wrong type)"),
        )
        .alias("_malformed"),
        "_raw",
        "_raw_base64",
        "_input_file",
    )


def _conform(frame):
    """A table-like input (Parquet, Delta, parsed logs) cast to the event schema: missing columns are
    null, extra ones dropped; a value that does not fit its column's type marks the row malformed."""
    from pyspark.sql import functions as F

    present = {f.name: f.dataType for f in frame.schema.fields}
    target = {f.name: f.dataType for f in spark_schema(EVENT_COLUMNS)}
    columns, misfits = [], []
    for name, want in target.items():
        if name == "ts":
            have = present.get("ts")
            columns.append(
                _truncate_ms(_parse_ts(F.col("ts"), have)).alias("ts")
                if have
                else F.lit(None).cast(want).alias("ts")
            )
        elif name not in present:
            columns.append(F.lit(None).cast(want).alias(name))
        elif present[name].simpleString() == want.simpleString():
            columns.append(F.col(name))
        elif name in _STRING_COLUMNS or want.typeName() in ("integer", "long"):
            fitted = F.col(name).try_cast(want)
            columns.append(fitted.alias(name))
            misfits.append(F.when(F.col(name).isNotNull() & fitted.isNull(), F.lit(name)))
        else:
            columns.append(F.col(name).cast(want).alias(name))
    originals = [f for f in frame.schema.fields if f.name != "_input_file"]
    # Parquet and Delta do not check that strings are UTF-8: a row holding other bytes anywhere is
    # quarantined (a replaced character could merge two member ids), its values kept losslessly.
    not_utf8 = [F.when(~_valid_utf8(F.col(f"`{f.name}`"), f.dataType), F.lit(f.name)) for f in originals]
    bad_text = F.concat_ws(", ", *not_utf8) if not_utf8 else F.lit("")
    problems = [
        F.when(bad_text != "", F.concat(F.lit(f"{NOT_UTF8} in: "), bad_text, F.lit(" (see raw_base64)"))),
        F.when(
            F.concat_ws(", ", *misfits) != "",
            F.concat(F.lit("value of the wrong type in: "), F.concat_ws(", ", *misfits)),
        )
        if misfits
        else None,
    ]
    malformed = F.coalesce(*[p for p in problems if p is not None])
    return frame.select(
        *columns,
        (F.col("ts").cast("string") if "ts" in present else F.lit(None).cast("string")).alias("_ts_text"),
        malformed.alias("_malformed"),
        F.to_json(F.struct(*[F.col(f"`{f.name}`") for f in originals])).alias("_raw"),
        F.when(
            bad_text != "",
            F.to_json(
                F.struct(*[_as_bytes(F.col(f"`{f.name}`"), f.dataType).alias(f.name) for f in originals])
            ),
        ).alias("_raw_base64"),
        "_input_file",
    )


def _valid_utf8(column, data_type):
    """True where every string inside `column` (at any depth) is UTF-8; null counts as valid."""
    from pyspark.sql import functions as F
    from pyspark.sql import types as T

    if isinstance(data_type, T.StringType):
        return F.coalesce(F.is_valid_utf8(column), F.lit(True))
    if isinstance(data_type, T.ArrayType):
        return F.coalesce(F.forall(column, lambda x: _valid_utf8(x, data_type.elementType)), F.lit(True))
    if isinstance(data_type, T.MapType):
        keys = F.forall(F.map_keys(column), lambda x: _valid_utf8(x, data_type.keyType))
        values = F.forall(F.map_values(column), lambda x: _valid_utf8(x, data_type.valueType))
        return F.coalesce(keys & values, F.lit(True))
    if isinstance(data_type, T.StructType):
        checks = [_valid_utf8(column.getField(f.name), f.dataType) for f in data_type.fields]
        return (
            F.coalesce(functools.reduce(lambda a, b: a & b, checks), F.lit(True)) if checks else F.lit(True)
        )
    return F.lit(True)


def _as_bytes(column, data_type):
    """`column` with every string in it (at any depth) as binary, and maps as lists of {key, value}
    (a binary map key would not survive): Spark's to_json writes binary values in base64, so the JSON
    holds each string's exact bytes."""
    from pyspark.sql import functions as F
    from pyspark.sql import types as T

    if isinstance(data_type, T.StringType):
        return column.cast("binary")
    if isinstance(data_type, T.ArrayType):
        return F.transform(column, lambda x: _as_bytes(x, data_type.elementType))
    if isinstance(data_type, T.MapType):
        return F.transform(
            F.map_entries(column),
            lambda entry: F.struct(
                _as_bytes(entry["key"], data_type.keyType).alias("key"),
                _as_bytes(entry["value"], data_type.valueType).alias("value"),
            ),
        )
    if isinstance(data_type, T.StructType):
        fields = [_as_bytes(column.getField(f.name), f.dataType).alias(f.name) for f in data_type.fields]
        return F.when(column.isNotNull(), F.struct(*fields))
    return column


def _parse_ts(column, source_type):
    """UTC instant from a timestamp, a date, epoch milliseconds (number or digits) or ISO-8601 text;
    null when it cannot be parsed (the row is quarantined)."""
    from pyspark.sql import functions as F
    from pyspark.sql import types as T

    if isinstance(source_type, T.TimestampType | T.TimestampNTZType | T.DateType):
        return column.cast("timestamp")  # a zone-less value is read as UTC (session time zone)
    if isinstance(source_type, T.NumericType):
        return _from_millis(column.try_cast("long"))
    text = F.trim(column.cast("string"))
    return F.when(text.rlike(_NUMBER), _from_millis(text.try_cast("double").try_cast("long"))).otherwise(
        text.try_cast("timestamp")
    )


def _from_millis(ms):
    """Epoch milliseconds as a timestamp; null beyond the years 0001-9999 (Spark would overflow)."""
    from pyspark.sql import functions as F

    return F.when(ms.between(-62_135_596_800_000, 253_402_300_799_999), F.timestamp_millis(ms))


def _truncate_ms(ts):
    """The core counts time in epoch milliseconds: keep Spark's copy identical."""
    from pyspark.sql import functions as F

    return F.timestamp_millis(F.unix_millis(ts))


def _judge(frame):
    """Add `_reason` (first problem found, null when valid) and `_date`."""
    from pyspark.sql import functions as F

    def blank(name):
        column = F.col(name)
        return column.isNull() | (F.trim(column) == "") if name in _STRING_COLUMNS else column.isNull()

    missing = F.concat_ws(
        ", ",
        *[F.when(blank(n), F.lit(n)) for n in REQUIRED_EVENT_COLUMNS if n != "ts"],
        F.when(F.col("_ts_text").isNull() | (F.trim("_ts_text") == ""), F.lit("ts")),
    )
    in_range = (F.col("ts") >= F.lit(EARLIEST_TS)) & (F.col("ts") < F.lit(LATEST_TS))
    reason = F.coalesce(
        F.col("_malformed"),
        F.when(missing != "", F.concat(F.lit("missing required field(s): "), missing)),
        F.when(
            F.col("ts").isNull() & ~F.trim("_ts_text").rlike(_NUMBER),
            F.concat(F.lit("unparseable ts: "), F.col("_ts_text")),
        ),
        F.when(
            ~F.coalesce(in_range, F.lit(False)),
            F.concat(
                F.lit(f"ts out of range (before {EARLIEST_TS:%Y-%m-%d} or from {LATEST_TS:%Y-%m-%d} on): "),
                F.col("_ts_text"),
            ),
        ),
        F.when(
            ~F.col("event_type").isin(*sorted(EVENT_TYPES)),
            F.concat(F.lit("unknown event_type: "), F.col("event_type")),
        ),
        F.when(~F.col("side").isin(*_SIDES), F.concat(F.lit("unknown side: "), F.col("side"))),
    )
    event_columns = [c.name for c in EVENT_COLUMNS]
    return frame.select(
        *event_columns,
        "_input_file",
        F.when(reason.isNotNull(), F.col("_raw")).alias("_raw"),
        F.when(reason.isNotNull(), F.col("_raw_base64")).alias("_raw_base64"),
        reason.alias("_reason"),
        F.when(in_range, F.to_date("ts")).alias("_date"),  # an absurd date would stretch the run
    )


def _read_kafka_logs(spark, path: str, options: dict):
    if importlib.util.find_spec("jobs.log_source") is None:
        raise UsageError("--input-format kafka-log needs jobs.log_source, which this installation lacks")
    from jobs.log_source import read_kafka_logs

    try:
        return read_kafka_logs(spark, [path], options)
    except ValueError as exc:  # bad input.options (cluster, tz, path_pattern)
        raise UsageError(f"input.options: {exc}") from None


def _unopenable_files(spark, names: list[str]):
    """One quarantine candidate per file Spark cannot open (see files_spark_cannot_open), or None."""
    if not names:
        return None
    from pyspark.sql import functions as F
    from pyspark.sql import types as T

    reason = (
        f"file name {NOT_UTF8}: Spark cannot open the file, rename it (raw_base64 holds the name's bytes)"
    )
    rows = [(printable_name(name), base64.b64encode(os.fsencode(name)).decode("ascii")) for name in names]
    frame = spark.createDataFrame(
        rows, T.StructType([T.StructField(n, T.StringType()) for n in ("name", "b64")])
    )
    return frame.select(
        *[F.lit(None).cast(t).alias(c.name) for c, t in zip(EVENT_COLUMNS, _EVENT_SPARK_TYPES)],
        F.col("name").alias("_input_file"),
        F.col("name").alias("_raw"),
        F.col("b64").alias("_raw_base64"),
        F.lit(reason).alias("_reason"),
        F.lit(None).cast("date").alias("_date"),
    )


def _parser_quarantine(quarantined):
    """The log parser's quarantined lines (quarantine table columns) as candidates with their reason."""
    from pyspark.sql import functions as F

    columns = {
        "cluster": F.col("cluster"),
        "group_id": F.col("group_id"),
        "file": F.col("source_file"),
        "line": F.col("source_line"),
    }
    return quarantined.select(
        *[
            columns.get(c.name, F.lit(None)).cast(t).alias(c.name)
            for c, t in zip(EVENT_COLUMNS, _EVENT_SPARK_TYPES)
        ],
        F.col("source_file").alias("_input_file"),
        F.col("raw").alias("_raw"),
        F.col("raw_base64").alias("_raw_base64"),
        F.col("reason").alias("_reason"),
        F.col("event_date").alias("_date"),
    )


# ------------------------------------------------------------------------------------ classification
def classify(candidates, date_from: dt.date | None, date_to: dt.date | None):
    """Add `_status`. Valid rows outside [date_from, date_to] are skipped (not this run's); among the
    rest, repeats of an event_id are duplicates: the first by (input file, file, line, ts) is kept."""
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    in_range = F.lit(True)
    if date_from is not None:
        in_range = in_range & (F.col("_date") >= F.lit(date_from))
    if date_to is not None:
        in_range = in_range & (F.col("_date") <= F.lit(date_to))
    kept = F.col("_reason").isNull() & in_range
    first = Window.partitionBy(F.col("event_id"), kept).orderBy(
        "_input_file", "file", "line", "ts", "event_type"
    )
    return candidates.withColumn(
        "_status",
        F.when(F.col("_reason").isNotNull(), F.lit(STATUS_QUARANTINE))
        .when(~in_range, F.lit(STATUS_SKIPPED))
        .when(F.row_number().over(first) > 1, F.lit(STATUS_DUPLICATE))
        .otherwise(F.lit(STATUS_EVENT)),
    )
