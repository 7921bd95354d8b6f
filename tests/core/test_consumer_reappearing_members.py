"""KIP-848 groups from the consumers' own logs alone: member ids that leave and show again, static members
(group.instance.id) replacing one another. A consumer generates its member id once and keeps it across
rejoins (AbstractMembershipManager.transitionToJoining after a fence); a new consumer instance (a restart)
has a new one. A static member that closes leaves "temporarily" (epoch -2) and keeps its place and its
assignment until its session expires (GroupMetadataManager.consumerGroupStaticMemberGroupLeave); a member
of the same instance that joins in the meantime replaces it at the same group epoch, no bump
(GroupMetadataManager.consumerGroupHeartbeat -> replaceMember), one that joins after the expiry is a new
member whose join bumps the epoch."""

from __future__ import annotations

from schemas.events import EventType
from tests.core.test_consumer_protocol import Log, client_joins, client_line, members_by_epoch, tps

DAY = "2025-03-10 14:"


def _static_leave(log: Log, when: str, member: str, instance: str, epoch: int, *owned: int) -> None:
    """close() of a static member: PREPARE_LEAVING, its partitions revoked, the leave heartbeat (epoch -2)."""
    client_line(log, f"{DAY}{when},000", member, instance, epoch, "STABLE", "PREPARE_LEAVING")
    if owned:
        log.add(f"{DAY}{when},003", "member", EventType.PARTITIONS_REVOKED, member_id=member,
                group_instance_id=instance, partitions=tps("t", *owned))  # fmt: skip
    client_line(log, f"{DAY}{when},003", member, instance, -2, "PREPARE_LEAVING", "LEAVING")
    client_line(log, f"{DAY}{when},003", member, instance, epoch, "LEAVING", "UNSUBSCRIBED")


def _c2_joins_c1_at_epoch_2(log: Log) -> None:
    """c1 (instance i1) alone at epoch 1 with t-0 and t-1; c2 (instance i2) joins, answered with epoch 2, and
    gets t-1 once c1 released it: epoch 2 converges with both."""
    client_joins(log, "00:00", "c1", "i1", 1, 0, 1)
    client_line(log, f"{DAY}00:05,000", "c2", "i2", 0, "UNSUBSCRIBED", "JOINING")
    client_line(log, f"{DAY}00:05,002", "c2", "i2", 2, "JOINING", "RECONCILING")
    client_line(log, f"{DAY}00:07,000", "c1", "i1", 1, "STABLE", "RECONCILING")
    log.add(f"{DAY}00:07,003", "member", EventType.PARTITIONS_REVOKED, member_id="c1", group_instance_id="i1",
            partitions=tps("t", 1))  # fmt: skip
    client_line(log, f"{DAY}00:07,004", "c1", "i1", 2, "RECONCILING", "ACKNOWLEDGING")
    client_line(log, f"{DAY}00:07,004", "c1", "i1", 2, "ACKNOWLEDGING", "STABLE")
    log.add(f"{DAY}00:10,004", "member", EventType.PARTITIONS_ASSIGNED, member_id="c2", group_instance_id="i2",
            partitions=tps("t", 1))  # fmt: skip
    client_line(log, f"{DAY}00:10,004", "c2", "i2", 2, "RECONCILING", "ACKNOWLEDGING")
    client_line(log, f"{DAY}00:10,004", "c2", "i2", 2, "ACKNOWLEDGING", "STABLE")


def _assigned_members(tables, epoch: int) -> set[str]:
    return {r["member_id"] for r in tables["assignments"] if r["generation_id"] == epoch}


