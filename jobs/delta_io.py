"""The warehouse: one Delta table per name of `schemas.tables.TABLES`, partitioned by `event_date`.

A run replaces, in every table, the rows of its scenario on its dates, atomically per table: a rerun
of a date gives the same tables, and a run killed at any point leaves every table readable at its
previous version. Two writers produce the same tables:

- Spark's Delta writer (`writer="spark"`) where the session has Delta (Databricks, delta-spark jars):
  `mode("overwrite")` + `replaceWhere "<dates> AND scenario = '<scenario>'"`, to a path or a metastore
  table.
- delta-rs (`writer="delta-rs"`) everywhere else: Spark's executors write the Parquet files (Hive-style
  `event_date=YYYY-MM-DD/` folders, Delta's timestamp encoding) under `<table>/_staging/<run_id>/`;
  once every table is staged, the driver moves each table's files into the table folder and commits
  them in one Delta transaction that also removes the files they replace. Only file names and Parquet
  footers pass through the driver, never rows. Files that were moved but not committed (a run killed
  between the two) are in no snapshot: readers never see them, `DeltaTable.vacuum` deletes them.

Spark reads a delta-rs table through the Parquet files of its current snapshot (`file_uris()`).
"""

from __future__ import annotations

import datetime as dt
import json
import os
import shutil
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import unquote

from jobs.pause_points import checkpoint
from jobs.spark_session import session_has_delta
from jobs.usage import UsageError
from jobs.warehouse_location import is_metastore_schema
from schemas.fields import INT, LONG, STRING, spark_schema
from schemas.tables import TABLES

PARTITION_COLUMN = "event_date"
STAGING_FOLDER = "_staging"
# Reader features delta-rs' file list does not apply (rows would come back that the table deleted).
_UNREADABLE_FEATURES = {"deletionVectors", "columnMapping"}


@dataclass(frozen=True)
class Warehouse:
    """Where the tables live and which writer writes them."""

    location: str  # a folder (absolute path or URI) or a metastore schema (catalog.schema)
    metastore: bool
    writer: str  # "spark" | "delta-rs"

    def path(self, table: str) -> str:
        return f"{self.location.rstrip('/')}/{table}"

    def name(self, table: str) -> str:
        return f"{self.location}.{table}"


def open_warehouse(spark, location: str, writer: str = "auto") -> Warehouse:
    metastore = is_metastore_schema(location)
    delta_in_session = session_has_delta(spark)
    if writer == "auto":
        writer = "spark" if delta_in_session else "delta-rs"
    if writer == "spark" and not delta_in_session:
        raise UsageError(
            "delta_writer 'spark' needs Delta in the Spark session (delta-spark jars, Databricks)"
        )
    if writer == "delta-rs":
        if metastore:
            raise UsageError(
                f"warehouse {location!r} is a metastore schema, which needs Delta in the Spark session; "
                f"for a folder write ./{location}"
            )
        if "://" in location and not location.startswith("file://"):
            raise UsageError(
                f"warehouse {location!r}: without Delta in the Spark session only local folders work"
            )
        location = os.path.abspath(os.path.expanduser(location.removeprefix("file://")))
    return Warehouse(location, metastore, writer)


# -------------------------------------------------------------------------------------------- reading
def table_schema(table: str):
    return spark_schema(TABLES[table])


def read_table(spark, warehouse: Warehouse, table: str):
    """The table's current snapshot as a DataFrame with the schema of `schemas.tables` (empty when the
    table does not exist yet)."""
    schema = table_schema(table)
    if warehouse.writer == "spark":
        from pyspark.errors import AnalysisException

        try:
            if warehouse.metastore:
                frame = spark.read.table(warehouse.name(table))
            else:
                frame = spark.read.format("delta").load(warehouse.path(table))
        except AnalysisException:
            return spark.createDataFrame([], schema)
        from pyspark.sql import functions as F

        present = set(frame.columns)  # a table written by an older version lacks newer columns
        return frame.select(
            *[
                F.col(f.name) if f.name in present else F.lit(None).cast(f.dataType).alias(f.name)
                for f in schema
            ]
        )
    return _read_snapshot_files(spark, warehouse.path(table), schema)


