"""Members' logs only: a static member's new process whose log is the only one of its group.

KIP-345: a known group.instance.id joining with an unknown member id replaces the old member; in a Stable
group the coordinator answers with the current generation and no rebalance, and the new member id takes
the old one's assignment (GroupCoordinator.updateStaticMemberAndRebalance; ClassicGroup.replaceStaticMember
in 4.0). Without the old process's log, what it consumed and when it stopped is in no line."""

from __future__ import annotations

from tests.core.replay_helpers import ev, run


def restarted_static_member_alone_in_the_view(instance: str | None = "i1"):
    """hand:static_restart's client log: the new process of i1 joins at 5000 and gets generation 1 back,
    led by a member whose log the view lacks, and t-0; it is closed at 9000."""
    fields = {"group_instance_id": instance} if instance else {}
    return [
        ev(5000, "join_sent", client_id="c-i1", source="host1", **fields),
        ev(
            5002,
            "join_response",
            generation_id=1,
            member_id="i1-B",
            client_id="c-i1",
            source="host1",
            **fields,
        ),
        ev(5003, "sync_response", generation_id=1, member_id="i1-B", partitions="t-0", source="host1"),
        ev(5004, "partitions_assigned", member_id="i1-B", partitions="t-0", source="host1"),
        # closed before the input ends: nothing is still consumed after the last line (which alone would make
        # the last episode a lower bound, `consumption_unseen_after_input`)
        ev(9000, "partitions_revoked", member_id="i1-B", partitions="t-0", source="host1"),
        ev(9000, "leave_sent", member_id="i1-B", reason="the consumer is being closed", source="host1"),
    ]


def test_a_static_members_first_sync_in_a_generation_of_unlogged_members_is_inferred():
    """Its partitions may have been its old process's: the unavailable time is not known to be 0."""
    out = run(restarted_static_member_alone_in_the_view())
    # (a static member's close sends no LeaveGroup, AbstractCoordinator.maybeLeaveGroup: no second episode)
    assert [ep["source"] for ep in out["rebalance_episodes"]] == ["inferred"]


def test_a_dynamic_members_first_generation_stays_observed():
    """A dynamic member's new id gets nobody's assignment (no KIP-345 replacement): nothing to guess."""
    out = run(restarted_static_member_alone_in_the_view(instance=None))
    # (its close is a LeaveGroup that empties the group: a second episode, which members' logs only infer)
    assert out["rebalance_episodes"][0]["source"] == "observed"


def test_what_a_static_member_may_have_taken_over_has_an_unknown_earlier_holder():
    """KIP-345 (ClassicGroup.replaceStaticMember): what i1-B synced may be its instance's old process's
    assignment, stopped at an instant no line shows: a movement row from an unnamed process of the same
    instance (not moved), its idle time null, `inferred`; never a partition that was idle for 0 ms."""
    out = run(restarted_static_member_alone_in_the_view())
    takeover = [m for m in out["partition_movements"] if m["to_member_id"] == "i1-B"]
    assert [
        (m["partition"], m["from_member_id"], m["revoked_at"], m["unavailable_ms"]) for m in takeover
    ] == [(0, None, None, None)]
    assert {(m["stop_cause"], m["moved"], m["source"]) for m in takeover} == {
        ("member_failed", False, "inferred")
    }


def test_a_dynamic_members_first_assignment_has_no_earlier_holder():
    """A dynamic member's new id takes over nobody's assignment: no movement row into it."""
    out = run(restarted_static_member_alone_in_the_view(instance=None))
    assert not [m for m in out["partition_movements"] if m["to_member_id"] == "i1-B"]


def test_a_static_member_whose_log_starts_after_its_join_takes_over_no_earlier_process():
    """Without its JoinGroup without a member id the input does not show a new process (the log starts
    mid-life): its first assignment has no earlier holder row, as any partition consumed since before."""
    events = [e for e in restarted_static_member_alone_in_the_view() if e.event_type != "join_sent"]
    out = run(events)
    assert not [m for m in out["partition_movements"] if m["to_member_id"] == "i1-B"]


def _static_id(instance: str, n: int) -> str:
    """A static member id as the coordinator makes it: `{group.instance.id}-{UUID}`."""
    return f"{instance}-00000000-0000-4000-8000-{n:012d}"


