"""Ground truth of a simulation: the replay tables a perfect reconstruction must produce.

The simulator (`rebalance_core.simulate`) tells this class what really happened: when each member
started and stopped each partition and why, and what the coordinator did (rounds, generations,
assignments). Partition measures come from the shared `OwnershipTimeline` (docs/metrics.md), so truth
and reconstruction are measured by the same code; this class adds the rows and the episode bookkeeping.

Where docs/metrics.md leaves a choice, the same one as the reconstructor (`rebalance_core.replay`):
- an episode is named `{group_id}@{ISO start}` (`#n` when two start at the same instant);
- a round follows the open episode when the previous round revoked partitions (KIP-429), left a
  KIP-415 delay, or never stabilized (a rebalance restarted during the sync phase);
- an episode ends once its last round is Stable, no follow-up is due and no member is between its
  first rebalance signal and applying its assignment (a member that died without leaving counts
  until the coordinator removes it);
- generation rows: members sorted, timings from the coordinator (timing_source `coordinator`), dated
  by stabilization (or emptiness, or the next round's start for a round that never stabilized);
- an episode's timing_source is `member` once a member's own start or stop fell in it.
"""

from __future__ import annotations

from collections.abc import Iterable

from rebalance_core.assignors.protocols import CONNECT_PROTOCOL_TYPE
from rebalance_core.events import Event, TopicPartition, format_ts
from rebalance_core.measure_records import utc_date
from rebalance_core.measures import OwnershipTimeline
from schemas.events import EventType

PROTOCOL_TYPE = "consumer"

# Member-side events that start a member's rebalance and the one that ends it (its assignment applied).
_BUSY_FROM = frozenset(
    {
        EventType.HEARTBEAT_REBALANCING.value,
        EventType.JOIN_REQUESTED.value,
        EventType.JOIN_SENT.value,
        EventType.JOIN_RESPONSE.value,
        EventType.SYNC_RESPONSE.value,
    }
)
_GONE = frozenset({EventType.LEAVE_SENT.value})


def _applied_at_sync(event: Event) -> bool:
    """A Connect worker's assignment that starts and stops no task: its "Joined group" line is all there
    is to it (no callback events follow, as the parser reads it), so it is applied with the sync."""
    attributes = event.attributes or {}
    return (
        event.event_type == EventType.SYNC_RESPONSE.value
        and event.protocol_type == CONNECT_PROTOCOL_TYPE
        and not attributes.get("added")
        and not attributes.get("revoked")
    )


