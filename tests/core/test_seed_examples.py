"""The seed articles' worked examples (/work/shared/seeds/000_*.txt), simulated from the scenarios in
conf/simulations/ (topic t, partitions 0..5 stand for P1..P6; in the KIP-415 stories, a Kafka Connect
worker group, connector c's tasks c-0..c-5). Each test checks the outcome the article describes and that
replaying the simulated events reproduces the simulator's ground truth."""

from __future__ import annotations

import pytest

from rebalance_core.simulate import SimulationResult
from schemas.events import EventType, RemovalReason
from tests.core.sim_helpers import (
    events_of,
    member_names,
    partitions,
    replay_events,
    run_scenario,
    table_differences,
)


def assignments_by_generation(result: SimulationResult) -> dict[int, dict[str, set]]:
    """generation -> client name -> partitions, from the leader's assignments (assignment_received)."""
    names = member_names(result.events)
    out = {}
    for e in events_of(result.events, EventType.ASSIGNMENT_RECEIVED):
        out[e.generation_id] = {names[m]: set(tps) for m, tps in e.assignment.items()}
    return out


def episode_of(result: SimulationResult, generation: int) -> dict:
    (row,) = [g for g in result.truth["generations"] if g["generation_id"] == generation]
    (episode,) = [e for e in result.truth["rebalance_episodes"] if e["episode_id"] == row["episode_id"]]
    return episode


def assert_replay_reproduces_truth(result: SimulationResult) -> None:
    assert not result.unobservable
    differences = table_differences(result.truth, replay_events(result.events))
    assert not differences, "\n".join(differences)


@pytest.fixture(scope="module")
def eager_join():
    return run_scenario("01_eager_join.yaml")


@pytest.fixture(scope="module")
def cooperative_join():
    return run_scenario("02_cooperative_join.yaml")


@pytest.fixture(scope="module")
def kip415_bounce():
    return run_scenario("03_kip415_bounce.yaml")


@pytest.fixture(scope="module")
def kip415_leaves():
    return run_scenario("04_kip415_leaves.yaml")


@pytest.fixture(scope="module")
def kip415_join():
    return run_scenario("06_kip415_join.yaml")


@pytest.fixture(scope="module")
def static_restart():
    return run_scenario("05_static_restart.yaml")


# ----------------------------------------------------------------------------------- (1) eager
def test_eager_join_everyone_revokes_everything_behind_one_barrier(eager_join):
    result, names = eager_join, member_names(eager_join.events)
    by_gen = assignments_by_generation(result)
    assert by_gen[1] == {"c1": partitions(0, 1, 2), "c2": partitions(3, 4, 5)}
    assert set(by_gen[2]) == {"c1", "c2", "c3"}
    # onJoinPrepare (eager): c1 and c2 each revoke all they own before rejoining
    revoked = {
        names[e.member_id]: set(e.partitions) for e in events_of(result.events, EventType.PARTITIONS_REVOKED)
    }
    assert revoked == {"c1": partitions(0, 1, 2), "c2": partitions(3, 4, 5)}
    episode = episode_of(result, 2)
    assert episode["rounds"] == 1 and episode["rebalance_protocol"] == "eager"
    assert episode["partitions_revoked"] == 6
    moves = [m for m in result.truth["partition_movements"] if m["episode_id"] == episode["episode_id"]]
    assert len(moves) == 6
    # one barrier: nothing is consumed from the last stop to the first start again
    last_stop = max(m["revoked_at"] for m in moves)
    first_start = min(m["assigned_at"] for m in moves)
    assert episode["stw_ms"] == first_start - last_stop > 0
    assert_replay_reproduces_truth(result)


# ----------------------------------------------------------------------------- (2) cooperative
def test_cooperative_join_revokes_only_what_moves_in_two_rounds(cooperative_join):
    result, names = cooperative_join, member_names(cooperative_join.events)
    by_gen = assignments_by_generation(result)
    before = max(g for g, a in by_gen.items() if set(a) == {"c1", "c2"})
    assert by_gen[before] == {"c1": partitions(0, 1, 2), "c2": partitions(3, 4, 5)}
    round1, round2 = before + 1, before + 2
    assert by_gen[round1] == {"c1": partitions(0, 1), "c2": partitions(3, 4), "c3": set()}
    assert by_gen[round2] == {"c1": partitions(0, 1), "c2": partitions(3, 4), "c3": partitions(2, 5)}
    episode = episode_of(result, round1)
    assert episode == episode_of(result, round2) and episode["rounds"] == 2
    revoked = [
        (names[e.member_id], set(e.partitions))
        for e in events_of(result.events, EventType.PARTITIONS_REVOKED)
        if e.ts >= episode["started_at"]
    ]
    assert sorted(revoked, key=str) == [("c1", partitions(2)), ("c2", partitions(5))]
    moves = [m for m in result.truth["partition_movements"] if m["episode_id"] == episode["episode_id"]]
    assert {(m["partition"], names[m["from_member_id"]], names[m["to_member_id"]]) for m in moves} == {
        (2, "c1", "c3"),
        (5, "c2", "c3"),
    }
    assert episode["stw_ms"] == 0  # c1 and c2 never stop what they keep
    assert_replay_reproduces_truth(result)


