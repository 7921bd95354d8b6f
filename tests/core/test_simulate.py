"""The simulator's protocol rules one at a time (Kafka behaviour each test names), the timeline and
settings validation, and determinism."""

from __future__ import annotations

import pytest

from rebalance_core.simulate import (
    SimulationError,
    SimulationSettings,
    load_scenario,
    load_settings,
    simulate,
)
from rebalance_core.timeline import (
    Crash,
    Join,
    Leave,
    PartitionCount,
    Pause,
    Restart,
    Stall,
    Subscribe,
    Timeline,
    TimelineError,
    load_timeline,
    parse_duration,
)
from schemas.events import EventType, RemovalReason
from tests.core.sim_helpers import events_of, member_names, partitions

S = 1_000  # ms


def sim(*actions, topics=None, **settings):
    timeline = Timeline(topics=topics or {"t": 6}, actions=actions, group_id="g")
    result = simulate(timeline, SimulationSettings(**{"group_initial_rebalance_delay_ms": 0, **settings}))
    result.start = timeline.start_ms
    return result


def at(result, ms: int) -> int:
    return result.start + ms


def test_same_seed_same_events_other_seed_other_member_ids():
    actions = (Join(0, "c1"), Join(0, "c2"), Crash(30 * S, "c2"))
    first, again, other = sim(*actions, seed=3), sim(*actions, seed=3), sim(*actions, seed=4)
    assert first.events == again.events and first.truth == again.truth
    assert [e.event_type for e in first.events] == [e.event_type for e in other.events]
    assert set(member_names(first.events)).isdisjoint(member_names(other.events))


def test_new_dynamic_member_joins_twice_first_for_its_member_id():
    """KIP-394 (GroupCoordinator.doDynamicNewMemberJoinGroup, requireKnownMemberId): a JoinGroup without
    member id only creates a pending member and is answered MEMBER_ID_REQUIRED, which triggers nothing;
    the client (AbstractCoordinator.JoinGroupResponseHandler) logs "Request joining group due to: need
    to re-join with the given member-id: X" and joins again with X, which adds it and rebalances."""
    result = sim(Join(0, "c1"), Join(30 * S, "c2"))
    c2 = [
        e
        for e in result.events
        if e.ts >= at(result, 30 * S) and e.client_id == "c2" and e.event_type != "client_config"
    ][:5]
    assert [(e.side, e.event_type) for e in c2] == [
        ("member", "join_sent"),
        ("coordinator", "join_received"),
        ("member", "join_requested"),
        ("member", "join_sent"),
        ("coordinator", "join_received"),
    ]
    first_join, pending, request, second_join, joined = c2
    member_id = pending.member_id
    assert first_join.member_id is None and member_id.startswith("c2-")
    assert pending.attributes == {
        "state": "Stable",
        "pending": "true",
        "session_timeout_ms": "45000",
        "rebalance_timeout_ms": "300000",
    }
    assert request.member_id == member_id
    assert request.reason == f"need to re-join with the given member-id: {member_id}"
    assert second_join.member_id == joined.member_id == member_id and "pending" not in joined.attributes
    (prepared,) = [e for e in events_of(result.events, EventType.REBALANCE_PREPARED) if e.ts > pending.ts]
    assert prepared.ts == joined.ts and prepared.reason.startswith(f"Adding new member {member_id} ")
    assert events_of(result.events, EventType.JOIN_COMPLETED)[-1].member_count == 2


def test_pending_member_that_never_rejoins_expires_after_its_session_without_a_rebalance():
    """The process is gone before its second JoinGroup: GroupCoordinator.onExpireHeartbeat (isPending)
    "Pending member X in group G has been removed after session timeout expiration", no rebalance."""
    result = sim(Join(0, "c1"), Join(30 * S, "c2"), Crash(30 * S, "c2"), session_timeout_ms=10 * S)
    (pending,) = [e for e in events_of(result.events, EventType.JOIN_RECEIVED) if e.client_id == "c2"]
    (removed,) = events_of(result.events, EventType.MEMBER_REMOVED)
    assert (removed.member_id, removed.reason, removed.attributes["pending"]) == (
        pending.member_id,
        RemovalReason.SESSION_TIMEOUT.value,
        "true",
    )
    assert removed.ts == pending.ts + 10 * S
    assert not [e for e in events_of(result.events, EventType.REBALANCE_PREPARED) if e.ts > pending.ts]


def test_simulated_pending_join_reads_back_from_the_brokers_log_line_unchanged():
    """The broker's "Dynamic member with unknown member id joins group ... Created a new member id X and
    request the member to rejoin with this id" parses to the join_received the simulator emits."""
    from rebalance_core.kafka_logs import parse_lines
    from rebalance_core.kafka_logs.writer import KafkaLogWriter
    from rebalance_core.kafka_logs.writer_lines import BROKER

    result = sim(Join(0, "c1"), Join(30 * S, "c2"))
    pending = [e for e in result.events if e.attributes.get("pending")]
    lines = KafkaLogWriter(consumer_protocol=False).write_all(result.events)
    text = [line.text for line in lines if line.stream == BROKER]
    parsed = parse_lines(text, file="server.log", cluster="sim").events
    read = [e for e in parsed if e.attributes.get("pending")]
    assert [(e.ts, e.member_id, e.client_id, e.attributes["state"]) for e in read] == [
        (e.ts, e.member_id, e.client_id, e.attributes["state"]) for e in pending
    ]


