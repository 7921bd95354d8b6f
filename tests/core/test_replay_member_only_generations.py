"""Members' logs only: every generation some member's line names has its row.

The coordinator completes a join phase by answering every member in it with the new generation id
(GroupCoordinator.onCompleteJoin; ClassicGroup / GroupMetadataManager.completeClassicGroupJoin in 4.0), and
the member logs "Successfully joined group with generation ..." when it reads that response
(AbstractCoordinator.JoinGroupResponseHandler), at its next poll: a member that paused after its JoinGroup
logs it late, after later generations completed. Such a line still shows that its generation existed."""

from __future__ import annotations

from tests.core.replay_helpers import ev, run, run_split


def generation_shown_only_by_a_late_join_response():
    """a-1 joins at 0 and pauses; generation 1 forms without any line; b-1 joins at 5000 and completes
    generation 2 alone (a-1's session expired meanwhile); a-1 logs its generation-1 response at 60000."""
    return [
        ev(0, "join_sent", member_id="a-1", client_id="a"),
        ev(5000, "join_sent", member_id="b-1", client_id="b"),
        ev(5010, "join_response", generation_id=2, member_id="b-1", leader_id="b-1", protocol_name="range",
           client_id="b"),
        ev(5011, "assignment_computed", generation_id=2, member_id="b-1", assignment={"b-1": "t-0 t-1"}),
        ev(5020, "sync_response", generation_id=2, member_id="b-1", partitions="t-0 t-1", client_id="b"),
        ev(5021, "partitions_assigned", member_id="b-1", partitions="t-0 t-1", client_id="b"),
        ev(60000, "join_response", generation_id=1, member_id="a-1", protocol_name="range", client_id="a"),
    ]  # fmt: skip


def generations(out):
    return sorted(
        (g["generation_id"], g["members"], g["leader_member_id"], g["source"]) for g in out["generations"]
    )


def test_a_generation_only_a_late_join_response_names_gets_an_inferred_row():
    """random:212, random:101: the late response is the only line naming generation 1. Its row is
    inferred: members, leader and instants are in no line (null)."""
    out = run(generation_shown_only_by_a_late_join_response())
    assert generations(out) == [(1, None, None, "inferred"), (2, ["b-1"], "b-1", "observed")]
    gen1 = next(g for g in out["generations"] if g["generation_id"] == 1)
    gen2 = next(g for g in out["generations"] if g["generation_id"] == 2)
    assert gen1["episode_id"] == gen2["episode_id"]  # it formed before the round that skipped it completed
    assert {gen1[k] for k in ("rebalance_started_at", "join_completed_at", "stabilized_at")} == {None}


def test_two_late_responses_of_one_generation_write_one_row():
    events = generation_shown_only_by_a_late_join_response()
    events.append(
        ev(61000, "join_response", generation_id=1, member_id="c-1", protocol_name="range", client_id="c")
    )
    out = run(events)
    assert [g["generation_id"] for g in out["generations"]].count(1) == 1


def test_the_unlogged_generation_survives_a_batch_boundary():
    events = generation_shown_only_by_a_late_join_response()
    assert generations(run_split(events, [4, 6])) == generations(run(events))


REJOIN = "need to re-join with the given member-id: "
CLOSING = "the consumer is being closed"


