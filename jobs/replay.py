"""`rebalance-replay run` / `spark-submit jobs/replay.py`: canonical events -> the Delta tables.

    read + validate (jobs.input)          every row: event | quarantine | duplicate | skipped
    repartition by (cluster, group_id)    a group's rows in one partition...
    sortWithinPartitions                  ...in the core's event order, its previous state first
    mapInPandas(replay_partition)         the protocol core, one replayer per group (jobs.replay_batches)
    write (jobs.delta_io)                 each table's rows of the run's scenario and dates replaced

Intermediate results go to `<staging>/<run_id>/` so that no step is computed twice (Databricks
serverless cannot cache). DataFrame APIs only (no RDD, no SparkContext): runs on Spark Connect.
"""

from __future__ import annotations

import argparse
import datetime as dt
import functools
import os
import secrets
import shutil
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

if __name__ == "__main__" and not __package__:  # spark-submit jobs/replay.py from a checkout
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from jobs.cli import UsageError
from jobs.config import INPUT_FORMATS, JobConfig, load_config, parse_date
from rebalance_core.explain import EXPLAIN_TABLES
from schemas.tables import REPLAY_TABLES

# Every table a run writes (the core's, its state, and the job's own).
WRITTEN_TABLES = (
    "events",
    "quarantine",
    *REPLAY_TABLES,
    *EXPLAIN_TABLES,
    "coordinator_placement",
    "group_state",
    "run_accounting",
)


def configure(parser: argparse.ArgumentParser, scenario_option: bool = True) -> None:
    parser.add_argument(
        "--conf", metavar="FILE", help="YAML settings (default: the built-in conf/local.yaml)"
    )
    parser.add_argument("--input", metavar="PATH", help="canonical events; default: the packaged sample data")
    parser.add_argument("--input-format", choices=INPUT_FORMATS, help="default: auto (from the file names)")
    parser.add_argument(
        "--warehouse",
        metavar="PATH|SCHEMA",
        help="folder of Delta tables (default ./warehouse) or catalog.schema",
    )
    parser.add_argument("--date", type=parse_date, metavar="YYYY-MM-DD", help="replay this UTC date only")
    parser.add_argument(
        "--from", dest="date_from", type=parse_date, metavar="YYYY-MM-DD", help="first UTC date"
    )
    parser.add_argument("--to", dest="date_to", type=parse_date, metavar="YYYY-MM-DD", help="last UTC date")
    if scenario_option:  # `whatif` has its own --scenario (the what-ifs to run)
        parser.add_argument("--scenario", help="scenario name of the rows written (default: actual)")


def config_from_args(args: argparse.Namespace) -> JobConfig:
    if args.date and (args.date_from or args.date_to):
        raise UsageError("give --date or --from/--to, not both")
    date_from = args.date or args.date_from
    date_to = args.date or args.date_to
    return load_config(
        args.conf,
        {
            "input.path": args.input,
            "input.format": args.input_format,
            "warehouse": args.warehouse,
            "dates.from": date_from.isoformat() if date_from else None,
            "dates.to": date_to.isoformat() if date_to else None,
            "scenario": args.scenario,
        },
    )


def main(args: argparse.Namespace) -> int:
    from rich.console import Console

    from jobs.input import resolve_input
    from jobs.spark_session import get_spark

    config = config_from_args(args)
    resolve_input(config.input_path, config.input_format)  # a wrong path fails before Spark starts
    console = Console()
    started = time.monotonic()
    with console.status("starting Spark"):
        spark = get_spark(config.spark)
    result = run(spark, config, progress=Progress(console))
    print_summary(console, result, time.monotonic() - started)
    return 0


# ------------------------------------------------------------------------------------------ the run
@dataclass
class Accounting:
    """One run_accounting row's counts: read = replayed + quarantined + duplicates + skipped."""

    read: int = 0
    replayed: int = 0
    quarantined: int = 0
    duplicates: int = 0
    skipped: int = 0