def test_crash_is_noticed_one_session_timeout_after_the_last_heartbeat():
    result = sim(Join(0, "c1"), Join(0, "c2"), Crash(30 * S, "c2"), session_timeout_ms=10 * S)
    names = member_names(result.events)
    (removed,) = events_of(result.events, EventType.MEMBER_REMOVED)
    assert removed.reason == RemovalReason.SESSION_TIMEOUT.value and names[removed.member_id] == "c2"
    assert removed.ts == at(result, 40 * S)
    assert not events_of(result.events, EventType.LEAVE_SENT)
    (prepared,) = [e for e in events_of(result.events, EventType.REBALANCE_PREPARED) if e.ts == removed.ts]
    assert "on heartbeat expiration" in prepared.reason
    failed = [m for m in result.truth["partition_movements"] if m["stop_cause"] == "member_failed"]
    assert failed and {m["revoked_at"] for m in failed} == {at(result, 30 * S)}


def test_graceful_leave_revokes_then_sends_leave_group():
    result = sim(Join(0, "c1"), Join(0, "c2"), Leave(30 * S, "c2"))
    names = member_names(result.events)
    c2 = [e for e in result.events if e.ts >= at(result, 30 * S) and names.get(e.member_id) == "c2"]
    assert [e.event_type for e in c2] == ["partitions_revoked", "leave_sent", "member_removed"]
    assert c2[-1].reason == RemovalReason.LEAVE_GROUP.value


def test_static_member_leaving_for_good_sends_no_leave_group_and_is_removed_at_session_expiry():
    """AbstractCoordinator.maybeLeaveGroup sends LeaveGroup only `if (isDynamicMember() && ...)`: a
    static consumer's close() revokes (onLeavePrepare) and stays in the group until its session
    expires; only then does the coordinator rebalance, so its partitions wait a whole session."""
    result = sim(Join(0, "c1"), Join(0, "c2"), Leave(30 * S, "c2"), static_membership=True)
    names = member_names(result.events)
    assert not events_of(result.events, EventType.LEAVE_SENT)
    revoked = events_of(result.events, EventType.PARTITIONS_REVOKED)[0]
    assert names[revoked.member_id] == "c2" and revoked.ts == at(result, 30 * S)
    (removed,) = events_of(result.events, EventType.MEMBER_REMOVED)
    assert removed.reason == RemovalReason.SESSION_TIMEOUT.value and removed.member_id == revoked.member_id
    assert removed.ts == at(result, 30 * S + 45 * S)  # the default session.timeout.ms, 45 s
    (prepared,) = [e for e in events_of(result.events, EventType.REBALANCE_PREPARED) if e.ts > revoked.ts]
    assert prepared.ts == removed.ts and "on heartbeat expiration" in prepared.reason
    handed_over = [m for m in result.truth["partition_movements"] if m["revoked_at"] == revoked.ts]
    assert handed_over and {m["stop_cause"] for m in handed_over} == {"revoked"}
    assert all(m["unavailable_ms"] > 45 * S for m in handed_over)
    dynamic = sim(Join(0, "c1"), Join(0, "c2"), Leave(30 * S, "c2"))
    assert [e.reason for e in events_of(dynamic.events, EventType.MEMBER_REMOVED)] == ["leave_group"]


def test_close_during_a_rebalance_loses_the_partitions_instead_of_revoking_them():
    """ConsumerCoordinator.onLeavePrepare (2.6+): `generation == NO_GENERATION || rebalanceInProgress()`
    -> invokePartitionsLost. c1 (cooperative, still owning its partitions) waits in the join phase for
    c2's slow poll when it is closed: onPartitionsLost, then its LeaveGroup."""
    result = sim(
        Join(0, "c1"),
        Join(0, "c2"),
        Pause(30 * S, "c2", 20 * S, "poll"),
        Join(35 * S, "c3"),
        Leave(45 * S, "c1"),
        assignor="cooperative-sticky",
    )
    names = member_names(result.events)
    c1 = [e for e in result.events if e.ts == at(result, 45 * S) and names.get(e.member_id) == "c1"]
    assert [e.event_type for e in c1] == ["partitions_lost", "leave_sent"]
    assert not [
        e for e in events_of(result.events, EventType.PARTITIONS_REVOKED) if names[e.member_id] == "c1"
    ]
    stopped = [m for m in result.truth["partition_movements"] if m["revoked_at"] == at(result, 45 * S)]
    assert stopped and {m["stop_cause"] for m in stopped} == {"lost"}
    calm = sim(Join(0, "c1"), Join(0, "c2"), Leave(45 * S, "c1"), assignor="cooperative-sticky")
    assert events_of(calm.events, EventType.PARTITIONS_REVOKED) and not events_of(
        calm.events, EventType.PARTITIONS_LOST
    )


