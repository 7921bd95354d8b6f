"""Kafka Connect's IncrementalCooperativeAssignor (KIP-415) as `rebalance_core.classic.connect` models it: the
leader's memory of the previous assignment, lost work held for scheduled.rebalance.max.delay.ms, the
revocations of the round the delay expires in, and KAFKA-12495's backoff between revoking rounds.
Modelled on Kafka's IncrementalCooperativeAssignorTest: a cluster of workers driven round by round."""

from __future__ import annotations

import pytest

from rebalance_core.classic.connect import (
    KIP415_NOT_APPLICABLE,
    ClusterAssignment,
    IncrementalCooperativeAssignor,
    Task,
    WorkerState,
    kip415_applies,
)
from rebalance_core.simulate import SimulationError, SimulationSettings, simulate
from rebalance_core.timeline import Crash, Join, Leave, Timeline
from tests.core.sim_helpers import replay_events, table_differences

CONNECTORS = {"c": 6}
MAX_DELAY = 60_000


class Cluster:
    """Workers that apply every assignment, led by one assignor (the leader's process)."""

    def __init__(self, max_delay_ms: int = MAX_DELAY):
        self.assignor = IncrementalCooperativeAssignor(max_delay_ms)
        self.workers: dict[str, WorkerState] = {}
        self.generation = 0
        self.max_delay_ms = max_delay_ms

    def round(self, now: int, *names: str, last_completed: int | None = None) -> ClusterAssignment:
        """One generation with these members (a name not seen before is a new, empty worker); every
        worker applies its assignment. last_completed: the leader's lastCompletedGenerationId."""
        self.generation += 1
        for name in list(self.workers):
            if name not in names:
                del self.workers[name]  # gone: its work is lost
        for name in names:
            self.workers.setdefault(name, WorkerState(self.max_delay_ms))
        leader = self.workers[names[0]]
        result = self.assignor.assign(
            now,
            CONNECTORS,
            [(name, *self.workers[name].metadata()) for name in names],
            leader.last_completed_generation if last_completed is None else last_completed,
            self.generation,
        )
        for name in names:
            self.workers[name].apply(result.workers[name], self.generation)
        return result

    def tasks(self, name: str) -> set[Task]:
        return set(self.workers[name].tasks)

    def all_tasks(self) -> set[Task]:
        return {t for w in self.workers.values() for t in w.tasks}


def delays(result: ClusterAssignment) -> set[int]:
    return {a.delay_ms for a in result.workers.values()}


def revoked(result: ClusterAssignment) -> dict[str, set[Task]]:
    return {w: set(a.revoked_tasks) for w, a in result.workers.items() if a.revoked_tasks}


def balanced_three() -> Cluster:
    """w1, w2, w3 running two of c's six tasks each (w1 joins alone, then w2, then w3)."""
    cluster = Cluster()
    cluster.round(0, "w1")
    cluster.round(1_000, "w1", "w2")  # w1 gives up three tasks
    cluster.round(1_100, "w1", "w2")  # ... w2 gets them
    cluster.round(2_000, "w1", "w2", "w3")
    cluster.round(2_100, "w1", "w2", "w3")
    assert [len(cluster.tasks(w)) for w in ("w1", "w2", "w3")] == [2, 2, 2]
    return cluster


ALL_TASKS = {Task("c", n) for n in range(6)}


def test_lost_work_waits_for_the_delay_then_goes_to_the_worker_seen_empty_meanwhile():
    cluster = balanced_three()
    lost = cluster.tasks("w2")
    kept = {w: cluster.tasks(w) for w in ("w1", "w3")}
    # w2 is gone: its tasks stay unassigned, every worker gets the full delay, nobody revokes
    first = cluster.round(10_000, "w1", "w3")
    assert delays(first) == {MAX_DELAY} and not revoked(first)
    assert {w: cluster.tasks(w) for w in ("w1", "w3")} == kept
    # w2 comes back (a new member id) within the delay: nothing for it yet, the remaining delay
    second = cluster.round(30_000, "w1", "w3", "w2-back")
    assert delays(second) == {MAX_DELAY - 20_000} and not revoked(second)
    assert cluster.tasks("w2-back") == set()
    # the delay expires: the lost tasks go to w2-back, seen empty during the delay
    third = cluster.round(70_000, "w1", "w3", "w2-back")
    assert delays(third) == {0} and not revoked(third)
    assert cluster.tasks("w2-back") == lost and {w: cluster.tasks(w) for w in ("w1", "w3")} == kept


