"""Kafka Connect groups' episodes where a view cannot see them whole (issue 12).

Broker-only replay of a Kafka Connect group (KIP-415, IncrementalCooperativeAssignor): the coordinator
never sees what a round revoked, so it cannot know whether the next round is the revoking workers'
follow-up (DistributedHerder.handleRebalanceCompleted rejoins once revoked work stopped, or when the
scheduled rebalance delay expires) that a LeaveGroup joined, or a new rebalance. The replay marks both
episodes inferred instead of a confident split (issue 12, fidelity case random:83)."""

from __future__ import annotations

import pytest

from benchmarks import fidelity as f


@pytest.fixture(scope="module")
def rows():
    return f.run_cases(["random:83"])


@pytest.mark.parametrize("view", ["broker-2.x", "broker-3.x", "broker-4.x"])
def test_a_removal_after_a_connect_round_of_unknown_revocations_is_flagged_not_split(rows, view):
    (rounds,) = [r for r in rows if r.view == view and r.measure == "rounds"]
    assert rounds.cls != f.WRONG, rounds.detail


def test_the_last_connect_worker_leaving_empties_the_group_in_member_only_logs():
    """Workers' logs only: a Connect leader logs no assignment line (WorkerCoordinator), so the generation's
    members are the workers whose own lines show it. When the last of them sends LeaveGroup
    (WorkerCoordinator.close -> AbstractCoordinator.maybeLeaveGroup) the join phase has no member to wait
    for and completes Empty (GroupCoordinator.onCompleteJoin; ClassicGroup in 4.0): an inferred Empty
    generation at the end of the input, not a rebalance left open (fidelity random:18, events-client)."""
    from tests.core.replay_helpers import ev, run

    def worker(ts, event_type, **fields):
        return ev(ts, event_type, client_id="w1", protocol_type="connect", **fields)

    out = run(
        [
            worker(0, "join_sent"),
            worker(
                5,
                "join_response",
                generation_id=1,
                member_id="w1-A",
                leader_id="w1-A",
                protocol_name="sessioned",
            ),
            worker(8, "sync_response", generation_id=1, member_id="w1-A", leader_id="w1-A"),
            worker(5000, "leave_sent", member_id="w1-A", reason="the consumer is being closed"),
        ]  # fmt: skip
    )
    rows = [(g["generation_id"], g["ended_empty"], g["source"]) for g in out["generations"]]
    # generation 1 is inferred too: a worker whose log is not in the input may have been in it (a Connect
    # worker's Assignment line gives its own connectors and tasks only, the leader lists no members)
    assert rows == [(1, False, "inferred"), (2, True, "inferred")]
    (day,) = out["group_daily_summary"]
    assert day["rebalances_open"] == 0
