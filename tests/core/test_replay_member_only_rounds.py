"""Members' logs only: the rebalances and rounds a client log carries, and the ones it cannot show.

A member that leaves during a join phase in which it is alone empties the group: the coordinator removes
it (GroupCoordinator.removeMemberAndUpdateGroup, PreparingRebalance; ClassicGroup in 4.0) and the join
phase completes with no member, as an Empty generation (GroupMetadata.initNextGeneration). Within
group.initial.rebalance.delay.ms (InitialDelayedJoin) a rejoin still joins the same join phase: the
generation the next JoinGroup response names decides. A log ending in a join phase (a member that stopped
after its JoinGroup: AbstractCoordinator logs nothing until the response) cannot show what followed."""

from __future__ import annotations

from tests.core.replay_helpers import ev, run, run_split

REJOIN = "need to re-join with the given member-id: "
CLOSING = "the consumer is being closed"


def first_member_leaves_during_its_first_join(rejoined_generation: int):
    """Consumer c starts the group (KIP-394: JoinGroup, then again with its member id c-1), closes at
    2000 before any JoinGroup response, starts again as c-2 at 5000 and gets `rejoined_generation`."""
    return [
        ev(0, "join_sent", client_id="c"),
        ev(9, "join_requested", member_id="c-1", reason=REJOIN + "c-1", client_id="c"),
        ev(9, "join_sent", member_id="c-1", client_id="c"),
        ev(2000, "leave_sent", member_id="c-1", reason=CLOSING, client_id="c"),
        ev(5000, "join_sent", client_id="c"),
        ev(5009, "join_requested", member_id="c-2", reason=REJOIN + "c-2", client_id="c"),
        ev(5009, "join_sent", member_id="c-2", client_id="c"),
        ev(8020, "join_response", generation_id=rejoined_generation, member_id="c-2", leader_id="c-2",
           protocol_name="range", client_id="c"),
        ev(8021, "assignment_computed", generation_id=rejoined_generation, member_id="c-2",
           assignment={"c-2": "t-0 t-1"}),
        ev(8030, "sync_response", generation_id=rejoined_generation, member_id="c-2", partitions="t-0 t-1",
           client_id="c"),
        ev(8031, "partitions_assigned", member_id="c-2", partitions="t-0 t-1", client_id="c"),
    ]  # fmt: skip


def generations(out):
    return [(g["generation_id"], g["ended_empty"], g["members"], g["source"]) for g in out["generations"]]


def rounds(out):
    episodes = sorted(out["rebalance_episodes"], key=lambda r: r["started_at"])
    return [(ep["first_generation_id"], ep["rounds"], ep["source"]) for ep in episodes]


def test_the_only_member_leaving_its_join_phase_empties_the_group_as_a_rebalance_of_its_own():
    """random:95: c-2 gets generation 2, so c-1's join phase completed without it as the Empty
    generation 1 (inferred: no member logs it), and c-2's rebalance is the next one."""
    out = run(first_member_leaves_during_its_first_join(rejoined_generation=2))
    assert generations(out) == [(1, True, [], "inferred"), (2, False, ["c-2"], "observed")]
    assert [(g, n) for g, n, _ in rounds(out)] == [(1, 1), (2, 1)]
    assert [
        ep["started_at"] % 100_000 for ep in sorted(out["rebalance_episodes"], key=lambda r: r["started_at"])
    ] == [
        0,
        5000,
    ]


def test_a_rejoin_within_the_initial_delay_joins_the_same_join_phase():
    """Generation 1 for c-2: the join phase c-1 left had not completed (InitialDelayedJoin waits out
    group.initial.rebalance.delay.ms, a leave does not complete it), so nothing emptied: one rebalance."""
    out = run(first_member_leaves_during_its_first_join(rejoined_generation=1))
    assert generations(out) == [(1, False, ["c-2"], "observed")]
    assert [(g, n) for g, n, _ in rounds(out)] == [(1, 1)]


def test_the_emptied_join_phase_survives_a_batch_boundary():
    events = first_member_leaves_during_its_first_join(rejoined_generation=2)
    for cut in (4, 5, 7):
        assert generations(run_split(events, [cut])) == generations(run(events))


