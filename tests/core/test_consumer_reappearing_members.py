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