@dataclass
class RunResult:
    run_id: str
    scenario: str
    input: str
    input_format: str
    warehouse: str
    writer: str
    date_from: dt.date
    date_to: dt.date
    accounting: dict[dt.date, Accounting]
    table_rows: dict[str, int]
    groups: list[dict] = field(default_factory=list)  # per group: totals over the run's dates

    @property
    def total(self) -> Accounting:
        total = Accounting()
        for counts in self.accounting.values():
            for name in vars(total):
                setattr(total, name, getattr(total, name) + getattr(counts, name))
        return total


def run(spark, config: JobConfig, progress=None, group_pass=None) -> RunResult:
    """Replay `config`'s input into its warehouse; see the module docstring. `group_pass` (e.g.
    jobs.whatif.WhatIfPass) replaces the replay pass by one that also emits rows of further scenarios:
    `partition(settings, date_from, date_to)` / `schema()` for mapInPandas, `scenarios` and `tables` to
    write for them (each scenario's rows replace that scenario's rows of the run's dates)."""
    from jobs.delta_io import open_warehouse
    from jobs.input import resolve_input
    from jobs.spark_session import job_settings

    step = progress or Progress(None)
    run_id = dt.datetime.now(dt.timezone.utc).strftime("%Y%m%dT%H%M%SZ") + "-" + secrets.token_hex(3)
    started_at = dt.datetime.now(dt.timezone.utc)
    warehouse = open_warehouse(spark, config.warehouse, config.delta_writer)
    path, fmt = resolve_input(config.input_path, config.input_format)
    staging = _staging_root(config, warehouse)
    run_dir = f"{staging.rstrip('/')}/{run_id}"
    try:
        with job_settings(spark, config.spark):
            return _run(spark, config, warehouse, path, fmt, run_id, run_dir, started_at, step, group_pass)
    finally:
        step.close()
        _remove_local(run_dir)


def _run(
    spark, config, warehouse, path, fmt, run_id, run_dir, started_at, step, group_pass=None
) -> RunResult:
    from pyspark.errors import AnalysisException
    from pyspark.sql import functions as F

    from jobs.delta_io import write_tables
    from jobs.input import STATUS_EVENT, classify, read_candidates

    with step("reading and validating input"):
        try:
            candidates, uncounted = read_candidates(spark, path, fmt, config.input_options, config.cluster)
            staged = _keep_payload(classify(candidates, config.date_from, config.date_to))
            staged.write.partitionBy("_status").parquet(f"{run_dir}/validated")
        except AnalysisException as exc:
            raise UsageError(f"cannot read {path} as {fmt}: {str(exc).splitlines()[0]}") from None
        # Read back with the known schema: nothing to infer, and an empty input reads as empty.
        validated = spark.read.schema(staged.schema).parquet(f"{run_dir}/validated")
        counts = [tuple(r) for r in validated.groupBy("_date", "_status").count().collect()]
    date_from, date_to = _run_dates(config, counts)
    accounting = _accounting(counts, date_from, date_to, uncounted.get("skipped", 0))

    events = validated.where(F.col("_status") == STATUS_EVENT)
    with step("replaying groups"):
        states = _previous_states(spark, warehouse, config.scenario, date_from)
        replayed = _replay(events, states, config, date_from, date_to, group_pass)
        replayed.write.partitionBy("_table").parquet(f"{run_dir}/replayed")
        output = spark.read.schema(replayed.schema).parquet(f"{run_dir}/replayed")
        if group_pass is not None:  # the run's own scenario here; the pass's other scenarios below
            passed, output = output, output.where(F.col("scenario") == config.scenario)
        table_rows = {r["_table"]: r["count"] for r in output.groupBy("_table").count().collect()}
    table_rows["events"] = sum(a.replayed for a in accounting.values())
    table_rows["quarantine"] = sum(a.quarantined for a in accounting.values())
    table_rows["run_accounting"] = len(accounting)

    frames = {
        "events": _events_table(events, config.scenario),
        "quarantine": _quarantine_table(validated, config.scenario, date_to),
        **{table: _output_table(output, table) for table in (*REPLAY_TABLES, *EXPLAIN_TABLES, "group_state")},
        **_across_groups(spark, output, config.scenario, date_to),
        "run_accounting": _accounting_table(
            spark,
            accounting,
            run_id,
            config.scenario,
            started_at,
            path,
            {
                "input_format": fmt,
                "writer": warehouse.writer,
                **{f"input_{k}": str(v) for k, v in uncounted.items()},
            },
        ),
    }
    write_tables(
        spark,
        warehouse,
        frames,
        date_from=date_from,
        date_to=date_to,
        scenario=config.scenario,
        run_id=run_id,
        progress=step.note,
    )
    for scenario in group_pass.scenarios if group_pass is not None else ():
        rows = passed.where(F.col("scenario") == scenario)
        frames = {table: _output_table(rows, table) for table in group_pass.tables}
        write_tables(spark, warehouse, frames, date_from=date_from, date_to=date_to, scenario=scenario,
                     run_id=run_id, progress=lambda title, s=scenario: step.note(f"{title} ({s})"))  # fmt: skip
    with step("summarising"):
        groups = _group_totals(output)
    location = warehouse.location if warehouse.metastore else os.path.relpath(warehouse.location)
    return RunResult(
        run_id,
        config.scenario,
        path,
        fmt,
        location,
        warehouse.writer,
        date_from,
        date_to,
        accounting,
        table_rows,
        groups,
    )


