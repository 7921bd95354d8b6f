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