def group_empties_after_an_unlogged_generation():
    """random:925: a-1 alone in generation 1; b joins at 4000 (KIP-394) and logs no JoinGroup response
    (generation 2 forms without a line); a-1 and then b-1 close, the last LeaveGroup empties the group;
    a's new process a-2 gets generation 4."""
    return [
        ev(0, "join_sent", member_id="a-1", client_id="a"),
        ev(10, "join_response", generation_id=1, member_id="a-1", leader_id="a-1", protocol_name="range",
           client_id="a"),
        ev(11, "assignment_computed", generation_id=1, member_id="a-1", assignment={"a-1": "t-0"}),
        ev(20, "sync_response", generation_id=1, member_id="a-1", partitions="t-0", client_id="a"),
        ev(21, "partitions_assigned", member_id="a-1", partitions="t-0", client_id="a"),
        ev(4000, "join_sent", client_id="b"),
        ev(4016, "join_requested", member_id="b-1", reason=REJOIN + "b-1", client_id="b"),
        ev(4016, "join_sent", member_id="b-1", client_id="b"),
        ev(11000, "partitions_revoked", member_id="a-1", partitions="t-0", client_id="a"),
        ev(11000, "leave_sent", member_id="a-1", reason=CLOSING, client_id="a"),
        ev(11001, "leave_sent", member_id="b-1", reason=CLOSING, client_id="b"),
        ev(18500, "join_sent", client_id="a"),
        ev(18516, "join_requested", member_id="a-2", reason=REJOIN + "a-2", client_id="a"),
        ev(18516, "join_sent", member_id="a-2", client_id="a"),
        ev(18533, "join_response", generation_id=4, member_id="a-2", leader_id="a-2", protocol_name="range",
           client_id="a"),
        ev(18535, "assignment_computed", generation_id=4, member_id="a-2", assignment={"a-2": "t-0"}),
        ev(18555, "sync_response", generation_id=4, member_id="a-2", partitions="t-0", client_id="a"),
        ev(18555, "partitions_assigned", member_id="a-2", partitions="t-0", client_id="a"),
    ]  # fmt: skip


def test_the_generation_the_last_leave_empties_is_the_one_before_the_next_join():
    """The first JoinGroup into the Empty group completes the next generation (GroupCoordinator /
    ClassicGroup: PreparingRebalance from Empty, initNextGeneration), so generation 4 follows the Empty
    one: 3, not 2. Generation 2 formed with no member logging it: no row (no line names it)."""
    out = run(group_empties_after_an_unlogged_generation())
    rows = sorted((g["generation_id"], g["ended_empty"], g["source"]) for g in out["generations"])
    assert rows == [(1, False, "observed"), (3, True, "inferred"), (4, False, "observed")]


SYNC_REFUSED = "rebalance failed due to REBALANCE_IN_PROGRESS from SYNC_GROUP"


def late_response_while_a_newer_join_phase_is_open():
    """random:141: a-1 pauses after its JoinGroup; b-1 gets generation 1, c-1 joins, b-1 and c-1 get
    generation 2, whose SyncGroups are refused (nobody synced past generation 1); a-1 logs its
    generation-1 response at 200, while the join phase of generation 3 is open."""
    return [
        ev(0, "join_sent", member_id="a-1", client_id="a"),
        ev(0, "join_sent", member_id="b-1", client_id="b"),
        ev(10, "join_response", generation_id=1, member_id="b-1", protocol_name="range", client_id="b"),
        ev(20, "join_sent", member_id="c-1", client_id="c"),
        ev(30, "join_requested", member_id="b-1", reason=SYNC_REFUSED, client_id="b"),
        ev(30, "join_sent", member_id="b-1", client_id="b"),
        ev(100, "join_response", generation_id=2, member_id="b-1", protocol_name="range", client_id="b"),
        ev(100, "join_response", generation_id=2, member_id="c-1", leader_id="c-1", protocol_name="range",
           client_id="c"),
        ev(101, "assignment_computed", generation_id=2, member_id="c-1", assignment={"b-1": "t-0", "c-1": "t-1"}),
        ev(110, "join_requested", member_id="c-1", reason=SYNC_REFUSED, client_id="c"),
        ev(110, "join_sent", member_id="c-1", client_id="c"),
        ev(200, "join_response", generation_id=1, member_id="a-1", protocol_name="range", client_id="a"),
        ev(300, "join_response", generation_id=3, member_id="c-1", leader_id="c-1", protocol_name="range",
           client_id="c"),
        ev(300, "join_response", generation_id=3, member_id="b-1", protocol_name="range", client_id="b"),
        ev(301, "assignment_computed", generation_id=3, member_id="c-1", assignment={"b-1": "t-0", "c-1": "t-1"}),
        ev(310, "sync_response", generation_id=3, member_id="c-1", partitions="t-1", client_id="c"),
        ev(310, "sync_response", generation_id=3, member_id="b-1", partitions="t-0", client_id="b"),
    ]  # fmt: skip


