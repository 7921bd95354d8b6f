"""Broker-only replay of a Kafka Connect group (KIP-415, IncrementalCooperativeAssignor): the coordinator
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