def test_lost_work_is_assigned_as_new_when_no_worker_came_back_by_the_delay():
    cluster = balanced_three()
    lost = cluster.tasks("w2")
    assert delays(cluster.round(10_000, "w1", "w3")) == {MAX_DELAY}
    assert cluster.all_tasks() == ALL_TASKS - lost
    expired = cluster.round(70_000, "w1", "w3")
    assert delays(expired) == {0} and not revoked(expired)
    assert cluster.all_tasks() == ALL_TASKS
    assert [len(cluster.tasks(w)) for w in ("w1", "w3")] == [3, 3]


def test_a_round_before_the_delay_expires_keeps_waiting_with_the_remaining_delay():
    cluster = balanced_three()
    cluster.round(10_000, "w1", "w3")
    early = cluster.round(69_999, "w1", "w3")
    assert delays(early) == {1} and len(cluster.all_tasks()) == 4


def test_the_round_the_delay_expires_in_also_revokes_to_balance_the_load():
    """handleLostAssignments resets the delay, then performLoadBalancingRevocations runs in that round."""
    cluster = Cluster()
    cluster.round(0, "w1")
    cluster.round(1_000, "w1", "w2")
    cluster.round(1_100, "w1", "w2")
    assert [len(cluster.tasks(w)) for w in ("w1", "w2")] == [3, 3]
    lost = cluster.tasks("w2")
    cluster.round(10_000, "w1")  # w2 gone: the delay starts
    cluster.round(20_000, "w1", "w3", "w4")  # two empty workers arrive: candidates, no revocation yet
    assert cluster.tasks("w3") == cluster.tasks("w4") == set()
    expired = cluster.round(70_000, "w1", "w3", "w4")
    assert delays(expired) == {0}
    assert cluster.tasks("w3") | cluster.tasks("w4") == lost  # lost work to the candidates
    (overloaded,) = revoked(expired)  # and, in the same round, w1 gives up its extra task
    assert overloaded == "w1" and len(revoked(expired)["w1"]) == 1 and len(cluster.tasks("w1")) == 2


@pytest.mark.parametrize(
    ("leader_completed_previous_round", "expected_delay"),
    [(True, MAX_DELAY), (False, 0)],
    ids=["same-generation-keeps-the-view", "generation-mismatch-clears-the-view"],
)
def test_previous_assignment_is_cleared_when_the_leader_missed_the_generation_it_assigned(
    leader_completed_previous_round, expected_delay
):
    """performTaskAssignment: previousGenerationId != lastCompletedGenerationId (the leader's SyncGroup
    failed, or another worker led in between) -> no previous assignment, so nothing is lost: work that
    no worker runs is assigned as new at once, without a delay."""
    cluster = balanced_three()
    lost = cluster.tasks("w2")
    last_completed = cluster.generation if leader_completed_previous_round else cluster.generation - 1
    result = cluster.round(10_000, "w1", "w3", last_completed=last_completed)
    assert delays(result) == {expected_delay}
    reassigned = lost <= cluster.all_tasks()
    assert reassigned == (not leader_completed_previous_round)


