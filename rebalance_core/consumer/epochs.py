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

Models ConsumerGroup's group epoch and target assignment (GroupMetadataManager.consumerGroupHeartbeat:
bump, target) as rows. This module holds `EpochTracker`'s state, the epoch opening, its target and its
generations row; the rest is in its mixins, by responsibility:
  epoch_members      the open epoch (`OpenEpoch`): who is in it, what a line stated for each, reconciliations
  epoch_convergence  convergence (provisional or not), the group emptied, the episode's end
  epoch_assignments  the assignments rows, held for the members' own lines (`HeldAssignment`)
  epoch_checkpoint   snapshot and restore
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from rebalance_core.consumer.epoch_assignments import HeldAssignment, HeldAssignments
from rebalance_core.consumer.epoch_checkpoint import EpochCheckpoint
from rebalance_core.consumer.epoch_convergence import EpochConvergence
from rebalance_core.consumer.epoch_members import EpochMembers, OpenEpoch
from rebalance_core.events import TopicPartition, format_ts
from rebalance_core.measure_records import utc_date
from rebalance_core.measures import OwnershipTimeline
from rebalance_core.replay_common import unlogged_generation_row

GROUP_PROTOCOL = "consumer"  # generations.group_protocol / rebalance_protocol for KIP-848 groups
PROTOCOL_TYPE = "consumer"


class EpochTracker(EpochMembers, EpochConvergence, HeldAssignments, EpochCheckpoint):
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
        # members the coordinator fenced whose own log is in the input: they may still log the block of their
        # last epoch on waking (see member_gone)
        self.fenced_awaited: dict[str, str | None] = {}  # member -> its consumer process
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

    # ----------------------------------------------------------------------------------- output
    def drain(self) -> dict[str, list[dict]]:
        """generations and assignments rows closed since the last drain."""
        out = self._out
        self._out = {name: [] for name in out}
        self._consumed_rows = []
        return out

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
                    waiting={m for m in members if self.logs_own_lines(m) or m in self.fenced_awaited},
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


def _by_member(owners: Mapping[TopicPartition, str]) -> dict[str, tuple[TopicPartition, ...]]:
    out: dict[str, list[TopicPartition]] = {}
    for tp, member in owners.items():
        out.setdefault(member, []).append(tp)
    return {m: tuple(sorted(tps)) for m, tps in out.items()}