def read_delta_path(spark, path: str):
    """Any Delta table at `path` (the run's input): Spark's reader when the session has Delta, else the
    Parquet files of the delta-rs snapshot."""
    if session_has_delta(spark):
        return spark.read.format("delta").load(path)
    from deltalake import DeltaTable
    from deltalake.exceptions import TableNotFoundError

    try:
        table = DeltaTable(path)
    except TableNotFoundError:
        raise UsageError(f"not a Delta table: {path}") from None
    features = set(table.protocol().reader_features or ()) & _UNREADABLE_FEATURES
    if features:
        raise UsageError(
            f"Delta table {path} uses {', '.join(sorted(features))}: read it with a Delta-enabled Spark session"
        )
    from pyspark.sql.pandas.types import from_arrow_schema

    schema = from_arrow_schema(_arrow(table.schema().to_arrow()))
    return _read_snapshot_files(spark, path, schema, table=table)


def _read_snapshot_files(spark, path: str, schema, table=None):
    from deltalake import DeltaTable

    if table is None:
        if not DeltaTable.is_deltatable(path):
            return spark.createDataFrame([], schema)
        table = DeltaTable(path)
    uris = table.file_uris()
    if not uris:
        return spark.createDataFrame([], schema)
    # Partition values come from the Hive-style folder names under the table root.
    return spark.read.schema(schema).option("basePath", path).parquet(*uris)


def _arrow(schema_like) -> Any:
    import pyarrow as pa

    return pa.schema(schema_like)


# -------------------------------------------------------------------------------------------- writing
@dataclass
class _Staged:
    """One table's files written by Spark, waiting for the driver's commit (delta-rs writer)."""

    table: str
    root: Path
    staging: Path
    snapshot: Any = None  # the DeltaTable the removals were computed from (None: new table)
    removals: list = field(default_factory=list)


def write_tables(
    spark,
    warehouse: Warehouse,
    frames: Mapping[str, Any] | Sequence[tuple[str, Any]],
    *,
    date_from: dt.date,
    date_to: dt.date,
    scenario: str,
    run_id: str,
    progress=None,
) -> None:
    """Replace the rows of `scenario` dated date_from..date_to in each table by its frame (whose rows
    must lie in that range), committing the tables in the order given (table -> frame, or pairs).
    `progress(message)` is called before each step."""
    note = progress or (lambda message: None)
    frames = list(frames.items()) if isinstance(frames, Mapping) else list(frames)
    metadata = json.dumps(
        {"run_id": run_id, "event_date": [str(date_from), str(date_to)], "scenario": scenario}
    )
    if warehouse.writer == "spark":
        predicate = f"{PARTITION_COLUMN} >= '{date_from}' AND {PARTITION_COLUMN} <= '{date_to}' AND scenario = '{scenario}'"
        for table, frame in frames:
            note(f"writing {table}")
            writer = (
                _conformed(frame, table)
                .write.format("delta")
                .mode("overwrite")
                .option("replaceWhere", predicate)
                .option("mergeSchema", "true")  # columns added since the table was created
                .option("userMetadata", metadata)
                .partitionBy(PARTITION_COLUMN)
            )
            if warehouse.metastore:
                writer.saveAsTable(warehouse.name(table))
            else:
                writer.save(warehouse.path(table))
            checkpoint(f"after-commit:{table}")
        return
    staged = []
    try:
        for table, frame in frames:
            note(f"writing {table}")
            staged.append(_stage(spark, warehouse, table, frame, date_from, date_to, scenario, run_id))
    except BaseException:  # nothing is committed yet: every table stays at its version
        for table, _frame in frames:
            _remove_staging(Path(warehouse.path(table)) / STAGING_FOLDER / run_id)
        raise
    checkpoint("staged")
    note("committing")
    for item in staged:
        _commit(item, metadata)
        checkpoint(f"after-commit:{item.table}")


def _conformed(frame, table: str):
    from pyspark.sql import functions as F

    return frame.select(*[F.col(f.name).cast(f.dataType).alias(f.name) for f in table_schema(table)])


