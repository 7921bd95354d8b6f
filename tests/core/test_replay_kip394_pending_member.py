"""KIP-394 pending members in the consumers' logs alone (no broker line, issue 12): a JoinGroup without a
member id only creates a pending member (MEMBER_ID_REQUIRED; GroupCoordinator.doNewMemberJoinGroup,
GroupMetadataManager.classicGroupJoinNewDynamicMember in 4.0), which triggers no rebalance, and the join
phase waits for it (GroupCoordinator.hasAllMembersJoined / ClassicGroup.hasAllMembersJoined: no pending
member left). The members' own clocks cannot order a last member's LeaveGroup and a new member's first
JoinGroup at the coordinator: the generation the new member joins decides whether the group emptied."""

from __future__ import annotations

import pytest

from tests.core.replay_helpers import ev, lone_consumer_closes_at_5000, run, run_split

REJOIN = "need to re-join with the given member-id: "


def last_member_leaves_as_a_new_one_joins(new_generation: int):
    """Consumer a-1 is the whole group (the leader's assignment lists only it) and closes at 5000; a new
    process, client b, sends its first JoinGroup 1 ms later and gets generation `new_generation`."""
    return [
        *lone_consumer_closes_at_5000(),
        ev(5001, "join_sent", client_id="b"),
        ev(5008, "join_requested", member_id="b-1", reason=REJOIN + "b-1", client_id="b"),
        ev(5008, "join_sent", member_id="b-1", client_id="b"),
        ev(5020, "join_response", generation_id=new_generation, member_id="b-1", leader_id="b-1",
           protocol_name="range", client_id="b"),
        ev(5021, "assignment_computed", generation_id=new_generation, member_id="b-1",
           assignment={"b-1": "t-0 t-1"}),
        ev(5030, "sync_response", generation_id=new_generation, member_id="b-1", partitions="t-0 t-1",
           client_id="b"),
        ev(5031, "partitions_assigned", member_id="b-1", partitions="t-0 t-1", client_id="b"),
    ]  # fmt: skip


def generations(out):
    return [(g["generation_id"], g["ended_empty"], g["members"], g["source"]) for g in out["generations"]]


def test_a_pending_member_that_joined_before_the_last_leave_keeps_the_group_from_emptying():
    """b's first JoinGroup reached the coordinator before a-1's LeaveGroup: the join phase the leave
    started waited for it, so generation 2 is b's, the group never was Empty (random:200, client views)."""
    out = run(last_member_leaves_as_a_new_one_joins(new_generation=2))
    assert generations(out) == [(1, False, ["a-1"], "observed"), (2, False, ["b-1"], "observed")]
    assert [ep["first_generation_id"] for ep in out["rebalance_episodes"]] == [1, 2]


def test_the_group_emptied_at_the_last_leave_when_the_new_member_joins_two_generations_on():
    """Generation 3 for b: the join phase a-1's LeaveGroup started completed with no member, as the
    empty generation 2 (GroupMetadata.initNextGeneration / ClassicGroup.initNextGeneration); no member
    logs it, so its row is inferred, and b's rebalance starts at its first JoinGroup."""
    out = run(last_member_leaves_as_a_new_one_joins(new_generation=3))
    assert generations(out) == [
        (1, False, ["a-1"], "observed"),
        (2, True, [], "inferred"),
        (3, False, ["b-1"], "observed"),
    ]
    episodes = out["rebalance_episodes"]
    assert [(ep["first_generation_id"], ep["started_at"] % 100_000) for ep in episodes] == [
        (1, 0),
        (2, 5000),
        (3, 5001),
    ]
    (day,) = out["group_daily_summary"]
    assert (day["stw_ms"], day["partitions_moved"]) == (0, 0)  # nobody waited across the empty group


@pytest.mark.parametrize("cut", [7, 8, 10])
def test_the_settling_of_an_emptied_group_survives_a_batch_boundary(cut):
    events = last_member_leaves_as_a_new_one_joins(new_generation=2)
    assert generations(run_split(events, [cut])) == generations(run(events))


def test_the_last_leave_with_nothing_after_it_empties_the_group_inferred():
    out = run(last_member_leaves_as_a_new_one_joins(new_generation=2)[:7])
    assert generations(out)[-1] == (2, True, [], "inferred")


def test_a_join_without_a_member_id_as_the_last_line_opens_no_rebalance():
    """A new process's first JoinGroup as the input's last line: under KIP-394 it created only a pending
    member; the rebalance its rejoin with the given member id starts is not in the input (random:175)."""
    events = last_member_leaves_as_a_new_one_joins(new_generation=2)[:5] + [
        ev(9000, "join_sent", client_id="c")
    ]
    out = run(events)
    assert [ep["first_generation_id"] for ep in out["rebalance_episodes"]] == [1]
    (day,) = out["group_daily_summary"]
    assert day["rebalances_open"] == 0


def test_a_join_answered_with_a_pending_member_id_by_the_coordinator_opens_no_rebalance():
    """Both sides (or the canonical events): a new consumer's first JoinGroup, then the coordinator's
    pending member for it, which expires without a second JoinGroup (the process died). The coordinator
    only reserved a member id (GroupCoordinator.doNewMemberJoinGroup / GroupMetadataManager
    .classicGroupJoinNewDynamicMember answer MEMBER_ID_REQUIRED): no rebalance, the coordinator's
    lines say so although the member's line came first (random:335)."""
    pending = {"state": "Empty", "pending": "true"}
    out = run(
        [
            ev(0, "join_sent", client_id="c1"),
            ev(18, "join_received", member_id="c1-1", client_id="c1",
               protocol_name="range", attributes=pending),
            ev(6018, "member_removed", member_id="c1-1", reason="session_timeout",
               attributes={"pending": "true"}),
        ]
    )  # fmt: skip
    assert out["rebalance_episodes"] == []
    (day,) = out["group_daily_summary"]
    assert day["rebalances"] == 0


@pytest.mark.parametrize("with_coordinator", [False, True])
def test_a_new_connect_workers_rebalance_started_and_first_join_open_no_rebalance_alone(with_coordinator):
    """A new Connect worker logs "Rebalance started" (WorkerCoordinator.onJoinPrepare) before its first
    JoinGroup; the coordinator only reserves a member id for it (KIP-394, MEMBER_ID_REQUIRED), and the
    process dies before rejoining with it: no rebalance, with or without the broker's lines
    (random:798)."""
    events = [
        ev(0, "join_requested", client_id="w1", source="w1", reason="rebalance started"),
        ev(0, "join_sent", client_id="w1", source="w1"),
    ]
    if with_coordinator:
        events += [
            ev(3, "join_received", member_id="w1-1", client_id="w1", protocol_name="sessioned",
               protocol_type="connect", attributes={"state": "Empty", "pending": "true"}),
            ev(45003, "member_removed", member_id="w1-1", reason="session_timeout",
               attributes={"pending": "true"}),
        ]  # fmt: skip
    out = run(events)
    assert out["rebalance_episodes"] == []
