"""One member's reconciliation step towards the target assignment (KIP-848).

Follows Kafka's `CurrentAssignmentBuilder.build` / `computeNextAssignment` (group-coordinator,
modern.consumer): at every heartbeat the coordinator moves the member one step:

1. partitions it owns that are no longer in its target must be revoked first: the member stays at its
   current epoch in UNREVOKED_PARTITIONS until a heartbeat no longer reports them as owned; then it
   moves on from epoch + 1 (KAFKA-16249, 3.8+): to the target epoch, or, if a newer target makes it
   revoke again, to UNREVOKED_PARTITIONS at epoch + 1 (3.7 kept the old epoch);
2. then it moves to the target epoch and gets the target partitions that are free; a target partition
   still held by another member (assigned to it or pending its revocation) is withheld: the member is
   UNRELEASED_PARTITIONS until a later heartbeat finds it released;
3. otherwise it is STABLE at the target epoch.

No group-wide barrier: every member advances on its own heartbeats.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace

from rebalance_core.consumer.states import MemberState
from rebalance_core.events import TopicPartition

PartitionSet = frozenset[TopicPartition]


class MemberFenced(Exception):
    """FencedMemberEpochException: the member must give up its partitions and rejoin with epoch 0."""


@dataclass(frozen=True)
class MemberAssignment:
    """ConsumerGroupMember's assignment part: epochs, state, assigned and pending-revocation partitions."""

    member_epoch: int = 0
    previous_epoch: int = 0
    state: MemberState = MemberState.STABLE
    assigned: PartitionSet = frozenset()
    pending_revocation: PartitionSet = frozenset()

    def is_reconciled_to(self, target_epoch: int) -> bool:
        """ConsumerGroupMember.isReconciledTo."""
        return self.state is MemberState.STABLE and self.member_epoch == target_epoch

    def held(self) -> PartitionSet:
        """Partitions this member blocks for others (Kafka keeps a partition epoch for both sets)."""
        return self.assigned | self.pending_revocation

    def with_epoch(self, epoch: int, **changes) -> MemberAssignment:
        """Builder.updateMemberEpoch: the old epoch becomes the previous one."""
        return replace(self, previous_epoch=self.member_epoch, member_epoch=epoch, **changes)


def reconcile_member(
    member: MemberAssignment,
    target_epoch: int,
    target: PartitionSet,
    owned: PartitionSet | None,
    held_by_other: Callable[[TopicPartition], bool],
) -> MemberAssignment:
    """The member's next assignment state (the same object when nothing changes).

    owned: the partitions the member reported in this heartbeat; None = not reported (then it is assumed
        to still own everything, as Kafka's ownsRevokedPartitions does).
    held_by_other: whether a partition is assigned to, or pending revocation by, another member.
    """
    state = member.state
    if state is MemberState.STABLE:
        if member.member_epoch == target_epoch:
            return member
        return _next_assignment(member, member.member_epoch, target_epoch, target, owned, held_by_other)
    if state is MemberState.UNREVOKED_PARTITIONS:
        if _still_owns(member.pending_revocation, owned):
            return member
        # CurrentAssignmentBuilder.build (KAFKA-16249): "it can transition to the next epoch (current + 1)"
        return _next_assignment(member, member.member_epoch + 1, target_epoch, target, owned, held_by_other)
    if state is MemberState.UNRELEASED_PARTITIONS:
        return _next_assignment(member, member.member_epoch, target_epoch, target, owned, held_by_other)
    # UNKNOWN: a state this coordinator does not know; the member restarts from scratch.
    if owned is None or owned:
        raise MemberFenced("member in an unknown state must abandon its partitions and rejoin")
    return _next_assignment(member, target_epoch, target_epoch, target, owned, held_by_other)


def _still_owns(pending_revocation: PartitionSet, owned: PartitionSet | None) -> bool:
    return owned is None or bool(pending_revocation & owned)


def _next_assignment(
    member: MemberAssignment,
    member_epoch: int,
    target_epoch: int,
    target: PartitionSet,
    owned: PartitionSet | None,
    held_by_other: Callable[[TopicPartition], bool],
) -> MemberAssignment:
    """CurrentAssignmentBuilder.computeNextAssignment."""
    kept = member.assigned & target
    to_revoke = member.assigned - kept
    wanted = target - kept
    # A partition this member itself is still revoking is not "unreleased" for it.
    unreleased = frozenset(tp for tp in wanted if tp not in member.pending_revocation and held_by_other(tp))
    to_assign = wanted - unreleased

    if to_revoke and _still_owns(to_revoke, owned):
        # Revoke first, at the current epoch (the rebalance timeout starts here).
        return member.with_epoch(
            member_epoch, state=MemberState.UNREVOKED_PARTITIONS, assigned=kept, pending_revocation=to_revoke
        )
    state = MemberState.UNRELEASED_PARTITIONS if unreleased else MemberState.STABLE
    return member.with_epoch(
        target_epoch, state=state, assigned=kept | to_assign, pending_revocation=frozenset()
    )