def test_a_leave_during_a_join_phase_others_are_in_does_not_empty_the_group():
    """Another member's log shows it joining the same join phase: the group keeps a member."""
    events = first_member_leaves_during_its_first_join(rejoined_generation=1)[:4] + [
        ev(1, "join_sent", client_id="d"),
        ev(10, "join_requested", member_id="d-1", reason=REJOIN + "d-1", client_id="d"),
        ev(10, "join_sent", member_id="d-1", client_id="d"),
        ev(3020, "join_response", generation_id=1, member_id="d-1", leader_id="d-1", protocol_name="range",
           client_id="d"),
        ev(3021, "assignment_computed", generation_id=1, member_id="d-1", assignment={"d-1": "t-0 t-1"}),
        ev(3030, "sync_response", generation_id=1, member_id="d-1", partitions="t-0 t-1", client_id="d"),
    ]  # fmt: skip
    out = run(events)
    assert generations(out) == [(1, False, ["d-1"], "observed")]


def test_a_log_ending_in_a_join_phase_marks_its_rebalance_inferred():
    """The last member's log ends after its JoinGroup (it died silently, random:95): the generation
    completed without it logging, and the session timeout's rebalance, are in no member's log."""
    events = first_member_leaves_during_its_first_join(rejoined_generation=2) + [
        ev(90_000, "partitions_revoked", member_id="c-2", partitions="t-0 t-1", client_id="c"),
        ev(90_000, "leave_sent", member_id="c-2", reason=CLOSING, client_id="c"),
        ev(95_000, "join_sent", client_id="c"),
        ev(95_009, "join_requested", member_id="c-3", reason=REJOIN + "c-3", client_id="c"),
        ev(95_009, "join_sent", member_id="c-3", client_id="c"),
    ]
    out = run(events)
    assert rounds(out)[-1] == (None, 1, "inferred")
    assert [r[2] for r in rounds(out)[1:3]] == ["observed", "inferred"]  # 2 observed; 3 the Empty one


def test_a_2x_client_whose_join_names_no_member_id_still_counts_in_the_join_phase():
    """random:101, 2.x wording: d's log shows its JoinGroup only without a member id (the
    MEMBER_ID_REQUIRED round is at DEBUG before 3.x), and its process is first seen at its JoinGroup
    response, of generation 2 (generation 1, of that join phase, is in no member's log): c-1 leaving the
    join phase d is in did not empty the group."""
    events = first_member_leaves_during_its_first_join(rejoined_generation=2)[:4] + [
        ev(1, "join_sent", client_id="d"),
        ev(30_020, "join_response", generation_id=2, member_id="d-1", protocol_name="range", client_id="d"),
        ev(30_030, "sync_response", generation_id=2, member_id="d-1", partitions="t-0 t-1", client_id="d"),
    ]
    out = run(events)
    assert [g for g, ended_empty, _, _ in generations(out) if ended_empty] == []


def static_members_join(first_generation: int):
    """Static consumers i1 and i2 start the group; only i1 logs a generation: `first_generation`."""
    return [
        ev(0, "join_sent", client_id="i2", group_instance_id="i2"),
        ev(500, "join_sent", client_id="i1", group_instance_id="i1"),
        ev(45_000, "join_response", generation_id=first_generation, member_id="i1-1", leader_id="i1-1",
           protocol_name="range", client_id="i1", group_instance_id="i1"),
        ev(45_002, "assignment_computed", generation_id=first_generation, member_id="i1-1",
           assignment={"i1-1": "t-0 t-1"}),
        ev(45_004, "sync_response", generation_id=first_generation, member_id="i1-1", partitions="t-0 t-1",
           client_id="i1", group_instance_id="i1"),
    ]  # fmt: skip


def test_a_generation_no_member_logged_makes_the_rounds_of_the_rebalance_inferred():
    """random:177: the group's first rebalance, whose start the input shows, completes as generation 2:
    generation 1 formed (GroupMetadata.initNextGeneration at every completed join phase) with no member
    logging it (i2 crashed before its JoinGroup response): one round more in this rebalance, or one of
    its own? No member's log says: the episode is inferred, not a confident single round."""
    out = run(static_members_join(first_generation=2))
    assert rounds(out) == [(2, 1, "inferred")]