# ------------------------------------------------------------------- (3) KIP-415, Kafka Connect
# scheduled.rebalance.max.delay.ms is Connect's IncrementalCooperativeAssignor (workers, connector c's
# tasks c-0..c-5 for P1..P6), not a consumer group's: rebalance_core.classic.connect.
def tasks(*numbers: int) -> set:
    return partitions(*numbers, topic="c")


def _delays(result: SimulationResult, generation: int) -> set[int]:
    """The delay every worker's "Joined group at generation N ... with rebalance delay: D" carries."""
    return {
        int(e.attributes.get("delay_ms", 0))
        for e in events_of(result.events, EventType.SYNC_RESPONSE, generation_id=generation)
    }


def _revoked(result: SimulationResult, generation: int) -> dict[str, str]:
    names = member_names(result.events)
    return {
        names[e.member_id]: e.attributes["revoked"]
        for e in events_of(result.events, EventType.SYNC_RESPONSE, generation_id=generation)
        if e.attributes["revoked"]
    }


def _delay_started(result: SimulationResult) -> tuple[int, int]:
    """The generation the lost worker disappeared from (its session expired) and the next one."""
    names = member_names(result.events)
    (removed,) = events_of(result.events, EventType.MEMBER_REMOVED)
    assert removed.reason == RemovalReason.SESSION_TIMEOUT.value and names[removed.member_id] == "c2"
    (prepared,) = [e for e in events_of(result.events, EventType.REBALANCE_PREPARED) if e.ts == removed.ts]
    return prepared.generation_id, prepared.generation_id + 1


def test_kip415_connect_join_revokes_the_excess_then_hands_it_to_the_new_worker(kip415_join):
    result, names = kip415_join, member_names(kip415_join.events)
    by_gen = assignments_by_generation(result)
    before = max(g for g, a in by_gen.items() if set(a) == {"c1", "c2"})
    assert [len(by_gen[before][w]) for w in ("c1", "c2")] == [3, 3]
    round1, round2 = before + 1, before + 2
    # round 1: load-balancing revocations, one task from each of c1 and c2; c3 gets nothing yet
    revoked = _revoked(result, round1)
    assert sorted(revoked) == ["c1", "c2"] and all("," not in r for r in revoked.values())
    assert by_gen[round1]["c3"] == set() and len(by_gen[round1]["c1"]) == len(by_gen[round1]["c2"]) == 2
    assert _delays(result, round1) == {0}  # nothing lost: no delay
    # round 2, at once (the revoking workers rejoin): the revoked tasks go to c3
    assert by_gen[round2]["c3"] == by_gen[before]["c1"] - by_gen[round1]["c1"] | (
        by_gen[before]["c2"] - by_gen[round1]["c2"]
    )
    assert by_gen[round2]["c1"] == by_gen[round1]["c1"] and by_gen[round2]["c2"] == by_gen[round1]["c2"]
    assert not _revoked(result, round2)
    episode = episode_of(result, round1)
    assert episode == episode_of(result, round2) and episode["rounds"] == 2
    moves = [m for m in result.truth["partition_movements"] if m["episode_id"] == episode["episode_id"]]
    assert sorted(names[m["to_member_id"]] for m in moves) == ["c3", "c3"]
    assert {names[m["from_member_id"]] for m in moves} == {"c1", "c2"}
    assert episode["stw_ms"] == 0  # c1 and c2 never stop what they keep
    assert_replay_reproduces_truth(result)


