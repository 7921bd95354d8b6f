"""`simulate` runs the KIP-848 consumer protocol when the assignor is a broker-side one, and the
replayer reconstructs it exactly (the seeds' scenarios under `uniform` and `server-range`)."""

from __future__ import annotations

import pytest

from rebalance_core.simulate import SimulationError, SimulationSettings, simulate
from rebalance_core.timeline import Crash, Join, Pause, Timeline
from schemas.events import EventType
from tests.core.sim_helpers import SCENARIOS, replay_events, run_scenario, table_differences
from tests.core.test_consumer_protocol import assert_replay_matches_truth, of_type
from tests.core.test_consumer_protocol import simulate as simulate_consumer

# the consumer groups' seed scenarios (03, 04 and 06 are Kafka Connect worker groups: KIP-415)
SEED_SCENARIOS = sorted(p.name for p in SCENARIOS.glob("0[125]_*.yaml"))


@pytest.mark.parametrize("assignor", ["uniform", "server-range"])
@pytest.mark.parametrize("scenario", SEED_SCENARIOS)
def test_consumer_protocol_simulation_round_trips(scenario: str, assignor: str) -> None:
    result = run_scenario(scenario, assignor=assignor, protocol=None)
    assert {e.event_type for e in result.events} & {"target_assignment_computed", "member_epoch_updated"}
    assert all(g["group_protocol"] == "consumer" for g in result.truth["generations"])
    if result.unobservable:
        pytest.skip(f"unobservable: {result.unobservable}")
    assert table_differences(result.truth, replay_events(result.events)) == []


def test_consumer_protocol_needs_a_broker_side_assignor() -> None:
    with pytest.raises(SimulationError, match="broker-side assignor"):
        SimulationSettings(assignor="range", protocol="consumer")
    assert SimulationSettings(assignor="uniform").rebalance_protocol == "consumer"


@pytest.mark.parametrize(("broker_session_ms", "expected_ms"), [(None, 45_000), (20_000, 20_000)])
def test_consumer_protocol_session_timeout_is_the_brokers_not_the_clients(broker_session_ms, expected_ms):
    """KIP-848: the coordinator expires a member after group.consumer.session.timeout.ms (broker config,
    GroupCoordinatorConfig default 45 s); the client's session.timeout.ms is a classic-protocol setting."""
    broker = {"group_consumer_session_timeout_ms": broker_session_ms} if broker_session_ms else {}
    settings = SimulationSettings(
        assignor="uniform", session_timeout_ms=6_000, heartbeat_interval_ms=2_000, **broker
    )
    timeline = Timeline(topics={"t": 2}, actions=(Join(0, "c1"), Join(0, "c2"), Crash(60_000, "c2")))
    result = simulate(timeline, settings)
    (removed,) = [e for e in result.events if e.event_type == "member_removed"]
    assert removed.reason == "session_timeout" and removed.attributes["session_timeout_ms"] == str(
        expected_ms
    )
    # the crashing process's last heartbeat reaches the coordinator 1 ms after the crash instant
    assert removed.ts == timeline.start_ms + 60_001 + expected_ms


def test_member_that_revoked_and_must_revoke_again_moves_to_its_epoch_plus_one():
    """CurrentAssignmentBuilder.build, UNREVOKED_PARTITIONS (KAFKA-16249, 3.8+): once the member no
    longer reports the partitions pending revocation, the next assignment is computed from
    `member.memberEpoch() + 1`: a newer target that takes another partition away keeps it revoking, at
    epoch + 1 (3.7 kept the old epoch); with nothing more to revoke it goes to the target epoch."""
    from rebalance_core.consumer.reconcile import MemberAssignment, reconcile_member
    from rebalance_core.consumer.states import MemberState
    from rebalance_core.events import TopicPartition

    p0, p1, p2 = (TopicPartition("t", n) for n in range(3))
    revoking = MemberAssignment(
        member_epoch=5,
        previous_epoch=4,
        state=MemberState.UNREVOKED_PARTITIONS,
        assigned=frozenset({p0, p1}),
        pending_revocation=frozenset({p2}),
    )
    free = lambda tp: False  # noqa: E731
    again = reconcile_member(revoking, 7, frozenset({p0}), frozenset({p0, p1}), free)
    assert (again.state, again.member_epoch, again.previous_epoch) == (MemberState.UNREVOKED_PARTITIONS, 6, 5)
    assert (again.assigned, again.pending_revocation) == (frozenset({p0}), frozenset({p1}))
    done = reconcile_member(again, 7, frozenset({p0}), frozenset({p0}), free)
    assert (done.state, done.member_epoch, done.previous_epoch) == (MemberState.STABLE, 7, 6)


@pytest.mark.parametrize(
    ("session_ms", "bounds", "accepted"),
    [
        (45_000, {"min_session_timeout_ms": 45_000, "max_session_timeout_ms": 60_000}, True),
        (10_000, {"min_session_timeout_ms": 45_000, "max_session_timeout_ms": 60_000}, False),
        (10_000, {"min_session_timeout_ms": 10_000, "max_session_timeout_ms": 60_000}, True),
        (120_000, {"min_session_timeout_ms": 45_000, "max_session_timeout_ms": 60_000}, False),
        (10_000, {}, True),  # bounds not stated: a broker that accepts it
    ],
)
def test_consumer_protocol_session_timeout_within_the_brokers_bounds(session_ms, bounds, accepted):
    """GroupCoordinatorConfig refuses group.consumer.session.timeout.ms outside
    [group.consumer.min.session.timeout.ms (45 s), group.consumer.max.session.timeout.ms (60 s)]."""
    from rebalance_core.consumer import ConsumerSimSettings

    if accepted:
        ConsumerSimSettings(session_timeout_ms=session_ms, **bounds)
    else:
        with pytest.raises(ValueError, match="group.consumer.min/max.session.timeout.ms"):
            ConsumerSimSettings(session_timeout_ms=session_ms, **bounds)


def test_a_member_fenced_during_a_gc_freeze_still_holds_its_partitions_when_it_wakes():
    """c1 freezes (gc) at 20 s for 2 min, beyond its session: the coordinator fences it and hands t-0..t-2 to c2.
    c1 stopped consuming at its last heartbeat, but does not know: its SubscriptionState still holds them, so on
    waking its fencing loses them (AbstractMembershipManager.transitionToFenced: onPartitionsLost) before it
    rejoins. The truth keeps the stop at the last heartbeat, and a replay of the events agrees."""
    _, sim = simulate_consumer([Join(0, "c1"), Join(1_000, "c2"), Pause(20_000, "c1", 120_000)])
    lost = of_type(sim, EventType.PARTITIONS_LOST, "c1")
    assert [(e.ts - lost[0].ts, [tp.partition for tp in e.partitions]) for e in lost] == [(0, [0, 1, 2])]
    assert lost[0].ts > sim.events[0].ts + 140_000  # on waking, not at the freeze
    stops = {
        r["partition"]: r["revoked_at"]
        for r in sim.truth["partition_movements"]
        if r["from_member_id"] == "c1"
    }
    assert stops[0] == stops[1] == stops[2] < lost[0].ts - 100_000  # its last heartbeat, before the freeze
    assert_replay_matches_truth(sim)