def test_static_member_closing_sends_no_leave_group_and_expires_after_its_session():
    result = sim(Join(0, "c1"), Join(0, "c2"), Restart(30 * S, "c2", 60 * S), static_membership=True)
    assert not events_of(result.events, EventType.LEAVE_SENT)
    (removed,) = events_of(result.events, EventType.MEMBER_REMOVED)
    assert removed.reason == RemovalReason.SESSION_TIMEOUT.value and removed.ts == at(result, 75 * S)
    # back after the session expired: a new static member (no replacement), so a rebalance
    assert not events_of(result.events, EventType.STATIC_MEMBER_REPLACED)
    joins = events_of(result.events, EventType.JOIN_RECEIVED)
    (back,) = [e for e in joins if e.ts > removed.ts and e.client_id == "c2"]
    assert back.group_instance_id == "c2" and back.attributes["state"] == "Stable"


@pytest.mark.parametrize(
    ("state", "generation", "error"),
    [
        ("Stable", 5, None),
        ("CompletingRebalance", 5, None),
        ("PreparingRebalance", 5, "REBALANCE_IN_PROGRESS"),
        ("PreparingRebalance", 4, "ILLEGAL_GENERATION"),  # the generation is validated first
        ("Stable", 4, "ILLEGAL_GENERATION"),
        ("Empty", 4, "ILLEGAL_GENERATION"),
    ],
)
def test_heartbeat_validates_member_and_generation_before_the_group_state(state, generation, error):
    """Scala GroupCoordinator.handleHeartbeat (validateHeartbeat, then `group.currentState match`) and
    GroupMetadataManager.classicGroupHeartbeatToClassicGroup (validateClassicGroupHeartbeat first): a
    stale generation gets ILLEGAL_GENERATION whatever the state, and does not reset the session timer."""
    from rebalance_core.classic.sim_state import GroupMember as _GroupMember
    from rebalance_core.classic.sim_state import Process as _Process
    from rebalance_core.classic.simulator import ClassicSimulation as _Simulation

    model = _Simulation(Timeline(topics={"t": 1}, actions=(Join(0, "c1"),)), SimulationSettings())
    member = _GroupMember("c1-1", None, "c1", _Process("c1", None, ("t",)), ("t",), (), None, last_seen=7)
    model.members[member.member_id] = member
    model.state, model.generation, model.now = state, 5, 1_000
    assert model._on_heartbeat("c1-1", generation) == error
    assert member.last_seen == (1_000 if error in (None, "REBALANCE_IN_PROGRESS") else 7)
    assert model._on_heartbeat("unknown", 5) == "UNKNOWN_MEMBER_ID"


@pytest.mark.parametrize(
    ("state", "joining", "topics", "rebalances"),
    [
        ("Stable", "c2-1", ("t",), False),  # a follower, same metadata: the current generation
        ("Stable", "c2-1", ("t", "u"), True),  # a follower whose metadata changed
        ("Stable", "c1-1", ("t",), True),  # the leader always (it may have seen a topic change)
        ("CompletingRebalance", "c1-1", ("t",), False),  # anyone with the same metadata
        ("CompletingRebalance", "c2-1", ("t", "u"), True),
    ],
)
def test_a_known_members_join_rebalances_only_for_the_leader_in_stable_or_changed_metadata(
    state, joining, topics, rebalances
):
    """Scala GroupCoordinator.doCurrentMemberJoinGroup (2.x/3.x) and Java GroupMetadataManager
    .classicGroupJoinExistingMember (4.0): in Stable a follower whose protocol metadata matches
    (MemberMetadata.matches / ClassicGroupMember.matches) gets the current generation back and no
    rebalance; the leader's JoinGroup, or changed metadata, rebalances (updateMemberAndRebalance). In
    CompletingRebalance any member with matching metadata gets the current generation."""
    from rebalance_core.classic.sim_state import GroupMember as _GroupMember
    from rebalance_core.classic.sim_state import Process as _Process
    from rebalance_core.classic.simulator import ClassicSimulation as _Simulation

    model = _Simulation(Timeline(topics={"t": 2, "u": 1}, actions=(Join(0, "c1"),)), SimulationSettings())
    processes = {name: _Process(name, None, ("t",)) for name in ("c1", "c2")}
    for name, owned in (("c1", partitions(0)), ("c2", partitions(1))):
        member = _GroupMember(f"{name}-1", None, name, processes[name], ("t",), owned, 3)
        model.members[member.member_id] = member
        model.member_order.put(member.member_id)
    model.state, model.generation, model.leader, model.now = state, 4, "c1-1", 1_000
    member = model.members[joining]
    model._on_join(member.process, 9, joining, topics, member.owned, 3, None, "rebalance enforced by user")
    prepared = events_of(model.events, EventType.REBALANCE_PREPARED)
    assert (model.state == "PreparingRebalance") == rebalances == bool(prepared)
    assert events_of(model.events, EventType.JOIN_RECEIVED)[0].member_id == joining
    if not rebalances:
        assert model.generation == 4 and model.state == state