def test_successive_revoking_rounds_are_spaced_by_an_exponential_backoff():
    """KAFKA-12495: a round that needs load-balancing revocations right after a revoking round does
    not revoke; it sends a delay (40^n ms, capped at the max delay) and revokes when that expires."""
    cluster = Cluster()
    cluster.round(0, "w1")
    first = cluster.round(1_000, "w1", "w2")
    assert set(revoked(first)) == {"w1"} and len(revoked(first)["w1"]) == 3
    # w3 arrives while w1's revoked tasks are handed out: w1's third task would have to go too
    backed_off = cluster.round(1_100, "w1", "w2", "w3")
    assert not revoked(backed_off) and delays(backed_off) == {40}
    assert len(cluster.tasks("w1")) == 3
    after = cluster.round(1_140, "w1", "w2", "w3")
    assert set(revoked(after)) == {"w1"} and len(revoked(after)["w1"]) == 1 and delays(after) == {0}


@pytest.mark.parametrize(
    ("max_delay_ms", "attempts", "expected_ms"),
    [(300_000, 1, 40), (300_000, 2, 1_600), (300_000, 3, 64_000), (300_000, 4, 300_000), (60_000, 3, 60_000)]
    + [(0, 1, 0), (0, 5, 0), (1, 3, 1)],
)
def test_revoking_rebalance_backoff(max_delay_ms, attempts, expected_ms):
    """ExponentialBackoff(maxDelay == 0 ? 0 : 1, 40, maxDelay, 0): no jitter."""
    assert IncrementalCooperativeAssignor(max_delay_ms).backoff(attempts) == expected_ms


def test_scheduled_rebalance_delay_applies_to_connect_groups_only():
    assert kip415_applies("connect") and not kip415_applies("consumer") and not kip415_applies(None)
    assert "Connect" in KIP415_NOT_APPLICABLE
    connect = SimulationSettings(assignor="sessioned", scheduled_rebalance_max_delay_ms=60_000)
    assert connect.protocol_type == "connect" and connect.rebalance_protocol == "cooperative"
    assert SimulationSettings(assignor="compatible").max_delay_ms == 300_000  # Connect's default
    for assignor in ("range", "cooperative-sticky", "uniform"):
        assert (
            SimulationSettings(assignor=assignor, scheduled_rebalance_max_delay_ms=0).protocol_type
            == "consumer"
        )
        with pytest.raises(SimulationError, match="Kafka Connect's"):
            SimulationSettings(assignor=assignor, scheduled_rebalance_max_delay_ms=60_000)


# ------------------------------------------------------------------ simulated worker groups replay exactly
CONNECT_SETTINGS = SimulationSettings(
    assignor="sessioned",
    session_timeout_ms=6_000,
    heartbeat_interval_ms=2_000,
    max_poll_interval_ms=6_000,
    group_initial_rebalance_delay_ms=0,
    scheduled_rebalance_max_delay_ms=0,
    join_round_trip_ms=2,
    sync_round_trip_ms=2,
    revoke_callback_ms=0,
    assignment_ms=2,
)


@pytest.mark.parametrize(
    ("connectors", "actions"),
    [
        # workers whose assignment starts and stops nothing log only "Joined group": the episode ends there
        (
            {"t": 1},
            (
                Join(0, "c1"),
                Join(0, "c2"),
                Join(0, "c3"),
                Join(0, "c4"),
                Leave(500, "c1"),
                Leave(2_500, "c2"),
            ),
        ),
        # a restarted worker logs "Rebalance started" before its first JoinGroup, under the same client id
        (
            {"t": 1, "u": 1},
            (Join(0, "c1"), Crash(0, "c1"), Join(0, "c2"), Join(7_000, "c1"), Leave(14_000, "c1")),
        ),
    ],
    ids=["empty-assignments-end-the-episode-at-the-sync", "restarted-worker-rebalance-started-line"],
)
def test_simulated_connect_group_replays_to_its_truth(connectors, actions):
    result = simulate(Timeline(topics=connectors, actions=actions), CONNECT_SETTINGS)
    assert not result.unobservable
    differences = table_differences(result.truth, replay_events(result.events, topics=connectors))
    assert not differences, "\n".join(differences)
