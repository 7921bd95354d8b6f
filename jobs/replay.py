"""`rebalance-replay run` / `spark-submit jobs/replay.py`: canonical events -> the Delta tables.

    read + validate (jobs.input)          every row: event | quarantine | duplicate | skipped
    align member clocks                   a member log's ts moved by the core's rule (clock_alignment)
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
from pathlib import Path

if __name__ == "__main__" and not __package__:  # spark-submit jobs/replay.py from a checkout
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from jobs.config import INPUT_FORMATS, JobConfig, load_config, parse_date
from jobs.run_state import TABLES_WRITTEN_BY_ANY_RUN, WRITTEN_TABLES
from jobs.usage import UsageError
from rebalance_core.explain import EXPLAIN_TABLES
from rebalance_core.measure_records import day_end_ms
from schemas.tables import REPLAY_TABLES


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
    parser.add_argument(
        "--log-date",
        type=parse_date,
        metavar="YYYY-MM-DD",
        help="kafka-log input: date of time-only lines in files whose name has no date (input.options.date)",
    )
    if scenario_option:  # `whatif` has its own --scenario (the what-ifs to run)
        parser.add_argument("--scenario", help="scenario name of the rows written (default: actual)")
    parser.add_argument(
        "--driver-memory", metavar="SIZE", help="JVM heap of the Spark driver launched here, e.g. 4g"
    )


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
            "input.options.date": args.log_date.isoformat() if args.log_date else None,
            "spark.driver_memory": getattr(args, "driver_memory", None),
        },
        {
            "input.path": "--input",
            "input.format": "--input-format",
            "warehouse": "--warehouse",
            "dates.from": "--date" if args.date else "--from",
            "dates.to": "--date" if args.date else "--to",
            "scenario": "--scenario",
            "spark.driver_memory": "--driver-memory",
            "input.options.date": "--log-date",
        },
    )


def main(args: argparse.Namespace) -> int:
    from rich.console import Console

    from jobs.failures import discard_log, job_log
    from jobs.input import resolve_input
    from jobs.run_state import hold_warehouse
    from jobs.spark_session import get_spark

    config = config_from_args(args)
    resolve_input(config.input_path, config.input_format)  # a wrong path fails before Spark starts
    console = Console()
    started = time.monotonic()
    run_id = new_run_id()
    log = job_log(config.warehouse)  # the JVM's output, and the details of a failure
    with hold_warehouse(config.warehouse, run_id):  # a concurrent run is told before Spark starts
        with console.status("starting Spark"):
            spark = get_spark(config.spark, log_file=log)
        result = run(spark, config, progress=Progress(console), run_id=run_id)
    print_summary(console, result, time.monotonic() - started)
    discard_log()  # kept for failures only
    return 0


def new_run_id() -> str:
    return dt.datetime.now(dt.UTC).strftime("%Y%m%dT%H%M%SZ") + "-" + secrets.token_hex(3)


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
    summary: object = None  # jobs.summary.RunSummary of the run's dates
    not_group_lines: int = 0  # of the skipped: log lines not about groups (the rest: outside the dates)
    completed: list = field(default_factory=list)  # unfinished runs this one completed (run_state.Unfinished)
    unfinished: list = field(
        default_factory=list
    )  # unfinished runs of other dates or scenarios, left as they are

    @property
    def total(self) -> Accounting:
        total = Accounting()
        for counts in self.accounting.values():
            for name in vars(total):
                setattr(total, name, getattr(total, name) + getattr(counts, name))
        return total


def run(spark, config: JobConfig, progress=None, group_pass=None, run_id: str | None = None) -> RunResult:
    """Replay `config`'s input into its warehouse; see the module docstring. `group_pass` (e.g.
    jobs.whatif.WhatIfPass) replaces the replay pass by one that also emits rows of further scenarios:
    `partition(settings, date_from, date_to)` / `schema()` for mapInPandas, `scenarios` and `tables` to
    write for them (each scenario's rows replace that scenario's rows of the run's dates).

    A run holds the warehouse's lock, and deals with what runs that did not finish left behind
    (jobs.run_state): it completes one it covers, refuses to build on one it depends on, and cleans
    their staging files."""
    from jobs.delta_io import clean_dead_runs, open_warehouse
    from jobs.input import resolve_input
    from jobs.run_state import find_unfinished, hold_warehouse
    from jobs.spark_session import job_settings

    step = progress or Progress(None)
    run_id = run_id or new_run_id()
    started_at = dt.datetime.now(dt.UTC)
    warehouse = open_warehouse(spark, config.warehouse, config.delta_writer)
    path, fmt = resolve_input(config.input_path, config.input_format)
    staging = _staging_root(config, warehouse)
    run_dir = f"{staging.rstrip('/')}/{run_id}"
    with hold_warehouse(config.warehouse, run_id):
        try:
            with job_settings(spark, config.spark):
                unfinished = find_unfinished(spark, warehouse)
                _clean_staging(staging, warehouse, run_id)
                clean_dead_runs(warehouse, TABLES_WRITTEN_BY_ANY_RUN, run_id)
                _mark_run_dir(run_dir, warehouse)
                run = _Run(spark, config, warehouse, path, fmt, run_id, run_dir, started_at, step, group_pass)
                return run.execute(unfinished)
        finally:
            step.close()
            _remove_local(run_dir)


@dataclass
class _Run:
    spark: object
    config: JobConfig
    warehouse: object
    path: str
    fmt: str
    run_id: str
    run_dir: str
    started_at: dt.datetime
    step: Progress
    group_pass: object = None

    @property
    def scenarios(self) -> tuple[str, ...]:
        """Every scenario the run writes: its own, then the group pass's."""
        extra = self.group_pass.scenarios if self.group_pass is not None else ()
        return (self.config.scenario, *extra)

    def judged(self, unfinished, date_from: dt.date, date_to: dt.date):
        """Say what happens to the unfinished runs found (UsageError for one this run cannot build on)."""
        from jobs.run_state import blocking_message, judge

        verdict = judge(unfinished, self.config.scenario, self.scenarios, date_from, date_to)
        if verdict.blocking:
            raise UsageError(blocking_message(verdict.blocking[0]))
        for run in verdict.completing:
            self.step.notice(f"the previous {run.describe()}: this run completes it")
        for run in verdict.elsewhere:
            self.step.notice(f"the warehouse is mid-run: the {run.describe()} (not completed by this run)")
        return verdict

    def execute(self, unfinished) -> RunResult:
        config = self.config
        verdict = None
        if config.date_from and config.date_to:  # known dates: say it before any work
            verdict = self.judged(unfinished, config.date_from, config.date_to)
        validated, accounting, uncounted, date_from, date_to = self.read()
        if verdict is None:
            verdict = self.judged(unfinished, date_from, date_to)
        result = self.replay_and_write(validated, accounting, uncounted, date_from, date_to)
        result.completed, result.unfinished = verdict.completing, verdict.elsewhere
        return result

    def read(self):
        from pyspark.errors import AnalysisException

        from jobs.input import classify, read_candidates
        from jobs.pause_points import checkpoint

        spark, config, path, fmt, run_dir = self.spark, self.config, self.path, self.fmt, self.run_dir
        with self.step("reading and validating input"):
            try:
                candidates, uncounted = read_candidates(
                    spark, path, fmt, config.input_options, config.cluster
                )
                staged = _keep_payload(classify(candidates, config.date_from, config.date_to))
                staged.write.partitionBy("_status").parquet(f"{run_dir}/validated")
            except AnalysisException as exc:
                raise UsageError(f"cannot read {path} as {fmt}: {str(exc).splitlines()[0]}") from None
            checkpoint("reading")
            # Read back with the known schema: nothing to infer, and an empty input reads as empty.
            validated = spark.read.schema(staged.schema).parquet(f"{run_dir}/validated")
            counts = [tuple(r) for r in validated.groupBy("_date", "_status").count().collect()]
        date_from, date_to = _run_dates(config, counts)
        accounting = _accounting(counts, date_from, date_to, uncounted.get("skipped", 0))
        return validated, accounting, uncounted, date_from, date_to

    def replay_and_write(self, validated, accounting, uncounted, date_from, date_to) -> RunResult:
        from pyspark.sql import functions as F

        from jobs.delta_io import write_tables
        from jobs.input import STATUS_EVENT
        from rebalance_core.coordinator_moves import HANDOVER_TYPES

        spark, config, warehouse, step = self.spark, self.config, self.warehouse, self.step
        run_id, run_dir, path, fmt, group_pass = (
            self.run_id,
            self.run_dir,
            self.path,
            self.fmt,
            self.group_pass,
        )
        events = validated.where(F.col("_status") == STATUS_EVENT)
        # broker-wide partition hand-overs name no group: not replayed per group (see _across_groups)
        handover = F.col("event_type").isin(*sorted(HANDOVER_TYPES))
        with step("replaying groups"):
            states = _previous_states(spark, warehouse, config.scenario, date_from)
            replayed = _replay(events.where(~handover), states, config, date_from, date_to, group_pass)
            replayed.write.partitionBy("_table").parquet(f"{run_dir}/replayed")
            output = spark.read.schema(replayed.schema).parquet(f"{run_dir}/replayed")
            if group_pass is not None:  # the run's own scenario here; the pass's other scenarios below
                passed, output = output, output.where(F.col("scenario") == config.scenario)
            table_rows = {r["_table"]: r["count"] for r in output.groupBy("_table").count().collect()}
        table_rows["events"] = sum(a.replayed for a in accounting.values())
        table_rows["quarantine"] = sum(a.quarantined for a in accounting.values())
        table_rows["run_accounting"] = len(accounting)

        def record(status: str, finished_at: dt.datetime | None):
            details = {
                "input_format": fmt,
                "writer": warehouse.writer,
                "scenarios": ",".join(self.scenarios),
                **{f"input_{k}": str(v) for k, v in uncounted.items()},
            }
            return _accounting_table(
                spark,
                accounting,
                run_id,
                config.scenario,
                self.started_at,
                path,
                details,
                status,
                finished_at,
            )

        from jobs.run_state import STATUS_FINISHED, STATUS_WRITING

        writes = {"date_from": date_from, "date_to": date_to, "run_id": run_id}
        # The record saying 'writing' is the first commit, the one saying 'finished' the last: a run
        # that stops in between is seen, and completed, by the next (jobs.run_state).
        # per group (the core's), then what no single group shows (coordinator moves and placement)
        per_group = (*REPLAY_TABLES, *EXPLAIN_TABLES, "group_state")
        across = _across_groups(spark, output, events.where(handover), config, date_to)
        frames = [
            ("run_accounting", record(STATUS_WRITING, None)),
            ("events", _events_table(events, config.scenario)),
            ("quarantine", _quarantine_table(validated, config.scenario, date_to)),
            *[(t, across[t] if t in across else _output_table(output, t)) for t in per_group],
            *[(table, frame) for table, frame in across.items() if table not in per_group],
        ]
        write_tables(spark, warehouse, frames, scenario=config.scenario, progress=step.note, **writes)
        for scenario in group_pass.scenarios if group_pass is not None else ():
            rows = passed.where(F.col("scenario") == scenario)
            frames = {table: _output_table(rows, table) for table in group_pass.tables}
            write_tables(spark, warehouse, frames, scenario=scenario,
                         progress=lambda title, s=scenario: step.note(f"{title} ({s})"), **writes)  # fmt: skip
        finished = [("run_accounting", record(STATUS_FINISHED, dt.datetime.now(dt.UTC)))]
        write_tables(
            spark, warehouse, finished, scenario=config.scenario, progress=_finishing(step), **writes
        )
        with step("summarising"):
            summary = _summary(output)
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
            summary,
            not_group_lines=uncounted.get("skipped", 0),
        )


