"""Helpers of the Spark job tests: event logs to files, job configs, core rows as DataFrames, chispa
comparisons that tolerate map columns and row order."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

from chispa import assert_df_equality

from jobs.config import load_config
from jobs.replay import run
from rebalance_core.events import Event, ms_to_datetime
from schemas.fields import TIMESTAMP, spark_schema
from schemas.tables import TABLES


def write_jsonl(path: Path, events: list[Event], extra_lines: tuple[str, ...] = ()) -> Path:
    lines = [json.dumps(e.to_json_dict(), sort_keys=True) for e in events] + list(extra_lines)
    path.write_text("\n".join(lines) + "\n")
    return path


def run_job(spark, input_path, warehouse, **settings):
    """One `rebalance-replay run` with dotted config overrides (e.g. {"replay.final": False}), small
    Arrow batches so that groups span batches."""
    overrides = {
        "input.path": str(input_path),
        "warehouse": str(warehouse),
        "spark.arrow_max_records_per_batch": 16,
        "spark.shuffle_partitions": 2,
    }
    overrides.update({key.replace("__", "."): value for key, value in settings.items()})
    return run(spark, load_config(None, overrides))


def core_frame(spark, table: str, rows: list[dict]):
    """The core's rows (epoch-ms timestamps) as a DataFrame of the table's schema."""
    stamps = [c.name for c in TABLES[table] if c.type == TIMESTAMP]
    converted = [
        {**row, **{name: ms_to_datetime(row[name]) if row.get(name) is not None else None for name in stamps}}
        for row in rows
    ]
    return spark.createDataFrame(converted, spark_schema(TABLES[table]))


def comparable(frame):
    """Map columns as sorted key/value arrays (Spark cannot sort rows by a map)."""
    from pyspark.sql import functions as F
    from pyspark.sql import types as T

    return frame.select(
        *[
            F.array_sort(F.map_entries(f.name)).alias(f.name)
            if isinstance(f.dataType, T.MapType)
            else F.col(f.name)
            for f in frame.schema.fields
        ]
    )


def assert_same_rows(actual, expected) -> None:
    assert_df_equality(
        comparable(actual),
        comparable(expected),
        ignore_row_order=True,
        ignore_nullable=True,
        ignore_column_order=True,
    )


def utc(ms: int) -> dt.datetime:
    return ms_to_datetime(ms)
