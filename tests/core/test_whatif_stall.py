"""The timeline action `stall`: a member's poll loop stops for good while its heartbeat thread lives on
(issue 12, what-if). Classic protocol: the member keeps its session, does not rejoin a rebalance, and
the coordinator removes it when the join phase's rebalance timeout expires (GroupCoordinator.onCompleteJoin:
"removed dynamic members who haven't joined"); with no rebalance, the heartbeat thread leaves on the
expired poll timer (AbstractCoordinator.HeartbeatThread). KIP-848: a revocation it never acknowledges
fences it at the rebalance timeout (GroupMetadataManager), and it never rejoins. The what-if extraction
turns such a removal of a member that never came back into a stall, not a crash (whose session expiry
would add a rebalance)."""

from __future__ import annotations

import pytest

from rebalance_core.consumer import ConsumerSimSettings, simulate_consumer_group
from rebalance_core.simulate import SimulationError, SimulationSettings, simulate
from rebalance_core.timeline import (
    Crash,
    Heartbeat,
    Join,
    Leave,
    Restart,
    Stall,
    Subscribe,
    Timeline,
    TimelineError,
    load_timeline,
)
from rebalance_core.whatif import ExtractionOptions, Scenario, TimelineExtractor, WhatIfConfig, whatif
from schemas.events import EventType, RemovalReason, Side

S = 1_000
MAX_POLL = 20 * S  # max.poll.interval.ms, the classic rebalance timeout
# c3's two JoinGroups (KIP-394) start a rebalance at 35 s + 30 ms; c2's poll loop stalls just after
JOIN_THEN_STALL = (Join(0, "c1"), Join(0, "c2"), Join(35 * S, "c3"), Stall(36 * S, "c2"))


def classic(*actions, **settings):
    timeline = Timeline(topics={"t": 6}, actions=actions, cluster="k", group_id="g")
    defaults = {
        "group_initial_rebalance_delay_ms": 0,
        "session_timeout_ms": 10 * S,
        "max_poll_interval_ms": MAX_POLL,
    }
    return timeline, simulate(timeline, SimulationSettings(**{**defaults, **settings}))


def of(events, event_type: EventType, client: str | None = None, since: int = 0):
    """The events of a type (of one client), at or after `since`."""
    return [
        e
        for e in events
        if e.event_type == event_type.value and client in (None, e.client_id) and e.ts >= since
    ]


# ------------------------------------------------------------------------------------------- timeline
def test_a_stall_loads_from_a_document_and_names_its_member():
    doc = {
        "topics": {"t": 2},
        "actions": [
            {"at": 0, "action": "join", "member": "c1"},
            {"at": "5s", "action": "stall", "member": "c1"},
        ],
    }
    assert load_timeline(doc).actions[-1] == Stall(5 * S, "c1")


@pytest.mark.parametrize(
    "after",
    [Leave(9 * S, "c1"), Subscribe(9 * S, "c1", ("t",)), Stall(9 * S, "c1")],
    ids=lambda a: type(a).__name__,
)
def test_a_stalled_poll_loop_does_nothing_more_of_its_own(after):
    with pytest.raises(TimelineError, match="stalled for good: it can only crash or restart"):
        Timeline(topics={"t": 2}, actions=(Join(0, "c1"), Stall(5 * S, "c1"), after))


@pytest.mark.parametrize("end", [Crash(9 * S, "c1"), Restart(9 * S, "c1", down_ms=S, graceful=False)])
def test_a_stalled_process_can_be_killed_or_restarted(end):
    timeline = Timeline(
        topics={"t": 2}, actions=(Join(0, "c1"), Stall(5 * S, "c1"), end, Heartbeat(12 * S, "c1"))
    )
    assert timeline.actions[2] == end


def test_a_connect_worker_group_has_no_stall():
    timeline = Timeline(topics={"conn": 2}, actions=(Join(0, "w1"), Stall(5 * S, "w1")))
    with pytest.raises(SimulationError, match="Connect worker group"):
        simulate(timeline, SimulationSettings(assignor="sessioned"))


# ---------------------------------------------------------------------------- classic simulator
def test_a_stalled_member_keeps_heartbeating_but_is_removed_at_the_rebalance_timeout():
    timeline, result = classic(*JOIN_THEN_STALL)
    events, c3_joins = result.events, timeline.start_ms + 35 * S
    (prepared,) = of(events, EventType.REBALANCE_PREPARED, since=c3_joins)
    # it learned of the rebalance at its heartbeat (the heartbeat thread runs) ...
    (noticed,) = of(events, EventType.HEARTBEAT_REBALANCING, "c2")
    assert noticed.ts > timeline.start_ms + 36 * S
    # ... but its poll loop never revoked nor rejoined
    assert not [e for e in of(events, EventType.JOIN_SENT, "c2") if e.ts > prepared.ts]
    assert not of(events, EventType.PARTITIONS_REVOKED, "c2")
    (removed,) = of(events, EventType.MEMBER_REMOVED)
    assert removed.client_id == "c2" and removed.reason == RemovalReason.REBALANCE_TIMEOUT.value
    assert removed.ts == prepared.ts + MAX_POLL
    # one rebalance: its session never expired (no second removal, no further rebalance)
    (completed,) = of(events, EventType.JOIN_COMPLETED, since=c3_joins)
    assert completed.ts == removed.ts and len(completed.members) == 2