def _stage(spark, warehouse, table, frame, date_from, date_to, scenario, run_id) -> _Staged:
    from deltalake import DeltaTable
    from pyspark.sql import functions as F

    root = Path(warehouse.path(table))
    item = _Staged(table, root, root / STAGING_FOLDER / run_id)
    shutil.rmtree(item.staging, ignore_errors=True)
    frame = _conformed(frame, table)
    if DeltaTable.is_deltatable(str(root)):
        item.snapshot = DeltaTable(str(root))
        item.removals, mixed = _replaced_files(item.snapshot, root, date_from, date_to, scenario)
        if mixed:  # files holding other scenarios' rows too: those rows are written again
            kept = spark.read.schema(table_schema(table)).option("basePath", str(root)).parquet(*mixed)
            frame = frame.unionByName(kept.where(F.col("scenario") != F.lit(scenario)))
    frame.write.mode("errorifexists").partitionBy(PARTITION_COLUMN).parquet(str(item.staging))
    return item


def _replaced_files(snapshot, root: Path, date_from, date_to, scenario) -> tuple[list, list[str]]:
    """Remove actions for the snapshot's files dated date_from..date_to that hold `scenario` rows, and
    the URIs of those among them that may also hold other scenarios (by the files' min/max stats)."""
    import pyarrow as pa
    from deltalake.transaction import RemoveAction

    actions = pa.table(snapshot.get_add_actions(flatten=True)).to_pylist()
    now = int(time.time() * 1000)
    removals, mixed = [], []
    for action in actions:
        day = action.get(f"partition.{PARTITION_COLUMN}")
        if day is None or not date_from <= day <= date_to:
            continue
        low, high = action.get("min.scenario"), action.get("max.scenario")
        if low is not None and high is not None and not low <= scenario <= high:
            continue  # only other scenarios: untouched
        removals.append(
            RemoveAction(action["path"], True, now, action["size_bytes"], {PARTITION_COLUMN: day.isoformat()})
        )
        if not low == high == scenario:
            mixed.append(str(root / unquote(action["path"])))  # log paths are URL-encoded
    return removals, mixed


def _commit(item: _Staged, metadata: str) -> None:
    """Move the staged files into the table folder and commit them with the removals, in one
    transaction (creating the table on its first write)."""
    from deltalake import CommitProperties, Schema
    from deltalake.transaction import create_table_with_add_actions

    adds = []
    files = sorted(item.staging.rglob("*.parquet"))
    # Written before the move: if the run dies before its commit, the next run deletes these files
    # from the table folder (clean_dead_runs), where no snapshot would ever reference them.
    _moved_list(item.staging).write_text(json.dumps([f.relative_to(item.staging).as_posix() for f in files]))
    for staged_file in files:
        relative = staged_file.relative_to(item.staging)
        target = item.root / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        os.replace(staged_file, target)
        adds.append(_add_action(target, relative.as_posix(), item.table))
    checkpoint(f"before-commit:{item.table}")
    schema = _delta_schema(item.table)
    properties = CommitProperties(custom_metadata={"userMetadata": metadata})
    if item.snapshot is None:
        create_table_with_add_actions(
            str(item.root),
            Schema.from_arrow(schema),
            adds,
            mode="error",
            partition_by=[PARTITION_COLUMN],
            commit_properties=properties,
        )
    else:
        _add_new_columns(item.snapshot, schema)
        item.snapshot.create_write_transaction(
            adds + item.removals,
            mode="append",
            schema=schema,
            partition_by=[PARTITION_COLUMN],
            commit_properties=properties,
        )
    _remove_staging(item.staging)


def _add_new_columns(snapshot, schema) -> None:
    """A table written by an older version lacks columns added since (all nullable): add them first,
    as Spark's writer does with mergeSchema, so that readers of the Delta schema see them."""
    from deltalake import Schema

    have = {f.name for f in snapshot.schema().fields}
    missing = [f for f in Schema.from_arrow(schema).fields if f.name not in have]
    if missing:
        snapshot.alter.add_columns(missing)


def _remove_staging(staging: Path) -> None:
    shutil.rmtree(staging, ignore_errors=True)
    _moved_list(staging).unlink(missing_ok=True)
    if staging.parent.is_dir() and not any(staging.parent.iterdir()):
        staging.parent.rmdir()


def _moved_list(staging: Path) -> Path:
    """Where a run lists the files it is moving from `staging` into the table (beside the folder)."""
    return staging.parent / f"{staging.name}.moving"