def test_gc_pause_beyond_the_session_timeout_loses_the_partitions_and_rejoins_as_a_new_member():
    result = sim(Join(0, "c1"), Join(0, "c2"), Pause(30 * S, "c2", 20 * S, "gc"), session_timeout_ms=10 * S)
    names = member_names(result.events)
    (removed,) = events_of(result.events, EventType.MEMBER_REMOVED)
    assert removed.ts == at(result, 40 * S) and names[removed.member_id] == "c2"
    # woken up, its heartbeat thread first takes the coordinator for unknown (no heartbeat response within
    # the session: AbstractCoordinator.HeartbeatThread), and finds it again
    (unknown,) = events_of(result.events, EventType.COORDINATOR_UNAVAILABLE)
    assert unknown.ts == at(result, 50 * S) and unknown.client_id == "c2"
    assert unknown.attributes["cause"] == "session timed out without receiving a heartbeat response"
    (found,) = events_of(result.events, EventType.COORDINATOR_DISCOVERED)
    assert found.ts == unknown.ts and found.client_id == "c2"
    # then the heartbeat's UNKNOWN_MEMBER_ID: the poll loop's next step (the simulator's next millisecond)
    (lost,) = events_of(result.events, EventType.PARTITIONS_LOST)
    assert at(result, 50 * S) <= lost.ts <= at(result, 50 * S) + 1 and lost.member_id == removed.member_id
    rejoin = next(e for e in events_of(result.events, EventType.JOIN_SENT) if e.ts > lost.ts)
    assert rejoin.client_id == "c2" and rejoin.member_id is None  # UNKNOWN_MEMBER_ID: a new member id


def test_short_gc_pause_goes_unnoticed():
    calm = sim(Join(0, "c1"), Join(0, "c2"))
    paused = sim(Join(0, "c1"), Join(0, "c2"), Pause(30 * S, "c2", 5 * S, "gc"), session_timeout_ms=10 * S)
    assert [e.event_type for e in paused.events] == [e.event_type for e in calm.events]


def test_slow_poll_past_max_poll_interval_makes_the_member_leave():
    result = sim(
        Join(0, "c1"),
        Join(0, "c2"),
        Pause(30 * S, "c2", 40 * S, "poll"),
        session_timeout_ms=10 * S,
        max_poll_interval_ms=20 * S,
    )
    names = member_names(result.events)
    (expired,) = events_of(result.events, EventType.POLL_TIMEOUT_EXPIRED)
    assert expired.ts == at(result, 50 * S) and names[expired.member_id] == "c2"
    leave = events_of(result.events, EventType.LEAVE_SENT)[0]
    assert leave.ts == expired.ts
    (removed,) = events_of(result.events, EventType.MEMBER_REMOVED)
    assert removed.reason == RemovalReason.LEAVE_GROUP.value
    # when the poll loop comes back its partitions are lost and it joins as a new member
    (lost,) = events_of(result.events, EventType.PARTITIONS_LOST)
    assert lost.ts == at(result, 70 * S)
    left = [m for m in result.truth["partition_movements"] if m["from_member_id"] == expired.member_id]
    assert left and {(m["stop_cause"], m["revoked_at"]) for m in left} == {("member_left", expired.ts)}


def test_slow_poll_holds_up_the_rebalance_until_the_member_rejoins():
    result = sim(Join(0, "c1"), Join(0, "c2"), Pause(30 * S, "c2", 20 * S, "poll"), Join(35 * S, "c3"))
    names = member_names(result.events)
    revokes = events_of(result.events, EventType.PARTITIONS_REVOKED)
    (c2_revoked,) = [e for e in revokes if names[e.member_id] == "c2"]
    assert c2_revoked.ts == at(result, 50 * S)  # the poll loop is back: onJoinPrepare, then JoinGroup
    c2_join = next(e for e in events_of(result.events, EventType.JOIN_SENT) if e.ts > c2_revoked.ts)
    assert c2_join.client_id == "c2" and c2_join.ts == c2_revoked.ts + 5
    completed = events_of(result.events, EventType.JOIN_COMPLETED)[-1]
    assert completed.ts > c2_join.ts and {names[m] for m in completed.members} == {"c1", "c2", "c3"}


def test_partition_count_change_makes_the_leader_rejoin_and_assign_the_new_partitions():
    result = sim(Join(0, "c1"), Join(0, "c2"), PartitionCount(30 * S, "t", 8))
    (changed,) = events_of(result.events, EventType.TOPIC_METADATA_CHANGED)
    assert changed.attributes == {"topic.t": "8"}
    request = next(e for e in events_of(result.events, EventType.JOIN_REQUESTED) if e.ts > changed.ts)
    assert (
        request.reason == "cached metadata has changed"
        and request.member_id == result.truth["generations"][0]["leader_member_id"]
    )
    last = events_of(result.events, EventType.ASSIGNMENT_RECEIVED)[-1]
    assert set().union(*last.assignment.values()) == partitions(*range(8))


