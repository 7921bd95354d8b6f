"""The classic coordinator model: transitions table, generations, leader, static membership, anomalies."""

from __future__ import annotations

import json

import pytest

from rebalance_core.classic.coordinator import VALID_PREVIOUS_STATES, ClassicGroup, GroupState
from tests.core.replay_helpers import ev

S = GroupState


def apply_all(group: ClassicGroup, *events) -> ClassicGroup:
    for e in events:
        group.apply(e)
    return group


def rules(group: ClassicGroup) -> list[str]:
    return [a.rule for a in group.anomalies]


def test_transition_table_is_kafkas():
    assert VALID_PREVIOUS_STATES[S.EMPTY] == {S.PREPARING_REBALANCE}
    assert VALID_PREVIOUS_STATES[S.PREPARING_REBALANCE] == {S.STABLE, S.COMPLETING_REBALANCE, S.EMPTY}
    assert VALID_PREVIOUS_STATES[S.COMPLETING_REBALANCE] == {S.PREPARING_REBALANCE}
    assert VALID_PREVIOUS_STATES[S.STABLE] == {S.COMPLETING_REBALANCE}
    assert VALID_PREVIOUS_STATES[S.DEAD] == set(S)


@pytest.mark.parametrize(
    ("name", "state"),
    [
        ("AwaitingSync", S.COMPLETING_REBALANCE),
        ("completingrebalance", S.COMPLETING_REBALANCE),
        ("Empty", S.EMPTY),
    ],
)
def test_state_names_parse_with_the_old_alias(name, state):
    assert GroupState.parse(name) is state


@pytest.mark.parametrize("start", list(GroupState))
@pytest.mark.parametrize("target", list(GroupState))
def test_transition_records_invalid_moves_and_moves_anyway(start, target):
    group = ClassicGroup(state=start)
    valid = group.transition(target)
    assert valid == (start in VALID_PREVIOUS_STATES[target])
    assert group.state is target
    assert rules(group) == ([] if valid else ["invalid_transition"])


def test_unknown_state_accepts_anything():
    group = ClassicGroup()
    assert group.transition(S.STABLE) and not group.anomalies


def test_join_rebalance_and_generations():
    group = apply_all(
        ClassicGroup(),
        ev(0, "join_received", member_id="a", attributes={"state": "Empty"}),
        ev(1, "rebalance_prepared", generation_id=0),
        ev(2, "join_completed", generation_id=1, leader_id="a", member_count=1),
        ev(3, "assignment_received", generation_id=1, leader_id="a"),
    )
    assert (group.state, group.generation_id, group.leader_id) == (S.STABLE, 1, "a")
    assert group.membership_known and list(group.members) == ["a"]
    assert not group.anomalies


def test_generation_gap_is_an_anomaly_and_resynchronises():
    group = apply_all(
        ClassicGroup(state=S.STABLE, generation_id=4),
        ev(0, "rebalance_prepared", generation_id=4),
        ev(1, "join_completed", generation_id=7, leader_id="a"),
    )
    assert rules(group) == ["generation_mismatch"]
    assert (group.state, group.generation_id) == (S.COMPLETING_REBALANCE, 7)


def test_empty_generation_counts_then_dead_restarts_at_zero():
    """EXPECTED.md 04: generations 1, 2 (empty), 2 (Dead), 0, 1."""
    group = apply_all(
        ClassicGroup(state=S.STABLE, generation_id=1, members={}, membership_known=False),
        ev(0, "member_removed", member_id="x", reason="session_timeout"),
        ev(3, "rebalance_prepared", generation_id=1),
        ev(4, "group_empty", generation_id=2),
        ev(5, "group_dead", generation_id=2),
    )
    assert (group.state, group.generation_id) == (S.DEAD, 2)
    apply_all(
        group,
        ev(6, "join_received", member_id="y", attributes={"state": "Empty"}),
        ev(7, "rebalance_prepared", generation_id=0),
        ev(8, "join_completed", generation_id=1, leader_id="y", member_count=1),
        ev(9, "assignment_received", generation_id=1, leader_id="y", member_count=1),
    )
    assert (group.state, group.generation_id, list(group.members)) == (S.STABLE, 1, ["y"])
    assert not group.anomalies