def test_kip415_connect_bounce_within_the_delay_gives_the_worker_its_tasks_back(kip415_bounce):
    result, names = kip415_bounce, member_names(kip415_bounce.events)
    by_gen = assignments_by_generation(result)
    before, round1 = _delay_started(result)
    kept = {w: by_gen[before][w] for w in ("c1", "c3")}
    lost = by_gen[before]["c2"]
    assert len(lost) == 2 and set().union(*kept.values(), lost) == tasks(*range(6))
    round2, round3 = round1 + 1, round1 + 2
    # round 1: c2's tasks are lost and stay unassigned for the full delay; nobody revokes anything
    assert by_gen[round1] == kept
    assert _delays(result, round1) == {60_000} and not _revoked(result, round1)
    # round 2: c2 is back (a new member id) and gets nothing yet; the remaining delay
    assert by_gen[round2] == {**kept, "c2": set()}
    computed = {e.generation_id: e.ts for e in events_of(result.events, EventType.ASSIGNMENT_RECEIVED)}
    assert _delays(result, round2) == {60_000 - (computed[round2] - computed[round1])}
    # round 3, when the delay expires (every worker rejoins): the lost tasks go to c2, seen empty meanwhile
    assert computed[round3] >= computed[round1] + 60_000
    assert by_gen[round3] == {**kept, "c2": lost}
    assert _delays(result, round3) == {0} and not _revoked(result, round3)
    episode = episode_of(result, round1)
    assert episode == episode_of(result, round3) and episode["rounds"] == 3
    moves = [m for m in result.truth["partition_movements"] if m["episode_id"] == episode["episode_id"]]
    assert {(m["topic"], m["partition"]) for m in moves} == {(tp.topic, tp.partition) for tp in lost}
    assert {(names[m["to_member_id"]], m["stop_cause"]) for m in moves} == {("c2", "member_failed")}
    assert episode["stw_ms"] == 0  # c1 and c3 never stop
    assert_replay_reproduces_truth(result)


def test_kip415_connect_permanent_leave_reassigns_the_lost_tasks_when_the_delay_expires(kip415_leaves):
    result, names = kip415_leaves, member_names(kip415_leaves.events)
    by_gen = assignments_by_generation(result)
    before, round1 = _delay_started(result)
    lost = by_gen[before]["c2"]
    assert by_gen[round1] == {w: by_gen[before][w] for w in ("c1", "c3")}
    assert _delays(result, round1) == {60_000}
    # round 2, when the delay expires: no candidate worker came, the lost tasks are assigned as new
    round2 = max(by_gen)
    assert round2 == round1 + 1 and set(by_gen[round2]) == {"c1", "c3"}
    computed = {e.generation_id: e.ts for e in events_of(result.events, EventType.ASSIGNMENT_RECEIVED)}
    assert computed[round2] >= computed[round1] + 60_000
    for w in ("c1", "c3"):
        assert by_gen[round2][w] > by_gen[before][w] and len(by_gen[round2][w]) == 3
    assert _delays(result, round2) == {0}
    episode = episode_of(result, round2)
    assert episode == episode_of(result, round1) and episode["rounds"] == 2
    moves = [m for m in result.truth["partition_movements"] if m["episode_id"] == episode["episode_id"]]
    assert {(m["topic"], m["partition"]) for m in moves} == {(tp.topic, tp.partition) for tp in lost}
    assert {names[m["from_member_id"]] for m in moves} == {"c2"}
    assert {names[m["to_member_id"]] for m in moves} == {"c1", "c3"}
    assert_replay_reproduces_truth(result)


# --------------------------------------------------------------------------------- (5) static
def test_static_member_restart_within_session_timeout_does_not_rebalance(static_restart):
    result, names = static_restart, member_names(static_restart.events)
    start = result.events[0].ts  # c1's first JoinGroup, at the scenario's start
    (revoke,) = [e for e in events_of(result.events, EventType.PARTITIONS_REVOKED) if e.ts >= start + 60_000]
    restart_at = revoke.ts
    assert revoke.partitions == tuple(sorted(partitions(3, 4))) and names[revoke.member_id] == "c2"
    assert not events_of(result.events, EventType.LEAVE_SENT)
    assert not [e for e in events_of(result.events, EventType.REBALANCE_PREPARED) if e.ts > restart_at]
    (replaced,) = events_of(result.events, EventType.STATIC_MEMBER_REPLACED)
    assert replaced.group_instance_id == "c2" and replaced.attributes["old_member_id"] == revoke.member_id
    (sync,) = [e for e in events_of(result.events, EventType.SYNC_RESPONSE) if e.ts > restart_at]
    assert sync.member_id == replaced.member_id and set(sync.partitions) == partitions(3, 4)
    assert sync.generation_id == max(g["generation_id"] for g in result.truth["generations"])
    # P4,P5 idle only while c2 was down (plus its JoinGroup and SyncGroup round trips)
    moves = [m for m in result.truth["partition_movements"] if m["revoked_at"] >= restart_at]
    assert sorted(m["partition"] for m in moves) == [3, 4]
    for m in moves:
        assert m["episode_id"] is None and not m["moved"] and m["to_member_id"] == replaced.member_id
        assert 20_000 <= m["unavailable_ms"] <= 20_000 + 100
    assert_replay_reproduces_truth(result)