I1A, I2A, I2B, I3A = _static_id("i1", 1), _static_id("i2", 2), _static_id("i2", 3), _static_id("i3", 4)


def static_group_restarted_after_a_listed_generation(
    listed: bool = True, third_member: bool = False, third_members_log: bool = True
):
    """random:27's members' events: i4's JoinGroup at 0 is never answered (it died); i2 forms generation 3
    alone, its leader's assignment listing it (unless `listed` is False; with `third_member`, i3 is in it
    too and shows nothing later); i2 dies silently, generation 4 is in no line; i1 and i2's new process join
    generation 5, led by i1's member, whose process logs nothing else of it."""
    members = {I2A: "t-0 t-1"} | ({I3A: "t-2"} if third_member else {})
    events = [
        ev(0, "join_sent", client_id="i4", group_instance_id="i4", source="h4"),
        ev(120000, "join_sent", client_id="i2", group_instance_id="i2", source="h2"),
        ev(
            123049,
            "join_response",
            generation_id=3,
            member_id=I2A,
            client_id="i2",
            leader_id=I2A,
            group_instance_id="i2",
            source="h2",
        ),
        ev(
            123063,
            "sync_response",
            generation_id=3,
            member_id=I2A,
            client_id="i2",
            partitions="t-0 t-1",
            source="h2",
        ),
        ev(420515, "join_sent", client_id="i1", group_instance_id="i1", source="h1"),
        ev(420516, "join_sent", client_id="i2", group_instance_id="i2", source="h2b"),
        ev(
            426554,
            "join_response",
            generation_id=5,
            member_id=I2B,
            client_id="i2",
            leader_id=I1A,
            group_instance_id="i2",
            source="h2b",
        ),
        ev(
            426570,
            "sync_response",
            generation_id=5,
            member_id=I2B,
            client_id="i2",
            partitions="t-1",
            source="h2b",
        ),
    ]
    if listed:
        events.append(
            ev(
                123051,
                "assignment_computed",
                generation_id=3,
                member_id=I2A,
                client_id="i2",
                assignment=members,
                source="h2",
            )
        )
    if third_member and third_members_log:
        events += [
            ev(120001, "join_sent", client_id="i3", group_instance_id="i3", source="h3"),
            ev(
                123050,
                "join_response",
                generation_id=3,
                member_id=I3A,
                client_id="i3",
                leader_id=I2A,
                group_instance_id="i3",
                source="h3",
            ),
            ev(
                123064,
                "sync_response",
                generation_id=3,
                member_id=I3A,
                client_id="i3",
                partitions="t-2",
                source="h3",
            ),
        ]
    return events


def _members(out, generation):
    return next(r["members"] for r in out["generations"] if r["generation_id"] == generation)


def test_static_members_of_a_generation_after_a_listed_one_are_its_lines_members():
    """Generation 3's listing leaves out i4, whose JoinGroup it outlived: i4 is gone for good. So a
    static member no line of generation 5 names would be one of generation 3's: only i2, replaced."""
    out = run(static_group_restarted_after_a_listed_generation())
    assert sorted(_members(out, 5)) == sorted([I1A, I2B])


def test_static_members_stay_unknown_when_no_earlier_generation_is_listed():
    """Without generation 3's listing, a static member no line shows may hold its place since before."""
    out = run(static_group_restarted_after_a_listed_generation(listed=False))
    assert _members(out, 5) is None


def test_a_listed_static_member_that_did_not_rejoin_may_still_be_in_the_next_generation():
    """i3 was in generation 3 and shows nothing later: a static member keeps its place until its session
    expires (GroupCoordinator.onCompleteJoin keeps static members that did not rejoin)."""
    out = run(static_group_restarted_after_a_listed_generation(third_member=True))
    assert _members(out, 5) is None


def test_a_listed_member_whose_log_is_missing_may_be_a_static_member_still_in_the_next_generation():
    """i3's host log was not collected: generation 3's listing names its member id, no line states its
    instance. It may be static, and GroupCoordinator.onCompleteJoin keeps a static member that did not rejoin
    until its session expires: generation 5's list is not known (never taken as its lines' members)."""
    out = run(static_group_restarted_after_a_listed_generation(third_member=True, third_members_log=False))
    assert _members(out, 5) is None
