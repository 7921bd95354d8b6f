"""Group epochs as generations and rebalance episodes (KIP-848), on top of the ownership timeline.

Shared by the simulator (ground truth) and the replayer (reconstruction), so both measure the same way.

KIP-848 has no generations and no group-wide barrier. A "rebalance" is: the group epoch is bumped
(a member joined, left or failed, a subscription or the topic metadata changed), the coordinator
computes a target assignment for that epoch, and every member reconciles to it through its own
heartbeats. So, per group epoch E, one `generations` row:

    generation_id         E (group_protocol = rebalance_protocol = "consumer")
    rebalance_started_at  the epoch bump (else the first thing that shows E)
    join_completed_at     the target assignment for E computed (the closest analog of "Stabilized group")
    stabilized_at         convergence: the last member reconciled to E (ConsumerGroup state Stable)
    rebalance_ms          bump -> convergence; convergence time proper = stabilized_at - join_completed_at

An epoch bumped again before it converged (the group changed mid-reconciliation) closes with
stabilized_at null and the next epoch is a further *round* of the same episode; the episode ends once an
epoch converged and its target assignment is consumed (every target partition started by its owner), so
that member-side starts that trail the coordinator's view still belong to it.

Rows close (and are dated) at convergence, at the bump that superseded the epoch, or when the group
emptied. A *provisional* convergence (member-side logs only: all known members STABLE, nothing in
flight) can still be extended by later events at the same epoch; it is closed by the next epoch or by
finish().
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Collection, Mapping
from dataclasses import asdict, dataclass, field
from typing import Any

from rebalance_core.checkpoint_rows import row_from_json, row_to_json
from rebalance_core.events import TopicPartition, format_ts
from rebalance_core.measure_records import utc_date
from rebalance_core.measures import OwnershipTimeline
from rebalance_core.replay_common import unlogged_generation_row

GROUP_PROTOCOL = "consumer"  # generations.group_protocol / rebalance_protocol for KIP-848 groups
PROTOCOL_TYPE = "consumer"

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


class EpochTracker:
    """Turns epoch facts into generations / assignments rows, episodes on the timeline, and per-member
    reconciliation rows. The caller decides *when* facts happen (simulator: its model; replayer: events)."""

    def __init__(
        self,
        timeline: OwnershipTimeline,
        members: Callable[[], Mapping[str, str | None]],
        default_assignor: str | None = None,
        state: dict | None = None,
    ):
        """members: the group's current members (member id -> group.instance.id or None), for an epoch
        that closes without a target assignment."""
        self.timeline = timeline
        self.members = members
        self.key = dict(timeline.key)
        self.assignor = default_assignor  # the last assignor seen (KIP-848 logs name it per target)
        self.current: OpenEpoch | None = None
        self._out: dict[str, list[dict]] = {"generations": [], "assignments": []}
        self._reconciliations: list[dict] = []
        # member-side assignment lines (see HeldAssignment): set by the caller once member logs are present
        self.hold_for_member_lines = False
        self.member_assigned: dict[int, dict[str, tuple[TopicPartition, ...]]] = {}  # epoch -> member -> tps
        # epoch -> member -> partitions its line revoked on its way to that epoch (not in its target there), where
        # that step is the latest line member_assigned has of it at the epoch
        self.revoked_toward: dict[int, dict[str, tuple[TopicPartition, ...]]] = {}
        # member epoch -> partitions a member's line at it showed assigned or owned
        self.partitions_held: dict[int, set[TopicPartition]] = {}
        self.held: list[HeldAssignment] = []
        # rows not drained yet that an epoch closed without a target inferred from what its members consumed:
        # (the close, the row), for member_stopped_at (not in snapshots: rows restored keep what they say)
        self._consumed_rows: list[tuple[int, dict]] = []
        # whether a member's own log is in the input (set by the replayer): only those are waited for
        self.logs_own_lines: Callable[[str], bool] = lambda member: True
        if state:
            self._restore(state)

    # ------------------------------------------------------------------------------------ facts
    @property
    def epoch(self) -> int | None:
        return self.current.epoch if self.current else None

    def open_epoch(
        self,
        epoch: int,
        ts: int | None,
        reason: str | None = None,
        source: str = "observed",
        timing_source: str = "coordinator",
        seen_at: int | None = None,
    ) -> bool:
        """Group epoch `epoch` begins at `ts` (None: at an instant no event shows; `seen_at` is the first
        that shows the epoch). False (nothing done) if it is not newer than the current."""
        anchor = ts if ts is not None else seen_at
        cur = self.current
        if cur is not None and epoch <= cur.epoch:
            return False
        tl = self.timeline
        round_no = 1
        if cur is not None and not cur.closed:
            if cur.stabilized_at is None:
                # bumped again before converging: the next round of the same episode
                self._close_generation(cur, closed_at=anchor)
                if tl.episode is not None:
                    tl.next_round()
                    round_no = cur.episode_round + 1
            else:
                self._close_generation(cur, closed_at=cur.stabilized_at)
        if round_no == 1:
            ep = tl.begin_episode(
                f"{self.key['group_id']}@{format_ts(anchor)}/epoch-{epoch}",
                ts,
                reason=reason,
                rebalance_protocol=GROUP_PROTOCOL,
                timing_source=timing_source,
                source=source,
                seen_at=seen_at,
            )
            ep.first_generation_id = epoch
        episode = tl.episode
        episode.last_generation_id = epoch
        self.current = OpenEpoch(
            epoch=epoch,
            started_at=ts,
            reason=reason,
            source=source,
            timing_source=timing_source,
            episode_id=episode.episode_id,
            episode_round=round_no,
            members=dict(self.members()),
        )
        return True

    def target_computed(
        self,
        ts: int,
        target: Mapping[str, tuple[TopicPartition, ...]] | None,
        assignor: str | None = None,
        instances: Mapping[str, str] | None = None,
        source: str = "observed",
    ) -> None:
        """The target assignment of the current epoch (again at the same epoch: a static member replaced).
        target None: computed, but its map is not known (Kafka 4.0 logs it at DEBUG only)."""
        cur = self.current
        if cur.target_at is None:
            cur.target_at = ts
        if target is None:
            # the target covers the members as they are now (a static member replaced at this epoch
            # recomputes it without a bump: GroupMetadataManager.consumerGroupHeartbeat); an epoch that
            # converged already keeps the members it converged with
            if cur.stabilized_at is None:
                cur.members = dict(self.members())
            self.assignor = cur.assignor = assignor or cur.assignor or self.assignor
            return
        cur.target = {m: tuple(sorted(tps)) for m, tps in target.items()}
        cur.target_source = source
        self.assignor = cur.assignor = assignor or cur.assignor or self.assignor
        if instances is not None:
            cur.instances = {m: i for m, i in instances.items() if i and m in cur.target}

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

    def member_gone(self, member: str) -> None:
        self._release(lambda held: True, member)

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
        ):
            # some members logged no line at the epoch (nothing changed for them: their epoch moved without a
            # reconciliation, AbstractMembershipManager.maybeReconcile); those that did stated their whole
            # assignment, none withheld: a partition withheld is one another member still owned and had to
            # revoke towards the epoch (CurrentAssignmentBuilder: UNREVOKED_PARTITIONS), which its own log
            # would show. The others' rows stay what they consumed (inferred)
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

    def converged(self, ts: int, provisional: bool = False) -> None:
        """Every member is reconciled to the current epoch at `ts`."""
        cur = self.current
        if cur is None or cur.closed:
            return
        cur.stabilized_at = ts
        self.timeline.round_completed(cur.epoch, ts)
        if not provisional:
            self._close_generation(cur, closed_at=ts)

    def settle(self) -> None:
        """A provisional convergence holds for good: the group changes now (a member is removed, which bumps
        the epoch), so the epoch's row is closed with what its members consume before the change."""
        cur = self.current
        if cur is not None and not cur.closed and cur.stabilized_at is not None:
            self._close_generation(cur, closed_at=cur.stabilized_at)

    def unconverged(self) -> None:
        """A provisional convergence did not hold (a member started reconciling again at this epoch)."""
        cur = self.current
        if cur is not None and not cur.closed and cur.stabilized_at is not None:
            cur.stabilized_at = None
            if self.timeline.episode is not None:
                self.timeline.episode.stabilized_at = None

    def group_empty(self, ts: int, emptied_unseen: bool = False) -> None:
        """No members left: the current epoch ends Empty, and so does its episode. emptied_unseen: the removal
        that emptied the group bumped the epoch to one no event shows (member-side logs only: the last member's
        leave heartbeat is answered after its last line, and the removal bumps the group epoch,
        GroupMetadataManager.consumerGroupFenceMember): the current epoch, the one that member's line stated,
        had members; the Empty one has no row (its number is not shown: another bump may have come between)."""
        cur = self.current
        tl = self.timeline
        if cur is not None and not cur.closed and cur.stabilized_at is not None:
            # it converged (provisionally) with its members: the epoch that emptied the group is a later one
            self._close_generation(cur, closed_at=cur.stabilized_at)
        elif cur is not None and not cur.closed:
            self._close_generation(cur, closed_at=ts, ended_empty=not emptied_unseen)
            tl.round_completed(cur.epoch, ts)
        tl.group_empty(ts)
        tl.end_episode(ts)

    def epoch_shown_late(
        self, epoch: int, ts: int, timing_source: str, members: Mapping[str, str | None] | None = None
    ) -> None:
        """Member-side logs only: a member's line at `ts` states `epoch`, one the group had already passed when
        this member's line came (the epoch opened from a later one skipped it). The member was in it, so it did
        not end Empty; when it began and whether it converged, no line shows (null); who else, only where the
        causes of the bumps around it tell (`members`: member -> group.instance.id, else null)."""
        row = unlogged_generation_row(
            self.timeline,
            self.key,
            ts,
            epoch,
            group_protocol=GROUP_PROTOCOL,
            protocol_type=PROTOCOL_TYPE,
            protocol_name=self.assignor,
            rebalance_protocol=GROUP_PROTOCOL,
            leader_member_id=None,
            episode_id=None,
            timing_source=timing_source,
        )
        if members is not None:
            row["members"] = sorted(members)
            row["member_count"] = len(members)
            row["static_member_count"] = sum(1 for instance in members.values() if instance)
        self._out["generations"].append(row)

    def maybe_end_episode(self, awaited_by_nobody: Collection[TopicPartition] = ()) -> None:
        """End the episode once its last epoch converged and the target is consumed by its owners. Without
        the target: once every partition stopped is consumed again, but those the caller knows no member
        will take (`awaited_by_nobody`: of a topic the group no longer subscribes)."""
        cur = self.current
        tl = self.timeline
        if cur is None or not cur.closed or tl.episode is None or tl.episode.episode_id != cur.episode_id:
            return
        if cur.target is not None:
            for member, tps in cur.target.items():
                if any(tl.owner_of(tp) != member for tp in tps):
                    return
        elif any(tp not in awaited_by_nobody for tp in tl.stopped()):
            return
        tl.end_episode()

    # ----------------------------------------------------------------------------------- output
    def drain(self) -> dict[str, list[dict]]:
        """generations and assignments rows closed since the last drain."""
        out = self._out
        self._out = {name: [] for name in out}
        self._consumed_rows = []
        return out

    def drain_reconciliations(self) -> list[dict]:
        """Per member and epoch: target computed -> reconciled (not a schemas.tables table)."""
        rows, self._reconciliations = self._reconciliations, []
        return rows

    def finish(self, final: bool = True, last_ts: int | None = None) -> None:
        """End of input: a provisionally converged (or unfinished) epoch is closed as it stands."""
        cur = self.current
        if final and cur is not None and not cur.closed:
            closed_at = cur.stabilized_at if cur.stabilized_at is not None else last_ts
            self._close_generation(cur, closed_at=closed_at)
        if final:
            while self.held:
                self._write_held(self.held.pop(0))

    def restart(self, ts: int) -> None:
        """The group was deleted (group_dead): the current epoch closes as it stands; epochs restart."""
        self.finish(final=True, last_ts=ts)
        self.current = None

    def _close_generation(self, cur: OpenEpoch, closed_at: int | None, ended_empty: bool = False) -> None:
        cur.closed = True
        tl = self.timeline
        if cur.target is None:
            now = {**dict.fromkeys(cur.stated), **(self.members() if cur.members is None else cur.members)}
            cur.instances = {m: i for m, i in now.items() if i}
            members = sorted(now)
        else:
            members = sorted(cur.target)
        rebalance_ms = (
            cur.stabilized_at - cur.started_at
            if cur.stabilized_at is not None and cur.started_at is not None
            else None
        )
        date = utc_date(closed_at) if closed_at is not None else None
        known = cur.target is not None or not cur.members_in_doubt
        self._out["generations"].append(
            {
                **self.key,
                "event_date": date,
                "generation_id": cur.epoch,
                "group_protocol": GROUP_PROTOCOL,
                "protocol_type": PROTOCOL_TYPE,
                "protocol_name": cur.assignor or self.assignor,
                "rebalance_protocol": GROUP_PROTOCOL,
                "leader_member_id": None,  # KIP-848: the coordinator assigns; there is no leader
                "member_count": len(members) if known else None,
                "static_member_count": sum(1 for m in members if m in cur.instances) if known else None,
                "members": members if known else None,
                "rebalance_started_at": cur.started_at,
                "join_completed_at": cur.target_at,
                "stabilized_at": cur.stabilized_at,
                "ended_empty": ended_empty,
                "rebalance_reason": cur.reason,
                "rebalance_ms": rebalance_ms,
                "episode_id": cur.episode_id,
                "episode_round": cur.episode_round,
                "source": cur.source,
                "timing_source": cur.timing_source,
            }
        )
        if cur.target is not None:
            rows = {m: (tps, cur.target_source) for m, tps in cur.target.items()}
        else:
            # no target map: what a member's own assignment line stated is observed; the rest is what the
            # timeline shows its members consuming (inferred)
            stated = {tp for tps in cur.stated.values() for tp in tps}
            consuming = {tp: m for tp, m in tl.consuming().items() if tp not in stated}
            rows = {m: (tps, "inferred") for m, tps in _by_member(consuming).items()}
            rows.update({m: (tps, "observed") for m, tps in cur.stated.items()})
        if cur.target is None and self.hold_for_member_lines:
            self.held.append(
                HeldAssignment(
                    epoch=cur.epoch,
                    date=date,
                    instances=dict(cur.instances),
                    members=tuple(members),
                    fallback=rows,
                    held=frozenset(self._held_until(cur.epoch) | set(tl.consuming())),
                    waiting={m for m in members if self.logs_own_lines(m)},
                    closed_at=closed_at,
                )
            )
            self._release(lambda held: False, "")
        else:
            first = len(self._out["assignments"])
            self._assignment_rows(cur.epoch, date, cur.instances, rows)
            if cur.target is None and closed_at is not None:
                self._consumed_rows.extend(
                    (closed_at, row)
                    for row in self._out["assignments"][first:]
                    if row["source"] == "inferred"
                )
        if date is not None:
            tl.day(date).generations += 1

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

    # --------------------------------------------------------------------------------- snapshot
    def snapshot(self) -> dict[str, Any]:
        cur = None
        if self.current is not None:
            cur = asdict(self.current)
            if self.current.target is not None:
                cur["target"] = {
                    m: [[tp.topic, tp.partition] for tp in tps] for m, tps in self.current.target.items()
                }
            cur["stated"] = {
                m: [[tp.topic, tp.partition] for tp in tps] for m, tps in self.current.stated.items()
            }
        return {
            "assignor": self.assignor,
            "current": cur,
            "out": {name: [row_to_json(r) for r in rows] for name, rows in self._out.items()},
            "reconciliations": [row_to_json(r) for r in self._reconciliations],
            "hold_for_member_lines": self.hold_for_member_lines,
            "member_assigned": {
                str(epoch): {m: _tps_to_json(tps) for m, tps in members.items()}
                for epoch, members in self.member_assigned.items()
            },
            "revoked_toward": {
                str(epoch): {m: _tps_to_json(tps) for m, tps in members.items()}
                for epoch, members in self.revoked_toward.items()
            },
            "partitions_held": {
                str(epoch): _tps_to_json(sorted(tps)) for epoch, tps in self.partitions_held.items()
            },
            "held": [_held_to_json(h) for h in self.held],
        }

    def _restore(self, state: dict) -> None:
        self.assignor = state["assignor"]
        cur = state.get("current")
        if cur is not None:
            cur = dict(cur)
            if cur["target"] is not None:
                cur["target"] = {
                    m: tuple(TopicPartition(t, p) for t, p in tps) for m, tps in cur["target"].items()
                }
            cur["stated"] = {
                m: tuple(TopicPartition(t, p) for t, p in tps) for m, tps in cur.get("stated", {}).items()
            }
            self.current = OpenEpoch(**cur)
        self._out = {name: [row_from_json(r) for r in rows] for name, rows in state["out"].items()}
        self._reconciliations = [row_from_json(r) for r in state["reconciliations"]]
        self.hold_for_member_lines = state.get("hold_for_member_lines", False)
        self.member_assigned = {
            int(epoch): {m: _tps_from_json(tps) for m, tps in members.items()}
            for epoch, members in state.get("member_assigned", {}).items()
        }
        self.revoked_toward = {
            int(epoch): {m: _tps_from_json(tps) for m, tps in members.items()}
            for epoch, members in state.get("revoked_toward", {}).items()
        }
        self.partitions_held = {
            int(epoch): set(_tps_from_json(tps)) for epoch, tps in state.get("partitions_held", {}).items()
        }
        self.held = [_held_from_json(h) for h in state.get("held", [])]


