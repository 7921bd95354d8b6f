"""The KIP-848 group coordinator as a model: what `GroupMetadataManager.consumerGroupHeartbeat` does
with one ConsumerGroupHeartbeat, plus leaves and the session / rebalance timers. The simulator drives it.

Per heartbeat (Kafka's three steps):
1. create or update the member; a new member, a changed subscription or changed topic metadata bumps
   the group epoch;
2. if the group epoch is ahead of the target assignment epoch (or a static member was replaced), the
   server-side assignor computes a new target assignment for the group epoch;
3. the member is reconciled one step towards its target (`reconcile.reconcile_member`).

Leaving: epoch -1 removes the member and bumps the group epoch (consumerGroupFenceMember); epoch -2 (a
static member, KIP-848 + KIP-345) only marks it as temporarily gone: it keeps its assignment, so its
partitions stay reserved until it rejoins with the same group.instance.id (replacing the old member id,
no new epoch) or its session times out. A fence from a timer also bumps the epoch; the new target is then
computed at the next heartbeat of any member, as in Kafka.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace

from rebalance_core.assignors import GroupSpec, MemberSubscription, get_assignor
from rebalance_core.consumer.reconcile import MemberAssignment, PartitionSet, reconcile_member
from rebalance_core.consumer.states import (
    JOIN_GROUP_MEMBER_EPOCH,
    LEAVE_GROUP_MEMBER_EPOCH,
    LEAVE_GROUP_STATIC_MEMBER_EPOCH,
    GroupState,
    MemberState,
    derive_group_state,
)
from rebalance_core.events import TopicPartition
from schemas.events import EventType, RemovalReason

# Heartbeat errors the client reacts to (Errors.*)
FENCED_MEMBER_EPOCH = "FENCED_MEMBER_EPOCH"
UNKNOWN_MEMBER_ID = "UNKNOWN_MEMBER_ID"
UNRELEASED_INSTANCE_ID = "UNRELEASED_INSTANCE_ID"

# rebalance reasons (KIP-848 logs none; these name the cause of the epoch bump)
REASON_JOINED = "member joined"
REASON_LEFT = "member left"
REASON_SESSION = "member session expired"
REASON_REBALANCE_TIMEOUT = "member failed to revoke within the rebalance timeout"
REASON_SUBSCRIPTION = "subscription changed"
REASON_METADATA = "topic metadata changed"


@dataclass
class ServerMember:
    member_id: str
    instance_id: str | None
    subscription: tuple[str, ...]
    assignment: MemberAssignment = field(default_factory=MemberAssignment)
    last_heartbeat: int = 0
    revoke_deadline: int | None = None  # rebalance timeout running while UNREVOKED_PARTITIONS


@dataclass(frozen=True)
class HeartbeatResponse:
    member_epoch: int = 0
    assignment: PartitionSet = frozenset()
    error: str | None = None


# emit(ts, event_type, **fields): the simulator turns these into canonical coordinator events
Emit = Callable[..., None]


class ConsumerGroupCoordinator:
    def __init__(
        self,
        topics: dict[str, int],
        assignor: str,
        session_timeout_ms: int,
        rebalance_timeout_ms: int,
        emit: Emit,
        topic_ids: dict[str, str] | None = None,
    ):
        self.topics = dict(topics)
        self.topic_ids = dict(topic_ids or {})
        self.assignor_name = assignor
        self._assignor = get_assignor(assignor)
        self.session_timeout_ms = session_timeout_ms
        self.rebalance_timeout_ms = rebalance_timeout_ms
        self.emit = emit
        self.group_epoch = 0
        self.target_epoch = 0
        self.target: dict[str, PartitionSet] = {}
        self.members: dict[str, ServerMember] = {}
        self._metadata_changed = False
        # Indexes kept in step with `members` (see _add_member, _set_assignment, _remove_member), so that
        # a heartbeat costs no scan of the whole group: how many members hold each partition (assigned or
        # pending revocation), and the members not reconciled to the target epoch.
        self._holders: dict[TopicPartition, int] = {}
        self._unreconciled: set[str] = set()

    # ------------------------------------------------------------------------------------ queries
    @property
    def state(self) -> GroupState:
        return derive_group_state(
            self.group_epoch, self.target_epoch, (not self._unreconciled,), bool(self.members)
        )

    def static_member(self, instance_id: str) -> ServerMember | None:
        return next((m for m in self.members.values() if m.instance_id == instance_id), None)

    def _held_by_other(self, member_id: str) -> Callable[[TopicPartition], bool]:
        """Whether a member other than `member_id` holds a partition (from the holder counts)."""
        member = self.members.get(member_id)
        own = member.assignment if member is not None else MemberAssignment()
        holders = self._holders

        def held_by_other(tp: TopicPartition) -> bool:
            return holders.get(tp, 0) - (tp in own.assigned or tp in own.pending_revocation) > 0

        return held_by_other

    # --------------------------------------------------------------------------------- heartbeats
    def heartbeat(
        self,
        ts: int,
        member_id: str,
        member_epoch: int,
        instance_id: str | None,
        subscription: tuple[str, ...],
        owned: PartitionSet | None,
    ) -> HeartbeatResponse:
        """owned: the partitions the heartbeat reports, None when it omits them (unchanged since sent)."""
        if member_epoch in (LEAVE_GROUP_MEMBER_EPOCH, LEAVE_GROUP_STATIC_MEMBER_EPOCH):
            self.leave(ts, member_id, member_epoch)
            return HeartbeatResponse(member_epoch=member_epoch)
        bump_reason = None
        static_replaced = False
        member = self.members.get(member_id)
        if member_epoch == JOIN_GROUP_MEMBER_EPOCH:
            previous = self.static_member(instance_id) if instance_id else None
            if previous is not None:
                if previous.assignment.member_epoch != LEAVE_GROUP_STATIC_MEMBER_EPOCH:
                    # GroupMetadataManager.throwIfInstanceIdIsUnreleased; fatal for the KIP-848 client
                    return HeartbeatResponse(error=UNRELEASED_INSTANCE_ID)
                # the returning static member takes over its predecessor's assignment (no new epoch)
                static_replaced = True
                member = self._replace_static(ts, previous, member_id, instance_id)
            else:
                if member is not None:
                    # a known member id rejoining from scratch: the old incarnation is fenced first
                    self._fence(ts, member, RemovalReason.LEAVE_GROUP, REASON_LEFT)
                member = ServerMember(member_id, instance_id, ())
                self.emit(
                    ts,
                    EventType.JOIN_RECEIVED,
                    member_id=member_id,
                    group_instance_id=instance_id,
                    subscription=subscription,
                    attributes={
                        "session_timeout_ms": str(self.session_timeout_ms),
                        "rebalance_timeout_ms": str(self.rebalance_timeout_ms),
                    },
                )
                self._add_member(member)
        elif member is None:
            return HeartbeatResponse(error=UNKNOWN_MEMBER_ID)
        elif member_epoch != member.assignment.member_epoch and not (
            member_epoch == member.assignment.previous_epoch
            and owned is not None
            and owned <= member.assignment.assigned
        ):
            # GroupMetadataManager.throwIfMemberEpochIsInvalid (isSubset is false for omitted partitions)
            return HeartbeatResponse(error=FENCED_MEMBER_EPOCH)

        if tuple(subscription) != member.subscription:
            bump_reason = REASON_JOINED if not member.subscription else REASON_SUBSCRIPTION
            member.subscription = tuple(subscription)
        if self._metadata_changed:
            self._metadata_changed = False
            self.emit(
                ts,
                EventType.TOPIC_METADATA_CHANGED,
                attributes={f"topic.{t}": str(n) for t, n in sorted(self.topics.items())},
            )
            bump_reason = bump_reason or REASON_METADATA
        if bump_reason:
            self._bump(ts, bump_reason)
        if self.group_epoch > self.target_epoch or static_replaced:
            self._compute_target(ts)

        before = member.assignment
        updated = reconcile_member(
            before,
            self.target_epoch,
            self.target.get(member_id, frozenset()),
            owned,
            self._held_by_other(member_id),
        )
        if updated != before:
            self._set_assignment(member, updated)
            self._emit_member_state(ts, member)
            if updated.state is MemberState.UNREVOKED_PARTITIONS:
                member.revoke_deadline = ts + self.rebalance_timeout_ms
            else:
                member.revoke_deadline = None
        member.last_heartbeat = ts
        return HeartbeatResponse(member.assignment.member_epoch, member.assignment.assigned)

    def _replace_static(
        self, ts: int, previous: ServerMember, member_id: str, instance_id: str
    ) -> ServerMember:
        """A static member back with epoch 0 replaces the one that left with -2 (possibly the same id):
        it inherits the assigned partitions and the target; no epoch bump."""
        member = ServerMember(
            member_id,
            instance_id,
            previous.subscription,
            MemberAssignment(assigned=previous.assignment.assigned),
        )
        self._remove_member(previous.member_id)
        self.target[member_id] = self.target.pop(previous.member_id, frozenset())
        self._add_member(member)
        self.emit(
            ts,
            EventType.STATIC_MEMBER_REPLACED,
            member_id=member_id,
            group_instance_id=instance_id,
            attributes={"old_member_id": previous.member_id},
        )
        return member

    def leave(self, ts: int, member_id: str, member_epoch: int) -> None:
        member = self.members.get(member_id)
        if member is None:
            return
        if member_epoch == LEAVE_GROUP_STATIC_MEMBER_EPOCH and member.instance_id:
            # consumerGroupStaticMemberGroupLeave: epoch -2, assignment kept, session timer still running
            self._set_assignment(
                member,
                replace(
                    member.assignment,
                    member_epoch=LEAVE_GROUP_STATIC_MEMBER_EPOCH,
                    pending_revocation=frozenset(),
                ),
            )
            member.revoke_deadline = None
            self.emit(
                ts,
                EventType.MEMBER_REMOVED,
                member_id=member_id,
                group_instance_id=member.instance_id,
                member_epoch=LEAVE_GROUP_STATIC_MEMBER_EPOCH,
                reason=RemovalReason.LEAVE_GROUP.value,
            )
            return
        self._fence(ts, member, RemovalReason.LEAVE_GROUP, REASON_LEFT, member_epoch=LEAVE_GROUP_MEMBER_EPOCH)

    # ------------------------------------------------------------------------------------- timers
    def next_deadline(self, member_id: str) -> int | None:
        """The earliest instant a timer of this member can fire (session or rebalance timeout)."""
        member = self.members.get(member_id)
        if member is None:
            return None
        deadlines = [member.last_heartbeat + self.session_timeout_ms]
        if member.revoke_deadline is not None:
            deadlines.append(member.revoke_deadline)
        return min(deadlines)

    def expire(self, ts: int, member_id: str) -> str | None:
        """Fire this member's due timers at `ts`; the removal reason if it was fenced."""
        member = self.members.get(member_id)
        if member is None:
            return None
        if member.last_heartbeat + self.session_timeout_ms <= ts:
            self._fence(ts, member, RemovalReason.SESSION_TIMEOUT, REASON_SESSION)
            return RemovalReason.SESSION_TIMEOUT.value
        if member.revoke_deadline is not None and member.revoke_deadline <= ts:
            self._fence(ts, member, RemovalReason.REBALANCE_TIMEOUT, REASON_REBALANCE_TIMEOUT)
            return RemovalReason.REBALANCE_TIMEOUT.value
        return None

    def topic_partitions_changed(self, topic: str, count: int) -> None:
        """The metadata image changed. The subscription metadata covers subscribed topics only, so the
        next heartbeat bumps the epoch only if some member subscribes to the topic."""
        self.topics[topic] = count
        if any(topic in m.subscription for m in self.members.values()):
            self._metadata_changed = True

    # ---------------------------------------------------------------------------------- internals
    def _fence(
        self,
        ts: int,
        member: ServerMember,
        reason: RemovalReason,
        bump_reason: str,
        member_epoch: int | None = None,
    ) -> None:
        """consumerGroupFenceMember: remove the member (its partitions are free at once), bump the epoch."""
        self._remove_member(member.member_id)
        self.target.pop(member.member_id, None)
        attributes = {"session_timeout_ms": str(self.session_timeout_ms)}
        if reason is RemovalReason.REBALANCE_TIMEOUT:
            attributes = {"rebalance_timeout_ms": str(self.rebalance_timeout_ms)}
        self.emit(
            ts,
            EventType.MEMBER_REMOVED,
            member_id=member.member_id,
            group_instance_id=member.instance_id,
            member_epoch=member_epoch,
            reason=reason.value,
            attributes=attributes,
        )
        self._bump(ts, bump_reason)

    def _add_member(self, member: ServerMember) -> None:
        self.members[member.member_id] = member
        self._index(member, +1)

    def _remove_member(self, member_id: str) -> None:
        member = self.members.pop(member_id)
        self._index(member, -1)

    def _set_assignment(self, member: ServerMember, assignment: MemberAssignment) -> None:
        self._index(member, -1)
        member.assignment = assignment
        self._index(member, +1)

    def _index(self, member: ServerMember, sign: int) -> None:
        """Count (+1) or uncount (-1) the member's held partitions; file it as (un)reconciled."""
        holders = self._holders
        for tp in member.assignment.held():
            holders[tp] = holders.get(tp, 0) + sign
        if sign > 0 and not member.assignment.is_reconciled_to(self.target_epoch):
            self._unreconciled.add(member.member_id)
        else:
            self._unreconciled.discard(member.member_id)

    def _bump(self, ts: int, reason: str) -> None:
        self.group_epoch += 1
        self.emit(ts, EventType.GROUP_EPOCH_BUMPED, group_epoch=self.group_epoch, reason=reason)

    def _compute_target(self, ts: int) -> None:
        """TargetAssignmentBuilder: the assignor sees every member (a static member away with epoch -2
        included, so its partitions stay reserved) and, for stickiness, each one's current target."""
        spec = GroupSpec(
            topics=self.topics,
            members=tuple(
                MemberSubscription(
                    member_id=m.member_id,
                    subscription=m.subscription,
                    group_instance_id=m.instance_id,
                    owned=tuple(sorted(self.target.get(m.member_id, ()))),
                )
                for m in sorted(self.members.values(), key=lambda m: m.member_id)
            ),
            topic_ids=self.topic_ids,
        )
        result = self._assignor.assign(spec)
        self.target = {m: frozenset(result.get(m, ())) for m in self.members}
        self.target_epoch = self.group_epoch
        self._unreconciled = {
            m.member_id for m in self.members.values() if not m.assignment.is_reconciled_to(self.target_epoch)
        }
        self.emit(
            ts,
            EventType.TARGET_ASSIGNMENT_COMPUTED,
            assignment_epoch=self.target_epoch,
            assignment={m: tuple(sorted(tps)) for m, tps in sorted(self.target.items())},
            protocol_name=self.assignor_name,
        )

    def _emit_member_state(self, ts: int, member: ServerMember) -> None:
        a = member.assignment
        self.emit(
            ts,
            EventType.MEMBER_EPOCH_UPDATED,
            member_id=member.member_id,
            group_instance_id=member.instance_id,
            member_epoch=a.member_epoch,
            partitions=tuple(sorted(a.assigned)),
            attributes={
                "previous_epoch": str(a.previous_epoch),
                "state": a.state.value,
                "revoked": ",".join(str(tp) for tp in sorted(a.pending_revocation)),
            },
        )
