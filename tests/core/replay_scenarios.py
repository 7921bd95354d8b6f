"""Hand-written event logs (times in ms after T0), shared by the replay scenario and property tests.
The real-log ones are written by hand from /work/shared/kafka-logs/real/ (EXPECTED.md)."""

from __future__ import annotations

from tests.core.replay_helpers import ev

COOP = "cooperative-sticky"


def eager_both_sides():
    """docs/events.md: c3 joins a Stable range group of c1, c2 at generation 1; both sides logged."""
    a2 = {"c1": "t-0 t-1", "c2": "t-2", "c3": "t-3"}
    return [
        ev(0, "partitions_assigned", member_id="c1", partitions="t-0 t-1"),
        ev(0, "partitions_assigned", member_id="c2", partitions="t-2 t-3"),
        ev(1000, "join_received", member_id="c3", attributes={"state": "Stable"}),
        ev(1001, "rebalance_prepared", generation_id=1, reason="Adding new member c3"),
        ev(2000, "heartbeat_rebalancing", member_id="c1", generation_id=1),
        ev(2000, "join_requested", member_id="c1", reason="group is already rebalancing"),
        ev(2001, "partitions_revoked", member_id="c1", partitions="t-0 t-1"),
        ev(2002, "join_sent", member_id="c1"),
        ev(2500, "heartbeat_rebalancing", member_id="c2", generation_id=1),
        ev(2501, "partitions_revoked", member_id="c2", partitions="t-2 t-3"),
        ev(2502, "join_sent", member_id="c2"),
        ev(
            2600, "join_completed", generation_id=2, leader_id="c1", members="c1 c2 c3", protocol_name="range"
        ),
        ev(2601, "join_response", generation_id=2, member_id="c1", protocol_name="range", leader_id="c1"),
        ev(2601, "join_response", generation_id=2, member_id="c2", protocol_name="range"),
        ev(2601, "join_response", generation_id=2, member_id="c3", protocol_name="range"),
        ev(2602, "assignment_computed", generation_id=2, member_id="c1", assignment=a2),
        ev(2603, "assignment_received", generation_id=2, leader_id="c1", assignment=a2),
        ev(2604, "sync_response", generation_id=2, member_id="c1", partitions="t-0 t-1"),
        ev(2605, "partitions_assigned", member_id="c1", partitions="t-0 t-1"),
        ev(2606, "sync_response", generation_id=2, member_id="c2", partitions="t-2"),
        ev(2607, "partitions_assigned", member_id="c2", partitions="t-2"),
        ev(2608, "sync_response", generation_id=2, member_id="c3", partitions="t-3"),
        ev(2609, "partitions_assigned", member_id="c3", partitions="t-3"),
    ]


def eager_broker_only():
    """Broker log with assignments (simulator-style): c1 alone, then c2 joins."""
    return [
        ev(0, "join_received", member_id="c1", attributes={"state": "Empty"}),
        ev(1, "rebalance_prepared", generation_id=0, reason="new c1"),
        ev(5, "join_completed", generation_id=1, leader_id="c1", members="c1", protocol_name="range"),
        ev(6, "assignment_received", generation_id=1, leader_id="c1", assignment={"c1": "t-0 t-1 t-2"}),
        ev(1000, "join_received", member_id="c2", attributes={"state": "Stable"}),
        ev(1001, "rebalance_prepared", generation_id=1, reason="new c2"),
        ev(1100, "join_completed", generation_id=2, leader_id="c1", members="c1 c2", protocol_name="range"),
        ev(
            1102,
            "assignment_received",
            generation_id=2,
            leader_id="c1",
            assignment={"c1": "t-0 t-1", "c2": "t-2"},
        ),
    ]