def _by_member(owners: Mapping[TopicPartition, str]) -> dict[str, tuple[TopicPartition, ...]]:
    out: dict[str, list[TopicPartition]] = {}
    for tp, member in owners.items():
        out.setdefault(member, []).append(tp)
    return {m: tuple(sorted(tps)) for m, tps in out.items()}


def _tps_to_json(tps) -> list[list]:
    return [[tp.topic, tp.partition] for tp in tps]


def _tps_from_json(items) -> tuple[TopicPartition, ...]:
    return tuple(TopicPartition(t, p) for t, p in items)


def _held_to_json(held: HeldAssignment) -> dict:
    return {
        "epoch": held.epoch,
        "date": held.date.isoformat() if held.date is not None else None,
        "instances": dict(held.instances),
        "members": list(held.members),
        "fallback": {m: [_tps_to_json(tps), source] for m, (tps, source) in held.fallback.items()},
        "held": _tps_to_json(sorted(held.held)),
        "waiting": sorted(held.waiting),
        "closed_at": held.closed_at,
    }


def _held_from_json(data: Mapping[str, Any]) -> HeldAssignment:
    return HeldAssignment(
        epoch=data["epoch"],
        date=dt.date.fromisoformat(data["date"]) if data["date"] is not None else None,
        instances=dict(data["instances"]),
        members=tuple(data["members"]),
        fallback={m: (_tps_from_json(tps), source) for m, (tps, source) in data["fallback"].items()},
        held=frozenset(_tps_from_json(data["held"])),
        waiting=set(data["waiting"]),
        closed_at=data.get("closed_at"),
    )