def test_a_stalled_member_with_no_rebalance_leaves_on_its_poll_timer_and_never_rejoins():
    timeline, result = classic(Join(0, "c1"), Join(0, "c2"), Stall(36 * S, "c2"))
    (expired,) = of(result.events, EventType.POLL_TIMEOUT_EXPIRED, "c2")
    assert expired.ts == timeline.start_ms + 36 * S + MAX_POLL
    (removed,) = of(result.events, EventType.MEMBER_REMOVED)
    assert removed.reason == RemovalReason.LEAVE_GROUP.value and removed.client_id == "c2"
    assert not [e for e in of(result.events, EventType.JOIN_SENT, "c2") if e.ts > expired.ts]
    assert not of(result.events, EventType.PARTITIONS_LOST, "c2")  # onPartitionsLost runs in poll()


# ---------------------------------------------------------------------------- KIP-848 simulator
def kip848(*actions):
    timeline = Timeline(topics={"t": 6}, actions=actions)
    return timeline, simulate_consumer_group(timeline, ConsumerSimSettings(max_poll_interval_ms=60 * S))


def test_kip848_a_stalled_member_that_must_revoke_is_fenced_at_the_rebalance_timeout():
    # c3 joins: c2's heartbeat at 35.024 s brings a target without t-5; its application thread hangs
    # right after, so onPartitionsRevoked never runs and the revocation is never acknowledged
    timeline, sim = kip848(Join(0, "c1"), Join(0, "c2"), Join(35 * S, "c3"), Stall(35_026, "c2"))
    removed = [e for e in sim.events if e.event_type == EventType.MEMBER_REMOVED.value]
    assert [(e.member_id, e.reason) for e in removed] == [("c2", RemovalReason.REBALANCE_TIMEOUT.value)]
    assert removed[0].ts == timeline.start_ms + 35_024 + 60 * S
    c2 = [
        e for e in sim.events if e.member_id == "c2" and e.side == Side.MEMBER.value and e.ts > removed[0].ts
    ]
    assert EventType.PARTITIONS_REVOKED.value not in {e.event_type for e in c2}
    assert "JOINING" not in {(e.attributes or {}).get("to_state") for e in c2}  # never rejoins


def test_kip848_a_stalled_member_with_nothing_to_do_leaves_on_its_poll_timer_for_good():
    timeline, sim = kip848(Join(0, "c1"), Join(0, "c2"), Stall(30 * S, "c2"))
    c2_states = [
        e.attributes["to_state"]
        for e in sim.events
        if e.member_id == "c2"
        and e.event_type == EventType.MEMBER_STATE_CHANGED.value
        and e.ts > timeline.start_ms + 30 * S
    ]
    assert c2_states == ["PREPARE_LEAVING", "LEAVING", "STALE"]  # at the poll timer, and no rejoin after
    (removed,) = [e for e in sim.events if e.event_type == EventType.MEMBER_REMOVED.value]
    assert removed.reason == RemovalReason.LEAVE_GROUP.value and removed.ts >= timeline.start_ms + 90 * S


# ---------------------------------------------------------------------------------- what-if
def test_a_member_removed_at_the_rebalance_timeout_and_never_back_is_extracted_as_a_stall():
    timeline, result = classic(*JOIN_THEN_STALL)
    broker = [e for e in result.events if e.side == Side.COORDINATOR.value]
    extractor = TimelineExtractor("k", "g", ExtractionOptions(max_poll_interval_ms=MAX_POLL))
    extractor.feed(broker)
    extracted = extractor.finish()
    (prepared,) = of(broker, EventType.REBALANCE_PREPARED, since=timeline.start_ms + 35 * S)
    stalls = [a for a in extracted.timeline.actions if isinstance(a, Stall)]
    assert [(a.member, extracted.timeline.start_ms + a.at) for a in stalls] == [("c2", prepared.ts + 1)]
    assert not [a for a in extracted.timeline.actions if isinstance(a, (Crash, Leave))]


@pytest.mark.parametrize("view", ["broker", "both"])
def test_the_as_actual_replay_of_a_stalled_member_reproduces_the_rebalance(view):
    _, result = classic(*JOIN_THEN_STALL)
    events = [e for e in result.events if view == "both" or e.side == Side.COORDINATOR.value]
    out = whatif(events, WhatIfConfig((Scenario("as-actual"),)))
    rows = out["whatif_comparison"]
    assert {row["model_check"] for row in rows} == {"passed"}, rows[0]["model_check_detail"]
    assert sum(row["rebalances_scenario"] for row in rows) == sum(row["rebalances_actual"] for row in rows)
