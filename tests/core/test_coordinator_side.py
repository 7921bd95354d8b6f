"""The coordinator's side: Kafka's placement rule checked against the logged `__consumer_offsets`
partitions, which broker coordinated each group when, and moves of many groups at once."""

from __future__ import annotations

import pytest

from rebalance_core.coordinator_moves import (
    CoordinatorTracker,
    PartitionHandover,
    across_groups,
    handover_of,
    move_incidents,
)
from rebalance_core.coordinator_placement import check_placement, infer_partition_count
from rebalance_core.explain import replay_explained
from rebalance_core.java_hash import java_int, java_string_hash
from rebalance_core.kafka_logs.parser import parse_lines
from rebalance_core.kafka_logs.writer_lines import partition_for
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


# ---------------------------------------------------------------- the brokers' partition hand-overs
# A 3.x broker restart: broker 2 resigns the __consumer_offsets partitions of three groups (orders: 31,
# payments: 13, audit: 5 of 50), broker 1 is elected for them. Only orders logs its unload and load;
# payments is next seen on broker 1; audit only has a member's log (no line of its own on any broker).
RESTART_LOG = """\
[2024-11-08 09:59:00,000] INFO [GroupCoordinator 2]: Stabilized group orders generation 4 (__consumer_offsets-31) with 2 members (kafka.coordinator.group.GroupCoordinator)
[2024-11-08 09:59:10,000] INFO [GroupCoordinator 2]: Stabilized group payments generation 7 (__consumer_offsets-13) with 1 members (kafka.coordinator.group.GroupCoordinator)
[2024-11-08 10:00:00,100] INFO [GroupCoordinator 2]: Resigned as the group coordinator for partition 13 in epoch OptionalInt[4] (kafka.coordinator.group.GroupCoordinator)
[2024-11-08 10:00:00,110] INFO [GroupCoordinator 2]: Resigned as the group coordinator for partition 5 in epoch OptionalInt[4] (kafka.coordinator.group.GroupCoordinator)
[2024-11-08 10:00:00,120] INFO [GroupCoordinator 2]: Resigned as the group coordinator for partition 31 in epoch OptionalInt[4] (kafka.coordinator.group.GroupCoordinator)
[2024-11-08 10:00:00,130] INFO [GroupCoordinator 2]: Unloading group metadata for orders with generation 4 (kafka.coordinator.group.GroupCoordinator)
[2024-11-08 10:00:00,900] INFO [GroupCoordinator 1]: Elected as the group coordinator for partition 31 in epoch 5 (kafka.coordinator.group.GroupCoordinator)
[2024-11-08 10:00:00,905] INFO [GroupMetadataManager brokerId=1] Scheduling loading of offsets and group metadata from __consumer_offsets-31 for epoch 5 (kafka.coordinator.group.GroupMetadataManager)
[2024-11-08 10:00:00,910] INFO [GroupCoordinator 1]: Elected as the group coordinator for partition 13 in epoch 5 (kafka.coordinator.group.GroupCoordinator)
[2024-11-08 10:00:00,920] INFO [GroupCoordinator 1]: Elected as the group coordinator for partition 5 in epoch 5 (kafka.coordinator.group.GroupCoordinator)
[2024-11-08 10:00:01,000] INFO [GroupCoordinator 1]: Loading group metadata for orders with generation 4 (kafka.coordinator.group.GroupCoordinator)
[2024-11-08 10:00:05,000] INFO [GroupCoordinator 1]: Preparing to rebalance group payments in state PreparingRebalance with old generation 7 (__consumer_offsets-13) (reason: Leader c1-1 re-joining group during Stable) (kafka.coordinator.group.GroupCoordinator)
"""
AUDIT_CLIENT_LOG = """\
[2024-11-08 09:30:00,000] INFO [Consumer clientId=audit-1, groupId=audit] Successfully joined group with generation Generation{generationId=2, memberId='audit-1-3a0c', protocol='range'} (org.apache.kafka.clients.consumer.internals.ConsumerCoordinator)
"""
_10H = 1731060000000  # 2024-11-08 10:00:00 UTC


def _restart(offsets_topic_partitions):
    events = [
        *parse_lines(RESTART_LOG.splitlines(), file="server.log", cluster="k").events,
        *parse_lines(AUDIT_CLIENT_LOG.splitlines(), file="audit.log", cluster="k").events,
    ]
    out = replay_explained(events)
    groups = {"k": {r["group_id"] for r in out["group_daily_summary"]}}
    handovers = [h for e in events if (h := handover_of(e)) is not None]
    return across_groups(
        out["group_coordinators"], handovers, groups, offsets_topic_partitions, _10H + 3_600_000
    )


def test_the_brokers_elected_and_resigned_lines_are_partition_hand_overs_of_no_group():
    events = parse_lines(RESTART_LOG.splitlines(), file="server.log", cluster="k").events
    handovers = [(h.broker, h.partition, h.elected) for e in events if (h := handover_of(e)) is not None]
    assert handovers == [
        ("2", 13, False),
        ("2", 5, False),
        ("2", 31, False),
        ("1", 31, True),
        ("1", 31, True),  # the loading line of the same election
        ("1", 13, True),
        ("1", 5, True),
    ]
    assert "__consumer_offsets-13" not in replay_explained(events)["group_daily_summary"]


@pytest.mark.parametrize("offsets_topic_partitions", [50, None])  # configured; inferred from orders, payments
def test_a_broker_restart_hands_over_every_group_of_its_partitions(offsets_topic_partitions):
    tenures, _, _ = _restart(offsets_topic_partitions)
    got = sorted(
        (r["group_id"], r["broker"], r["from_ts"], r["to_ts"], r["started_by"], r["ended_by"], r["seen_by"])
        for r in tenures
    )
    assert got == [
        # no line of its own: the partition's hand-over alone says who coordinated it
        ("audit", "1", _10H + 920, None, "elected", None, "partition"),
        ("audit", "2", None, _10H + 110, "first_seen", "resigned", "partition"),
        # its own unload line ends the tenure; the tenure on broker 1 begins at the election, not the load
        ("orders", "1", _10H + 900, None, "elected", None, "coordinator"),
        ("orders", "2", None, _10H + 130, "first_seen", "group_unloaded", "coordinator"),
        # without an unload line the resignation ends it (not the group's next line on broker 1)
        ("payments", "1", _10H + 910, None, "elected", None, "coordinator"),
        ("payments", "2", None, _10H + 100, "first_seen", "resigned", "coordinator"),
    ]


def test_a_broker_restart_moving_many_groups_is_one_coordinator_move_incident():
    _, incidents, placement = _restart(50)
    assert [(i["kind"], i["groups"], i["partitions"], i["started_at"], i["ended_at"]) for i in incidents] == [
        (
            "coordinator_move",
            ["audit", "orders", "payments"],
            ["__consumer_offsets-13", "__consumer_offsets-31", "__consumer_offsets-5"],
            _10H + 100,
            _10H + 130,
        )
    ]
    assert {(r["group_id"], r["agrees"]) for r in placement} == {("orders", True), ("payments", True)}


def test_a_hand_over_without_a_known_partition_count_is_not_guessed():
    tenures, _, _ = across_groups(
        [], [PartitionHandover("k", "2", 5, _10H, elected=False)], {"k": {"audit"}}, None, _10H
    )
    assert tenures == []
