"""The Spark job on a simulated multi-group workload (the packaged sample's simulated events: six
groups on two clusters, eager, cooperative, static, KIP-848, a rebalance across midnight): it agrees with the
pure-core replay; nightly runs (one date each, open rebalances carried in group_state) give the same
tables as one run over both days; reruns replace, never add; a run that dies leaves the tables as
they were; other scenarios' rows survive; the tables read the same through deltalake and Spark."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pyarrow as pa
import pytest
from deltalake import DeltaTable, write_deltalake

import jobs.delta_io
from jobs.delta_io import _delta_schema, open_warehouse, read_table, write_tables
from jobs.run_state import WRITTEN_TABLES
from jobs.sample_data.generate import simulated_events
from rebalance_core.events import ms_to_datetime
from rebalance_core.explain import EXPLAIN_TABLES, replay_explained
from rebalance_core.replay_common import ReplaySettings
from schemas.tables import REPLAY_TABLES
from tests.spark.helpers import assert_same_rows, core_frame, run_job, write_jsonl

pytestmark = pytest.mark.spark

DAY1, DAY2 = dt.date(2024, 11, 8), dt.date(2024, 11, 9)
COMPARED = (
    *REPLAY_TABLES,
    *EXPLAIN_TABLES,
)  # group_state holds snapshots (the core's internals), compared by use below


@pytest.fixture(scope="module")
def workload(tmp_path_factory):
    folder = tmp_path_factory.mktemp("simulated")
    events = simulated_events()
    assert {ms_to_datetime(e.ts).date() for e in events} == {DAY1, DAY2}
    return events, write_jsonl(folder / "events.jsonl", events), folder


@pytest.fixture(scope="module")
def whole(spark, workload):
    """One run over both days (final: open rebalances are closed at the end)."""
    events, path, folder = workload
    run_job(spark, path, folder / "whole")
    return open_warehouse(spark, str(folder / "whole"))


@pytest.fixture(scope="module")
def nightly(spark, workload):
    """Two nightly runs: DAY1 leaves open rebalances open (final false), DAY2 closes them."""
    _, path, folder = workload
    run_job(
        spark, path, folder / "nightly", dates__from="2024-11-08", dates__to="2024-11-08", replay__final=False
    )
    run_job(spark, path, folder / "nightly", dates__from="2024-11-09", dates__to="2024-11-09")
    return open_warehouse(spark, str(folder / "nightly"))


def test_spark_replay_agrees_with_the_pure_core(spark, workload, whole):
    events, _, _ = workload
    expected = replay_explained(events, ReplaySettings())  # the job's replay: with causes and incidents
    for table in COMPARED:
        assert_same_rows(read_table(spark, whole, table), core_frame(spark, table, expected[table]))


def test_nightly_runs_measure_a_rebalance_across_midnight_once(spark, whole, nightly):
    for table in COMPARED:
        assert_same_rows(read_table(spark, nightly, table), read_table(spark, whole, table))
    episodes = read_table(spark, nightly, "rebalance_episodes").where("group_id = 'orders'").collect()
    across = [e for e in episodes if e.started_at.date() == DAY1 and e.stabilized_at.date() == DAY2]
    assert len(across) == 1 and across[0].event_date == DAY2
    states = read_table(spark, nightly, "group_state").collect()
    assert {s.event_date for s in states} == {DAY1, DAY2}  # each night carries every group on


def test_rerun_replaces_its_date_and_keeps_other_scenarios(spark, workload, nightly):
    _, path, _ = workload
    before = {t: _rows(read_table(spark, nightly, t)) for t in ("generations", "events", "run_accounting")}
    versions = {t: DeltaTable(nightly.path(t)).version() for t in WRITTEN_TABLES}
    run_job(
        spark, path, nightly.location, dates__from="2024-11-09", dates__to="2024-11-09", scenario="what-if"
    )
    run_job(spark, path, nightly.location, dates__from="2024-11-09", dates__to="2024-11-09")
    for table, (schema, rows) in before.items():
        again = _rows(read_table(spark, nightly, table).where("scenario = 'actual'"))[1]
        assert_same_rows(spark.createDataFrame(again, schema), spark.createDataFrame(rows, schema))
    what_if = read_table(spark, nightly, "generations").where("scenario = 'what-if'")
    assert (
        what_if.count()
        == read_table(spark, nightly, "generations")
        .where(f"scenario = 'actual' AND event_date = '{DAY2}'")
        .count()
    )
    # one commit per run, and run_accounting two: the record saying 'writing', then 'finished'
    commits = {t: 4 if t == "run_accounting" else 2 for t in WRITTEN_TABLES}
    assert {t: DeltaTable(nightly.path(t)).version() - versions[t] for t in WRITTEN_TABLES} == commits


def test_a_run_that_dies_while_writing_leaves_every_table_as_it_was(spark, workload, nightly, monkeypatch):
    _, path, _ = workload
    versions = {t: DeltaTable(nightly.path(t)).version() for t in WRITTEN_TABLES}
    counts = {t: read_table(spark, nightly, t).count() for t in ("events", "generations")}
    stage = jobs.delta_io._stage

    def dies_at_the_fourth_table(spark_, warehouse, table, *args):
        if table == "assignments":
            raise KeyboardInterrupt("killed")
        return stage(spark_, warehouse, table, *args)

    monkeypatch.setattr(jobs.delta_io, "_stage", dies_at_the_fourth_table)
    with pytest.raises(KeyboardInterrupt):
        run_job(spark, path, nightly.location, dates__from="2024-11-09", dates__to="2024-11-09")
    assert {t: DeltaTable(nightly.path(t)).version() for t in WRITTEN_TABLES} == versions
    assert {t: read_table(spark, nightly, t).count() for t in counts} == counts
    assert not any((Path(nightly.path(t)) / jobs.delta_io.STAGING_FOLDER).exists() for t in WRITTEN_TABLES)


def test_tables_read_the_same_through_deltalake_and_spark(spark, nightly):
    for table in WRITTEN_TABLES:
        arrow = DeltaTable(nightly.path(table)).to_pyarrow_table()
        if arrow.num_rows == 0:  # PySpark cannot make a frame of an Arrow table without chunks
            assert read_table(spark, nightly, table).count() == 0, table
            continue
        assert_same_rows(read_table(spark, nightly, table), spark.createDataFrame(arrow))


def _rows(frame):
    """(schema, rows) without what differs from run to run (run_accounting's run id, start and end)."""
    frame = frame.drop("run_id", "started_at", "finished_at")
    return frame.schema, frame.collect()


def test_files_mixing_scenarios_keep_the_other_scenarios_rows(spark, tmp_path):
    """A file written by another tool may hold several scenarios: replacing one scenario rewrites the
    file's other rows in the same commit; a file of another scenario only is left as it is."""

    def rows(*pairs):
        counts = {"read": 1, "replayed": 1, "quarantined": 0, "duplicates": 0, "skipped": 0}
        return [
            {"run_id": run, "scenario": scenario, "event_date": DAY1, **counts} for run, scenario in pairs
        ]

    def arrow(*pairs):
        return pa.Table.from_pylist(rows(*pairs), schema=_delta_schema("run_accounting"))

    path = str(tmp_path / "wh" / "run_accounting")
    write_deltalake(path, arrow(("old", "actual"), ("old", "what-if")), partition_by=["event_date"])  # mixed
    write_deltalake(path, arrow(("other", "what-if")), mode="append")
    what_if_only = set(DeltaTable(path).file_uris()) - set(DeltaTable(path, version=0).file_uris())
    warehouse = open_warehouse(spark, str(tmp_path / "wh"))
    new = spark.createDataFrame(
        rows(("new", "actual")), read_table(spark, warehouse, "run_accounting").schema
    )
    write_tables(
        spark, warehouse, {"run_accounting": new}, date_from=DAY1, date_to=DAY1, scenario="actual", run_id="r"
    )
    after = sorted((r.run_id, r.scenario) for r in read_table(spark, warehouse, "run_accounting").collect())
    assert after == [("new", "actual"), ("old", "what-if"), ("other", "what-if")]
    assert what_if_only <= set(DeltaTable(path).file_uris())
