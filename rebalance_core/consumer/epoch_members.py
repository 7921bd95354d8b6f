"""The KIP-848 group epoch being reconciled, and who is in it: `OpenEpoch` and the facts about its members.

Models ConsumerGroup at one group epoch (group-coordinator `modern/consumer/ConsumerGroup`): its members
(ConsumerGroupMember, each with its member epoch and, for a static member, its group.instance.id), the
assignment a line stated for each, and each member's first reconciliation to the epoch (its latency from
the target, one row a member and epoch). Where the logs cannot tell whether a member was still counted
(removed unseen: GroupMetadataManager.consumerGroupFenceMember), the epoch's member list is unknown.
A mixin of `consumer.epochs.EpochTracker`, which owns the state it reads and writes.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from rebalance_core.events import TopicPartition
from rebalance_core.measures import utc_date

Target = dict[str, tuple[TopicPartition, ...]]


@dataclass
class OpenEpoch:
    """The group epoch being reconciled (at most one at a time)."""

    epoch: int
    started_at: int | None
    reason: str | None
    source: str  # observed | inferred
    timing_source: str  # coordinator | member
    episode_id: str
    episode_round: int
    target_at: int | None = None
    assignor: str | None = None
    target: Target | None = None
    target_source: str = "observed"
    instances: dict[str, str] = field(default_factory=dict)  # member -> group.instance.id (static members)
    stabilized_at: int | None = None  # set and not closed: a provisional convergence
    closed: bool = False  # generation row emitted (converged for good)
    reconciled: dict[str, int] = field(default_factory=dict)  # member -> first instant reconciled to epoch
    # member -> the assignment a coordinator line stated for it at this epoch (observed, where no target
    # map was logged)
    stated: dict[str, tuple[TopicPartition, ...]] = field(default_factory=dict)
    # the group's members at this epoch (member -> group.instance.id), where no target map names them:
    # taken when the epoch opens, so a member that joins or leaves later (its own epoch bump follows)
    # is not counted here; None = not taken (a state saved before this field existed)
    members: dict[str, str | None] | None = None
    # a member counted here may have been fenced unseen at this epoch (its process is known to be dead, and
    # when the coordinator removes it depends on a session timeout the logs do not state): the row's member
    # list is unknown (null), not a guess
    members_unknown: bool = False
    # counted members each of which may have been removed unseen at this epoch (a dead process whose session
    # expiry no line dates): the list is unknown (null) while one of them is neither shown out nor in
    members_doubted: list[str] = field(default_factory=list)

    @property
    def members_in_doubt(self) -> bool:
        """Whether the epoch's member list is unknown (null), for any reason."""
        return self.members_unknown or bool(self.members_doubted)


class EpochMembers:
    """Facts about the open epoch's members: in it, out of it, in doubt, their stated assignments, and the
    per-member reconciliation rows."""

    def member_reconciled(self, member: str, ts: int, timing_source: str) -> None:
        """`member` reached the current epoch in STABLE at `ts` (first time only: one latency per epoch)."""
        cur = self.current
        if cur is None or member in cur.reconciled:
            return
        cur.reconciled[member] = ts
        since = cur.target_at if cur.target_at is not None else cur.started_at
        self._reconciliations.append(
            {
                **self.key,
                "event_date": utc_date(ts),
                "group_epoch": cur.epoch,
                "member_id": member,
                "target_computed_at": cur.target_at,
                "reconciled_at": ts,
                "reconcile_ms": ts - since if since is not None else None,
                "timing_source": timing_source,
            }
        )

    def member_in_epoch(self, member: str, instance: str | None) -> None:
        """A line shows `member` in the group at the current epoch although it was not known when the epoch
        opened (a member from before the input, or a member's own log stating its epoch)."""
        cur = self.current
        if cur is None or cur.closed or cur.stabilized_at is not None or cur.members is None:
            return  # an epoch that converged (provisionally) keeps the members it converged with
        cur.members.setdefault(member, instance)

    def member_out(self, member: str) -> None:
        """`member` turned out to be out of the group at the current epoch (removed unseen: its removal is
        what bumped it; or a static member replaced at this epoch). An assignment its own log stated at this
        epoch goes with it: the row names the epoch's members (a replaced static member's last "Reconciling
        assignment" block is its replacement's target, GroupMetadataManager.replaceMember)."""
        cur = self.current
        if cur is not None and not cur.closed and cur.members is not None:
            cur.members.pop(member, None)
            cur.stated.pop(member, None)
            if member in cur.members_doubted:
                cur.members_doubted.remove(member)  # its doubt is settled: it is out

    def members_unknown(self) -> None:
        """Which members the current epoch counts cannot be told (see OpenEpoch.members_unknown)."""
        cur = self.current
        if cur is not None and not cur.closed and cur.target is None:
            cur.members_unknown = True

    def member_doubted(self, member: str) -> None:
        """Whether the current epoch still counts `member` cannot be told (see OpenEpoch.members_doubted)
        until a line shows it out of the epoch (member_out)."""
        cur = self.current
        if cur is not None and not cur.closed and cur.target is None and member not in cur.members_doubted:
            cur.members_doubted.append(member)

    def member_shown(self, member: str) -> None:
        """`member`'s own line states the current epoch (or a later one): the coordinator had it at that epoch,
        so it was not removed before it (a removed member's next heartbeat is refused with
        FENCED_MEMBER_EPOCH and it rejoins at a new epoch: ConsumerMembershipManager), and the doubt
        member_doubted raised is settled: it is in."""
        cur = self.current
        if cur is not None and not cur.closed and member in cur.members_doubted:
            cur.members_doubted.remove(member)

    def member_stated(self, member: str, assigned: tuple[TopicPartition, ...]) -> None:
        """A line stated `member`'s assignment at the current epoch (its latest one counts): the coordinator's
        assignment state, or the member's own "Reconciling assignment" block."""
        cur = self.current
        if cur is None or cur.closed:
            return
        if cur.stabilized_at is not None and member not in cur.stated and member not in (cur.members or {}):
            # the epoch converged without it: a static member back under a new member id gets the epoch as
            # it is (GroupMetadataManager.consumerGroupHeartbeat: no bump when its subscription is the old
            # one's), so it is not one of the members the epoch converged with
            return
        cur.stated[member] = tuple(sorted(assigned))

    def drain_reconciliations(self) -> list[dict]:
        """Per member and epoch: target computed -> reconciled (not a schemas.tables table)."""
        rows, self._reconciliations = self._reconciliations, []
        return rows
