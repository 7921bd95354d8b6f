"""A KIP-848 group epoch's assignment rows, and those held until the members' own logs can state them.

Models the assignment each member reaches at a group epoch as the logs show it: the coordinator's target
(ConsumerGroup's target assignment, GroupMetadataManager) where it is logged, else each member's own
"Reconciling assignment" line (AbstractMembershipManager.maybeReconcile) under the member epoch it reached
through CurrentAssignmentBuilder (UNREVOKED_PARTITIONS / UNRELEASED_PARTITIONS), else what its members
consumed (inferred). A mixin of `consumer.epochs.EpochTracker`, which owns the state it reads and writes.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from rebalance_core.events import TopicPartition


@dataclass
class HeldAssignment:
    """A closed epoch's assignment rows, held until its members' own logs can state them.

    Kafka 4.0's coordinator logs the target assignment at DEBUG only, while each member logs the assignment
    its heartbeat brings ("Reconciling assignment ... Assigned partitions:", AbstractMembershipManager
    .maybeReconcile) under the member epoch of the transition line before it. A lagging member reconciles an
    epoch after the group moved on, so the rows wait until every member of the epoch whose own log is in the
    input logged a later epoch, left the group, or the input ended."""

    epoch: int
    date: dt.date | None
    instances: dict[str, str]
    members: tuple[str, ...]
    fallback: dict[str, tuple[tuple[TopicPartition, ...], str]]  # member -> (partitions, source)
    # partitions the group's members were seen holding by the close (with those seen until the rows are
    # written: a partition some member holds and no member's line at the epoch names was withheld)
    held: frozenset[TopicPartition]
    waiting: set[str]
    closed_at: int | None = None  # the epoch's close: what the fallback rows say was consumed then


class HeldAssignments:
    """The assignments rows of closed epochs: written at once, or held for the members' own lines (HeldAssignment)
    and written once those lines are in."""

    def member_assignment_line(
        self,
        member: str,
        member_epoch: int | None,
        assigned: tuple[TopicPartition, ...],
        owned: tuple[TopicPartition, ...],
        revoking: bool,
        target_epoch: int | None = None,
    ) -> None:
        """A member's own "Reconciling assignment" line at `member_epoch` (its last state line's epoch).

        A line that revokes is a step towards a newer target at the member's current epoch
        (CurrentAssignmentBuilder: UNREVOKED_PARTITIONS keeps the epoch; KAFKA-16249), so it is not that
        epoch's assignment. Otherwise the member's latest line at an epoch is its assignment at it, unless the
        coordinator withheld a partition another member still held (UNRELEASED_PARTITIONS): checked when the
        rows are written (every held partition must be in some member's line).

        target_epoch: the group epoch whose target the revocation is a step to, where the coordinator's log
        tells it (the epoch of its latest "Computed a new target assignment" line): the member keeps the rest
        (computeNextAssignment: assigned & target) and moves to that epoch with it once it revoked; a line
        at that epoch adding partitions replaces it."""
        if member_epoch is None or member_epoch <= 0:
            return
        self.partitions_held.setdefault(member_epoch, set()).update(assigned, owned)
        if revoking:
            if target_epoch is None or target_epoch <= member_epoch:
                return
            member_epoch = target_epoch
            revoked = set(owned) - set(assigned)
            self.revoked_toward.setdefault(member_epoch, {})[member] = tuple(sorted(revoked))
        else:
            self.revoked_toward.get(member_epoch, {}).pop(member, None)  # its whole assignment, stated
        self.member_assigned.setdefault(member_epoch, {})[member] = tuple(sorted(assigned))

    def member_at_epoch(self, member: str, member_epoch: int | None) -> None:
        """`member`'s own log shows `member_epoch`: it will log nothing more for the older epochs."""
        if member_epoch is not None:
            self._release(lambda held: member_epoch > held.epoch, member)

    def member_gone(self, member: str, fenced: bool = False, process: str | None = None) -> None:
        """`member` is out of the group. A member the coordinator fenced (its session or rebalance timeout
        expired: GroupMetadataManager.consumerGroupFenceMember) may only have been frozen (a GC pause): its
        process still logs the "Reconciling assignment" block of the epoch its last heartbeat response
        brought once it wakes (ConsumerMembershipManager logs the block, then the next heartbeat answers
        FENCED_MEMBER_EPOCH / UNKNOWN_MEMBER_ID and it transitions to FENCED), so the rows stay held for it
        (see `late_block_awaited`, `member_released`), and so do those of the epochs closing without it that
        it was in. fenced: so removed, with its own log in the input (process: the consumer process that
        logged it, see `process_restarted`). Any other removal ends the wait."""
        if fenced:
            self.fenced_awaited[member] = process
        else:
            self.member_released(member)

    def member_released(self, member: str) -> None:
        """Nothing more of `member` can state a held epoch's assignment: the rows stop waiting for it (its
        next own line after the late block, its rejoin, or a day after its fence)."""
        self.fenced_awaited.pop(member, None)
        self._release(lambda held: True, member)

    def process_restarted(self, process: str, member: str) -> None:
        """`member` joins from `process`: a fenced member that process logged before under another member id
        is dead (a consumer keeps its member id while it lives; a crashed one restarts under a new id), so
        it will log no late block."""
        for other in [m for m, p in self.fenced_awaited.items() if p == process and m != member]:
            self.member_released(other)

    def late_block_awaited(self, member: str, member_epoch: int | None) -> bool:
        """Whether held rows of epoch `member_epoch` still wait for the (fenced) `member`'s own line."""
        return any(held.epoch == member_epoch and member in held.waiting for held in self.held)

    def member_stopped_at(self, member: str, ts: int) -> None:
        """`member`'s process stopped consuming at `ts`, an instant the input stated only later (its session
        expired: the coordinator fences it one session timeout after its last heartbeat,
        GroupMetadataManager.consumerGroupFenceMember). An epoch that closed after `ts` without a target had it
        consuming nothing then: the rows inferred from what it consumed go (held for member lines, or not
        drained yet)."""
        for held in self.held:
            rows = held.fallback.get(member)
            if (
                rows is not None
                and rows[1] == "inferred"
                and held.closed_at is not None
                and ts < held.closed_at
            ):
                del held.fallback[member]
        gone = {
            id(row) for closed_at, row in self._consumed_rows if row["member_id"] == member and ts < closed_at
        }
        if gone:
            self._out["assignments"] = [r for r in self._out["assignments"] if id(r) not in gone]
            self._consumed_rows = [(t, r) for t, r in self._consumed_rows if id(r) not in gone]

    def _release(self, applies: Callable[[HeldAssignment], bool], member: str) -> None:
        for held in self.held:
            if applies(held):
                held.waiting.discard(member)
        while self.held and not self.held[0].waiting:
            self._write_held(self.held.pop(0))

    def _held_until(self, epoch: int) -> set[TopicPartition]:
        """Partitions members' lines showed held at member epochs up to `epoch` (a partition created later is
        not one the epoch's target could withhold)."""
        return {tp for e, tps in self.partitions_held.items() if e <= epoch for tp in tps}

    def _write_held(self, held: HeldAssignment) -> None:
        stated = self.member_assigned.get(held.epoch, {})
        rows = held.fallback
        covered = {tp for tps in stated.values() for tp in tps}
        suspects = held.held | self._held_until(held.epoch)
        if len(held.members) == 1:
            # the epoch's lone member is withheld nothing (the coordinator withholds only what another member
            # of the group still owns; a removed member's partitions are freed at its removal): a line of it at
            # the epoch states its whole assignment there. Its revocation step towards the epoch states only
            # what it keeps (computeNextAssignment: assigned & target), so a partition some member held may
            # still come with its next heartbeat; one it revoked itself is in no one's target (e.g. a topic it
            # unsubscribed)
            step = self.revoked_toward.get(held.epoch, {}).get(held.members[0])
            suspects = set() if step is None else suspects - set(step)
        if held.members and all(m in stated for m in held.members) and suspects <= covered:
            # every member stated its assignment at the epoch and none of them was withheld a partition
            # (CurrentAssignmentBuilder.computeNextAssignment: UNRELEASED_PARTITIONS)
            rows = {m: (stated[m], "observed") for m in held.members}
        elif (
            any(m in stated for m in held.members)
            and not self.revoked_toward.get(held.epoch)
            and all(m in stated or self.logs_own_lines(m) for m in held.members)
            and suspects <= covered | {tp for m, (tps, _) in rows.items() if m not in stated for tp in tps}
        ):
            # some members logged no line at the epoch (nothing changed for them: their epoch moved without a
            # reconciliation, AbstractMembershipManager.maybeReconcile); those that did stated their whole
            # assignment, none withheld: a partition withheld is one another member still owned and had to
            # revoke towards the epoch (CurrentAssignmentBuilder: UNREVOKED_PARTITIONS), which its own log
            # would show. The others' rows stay what they consumed (inferred). A member also logs nothing at
            # an epoch it never heard of (the new target reaches it with its next heartbeat response,
            # ConsumerGroupHeartbeat; a later epoch may come first): so only when every partition held is
            # named by a block or still consumed by a silent member did nothing change for the silent ones;
            # else one of them was handed the rest unlogged (the fallback rows, inferred)
            named = {tp for m in held.members if m in stated for tp in stated[m]}
            rows = {
                m: (kept, source)
                for m, (tps, source) in rows.items()
                if m not in stated and (kept := tuple(tp for tp in tps if tp not in named))
            }
            rows.update({m: (stated[m], "observed") for m in held.members if m in stated})
        self._assignment_rows(held.epoch, held.date, held.instances, rows)
        for epoch in [e for e in self.member_assigned if e <= held.epoch]:
            if not any(h.epoch == epoch for h in self.held):
                del self.member_assigned[epoch]
        for epoch in [e for e in self.revoked_toward if e <= held.epoch]:
            if not any(h.epoch == epoch for h in self.held):
                del self.revoked_toward[epoch]
        # what older epochs' lines showed held still counts for the later epochs: kept as one entry
        older = [e for e in self.partitions_held if e < held.epoch]
        if older:
            folded = self._held_until(held.epoch)
            for e in older:
                del self.partitions_held[e]
            self.partitions_held[held.epoch] = folded

    def _assignment_rows(
        self,
        epoch: int,
        date: dt.date | None,
        instances: Mapping[str, str],
        rows: Mapping[str, tuple[tuple[TopicPartition, ...], str]],
    ) -> None:
        for member in sorted(rows):
            tps, source = rows[member]
            for tp in tps:
                self._out["assignments"].append(
                    {
                        **self.key,
                        "event_date": date,
                        "generation_id": epoch,
                        "member_id": member,
                        "group_instance_id": instances.get(member),
                        "topic": tp.topic,
                        "partition": tp.partition,
                        "source": source,
                    }
                )
