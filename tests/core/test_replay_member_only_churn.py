"""Members' logs only: partition churn when a member's log stops in the middle of a rebalance.

The coordinator completes a join phase with the members that rejoined and removes the dynamic members
of the previous generation that did not (GroupCoordinator.onCompleteJoin, "remove dynamic members who
haven't joined the group yet"; GroupMetadataManager.completeClassicGroupJoin in 4.0). The leader's
assignment lists every member of the new generation, so a member it leaves out is no longer awaited."""

from __future__ import annotations

from tests.core.replay_helpers import ev, run

ALREADY = "group is already rebalancing"


def member_stalls_after_its_rejoin():
    """Eager (range). c-1 rejoins for generation 2 at 1003 and its log stops: it is in generation 2 (the
    leader's assignment lists it) but never syncs; it is not in generation 3 (removed when its session
    expired). a-1 closes at 50000."""
    events = [ev(0, "join_sent", member_id=m, client_id=m[0]) for m in ("a-1", "b-1", "c-1")]
    for m in ("a-1", "b-1", "c-1"):
        events.append(ev(10, "join_response", generation_id=1, member_id=m, leader_id="a-1",
                         protocol_name="range", client_id=m[0]))  # fmt: skip
    events += [
        ev(11, "assignment_computed", generation_id=1, member_id="a-1",
           assignment={"a-1": "t-0", "b-1": "t-1", "c-1": "t-2"}),
    ]  # fmt: skip
    for m, tp in (("a-1", "t-0"), ("b-1", "t-1"), ("c-1", "t-2")):
        events += [
            ev(20, "sync_response", generation_id=1, member_id=m, partitions=tp, client_id=m[0]),
            ev(20, "partitions_assigned", member_id=m, partitions=tp, client_id=m[0]),
        ]
    for ts, m, tp in ((1000, "a-1", "t-0"), (1002, "b-1", "t-1"), (1003, "c-1", "t-2")):
        reason = "cached metadata has changed" if m == "a-1" else ALREADY
        events += [
            ev(ts, "join_requested", member_id=m, reason=reason, client_id=m[0]),
            ev(ts, "partitions_revoked", member_id=m, partitions=tp, client_id=m[0]),
            ev(ts, "join_sent", member_id=m, client_id=m[0]),
        ]
    events += [
        ev(1010, "join_response", generation_id=2, member_id="a-1", leader_id="a-1", protocol_name="range",
           client_id="a"),
        ev(1010, "join_response", generation_id=2, member_id="b-1", leader_id="a-1", protocol_name="range",
           client_id="b"),
        ev(1011, "assignment_computed", generation_id=2, member_id="a-1",
           assignment={"a-1": "t-0", "b-1": "t-1", "c-1": "t-2"}),
        ev(1020, "sync_response", generation_id=2, member_id="a-1", partitions="t-0", client_id="a"),
        ev(1020, "partitions_assigned", member_id="a-1", partitions="t-0", client_id="a"),
        ev(1020, "sync_response", generation_id=2, member_id="b-1", partitions="t-1", client_id="b"),
        ev(1020, "partitions_assigned", member_id="b-1", partitions="t-1", client_id="b"),
    ]  # fmt: skip
    for m, tp in (("a-1", "t-0"), ("b-1", "t-1")):
        events += [
            ev(11005, "join_requested", member_id=m, reason=ALREADY, client_id=m[0]),
            ev(11005, "partitions_revoked", member_id=m, partitions=tp, client_id=m[0]),
            ev(11005, "join_sent", member_id=m, client_id=m[0]),
        ]
    events += [
        ev(11010, "join_response", generation_id=3, member_id="a-1", leader_id="a-1", protocol_name="range",
           client_id="a"),
        ev(11010, "join_response", generation_id=3, member_id="b-1", leader_id="a-1", protocol_name="range",
           client_id="b"),
        ev(11011, "assignment_computed", generation_id=3, member_id="a-1",
           assignment={"a-1": "t-0 t-2", "b-1": "t-1"}),
        ev(11020, "sync_response", generation_id=3, member_id="a-1", partitions="t-0 t-2", client_id="a"),
        ev(11020, "partitions_assigned", member_id="a-1", partitions="t-0 t-2", client_id="a"),
        ev(11020, "sync_response", generation_id=3, member_id="b-1", partitions="t-1", client_id="b"),
        ev(11020, "partitions_assigned", member_id="b-1", partitions="t-1", client_id="b"),
        ev(50000, "partitions_revoked", member_id="a-1", partitions="t-0 t-2", client_id="a"),
        ev(50000, "leave_sent", member_id="a-1", reason="the consumer is being closed", client_id="a"),
    ]  # fmt: skip
    return events


def test_a_member_the_next_generation_leaves_out_no_longer_holds_the_rebalance_open():
    """random:520: generation 3's episode ends once a-1 and b-1 applied it (t-2 moved from c-1, which
    stopped it at its revocation, to a-1), not at a-1's close long after (which stopped t-0 and t-2 and
    so hid the move)."""
    out = run(member_stalls_after_its_rejoin())
    episode = next(ep for ep in out["rebalance_episodes"] if ep["first_generation_id"] == 3)
    assert episode["partitions_moved"] == 1
    assert episode["stabilized_at"] % 100_000 == 11020