def test_leader_is_first_joiner_and_is_rechosen_when_it_leaves():
    group = apply_all(
        ClassicGroup(),
        ev(0, "join_received", member_id="a", attributes={"state": "Empty"}),
        ev(0, "join_received", member_id="b"),
        ev(0, "join_received", member_id="c"),
    )
    assert group.leader_id == "a"
    group.apply(ev(1, "member_removed", member_id="a", reason="leave_group"))
    assert group.leader_id == "b"


def test_static_member_replacement_keeps_place_and_leadership():
    group = apply_all(
        ClassicGroup(),
        ev(0, "join_received", member_id="i1-A", group_instance_id="i1", attributes={"state": "Empty"}),
        ev(0, "join_received", member_id="i2-A", group_instance_id="i2"),
        ev(
            1,
            "static_member_replaced",
            group_instance_id="i1",
            member_id="i1-B",
            attributes={"old_member_id": "i1-A"},
        ),
    )
    assert list(group.members) == ["i1-B", "i2-A"]
    assert group.leader_id == "i1-B" and group.static_members == {"i1": "i1-B", "i2": "i2-A"}
    # a join with the instance id and yet another member id fences the previous one as well
    group.apply(ev(2, "join_received", member_id="i2-C", group_instance_id="i2"))
    assert group.static_members["i2"] == "i2-C" and "i2-A" not in group.members


def test_unknown_member_only_flagged_when_membership_is_known():
    mid_life = apply_all(ClassicGroup(), ev(0, "member_removed", member_id="ghost", reason="leave_group"))
    assert not mid_life.anomalies
    known = apply_all(
        ClassicGroup(),
        ev(0, "join_received", member_id="a", attributes={"state": "Empty"}),
        ev(1, "member_removed", member_id="ghost", reason="leave_group"),
    )
    assert rules(known) == ["unknown_member"]


def test_state_mismatch_with_the_logged_state():
    group = apply_all(
        ClassicGroup(state=S.STABLE, generation_id=3),
        ev(0, "join_received", member_id="a", attributes={"state": "PreparingRebalance"}),
    )
    assert rules(group) == ["state_mismatch"] and group.state is S.PREPARING_REBALANCE


def test_repeated_preparing_is_invalid():
    group = apply_all(
        ClassicGroup(state=S.STABLE, generation_id=3),
        ev(0, "rebalance_prepared", generation_id=3),
        ev(1, "rebalance_prepared", generation_id=3),
    )
    assert rules(group) == ["invalid_transition"]


def test_snapshot_round_trip():
    group = apply_all(
        ClassicGroup(),
        ev(
            0,
            "join_received",
            member_id="a",
            group_instance_id="i",
            attributes={"state": "Empty", "session_timeout_ms": 45000},
        ),
        ev(1, "rebalance_prepared", generation_id=0),
    )
    again = ClassicGroup.from_snapshot(json.loads(json.dumps(group.snapshot())))
    assert again == group
    assert again.session_timeout_of("a") == 45000


def test_static_replacement_takes_the_new_joingroup_metadata():
    group = apply_all(
        ClassicGroup(),
        ev(
            0,
            "join_received",
            member_id="i1-A",
            group_instance_id="i1",
            subscription="t u",
            attributes={"state": "Empty"},
        ),
        ev(
            1,
            "static_member_replaced",
            group_instance_id="i1",
            member_id="i1-B",
            subscription="t",
            attributes={"old_member_id": "i1-A", "session_timeout_ms": 9000},
        ),
    )
    assert group.members["i1-B"].subscription == ["t"]
    assert group.session_timeout_of("i1-B") == 9000