def _keep_payload(classified):
    """Rows kept whole in the staging copy: events and quarantined ones (the rest only count)."""
    from pyspark.sql import functions as F

    from jobs.input import STATUS_EVENT, STATUS_QUARANTINE

    keep = F.col("_status").isin(STATUS_EVENT, STATUS_QUARANTINE)
    payload = [c for c in classified.columns if c not in ("_date", "_status")]
    return classified.select(*[F.when(keep, F.col(c)).alias(c) for c in payload], "_date", "_status")


def _run_dates(config: JobConfig, counts: list[tuple]) -> tuple[dt.date, dt.date]:
    """The configured dates, else the span of the input's dated rows (today, UTC, for an input without
    any)."""
    dated = [date for date, _status, _n in counts if date is not None]
    today = dt.datetime.now(dt.timezone.utc).date()
    date_from = config.date_from or (min(dated) if dated else None)
    date_to = config.date_to or (max(dated) if dated else None)
    date_from = date_from or date_to or today
    date_to = date_to or date_from
    if date_from > date_to:
        raise UsageError(f"--from {date_from} is after --to {date_to}")
    return date_from, date_to


def _accounting(
    counts: list[tuple], date_from: dt.date, date_to: dt.date, skipped_lines: int = 0
) -> dict[dt.date, Accounting]:
    """Counts per run date. Rows without a date of their own (unparseable ts), rows outside the run's
    dates and log lines not about groups (`skipped_lines`) are counted on the run's last date."""
    from jobs.input import STATUS_DUPLICATE, STATUS_EVENT, STATUS_QUARANTINE, STATUS_SKIPPED

    days = (date_to - date_from).days + 1
    out = {date_from + dt.timedelta(days=i): Accounting() for i in range(days)}
    attribute = {
        STATUS_EVENT: "replayed",
        STATUS_QUARANTINE: "quarantined",
        STATUS_DUPLICATE: "duplicates",
        STATUS_SKIPPED: "skipped",
    }
    for date, status, n in counts:
        day = date if date is not None and date_from <= date <= date_to else date_to
        counts_of_day = out[day]
        setattr(counts_of_day, attribute[status], getattr(counts_of_day, attribute[status]) + n)
        counts_of_day.read += n
    out[date_to].skipped += skipped_lines
    out[date_to].read += skipped_lines
    return out


def _previous_states(spark, warehouse, scenario: str, date_from: dt.date):
    """Each group's latest group_state before the run (a group with no events on a day still gets its
    state row that day, so this is normally the previous day's)."""
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    from jobs.delta_io import read_table

    latest = Window.partitionBy("cluster", "group_id").orderBy(F.col("event_date").desc())
    return (
        read_table(spark, warehouse, "group_state")
        .where((F.col("scenario") == F.lit(scenario)) & (F.col("event_date") < F.lit(date_from)))
        .withColumn("_n", F.row_number().over(latest))
        .where(F.col("_n") == 1)
        .select("cluster", "group_id", F.col("state_json").alias("_state_json"))
    )