def test_a_static_member_replaced_in_place_takes_its_stated_assignment_row_with_it():
    """c2 (instance i2) joins at epoch 2 and its "Reconciling assignment" block states its target (nothing
    yet: c1 has not released t-1). It closes (epoch -2) before epoch 2 converged, and c2b of instance i2 is
    answered with epoch 2 itself: it replaced c2 at that epoch (GroupMetadataManager.replaceMember, no bump),
    and epoch 2 converges with c1 and c2b. c2's stated block is no row of epoch 2: the replaced member is
    neither in its member list nor in its assignments."""
    log = Log("g")
    client_joins(log, "00:00", "c1", "i1", 1, 0, 1)
    client_line(log, f"{DAY}00:05,000", "c2", "i2", 0, "UNSUBSCRIBED", "JOINING")
    client_line(log, f"{DAY}00:05,002", "c2", "i2", 2, "JOINING", "RECONCILING")
    log.add(f"{DAY}00:05,003", "member", EventType.SYNC_RESPONSE, member_id="c2", group_instance_id="i2",
            partitions=(), attributes={"owned": ""})  # fmt: skip
    client_line(log, f"{DAY}00:05,004", "c2", "i2", 2, "RECONCILING", "ACKNOWLEDGING")
    client_line(log, f"{DAY}00:05,004", "c2", "i2", 2, "ACKNOWLEDGING", "STABLE")
    _static_leave(log, "00:08", "c2", "i2", 2)
    client_line(log, f"{DAY}00:10,000", "c1", "i1", 1, "STABLE", "RECONCILING")
    log.add(f"{DAY}00:10,003", "member", EventType.PARTITIONS_REVOKED, member_id="c1", group_instance_id="i1",
            partitions=tps("t", 1))  # fmt: skip
    client_line(log, f"{DAY}00:10,004", "c1", "i1", 2, "RECONCILING", "ACKNOWLEDGING")
    client_line(log, f"{DAY}00:10,004", "c1", "i1", 2, "ACKNOWLEDGING", "STABLE")
    client_joins(log, "00:13", "c2b", "i2", 2, 1)
    out = log.replay()
    assert members_by_epoch(out)[2] == ["c1", "c2b"]
    assert _assigned_members(out, 2) == {"c1", "c2b"}


def test_a_static_member_back_one_epoch_after_the_current_one_had_expired_before_it():
    """c2 (instance i2) leaves temporarily at epoch 3 (after c3's join); c3 then shows epoch 4, a bump no
    line explains, and c1 shows it too. c2b of instance i2 is answered with epoch 5: not the current epoch, so no replacement in
    place (replaceMember bumps nothing) but a join after c2's session expired. That expiry bumped an epoch
    after 3 and before 5: epoch 4, which does not count c2 (epoch 3, the one it left in, does)."""
    log = Log("g")
    _c2_joins_c1_at_epoch_2(log)
    client_joins(log, "00:15", "c3", "i3", 3)  # assigned nothing yet
    _static_leave(log, "00:20", "c2", "i2", 3, 1)
    for member, instance in (("c3", "i3"), ("c1", "i1")):
        client_line(log, f"{DAY}01:10,000", member, instance, 4, "STABLE", "RECONCILING")
        client_line(log, f"{DAY}01:10,002", member, instance, 4, "RECONCILING", "ACKNOWLEDGING")
        client_line(log, f"{DAY}01:10,002", member, instance, 4, "ACKNOWLEDGING", "STABLE")
    client_joins(log, "02:00", "c2b", "i2", 5, 1)
    out = log.replay()
    assert members_by_epoch(out)[3] == ["c1", "c2", "c3"]
    assert members_by_epoch(out)[4] == ["c1", "c3"]


def test_a_static_replacement_in_place_explains_no_bump():
    """Epoch 2 converged with c1 and c2 (its row keeps them); c2b replaces c2 (instance i2, away with epoch
    -2) at epoch 2: its join bumps nothing (GroupMetadataManager.consumerGroupHeartbeat -> replaceMember). c2b then falls silent (a crash), and c1
    shows epoch 3: a bump no line explains (c2b's session expiring, or a metadata change), so whether epoch 3
    still counts c2b is unknown: its member list is null, never [c1, c2b]."""
    log = Log("g")
    _c2_joins_c1_at_epoch_2(log)
    _static_leave(log, "00:20", "c2", "i2", 2, 1)
    client_joins(log, "00:23", "c2b", "i2", 2, 1)
    client_line(log, f"{DAY}01:30,000", "c1", "i1", 3, "STABLE", "RECONCILING")
    client_line(log, f"{DAY}01:30,002", "c1", "i1", 3, "RECONCILING", "ACKNOWLEDGING")
    client_line(log, f"{DAY}01:30,002", "c1", "i1", 3, "ACKNOWLEDGING", "STABLE")
    out = log.replay()
    assert members_by_epoch(out)[2] == ["c1", "c2"]
    assert members_by_epoch(out)[3] is None