def test_restarted_static_leader_notices_partitions_added_after_its_return():
    """KIP-814: the static leader back in a Stable group gets skipAssignment; ConsumerCoordinator
    .onLeaderElected sets assignmentSnapshot = metadataSnapshot, so a later partition count change makes
    rejoinNeededOrPending rejoin ("cached metadata has changed") and the new partitions are assigned."""
    result = sim(
        Join(0, "c1"),
        Join(5 * S, "c2"),
        Restart(60 * S, "c1", 10 * S),
        PartitionCount(120 * S, "t", 8),
        static_membership=True,
    )
    (replaced,) = events_of(result.events, EventType.STATIC_MEMBER_REPLACED)
    assert replaced.member_id == events_of(result.events, EventType.JOIN_COMPLETED)[-1].leader_id
    request = next(
        e for e in events_of(result.events, EventType.JOIN_REQUESTED) if e.ts > at(result, 120 * S)
    )
    assert request.member_id == replaced.member_id and request.reason == "cached metadata has changed"
    last = events_of(result.events, EventType.ASSIGNMENT_RECEIVED)[-1]
    assert set().union(*last.assignment.values()) == partitions(*range(8))


def test_restarted_static_leader_does_not_notice_partitions_added_while_it_was_down():
    """GroupCoordinator.updateStaticMemberAndRebalance (KIP-814): "any metadata changes happening while the
    static leader is down won't be noticed": its snapshot is taken on its return, with the new count, and
    no follower watches the metadata (ConsumerCoordinator.onJoinComplete: assignmentSnapshot = null)."""
    result = sim(
        Join(0, "c1"),
        Join(5 * S, "c2"),
        Restart(60 * S, "c1", 10 * S),
        PartitionCount(65 * S, "t", 8),
        static_membership=True,
    )
    assert events_of(result.events, EventType.STATIC_MEMBER_REPLACED)
    assert not [
        e for e in events_of(result.events, EventType.REBALANCE_PREPARED) if e.ts > at(result, 60 * S)
    ]
    last = events_of(result.events, EventType.ASSIGNMENT_RECEIVED)[-1]
    assert set().union(*last.assignment.values()) == partitions(*range(6))  # t-6, t-7 stay unassigned


def test_cooperative_subscription_change_revokes_only_the_dropped_topic():
    result = sim(
        Join(0, "c1", ("t", "u")),
        Subscribe(30 * S, "c1", ("t",)),
        topics={"t": 2, "u": 2},
        assignor="cooperative-sticky",
    )
    (revoked,) = events_of(result.events, EventType.PARTITIONS_REVOKED)
    assert set(revoked.partitions) == partitions(0, 1, topic="u")
    (request,) = [e for e in events_of(result.events, EventType.JOIN_REQUESTED) if e.ts >= at(result, 30 * S)]
    assert request.reason == "subscription changed" and request.ts == revoked.ts
    assert set(
        events_of(result.events, EventType.ASSIGNMENT_RECEIVED)[-1].assignment.popitem()[1]
    ) == partitions(0, 1)


def test_cooperative_revoker_requests_the_rejoin_before_its_assigned_callback():
    """ConsumerCoordinator.onJoinComplete (2.4+): after onPartitionsRevoked it calls requestRejoin ("Request
    joining group due to: need to revoke partitions ...") and only then onPartitionsAssigned; the JoinGroup
    goes out at the next poll. The replay keeps the episode open on that line (KIP-429 follow-up round)."""
    result = sim(Join(0, "c1"), Join(30 * S, "c2"), assignor="cooperative-sticky")
    c1 = [e for e in result.events if e.client_id == "c1" and e.ts >= at(result, 30 * S)]
    kinds = [e.event_type for e in c1]
    revoked = kinds.index(EventType.PARTITIONS_REVOKED.value)
    assert kinds[revoked + 1 : revoked + 4] == [
        EventType.JOIN_REQUESTED.value,
        EventType.PARTITIONS_ASSIGNED.value,
        EventType.JOIN_SENT.value,
    ]
    assert c1[revoked + 1].reason == "need to revoke partitions and re-join"


def test_initial_rebalance_delay_waits_and_is_extended_by_members_joining_during_it():
    alone = sim(Join(0, "c1"), group_initial_rebalance_delay_ms=3 * S, join_round_trip_ms=20)
    (completed,) = events_of(alone.events, EventType.JOIN_COMPLETED)
    # the JoinGroup with the member id (KIP-394's second) arrives at +30, then the delay
    assert completed.ts == at(alone, 30 + 3 * S)
    two = sim(Join(0, "c1"), Join(2 * S, "c2"), group_initial_rebalance_delay_ms=3 * S, join_round_trip_ms=20)
    (completed,) = events_of(two.events, EventType.JOIN_COMPLETED)
    assert completed.ts == at(two, 30 + 6 * S) and completed.member_count == 2


def test_last_member_leaving_empties_the_group():
    result = sim(Join(0, "c1"), Leave(30 * S, "c1"))
    (empty,) = events_of(result.events, EventType.GROUP_EMPTY)
    assert empty.generation_id == 2
    (last,) = [g for g in result.truth["generations"] if g["generation_id"] == 2]
    assert last["ended_empty"] and last["members"] == [] and last["leader_member_id"] is None


def test_static_member_killed_and_back_within_its_session_is_unobservable():
    """No log shows when a killed static member stopped: the simulator says so."""
    result = sim(
        Join(0, "c1"), Join(0, "c2"), Restart(30 * S, "c2", 5 * S, graceful=False), static_membership=True
    )
    assert events_of(result.events, EventType.STATIC_MEMBER_REPLACED)
    assert len(result.unobservable) == 1 and "replaced by a restarted static member" in result.unobservable[0]
    graceful = sim(Join(0, "c1"), Join(0, "c2"), Restart(30 * S, "c2", 5 * S), static_membership=True)
    assert graceful.unobservable == []