def cooperative_two_rounds():
    """c2 joins c1 (cooperative-sticky): round 1 withholds t-2, t-3; c1 revokes them and rejoins;
    round 2 gives them to c2. c1's log and the broker's; c2 has no log."""
    r1 = {"c1": "t-0 t-1", "c2": ""}
    r2 = {"c1": "t-0 t-1", "c2": "t-2 t-3"}
    return [
        ev(0, "partitions_assigned", member_id="c1", partitions="t-0 t-1 t-2 t-3"),
        ev(1000, "join_received", member_id="c2", attributes={"state": "Stable"}),
        ev(1001, "rebalance_prepared", generation_id=1, reason="Adding new member c2"),
        ev(1500, "heartbeat_rebalancing", member_id="c1", generation_id=1),
        ev(1500, "join_requested", member_id="c1", reason="group is already rebalancing"),
        ev(1501, "join_sent", member_id="c1"),
        ev(1600, "join_completed", generation_id=2, leader_id="c1", members="c1 c2", protocol_name=COOP),
        ev(1601, "join_response", generation_id=2, member_id="c1", protocol_name=COOP),
        ev(1602, "assignment_computed", generation_id=2, member_id="c1", assignment=r1),
        ev(1603, "assignment_received", generation_id=2, leader_id="c1", assignment=r1),
        ev(1604, "sync_response", generation_id=2, member_id="c1", partitions="t-0 t-1"),
        ev(1605, "partitions_revoked", member_id="c1", partitions="t-2 t-3"),
        ev(1606, "partitions_assigned", member_id="c1", partitions=""),
        ev(1607, "join_requested", member_id="c1", reason="need to revoke partitions and re-join"),
        ev(1608, "join_sent", member_id="c1"),
        ev(1609, "join_received", member_id="c1", attributes={"state": "Stable"}),
        ev(
            1610,
            "rebalance_prepared",
            generation_id=2,
            reason="Leader c1 re-joining group during Stable; client reason: need to revoke partitions and re-join",
        ),
        ev(1700, "join_completed", generation_id=3, leader_id="c1", members="c1 c2", protocol_name=COOP),
        ev(1701, "join_response", generation_id=3, member_id="c1", protocol_name=COOP),
        ev(1702, "assignment_computed", generation_id=3, member_id="c1", assignment=r2),
        ev(1703, "assignment_received", generation_id=3, leader_id="c1", assignment=r2),
        ev(1704, "sync_response", generation_id=3, member_id="c1", partitions="t-0 t-1"),
        ev(1705, "partitions_assigned", member_id="c1", partitions=""),
    ]


def session_timeout_crash():
    """Broker log with assignments: c2 crashes; removed at last heartbeat + 10 s; c1 takes t-1."""
    a1 = {"c1": "t-0", "c2": "t-1"}
    return [
        ev(0, "join_received", member_id="c1", attributes={"state": "Empty", "session_timeout_ms": 10000}),
        ev(0, "join_received", member_id="c2", attributes={"session_timeout_ms": 10000}),
        ev(1, "rebalance_prepared", generation_id=0),
        ev(3000, "join_completed", generation_id=1, leader_id="c1", members="c1 c2", protocol_name="range"),
        ev(3001, "assignment_received", generation_id=1, leader_id="c1", assignment=a1),
        ev(20000, "member_removed", member_id="c2", reason="session_timeout"),
        ev(20001, "rebalance_prepared", generation_id=1, reason="removing member c2 on heartbeat expiration"),
        ev(20500, "join_completed", generation_id=2, leader_id="c1", members="c1", protocol_name="range"),
        ev(20501, "assignment_received", generation_id=2, leader_id="c1", assignment={"c1": "t-0 t-1"}),
    ]


