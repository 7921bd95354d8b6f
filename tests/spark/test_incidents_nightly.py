"""Incidents carried across nightly runs: a storm and a rolling restart spanning midnight, replayed one
date at a time (`replay.final: false`, the group's state carried in group_state), are the same rows as
one run over both dates."""

from __future__ import annotations

import datetime as dt

import pytest

from jobs.delta_io import open_warehouse, read_table
from tests.core.test_incidents import _rolling_restart_and_storm_across_midnight
from tests.spark.helpers import run_job, write_jsonl

pytestmark = pytest.mark.spark

DATES = [dt.date(2023, 11, 14), dt.date(2023, 11, 15)]


def _incidents(spark, warehouse):
    rows = read_table(spark, open_warehouse(spark, str(warehouse)), "rebalance_incidents").collect()
    return sorted((r.kind, r.event_date, r.started_at, r.ended_at, r.episodes, r.members) for r in rows)


def test_a_storm_and_a_rolling_restart_across_midnight_are_not_cut_by_nightly_runs(spark, tmp_path):
    events = write_jsonl(tmp_path / "events.jsonl", _rolling_restart_and_storm_across_midnight())
    run_job(
        spark, events, tmp_path / "at_once", dates__from=DATES[0], dates__to=DATES[1], replay__final=False
    )
    for date in DATES:
        run_job(spark, events, tmp_path / "nightly", dates__from=date, dates__to=date, replay__final=False)
    at_once = _incidents(spark, tmp_path / "at_once")
    assert [kind for kind, *_ in at_once] == ["rebalance_storm", "rolling_restart"]
    assert _incidents(spark, tmp_path / "nightly") == at_once