def test_the_last_member_dying_silently_is_unobservable_from_the_members_logs():
    """The last member crashes: only the coordinator logs its session-timeout removal and the rebalance that
    empties the group; no member's log has a line after its last one (a quiet end of input looks the same).
    A crash with another member left is seen by that member's rebalance; a leave is logged by the leaver."""
    alone = sim(Join(0, "c1"), Crash(30 * S, "c1"))
    assert events_of(alone.events, EventType.MEMBER_REMOVED)
    assert len(alone.unobservable_from_members) == 1
    assert "last member" in alone.unobservable_from_members[0]
    assert sim(Join(0, "c1"), Join(0, "c2"), Crash(30 * S, "c1")).unobservable_from_members == []
    assert sim(Join(0, "c1"), Leave(30 * S, "c1")).unobservable_from_members == []


def test_end_stops_the_simulation_with_the_round_still_open():
    timeline = Timeline(topics={"t": 2}, actions=(Join(0, "c1"),), group_id="g", end_ms=1 * S)
    result = simulate(timeline, SimulationSettings(group_initial_rebalance_delay_ms=3 * S))
    assert result.events[-1].event_type == EventType.REBALANCE_PREPARED.value
    assert result.truth["generations"] == []  # its join phase never completed
    (episode,) = result.truth["rebalance_episodes"]
    assert episode["stabilized_at"] is None


# ------------------------------------------------------------------------------------ validation
@pytest.mark.parametrize(
    ("doc", "message"),
    [
        ({"actions": [{"at": 0, "action": "join", "member": "c1"}]}, "'topics' must be a non-empty mapping"),
        ({"topics": {"t": 1}, "actions": []}, "'actions' must be a non-empty list"),
        (
            {"topics": {"t": 1}, "actions": [{"at": 0, "action": "fly", "member": "c1"}]},
            "'action' must be one of",
        ),
        ({"topics": {"t": 1}, "actions": [{"action": "join", "member": "c1"}]}, "missing 'at'"),
        (
            {"topics": {"t": 1}, "actions": [{"at": "soon", "action": "join", "member": "c1"}]},
            "expected milliseconds",
        ),
        (
            {"topics": {"t": 1}, "actions": [{"at": 0, "action": "join", "member": "c1", "color": 1}]},
            "unknown field",
        ),
        ({"topics": {"t": 1}, "actions": [{"at": 0, "action": "crash", "member": "c1"}]}, "is not running"),
        (
            {"topics": {"t": 1}, "actions": [{"at": 0, "action": "join", "member": "c1"}] * 2},
            "is already running",
        ),
        (
            {"topics": {"t": 4}, "actions": [{"at": 0, "action": "partitions", "topic": "t", "count": 2}]},
            "partition counts only grow",
        ),
        (
            {
                "topics": {"t": 1},
                "actions": [
                    {"at": 0, "action": "join", "member": "c1"},
                    {"at": "1s", "action": "restart", "member": "c1", "down": "10s"},
                    {"at": "5s", "action": "leave", "member": "c1"},
                ],
            },
            "is restarting or paused until",
        ),
        (
            {"topics": {"t": 1}, "actions": [{"at": 0, "action": "join", "member": "c1"}], "colour": "x"},
            "unknown timeline field",
        ),
    ],
)
def test_bad_timelines_say_what_is_wrong(doc, message):
    with pytest.raises(TimelineError, match=message):
        load_timeline(doc)


@pytest.mark.parametrize(
    ("settings", "message"),
    [
        ({"assignor": "magic"}, "unknown assignor"),
        ({"assignor": "range", "protocol": "cooperative"}, "supports eager, not protocol 'cooperative'"),
        # KIP-415 is Kafka Connect's (IncrementalCooperativeAssignor): no consumer group has it
        ({"scheduled_rebalance_max_delay_ms": "5m"}, "is Kafka Connect's"),
        ({"assignor": "cooperative-sticky", "scheduled_rebalance_max_delay_ms": "5m"}, "is Kafka Connect's"),
        ({"assignor": "sessioned", "protocol": "eager"}, "rebalances incrementally"),
        ({"assignor": "sessioned", "static_membership": True}, "no static membership"),
        ({"heartbeat_interval_ms": "60s"}, "heartbeat_interval_ms must be > 0 and below session_timeout_ms"),
        ({"session_timeout_ms": -1}, "session_timeout_ms must be an integer >= 0"),
        ({"retries": 3}, "unknown setting"),
    ],
)
def test_bad_settings_say_what_is_wrong(settings, message):
    with pytest.raises(SimulationError, match=message):
        load_settings(settings)


