"""Reading canonical events (JSON lines, Parquet, Delta, or Kafka logs through jobs.log_source) into
one DataFrame of candidate events, each with a verdict.

Columns of a candidate: the event columns of `schemas.events` with their schema types (`ts` truncated
to the millisecond, the core's clock; null when it cannot be parsed), then
  _input_file  the file the row was read from
  _raw         the row as read (JSON line, or the row rendered as JSON), kept for quarantined rows only
  _reason      why the row goes to quarantine (null: valid)
  _date        UTC date of `ts`
`classify` adds `_status`: quarantine | skipped (outside the run's dates) | duplicate | event.
"""

from __future__ import annotations

import datetime as dt
import glob
import importlib.util
from pathlib import Path
from typing import Any

from jobs.cli import UsageError
from schemas.events import EVENT_COLUMNS, EVENT_TYPES, REQUIRED_EVENT_COLUMNS, Side
from schemas.fields import spark_schema

SAMPLE_DATA = Path(__file__).parent / "sample_data" / "events.jsonl"

STATUS_EVENT = "event"
STATUS_QUARANTINE = "quarantine"
STATUS_DUPLICATE = "duplicate"
STATUS_SKIPPED = "skipped"

_JSON_SUFFIXES = (".json", ".jsonl", ".ndjson")
_CORRUPT = "_corrupt_record"
_SIDES = [s.value for s in Side]
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


# ------------------------------------------------------------------------------------------ reading
def read_candidates(
    spark, path: str, fmt: str, options: dict | None = None, cluster: str | None = None
) -> tuple[Any, dict[str, int]]:
    """(candidates, uncounted): every input row as a candidate event with its verdict (`_reason`), see
    the module docstring; `uncounted` tells what the input held besides rows (kafka-log: the files,
    their lines, and `skipped` lines that are not about groups)."""
    from pyspark.sql import functions as F

    options = dict(options or {})
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
    `ts` is parsed as text (ISO-8601 or epoch milliseconds) by `_parse_ts`."""
    from pyspark.sql import functions as F
    from pyspark.sql import types as T

    fields = [
        f if f.name != "ts" else T.StructField("ts", T.StringType()) for f in spark_schema(EVENT_COLUMNS)
    ]
    schema = T.StructType(fields + [T.StructField(_CORRUPT, T.StringType())])
    lines = (
        spark.read.option("recursiveFileLookup", "true")
        .text(path)
        .select(F.col("value").alias("_raw"), _file_path().alias("_input_file"))
        .where(F.trim("_raw") != "")
    )
    parsed = lines.withColumn(
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
        F.when(
            F.col(f"_json.{_CORRUPT}").isNotNull(),
            F.lit("malformed JSON (not an object, or a value of the wrong type)"),
        ).alias("_malformed"),
        "_raw",
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
    malformed = (
        F.when(
            F.concat_ws(", ", *misfits) != "",
            F.concat(F.lit("value of the wrong type in: "), F.concat_ws(", ", *misfits)),
        )
        if misfits
        else F.lit(None).cast("string")
    )
    originals = [F.col(f"`{name}`") for name in present if name != "_input_file"]
    return frame.select(
        *columns,
        (F.col("ts").cast("string") if "ts" in present else F.lit(None).cast("string")).alias("_ts_text"),
        malformed.alias("_malformed"),
        F.to_json(F.struct(*originals)).alias("_raw"),
        "_input_file",
    )


def _parse_ts(column, source_type):
    """UTC instant from a timestamp, a date, epoch milliseconds (number or digits) or ISO-8601 text;
    null when it cannot be parsed (the row is quarantined)."""
    from pyspark.sql import functions as F
    from pyspark.sql import types as T

    if isinstance(source_type, T.TimestampType | T.TimestampNTZType | T.DateType):
        return column.cast("timestamp")  # a zone-less value is read as UTC (session time zone)
    if isinstance(source_type, T.NumericType):
        return F.timestamp_millis(column.cast("long"))
    text = F.trim(column.cast("string"))
    return F.when(
        text.rlike(r"^-?\d+(\.\d+)?$"), F.timestamp_millis(text.try_cast("double").cast("long"))
    ).otherwise(text.try_cast("timestamp"))


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
    reason = F.coalesce(
        F.col("_malformed"),
        F.when(missing != "", F.concat(F.lit("missing required field(s): "), missing)),
        F.when(F.col("ts").isNull(), F.concat(F.lit("unparseable ts: "), F.col("_ts_text"))),
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
        reason.alias("_reason"),
        F.to_date("ts").alias("_date"),
    )


def _read_kafka_logs(spark, path: str, options: dict):
    if importlib.util.find_spec("jobs.log_source") is None:
        raise UsageError("--input-format kafka-log needs jobs.log_source, which this installation lacks")
    from jobs.log_source import read_kafka_logs

    try:
        return read_kafka_logs(spark, [path], options)
    except ValueError as exc:  # bad input.options (cluster, tz, path_pattern)
        raise UsageError(f"input.options: {exc}") from None


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