def _replay(events, states, config: JobConfig, date_from: dt.date, date_to: dt.date, group_pass=None):
    """The replay stream (previous states first, then events in the core's order) through the core."""
    from pyspark.sql import functions as F

    from jobs.replay_batches import KIND_EVENT, KIND_STATE, output_schema, replay_partition
    from rebalance_core.replay import EVENT_TYPE_RANK, UNKNOWN_RANK, ReplaySettings
    from schemas.events import EVENT_COLUMNS

    names = [c.name for c in EVENT_COLUMNS]
    event_rows = events.select(
        *names, F.lit(KIND_EVENT).alias("_kind"), F.lit(None).cast("string").alias("_state_json")
    )
    state_rows = states.select(
        *[F.col(n) if n in ("cluster", "group_id") else F.lit(None).alias(n) for n in names],
        F.lit(KIND_STATE).alias("_kind"),
        "_state_json",
    )
    stream = state_rows.unionByName(event_rows, allowMissingColumns=False)
    ranks = F.create_map(
        *[x for name, rank in sorted(EVENT_TYPE_RANK.items()) for x in (F.lit(name), F.lit(rank))]
    )
    # Same order as rebalance_core.replay.event_order_key: ts, type rank, file, line, event_id.
    stream = stream.withColumns(
        {
            "_ts_ms": F.unix_millis("ts"),
            "_rank": F.coalesce(F.try_element_at(ranks, F.col("event_type")), F.lit(UNKNOWN_RANK)),
        }
    )
    order = [
        "cluster",
        "group_id",
        "_kind",
        "_ts_ms",
        "_rank",
        F.coalesce(F.col("file"), F.lit("")),
        F.coalesce(F.col("line"), F.lit(-1)),
        F.coalesce(F.col("event_id"), F.lit("")),
    ]
    settings = ReplaySettings(
        scenario=config.scenario,
        final=config.replay.final,
        topics=dict(config.replay.topics),
        default_assignor=config.replay.default_assignor,
        session_timeout_ms=config.replay.session_timeout_ms,
    )
    if group_pass is not None:
        function, schema = group_pass.partition(settings, date_from, date_to), group_pass.schema()
    else:
        function = functools.partial(
            replay_partition, settings=settings, date_from=date_from, date_to=date_to
        )
        schema = output_schema()
    # An explicit partition count: without one, adaptive execution may coalesce the shuffle by bytes
    # (64 MB per partition), which suits SQL operators but leaves cores idle when the work per row is
    # the replay's Python (a 1M-event fleet ran as a single partition).
    partitions = int(stream.sparkSession.conf.get("spark.sql.shuffle.partitions"))
    return (
        stream.repartition(partitions, "cluster", "group_id")
        .sortWithinPartitions(*order)
        .mapInPandas(function, schema)
    )


def _output_table(output, table: str):
    """One table's rows of the replay's flat output, its timestamps made from epoch milliseconds (see
    jobs.replay_batches)."""
    from pyspark.sql import functions as F

    from jobs.replay_batches import TIMESTAMP_NAMES
    from schemas.tables import TABLES

    return output.where(F.col("_table") == F.lit(table)).select(
        *[
            F.timestamp_millis(c.name).alias(c.name) if c.name in TIMESTAMP_NAMES else F.col(c.name)
            for c in TABLES[table]
        ]
    )