def static_restart():
    """Static member s1 (instance i1) restarts within the session timeout: no rebalance; the broker
    replaces its member id and the new process gets the old assignment back."""
    a1 = {"i1-A": "t-0", "i2-A": "t-1"}
    return [
        ev(0, "join_received", member_id="i1-A", group_instance_id="i1", attributes={"state": "Empty"}),
        ev(0, "join_received", member_id="i2-A", group_instance_id="i2"),
        ev(1, "rebalance_prepared", generation_id=0),
        ev(
            10,
            "join_completed",
            generation_id=1,
            leader_id="i1-A",
            members="i1-A i2-A",
            protocol_name="range",
        ),
        ev(11, "assignment_received", generation_id=1, leader_id="i1-A", assignment=a1),
        # the new i1 process (its log starts here)
        ev(5000, "join_sent", group_instance_id="i1", client_id="c-i1", source="host1"),
        ev(
            5001,
            "static_member_replaced",
            group_instance_id="i1",
            member_id="i1-B",
            attributes={"old_member_id": "i1-A"},
        ),
        ev(
            5002,
            "join_response",
            generation_id=1,
            member_id="i1-B",
            group_instance_id="i1",
            client_id="c-i1",
            source="host1",
        ),
        ev(5003, "sync_response", generation_id=1, member_id="i1-B", partitions="t-0", source="host1"),
        ev(5004, "partitions_assigned", member_id="i1-B", partitions="t-0", source="host1"),
    ]


def log_04_dead_then_generation_zero():
    """EXPECTED.md 04 (broker 3.0): expiry -> empty gen 2 -> Dead -> new member -> gen 1.
    T0-relative times: 13:08:11,616 = 0."""
    return [
        ev(0, "member_removed", member_id="m-0f9e", reason="session_timeout"),
        ev(3, "rebalance_prepared", generation_id=1, reason="removing member m-0f9e on heartbeat expiration"),
        ev(4, "group_empty", generation_id=2),
        ev(233_098, "group_dead", generation_id=2),
        ev(283_422, "join_received", member_id="m-7dfd", attributes={"state": "Empty"}),
        ev(
            283_425,
            "rebalance_prepared",
            generation_id=0,
            reason="Adding new member m-7dfd with group instance id None",
        ),
        ev(286_427, "join_completed", generation_id=1, member_count=1),
        ev(
            286_441,
            "assignment_received",
            generation_id=1,
            leader_id="m-7dfd",
            member_count=1,
            attributes={"static_member_count": 0},
        ),
    ]


def log_05_join_leave():
    """EXPECTED.md 05 (broker 3.8): gen 1 (one member), gen 2 (two), the second leaves -> gen 3.
    The 'has left' line comes after the Preparing line it caused. 10:02:05,208 = 0."""
    a, b = "p-0eec", "p-4be6"
    return [
        ev(0, "join_received", member_id=a, attributes={"state": "Empty"}),
        ev(
            18,
            "rebalance_prepared",
            generation_id=0,
            reason=f"Adding new member {a} with group instance id None",
        ),
        ev(21, "join_completed", generation_id=1, member_count=1),
        ev(
            27,
            "assignment_received",
            generation_id=1,
            leader_id=a,
            member_count=1,
            attributes={"static_member_count": 0},
        ),
        ev(24_991, "join_received", member_id=b, attributes={"state": "Stable"}),
        ev(
            24_995,
            "rebalance_prepared",
            generation_id=1,
            reason=f"Adding new member {b} with group instance id None",
        ),
        ev(27_075, "join_completed", generation_id=2, member_count=2),
        ev(
            27_082,
            "assignment_received",
            generation_id=2,
            leader_id=a,
            member_count=2,
            attributes={"static_member_count": 0},
        ),
        ev(
            2_400_884,
            "rebalance_prepared",
            generation_id=2,
            reason=f"Removing member {b} on LeaveGroup; client reason: the consumer is being closed",
        ),
        ev(
            2_400_897,
            "member_removed",
            member_id=b,
            reason="leave_group",
            attributes={"session_timeout_ms": 45000},
        ),
        ev(2_402_591, "join_completed", generation_id=3, member_count=1),
        ev(
            2_402_726,
            "assignment_received",
            generation_id=3,
            leader_id=a,
            member_count=1,
            attributes={"static_member_count": 0},
        ),
    ]