def test_a_late_response_older_than_a_generation_members_joined_is_not_a_new_round():
    """Generation ids only grow (GroupMetadata / ClassicGroup.initNextGeneration): b-1 and c-1, still in
    the group, joined generation 2, so a-1's generation-1 response belongs to a join phase that completed
    long ago, not to the one open now (which completes as generation 3)."""
    out = run(late_response_while_a_newer_join_phase_is_open())
    assert sorted(g["generation_id"] for g in out["generations"]) == [1, 2, 3]


def last_member_removed_then_rejoins(rejoined_generation: int):
    """a-1, the group's only member (its own assignment lists no one else), stalls; its log shows its
    partitions lost at 10000 (its session expired meanwhile), then it joins again without a member id
    and gets `rejoined_generation` as a-2."""
    return [
        ev(0, "join_sent", member_id="a-1", client_id="a"),
        ev(10, "join_response", generation_id=1, member_id="a-1", leader_id="a-1", protocol_name="range",
           client_id="a"),
        ev(11, "assignment_computed", generation_id=1, member_id="a-1", assignment={"a-1": "t-0"}),
        ev(20, "sync_response", generation_id=1, member_id="a-1", partitions="t-0", client_id="a"),
        ev(21, "partitions_assigned", member_id="a-1", partitions="t-0", client_id="a"),
        ev(10000, "partitions_lost", member_id="a-1", partitions="t-0", client_id="a"),
        ev(10008, "join_sent", client_id="a"),
        ev(10040, "join_requested", member_id="a-2", reason=REJOIN + "a-2", client_id="a"),
        ev(10040, "join_sent", member_id="a-2", client_id="a"),
        ev(13050, "join_response", generation_id=rejoined_generation, member_id="a-2", leader_id="a-2",
           protocol_name="range", client_id="a"),
        ev(13052, "assignment_computed", generation_id=rejoined_generation, member_id="a-2",
           assignment={"a-2": "t-0"}),
        ev(13070, "sync_response", generation_id=rejoined_generation, member_id="a-2", partitions="t-0",
           client_id="a"),
        ev(13070, "partitions_assigned", member_id="a-2", partitions="t-0", client_id="a"),
    ]  # fmt: skip


def test_the_removal_of_the_last_member_empties_the_group_as_a_rebalance_of_its_own():
    """random:651: the rejoin gets generation 3, so the removal's join phase completed without it, Empty
    (GroupCoordinator.onExpireHeartbeat -> removeMemberAndUpdateGroup; ClassicGroup in 4.0): generation
    2, inferred, its rebalance at the lost line (the latest the removal can be)."""
    out = run(last_member_removed_then_rejoins(rejoined_generation=3))
    rows = sorted((g["generation_id"], g["ended_empty"], g["source"]) for g in out["generations"])
    assert rows == [(1, False, "observed"), (2, True, "inferred"), (3, False, "observed")]
    episodes = sorted(out["rebalance_episodes"], key=lambda r: r["started_at"])
    assert [(ep["first_generation_id"], ep["started_at"] % 100_000) for ep in episodes] == [
        (1, 0),
        (2, 10000),
        (3, 10008),
    ]
    assert "heartbeat expiration" in episodes[1]["reason"]


def test_a_rejoin_that_gets_the_next_generation_joined_the_removals_rebalance():
    out = run(last_member_removed_then_rejoins(rejoined_generation=2))
    assert sorted(g["generation_id"] for g in out["generations"]) == [1, 2]
    episodes = sorted(out["rebalance_episodes"], key=lambda r: r["started_at"])
    assert [(ep["first_generation_id"], ep["rounds"]) for ep in episodes] == [(1, 1), (2, 1)]


def test_the_removal_survives_a_batch_boundary():
    events = last_member_removed_then_rejoins(rejoined_generation=3)
    assert generations(run_split(events, [6, 8])) == generations(run(events))


