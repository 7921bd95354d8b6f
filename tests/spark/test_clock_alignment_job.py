"""A member's log whose clock runs ahead of the broker's, through the Spark job: the job aligns it by the
core's rule (rebalance_core.clock_alignment, computed per group in a pre-pass) and writes the core's
episodes and generations; its `events` table keeps the instants as read."""

from __future__ import annotations

import pytest
from pyspark.sql import functions as F

from jobs.delta_io import open_warehouse, read_table
from rebalance_core.clock_alignment import member_log_offsets
from rebalance_core.explain import EXPLAIN_TABLES, replay_explained
from rebalance_core.kafka_logs import parse_lines
from rebalance_core.replay_common import ReplaySettings
from schemas.tables import REPLAY_TABLES
from tests.core.test_replay_clock_skew import _ahead, _logs
from tests.spark.helpers import assert_same_rows, core_frame, run_job, write_jsonl

pytestmark = pytest.mark.spark


def _events(files: dict[str, list[str]], cluster: str):
    events = []
    for name, lines in sorted(files.items()):
        parsed = parse_lines(lines, file=name, cluster=cluster)
        assert not parsed.quarantine
        events += parsed.events
    return events


def test_a_member_log_whose_clock_runs_ahead_gives_the_cores_episodes_through_the_job(spark, tmp_path):
    """Cluster k: c2's host 80 ms ahead of the broker's (tests/core/test_replay_clock_skew.py); cluster
    k2: the same group with synchronized clocks, which needs no shift."""
    files = _logs()
    skewed = _events({**files, "c2.log": _ahead(files["c2.log"], 80)}, "k")
    events = skewed + _events({f"synchronized-{name}": lines for name, lines in files.items()}, "k2")
    assert member_log_offsets(skewed, ReplaySettings().clock_skew_ms).get("c2.log", 0) > 0
    run_job(spark, write_jsonl(tmp_path / "events.jsonl", events), tmp_path / "warehouse")
    warehouse = open_warehouse(spark, str(tmp_path / "warehouse"))
    expected = replay_explained(events, ReplaySettings())
    for table in (*REPLAY_TABLES, *EXPLAIN_TABLES):
        assert_same_rows(read_table(spark, warehouse, table), core_frame(spark, table, expected[table]))
    written = read_table(spark, warehouse, "events").select("cluster", "file", "line", F.unix_millis("ts"))
    assert {(c, f, n): ts for c, f, n, ts in written.collect()} == {
        (e.cluster, e.file, e.line): e.ts for e in events
    }