def test_durations_and_scenario_loading():
    assert [parse_duration(v) for v in (250, "250ms", "45s", "5m", "1h")] == [
        250,
        250,
        45_000,
        300_000,
        3_600_000,
    ]
    timeline, settings = load_scenario(
        {
            "topics": {"t": 2},
            "start": "2024-11-08T10:00:00Z",
            "settings": {"assignor": "cooperative-sticky", "session_timeout_ms": "10s", "seed": 1},
            "actions": [{"at": "1s", "action": "join", "member": "c1", "instance_id": "host-1"}],
        },
        seed=9,
    )
    assert timeline.start_ms == 1_731_060_000_000 and timeline.actions == (Join(1_000, "c1", None, "host-1"),)
    assert (
        settings.session_timeout_ms == 10_000
        and settings.seed == 9
        and settings.rebalance_protocol == "cooperative"
    )


def test_a_member_learns_of_a_rebalance_at_the_heartbeat_its_timer_drifted_to():
    # AbstractCoordinator's heartbeat thread waits in retry.backoff.ms steps: after minutes the members'
    # heartbeats are out of phase, and each learns of a rebalance at its own next heartbeat
    from rebalance_core.timeline import Heartbeat

    result = sim(
        Join(0, "c1"), Join(0, "c2"), Join(60 * S, "c3"), Heartbeat(61_400, "c1"), Heartbeat(62_750, "c2")
    )
    noticed = {
        e.client_id: e.ts - result.start
        for e in result.events
        if e.event_type == EventType.JOIN_REQUESTED.value and e.reason == "group is already rebalancing"
    }
    assert noticed == {"c1": 61_400, "c2": 62_750}
    with pytest.raises(TimelineError, match="has not joined"):
        Timeline(topics={"t": 1}, actions=(Heartbeat(5, "c9"),))
    assert load_timeline(
        {"topics": {"t": 1}, "actions": [{"at": 0, "action": "join", "member": "c1"},
                                         {"at": "4s", "action": "heartbeat", "member": "c1"}]}
    ).actions[1] == Heartbeat(4 * S, "c1")  # fmt: skip


def test_a_kip848_member_heartbeats_at_the_instants_its_timer_drifted_to():
    from rebalance_core.consumer import ConsumerSimSettings, simulate_consumer_group
    from rebalance_core.timeline import Heartbeat

    timeline = Timeline(
        topics={"t": 6},
        actions=(Join(0, "c1"), Join(0, "c2"), Join(60 * S, "c3"), Heartbeat(62_300, "c1")),
        group_id="g",
    )
    events = simulate_consumer_group(timeline, ConsumerSimSettings()).events
    reconciling = [
        e.ts - timeline.start_ms
        for e in events
        if e.client_id == "c1"
        and e.event_type == EventType.MEMBER_STATE_CHANGED.value
        and e.attributes.get("to_state") == "RECONCILING"
        and e.ts - timeline.start_ms > 60 * S
    ]
    assert reconciling and 62_300 <= reconciling[0] <= 62_300 + 2 * ConsumerSimSettings().network_ms


def test_members_removed_at_the_pending_sync_expiry_are_named_as_the_scala_set_kafka_prints():
    """GroupCoordinator.removePendingSyncMembers: "Removing Set(a, ...) on pending sync request
    expiration" (Scala's Set.toString), the reason the parser reads the removed member ids from. c2 joins
    while c1 syncs, then crashes before its SyncGroup: generation 2 waits for it until the rebalance
    timeout."""
    timeline = Timeline(
        topics={"t": 1},
        actions=(Join(0, "c1"), Join(5, "c2"), Restart(5, "c1", down_ms=8000), Crash(5, "c2")),
    )
    settings = SimulationSettings(
        assignor="range",
        session_timeout_ms=6000,
        max_poll_interval_ms=6000,
        heartbeat_interval_ms=2000,
        group_initial_rebalance_delay_ms=0,
        join_round_trip_ms=2,
        sync_round_trip_ms=2,
        revoke_callback_ms=0,
        assignment_ms=2,
        network_jitter_ms=0,
        seed=0,
    )
    result = simulate(timeline, settings)
    (removed,) = events_of(
        result.events, EventType.MEMBER_REMOVED, reason=RemovalReason.PENDING_SYNC_TIMEOUT.value
    )
    reasons = [e.reason for e in events_of(result.events, EventType.REBALANCE_PREPARED)]
    assert f"Removing Set({removed.member_id}) on pending sync request expiration" in reasons


@pytest.mark.parametrize("member_map", ["java", "scala-2.13", "scala-2.12"])
def test_a_leaving_leader_is_replaced_by_the_first_key_of_the_members_map(member_map):
    """ClassicGroup.remove (`members.keySet().iterator().next()`) / GroupMetadata.remove
    (`members.keys.headOption`): when the leader leaves, the next leader is the first member id in the
    iteration order of the coordinator's members HashMap (rebalance_core.classic.member_order), not the member
    that joined first."""
    from rebalance_core.classic.member_order import MemberMapOrder

    names = [f"c{i}" for i in range(1, 7)]
    result = sim(
        *(Join(i * 100, name) for i, name in enumerate(names)),
        Leave(60 * S, "c1"),
        coordinator_member_map=member_map,
    )
    completions = [e for e in result.events if e.event_type == EventType.JOIN_COMPLETED.value]
    before, after = completions[-2], completions[-1]
    assert before.leader_id.startswith("c1-")
    remaining = [m for m in before.members if m != before.leader_id]
    order = MemberMapOrder(member_map)
    order.fresh()
    for e in result.events:  # the map's insertions: each member's JoinGroup with its id, in order
        if e.event_type == EventType.JOIN_RECEIVED.value and e.member_id in before.members:
            order.put(e.member_id)
    order.remove(before.leader_id)
    assert after.leader_id == order.first() == order.first(remaining)
    assert result.leader_by_member_order