def _finishing(step):
    """The progress of the last commit, shown as one step."""

    def note(title: str) -> None:
        if title.startswith("writing"):
            step.note("recording the run as finished")

    return note


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
    today = dt.datetime.now(dt.UTC).date()
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
    from rebalance_core.replay import EVENT_TYPE_RANK, UNKNOWN_RANK
    from rebalance_core.replay_common import ReplaySettings
    from schemas.events import EVENT_COLUMNS

    names = [c.name for c in EVENT_COLUMNS]
    events = _with_member_clocks_aligned(events, config.replay.clock_skew_ms)
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
        consumer_heartbeat_interval_ms=config.replay.consumer_heartbeat_interval_ms,
        max_poll_interval_ms=config.replay.max_poll_interval_ms,
        clock_skew_ms=config.replay.clock_skew_ms,
        incidents=config.incidents,
        run_end_ms=day_end_ms(date_to),
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


def _with_member_clocks_aligned(events, skew_ms: int):
    """`events` with the `ts` of each member log whose clock contradicts Kafka's request/response order
    against its group's coordinator log moved by the core's rule, as the core's replay does
    (rebalance_core.clock_alignment; rebalance_core.replay.events_by_group). The shifts come from a
    pre-pass over only the events the rule reads (a few per member and rebalance), grouped by group
    (jobs.replay_batches.clock_offsets): one row per shifted log, joined back by (group, log). The
    run's `events` table keeps the instants as read: it is the input, not the replay (docs/events.md)."""
    from pyspark.sql import functions as F

    from jobs.replay_batches import CLOCK_OFFSET_COLUMNS, clock_offsets
    from rebalance_core.clock_alignment import COORDINATOR_EVENT_TYPES, FIELDS_READ, MEMBER_EVENT_TYPES
    from schemas.events import Side
    from schemas.fields import spark_schema

    coordinator = F.col("side").eqNullSafe(Side.COORDINATOR.value)
    read = (coordinator & F.col("event_type").isin(*COORDINATOR_EVENT_TYPES)) | (
        ~coordinator & F.col("event_type").isin(*MEMBER_EVENT_TYPES)
    )
    columns = [F.unix_millis("ts").alias("_ts_ms") if n == "ts" else F.col(n) for n in FIELDS_READ]

    def group_offsets(rows):  # a plain function: applyInPandas reads a partial's type hints in vain
        return clock_offsets(rows, skew_ms)

    offsets = (
        events.where(read)
        .select("cluster", "group_id", *columns)
        .groupBy("cluster", "group_id")
        .applyInPandas(group_offsets, spark_schema(CLOCK_OFFSET_COLUMNS))
    )
    # the core's clock_alignment.member_log: `file`, else `source` (an empty one counts as none)
    log = F.coalesce(F.nullif(F.col("file"), F.lit("")), F.nullif(F.col("source"), F.lit("")), F.lit(""))
    shifted = F.timestamp_millis(F.unix_millis("ts") - F.col("_clock_offset_ms"))
    return (
        events.withColumn("_log", F.when(~coordinator, log))  # a coordinator row joins no offset
        .join(F.broadcast(offsets), ["cluster", "group_id", "_log"], "left")
        .withColumn("ts", F.when(F.col("_clock_offset_ms").isNull(), F.col("ts")).otherwise(shifted))
        .drop("_log", "_clock_offset_ms")
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


def _across_groups(spark, output, handovers, config: JobConfig, date_to: dt.date) -> dict:
    """What no single group shows (rebalance_core.coordinator_moves.across_groups), from the groups'
    coordinator tenures (one row per group, broker and day: small, collected) and the brokers' partition
    hand-overs (`handovers`: the run's coordinator_elected / coordinator_resigned events, one per
    partition and broker restart: small): the hand-overs given to the groups of their partition, a
    broker losing many groups at once as one incident added to rebalance_incidents, Kafka's placement
    rule per group."""
    from pyspark.sql import functions as F

    from rebalance_core.coordinator_moves import across_groups, handover_from
    from rebalance_core.events import ms_to_datetime
    from schemas.fields import spark_schema
    from schemas.tables import COORDINATOR_PLACEMENT, GROUP_COORDINATORS, REBALANCE_INCIDENTS

    scenario = config.scenario
    # the flat output's instants are the core's epoch milliseconds (jobs.replay_batches)
    tenure_rows = output.where(F.col("_table") == "group_coordinators")
    tenures = [r.asDict() for r in tenure_rows.select(*[c.name for c in GROUP_COORDINATORS]).collect()]
    groups: dict = {}
    for r in (
        output.where(F.col("_table") == "group_daily_summary")
        .select("cluster", "group_id")
        .distinct()
        .collect()
    ):
        groups.setdefault(r["cluster"], set()).add(r["group_id"])
    columns = ("cluster", "source", "event_type", F.unix_millis("ts").alias("ts"), "attributes")
    found = [handover_from(*r) for r in handovers.select(*columns).collect()]
    last_ts = day_end_ms(date_to)
    tenures, moves, placement = across_groups(
        tenures,
        [h for h in found if h is not None],
        groups,
        config.replay.offsets_topic_partitions,
        last_ts,
        scenario,
        config.incidents,
    )
    for row in placement:
        row["offsets_partitions_logged"] = [str(p) for p in row["offsets_partitions_logged"]]
        row["event_date"] = date_to
    for rows, names in ((moves, ("started_at", "ended_at")), (tenures, ("from_ts", "to_ts"))):
        for row in rows:
            for name in names:
                row[name] = None if row[name] is None else ms_to_datetime(row[name])
    incidents = _output_table(output, "rebalance_incidents")
    return {
        "rebalance_incidents": incidents.unionByName(
            spark.createDataFrame(moves, spark_schema(REBALANCE_INCIDENTS))
        ),
        "group_coordinators": spark.createDataFrame(tenures, spark_schema(GROUP_COORDINATORS)),
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
        F.col("_raw_base64").alias("raw_base64"),
    )


def _accounting_table(
    spark, accounting, run_id, scenario, started_at, path, details: dict[str, str], status, finished_at
):
    from schemas.fields import spark_schema
    from schemas.tables import RUN_ACCOUNTING

    rows = [
        {
            "run_id": run_id,
            "scenario": scenario,
            "event_date": day,
            "started_at": started_at,
            # a path that is not UTF-8 cannot reach here (jobs.input.resolve_input refuses it)
            "input": path,
            **vars(counts),
            "details": details,
            "status": status,
            "finished_at": finished_at,
        }
        for day, counts in sorted(accounting.items())
    ]
    return spark.createDataFrame(rows, spark_schema(RUN_ACCOUNTING))


def _summary(output):
    """The run's summary (jobs.summary) from its own rows: small per group and episode, collected."""
    from jobs.summary import build_summary

    def rows(table: str) -> list[dict]:
        return [r.asDict() for r in _output_table(output, table).collect()]

    assigned = {
        (r["cluster"], r["group_id"])
        for r in _output_table(output, "assignments").select("cluster", "group_id").distinct().collect()
    }
    return build_summary(rows("group_daily_summary"), rows("rebalance_episodes"), assigned)


def _clean_staging(staging: str, warehouse, own_run_id: str) -> None:
    """Remove the staging folders of this warehouse's earlier runs (finished ones remove their own; a
    run that died leaves its). The caller holds the warehouse lock: no other run of it is alive."""
    root = staging.removeprefix("file://")
    if "://" in root or not os.path.isdir(root):
        return  # remote staging: not cleaned here (delete <staging>/<run id> folders of dead runs)
    for entry in os.scandir(root):
        if entry.name == own_run_id or not entry.is_dir():
            continue
        try:
            owner = Path(entry.path, _OWNER_FILE).read_text(encoding="utf-8")
        except OSError:
            owner = None
        if owner == warehouse.location or (owner is None and _default_staging(warehouse) == staging):
            shutil.rmtree(entry.path, ignore_errors=True)


_OWNER_FILE = "_warehouse"  # in a run's staging folder: the warehouse it writes (staging may be shared)


def _mark_run_dir(run_dir: str, warehouse) -> None:
    local = run_dir.removeprefix("file://")
    if "://" not in local:
        os.makedirs(local, exist_ok=True)
        with open(os.path.join(local, _OWNER_FILE), "w", encoding="utf-8") as owner:
            owner.write(warehouse.location)


def _default_staging(warehouse) -> str | None:
    return None if warehouse.metastore else f"{warehouse.location.rstrip('/')}/_staging"


def _staging_root(config: JobConfig, warehouse) -> str:
    if config.staging:
        return config.staging
    if warehouse.metastore:
        raise UsageError("a metastore warehouse needs a staging folder: set `staging:` in the config")
    return _default_staging(warehouse)


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
        self.notices: list[str] = []

    @contextmanager
    def __call__(self, title: str) -> Iterator[None]:
        from jobs import failures

        self.close()
        failures.current_step = title  # a failure names the step (jobs.failures)
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

    def notice(self, message: str) -> None:
        """Something the user must know about the warehouse: one line on stderr."""
        self.notices.append(message)
        if self.console is not None:
            print(f"rebalance-replay: {message}", file=sys.stderr, flush=True)


# ----------------------------------------------------------------------------------------- summary
def print_summary(console, result: RunResult, seconds: float) -> None:
    """The groups sorted by partition-unavailable time and the worst episodes (jobs.summary); then the
    accounting and what was written."""
    from jobs.summary import print_summary as print_groups

    dates = f"{result.date_from}" + (f" .. {result.date_to}" if result.date_to != result.date_from else "")
    console.print(f"Rebalances {dates} (scenario {result.scenario})")
    if result.summary is not None:
        print_groups(console, result.summary)
    total = result.total
    outside = total.skipped - result.not_group_lines
    why = [f"{result.not_group_lines} not about groups"] if result.not_group_lines else []
    why += [f"{outside} outside the run's dates"] if outside else []
    skipped = f" + skipped {total.skipped} ({', '.join(why)})" if total.skipped else ""
    console.print(
        f"read {total.read} = replayed {total.replayed} + quarantined {total.quarantined} "
        f"+ duplicates {total.duplicates}{skipped}"
    )
    written = ", ".join(f"{name} {result.table_rows.get(name, 0)}" for name in WRITTEN_TABLES)
    console.print(f"wrote {result.warehouse} ({result.writer}): {written}")
    console.print(f"run {result.run_id} in {seconds:.1f} s; input {result.input} ({result.input_format})")


if __name__ == "__main__":
    from jobs.cli import main as cli_main

    sys.exit(cli_main(["run", *sys.argv[1:]]))