def _across_groups(spark, output, scenario: str, date_to: dt.date) -> dict:
    """What no single group shows (rebalance_core.coordinator_moves / coordinator_placement), from the
    groups' coordinator tenures (one row per group and broker: small, collected): a broker losing many
    groups at once, one incident added to rebalance_incidents; Kafka's placement rule per group."""
    from pyspark.sql import functions as F

    from rebalance_core.coordinator_moves import move_incidents
    from rebalance_core.coordinator_placement import check_placement
    from rebalance_core.events import ms_to_datetime
    from schemas.fields import spark_schema
    from schemas.tables import COORDINATOR_PLACEMENT, GROUP_COORDINATORS, REBALANCE_INCIDENTS

    # the flat output's instants are the core's epoch milliseconds (jobs.replay_batches)
    tenure_rows = output.where(F.col("_table") == "group_coordinators")
    tenures = [r.asDict() for r in tenure_rows.select(*[c.name for c in GROUP_COORDINATORS]).collect()]
    moves = move_incidents(tenures, scenario=scenario)
    by_cluster: dict = {}
    for row in tenures:
        if row["offsets_partition"] is not None:
            by_cluster.setdefault(row["cluster"], []).append((row["group_id"], row["offsets_partition"]))
    placement = []
    for cluster, observed in sorted(by_cluster.items()):
        _, rows = check_placement(observed)
        for row in rows:
            row["offsets_partitions_logged"] = [str(p) for p in row["offsets_partitions_logged"]]
            placement.append({"cluster": cluster, "scenario": scenario, "event_date": date_to, **row})
    for row in moves:
        for name in ("started_at", "ended_at"):
            row[name] = None if row[name] is None else ms_to_datetime(row[name])
    incidents = _output_table(output, "rebalance_incidents")
    return {
        "rebalance_incidents": incidents.unionByName(
            spark.createDataFrame(moves, spark_schema(REBALANCE_INCIDENTS))
        ),
        "coordinator_placement": spark.createDataFrame(placement, spark_schema(COORDINATOR_PLACEMENT)),
    }


def _events_table(events, scenario: str):
    from pyspark.sql import functions as F

    from schemas.tables import EVENTS

    columns = {"scenario": F.lit(scenario), "event_date": F.col("_date")}
    return events.select(*[columns.get(c.name, F.col(c.name)).alias(c.name) for c in EVENTS])


def _quarantine_table(validated, scenario: str, date_to: dt.date):
    from pyspark.sql import functions as F

    from jobs.input import STATUS_QUARANTINE

    return validated.where(F.col("_status") == STATUS_QUARANTINE).select(
        F.coalesce(F.nullif(F.trim("cluster"), F.lit("")), F.lit("unknown")).alias("cluster"),
        F.nullif(F.col("group_id"), F.lit("")).alias("group_id"),
        F.lit(scenario).alias("scenario"),
        F.coalesce(F.col("_date"), F.lit(date_to)).alias("event_date"),
        F.coalesce(F.col("file"), F.col("_input_file")).alias("source_file"),
        F.col("line").alias("source_line"),
        F.col("_raw").alias("raw"),
        F.col("_reason").alias("reason"),
    )


def _accounting_table(spark, accounting, run_id, scenario, started_at, path, details: dict[str, str]):
    from schemas.fields import spark_schema
    from schemas.tables import RUN_ACCOUNTING

    rows = [
        {
            "run_id": run_id,
            "scenario": scenario,
            "event_date": day,
            "started_at": started_at,
            "input": path,
            **vars(counts),
            "details": details,
        }
        for day, counts in sorted(accounting.items())
    ]
    return spark.createDataFrame(rows, spark_schema(RUN_ACCOUNTING))


def _group_totals(output) -> list[dict]:
    from pyspark.sql import functions as F

    summed = (
        "rebalances",
        "generations",
        "stw_ms",
        "partition_unavailable_ms",
        "partitions_moved",
        "partitions_revoked",
        "revocations_wasted",
        "events",
        "anomalies",
    )
    rows = (
        output.where(F.col("_table") == "group_daily_summary")
        .groupBy("cluster", "group_id")
        .agg(
            *[F.sum(c).alias(c) for c in summed],
            F.max("max_partition_unavailable_ms").alias("max_unavailable_ms"),
        )
        .orderBy(F.col("stw_ms").desc(), "cluster", "group_id")
        .collect()
    )
    return [r.asDict() for r in rows]