def restart_while_a_joiner_is_paused():
    """Cooperative. c2's first process (c2-a) owns t-0 t-1 in generation 1 and dies without a line; c1
    sends its JoinGroup at 20000 and its process pauses before the response; c2's new process (c2-b)
    joins generation 3 alone at 40000 and gets both partitions. c1's response for generation 2, the one
    in between, is logged late (52000), after its pause (random:806)."""
    return [
        ev(0, "join_sent", member_id="c2-a", client_id="c2"),
        ev(10, "join_response", generation_id=1, member_id="c2-a", leader_id="c2-a",
           protocol_name="cooperative-sticky", client_id="c2"),
        ev(11, "assignment_computed", generation_id=1, member_id="c2-a", assignment={"c2-a": "t-0 t-1"}),
        ev(20, "sync_response", generation_id=1, member_id="c2-a", partitions="t-0 t-1", client_id="c2"),
        ev(20, "partitions_assigned", member_id="c2-a", partitions="t-0 t-1", client_id="c2"),
        ev(20000, "join_sent", member_id="c1-a", client_id="c1"),
        ev(38000, "join_sent", member_id="c2-b", client_id="c2"),
        ev(40000, "join_response", generation_id=3, member_id="c2-b", leader_id="c2-b",
           protocol_name="cooperative-sticky", client_id="c2"),
        ev(40001, "assignment_computed", generation_id=3, member_id="c2-b", assignment={"c2-b": "t-0 t-1"}),
        ev(40010, "sync_response", generation_id=3, member_id="c2-b", partitions="t-0 t-1", client_id="c2"),
        ev(40010, "partitions_assigned", member_id="c2-b", partitions="t-0 t-1", client_id="c2"),
        ev(52000, "join_response", generation_id=2, member_id="c1-a", leader_id="c1-a",
           protocol_name="cooperative-sticky", client_id="c1"),
    ]  # fmt: skip


def test_a_joiner_not_answered_yet_keeps_a_skipped_generation_from_emptying_the_group():
    """AbstractCoordinator: c1's JoinGroup reached the coordinator, and the join phase completes with every
    member that joined (GroupCoordinator.onCompleteJoin), so generation 2 had c1: the group never turned
    Empty. c2-a's partitions stopped unseen (its process died) and c2-b got them: moved, not handed to
    no one."""
    out = run(restart_while_a_joiner_is_paused())
    episode = next(ep for ep in out["rebalance_episodes"] if ep["last_generation_id"] == 3)
    assert episode["partitions_moved"] == 2
    moves = [m for m in out["partition_movements"] if m["to_member_id"] == "c2-b"]
    assert {(m["from_member_id"], m["moved"], m["source"]) for m in moves} == {("c2-a", True, "inferred")}


def two_joiners_after_a_silent_death():
    """Cooperative. a-1 owns t-0 t-1 in generation 1 and dies without a line; b-1 then c-1 send their
    JoinGroups (15000, 17000) and both get generation 3 (random:53): generation 2 formed with no logged
    member, the one that emptied the group when a-1's session expired."""
    events = [
        ev(0, "join_sent", member_id="a-1", client_id="a"),
        ev(10, "join_response", generation_id=1, member_id="a-1", leader_id="a-1",
           protocol_name="cooperative-sticky", client_id="a"),
        ev(11, "assignment_computed", generation_id=1, member_id="a-1", assignment={"a-1": "t-0 t-1"}),
        ev(20, "sync_response", generation_id=1, member_id="a-1", partitions="t-0 t-1", client_id="a"),
        ev(20, "partitions_assigned", member_id="a-1", partitions="t-0 t-1", client_id="a"),
        ev(15000, "join_sent", member_id="b-1", client_id="b"),
        ev(17000, "join_sent", member_id="c-1", client_id="c"),
        ev(21030, "join_response", generation_id=3, member_id="b-1", leader_id="b-1",
           protocol_name="cooperative-sticky", client_id="b"),
        ev(21034, "join_response", generation_id=3, member_id="c-1", leader_id="b-1",
           protocol_name="cooperative-sticky", client_id="c"),
        ev(21035, "assignment_computed", generation_id=3, member_id="b-1", assignment={"b-1": "t-0", "c-1": "t-1"}),
    ]  # fmt: skip
    for m, tp in (("b-1", "t-0"), ("c-1", "t-1")):
        events += [
            ev(21047, "sync_response", generation_id=3, member_id=m, partitions=tp, client_id=m[0]),
            ev(21047, "partitions_assigned", member_id=m, partitions=tp, client_id=m[0]),
        ]
    return events


def test_a_joiner_that_sent_its_join_after_the_answered_one_says_nothing_of_the_skipped_generation():
    """c-1's JoinGroup went out after b-1's, which generation 3 answered: it is in generation 3 at the
    earliest (GroupCoordinator.onCompleteJoin answers every member of a join phase at once), so the
    skipped generation 2 had no logged member: the group emptied and nothing moved from a-1."""
    out = run(two_joiners_after_a_silent_death())
    episode = next(ep for ep in out["rebalance_episodes"] if ep["last_generation_id"] == 3)
    assert episode["partitions_moved"] == 0
    assert not [m for m in out["partition_movements"] if m["to_member_id"] in ("b-1", "c-1")]