def test_a_first_generation_logged_leaves_the_rounds_observed():
    """The rebalance is followed by another one (i1 enforces a rebalance): the input's last episode is
    inferred whatever its rounds, as i1 still consumes at the end and may have died unseen after its
    last line (test_replay_member_only_measures); the first one's rounds stand observed."""
    enforced = [
        ev(60_000, "join_requested", member_id="i1-1", reason="rebalance enforced by user", client_id="i1",
           group_instance_id="i1"),
        ev(60_001, "join_sent", member_id="i1-1", client_id="i1", group_instance_id="i1"),
        ev(60_010, "join_response", generation_id=2, member_id="i1-1", leader_id="i1-1",
           protocol_name="range", client_id="i1", group_instance_id="i1"),
        ev(60_011, "assignment_computed", generation_id=2, member_id="i1-1", assignment={"i1-1": "t-0 t-1"}),
        ev(60_012, "sync_response", generation_id=2, member_id="i1-1", partitions="t-0 t-1", client_id="i1",
           group_instance_id="i1"),
    ]  # fmt: skip
    out = run(static_members_join(first_generation=1) + enforced)
    assert rounds(out)[0] == (1, 1, "observed")


def test_a_leaders_assignment_for_a_generation_already_passed_opens_no_round():
    """random:497: static i2 leads generation 1 but handles its JoinGroup response only after i3 synced
    generation 2 (its process paused). Its "Finished assignment for group at generation 1" is refused at
    SyncGroup (ILLEGAL_GENERATION: GroupCoordinator.handleSyncGroup / ClassicGroup.validateSyncGroup):
    generation 1 keeps one row and the rebalance i2's rejoin starts has one round."""
    events = [
        ev(0, "join_sent", client_id="i2", group_instance_id="i2"),
        ev(1, "join_sent", client_id="i3", group_instance_id="i3"),
        ev(6_029, "join_response", generation_id=1, member_id="i3-1", protocol_name="range", client_id="i3",
           group_instance_id="i3"),
        ev(16_026, "join_requested", member_id="i3-1", reason="rebalance failed due to REBALANCE_IN_PROGRESS",
           client_id="i3", group_instance_id="i3"),
        ev(16_026, "join_sent", member_id="i3-1", client_id="i3", group_instance_id="i3"),
        ev(16_054, "join_response", generation_id=2, member_id="i3-1", leader_id="i3-1", protocol_name="range",
           client_id="i3", group_instance_id="i3"),
        ev(16_056, "assignment_computed", generation_id=2, member_id="i3-1", assignment={"i3-1": "t-0 t-1"}),
        ev(16_080, "sync_response", generation_id=2, member_id="i3-1", partitions="t-0 t-1", client_id="i3",
           group_instance_id="i3"),
        ev(30_010, "join_response", generation_id=1, member_id="i2-1", leader_id="i2-1", protocol_name="range",
           client_id="i2", group_instance_id="i2"),
        ev(30_012, "assignment_computed", generation_id=1, member_id="i2-1",
           assignment={"i2-1": "t-0", "i3-1": "t-1"}),
        ev(30_033, "join_sent", member_id="i2-2", client_id="i2", group_instance_id="i2"),
        ev(32_719, "join_requested", member_id="i3-1", reason="group is already rebalancing", client_id="i3",
           group_instance_id="i3"),
        ev(32_725, "join_sent", member_id="i3-1", client_id="i3", group_instance_id="i3"),
        ev(32_753, "join_response", generation_id=3, member_id="i3-1", leader_id="i3-1", protocol_name="range",
           client_id="i3", group_instance_id="i3"),
        ev(32_754, "join_response", generation_id=3, member_id="i2-2", leader_id="i3-1", protocol_name="range",
           client_id="i2", group_instance_id="i2"),
        ev(32_755, "assignment_computed", generation_id=3, member_id="i3-1",
           assignment={"i3-1": "t-0", "i2-2": "t-1"}),
        ev(32_776, "sync_response", generation_id=3, member_id="i3-1", partitions="t-0", client_id="i3",
           group_instance_id="i3"),
        ev(32_777, "sync_response", generation_id=3, member_id="i2-2", partitions="t-1", client_id="i2",
           group_instance_id="i2"),
    ]  # fmt: skip
    out = run(events)
    assert sorted(g["generation_id"] for g in out["generations"]) == [1, 2, 3]
    assert [n for _, n, _ in rounds(out)] == [2, 1]