def log_09_client_eager():
    """EXPECTED.md 09: one eager client's log (the leader). 16:52:03.531 = 0; before it, the member
    consumed my-topic-0..2 (its records show it)."""
    me, other = "consumer-legacy-936f", "consumer-legacy-5485"
    return [
        ev(-3000, "partitions_assigned", member_id=me, partitions="my-topic-0 my-topic-1 my-topic-2"),
        ev(0, "join_requested", member_id=me, reason="group is already rebalancing"),
        ev(2, "partitions_revoked", member_id=me, partitions="my-topic-0 my-topic-1 my-topic-2"),
        ev(4, "join_sent", member_id=me),
        ev(8, "join_response", generation_id=2, member_id=me, protocol_name="range"),
        ev(
            9,
            "assignment_computed",
            generation_id=2,
            member_id=me,
            assignment={me: "my-topic-2", other: "my-topic-0 my-topic-1"},
        ),
        ev(11, "sync_response", generation_id=2, member_id=me, partitions="my-topic-2"),
        ev(11, "partitions_assigned", member_id=me, partitions="my-topic-2"),
    ]


def connect_two_rounds():
    """EXPECTED.md 12 (1): one Connect worker; round 1 revokes a connector and a task, round 2 follows
    at once. 13:56:48,982 = 0."""
    w = "connect-1-3b5b"
    return [
        ev(0, "join_requested", member_id=w, reason="Rebalance started"),
        ev(0, "join_sent", member_id=w),
        ev(4, "join_response", generation_id=4, member_id=w, protocol_name="sessioned", leader_id=w),
        ev(
            14,
            "sync_response",
            generation_id=4,
            member_id=w,
            attributes={"revoked": "http-sink,http-sink-0", "delay_ms": 0},
        ),
        ev(196, "join_requested", member_id=w, reason="Rebalance started"),
        ev(196, "join_sent", member_id=w),
        ev(201, "join_response", generation_id=5, member_id=w, protocol_name="sessioned", leader_id=w),
        ev(210, "sync_response", generation_id=5, member_id=w, attributes={"delay_ms": 0}),
    ]


def broker_only_no_assignments():
    """log 05's shape (counts only, no partitions): with topics configured, range is rerun (inferred)."""
    return [
        ev(0, "join_received", member_id="a", attributes={"state": "Empty"}, protocol_name="range"),
        ev(1, "rebalance_prepared", generation_id=0),
        ev(2, "join_completed", generation_id=1, member_count=1),
        ev(3, "assignment_received", generation_id=1, leader_id="a", member_count=1),
        ev(1000, "join_received", member_id="b", attributes={"state": "Stable"}),
        ev(1001, "rebalance_prepared", generation_id=1),
        ev(1100, "join_completed", generation_id=2, member_count=2, protocol_name="range"),
        ev(1101, "assignment_received", generation_id=2, leader_id="a", member_count=2),
    ]


def starts_mid_rebalance():
    """The log begins in CompletingRebalance: no Preparing line, no earlier generation."""
    return [
        ev(0, "join_completed", generation_id=7, leader_id="x", members="x y", protocol_name="range"),
        ev(2, "assignment_received", generation_id=7, leader_id="x", assignment={"x": "t-0", "y": "t-1"}),
        ev(5000, "member_removed", member_id="y", reason="leave_group"),
        ev(5001, "rebalance_prepared", generation_id=7, reason="Removing member y on LeaveGroup"),
        ev(5100, "join_completed", generation_id=8, leader_id="x", members="x", protocol_name="range"),
        ev(5101, "assignment_received", generation_id=8, leader_id="x", assignment={"x": "t-0 t-1"}),
    ]


ALL = {
    f.__name__: f
    for f in (
        eager_both_sides,
        eager_broker_only,
        cooperative_two_rounds,
        session_timeout_crash,
        static_restart,
        log_04_dead_then_generation_zero,
        log_05_join_leave,
        log_09_client_eager,
        connect_two_rounds,
        broker_only_no_assignments,
        starts_mid_rebalance,
    )
}
