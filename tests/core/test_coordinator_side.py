"""The coordinator's side: Kafka's placement rule checked against the logged `__consumer_offsets`
partitions, which broker coordinated each group when, and moves of many groups at once."""

from __future__ import annotations

import pytest

from rebalance_core.coordinator_moves import CoordinatorTracker, move_incidents
from rebalance_core.coordinator_placement import check_placement, infer_partition_count
from rebalance_core.explain import replay_explained
from rebalance_core.java_hash import java_int, java_string_hash
from rebalance_core.kafka_logs.writer import partition_for
from tests.core.replay_helpers import T0, ev
from tests.logs.kafka_log_fixtures import REAL, parse_fixture


@pytest.mark.parametrize(
    ("group_id", "partitions", "expected"),
    [
        ("avro-consumer2", 50, 33),  # real 3.8 broker log
        ("testtopic-app", 50, 31),  # real 3.0 broker log; negative hashCode: Utils.abs, not & 0x7fffffff
        ("", 50, 0),
    ],
)
def test_partition_for_is_kafkas_utils_abs_of_the_hash_code_mod_the_partition_count(
    group_id, partitions, expected
):
    assert partition_for(group_id, partitions) == expected


def test_a_hash_code_of_integer_min_value_maps_to_partition_zero():
    # Utils.abs(Integer.MIN_VALUE) == 0; "polygenelubricants" is the classic String with that hashCode
    assert java_int(java_string_hash("polygenelubricants")) == -(1 << 31)
    assert partition_for("polygenelubricants", 50) == 0


def test_the_real_broker_logs_agree_with_the_placement_rule_and_kafkas_default_of_50():
    observed = []
    for name in ("04_broker_3.0_expiry_dead_recreate.log", "05_broker_3.8_classic_join_leave.log"):
        for e in parse_fixture(REAL / name).events:
            if "offsets_partition" in e.attributes:
                observed.append((e.group_id, int(e.attributes["offsets_partition"])))
    count, rows = check_placement(observed, configured=50)
    assert (count.count, count.source) == (50, "configured")
    assert {r["group_id"]: (r["offsets_partitions_logged"], r["agrees"]) for r in rows} == {
        "avro-consumer2": ([33], True),
        "testtopic-app": ([31], True),
    }


def test_the_partition_count_is_inferred_as_the_smallest_consistent_with_every_group():
    groups = [f"group-{i}" for i in range(40)]
    observed = {g: partition_for(g, 50) for g in groups}
    inferred = infer_partition_count(observed)
    assert inferred.source == "inferred"
    assert all(partition_for(g, inferred.count) == p for g, p in observed.items())
    assert not any(
        all(partition_for(g, n) == p for g, p in observed.items())
        for n in range(max(observed.values()) + 1, inferred.count)
    )


def test_groups_that_disagree_with_the_inferred_count_are_flagged():
    groups = [f"group-{i}" for i in range(30)]
    observed = [(g, partition_for(g, 50)) for g in groups]
    wrong = ("intruder", (partition_for("intruder", 50) + 1) % 50)
    count, rows = check_placement([*observed, wrong])
    assert (count.count, count.source) == (50, "best_fit")
    flagged = [r["group_id"] for r in rows if r["agrees"] is False]
    assert flagged == ["intruder"]


def test_a_group_logged_in_two_offsets_partitions_is_flagged():
    _, rows = check_placement([("g", 3), ("g", 4)], configured=50)
    assert rows[0]["agrees"] is False
    assert "2 partitions" in rows[0]["detail"]


def test_no_observation_leaves_the_partition_count_unknown():
    count, rows = check_placement([])
    assert (count.count, count.source, rows) == (None, "unknown", [])


# ------------------------------------------------------------------------------------- tenures
def _tenures(events):
    tracker = CoordinatorTracker({"cluster": "k", "group_id": "g", "scenario": "actual"})
    for e in events:
        tracker.observe(e)
    return tracker.finish()


def test_a_broker_restart_hands_the_group_over_unload_then_load():
    rows = _tenures(
        [
            ev(
                0,
                "assignment_received",
                generation_id=3,
                source="broker-1",
                attributes={"offsets_partition": 12},
            ),
            ev(1_000, "group_unloaded", generation_id=3, source="broker-1"),
            ev(1_500, "group_loaded", generation_id=3, source="broker-2"),
            ev(9_000, "rebalance_prepared", generation_id=3, source="broker-2"),
        ]
    )
    assert [(r["broker"], r["from_ts"], r["to_ts"], r["started_by"], r["ended_by"]) for r in rows] == [
        ("1", None, T0 + 1_000, "first_seen", "group_unloaded"),
        ("2", T0 + 1_500, None, "group_loaded", None),
    ]
    assert rows[0]["offsets_partition"] == 12


def test_a_member_sees_the_coordinator_move_and_rediscover():
    rows = _tenures(
        [
            ev(0, "coordinator_discovered", attributes={"coordinator_id": "1"}),
            ev(5_000, "coordinator_unavailable", attributes={"coordinator_id": "1"}),
            ev(5_200, "coordinator_discovered", attributes={"coordinator_id": "3"}),
        ]
    )
    assert [(r["broker"], r["ended_by"], r["seen_by"]) for r in rows] == [
        ("1", "coordinator_unavailable", "member"),
        ("3", None, "member"),
    ]


def test_a_broker_losing_many_groups_at_once_is_one_incident():
    events = []
    for i in range(12):
        group = f"g{i}"
        events += [
            ev(0, "assignment_received", group_id=group, generation_id=1, source="broker-1"),
            ev(60_000 + i * 100, "group_unloaded", group_id=group, generation_id=1, source="broker-1"),
            ev(61_000 + i * 100, "group_loaded", group_id=group, generation_id=1, source="broker-2"),
        ]
    # another broker losing a single group later is not part of it
    events += [
        ev(0, "assignment_received", group_id="lone", generation_id=1, source="broker-3"),
        ev(600_000, "group_unloaded", group_id="lone", generation_id=1, source="broker-3"),
    ]
    out = replay_explained(events)
    (incident,) = move_incidents(out["group_coordinators"])
    assert incident["kind"] == "coordinator_move"
    assert incident["group_id"] is None
    assert incident["groups"] == sorted(f"g{i}" for i in range(12))
    assert incident["started_at"] == T0 + 60_000
    assert "broker 1" in incident["detail"]


DAY = 86_400_000


def test_a_tenure_is_one_row_per_day_and_nightly_runs_write_each_day_once():
    key = {"cluster": "k", "group_id": "g", "scenario": "actual"}
    day1 = [ev(0, "assignment_received", generation_id=1, source="broker-1")]
    day2 = [
        ev(DAY, "rebalance_prepared", generation_id=1, source="broker-1"),
        ev(DAY + 5, "group_unloaded", generation_id=1, source="broker-1"),
    ]
    whole = CoordinatorTracker(key)
    for e in day1 + day2:
        whole.observe(e)
    expected = whole.finish()
    first = CoordinatorTracker(key)
    for e in day1:
        first.observe(e)
    nightly = first.finish(final=False)
    second = CoordinatorTracker(key, first.snapshot())
    for e in day2:
        second.observe(e)
    nightly += second.finish()
    assert nightly == expected
    assert [(r["to_ts"], r["ended_by"]) for r in expected] == [(None, None), (T0 + DAY + 5, "group_unloaded")]
    assert expected[0]["event_date"] != expected[1]["event_date"]
