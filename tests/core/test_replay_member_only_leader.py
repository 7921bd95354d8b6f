"""Members' logs only: who led a generation, from the lines that state it.

A consumer's INFO lines name a generation's leader only in the leader's own log: the coordinator answers
one member of each generation as its leader, and only that member runs the assignor
(AbstractCoordinator.onJoinLeader -> ConsumerCoordinator.onLeaderElected, "Finished assignment for group
at generation N: {...}", 2.4+; "Skipped assignment for returning static leader", 3.2+). A follower's
"Successfully joined group with generation ..." does not name it. A leader whose process paused after its
JoinGroup logs that line late, after the followers' lines closed the generation: it still states the
leader and the generation's members (each member is listed, with partitions or none)."""

from __future__ import annotations

from tests.core.replay_helpers import ev, run

SYNC_REFUSED = "rebalance failed due to REBALANCE_IN_PROGRESS from SYNC_GROUP"


def leader_logs_its_assignment_late(late_at: int):
    """random:141, random:56: a-1 and b-1 join; generation 1 completes with a-1 as leader, but a-1 pauses
    before reading its JoinGroup response; b-1's SyncGroup is refused (the coordinator rebalanced on a-1's
    missing SyncGroup) and b-1 forms generation 2 alone; a-1 logs its generation-1 response and
    assignment at `late_at`."""
    events = [
        ev(0, "join_sent", member_id="a-1", client_id="a"),
        ev(0, "join_sent", member_id="b-1", client_id="b"),
        ev(10, "join_response", generation_id=1, member_id="b-1", protocol_name="range", client_id="b"),
        ev(5000, "join_requested", member_id="b-1", reason=SYNC_REFUSED, client_id="b"),
        ev(5000, "join_sent", member_id="b-1", client_id="b"),
        ev(9000, "join_response", generation_id=2, member_id="b-1", leader_id="b-1", protocol_name="range",
           client_id="b"),
        ev(9001, "assignment_computed", generation_id=2, member_id="b-1", assignment={"b-1": "t-0 t-1"}),
        ev(9010, "sync_response", generation_id=2, member_id="b-1", partitions="t-0 t-1", client_id="b"),
        ev(9010, "partitions_assigned", member_id="b-1", partitions="t-0 t-1", client_id="b"),
        ev(late_at, "join_response", generation_id=1, member_id="a-1", protocol_name="range", client_id="a"),
        ev(late_at + 2, "assignment_computed", generation_id=1, member_id="a-1",
           assignment={"a-1": "t-0", "b-1": "t-1"}),
    ]  # fmt: skip
    return events


def generation(out, gen):
    (row,) = [g for g in out["generations"] if g["generation_id"] == gen]
    return row


def test_a_late_leader_assignment_names_the_leader_and_members_of_a_closed_generation():
    """Generation 2 is logged before a-1's lines: generation 1's row is written from b-1's response alone;
    a-1's late "Finished assignment for group at generation 1" states its leader and its members."""
    out = run(leader_logs_its_assignment_late(late_at=20_000))
    gen1 = generation(out, 1)
    assert (gen1["leader_member_id"], gen1["members"], gen1["member_count"]) == ("a-1", ["a-1", "b-1"], 2)
    gen2 = generation(out, 2)
    assert (gen2["leader_member_id"], gen2["members"]) == ("b-1", ["b-1"])


def test_a_late_leader_assignment_while_the_next_join_phase_is_open_names_the_closed_generation():
    """a-1's lines come while b-1's rejoin (generation 2's join phase) is open: still generation 1's."""
    out = run(leader_logs_its_assignment_late(late_at=6_000))
    gen1 = generation(out, 1)
    assert (gen1["leader_member_id"], gen1["members"]) == ("a-1", ["a-1", "b-1"])
    assert generation(out, 2)["leader_member_id"] == "b-1"


def test_without_the_leaders_line_the_leader_stays_unknown():
    events = leader_logs_its_assignment_late(late_at=20_000)[:-2]
    gen1 = generation(run(events), 1)
    assert (gen1["leader_member_id"], gen1["members"]) == (None, None)
