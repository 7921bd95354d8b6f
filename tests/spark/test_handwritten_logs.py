"""The Spark job on small hand-written event logs (tests/core/replay_scenarios: eager, cooperative in
two rounds, static restart, session timeout), one group each, plus rows the job must set aside:
expected tables written by hand (the instants and measures of docs/metrics.md), compared with chispa."""

from __future__ import annotations

import datetime as dt
import json

import pytest

from jobs.delta_io import open_warehouse, read_table
from tests.core import replay_scenarios as scenarios
from tests.core.replay_helpers import T0, ev
from tests.spark.helpers import assert_same_rows, run_job, utc, write_jsonl

pytestmark = pytest.mark.spark

DAY = dt.date(2023, 11, 14)  # T0 = 2023-11-14T22:13:20Z; every scenario stays within the day
GROUPS = {
    "eager": scenarios.eager_both_sides,
    "cooperative": scenarios.cooperative_two_rounds,
    "static": scenarios.static_restart,
    "timeout": scenarios.session_timeout_crash,
}


@pytest.fixture(scope="module")
def replayed(spark, tmp_path_factory):
    folder = tmp_path_factory.mktemp("handwritten")
    events = []
    for group, scenario in GROUPS.items():
        for e in scenario():
            e.group_id = group
            e.event_id = f"{group}-{e.event_id}"
            events.append(e)
    later = ev(6 * 86_400_000, "join_received", member_id="x", group_id="eager")  # 2023-11-20
    later.event_id = "outside-the-run"
    repeated = json.dumps(events[0].to_json_dict())
    bad = (
        '{"event_id": "cut", "ts": "2023-11-14T23:00:00Z", "clus',  # not JSON
        json.dumps({**events[1].to_json_dict(), "event_id": "odd", "event_type": "group_rebalanced"}),
        json.dumps(
            {k: v for k, v in events[2].to_json_dict().items() if k != "group_id"} | {"event_id": "nogroup"}
        ),
        json.dumps({**events[3].to_json_dict(), "event_id": "badts", "ts": "yesterday"}),
        repeated,
        json.dumps(later.to_json_dict()),
    )
    path = write_jsonl(folder / "events.jsonl", events, bad)
    result = run_job(
        spark, path, folder / "warehouse", dates__from=DAY.isoformat(), dates__to=DAY.isoformat()
    )
    return result, open_warehouse(spark, str(folder / "warehouse")), len(events)


def at(offset_ms: int | None):
    return None if offset_ms is None else utc(T0 + offset_ms)


def test_partition_movements(spark, replayed):
    _, warehouse, _ = replayed
    columns = "group_id topic partition from_member_id to_member_id stop_cause revoked_at assigned_at unavailable_ms moved wasted_revocation"
    expected = [
        # eager: every member stops at its first rebalance signal, starts at partitions_assigned
        ("eager", "t", 0, "c1", "c1", "revoked", at(2000), at(2605), 605, False, True),
        ("eager", "t", 1, "c1", "c1", "revoked", at(2000), at(2605), 605, False, True),
        ("eager", "t", 2, "c2", "c2", "revoked", at(2500), at(2607), 107, False, True),
        ("eager", "t", 3, "c2", "c3", "revoked", at(2500), at(2609), 109, True, False),
        # cooperative: only the two partitions that change owner stop (round 1), and start in round 2
        ("cooperative", "t", 2, "c1", "c2", "revoked", at(1605), at(1703), 98, True, False),
        ("cooperative", "t", 3, "c1", "c2", "revoked", at(1605), at(1703), 98, True, False),
        # static restart: idle from the new process's JoinGroup to its partitions_assigned, no rebalance
        ("static", "t", 0, "i1-A", "i1-B", "member_failed", at(5000), at(5004), 4, False, False),
        # session timeout (10 s): the crashed member stopped at its last heartbeat, 10 s before removal
        ("timeout", "t", 0, "c1", "c1", "revoked", at(20001), at(20501), 500, False, True),
        ("timeout", "t", 1, "c2", "c1", "member_failed", at(10000), at(20501), 10501, True, False),
    ]
    actual = read_table(spark, warehouse, "partition_movements").select(*columns.split())
    assert_same_rows(actual, spark.createDataFrame(expected, actual.schema))


def test_rebalance_episodes(spark, replayed):
    _, warehouse, _ = replayed
    columns = (
        "group_id rounds first_generation_id last_generation_id started_at stabilized_at rebalance_ms stw_ms "
        "partition_unavailable_ms partitions_moved partitions_revoked revocations_wasted rebalance_protocol"
    )
    expected = [
        ("eager", 1, 2, 2, at(1001), at(2603), 1602, 105, 605 * 2 + 107 + 109, 1, 4, 3, "eager"),
        ("cooperative", 2, 2, 3, at(1001), at(1703), 702, 0, 98 * 2, 2, 2, 0, "cooperative"),
        ("static", 1, 1, 1, at(1), at(11), 10, 0, 0, 0, 0, 0, "eager"),
        ("timeout", 1, 1, 1, at(1), at(3001), 3000, 0, 0, 0, 0, 0, "eager"),
        ("timeout", 1, 2, 2, at(20001), at(20501), 500, 500, 500 + 10501, 1, 1, 1, "eager"),
    ]
    actual = read_table(spark, warehouse, "rebalance_episodes").select(*columns.split())
    assert_same_rows(actual, spark.createDataFrame(expected, actual.schema))


def test_group_daily_summary(spark, replayed):
    _, warehouse, _ = replayed
    columns = "group_id event_date rebalances generations stw_ms partition_unavailable_ms partitions_moved events anomalies"
    expected = [
        ("eager", DAY, 1, 1, 105, 1426, 1, 23, 0),
        ("cooperative", DAY, 1, 2, 0, 196, 2, 23, 0),
        ("static", DAY, 1, 1, 0, 4, 0, 10, 0),
        ("timeout", DAY, 2, 2, 500, 11001, 1, 9, 0),
    ]
    actual = read_table(spark, warehouse, "group_daily_summary").select(*columns.split())
    assert_same_rows(actual, spark.createDataFrame(expected, actual.schema))


def test_accounting_read_equals_replayed_plus_quarantined_plus_duplicates(spark, replayed):
    result, warehouse, event_count = replayed
    (row,) = read_table(spark, warehouse, "run_accounting").collect()
    counts = (row.read, row.replayed, row.quarantined, row.duplicates, row.skipped)
    assert counts == (event_count + 6, event_count, 4, 1, 1)
    assert row.read == row.replayed + row.quarantined + row.duplicates + row.skipped
    assert (row.run_id, row.event_date, row.scenario) == (result.run_id, DAY, "actual")
    assert read_table(spark, warehouse, "events").count() == event_count


def test_quarantine_says_why(spark, replayed):
    _, warehouse, _ = replayed
    actual = read_table(spark, warehouse, "quarantine").select("cluster", "group_id", "event_date", "reason")
    expected = [
        ("unknown", None, DAY, "malformed JSON (not an object, or a value of the wrong type)"),
        ("k", "eager", DAY, "unknown event_type: group_rebalanced"),
        ("k", None, DAY, "missing required field(s): group_id"),
        ("k", "eager", DAY, "unparseable ts: yesterday"),
    ]
    assert_same_rows(actual, spark.createDataFrame(expected, actual.schema))
