"""`rebalance-replay whatif` on Spark: the simulated sample workload (six groups, eager, cooperative,
static, KIP-848, a rebalance across midnight) with small Arrow batches, so that groups span batches. The
scenario rows and the comparison equal the pure core's (`rebalance_core.whatif.whatif`); the as-actual
scenario reproduces the actual night; a rerun replaces its rows; the report is written."""

from __future__ import annotations

import datetime as dt

import pytest

from jobs.config import load_config
from jobs.delta_io import open_warehouse, read_table
from jobs.report import write_report
from jobs.sample_data.generate import simulated_events
from jobs.whatif import run
from rebalance_core.events import ms_to_datetime
from rebalance_core.explain import replayer_columns
from rebalance_core.replay_common import ReplaySettings
from rebalance_core.whatif import Scenario, WhatIfConfig, whatif
from rebalance_core.whatif.compare import within_tolerance
from schemas.tables import COMPARED_MEASURES
from tests.spark.helpers import assert_same_rows, core_frame, write_jsonl

pytestmark = pytest.mark.spark

CONFIG = WhatIfConfig((Scenario("as-actual"), Scenario("coop", assignor="cooperative-sticky")))
DAY1, DAY2 = dt.date(2024, 11, 8), dt.date(2024, 11, 9)


@pytest.fixture(scope="module")
def workload(tmp_path_factory):
    folder = tmp_path_factory.mktemp("whatif")
    events = simulated_events()
    return events, write_jsonl(folder / "events.jsonl", events), folder


def job_config(path, warehouse):
    overrides = {
        "input.path": str(path),
        "warehouse": str(warehouse),
        "spark.arrow_max_records_per_batch": 16,
        "spark.shuffle_partitions": 2,
    }
    return load_config(None, overrides)


@pytest.fixture(scope="module")
def ran(spark, workload):
    _, path, folder = workload
    config = job_config(path, folder / "wh")
    return config, run(spark, config, CONFIG), open_warehouse(spark, str(folder / "wh"))


def in_run_dates(rows):
    return [r for r in rows if DAY1 <= r["event_date"] <= DAY2]


@pytest.mark.parametrize(
    "table", ["whatif_comparison", "group_daily_summary", "generations", "partition_movements"]
)
def test_spark_rows_equal_the_pure_core(spark, workload, ran, table):
    events, _, _ = workload
    _, _, warehouse = ran
    expected = in_run_dates(whatif(events, CONFIG, ReplaySettings())[table])
    assert {r["scenario"] for r in expected} >= {"as-actual", "coop"}
    # the run's 'actual' rows also carry rebalance_core.explain's columns, the what-if scenarios' do not
    columns = replayer_columns(table)
    assert_same_rows(
        read_table(spark, warehouse, table).select(*columns),
        core_frame(spark, table, expected).select(*columns),
    )


def test_as_actual_reproduces_the_actual_night(spark, ran):
    _, _, warehouse = ran
    rows = read_table(spark, warehouse, "whatif_comparison").where("scenario = 'as-actual'").collect()
    assert len({(r["cluster"], r["group_id"]) for r in rows}) == 6
    # counts exactly, times within the model check's tolerance (issue 12): the simulator picks a leader that
    # left by the coordinator's HashMap order of member ids, and the as-actual timeline's member ids are not
    # the night's, so the steps that depend on who leads may shift by a few milliseconds
    assert {r["model_check"] for r in rows} == {"passed"}
    assert all(
        within_tolerance(name, r[f"{name}_actual"], r[f"{name}_scenario"])
        for r in rows
        for name, _kind in COMPARED_MEASURES
    )


def test_a_rerun_replaces_each_scenarios_rows(spark, workload, ran):
    config, _, warehouse = ran
    before = {t: read_table(spark, warehouse, t).count() for t in ("whatif_comparison", "generations")}
    run(spark, config, CONFIG)
    assert {t: read_table(spark, warehouse, t).count() for t in before} == before


def test_the_report_shows_every_group_with_pictures(ran, tmp_path):
    _, result, _ = ran
    report = result.report
    assert len(report.groups) == 6 and report.scenarios == ("as-actual", "coop")
    eager = next(g for g in report.groups if g.group_id == "clicks")  # roundrobin
    assert eager.totals["actual"]["stw_ms"] > 0 and eager.totals["coop"]["stw_ms"] == 0
    assert eager.best == "coop" and set(eager.ownership) == {"actual", "coop"}
    # as-actual changes nothing: never the best; a group no scenario improves has none
    assert all(g.best != "as-actual" for g in report.groups)
    assert next(g for g in report.groups if g.group_id == "audit").best is None
    page = write_report(tmp_path, report)
    assert page.read_text().count("<h2>") == 6 and len(list(page.parent.glob("*.png"))) == 6
    assert ms_to_datetime(min(s.start for s in eager.ownership["actual"])).date() in (DAY1, DAY2)