# ------------------------------------------------------------------------------- after a dead run
def commit_run_ids(spark, warehouse: Warehouse, table: str, limit: int | None = None) -> set[str]:
    """The run ids of the table's commits (newest `limit` commits; all when None), from the metadata
    every commit of write_tables carries. Empty for a table that does not exist."""
    if warehouse.writer == "spark":
        from pyspark.errors import AnalysisException

        name = warehouse.name(table) if warehouse.metastore else f"delta.`{warehouse.path(table)}`"
        try:
            history = spark.sql(f"DESCRIBE HISTORY {name}" + (f" LIMIT {int(limit)}" if limit else ""))
            texts = [r.userMetadata for r in history.select("userMetadata").collect()]
        except AnalysisException:
            return set()
    else:
        from deltalake import DeltaTable

        if not DeltaTable.is_deltatable(warehouse.path(table)):
            return set()
        texts = [c.get("userMetadata") for c in DeltaTable(warehouse.path(table)).history(limit)]
    ids = set()
    for text in texts:
        try:
            ids.add(json.loads(text)["run_id"])
        except (TypeError, ValueError, KeyError):
            continue  # a commit of another tool
    return ids


def clean_dead_runs(warehouse: Warehouse, tables, own_run_id: str) -> list[str]:
    """What runs that died left in the tables' folders (delta-rs writer; the caller holds the warehouse
    lock, so no other run is alive): staged files, and files moved into a table by a run that died
    before committing them (listed in its `.moving` file, and in no commit of that run). Returns the
    run ids cleaned."""
    if warehouse.writer != "delta-rs":
        return []
    cleaned = set()
    for table in tables:
        staging_root = Path(warehouse.path(table)) / STAGING_FOLDER
        if not staging_root.is_dir():
            continue
        dead = {p.name.removesuffix(".moving") for p in staging_root.iterdir()} - {own_run_id}
        for run_id in sorted(dead):
            moved = _moved_list(staging_root / run_id)
            if moved.exists() and run_id not in commit_run_ids(None, warehouse, table):
                try:
                    names = json.loads(moved.read_text())
                except ValueError:  # died while writing the list: it moved nothing yet
                    names = []
                for name in names:
                    (Path(warehouse.path(table)) / name).unlink(missing_ok=True)
            _remove_staging(staging_root / run_id)
            cleaned.add(run_id)
    return sorted(cleaned)


def _delta_schema(table: str):
    """The Delta schema of a table: its Arrow schema with every field nullable, as Spark's Delta writer
    declares it (so both writers create the same table)."""
    import pyarrow as pa

    from schemas.fields import arrow_schema

    return pa.schema([f.with_nullable(True) for f in arrow_schema(TABLES[table])])


def _add_action(path: Path, relative: str, table: str):
    """Delta add action of a Parquet file: size, partition value (from its folder name) and statistics
    from its footer: record count, and min/max/null count of the plain string and integer columns."""
    import pyarrow.parquet as pq
    from deltalake.transaction import AddAction

    partition = dict(part.split("=", 1) for part in Path(relative).parent.parts)
    metadata = pq.read_metadata(path)
    stats = {"numRecords": metadata.num_rows, "minValues": {}, "maxValues": {}, "nullCount": {}}
    plain = {c.name for c in TABLES[table] if c.type in (STRING, INT, LONG)}
    for index in range(metadata.num_columns):
        name = metadata.schema.column(index).path
        if name in plain:
            _column_stats(metadata, index, name, stats)
    info = path.stat()
    return AddAction(relative, info.st_size, partition, int(info.st_mtime * 1000), True, json.dumps(stats))


def _column_stats(metadata, index: int, name: str, stats: dict) -> None:
    """Null count, min and max of one column. Statistics are optional in Delta: a min/max that is not
    valid text (Parquet's footer truncates long strings' bounds, possibly inside a character) is left
    out rather than written wrong."""
    lows, highs, nulls, bounds = [], [], 0, True
    for group in range(metadata.num_row_groups):
        column_stats = metadata.row_group(group).column(index).statistics
        if column_stats is None or not column_stats.has_null_count:
            return
        nulls += column_stats.null_count
        if column_stats.has_min_max and bounds:
            try:
                lows.append(column_stats.min)
                highs.append(column_stats.max)
            except UnicodeDecodeError:
                bounds = False
    stats["nullCount"][name] = nulls
    if lows and bounds:
        stats["minValues"][name] = min(lows)
        stats["maxValues"][name] = max(highs)


__all__ = [
    "Warehouse",
    "open_warehouse",
    "read_table",
    "read_delta_path",
    "write_tables",
    "commit_run_ids",
    "clean_dead_runs",
]