def member_removed_while_another_stays_silent(rejoined_generation: int | None):
    """random:440: a-1 leads a-1 and b-1 in generation 1; b-1's log stops (it died silently), a-1
    stalls; a-1's log shows its partitions lost at 10000 (the coordinator removed it: its session
    expired), then it joins again without a member id as a-2 and gets `rejoined_generation` (None: its
    log ends before any response)."""
    events = [
        ev(0, "join_sent", member_id="a-1", client_id="a"),
        ev(0, "join_sent", member_id="b-1", client_id="b"),
        ev(10, "join_response", generation_id=1, member_id="a-1", leader_id="a-1", protocol_name="range",
           client_id="a"),
        ev(10, "join_response", generation_id=1, member_id="b-1", protocol_name="range", client_id="b"),
        ev(11, "assignment_computed", generation_id=1, member_id="a-1", assignment={"a-1": "t-0", "b-1": "t-1"}),
        ev(20, "sync_response", generation_id=1, member_id="a-1", partitions="t-0", client_id="a"),
        ev(20, "partitions_assigned", member_id="a-1", partitions="t-0", client_id="a"),
        ev(21, "sync_response", generation_id=1, member_id="b-1", partitions="t-1", client_id="b"),
        ev(21, "partitions_assigned", member_id="b-1", partitions="t-1", client_id="b"),
        ev(10000, "partitions_lost", member_id="a-1", partitions="t-0", client_id="a"),
        ev(10001, "join_sent", client_id="a"),
        ev(10040, "join_requested", member_id="a-2", reason=REJOIN + "a-2", client_id="a"),
        ev(10040, "join_sent", member_id="a-2", client_id="a"),
    ]  # fmt: skip
    if rejoined_generation is not None:
        events += [
            ev(13050, "join_response", generation_id=rejoined_generation, member_id="a-2", leader_id="a-2",
               protocol_name="range", client_id="a"),
            ev(13052, "assignment_computed", generation_id=rejoined_generation, member_id="a-2",
               assignment={"a-2": "t-0 t-1"}),
            ev(13070, "sync_response", generation_id=rejoined_generation, member_id="a-2", partitions="t-0 t-1",
               client_id="a"),
            ev(13070, "partitions_assigned", member_id="a-2", partitions="t-0 t-1", client_id="a"),
        ]  # fmt: skip
    return events


def episodes_of(out):
    episodes = sorted(out["rebalance_episodes"], key=lambda r: r["started_at"])
    return [(ep["started_at"] % 100_000, ep["rounds"], ep["source"]) for ep in episodes]


def test_a_removal_no_line_shows_is_a_rebalance_of_its_own_when_the_rejoin_skips_a_generation():
    """GroupCoordinator.onExpireHeartbeat -> removeMemberAndUpdateGroup -> maybePrepareRebalance (Stable,
    another member left): the removal started a rebalance although b-1's log shows none; a-2 getting
    generation 3 means that join phase completed without it (generation 2, no line names it)."""
    out = run(member_removed_while_another_stays_silent(rejoined_generation=3))
    assert episodes_of(out) == [(0, 1, "observed"), (10000, 1, "inferred"), (10001, 1, "inferred")]
    assert (
        "heartbeat expiration"
        in sorted(out["rebalance_episodes"], key=lambda r: r["started_at"])[1]["reason"]
    )
    assert sorted(g["generation_id"] for g in out["generations"]) == [1, 3]


def test_a_rejoin_that_gets_the_next_generation_joined_the_unseen_removals_rebalance():
    out = run(member_removed_while_another_stays_silent(rejoined_generation=2))
    assert episodes_of(out) == [(0, 1, "observed"), (10000, 1, "inferred")]


def test_an_unanswered_rejoin_after_an_unseen_removal_leaves_both_rebalances_inferred():
    out = run(member_removed_while_another_stays_silent(rejoined_generation=None))
    assert episodes_of(out) == [(0, 1, "observed"), (10000, 1, "inferred"), (10001, 1, "inferred")]


def test_the_unseen_removal_survives_a_batch_boundary():
    events = member_removed_while_another_stays_silent(rejoined_generation=3)
    assert episodes_of(run_split(events, [10, 12])) == episodes_of(run(events))