def _coop(ts, event_type, member, **fields):
    return ev(ts, event_type, member_id=member, client_id=member[0], **fields)


def test_a_join_group_sent_before_its_episodes_first_line_leaves_the_moves_of_starts_since_it_inferred():
    """Cooperative. c-1's JoinGroup (KIP-394's second, at 12) is answered only with generation 2: it reached
    the coordinator after generation 1 formed and began the next rebalance then (addMemberAndRebalance);
    a-1 and b-1 learn it with their heartbeat at 15013, their first line of it. They started generation 1's
    partitions at 17 and 19, after c-1's JoinGroup: whether before or after the rebalance began, no line
    says, so whether t-1 and t-3, handed to c-1, count as moved in its episode is a guess: inferred."""
    coop = "cooperative-sticky"
    events = [
        _coop(0, "join_sent", "a-1"),
        _coop(0, "join_sent", "b-1"),
        ev(7, "join_sent", client_id="c"),
        _coop(12, "join_requested", "c-1", reason="need to re-join with the given member-id: c-1"),
        _coop(12, "join_sent", "c-1"),
        _coop(13, "join_response", "a-1", generation_id=1, leader_id="a-1", protocol_name=coop),
        _coop(14, "join_response", "b-1", generation_id=1, leader_id="a-1", protocol_name=coop),
        _coop(
            15, "assignment_computed", "a-1", generation_id=1, assignment={"a-1": "t-0 t-1", "b-1": "t-2 t-3"}
        ),
        _coop(17, "sync_response", "a-1", generation_id=1, partitions="t-0 t-1"),
        _coop(17, "partitions_assigned", "a-1", partitions="t-0 t-1"),
        _coop(19, "sync_response", "b-1", generation_id=1, partitions="t-2 t-3"),
        _coop(19, "partitions_assigned", "b-1", partitions="t-2 t-3"),
    ]
    for ts, m in ((15013, "a-1"), (15014, "b-1")):
        events += [_coop(ts, "join_requested", m, reason=ALREADY), _coop(ts, "join_sent", m)]
    events += [
        _coop(15018, "join_response", "a-1", generation_id=2, leader_id="a-1", protocol_name=coop),
        _coop(15019, "join_response", "b-1", generation_id=2, leader_id="a-1", protocol_name=coop),
        _coop(
            15020,
            "assignment_computed",
            "a-1",
            generation_id=2,
            assignment={"a-1": "t-0", "b-1": "t-2", "c-1": ()},
        ),
        _coop(15023, "join_response", "c-1", generation_id=2, leader_id="a-1", protocol_name=coop),
        _coop(15022, "sync_response", "a-1", generation_id=2, partitions="t-0"),
        _coop(15022, "partitions_revoked", "a-1", partitions="t-1"),
        _coop(15024, "sync_response", "b-1", generation_id=2, partitions="t-2"),
        _coop(15024, "partitions_revoked", "b-1", partitions="t-3"),
        _coop(15025, "partitions_assigned", "a-1", partitions=""),
        _coop(15026, "sync_response", "c-1", generation_id=2, partitions=""),
        _coop(15026, "partitions_assigned", "c-1", partitions=""),
        _coop(15027, "partitions_assigned", "b-1", partitions=""),
    ]
    for ts, m in ((15028, "a-1"), (15030, "b-1")):
        events += [
            _coop(ts, "join_requested", m, reason="need to revoke partitions"),
            _coop(ts, "join_sent", m),
        ]
    events += [_coop(30023, "join_requested", "c-1", reason=ALREADY), _coop(30023, "join_sent", "c-1")]
    for ts, m, tp in ((30026, "a-1", "t-0"), (30027, "b-1", "t-2"), (30031, "c-1", "t-1 t-3")):
        events += [
            _coop(ts, "join_response", m, generation_id=3, leader_id="a-1", protocol_name=coop),
            _coop(ts + 4, "sync_response", m, generation_id=3, partitions=tp),
            _coop(ts + 4, "partitions_assigned", m, partitions="" if m != "c-1" else tp),
        ]
    events += [
        _coop(30028, "assignment_computed", "a-1", generation_id=3,
              assignment={"a-1": "t-0", "b-1": "t-2", "c-1": "t-1 t-3"}),
    ]  # fmt: skip
    for m, tp in (("a-1", "t-0"), ("b-1", "t-2"), ("c-1", "t-1 t-3")):  # all close: the input ends observed
        events += [
            _coop(60000, "partitions_revoked", m, partitions=tp),
            _coop(60000, "leave_sent", m, reason="the consumer is being closed"),
        ]
    out = run(events)
    episode = next(ep for ep in out["rebalance_episodes"] if ep["first_generation_id"] == 2)
    assert (episode["last_generation_id"], episode["source"]) == (3, "inferred")