def _staging_root(config: JobConfig, warehouse) -> str:
    if config.staging:
        return config.staging
    if warehouse.metastore:
        raise UsageError("a metastore warehouse needs a staging folder: set `staging:` in the config")
    return f"{warehouse.location.rstrip('/')}/_staging"


def _remove_local(path: str) -> None:
    local = path.removeprefix("file://")
    if "://" not in local:
        shutil.rmtree(local, ignore_errors=True)
        parent = os.path.dirname(local)
        if os.path.isdir(parent) and not os.listdir(parent):
            os.rmdir(parent)


# ---------------------------------------------------------------------------------------- progress
class Progress:
    """`with step("..."):` shows a spinner with the step's title on a terminal, then one line with its
    duration; `note("...")` opens a step that lasts until the next one (or `close()`)."""

    def __init__(self, console):
        self.console = console
        self._open = None

    @contextmanager
    def __call__(self, title: str) -> Iterator[None]:
        self.close()
        if self.console is None:
            yield
            return
        started = time.monotonic()
        with self.console.status(title):
            yield
        self.console.print(f"[green]✓[/] {title} [dim]({time.monotonic() - started:.1f} s)[/]")

    def note(self, title: str) -> None:
        self.close()
        step = self(title)
        step.__enter__()
        self._open = step

    def close(self) -> None:
        if self._open is not None:
            step, self._open = self._open, None
            step.__exit__(None, None, None)


# ----------------------------------------------------------------------------------------- summary
def print_summary(console, result: RunResult, seconds: float) -> None:
    """Per group: rebalances, stop-the-world time, churn (partitions moved, revoked, revoked for nothing),
    the longest a partition waited, anomalies; then the accounting and what was written."""
    from rich import box
    from rich.table import Table

    dates = f"{result.date_from}" + (f" .. {result.date_to}" if result.date_to != result.date_from else "")
    shown = result.groups[:_GROUPS_SHOWN]
    if shown:
        table = Table(
            title=f"Rebalances {dates} (scenario {result.scenario})",
            box=box.SIMPLE_HEAD,
            show_edge=False,
            pad_edge=False,
        )
        names = [f"{g['cluster']}/{g['group_id']}" for g in shown]
        table.add_column("group", overflow="fold", min_width=min(17, max(map(len, names))))
        for header in (
            "rebal-\nances",
            "stop-\nthe-\nworld",
            "moved",
            "revoked",
            "wasted",
            "longest\nwait",
            "anom-\nalies",
        ):
            table.add_column(header, justify="right", no_wrap=True)
        for name, g in zip(names, shown):
            table.add_row(
                name,
                str(g["rebalances"]),
                _duration(g["stw_ms"]),
                str(g["partitions_moved"]),
                str(g["partitions_revoked"]),
                str(g["revocations_wasted"]),
                _duration(g["max_unavailable_ms"]),
                str(g["anomalies"]),
            )
        console.print(table)
    else:
        console.print(f"No group had events on {dates}.")
    if len(result.groups) > len(shown):
        console.print(
            f"... and {len(result.groups) - len(shown)} more groups (listed by stop-the-world time)"
        )
    total = result.total
    skipped = f" + skipped {total.skipped} (outside the run's dates)" if total.skipped else ""
    console.print(
        f"read {total.read} = replayed {total.replayed} + quarantined {total.quarantined} "
        f"+ duplicates {total.duplicates}{skipped}"
    )
    written = ", ".join(f"{name} {result.table_rows.get(name, 0)}" for name in WRITTEN_TABLES)
    console.print(f"wrote {result.warehouse} ({result.writer}): {written}")
    console.print(f"run {result.run_id} in {seconds:.1f} s; input {result.input} ({result.input_format})")


_GROUPS_SHOWN = 25


def _duration(ms) -> str:
    if ms is None:
        return "-"
    for unit, size in (("h", 3_600_000), ("m", 60_000), ("s", 1000)):
        if ms >= size:
            return f"{ms / size:.1f}{unit}"
    return f"{ms}ms"


if __name__ == "__main__":
    from jobs.cli import main as cli_main

    sys.exit(cli_main(["run", *sys.argv[1:]]))