class GroundTruth:
    def __init__(
        self,
        cluster: str,
        group_id: str,
        protocol_name: str,
        rebalance_protocol: str,
        protocol_type: str = PROTOCOL_TYPE,
    ):
        self.group_id = group_id
        self.key = {"cluster": cluster, "group_id": group_id, "scenario": "actual"}
        self.protocol_name = protocol_name
        self.protocol_type = protocol_type
        # the protocol the coordinator last selected (join_completed): an Empty generation selects none,
        # so a group that never completed a join phase has none (ClassicGroup.initNextGeneration)
        self.selected_protocol: str | None = None
        self.rebalance_protocol = rebalance_protocol
        self.timeline = OwnershipTimeline(cluster, group_id)
        self.generations: list[dict] = []
        self.assignments: list[dict] = []
        self.round: dict | None = None  # the open round's generation row
        self.round_stable = False
        self.follow_up = False  # the next round belongs to the open episode (KIP-429 / KIP-415)
        self.busy: set[str] = set()  # members between their first rebalance signal and their apply
        # member ids the coordinator removed: a removed id never rejoins (a client gets a new id), so a late
        # response its process still logs (a JoinGroup answer read after a GC pause) holds up no episode
        self.removed: set[str] = set()
        self.last_episode_id: str | None = None
        self.assigned_rows: tuple[int, set[str]] = (-1, set())  # generation, members with rows

    # ------------------------------------------------------------------------------- ownership
    def partitions_of(self, member_id: str) -> set[TopicPartition]:
        return self.timeline.partitions_of(member_id)

    def start(
        self, member_id: str, instance: str | None, tps: Iterable[TopicPartition], ts: int, generation: int
    ):
        for tp in sorted(tps):
            self.timeline.start(tp, member_id, ts, instance=instance, generation_id=generation)
            self._member_timed()

    def stop(
        self,
        member_id: str,
        instance: str | None,
        tps: Iterable[TopicPartition],
        ts: int,
        cause: str,
        source: str | None = None,
    ):
        """`member_id` stops consuming `tps` at `ts` (the true instant). No log shows when a process died, froze
        or stalled: a replay's stop there is an estimate (`inferred`), and the truth's rows say so too (their
        instant is the true one); `source` None: `inferred` for `member_failed`, else `observed`."""
        if source is None:
            source = "inferred" if cause == "member_failed" else "observed"
        for tp in sorted(set(tps) & self.timeline.partitions_of(member_id)):
            self.timeline.stop(tp, member_id, ts, cause, instance=instance, source=source)
            self._member_timed()

    def _member_timed(self) -> None:
        if self.timeline.episode is not None:
            self.timeline.episode.timing_source = "member"

    # --------------------------------------------------------------------------- observation
    def observe(self, event: Event) -> None:
        """Every event as it is emitted (after the previous event's ownership changes were applied):
        member progress and the daily event count."""
        self.maybe_end_episode()
        kind, member = event.event_type, event.member_id
        if event.side == "member" and member:
            if kind in _BUSY_FROM and not _applied_at_sync(event):
                if member not in self.removed:
                    self.busy.add(member)
            elif kind == EventType.PARTITIONS_ASSIGNED.value or kind in _GONE or _applied_at_sync(event):
                self.busy.discard(member)
        elif kind == EventType.MEMBER_REMOVED.value:
            self.busy.discard(member)
            self.removed.add(member)
        elif kind == EventType.STATIC_MEMBER_REPLACED.value:
            self.busy.discard(event.attributes.get("old_member_id"))
        self.timeline.day(utc_date(event.ts)).events += 1

    def maybe_end_episode(self) -> None:
        if self.round_stable and not self.follow_up and not self.busy and self.timeline.episode is not None:
            self.timeline.end_episode()

    # ------------------------------------------------------------------------ rounds, episodes
    def rebalance_prepared(self, ts: int, old_generation: int, reason: str) -> None:
        interrupted = self.round is not None and not self.round_stable
        if self.round is not None and interrupted:
            self._close_round(ts)  # it never stabilized: no stabilized_at, dated by this instant
        self.round = None
        episode = self.timeline.episode
        if episode is not None and (self.follow_up or interrupted):
            self.timeline.next_round()
        else:
            episode = self.timeline.begin_episode(
                self._episode_id(ts),
                ts,
                reason=reason,
                rebalance_protocol=self.rebalance_protocol,
                timing_source="coordinator",
            )
        self.follow_up = False
        self.round_stable = False
        self.round = {
            **self.key,
            "event_date": None,
            "generation_id": old_generation + 1,
            "group_protocol": "classic",
            "protocol_type": self.protocol_type,
            "protocol_name": self.selected_protocol,
            "rebalance_protocol": self.rebalance_protocol,
            "leader_member_id": None,
            "member_count": None,
            "static_member_count": None,
            "members": None,
            "rebalance_started_at": ts,
            "join_completed_at": None,
            "stabilized_at": None,
            "ended_empty": False,
            "rebalance_reason": reason,
            "rebalance_ms": None,
            "episode_id": episode.episode_id,
            "episode_round": episode.rounds,
            "source": "observed",
            "timing_source": "coordinator",
        }

    def _episode_id(self, ts: int) -> str:
        episode_id = f"{self.group_id}@{format_ts(ts)}"
        last = self.last_episode_id
        if last == episode_id or (last and last.startswith(episode_id + "#")):
            episode_id = f"{episode_id}#{int(last.rpartition('#')[2]) + 1 if '#' in last else 2}"
        self.last_episode_id = episode_id
        return episode_id

    def join_completed(self, ts: int, generation: int, leader: str, member_ids: list[str]) -> None:
        self.selected_protocol = self.protocol_name
        self.round.update(
            protocol_name=self.protocol_name,
            generation_id=generation,
            join_completed_at=ts,
            leader_member_id=leader,
            member_count=len(member_ids),
            members=sorted(member_ids),
        )

    def stabilized(
        self,
        ts: int,
        generation: int,
        assignment: dict[str, tuple[TopicPartition, ...]],
        instances: dict[str, str | None],
        follow_up: bool,
    ) -> None:
        """The leader's assignment reached the coordinator (Stable). follow_up: a KIP-415 delay runs,
        so the next round continues the episode; a member revoking after its SyncGroup (KIP-429) sets
        `follow_up` itself."""
        self.round.update(
            stabilized_at=ts,
            rebalance_ms=ts - self.round["rebalance_started_at"],
            static_member_count=sum(1 for m in assignment if instances.get(m)),
        )
        self._close_round(ts)
        for member in sorted(assignment):
            self.assignment_rows(generation, member, instances.get(member), assignment[member], ts)
        self.timeline.round_completed(generation, ts)
        self.round_stable = True
        self.follow_up = follow_up

    def assignment_rows(
        self,
        generation: int,
        member: str,
        instance: str | None,
        partitions: Iterable[TopicPartition],
        ts: int,
    ) -> None:
        """A member's assignment in a generation (once per member and generation). A static member
        replaced in a Stable group holds its predecessor's partitions in the same generation (KIP-345)
        from the replacement on."""
        rows_generation, members = self.assigned_rows
        if rows_generation != generation:
            self.assigned_rows = rows_generation, members = generation, set()
        if member in members:
            return
        members.add(member)
        for tp in sorted(partitions):
            self.assignments.append(
                {
                    **self.key,
                    "event_date": utc_date(ts),
                    "generation_id": generation,
                    "member_id": member,
                    "group_instance_id": instance,
                    "topic": tp.topic,
                    "partition": tp.partition,
                    "source": "observed",
                }
            )

    def group_empty(self, ts: int, generation: int) -> None:
        self.round.update(generation_id=generation, ended_empty=True, member_count=0, members=[])
        self.round["rebalance_ms"] = ts - self.round["rebalance_started_at"]
        self._close_round(ts)
        self.timeline.group_empty(ts)
        self.timeline.round_completed(generation, ts)
        self.timeline.end_episode(ts)
        self.round_stable = True
        self.follow_up = False

    def _close_round(self, ts: int) -> None:
        row = self.round
        if row["event_date"] is not None:
            return
        row["event_date"] = utc_date(ts)
        self.generations.append(row)
        self.timeline.day(row["event_date"]).generations += 1

    def finish(self, last_ts: int) -> dict[str, list[dict]]:
        """End of the simulation: a round cut short is dated by the last event (no generation row if
        its join phase never completed); open movements and episodes are emitted."""
        self.maybe_end_episode()
        if self.round is not None and not self.round_stable and self.round["join_completed_at"] is not None:
            self._close_round(last_ts)
        out = self.timeline.finish(final=True)
        return {
            "generations": self.generations,
            "assignments": self.assignments,
            "partition_movements": out["partition_movements"],
            "rebalance_episodes": out["rebalance_episodes"],
            "group_daily_summary": self.timeline.daily_rows(),
            "anomalies": [],
        }