def test_a_static_member_closed_while_joining_leaves_the_next_epochs_members_unknown():
    """c2 (instance i2) closes while JOINING: its leave heartbeat (epoch -2) follows its join heartbeat
    (AbstractMembershipManager.leaveGroup: a JOINING member is in the group), and it ignores any answer, so
    its log never shows whether the coordinator created it. c2b of instance i2 is answered with epoch 3, two
    bumps after epoch 1: either c2's join bumped epoch 3 and c2b replaced it there (replaceMember, no bump;
    epoch 3 converged with c2 first), or c2 never existed and c2b's own join bumped it. Epoch 3's member
    list is unknown (null); the next epoch, after c2b was accepted, is known again."""
    log = Log("g")
    client_joins(log, "00:00", "c1", "i1", 1, 0, 1)
    _static_leave(log, "01:00", "c1", "i1", 1, 0, 1)
    client_line(log, f"{DAY}03:00,000", "c2", "i2", 0, "UNSUBSCRIBED", "JOINING")
    client_line(log, f"{DAY}03:00,000", "c2", "i2", 0, "JOINING", "PREPARE_LEAVING")
    client_line(log, f"{DAY}03:00,000", "c2", "i2", -2, "PREPARE_LEAVING", "LEAVING")
    client_line(log, f"{DAY}03:00,000", "c2", "i2", 0, "LEAVING", "UNSUBSCRIBED")
    client_joins(log, "03:03", "c2b", "i2", 3, 0, 1)
    client_line(log, f"{DAY}03:20,000", "c4", "i4", 0, "UNSUBSCRIBED", "JOINING")
    client_line(log, f"{DAY}03:20,002", "c4", "i4", 4, "JOINING", "RECONCILING")
    client_line(log, f"{DAY}03:20,004", "c4", "i4", 4, "RECONCILING", "ACKNOWLEDGING")
    client_line(log, f"{DAY}03:20,004", "c4", "i4", 4, "ACKNOWLEDGING", "STABLE")
    out = log.replay()
    assert members_by_epoch(out)[3] is None
    assert members_by_epoch(out)[4] == ["c2b", "c4"]


def _line(log: Log, when: str, member: str, client: str, epoch: int, old: str, new: str) -> None:
    """A dynamic member's state change in the log of consumer client `client` (its process)."""
    log.add(f"{DAY}{when}", "member", EventType.MEMBER_STATE_CHANGED, member_id=member, client_id=client,
            member_epoch=epoch, attributes={"from_state": old, "to_state": new})  # fmt: skip


def _joins(log: Log, when: str, member: str, client: str, epoch: int) -> None:
    _line(log, f"{when},000", member, client, 0, "UNSUBSCRIBED", "JOINING")
    _line(log, f"{when},002", member, client, epoch, "JOINING", "RECONCILING")
    _line(log, f"{when},004", member, client, epoch, "RECONCILING", "ACKNOWLEDGING")
    _line(log, f"{when},004", member, client, epoch, "ACKNOWLEDGING", "STABLE")


def test_an_epoch_whose_bumps_the_lines_explain_still_counts_a_dead_process_member():
    """Client c2's member c2 falls silent at epoch 2 (a crash) and its consumer later restarts as c2b: the
    coordinator counts c2 until its session expires, at a bump no consumer log shows. c1 leaves for good
    (epoch -1: a bump) and its restarted consumer joins as c1b, answered with epoch 4: the two bumps since
    epoch 2 are that leave and that join, so c2 was not removed before epoch 4, which counts it. c2b is then
    answered with epoch 6: one bump is unexplained (c2's expiry, or else), so epoch 6's list is null."""
    log = Log("g")
    _joins(log, "00:00", "c1", "c1", 1)
    _joins(log, "00:01", "c2", "c2", 2)
    _line(log, "00:20,000", "c1", "c1", 2, "STABLE", "PREPARE_LEAVING")
    _line(log, "00:20,005", "c1", "c1", -1, "PREPARE_LEAVING", "LEAVING")
    _line(log, "00:20,005", "c1", "c1", 2, "LEAVING", "UNSUBSCRIBED")
    _joins(log, "00:25", "c1b", "c1", 4)
    _joins(log, "00:34", "c2b", "c2", 6)
    out = log.replay()
    assert members_by_epoch(out)[4] == ["c1b", "c2"]
    assert members_by_epoch(out)[6] is None