def test_the_map_order_leader_is_not_the_join_order_one_for_some_member_ids():
    """The property the test above relies on: with these members, some map's order differs from the
    join order (the next joiner, c2), so the simulator does not pick the join order's."""
    leaders = set()
    for member_map in ("java", "scala-2.13", "scala-2.12"):
        result = sim(
            *(Join(i * 100, f"c{i + 1}") for i in range(6)),
            Leave(60 * S, "c1"),
            coordinator_member_map=member_map,
        )
        completions = [e for e in result.events if e.event_type == EventType.JOIN_COMPLETED.value]
        leaders.add(completions[-1].leader_id.partition("-")[0])
    assert leaders != {"c2"}


def test_an_unknown_members_map_is_refused():
    with pytest.raises(SimulationError, match="coordinator_member_map"):
        SimulationSettings(coordinator_member_map="python")


def _stops_of(result, client: str) -> list[dict]:
    names = member_names(result.events)
    return [m for m in result.truth["partition_movements"] if names.get(m["from_member_id"]) == client]


# A frozen or stalled consumer consumes nothing from the instant it froze or stalled: a GC pause stops the
# whole JVM (fetcher, poll loop and heartbeat thread), and a hung poll loop gets no records (they reach the
# application only through poll(); the heartbeat thread alone keeps the session, KIP-62). So whatever it
# gives up without having run again - the heartbeat thread's poll-timeout leave (AbstractCoordinator
# HeartbeatThread, Heartbeat.pollTimeoutExpired), its removal on session or rebalance timeout
# (GroupCoordinator.onExpireHeartbeat / onCompleteJoin), another member starting it - stopped then. No line
# shows that instant, so the truth's rows are `inferred` and the stop is listed as unobservable.
@pytest.mark.parametrize(
    "idle, settings, cause, broker_states_it",
    [
        # frozen past max.poll.interval.ms, inside the session: it wakes to an expired poll timer and leaves
        (
            Pause(30 * S, "c2", 25 * S, "gc"),
            {"session_timeout_ms": 30 * S, "max_poll_interval_ms": 20 * S},
            "member_left",
            False,
        ),
        # frozen past the session: the coordinator removes it; its removal minus the session timeout is the
        # freeze (the simulator's last heartbeat), which the broker's line states
        (Pause(30 * S, "c2", 20 * S, "gc"), {"session_timeout_ms": 10 * S}, "member_failed", True),
        # its poll loop stalled for good: the heartbeat thread leaves at max.poll.interval.ms
        (
            Stall(30 * S, "c2"),
            {"session_timeout_ms": 10 * S, "max_poll_interval_ms": 20 * S},
            "member_left",
            False,
        ),
    ],
    ids=["gc-pause-past-poll-timeout", "gc-pause-past-session", "stall"],
)
def test_a_frozen_or_stalled_member_stopped_consuming_when_it_froze_or_stalled(
    idle, settings, cause, broker_states_it
):
    result = sim(Join(0, "c1"), Join(0, "c2"), idle, **settings)
    stops = _stops_of(result, "c2")
    assert stops and {(m["revoked_at"], m["stop_cause"], m["source"]) for m in stops} == {
        (at(result, 30 * S), cause, "inferred")
    }
    assert bool(result.unobservable) != broker_states_it


def test_a_slow_poll_processes_its_batch_until_the_poll_timeout_leave():
    """A slow poll (not a stall) still processes the records of its last poll(): it gives its partitions up at
    the heartbeat thread's leave, its "consumer poll timeout has expired" line. That line cannot tell a slow
    batch from a stall or a GC pause (stopped earlier): the truth's row is `inferred`, as a replay's must be."""
    result = sim(
        Join(0, "c1"),
        Join(0, "c2"),
        Pause(30 * S, "c2", 40 * S, "poll"),
        session_timeout_ms=10 * S,
        max_poll_interval_ms=20 * S,
    )
    stops = _stops_of(result, "c2")
    assert stops and {(m["revoked_at"], m["source"]) for m in stops} == {(at(result, 50 * S), "inferred")}


def test_a_member_that_woke_from_a_short_pause_gives_up_at_its_own_step():
    """A GC pause shorter than the session and the poll timeout: the member runs again, and a revocation
    after it is dated by its own callback line."""
    result = sim(
        Join(0, "c1"),
        Join(0, "c2"),
        Pause(30 * S, "c2", 5 * S, "gc"),
        Join(32 * S, "c3"),
        assignor="range",
        session_timeout_ms=10 * S,
        max_poll_interval_ms=20 * S,
    )
    stops = _stops_of(result, "c2")
    assert stops and all(m["revoked_at"] >= at(result, 35 * S) and m["source"] == "observed" for m in stops)
