"""Reconstruct a group's rebalances from canonical events (docs/events.md) into the output tables
(schemas/tables.py) with the measures of docs/metrics.md.

`GroupReplayer` replays one group: the coordinator side drives the classic state machine
(`coordinator.ClassicGroup`), member-side events give member timings, and an `OwnershipTimeline`
(`measures`) turns starts and stops into partition movements, episodes and daily totals. Any subset of
events works (broker log only, one client's log, both, a log starting mid-rebalance); where no event
carries the assignment, the group's assignor is rerun on the known membership and topics (rows marked
`inferred`). Invalid input never raises: it becomes an `anomalies` row.

Anomaly rules raised here (the coordinator model's are in `coordinator`, the timeline's in `measures`):
  wrong_group          an event of another cluster/group was fed to this replayer (skipped)
  unknown_event_type   event_type is not an EventType (counted, skipped)
  out_of_order         an event older than the previous one (replayed anyway)
  assignment_conflict  one partition assigned to two members in one assignment
  assignment_mismatch  a member's synced partitions differ from the leader's assignment
  inference_failed     the assignor could not be run to infer a missing assignment
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from rebalance_core import client_config
from rebalance_core.classic import coordinator as co
from rebalance_core.classic.member_order import MemberMapOrder
from rebalance_core.consumer import ConsumerGroupReplayer, is_consumer_protocol_event
from rebalance_core.events import Event, TopicPartition, format_ts, is_revoke_rejoin
from rebalance_core.kafka_logs.values import classic_member_owner
from rebalance_core.measures import DOUBLE_OWNERSHIP, OwnershipTimeline, utc_date
from rebalance_core.replay_common import ReplaySettings, admit, anomaly_row, unlogged_generation_row
from schemas.events import BROKER_WIDE_EVENT_TYPES, EventType, RemovalReason, Side
from schemas.tables import REPLAY_TABLES

STATE_VERSION = 1
GROUP_PROTOCOL_KEY = "classic"  # snapshot()["group_protocol"]: which replayer resumes the state

# Protocol names whose rebalances are cooperative (KIP-429 consumer, KIP-415 Connect, Streams); the
# rest of the classic consumer assignors are eager. Connect's eager protocol is called "default".
COOPERATIVE_PROTOCOLS = frozenset({"cooperative-sticky", "sessioned", "compatible", "stream"})
KIP415_PROTOCOLS = frozenset({"sessioned", "compatible"})  # Connect's IncrementalCooperativeAssignor
EAGER_PROTOCOLS = frozenset({"range", "roundrobin", "sticky", "default"})
INFERABLE_ASSIGNORS = frozenset({"range", "roundrobin", "sticky", "cooperative-sticky"})

ASSIGNMENT_CONFLICT = "assignment_conflict"
ASSIGNMENT_MISMATCH = "assignment_mismatch"
INFERENCE_FAILED = "inference_failed"

# Protocol order of event types at the same instant (docs/events.md, "Ordering").
EVENT_TYPE_RANK: dict[str, int] = {
    name.value: rank
    for rank, names in enumerate(
        [
            (
                EventType.CLIENT_CONFIG,  # settings at the client's start, before anything it does then
                EventType.COORDINATOR_DISCOVERED,
                EventType.GROUP_LOADED,
                EventType.TOPIC_METADATA_CHANGED,
            ),
            (EventType.MEMBER_REMOVED,),
            (EventType.HEARTBEAT_REBALANCING,),
            (EventType.JOIN_REQUESTED,),
            (EventType.JOIN_SENT,),
            (EventType.JOIN_RECEIVED,),
            (EventType.STATIC_MEMBER_REPLACED,),
            (EventType.REBALANCE_PREPARED,),
            (EventType.GROUP_EMPTY,),
            (EventType.JOIN_COMPLETED,),
            (EventType.JOIN_RESPONSE,),
            (EventType.ASSIGNMENT_COMPUTED,),
            (EventType.ASSIGNMENT_RECEIVED,),
            (EventType.GROUP_STABLE,),
            (EventType.SYNC_RESPONSE,),
            (EventType.PARTITIONS_LOST,),
            (EventType.PARTITIONS_REVOKED,),
            (EventType.PARTITIONS_ASSIGNED,),
            (EventType.POLL_TIMEOUT_EXPIRED,),
            (EventType.LEAVE_SENT,),
            (EventType.GROUP_DEAD,),
            (EventType.GROUP_UNLOADED, EventType.COORDINATOR_UNAVAILABLE),
            (EventType.GROUP_EPOCH_BUMPED,),
            (EventType.TARGET_ASSIGNMENT_COMPUTED,),
            (EventType.MEMBER_EPOCH_UPDATED,),
            (EventType.MEMBER_STATE_CHANGED,),
        ]
    )
    for name in names
}
UNKNOWN_RANK = len(set(EVENT_TYPE_RANK.values()))

# "Removing member M on LeaveGroup" (GroupCoordinator rebalance reason, 2.1-3.9; case varies)
_LEAVE_REASON = re.compile(r"removing member (\S+) on LeaveGroup", re.IGNORECASE)
# AbstractCoordinator's leave reason after max.poll.interval.ms (2.4+; the words of its WARN line before)
POLL_TIMEOUT_REASON = "consumer poll timeout has expired."
_SIGNALS = frozenset(
    {EventType.HEARTBEAT_REBALANCING.value, EventType.JOIN_REQUESTED.value, EventType.JOIN_SENT.value}
)
_CALLBACKS = frozenset(
    {EventType.PARTITIONS_REVOKED.value, EventType.PARTITIONS_ASSIGNED.value, EventType.PARTITIONS_LOST.value}
)
# ConsumerCoordinator.onJoinComplete (cooperative, KIP-429) calls requestRejoin("need to revoke partitions
# ... and re-join", logged "Request joining group due to: ...") between onPartitionsRevoked and
# onPartitionsAssigned: that line is inside the member's callbacks, not after them.


def event_order_key(e: Event) -> tuple:
    """Replay order of a group's events: ts, protocol rank of the type, file, line, event_id."""
    return (
        e.ts,
        EVENT_TYPE_RANK.get(e.event_type, UNKNOWN_RANK),
        e.file or "",
        e.line if e.line is not None else -1,
        e.event_id or "",
    )


def rebalance_protocol_of(protocol_name: str | None) -> str | None:
    """eager | cooperative from a selected protocol name; None when the name says nothing."""
    if not protocol_name:
        return None
    if protocol_name in COOPERATIVE_PROTOCOLS:
        return "cooperative"
    if protocol_name in EAGER_PROTOCOLS:
        return "eager"
    return None


# ------------------------------------------------------------------------------------------ state
@dataclass
class PendingApply:
    """A member's synced assignment not applied yet: its rebalance callbacks (partitions_revoked /
    partitions_assigned) give the instants; without them it applies at the sync instant."""

    sync_ts: int
    generation_id: int | None
    to_start: list[TopicPartition]
    to_stop: list[TopicPartition]
    source: str = "observed"


@dataclass
class MemberView:
    """A member as its own log shows it (member-side timing)."""

    member_id: str
    instance: str | None = None
    generation_id: int | None = None
    signal_ts: int | None = None  # first rebalance signal since its last sync (None: not rejoining)
    pending: PendingApply | None = None
    poll_timeout_ts: int | None = None  # max.poll.interval.ms expired here; its LeaveGroup follows
    synced_generation: int | None = None  # the generation of its last sync
    rejoin_since: int | None = None  # rejoining and given its generation back (no rebalance) since then
    revoked_unsignalled: bool = False  # eager revocation with no signal before it (`_unsignalled_rejoin`)
    lost_before_rejoin: bool = (
        False  # gave its partitions up as lost; a JoinGroup may follow (`_rejoin_after_lost`)
    )
    lost_at: int | None = None  # its last "Lost previously assigned partitions" line
    # members' logs only: its first JoinGroup no response of its log answered yet, and the first
    # generation formed after it (`_silent_joiner_may_be_in`)
    join_sent_at: int | None = None
    unanswered_since: int | None = None
    round_trip_ms: int | None = None  # KIP-394: its JoinGroup without a member id to the one with it


@dataclass
class SilentJoiner:
    """Members' logs only: a member whose JoinGroup reached the coordinator and whose own log shows no
    response to it, and no member id for it, or only in its LeaveGroup line: a Connect worker that died,
    stalled or left right after KIP-394's second JoinGroup (the one carrying the id the coordinator gave).
    The coordinator counts it (`GroupReplayer._silent_joiner_may_be_in`)."""

    join_sent_at: int  # the JoinGroup that made it a member
    round_trip_ms: int | None  # KIP-394: its JoinGroup without a member id to the one with it
    alias: str | None = None  # its log (`_alias`) while a later line of it may still name or answer it
    left_at: int | None = None  # its LeaveGroup, sent before any response reached it
    unanswered_since: int | None = None  # the first generation formed after its JoinGroup


@dataclass
class Round:
    """One join/sync cycle: PreparingRebalance -> Stable (or Empty); one generations row."""

    started_at: int | None
    reason: str | None
    timing_source: str
    episode_id: str
    episode_round: int
    generation_id: int | None = None
    join_completed_at: int | None = None
    stabilized_at: int | None = None
    ended_at: int | None = None
    ended_empty: bool = False
    leader_id: str | None = None
    members: list[str] | None = None
    member_count: int | None = None
    static_member_count: int | None = None
    protocol_type: str | None = None
    protocol_name: str | None = None
    source: str = "observed"
    stable: bool = False
    assignment_known: bool = False
    # old member ids standing for replaced instances in this generation's member list (their new ids,
    # not printed yet, are the members)
    stand_ins: list[str] = field(default_factory=list)
    # False for a round that started from an Empty (or new) group: no member owned anything before it,
    # so it revoked nothing and no follow-up round can be due to it (KIP-429)
    owned_before: bool = True
    joined: list[str] = field(default_factory=list)  # members whose JoinGroup in this round a line shows
    # a member's session expiry or LeaveGroup during the join phase: if the phase completes at that same
    # instant, the removal completed it, so every remaining member had joined (`_leader_if_rejoined`)
    removed_in_join_phase_at: int | None = None
    members_listed: bool = False  # member-side logs: the leader's assignment listed every member
    # member-side logs: the latest JoinGroup of a member whose response named this generation: the
    # join phase still awaited it then (`_silent_joiner_may_be_in`)
    latest_member_join: int | None = None
    # member-side logs: the last member's LeaveGroup at this instant left the group no member to wait
    # for, unless a new member's JoinGroup reached the coordinator first (`_left_group`)
    emptied_at: int | None = None
    signal_after_leave: tuple[int, str | None] | None = None  # the first rebalance signal since then
    # members' logs only: a member of the last generation, removed while others remained, rejoins with a
    # new member id and no line showed the rebalance its removal started: this round stands for it
    # from this instant (`_removed_member_rejoins`); a new member's JoinGroup since waits in
    # `signal_after_leave` until a JoinGroup response tells whether it joined this join phase
    removal_unseen_at: int | None = None
    # members' logs only: the processes (`_process_of`) whose JoinGroup lines fall in this join phase
    joiners: list[str] = field(default_factory=list)


_STATE_CLASSES = {cls.__name__: cls for cls in (PendingApply, MemberView, Round, SilentJoiner)}


class GroupReplayer:
    """Replays one group's events (in `event_order_key` order) into the replay tables; see CORE_API."""

    def __init__(
        self,
        cluster: str,
        group_id: str,
        settings: ReplaySettings | None = None,
        state: dict | None = None,
    ):
        self.cluster = cluster
        self.group_id = group_id
        self.settings = settings or ReplaySettings()
        self.key = {"cluster": cluster, "group_id": group_id, "scenario": self.settings.scenario}
        self._out: dict[str, list[dict]] = {"generations": [], "assignments": [], "anomalies": []}
        # generation rows not drained yet whose members/leader an old id of a replaced instance stood for
        # (`_end_round`): [row, members, leader, stand-ins], completed once later lines name the new ids
        self._stand_in_rows: list[list] = []
        # both views: generation -> members whose own JoinGroup response named it (`_member_in_generation`)
        self._joined_generation: dict[int, set[str]] = {}
        self._event: Event | None = None  # the event being replayed (anomalies refer to it)
        if state is not None:
            self._restore(state)
            return
        self.group = co.ClassicGroup(member_order=MemberMapOrder(self.settings.coordinator_member_map))
        self.timeline = OwnershipTimeline(cluster, group_id, self.settings.scenario)
        self.topics: dict[str, int] = dict(self.settings.topics)
        self.protocol_name: str | None = None  # selected protocol (join_completed / join_response)
        self.offered_protocol: str | None = None  # a member's first supported protocol (join_received)
        self.rebalance_protocol: str | None = None  # as the log shows it; `protocol` adds the configured one
        self.has_coordinator = False  # coordinator-side events drive the rounds once seen
        self.last_ts: int | None = None
        self.round: Round | None = None
        self.follow_up_due = False  # the round revoked partitions (KIP-429) or left a KIP-415 delay
        self.last_episode_id: str | None = None
        self.previous_episode_id: str | None = None  # the one before (to re-key the last one)
        self.closed_generation: int | None = None  # generation of the last round ended
        self.assignment: dict[str, list[TopicPartition]] = {}  # the latest generation's assignment
        self.assignment_generation: int | None = None
        self.assignment_source = "observed"
        self.leader_assignment: dict[str, list[TopicPartition]] | None = None  # leader's, for the round
        self.emitted_generation: int | None = None
        self.emitted: list[str] = []  # members whose rows of emitted_generation are out
        self.views: dict[str, MemberView] = {}
        self.member_timed: set[str] = set()  # member ids and instance ids seen on the member side
        self.aliases: dict[str, str] = {}  # "source|client" -> member id (events without a member id)
        self.joining_clients: set[str] = set()  # client ids of member-side joins without a member id yet
        # member ids the coordinator gave such a join (`_claim_logged_join`), not synced yet: new processes
        self.claimed_new: set[str] = set()
        self.fresh_join_sent: dict[str, int] = {}  # alias -> its JoinGroup without a member id (KIP-394)
        # members' logs only: alias -> its JoinGroup lines since its last line naming a member id
        # (`_note_unnamed_join`), and the members such lines or a LeaveGroup left unanswered
        self.unnamed_joins: dict[str, list[int]] = {}
        self.silent_joiners: list[SilentJoiner] = []
        self.unnamed_replacements: dict[str, str] = {}  # instance -> old id replaced by an id not logged
        # new member id -> [old id, generation] of a static replacement while Stable whose old id's
        # assignment no line showed (`_replaced_assignment`)
        self.stable_replacements: dict[str, list] = {}
        self.poll_timed_out: dict[str, int] = {}  # member -> its poll timeout, until the broker's Preparing
        self.kip415_delay_inferred = False  # broker only: a KIP-415 delay taken as pending (_kip415_lost)
        self.closed_leader: str | None = None  # leader of the last round ended with a generation
        # members' logs only: the members of the last generation as the leader's assignment listed them,
        # less those whose LeaveGroup was logged since (None: not known)
        self.remaining_members: list[str] | None = None
        # members' logs only: a JoinGroup without a member id (instant, reason), a rebalance signal only
        # once a later line shows the member went on (`_defer_fresh_join`)
        self.fresh_join: tuple[int, str | None, list[str]] | None = None
        # clients' own settings from their config dumps (rebalance_core.client_config)
        self.client_configs: client_config.ClientConfigs = {}
        # members' logs only: [first, last, episode id] of generations that formed with no member logging
        # them (`_note_unlogged_generations`), until a late line names one (`_unlogged_generation_seen`)
        self.unlogged_generations: list[list] = []

    # =============================================================================== public API
    def feed(self, events: Iterable[Event]) -> None:
        dispatch = self._dispatch
        for e in events:  # _replay_one, without a call per event
            self._event = e
            try:
                dispatch(e)
            finally:
                self._event = None

    def drain(self) -> dict[str, list[dict]]:
        out = {name: [] for name in REPLAY_TABLES}
        for name, rows in self._out.items():
            out[name].extend(rows)
        for name, rows in self.timeline.drain().items():
            out[name].extend(rows)
        self._out = {"generations": [], "assignments": [], "anomalies": []}
        self._stand_in_rows = []
        self._joined_generation = {}
        return out

    def finish(self) -> dict[str, list[dict]]:
        """End of input: emit what is still open (when settings.final) and the daily summary."""
        if self.settings.final:
            # KIP-394: a JoinGroup without a member id as the input's last member line only created a
            # pending member; the rebalance its member-id rejoin would start is not in the input
            self.fresh_join = None
            self._settle_emptied(None)
            self._flush_all_pending()
            self._join_phase_open_at_end()
            self._end_round()
            self._note_protocol()
            if not self.has_coordinator:
                # members' logs only: a consumer still consuming may be idle or may have died after its
                # last line (a killed process logs nothing); the coordinator then removes it after
                # session.timeout.ms and rebalances (GroupCoordinator.onExpireHeartbeat; ClassicGroup in
                # 4.0), the group stopped meanwhile, in no consumer's log: the counts are lower bounds
                self.timeline.consumption_unseen_after_input()
        closed = self.timeline.finish(final=self.settings.final)
        out = self.drain()
        for name, rows in closed.items():
            out[name].extend(rows)
        out["group_daily_summary"] = self.timeline.daily_rows()
        return out

    def _join_phase_open_at_end(self) -> None:
        """Members' logs only: the input ends in a join phase no JoinGroup response closed. Whether the
        coordinator completed it (AbstractCoordinator logs "Successfully joined group" only when the
        response arrives: a member that stopped after sending its JoinGroup logs nothing more), and the
        rounds that followed (its session timeout's rebalance, GroupCoordinator.onExpireHeartbeat /
        ClassicGroup in 4.0) are in no member's log: the episode's rounds are a lower bound (inferred)."""
        rnd, episode = self.round, self.timeline.episode
        if (
            not self.has_coordinator
            and rnd is not None
            and rnd.generation_id is None
            and episode is not None
            and episode.episode_id == rnd.episode_id
        ):
            episode.source = "inferred"

    def snapshot(self) -> dict:
        return {
            "state_version": STATE_VERSION,
            "group_protocol": GROUP_PROTOCOL_KEY,
            "cluster": self.cluster,
            "group_id": self.group_id,
            "group": self.group.snapshot(),
            "timeline": self.timeline.snapshot(),
            "out": _encode(self._out),
            **{name: _encode(getattr(self, name)) for name in _PLAIN_STATE},
        }

    # ================================================================================= dispatch
    def _replay_one(self, e: Event) -> None:
        self._event = e
        try:
            self._dispatch(e)
        finally:
            self._event = None

    def _dispatch(self, e: Event) -> None:
        if not admit(self, e):
            return
        coordinator = e.side == _COORDINATOR
        # set before a deferred fresh join is resolved: with the coordinator's lines there, they say
        # whether that JoinGroup started anything (a KIP-394 pending member triggers nothing)
        self.has_coordinator = self.has_coordinator or coordinator
        if self.fresh_join is not None and not self._new_members_signal(e):
            self._signal_fresh_join()
        if coordinator:
            if self.unnamed_replacements:
                self._learn_member_ids(e)
            handler = _COORDINATOR_HANDLERS.get(e.event_type)
            if handler is not None:
                handler(self, e)
            else:
                self.group.apply(e)
            if self.group.resolved is not None:
                self._members_resolved(*self.group.take_resolved())
        elif e.event_type == _CLIENT_CONFIG:  # settings, not a step of the protocol
            client_config.note(self.client_configs, e)
        else:
            self._member_event(e)
            if e.event_type in _SIGNALS:
                self._note_joiner(_process_of(e))
        if self.group.anomalies:  # checked here: a call per event costs more than the check
            self._collect_model_anomalies()
        self._maybe_end_episode()

    # ========================================================================= coordinator side
    def _c_join_received(self, e: Event) -> None:
        self.group.apply(e)
        if e.member_id and self.round is not None and not self.round.stable:
            self.round.joined.append(e.member_id)
        if e.member_id and e.client_id in self.joining_clients:
            # the JoinGroup of a process whose own log showed its join_sent: member timing for it,
            # even if its first line with the member id comes after the group turns Stable
            self._claim_logged_join(e.member_id, e.client_id)
        elif e.member_id and e.group_instance_id and e.group_instance_id in self.member_timed:
            # a static member's log is its instance's (KIP-345: one identity across restarts); the
            # broker's static join lines name the instance, not the client
            self.member_timed.add(e.member_id)
        if e.protocol_name and not self.offered_protocol:
            self.offered_protocol = e.protocol_name
            if self.rebalance_protocol is None:  # the members' first choice is what the vote selects
                self.rebalance_protocol = rebalance_protocol_of(e.protocol_name)

    def _c_rebalance_prepared(self, e: Event) -> None:
        change_logged = self.group.change_logged
        from_empty = e.generation_id == 0 or self.group.state in (co.GroupState.EMPTY, co.GroupState.DEAD)
        self.group.apply(e)
        reason = e.reason
        leaving = _LEAVE_REASON.search(reason or "")
        if leaving and self.poll_timed_out.pop(leaving.group(1), None) is not None and "poll" not in reason:
            # the member's own log shows why it left; a 3.2+ broker would print it itself
            # (GroupCoordinator "...; client reason: consumer poll timeout has expired.")
            reason = f"{reason}; client reason: {POLL_TIMEOUT_REASON}"
        rnd = self.round
        if rnd is not None and rnd.generation_id is None and not rnd.stable:
            if rnd.timing_source != "member":
                return  # still the same join phase (the model noted the repeated Preparing)
            self._adopt_coordinator_start(rnd, e.ts, reason)
        else:
            self._begin_round(e.ts, reason, "coordinator", change_logged=change_logged)
            self.round.owned_before = not from_empty
        if self.kip415_delay_inferred and _existing_members_rejoin(reason):
            self.kip415_delay_inferred = False  # the workers rejoin when the delay expires
        if leaving:
            self._stop_member(leaving.group(1), e.ts, "member_left")
        if self.protocol != "cooperative":  # eager, or unknown: the classic default (range) is eager
            self._stop_unlogged_members(e.ts)

    def _c_join_completed(self, e: Event) -> None:
        self.group.apply(e)
        gen = e.generation_id if e.generation_id is not None else self.group.generation_id
        rnd = self._round_for_generation(gen, e.ts)
        rnd.generation_id = gen
        rnd.join_completed_at = e.ts
        rnd.leader_id = e.leader_id or self._leader_if_rejoined(rnd)
        if e.members is not None:
            rnd.members = list(e.members)
        elif self.group.membership_known:
            rnd.members = list(self.group.members)
        rnd.member_count = e.member_count if e.member_count is not None else _len(rnd.members)
        named = co.members_named_in_reason(rnd.reason)
        if gen is not None and named is not None and named[2] and named[0] in self.group.members:
            # the member whose JoinGroup opened this round joined it and was not removed before its
            # completion: a member of the generation, like those whose responses name it
            self._member_in_generation(gen, (named[0],))
        # replaced instances whose new ids no line printed yet: the old ids stand for them
        rnd.stand_ins = sorted(
            (set(rnd.members or ()) | {rnd.leader_id}) & set(self.unnamed_replacements.values())
        )
        rnd.protocol_type = e.protocol_type or self.group.protocol_type
        self._set_protocol(e.protocol_name)

    def _members_resolved(self, gen: int | None, members: list[str]) -> None:
        """A count the model could not place when it was stated (some pending members had joined
        unlogged) turned out to state `members` (`ClassicGroup._still_pending`): generation `gen`'s
        list, if it is still open or its row not yet drained."""
        rnd = self.round
        if rnd is not None and rnd.generation_id == gen and gen is not None:
            if rnd.members is None:
                rnd.members = list(members)
            return
        for row in reversed(self._out["generations"]):
            if row["generation_id"] == gen and gen is not None:
                if row["members"] is None and row["member_count"] in (None, len(members)):
                    row["members"] = sorted(members)
                return

    def _leader_if_rejoined(self, rnd: Round) -> str | None:
        """The model's leader at join completion, unless it is a static member no line shows rejoining in
        this round: a leader that did not rejoin hands leadership to the first joined member of the
        members map (GroupMetadata.maybeElectNewJoinedLeader / ClassicGroup.maybeElectNewJoinedLeader;
        a dynamic one is removed first), and a known static member's JoinGroup is not logged at INFO.
        None then: the leader's assignment line, if the round gets one, names it."""
        leader = self.group.leader_id
        info = self.group.members.get(leader) if leader else None
        if info is None or not info.group_instance_id or leader in rnd.joined:
            return leader
        if self.group.membership_known and len(self.group.members) == 1:
            return leader  # a join phase completes only with a member that joined
        if rnd.removed_in_join_phase_at is not None and rnd.removed_in_join_phase_at == rnd.join_completed_at:
            # the phase completed at a member's removal: removing a member while PreparingRebalance
            # completes the join only once every remaining member has joined (GroupCoordinator.scala
            # removeMemberAndUpdateGroup -> checkAndComplete -> tryCompleteJoin / hasAllMembersJoined;
            # GroupMetadataManager.removeMemberAndUpdateClassicGroup in 4.0): the leader rejoined
            return leader
        named = co.members_named_in_reason(rnd.reason)
        return leader if named is not None and named[0] == leader else None

    def _c_assignment_received(self, e: Event) -> None:
        self.group.apply(e)
        gen = e.generation_id if e.generation_id is not None else self.group.generation_id
        rnd = self._round_for_generation(gen, e.ts)
        rnd.generation_id = gen
        if e.leader_id:
            rnd.leader_id = e.leader_id
        if e.member_count is not None:
            rnd.member_count = e.member_count
        static = (e.attributes or {}).get("static_member_count")
        if static is not None and static.isdigit():
            rnd.static_member_count = int(static)
        if e.assignment:
            self._check_assignment(e.assignment, e)
            assignment = {m: sorted(tps) for m, tps in e.assignment.items()}
            self.leader_assignment = assignment
            self._learn_topics(tp for tps in assignment.values() for tp in tps)
        self._stabilize(e.ts, "observed")

    def _c_group_stable(self, e: Event) -> None:
        self.group.apply(e)
        if self.round is not None and not self.round.stable:
            if e.generation_id is not None and self.round.generation_id is None:
                self.round.generation_id = e.generation_id
            self._stabilize(e.ts, "observed")

    def _c_member_removed(self, e: Event) -> None:
        if e.reason == RemovalReason.FENCED_STATIC.value and self._name_fencing_member(e):
            self.group.apply(e)
            return
        member = e.member_id or self.group.member_for_instance(e.group_instance_id)
        rnd = self.round
        if (
            rnd is not None
            and self.group.state is co.GroupState.PREPARING_REBALANCE
            and e.reason in (RemovalReason.SESSION_TIMEOUT.value, RemovalReason.LEAVE_GROUP.value)
        ):
            rnd.removed_in_join_phase_at = e.ts
        if member:
            reason = e.reason
            if reason == RemovalReason.LEAVE_GROUP.value:
                if not self._is_member_timed(member):
                    self._stop_member(member, e.ts, "member_left")
            else:
                # it died or hung (a session timeout; no JoinGroup / SyncGroup for the whole rebalance or
                # pending-sync timeout, GroupCoordinator.onCompleteJoin / removePendingSyncMember; a static
                # member fenced by its instance's newer process) at an instant no line shows: the stop is
                # the latest it can be, an estimate (`inferred`)
                at = self._crash_instant(member, e) if reason == RemovalReason.SESSION_TIMEOUT.value else e.ts
                self._stop_member(member, at, "member_failed", "inferred")
            self.views.pop(member, None)
            self.member_timed.discard(member)
            if self._kip415_lost(e, member):
                self.kip415_delay_inferred = True
        self.group.apply(e)

    def _name_fencing_member(self, e: Event) -> bool:
        """A request of a static instance's old member id was refused: the instance's current member id is
        the one the line names (GroupCoordinator.validateCurrentMember, FENCED_INSTANCE_ID). The old process
        is a zombie of a replacement already made: nothing stops here. The new id names a replacement whose
        line did not (3.x), or one no line showed; the old id stood for it until now."""
        current = (e.attributes or {}).get("current_member_id")
        instance = e.group_instance_id
        if not current or not instance or current == e.member_id:
            return False
        if (
            instance not in self.unnamed_replacements
            and self.group.member_for_instance(instance) == e.member_id
        ):
            self.unnamed_replacements[instance] = e.member_id  # replaced where no line of the input shows it
        if instance in self.unnamed_replacements:
            self._name_replacement(instance, current)
        return True

    def _kip415_lost(self, e: Event, member: str) -> bool:
        """Broker only, a Connect worker group with incremental cooperative rebalancing (KIP-415,
        `sessioned`/`compatible`): a worker that failed or left takes its connectors and tasks with it, and
        the leader postpones their reassignment by scheduled.rebalance.max.delay.ms (5 min by default):
        every round until the delay expires keeps it, and the workers rejoin when it does
        (IncrementalCooperativeAssignor.handleLostAssignments, "Delayed rebalance in progress"). No broker
        line shows the delay (the workers print it: `sync_response.attributes.delay_ms`), so those rounds
        are taken as one episode, inferred. A worker known to have run nothing loses nothing: no delay."""
        protocol = self.protocol_name or self.offered_protocol or self._configured_assignor()
        ran_nothing = self.group.generation_id == 0 or (
            self.assignment_generation is not None and not self.assignment.get(member)
        )
        return (
            protocol in KIP415_PROTOCOLS
            and not ran_nothing
            and not self.views
            and (e.attributes or {}).get("pending") != "true"
            and e.reason
            in (
                RemovalReason.SESSION_TIMEOUT.value,
                RemovalReason.LEAVE_GROUP.value,
                RemovalReason.REBALANCE_TIMEOUT.value,
            )
        )

    def _crash_instant(self, member: str, e: Event) -> int:
        """When a member removed on session expiry stopped consuming: an estimate, never a logged instant.
        The coordinator expires a member `session.timeout.ms` after its deadline was last reset
        (GroupCoordinator.completeAndScheduleNextHeartbeatExpiration; GroupMetadataManager
        rescheduleClassicGroupMemberHeartbeat in 4.0), by its heartbeat, JoinGroup or SyncGroup: expiry -
        session timeout is its last request, and it died within a heartbeat interval of it. Later than the
        crash, so the unavailable and stop-the-world time are lower bounds, when the session timeout is
        unknown (3.x lines print it only for a LeaveGroup; else `ReplaySettings.session_timeout_ms`): the
        stop is then at the removal, the latest it can be; or when the deadline was last reset by a join
        completion (onCompleteJoin / completeClassicGroupJoin reset every member's, also one that died in
        the join phase after its JoinGroup)."""
        timeout = (
            co.int_attribute(e, "session_timeout_ms")
            or self.group.session_timeout_of(member)
            or self._configured_session_timeout(member)
            or self.settings.session_timeout_ms
        )
        return e.ts - timeout if timeout else e.ts

    def _c_static_member_replaced(self, e: Event) -> None:
        """KIP-345 (GroupCoordinator.updateStaticMemberAndRebalance, ClassicGroup.replaceStaticMember): a
        known group.instance.id joined with an unknown member id; the new id takes the old one's place.
        In a Stable group with the same protocol there is no rebalance and the instance keeps its
        assignment. When the old process stopped is in no broker line (it crashed or closed without a
        LeaveGroup, and its session had not expired): without the instance's own log its partitions are
        back at the replacement, and the stop is at an unknown instant (docs/metrics.md)."""
        instance = e.group_instance_id
        old = (e.attributes or {}).get("old_member_id") or self.group.member_for_instance(instance)
        new = e.member_id
        stable = (e.attributes or {}).get("state", self.group.state and self.group.state.value) == "Stable"
        member_timed = self._is_member_timed(new or "", instance)
        owned = sorted(self.timeline.partitions_of(old)) if old else []
        if old:
            self.views.pop(old, None)
            if member_timed:  # its own log placed the stop already; else it died unseen, at the latest here
                self._stop_member(old, e.ts, "member_failed", "inferred")
            elif not stable:  # the new process takes part in the rebalance: its old partitions wait
                for tp in owned:
                    self._stop(tp, old, None, "member_failed", instance, "inferred")
        self.group.apply(e)
        if self.round is not None and not self.round.stable and (new or old):
            self.round.joined.append(new or old)  # the instance's new process joined (old: its stand-in)
        if not new and old and instance:
            # the 3.x line names the old member only; a later line names the new one (_learn_member_ids)
            self.unnamed_replacements[instance] = old
        if not old:
            return
        if stable and old not in self.assignment:
            self._await_replaced_assignment(instance, old, new)
        if new and old in self.assignment:
            self.assignment[new] = self.assignment.pop(old)
            if stable:  # the new id holds the old one's assignment in the same generation
                self._emit_assignment(
                    {new: self.assignment[new]}, self.assignment_generation, e.ts, self.assignment_source
                )
        if stable and not member_timed:
            for tp in owned:
                self.timeline.restart(
                    tp, old, e.ts, new_member=new, instance=instance, generation_id=self.assignment_generation
                )

    def _c_group_empty(self, e: Event) -> None:
        self._flush_all_pending()
        self.group.apply(e)
        for member in sorted(self._owners()):
            self._stop_member(member, e.ts, "member_left")
        rnd = self._round_for_generation(e.generation_id, e.ts)
        rnd.generation_id = e.generation_id if e.generation_id is not None else self.group.generation_id
        rnd.ended_empty = True
        rnd.members, rnd.member_count = [], 0
        rnd.ended_at = e.ts
        self.timeline.group_empty(e.ts)
        self.timeline.round_completed(rnd.generation_id, e.ts)
        self._set_assignment({}, rnd.generation_id, "observed")
        self.unnamed_replacements.clear()
        self.follow_up_due = self.kip415_delay_inferred = False
        self._end_round()
        self._end_episode(e.ts)

    def _c_group_dead(self, e: Event) -> None:
        """The group is removed. 0.9-0.10.0 remove it when its join phase ends with no member
        (GroupCoordinator.onCompleteJoin: "generation N is dead and removed", no generation consumed):
        that ends the open round and its episode at this line; 1.0+ only from Empty (offsets expired)."""
        self._flush_all_pending()
        self.group.apply(e)
        for member in sorted(self._owners()):
            self._stop_member(member, e.ts, "member_left")
        rnd = self.round
        if rnd is not None and not rnd.stable:
            rnd.ended_at = e.ts
            self.timeline.round_completed(rnd.generation_id, e.ts)
        self._end_round(e.ts)
        self.timeline.group_empty(e.ts)
        self._end_episode(e.ts)
        self._set_assignment({}, None, "observed")
        self.views.clear()
        self.member_timed.clear()
        self.aliases.clear()
        self.joining_clients.clear()
        self.claimed_new.clear()
        self.fresh_join_sent.clear()
        self.unnamed_joins.clear()
        self.silent_joiners.clear()
        self.unnamed_replacements.clear()
        self.poll_timed_out.clear()
        self.follow_up_due = self.kip415_delay_inferred = False

    def _c_topic_metadata_changed(self, e: Event) -> None:
        for key, value in (e.attributes or {}).items():
            if key.startswith("topic.") and value.isdigit():
                self.topics[key[len("topic.") :]] = int(value)

    # ============================================================================== member side
    def _member_event(self, e: Event) -> None:
        member = self._resolve_member(e)
        kind = e.event_type
        if member is None:
            return  # before its first JoinGroup response: nothing to attribute yet
        if e.group_instance_id in self.unnamed_replacements:
            self._name_replacement(e.group_instance_id, member)
        view = self.views.get(member)
        if view is None:
            view = self.views[member] = MemberView(member, e.group_instance_id)
        if e.group_instance_id:
            view.instance = e.group_instance_id
            self.member_timed.add(e.group_instance_id)
        self.member_timed.add(member)
        if kind not in _CALLBACKS and view.pending is not None and not self._between_callbacks(e):
            self._flush_pending(view)
        handler = _MEMBER_HANDLERS.get(kind)
        if handler is not None:
            handler(self, e, view)

    @staticmethod
    def _between_callbacks(e: Event) -> bool:
        """Whether `e` is the revoking member's requestRejoin, logged by ConsumerCoordinator.onJoinComplete
        after its onPartitionsRevoked and before its onPartitionsAssigned ("Adding newly assigned
        partitions", the instant the added partitions start): the member's pending synced assignment stays
        pending for the callback line that follows, instead of being applied at the sync. Its wording:
        "Request joining group due to: need to revoke partitions [...] as indicated by the current
        assignment and re-join" (3.x), "Need to revoke partitions [...] and re-join the group" (2.4-2.8)."""
        return e.event_type == _JOIN_REQUESTED and is_revoke_rejoin(e.reason)

    def _resolve_member(self, e: Event) -> str | None:
        """The member id of a member-side event; events without one belong to the member id last seen
        from the same source and client (log lines of one consumer)."""
        alias = _alias(e)
        if e.member_id:
            self.aliases[alias] = e.member_id
            if self.unnamed_joins.pop(alias, None) is not None:
                self._name_unnamed_joiner(alias, e)
            return e.member_id
        fresh_join = e.event_type == _JOIN_SENT
        if fresh_join:
            self._note_unnamed_join(alias, e.ts)
            # a JoinGroup without a member id: a new process (or one whose member id was reset)
            previous = self.views.get(self.aliases.pop(alias, None) or "")
            if previous is not None:
                # the client's previous member id will not rejoin: nothing is awaited from it (a signal
                # just resolved to it, such as Connect's "Rebalance started" before a new worker's first
                # JoinGroup, was this new process's)
                previous.signal_ts = None
                self._removed_member_rejoins(previous)
                self._rejoin_after_lost(previous)
            if e.client_id:
                self.joining_clients.add(e.client_id)
            self.fresh_join_sent[alias] = e.ts
            if e.group_instance_id:
                self.member_timed.add(e.group_instance_id)
                self._static_restart(e)
        unknown_signal = e.event_type in _SIGNALS and alias not in self.aliases
        if (fresh_join or unknown_signal) and not self.has_coordinator:
            # a new member owns nothing yet, but its join is a rebalance signal once a later line shows
            # one follows (a Connect worker's "Rebalance started" precedes its first JoinGroup)
            self._defer_fresh_join(e)
            return None
        if fresh_join or unknown_signal:
            return None
        return self.aliases.get(alias)

    def _note_unnamed_join(self, alias: str, ts: int) -> None:
        """Members' logs only: a JoinGroup line no member id goes with. Since KIP-394 (2.2) a new member's
        first JoinGroup only gets MEMBER_ID_REQUIRED and makes a pending member, not counted; its second,
        at once, carries the given id and adds the member (GroupCoordinator.doNewMemberJoinGroup /
        doCurrentMemberJoinGroup; GroupMetadataManager.classicGroupJoinNewDynamicMember in 4.0). A Connect
        worker logs that id nowhere before the JoinGroup response (WorkerCoordinator.requestRejoin logs
        "need to re-join with the given member-id" at DEBUG): a worker that dies before it is a member
        no line names (`SilentJoiner`). A further JoinGroup without an id is a new process's: the last
        one's member stays in the group until its session expires."""
        if self.has_coordinator:
            return
        lines = self.unnamed_joins.setdefault(alias, [])
        if len(lines) >= 2:
            for joiner in self.silent_joiners:
                if joiner.alias == alias:
                    joiner.alias = None  # a new process: no later line of this log is the old member's
            lines.clear()
        lines.append(ts)
        if len(lines) == 2:
            self.silent_joiners.append(SilentJoiner(lines[1], lines[1] - lines[0], alias))

    def _name_unnamed_joiner(self, alias: str, e: Event) -> None:
        """A line of `alias` names its member id: its member is no longer unnamed. A LeaveGroup sent before
        any response reached it (AbstractCoordinator.maybeLeaveGroup) still leaves it in a generation
        formed before the request arrived (`_silent_joiner_may_be_in`); any other line follows a response."""
        for joiner in self.silent_joiners:
            if joiner.alias == alias:
                joiner.alias = None
                if e.event_type == _LEAVE_SENT:
                    joiner.left_at = e.ts
                else:
                    self.silent_joiners.remove(joiner)
                return

    def _new_members_signal(self, e: Event) -> bool:
        """A member-side line of a member with no id yet that only signals its own join (its first
        JoinGroup, a Connect worker's "Rebalance started" before it): it tells nothing more about whether
        a rebalance followed a deferred fresh join (`_defer_fresh_join`)."""
        return (
            e.side != _COORDINATOR
            and not e.member_id
            and e.event_type in _SIGNALS
            and (e.event_type == _JOIN_SENT or _alias(e) not in self.aliases)
        )

    def _defer_fresh_join(self, e: Event) -> None:
        """Members' logs only: a JoinGroup without a member id. Since KIP-394 (2.2) the coordinator only
        answers MEMBER_ID_REQUIRED and keeps a pending member, which triggers nothing
        (GroupCoordinator.doNewMemberJoinGroup / GroupMetadataManager.classicGroupJoinNewDynamicMember);
        the member's rejoin with its new id, at once, does. Its round still starts at this first line
        (the earliest instant of the rebalance it leads to), once any later line is replayed; when the
        input ends here, no rebalance followed it in the input (`finish`)."""
        if self.fresh_join is None:
            self.fresh_join = (e.ts, e.reason, [])
        # every process whose join waits here is a joiner of the round it opens (`_alone_in_join_phase`)
        self.fresh_join[2].append(_process_of(e))

    def _signal_fresh_join(self) -> None:
        ts, reason, processes = self.fresh_join
        self.fresh_join = None
        if not self.has_coordinator:
            self._member_round_signal(ts, reason, new_member=True)
            for process in processes:
                self._note_joiner(process)

    def _note_joiner(self, process: str | None) -> None:
        """Members' logs only: a process's JoinGroup line during the open join phase (`_alone_in_join_phase`)."""
        rnd = self.round
        joining = not self.has_coordinator and rnd is not None and rnd.generation_id is None
        if joining and process and process not in rnd.joiners:
            rnd.joiners.append(process)

    def _name_replacement(self, instance: str, member: str) -> None:
        """The new member id of a replaced instance whose replacement line did not print it: the first
        one the instance's own log shows after the replacement, or a broker line naming an id the group
        does not have that is the instance's (_learn_member_ids). The old id stood for it until now."""
        old = self.unnamed_replacements[instance]
        if member == old:
            return  # a line of the old process, logged before its replacement
        del self.unnamed_replacements[instance]
        if self.stable_replacements.get(instance, [None])[0] == old:
            self.stable_replacements[member] = self.stable_replacements.pop(instance)
        if old in self.group.members and self.group.member_for_instance(instance) == old:
            self.group.replace_static_member(instance, old, member)
        self.timeline.rename_member(old, member)
        self._name_stand_in_rows(old, member)
        rnd = self.round
        if rnd is not None and old in rnd.stand_ins:
            rnd.stand_ins.remove(old)
            if rnd.members is not None:
                rnd.members = [member if m == old else m for m in rnd.members]
            if rnd.leader_id == old:
                rnd.leader_id = member
        if self.leader_assignment is not None and old in self.leader_assignment:
            self.leader_assignment[member] = self.leader_assignment.pop(old)
        if old in self.assignment:
            self.assignment[member] = self.assignment.pop(old)
            if (
                self.group.state is co.GroupState.STABLE
                and self.group.generation_id == self.assignment_generation
            ):
                self._emit_assignment(
                    {member: self.assignment[member]},
                    self.assignment_generation,
                    self._event.ts,
                    self.assignment_source,
                )

    def _name_stand_in_rows(self, old: str, member: str) -> None:
        """Generations that ended while `old` stood for its instance's unnamed new id (KIP-345: a static
        member replaced while Stable; GroupCoordinator.scala 3.x and GroupMetadataManager 4.x print
        "Replacing previously mapped member <old>" without the new id) had `member` in `old`'s place:
        their rows, still in this batch, get the members and leader once no other stand-in remains."""
        for entry in self._stand_in_rows:
            row, members, leader, stand_ins = entry
            if old not in stand_ins:
                continue
            stand_ins.remove(old)
            entry[1] = members = [member if m == old else m for m in members] if members is not None else None
            entry[2] = leader = member if leader == old else leader
            if stand_ins:
                continue
            row["members"] = sorted(members) if members is not None else row["members"]
            if row["leader_member_id"] is None and leader is not None and not row["ended_empty"]:
                row["leader_member_id"] = leader
        self._stand_in_rows = [entry for entry in self._stand_in_rows if entry[3]]

    def _learn_member_ids(self, e: Event) -> None:
        """A broker line naming a member id the group does not have, while an instance's replacement is
        unnamed: a static member's id is `{group.instance.id}-{UUID}` (ClassicGroup.generateMemberId,
        GroupMetadata.generateMemberId), so the id that starts with the instance's is its new one."""
        named = co.members_named_in_reason(e.reason) if e.event_type == _REBALANCE_PREPARED else None
        ids = (e.member_id, e.leader_id, (e.attributes or {}).get("old_member_id"), named and named[0])
        for member in ids:
            if not member or member in self.group.members or member in self.group.pending:
                continue
            for instance in sorted(self.unnamed_replacements):
                if e.group_instance_id == instance or member.startswith(instance + "-"):
                    self._name_replacement(instance, member)
                    break

    def _static_restart(self, e: Event) -> None:
        """A static member's new process joins with an empty member id: its old incarnation crashed
        (KIP-345); the crash instant is in no log, so its partitions stop here: the latest it can be, the
        unavailable time a lower bound (`inferred`). A close() revoked them in its own log already
        (ConsumerCoordinator.onLeavePrepare), and sent no LeaveGroup (AbstractCoordinator.maybeLeaveGroup)."""
        old = self.group.member_for_instance(e.group_instance_id)
        if old is None:
            old = next((v.member_id for v in self.views.values() if v.instance == e.group_instance_id), None)
        if old is not None and self.timeline.partitions_of(old):
            self._stop_member(old, e.ts, "member_failed", "inferred")

    def _signal(self, e: Event, view: MemberView) -> None:
        self._unsignalled_rejoin(view)
        if view.signal_ts is not None:
            return
        view.signal_ts = e.ts
        if not self.has_coordinator:
            self._member_round_signal(e.ts, e.reason)
        if self.protocol == "eager":
            # eager: onJoinPrepare revokes everything; the member stopped consuming at its first signal
            self._stop_member(view.member_id, e.ts, "revoked")

    _m_heartbeat_rebalancing = _signal
    _m_join_requested = _signal

    def _m_join_sent(self, e: Event, view: MemberView) -> None:
        self._rejoin_after_lost(view)
        fresh = self.fresh_join_sent.pop(_alias(e), None)
        if fresh is not None:
            # KIP-394: the coordinator answers a JoinGroup without a member id at once
            # (MEMBER_ID_REQUIRED) and the member resends it with the id: one round trip
            view.round_trip_ms = e.ts - fresh
        if view.join_sent_at is None or view.unanswered_since is not None:
            # its first JoinGroup since its last response; or a later one after a generation may have
            # counted the earlier one: it rejoins the next join phase
            view.join_sent_at, view.unanswered_since = e.ts, None
        self._signal(e, view)

    def _m_join_response(self, e: Event, view: MemberView) -> None:
        sent = view.join_sent_at if view.join_sent_at is not None else view.signal_ts
        view.join_sent_at = view.unanswered_since = None
        self._set_protocol(e.protocol_name)
        if e.protocol_type and self.group.protocol_type is None:
            # the broker's lines do not print it; a JoinGroup of another protocol type is refused
            # (INCONSISTENT_GROUP_PROTOCOL), so a member that joined has the group's
            self.group.protocol_type = e.protocol_type
        gen = e.generation_id
        if self.has_coordinator and gen is not None:
            self._member_in_generation(gen, (view.member_id, e.leader_id))
        self._settle_emptied(gen)
        if gen is not None and gen == view.synced_generation:
            self._same_generation_rejoin(view, e)
            return
        if self._replaced_while_stable(view, gen):
            self._static_replacement_joined(view, e)
            return
        if self._stale_join_response(view, gen):
            view.generation_id = gen
            self._unlogged_generation_seen(gen, e)
            return
        if self._emptied_unseen(view, gen):
            self.timeline.group_empty(self.timeline.latest_stop(), source="inferred")
        if (
            self.protocol != "cooperative"
            and view.generation_id != gen
            and self.timeline.partitions_of(view.member_id)
        ):
            # eager member whose rebalance signal was not logged: it revoked before this rejoin
            self._stop_member(view.member_id, view.signal_ts or e.ts, "revoked")
        view.generation_id = gen
        self._unsignalled_rejoin(view)
        if view.signal_ts is None:
            view.signal_ts = e.ts
        rnd = (
            self._member_round(gen, view.signal_ts, e.ts)
            if not self.has_coordinator and gen is not None
            else None
        )
        if rnd is not None:
            if rnd.join_completed_at is None:
                rnd.join_completed_at = e.ts
            if sent is not None:
                rnd.latest_member_join = max(rnd.latest_member_join or sent, sent)
            if e.leader_id:
                rnd.leader_id = e.leader_id
            if rnd.members is None:
                rnd.members = []
            # the JoinGroup response names the generation's leader, a member of it whether or not its
            # own log shows the generation (JoinGroupResponse.leader; AbstractCoordinator: a follower
            # learns the leader there)
            for member in (view.member_id, e.leader_id):
                if member and member not in rnd.members:
                    rnd.members.append(member)
            rnd.member_count = max(rnd.member_count or 0, len(rnd.members))

    def _member_in_generation(self, gen: int, members: Iterable[str | None]) -> None:
        """Both views: a member's JoinGroup response for generation `gen` (and the leader it names) is
        proof of membership: the coordinator answers every member of the generation at the join's
        completion (GroupCoordinator.onCompleteJoin; ClassicGroup in 4.0). Once as many are named as the
        broker's "Stabilized ... with N members" counts, they are the generation's members."""
        named = self._joined_generation.setdefault(gen, set())
        named.update(m for m in members if m)
        rnd = self.round
        if rnd is not None and rnd.generation_id == gen:
            if rnd.members is None and rnd.member_count == len(named):
                rnd.members = sorted(named)
            return
        for row in reversed(self._out["generations"]):
            if row["generation_id"] == gen:
                if row["members"] is None and not row["ended_empty"] and row["member_count"] == len(named):
                    row["members"] = sorted(named)
                return

    def _same_generation_rejoin(self, view: MemberView, e: Event) -> None:
        """A follower rejoined the Stable group with unchanged metadata and got its generation back: the
        coordinator answers it without a rebalance (GroupCoordinator.doCurrentMemberJoinGroup, Stable: "for
        followers with no actual change to their metadata, just return group information for the current
        generation"; GroupMetadataManager.classicGroupJoinExistingMember in 4.0). No new generation, no
        group-wide episode: a member-only rejoin, from its first signal to its sync. An eager member still
        revoked everything in onJoinPrepare (its partitions wait until the sync gives them back)."""
        view.rejoin_since = view.signal_ts if view.signal_ts is not None else e.ts
        self._discard_signal_round()

    def _discard_signal_round(self) -> None:
        """Member-side logs only: a join that got the current generation back started no rebalance, so
        the round its signal opened (nothing else in it yet) and that round's episode are dropped."""
        rnd, episode = self.round, self.timeline.episode
        opened_by_it = (
            not self.has_coordinator
            and rnd is not None
            and rnd.generation_id is None
            and rnd.timing_source == "member"
            and rnd.episode_round == 1
            and episode is not None
            and episode.episode_id == rnd.episode_id
        )
        if opened_by_it:  # its signal looked like the start of a rebalance
            self.round = None
            self.timeline.discard_episode()
            self.last_episode_id = self.previous_episode_id

    def _replaced_while_stable(self, view: MemberView, gen: int | None) -> bool:
        """Member-side logs only: a static member's new process (a member id it never synced with) got
        the generation that already completed. KIP-345: a known group.instance.id joining with an
        unknown member id replaces the old member; in a Stable group whose protocol is unchanged the
        coordinator answers with the current generation and triggers no rebalance
        (GroupCoordinator.updateStaticMemberAndRebalance; ClassicGroup.replaceStaticMember /
        GroupMetadataManager.updateStaticMemberThenRebalanceOrCompleteJoin in 4.0)."""
        return (
            not self.has_coordinator
            and bool(view.instance)
            and view.synced_generation is None
            and gen is not None
            and gen == self.closed_generation
            and (self.round is None or self.round.generation_id is None)
        )

    def _stale_join_response(self, view: MemberView, gen: int | None) -> bool:
        """Member-side logs only: a JoinGroup response for a generation older than the last one the
        group completed, which another member still in the group already joined or synced past (the
        generation ids of one group only grow, GroupMetadata / ClassicGroup.initNextGeneration; they
        restart only for a group deleted once Empty, which a member still in it rules out). The member
        logged it late (its process paused after sending the JoinGroup: AbstractCoordinator
        .JoinGroupResponseHandler runs at its next poll); the coordinator completed that join phase at the
        time with this member in it, so its generation ended already: no round of its own (its member
        list is the leader's assignment)."""
        rnd = self.round
        latest = (
            rnd.generation_id if rnd is not None and rnd.generation_id is not None else self.closed_generation
        )
        return (
            not self.has_coordinator
            and gen is not None
            and latest is not None
            and gen < latest
            and any(
                max(v.synced_generation or 0, v.generation_id or 0) > gen
                for v in self.views.values()
                if v is not view
            )
        )

    def _emptied_unseen(self, view: MemberView, gen: int | None) -> bool:
        """Member-side logs only: `view` joined generation `gen`, more than one after the latest generation
        any member's log showed, while no partition is consumed and some stopped: a generation formed in
        which no member with a log took part and nothing was consumed. Every logged member had left
        (a dynamic member's LeaveGroup: GroupCoordinator.removeMemberAndUpdateGroup / ClassicGroup: the
        coordinator rebalances at once and, with no member left, completes the join Empty with a new
        generation), closed without one (a static member: KIP-345, removed when its session expires) or
        stalled past max.poll.interval.ms, so the group emptied. When is in no line of the view: taken at
        the latest stop, the earliest it can be (the stop-the-world until then is a lower bound, the rows
        it closes `inferred`); what stopped was not handed to anyone meanwhile."""
        if self.has_coordinator or gen is None or self.timeline.consuming() or not self.timeline.stopped():
            return False
        shown = [v.generation_id for v in self.views.values() if v.generation_id is not None]
        if self.closed_generation is not None:
            shown.append(self.closed_generation)
        if self.round is not None and self.round.generation_id is not None:
            shown.append(self.round.generation_id)
        return bool(shown) and gen > max(shown) + 1 and self.timeline.latest_stop() is not None

    def _static_replacement_joined(self, view: MemberView, e: Event) -> None:
        """The replacing process of a static member joined the current generation (`_replaced_while_stable`):
        no new generation, no episode; it syncs the old member's assignment like any member."""
        view.generation_id = e.generation_id
        self._discard_signal_round()

    def _m_assignment_computed(self, e: Event, view: MemberView) -> None:
        gen = e.generation_id if e.generation_id is not None else view.generation_id
        if not e.assignment:
            return
        if self._superseded(gen):
            self._late_leader_named(gen, view.member_id, e.assignment)
            return
        self._check_assignment(e.assignment, e)
        assignment = {m: sorted(tps) for m, tps in e.assignment.items()}
        for member in assignment:
            if member not in self.member_timed:
                self._claim_logged_join(member, classic_member_owner(member))
        self._learn_topics(tp for tps in assignment.values() for tp in tps)
        rnd = (
            self._member_round(gen, view.signal_ts, e.ts)
            if not self.has_coordinator and gen is not None
            else None
        )
        if rnd is not None:
            rnd.members = sorted(set(rnd.members or []) | set(assignment))
            rnd.member_count = len(rnd.members)
            rnd.leader_id = rnd.leader_id or view.member_id
            rnd.members_listed = True
            self._left_out_members_removed(assignment)
        elif self.round is not None and self.round.generation_id == gen:
            # a broker line that names neither the leader nor the members (2.x "Assignment received from
            # leader for group G for generation N"): only the leader runs the assignor
            # (AbstractCoordinator.onJoinLeader), over every member of the generation
            # (ConsumerCoordinator.onLeaderElected assigns each member, partitions or none)
            self.round.leader_id = self.round.leader_id or view.member_id
            if self.round.members is None:
                self.round.members = sorted(assignment)
                self.round.member_count = self.round.member_count or len(assignment)
        elif not self.has_coordinator:  # a generation whose round closed already (the next one is open)
            self._late_leader_named(gen, view.member_id, assignment)
        self.leader_assignment = assignment  # rows when the group turns Stable: the SyncGroup may fail

    def _late_leader_named(self, gen: int | None, leader: str | None, assignment: dict) -> None:
        """A leader logged its assignment for generation `gen` after the replay wrote that generation's
        row: a leader that paused after its JoinGroup (members' logs only: the followers' JoinGroup
        responses do not name the leader at INFO), or one whose generation a rebalance interrupted in
        CompletingRebalance (refused at SyncGroup). The line still states who led `gen` and its members:
        the coordinator answers exactly one member of a generation as its leader, and only that member
        runs the assignor (AbstractCoordinator.onJoinLeader -> ConsumerCoordinator.onLeaderElected,
        "Finished assignment for group at generation N"), over every member of the generation, each
        listed, with partitions or none. Its row, while it is still unwritten (not drained yet), gets
        the leader and the member list it lacked; a row flushed already keeps its nulls, and a row whose
        stated count differs keeps them too."""
        if gen is None or leader is None:
            return
        row = next((r for r in reversed(self._out["generations"]) if r["generation_id"] == gen), None)
        if row is None or row["ended_empty"] or row["member_count"] not in (None, len(assignment)):
            return
        if row["leader_member_id"] is None and leader in assignment:
            row["leader_member_id"] = leader
        if row["members"] is None:
            row["members"] = sorted(assignment)
            row["member_count"] = len(assignment)

    def _left_out_members_removed(self, assignment: dict[str, list[TopicPartition]]) -> None:
        """Members' logs only: the leader's assignment lists every member of the new generation. A dynamic
        member of the previous generation it leaves out had not rejoined when the join phase completed,
        and the coordinator removed it then (GroupCoordinator.onCompleteJoin: "remove dynamic members who
        haven't joined the group yet"; GroupMetadataManager.completeClassicGroupJoin in 4.0): a member
        whose log stopped after a rebalance signal (it stalled or died) is no longer awaited, so its
        signal does not hold the episode open (`_maybe_end_episode`). Should its process go on, its
        next request finds its member id unknown (its log: lost partitions, a JoinGroup without id)."""
        previous = self.remaining_members
        if not previous:
            return
        for view in self.views.values():
            member = view.member_id
            if (
                view.signal_ts is not None
                and not view.instance
                and member in previous
                and member not in assignment
            ):
                view.signal_ts = None

    def _claim_logged_join(self, member: str, client_id: str | None) -> None:
        """`member` is the member id the coordinator gave the JoinGroup of `client_id`, whose own log showed
        that join without a member id: member timing for it from now on. Its own log names the id only in
        its JoinGroup response when KIP-394's MEMBER_ID_REQUIRED round is not at INFO (2.x clients:
        AbstractCoordinator.JoinGroupResponseHandler logs it at DEBUG), which can come after the leader's
        assignment and another member's sync turned the group Stable; coordinator timing would start its
        partitions there and its own join response revoke them again. The leader's assignment names it
        first: a dynamic member id is `{client.id}-{UUID}` (GroupMetadata / ClassicGroup.generateMemberId)."""
        if client_id is not None and client_id in self.joining_clients:
            self.joining_clients.remove(client_id)
            self.member_timed.add(member)
            self.claimed_new.add(member)

    def _superseded(self, gen: int | None) -> bool:
        """The broker's log shows the group already left generation `gen` (or is rebalancing again):
        a leader's assignment computed for it is refused at SyncGroup (REBALANCE_IN_PROGRESS). Members'
        logs only: a later generation was already logged (a leader that handled its JoinGroup response
        late, random:497): its SyncGroup gets ILLEGAL_GENERATION (GroupCoordinator.handleSyncGroup /
        ClassicGroup.validateSyncGroup), and that generation's row is out already: no round of its own."""
        group = self.group
        if not self.has_coordinator:
            rnd = self.round
            latest = rnd.generation_id if rnd is not None and rnd.generation_id is not None else None
            latest = latest if latest is not None else self.closed_generation
            return gen is not None and latest is not None and gen < latest
        if gen is None or group.generation_id is None or group.state is None:
            return False
        syncing = group.state in (co.GroupState.COMPLETING_REBALANCE, co.GroupState.STABLE)
        return gen != group.generation_id or not syncing

    def _m_sync_response(self, e: Event, view: MemberView) -> None:
        gen = e.generation_id if e.generation_id is not None else view.generation_id
        synced_before = view.synced_generation is not None
        view.generation_id = gen
        view.signal_ts = None
        member = view.member_id
        rejoined = view.rejoin_since is not None and gen == view.synced_generation
        if rejoined:
            self.timeline.member_rejoined(e.ts, e.ts - view.rejoin_since)
        view.rejoin_since = None
        view.synced_generation = gen
        rnd = self._member_round(gen, None, e.ts) if not (self.has_coordinator or rejoined) else None
        if e.leader_id:
            # Connect's assignment line names the leader (DistributedHerder "Joined group at generation N
            # ... Assignment{leader='...'}", ConnectProtocol.Assignment): it fills the generation's leader
            # (not the round a revoking worker's follow-up rejoin opened while this generation's other
            # workers still log their assignments: that one's leader is the next generation's)
            named = rnd if rnd is not None else self.round
            of_closed = named is self.round and self._next_round_open(gen)
            if (
                named is not None
                and named.generation_id in (None, gen)
                and named.leader_id is None
                and not of_closed
            ):
                named.leader_id = e.leader_id
        if rnd is not None:
            if rnd.members is None:
                rnd.members = [member]
            elif member not in rnd.members:
                rnd.members.append(member)
            rnd.member_count = max(rnd.member_count or 0, len(rnd.members))
            if not rnd.stable:
                self._stabilize(e.ts, "observed")  # the group is Stable once its first member synced
            rnd.stabilized_at = max(rnd.stabilized_at or e.ts, e.ts)
            self.timeline.round_completed(rnd.generation_id, rnd.stabilized_at)
            if not synced_before and self._may_replace_unlogged_instance(view, rnd):
                episode = self.timeline.episode
                if episode is not None and episode.episode_id == rnd.episode_id:
                    episode.source = "inferred"
        assigned, source = self._synced_partitions(e, member)
        attributes = e.attributes or {}
        delay = attributes.get("delay_ms", "")
        if delay.isdigit() and int(delay) > 0:
            self.follow_up_due = True  # KIP-415: the delayed rebalance belongs to this episode
        if attributes.get("revoked") and not self._next_round_open(gen):
            # Connect: revoked connectors/tasks -> the worker rejoins (KIP-415); a consumer's "Revoked
            # partitions" -> it rejoins (KIP-429): the round after, unless already open
            self.follow_up_due = True
        if "owned" in attributes and e.protocol_type == "consumer" and self.rebalance_protocol is None:
            # ConsumerCoordinator.onJoinComplete logs "Updating assignment with" (owned / added / revoked)
            # under the COOPERATIVE protocol only (2.4+, KIP-429): the group is cooperative even where no
            # line names the protocol and what the member owned before the log is unknown
            self.rebalance_protocol = "cooperative"
        if assigned is None:
            self._emit_incremental_assignment(e, member, gen, synced_before)
            return
        self._learn_topics(assigned)
        self._emit_assignment({member: assigned}, gen, e.ts, source)
        self._replaced_assignment(member, assigned, gen, e.ts)
        self.assignment[member] = assigned
        owned = self.timeline.partitions_of(member)
        to_stop = sorted(owned - set(assigned))
        to_start = sorted(set(assigned) - owned)
        if to_stop:
            # KIP-429: the member revokes and rejoins at once (the round after, unless already open)
            self.follow_up_due = self.follow_up_due or not self._next_round_open(gen)
            if self.rebalance_protocol is None:
                self.rebalance_protocol = "cooperative"
        view.pending = PendingApply(e.ts, gen, to_start, to_stop, source)
        if not to_start and not to_stop and e.protocol_type == "connect":
            # a Connect worker logs no callback for an assignment that starts and stops nothing: its
            # "Joined group" line is all of it, applied now (DistributedHerder.onAssigned)
            view.pending = None

    def _may_replace_unlogged_instance(self, view: MemberView, rnd: Round) -> bool:
        """Members' logs only: a static member's process syncs its first generation, led by a member
        whose log the view lacks (it computed no assignment here) and which no other logged member
        joined. Its JoinGroup may have replaced the instance's earlier process in a Stable group (KIP-345:
        GroupCoordinator.updateStaticMemberAndRebalance, ClassicGroup.replaceStaticMember: the new
        member id takes the old one's assignment in the same generation, no rebalance), whose log the
        view lacks too: what that process consumed and when it stopped is in no line, so the episode's
        partition measures are a guess (`inferred`), not a rebalance of a group that owned nothing."""
        return (
            not self.has_coordinator
            and bool(view.instance)
            and rnd.leader_id != view.member_id
            and rnd.leader_id not in self.views
            and not any(v.generation_id == rnd.generation_id for v in self.views.values() if v is not view)
        )

    def _emit_incremental_assignment(self, e: Event, member: str, gen, synced_before: bool) -> None:
        """Connect's incremental cooperative protocol (KIP-415): a worker's assignment line prints what it
        is given and what it must revoke (IncrementalCooperativeAssignor sends the increments in the
        ExtendedAssignment; DistributedHerder logs it), not all it runs. What it runs after this generation
        = what it ran - revoked + added: known when its log showed every generation since its first
        JoinGroup without a member id (a new worker runs nothing), else not emitted. The rows are
        `inferred`: rebuilt from increments, and no line lists the generation's workers (the leader logs
        no assignment), so a worker that died after its JoinGroup is in none of them."""
        if self.protocol_name not in KIP415_PROTOCOLS:
            return
        attributes = e.attributes or {}
        new_process = member in self.claimed_new
        self.claimed_new.discard(member)
        if synced_before:
            previous = self.assignment.get(member)
        else:
            # a new worker runs nothing; its log shows its JoinGroup without a member id, and the
            # coordinator's line for it may have claimed that join already (a 4.x broker logs the
            # KIP-394 second JoinGroup, the worker's "need to re-join with the given member-id" is
            # WorkerCoordinator.requestRejoin's DEBUG: its second "(Re-)joining group" looks fresh too)
            previous = [] if e.client_id in self.joining_clients or new_process else None
        if previous is None:
            return
        revoked, added = (_connect_tasks(attributes.get(key)) for key in ("revoked", "added"))
        now = sorted((set(previous) - revoked) | added)
        self.assignment[member] = now
        self._emit_assignment({member: now}, gen, e.ts, "inferred")

    def _await_replaced_assignment(self, instance: str | None, old: str, new: str | None) -> None:
        """A static member replaced while Stable whose old id's assignment no line of the view showed
        (its process logged nothing, and a broker line prints no assignment): the new id's SyncGroup in
        the same generation will show it (`_replaced_assignment`). Keyed by the new id, or by the
        instance until a line names the new id (`_name_replacement`)."""
        key = new or instance
        if key:
            self.stable_replacements[key] = [old, self.group.generation_id]

    def _replaced_assignment(self, member: str, assigned: list[TopicPartition], gen, ts: int) -> None:
        """KIP-345: replacing a static member while Stable moves its member metadata, assignment
        included, to the new member id (GroupMetadata.replaceStaticMember / ClassicGroup.replaceStaticMember)
        and the new id's SyncGroup in that generation answers with it (GroupCoordinator.doSyncGroup,
        Stable: the stored assignment). So what the new id synced is what the old id held in the same
        generation: its rows, `inferred` (no line of the view printed them)."""
        replaced = self.stable_replacements.pop(member, None)
        if replaced is not None and replaced[1] == gen:
            self._emit_assignment({replaced[0]: assigned}, gen, ts, "inferred")

    def _next_round_open(self, gen: int | None) -> bool:
        """Whether a round after generation `gen` is open already: a member's SyncGroup response for
        `gen` logged after another member's rejoin opened the next round. Its revoke-rejoin
        (ConsumerCoordinator.onJoinComplete -> requestRejoin) joins that rebalance, which is the
        follow-up; no further round is due because of it."""
        rnd = self.round
        return (
            gen is not None and gen == self.closed_generation and rnd is not None and rnd.generation_id != gen
        )

    def _m_partitions_revoked(self, e: Event, view: MemberView) -> None:
        listed = list(e.partitions or ())
        pending = view.pending
        at = e.ts
        if pending is not None:  # cooperative: revoking owned - assigned after the sync
            pending.to_stop = [tp for tp in pending.to_stop if tp not in listed]
        elif view.signal_ts is not None and self.protocol != "cooperative":
            at = view.signal_ts  # eager: revoked in onJoinPrepare; it stopped at its first signal
        elif self.protocol != "cooperative":
            view.revoked_unsignalled = True  # a close(), unless a rejoin follows (`_unsignalled_rejoin`)
        self._assume_owned_before_the_log(view, listed)
        for tp in listed:
            if self.timeline.owner_of(tp) == view.member_id:
                self._stop(tp, view.member_id, at, "revoked", view.instance)

    def _unsignalled_rejoin(self, view: MemberView) -> None:
        """The member rejoins after an eager revocation no rebalance signal of its log preceded. A close()
        revokes at that instant (onLeavePrepare); a rejoin's onJoinPrepare revoked after the member learned
        of the rebalance, which a 2.x consumer does not log at INFO (no "Request joining group due to"
        line; the heartbeat thread's REBALANCE_IN_PROGRESS is at DEBUG): it stopped consuming at that
        signal, so the stops placed at the revocation are the latest they can be (`inferred`: the
        unavailable and stop-the-world time from them are lower bounds)."""
        if view.revoked_unsignalled:
            view.revoked_unsignalled = False
            self.timeline.stops_inferred(view.member_id)

    def _rejoin_after_lost(self, view: MemberView) -> None:
        """The member sends a JoinGroup after giving its partitions up as lost: that was
        ConsumerCoordinator.onJoinPrepare finding its generation or member id reset ("Giving away all
        assigned partitions as lost since generation/memberID has been reset"): the coordinator had
        dropped it already (its session expired while the process stalled, or a heartbeat was fenced),
        and the consumer learns it only at its next poll. It stopped consuming at an instant no line
        shows, before that: the stops placed at the lost line are the latest they can be (`inferred`:
        the unavailable and stop-the-world time from them are lower bounds). A close() gives them up as
        lost in onLeavePrepare (during a rebalance) at the instant it stops, and sends no JoinGroup."""
        if view.lost_before_rejoin:
            view.lost_before_rejoin = False
            self.timeline.stops_inferred(view.member_id)

    def _removed_member_rejoins(self, view: MemberView) -> None:
        """Members' logs only: `view` gave its partitions up as lost and now joins without a member id:
        the coordinator had removed it (its session expired while the process stalled: UNKNOWN_MEMBER_ID,
        AbstractCoordinator.resetGenerationOnResponseError resets the member id; a fenced generation
        alone keeps it). When it was the last member the group had (the leader's assignment listed no
        one else, the others' LeaveGroups were logged) and no join phase is open, the removal emptied
        the group: GroupCoordinator.onExpireHeartbeat -> removeMemberAndUpdateGroup prepares a
        rebalance with no member to wait for, completed at once as an Empty generation
        (GroupMetadata / ClassicGroup.initNextGeneration). Like the last member's LeaveGroup
        (`_left_group`): its round starts at the lost line, the latest the removal can be; the
        generation the rejoin gets settles it (`_settle_emptied`: one more than the last, the rejoin
        joined that join phase instead).
        When others of its generation remain and none of their lines showed a rebalance since (their
        processes died or stalled too, or their logs are not in the input), the removal still started
        one (removeMemberAndUpdateGroup -> maybePrepareRebalance in Stable), which no line shows: its
        round starts at the lost line too (`inferred`), and whether the rejoin joined its join phase or
        came after it completed, only the generation the rejoin gets says (`_settle_emptied`)."""
        if (
            self.has_coordinator
            or not view.lost_before_rejoin
            or view.lost_at is None
            or view.instance  # KIP-345: a static member's removal is its session's, no new member id
            or self.remaining_members is None
            or (self.round is not None and self.round.generation_id is None)
        ):
            return
        others = [m for m in self.remaining_members if m != view.member_id]
        if others and view.member_id not in self.remaining_members:
            return  # left out of the last generation: that generation's round was its removal's
        # the coordinator's own reason for it (GroupCoordinator.onExpireHeartbeat), for the cause
        self._member_round_signal(view.lost_at, f"removing member {view.member_id} on heartbeat expiration")
        self.remaining_members = others
        if others:
            self.round.removal_unseen_at = view.lost_at
            self.round.source = "inferred"
            self.timeline.episode.source = "inferred"
        else:
            self.round.emptied_at = view.lost_at

    def _m_partitions_lost(self, e: Event, view: MemberView) -> None:
        view.lost_at = e.ts
        listed = list(e.partitions or ())
        if view.pending is not None:
            view.pending.to_stop = [tp for tp in view.pending.to_stop if tp not in listed]
        self._assume_owned_before_the_log(view, listed)
        for tp in listed:
            if self.timeline.owner_of(tp) == view.member_id:
                self._stop(tp, view.member_id, e.ts, "lost", view.instance)
                # its own poll timeout reset it: those stops are at that line already (observed)
                view.lost_before_rejoin = view.poll_timeout_ts is None

    def _assume_owned_before_the_log(self, view: MemberView, tps: list[TopicPartition]) -> None:
        """A member revokes (or loses) partitions the replay never saw anyone get: it has been consuming
        them since before the log began (real logs start mid-life, EXPECTED.md 09)."""
        for tp in tps:
            self.timeline.assume(tp, view.member_id, instance=view.instance)

    def _m_partitions_assigned(self, e: Event, view: MemberView) -> None:
        pending = view.pending
        listed = list(e.partitions or ())
        self._learn_topics(listed)
        if pending is not None:
            # Kafka invokes onPartitionsRevoked before onPartitionsAssigned: unlogged revocations
            # happened at the sync
            for tp in pending.to_stop:
                self._stop(tp, view.member_id, pending.sync_ts, "revoked", view.instance)
            for tp in pending.to_start:
                if tp not in listed:
                    self._start(
                        tp,
                        view.member_id,
                        pending.sync_ts,
                        view.instance,
                        pending.generation_id,
                        pending.source,
                    )
            view.pending = None
        gen = pending.generation_id if pending else view.generation_id
        source = pending.source if pending else "observed"
        for tp in listed:
            self._start(tp, view.member_id, e.ts, view.instance, gen, source)

    def _m_poll_timeout_expired(self, e: Event, view: MemberView) -> None:
        """max.poll.interval.ms passed without a poll() (AbstractCoordinator.HeartbeatThread): the heartbeat
        thread logs it and calls maybeLeaveGroup("consumer poll timeout has expired.") at once, which sends
        the LeaveGroup (dynamic members only, AbstractCoordinator.maybeLeaveGroup) and resets the generation.
        The application thread learns it at its next poll(), possibly much later, and only then calls
        onPartitionsLost ("Lost previously assigned partitions"): the partitions are out of the group, and
        unavailable, from here. The LeaveGroup's rebalance is one episode whose reason is the poll timeout."""
        view.poll_timeout_ts = e.ts
        self.poll_timed_out[view.member_id] = e.ts
        self._stop_member(view.member_id, e.ts, "member_left")
        if not view.instance:  # the LeaveGroup follows at once (DEBUG before 2.1: maybe not logged)
            self._left_group(view, e.ts, POLL_TIMEOUT_REASON)

    def _m_leave_sent(self, e: Event, view: MemberView) -> None:
        """The member leaves: a later process with the same client starts with a new member id."""
        reason = POLL_TIMEOUT_REASON if view.poll_timeout_ts is not None else e.reason
        if view.join_sent_at is not None and not self.has_coordinator:
            # it leaves with its JoinGroup unanswered: a generation formed before the LeaveGroup arrived
            # counts it (`_silent_joiner_may_be_in`)
            self.silent_joiners.append(
                SilentJoiner(
                    view.join_sent_at, view.round_trip_ms, None, e.ts, unanswered_since=view.unanswered_since
                )
            )
        self._stop_member(view.member_id, e.ts, "member_left")
        self._left_group(view, e.ts, reason)
        del self.views[view.member_id]
        self.member_timed.discard(view.member_id)
        self.aliases = {k: v for k, v in self.aliases.items() if v != view.member_id}

    def _left_group(self, view: MemberView, ts: int, reason: str | None) -> None:
        """Member-side logs only: a dynamic member's LeaveGroup makes the coordinator rebalance at once
        (GroupCoordinator.removeMemberAndUpdateGroup -> maybePrepareRebalance; ClassicGroup in 4.0): the
        episode starts at the leave. With the broker's log, its Preparing line gives the start."""
        if not self.has_coordinator and not view.instance:
            opens_a_round = self.round is None or self.round.generation_id is not None
            alone = not opens_a_round and self._alone_in_join_phase(view)
            self._member_round_signal(ts, reason)  # ends the last round: remaining_members are its
            if self.remaining_members is not None:
                self.remaining_members = [m for m in self.remaining_members if m != view.member_id]
                if opens_a_round and not self.remaining_members:
                    self.round.emptied_at = ts
            if alone:
                self.round.emptied_at = ts

    def _alone_in_join_phase(self, view: MemberView) -> bool:
        """Members' logs only: `view` leaves during a join phase in which no other member is known: the
        group had no member before it (its last generation ended Empty, or the input shows none) and no
        other member's log shows a JoinGroup since. The coordinator removes the member
        (GroupCoordinator.removeMemberAndUpdateGroup, PreparingRebalance; ClassicGroup in 4.0) and the
        join phase completes without members: the next generation is Empty (`_settle_emptied` decides,
        from the generation the next JoinGroup response names: a rejoin within group.initial.rebalance
        .delay.ms, InitialDelayedJoin, still joins the same join phase)."""
        if self.remaining_members is None and self.closed_generation is not None:
            return False  # the last generation's members are not known
        if self.remaining_members:
            return False
        leaving = _process_of(self._event) if self._event is not None else None
        return leaving is not None and all(p == leaving for p in self.round.joiners)

    def _settle_emptied(self, gen: int | None) -> None:
        """Members' logs only: the round the last member's LeaveGroup opened, settled by the next JoinGroup
        response (`gen`) or the end of the input (None). A new member whose first JoinGroup reached the
        coordinator before that LeaveGroup is a KIP-394 pending member the join phase waits for
        (GroupCoordinator.hasAllMembersJoined: `pendingMembers.isEmpty`; ClassicGroup.hasAllMembersJoined
        in 4.0), so the group never turned Empty and that member's generation is the next one. The
        members' own clocks cannot order the two requests at the coordinator: the generation it joins
        decides. One more than the last completed: it joined that join phase; more: the group emptied
        at the leave (`_emptied_by_last_leave`), also when the input ends first (inferred)."""
        rnd = self.round
        if rnd is not None and rnd.removal_unseen_at is not None:
            self._settle_unseen_removal(gen)
            return
        if rnd is None or rnd.emptied_at is None:
            return
        emptied_at, rnd.emptied_at = rnd.emptied_at, None
        # no generation seen before: the input starts with the group's first join (generation 1 next)
        # unless the response says otherwise
        closed = self.closed_generation
        if gen is None or gen != (closed if closed is not None else 0) + 1:
            self._emptied_by_last_leave(emptied_at, gen)
            if rnd.signal_after_leave is not None:  # the next round started at the first signal since
                self._begin_round(*rnd.signal_after_leave, "member")

    def _settle_unseen_removal(self, gen: int | None) -> None:
        """Members' logs only: the round of a removal no line showed (`_removed_member_rejoins`), settled
        by the next JoinGroup response (`gen`) or the end of the input (None). One more than the last
        completed generation: the new JoinGroup reached the removal's join phase, one rebalance. Else
        that join phase completed without it, as generation(s) no member logged (their rows wait for a
        line naming them, `_note_unlogged_generations`), and the new JoinGroup started a rebalance of its
        own; when no response comes, no line tells which (both `inferred`). The removal's end is in no
        line: taken at its start, the lost line."""
        rnd = self.round
        removed_at, rnd.removal_unseen_at = rnd.removal_unseen_at, None
        closed = self.closed_generation
        held, rnd.signal_after_leave = rnd.signal_after_leave, None
        if gen is not None and gen == (closed if closed is not None else 0) + 1:
            return
        rnd.ended_at = removed_at
        self._end_round()
        self._end_episode(removed_at)
        if held is not None:
            self._begin_round(*held, "member")
            self.round.source = "inferred"
            self.timeline.episode.source = "inferred"

    def _emptied_by_last_leave(self, ts: int, next_gen: int | None = None) -> None:
        """Members' logs only: the last member of the group (the leader's assignment listed every member
        of the last generation; the others' LeaveGroups were logged) left. The join phase its LeaveGroup
        starts has no member to wait for and completes at once: the generation is incremented and the
        group turns Empty (GroupCoordinator.onCompleteJoin -> GroupMetadata.initNextGeneration, "Group G
        with generation N is now empty"; ClassicGroup in 4.0). No member logs that generation: its row is
        inferred, and the rebalance ends at the leave. It is the one before `next_gen` (the generation the
        next JoinGroup response names: the first join into an Empty group completes the next generation),
        else the one after the last completed (none: the group's first). A `next_gen` more than one after
        that shows generations that formed in between with no member logging them (a joiner stalled before
        its JoinGroup response, its join phase completed without the others): they precede the Empty one,
        which the last LeaveGroup completed (`_note_unlogged_generations`; a late line may name them)."""
        rnd = self.round
        closed = self.closed_generation
        if next_gen is not None and (closed is None or next_gen - 1 > closed):
            rnd.generation_id = next_gen - 1
            if closed is not None and rnd.generation_id > closed + 1:
                self.unlogged_generations.append([closed + 1, rnd.generation_id - 1, rnd.episode_id])
        else:
            rnd.generation_id = closed + 1 if closed is not None else 1
        rnd.ended_empty = True
        rnd.members, rnd.member_count = [], 0
        rnd.ended_at = ts
        rnd.source = "inferred"
        self.timeline.group_empty(ts, source="inferred")  # the rows it closes, and their episode, too
        self.timeline.round_completed(rnd.generation_id, ts)
        self._set_assignment({}, rnd.generation_id, "inferred")
        self.follow_up_due = False
        self._end_round()
        self._end_episode(ts)

    # ================================================================================== rounds
    def _member_round_signal(self, ts: int, reason: str | None, new_member: bool = False) -> None:
        """Member-only logs: a rebalance signal opens a round unless one is in its join phase. In the join
        phase of a group the last LeaveGroup emptied, or (a `new_member`'s JoinGroup) of a removal no
        line showed, it waits to know whether it joined that phase (`_settle_emptied`)."""
        rnd = self.round
        if rnd is None or rnd.generation_id is not None:
            self._begin_round(ts, reason, "member")
        elif rnd.signal_after_leave is None and (
            rnd.emptied_at is not None or (new_member and rnd.removal_unseen_at is not None)
        ):
            rnd.signal_after_leave = (ts, reason)

    def _member_round(self, gen: int | None, started_at: int | None, seen_at: int) -> Round | None:
        """Member-only logs: the round of generation `gen`, opened if needed (started_at None: its start
        is not in the log). None for a late member of the round that already ended, also when a signal
        opened the next round meanwhile: a join phase that has not completed yet can only become a newer
        generation (the coordinator increments the generation id at each completed join,
        GroupMetadata.initNextGeneration / ClassicGroup.initNextGeneration), so a line of the closed one
        (a member's SyncGroup response logged after the leader's revoke-rejoin) is not its generation."""
        rnd = self.round
        if gen is not None and gen == self.closed_generation and (rnd is None or rnd.generation_id is None):
            return None
        if rnd is not None and rnd.generation_id in (None, gen):
            if rnd.generation_id is None:
                self._note_unlogged_generations(rnd, gen)
            rnd.generation_id = gen
            return rnd
        if rnd is None and gen is not None and gen == self.closed_generation:
            return None
        self._begin_round(started_at, None, "member", first_seen=seen_at)
        self._note_unlogged_generations(self.round, gen)
        self.round.generation_id = gen
        return self.round

    def _note_unlogged_generations(self, rnd: Round, gen: int | None) -> None:
        """Members' logs only: `rnd` completed as generation `gen`, more than one after the last generation
        a member logged (none logged: more than 1 for a rebalance whose start the input shows; the
        coordinator increments the generation at every completed join phase, GroupMetadata /
        ClassicGroup.initNextGeneration). The generations between formed with no member logging them (its
        members paused, crashed or left before their JoinGroup response): whether they were rounds of
        this rebalance, of the one before, or rebalances of their own, no member's log says, so the
        episode's rounds are a guess (inferred)."""
        closed = self.closed_generation
        if gen is None or self.has_coordinator:
            return
        if closed is not None:
            skipped = gen > closed + 1
        else:
            skipped = gen > 1 and rnd.episode_round == 1 and rnd.started_at is not None
        episode = self.timeline.episode
        if skipped and episode is not None and episode.episode_id == rnd.episode_id:
            episode.source = "inferred"
        first = closed + 1 if closed is not None else 1
        if gen > first:
            self.unlogged_generations.append([first, gen - 1, rnd.episode_id])

    def _unlogged_generation_seen(self, gen: int, e: Event) -> None:
        """Members' logs only: a late JoinGroup response (`_stale_join_response`) names generation `gen`,
        which formed with no member logging it at the time (`_note_unlogged_generations`): the coordinator
        completed that join phase (GroupCoordinator.onCompleteJoin / ClassicGroup.completeClassicGroupJoin
        answer every member with the new generation id), so the generation existed; its row is written
        now, `inferred`. Who was in it, its leader (a follower's line does not print it), when it formed
        and whether it stabilized are in no line: null. Its episode is the one of the round that skipped
        it (the generation formed before that round completed)."""
        n = next((i for i, (lo, hi, _) in enumerate(self.unlogged_generations) if lo <= gen <= hi), None)
        if n is None:
            return  # its row is out already (or it is older than anything this replay saw)
        first, last, episode_id = self.unlogged_generations[n]
        rest = [[first, gen - 1, episode_id], [gen + 1, last, episode_id]]
        self.unlogged_generations[n : n + 1] = [r for r in rest if r[0] <= r[1]]
        self._out["generations"].append(
            unlogged_generation_row(
                self.timeline,
                self.key,
                e.ts,
                gen,
                group_protocol="classic",
                protocol_type=self.group.protocol_type,
                protocol_name=e.protocol_name or self.protocol_name,
                rebalance_protocol=self.protocol,
                leader_member_id=e.leader_id,
                episode_id=episode_id,
                timing_source="member",
            )
        )

    def _round_for_generation(self, gen: int | None, ts: int) -> Round:
        """Coordinator side: the open round, unless it already has another generation (then a round
        whose start the log did not show)."""
        rnd = self.round
        if rnd is not None and rnd.generation_id in (None, gen):
            return rnd
        self._begin_round(None, None, "coordinator", first_seen=ts)
        return self.round

    def _begin_round(
        self,
        ts: int | None,
        reason: str | None,
        timing: str,
        first_seen: int | None = None,
        change_logged: bool = False,
    ) -> None:
        episode = self.timeline.episode
        caused = self.follow_up_due or bool(reason and "revoke" in reason.lower())
        interrupted = self.round is not None and not self.round.stable
        unknown_cause = self._rejoin_of_unknown_cause(reason, change_logged)
        # no reason at all after a cooperative round of unknown revocations: a new episode is a guess too
        guessed_new = (
            episode is not None and not unknown_cause and not change_logged and self._cause_not_logged(reason)
        )
        if episode is not None and not (caused or interrupted) and unknown_cause:
            caused = True  # taken for the follow-up round; the log cannot say: the episode is inferred
            episode.source = "inferred"
        if episode is not None and not (caused or interrupted) and self._connect_follow_up_unknown():
            # a Connect worker that revoked rejoins when it has stopped them, or once the KIP-415 delay
            # expires (IncrementalCooperativeAssignor, DistributedHerder.handleRebalanceCompleted): with
            # the revocations unknown, this round may be that follow-up, a removal joining it; both
            # episodes are a guess
            episode.source = "inferred"
            guessed_new = True
        if episode is None or not (caused or interrupted):
            # a new episode: what members synced before it applied before it (callbacks not logged)
            self._flush_all_pending()
        # A follow-up round of the same episode leaves a member's synced assignment pending: the member
        # applies it in its own thread after its SyncGroup response (ConsumerCoordinator.onJoinComplete /
        # WorkerCoordinator.onJoinComplete -> DistributedHerder's listener), whatever the coordinator does
        # meanwhile, so its callback lines logged after the broker prepares the next rebalance still give
        # the instants; without them it applies at its sync (`_flush_pending` at its next line).
        if self.round is not None:
            self._end_round(ts if ts is not None else first_seen)
        if episode is not None and (caused or interrupted):
            self.timeline.next_round()
            episode_round = episode.rounds
        else:
            self._end_episode()
            episode_id = self._episode_id(ts if ts is not None else first_seen, self.last_episode_id)
            self.previous_episode_id, self.last_episode_id = self.last_episode_id, episode_id
            episode = self.timeline.begin_episode(
                episode_id,
                ts,
                reason=reason,
                rebalance_protocol=self.protocol,
                timing_source=timing,
                seen_at=first_seen,
            )
            if guessed_new and not (caused or interrupted):
                episode.source = "inferred"
            episode_round = 1
        self.follow_up_due = False
        self.leader_assignment = None
        self.round = Round(ts, reason, timing, episode.episode_id, episode_round)
        if episode.reason is None:
            episode.reason = reason
        if self.protocol != "cooperative" and timing == "member":
            self._stop_unlogged_members(ts if ts is not None else first_seen, "inferred")  # member-only logs

    def _rejoin_of_unknown_cause(self, reason: str | None, change_logged: bool = False) -> bool:
        """Whether a round is an existing member's rejoin whose cause no line states, right after a
        cooperative round whose revocations are unknown (the episode is still open for it, see
        `_maybe_end_episode`). Such a rejoin is what follows a revoking round (KIP-429
        ConsumerCoordinator.onJoinComplete; KIP-415 DistributedHerder.handleRebalanceCompleted: a worker
        that stopped revoked connectors or tasks rejoins at once), so the round is taken as its follow-up.
        A 3.2+ consumer states the cause ("need to revoke partitions and re-join", else another client
        reason); a Connect worker never does (WorkerCoordinator.requestRejoin does not set
        AbstractCoordinator's rejoinReason, so its JoinGroup carries "": GroupCoordinator prints
        "client reason: " empty), nor does a 2.x-3.1 client ("Leader X re-joining group during Stable",
        no client reason) or one that sends none ("not provided").
        A broker of 0.9-2.0 prints no reason at all ("Preparing to restabilize group G with old generation
        N") and logs no JoinGroup: a rejoin and a new member look the same. Unless a logged removal explains
        the round, it is taken as the follow-up of a first round whose members may have owned partitions
        (a follow-up round reassigns what the first one revoked and revokes nothing itself,
        ConsumerCoordinator.onJoinComplete / CooperativeStickyAssignor): inferred either way.
        A consumer group's first round from Empty revoked nothing, whatever the reason: its members joined
        owning nothing (a consumer reset by UNKNOWN_MEMBER_ID or ILLEGAL_GENERATION drops its partitions
        first, ConsumerCoordinator.onJoinPrepare -> onPartitionsLost), so the rejoin after it follows no
        revocation (random:681, broker-2.x). A Connect worker keeps running its work through a reset."""
        if not self._cooperative_round_unknown():
            return False
        first_from_empty = self.round.episode_round == 1 and not self.round.owned_before
        if not reason:
            return not change_logged and self.round.episode_round == 1 and self.round.owned_before
        if first_from_empty and not self._connect_follow_up_unknown():
            return False  # a consumer group's first round from Empty revoked nothing
        named = co.members_named_in_reason(reason)
        if named is None or named[2]:  # not a member's rejoin (a new member, a removal, a timeout)
            return False
        _, _, client_reason = (reason or "").partition("; client reason:")
        return client_reason.strip() in ("", "not provided")

    def _cooperative_round_unknown(self) -> bool:
        """The last round is Stable, cooperative, and what it revoked is not known."""
        rnd = self.round
        return rnd is not None and rnd.stable and not rnd.assignment_known and self.protocol == "cooperative"

    def _connect_follow_up_unknown(self) -> bool:
        """A Connect group's last round is Stable and what it revoked is not known."""
        rnd = self.round
        connect = (
            rnd is not None and rnd.protocol_type == "connect"
        ) or self.group.protocol_type == "connect"
        return self._cooperative_round_unknown() and (
            connect or (self.protocol_name or self.settings.default_assignor) in ("sessioned", "compatible")
        )

    def _cause_not_logged(self, reason: str | None) -> bool:
        """A round with no reason logged (0.9-2.0) after a cooperative round of unknown revocations."""
        return not reason and self._cooperative_round_unknown()

    def _episode_id(self, anchor: int | None, previous: str | None) -> str:
        """`group@ISO-instant` of the episode's start (or first sight); `#n` when the previous episode
        started at the same millisecond."""
        base = f"{self.group_id}@{format_ts(anchor)}" if anchor is not None else f"{self.group_id}@?"
        if previous == base:
            return f"{base}#2"
        if previous and previous.startswith(base + "#"):
            return f"{base}#{int(previous.rpartition('#')[2]) + 1}"
        return base

    def _adopt_coordinator_start(self, rnd: Round, ts: int, reason: str | None) -> None:
        """A round opened by member signals before the broker's log began: the broker's Preparing
        gives its start instant and reason (coordinator timing wins once present)."""
        rnd.started_at, rnd.reason, rnd.timing_source = ts, reason, "coordinator"
        episode = self.timeline.episode
        if episode is None or rnd.episode_round != 1:
            return
        episode_id = self._episode_id(ts, self.previous_episode_id)
        episode.episode_id = rnd.episode_id = self.last_episode_id = episode_id
        episode.started_at, episode.reason, episode.timing_source = ts, reason, "coordinator"

    def _stabilize(self, ts: int, source: str) -> None:
        """The round's group turned Stable at `ts`: its assignment is known (observed/inferred) and
        members without member-side events apply it now (coordinator timing)."""
        rnd = self.round
        rnd.stable = True
        rnd.stabilized_at = ts
        gen = rnd.generation_id
        assignment = self.leader_assignment
        if assignment is None and self.has_coordinator:
            assignment = self._infer_assignment(rnd)
            source = "inferred" if assignment is not None else source
        if assignment is not None:
            rnd.source = source
            # an inference without the previous owners cannot tell what a cooperative round revoked
            rnd.assignment_known = source == "observed" or self.assignment_generation is not None
            if source == "inferred" and self._subscription_change_unseen(rnd):
                rnd.assignment_known = False
            if rnd.members is None:
                rnd.members = sorted(assignment)
            self._emit_assignment(assignment, gen, ts, source)
            self._apply_assignment(assignment, ts, gen, source)
            self._set_assignment(assignment, gen, source)
            self.timeline.owners_known()
        elif self.has_coordinator and not self._members_apply_own_syncs(rnd):
            # no line gives this generation's assignment and the assignor could not be rerun: who
            # consumes what is unknown from here, and so are the partition measures (null, not 0)
            self.timeline.owners_unknown()
        if source == "inferred" and self.timeline.episode is not None:
            self.timeline.episode.source = "inferred"
        if self.kip415_delay_inferred and None not in (rnd.leader_id, self.closed_leader):
            # a leader that did not compute the previous generation has no view of the previous
            # assignment (IncrementalCooperativeAssignor.performTaskAssignment clears it on a generation
            # mismatch): nothing is lost to it, nothing delayed
            self.kip415_delay_inferred = rnd.leader_id == self.closed_leader
        if self.kip415_delay_inferred and self.timeline.episode is not None:
            self.follow_up_due = True  # the workers rejoin when the delay expires (`_kip415_lost`)
            self.timeline.episode.source = "inferred"
        self.timeline.round_completed(gen, ts)

    def _subscription_change_unseen(self, rnd: Round) -> bool:
        """The round's reason says a member's subscription changed (3.2+ client reason, set by
        ConsumerCoordinator.rejoinNeededOrPending: "subscription has changed"), and no line gave that
        member's subscription: the assignor rerun (`_infer_assignment`) used the old one, so what the
        round revoked, and whether a KIP-429 follow-up round comes, is not known from it."""
        if "subscription has changed" not in (rnd.reason or ""):
            return False
        named = co.members_named_in_reason(rnd.reason)
        info = self.group.members.get(named[0]) if named is not None else None
        return info is None or info.subscription is None

    def _members_apply_own_syncs(self, rnd: Round) -> bool:
        """Whether every member of the round has a log of its own (its sync gives its partitions)."""
        members = rnd.members
        if members is None and self.group.membership_known:
            members = list(self.group.members)
        return members is not None and all(self._is_member_timed(m, self._instance_of(m)) for m in members)

    def _apply_assignment(
        self, assignment: dict[str, list[TopicPartition]], ts: int, gen, source: str
    ) -> None:
        """Coordinator timing for members without member-side events: stop owned - assigned and start
        assigned - owned at the stabilization instant. In member-only logs that instant is the first sync
        of the generation a logged member shows, not the coordinator's Stable nor the member's own
        SyncGroup response: their rows are estimates (`inferred`)."""
        if not self.has_coordinator:
            source = "inferred"
        for member in sorted(self._owners()):
            if self._is_member_timed(member):
                continue
            revoked = sorted(self.timeline.partitions_of(member) - set(assignment.get(member, ())))
            info = self.group.members.get(member)
            subscribed = set(info.subscription) if info and info.subscription is not None else None
            if self.protocol == "cooperative" and any(
                subscribed is None or tp.topic in subscribed for tp in revoked
            ):
                # KIP-429: the owner revokes and rejoins. Partitions of topics it unsubscribed were
                # revoked in onJoinPrepare already and cause no follow-up round.
                self.follow_up_due = True
            for tp in revoked:
                self._stop(tp, member, ts, "revoked", self._instance_of(member), source)
        for member in sorted(assignment):
            if self._is_member_timed(member):
                continue
            for tp in assignment[member]:
                self._start(tp, member, ts, self._instance_of(member), gen, source)

    def _end_round(self, ts: int | None = None) -> None:
        rnd = self.round
        if rnd is None:
            return
        self.round = None
        if rnd.ended_at is None:
            rnd.ended_at = (
                rnd.stabilized_at
                if rnd.stabilized_at is not None
                else (ts if ts is not None else self.last_ts)
            )
        if rnd.generation_id is None:
            return  # the join phase never completed: no generation (its time counts in the episode)
        self.closed_generation = rnd.generation_id
        self.closed_leader = None if rnd.ended_empty else rnd.leader_id
        connect = (rnd.protocol_type or self.group.protocol_type) == "connect"
        # a Connect leader logs no assignment line: the workers' own lines are the member list
        listed = rnd.members_listed or (connect and not self.has_coordinator)
        self.remaining_members = (
            list(rnd.members)
            if (listed or rnd.ended_empty) and rnd.members is not None and not rnd.stand_ins
            else None
        )
        ended = rnd.stabilized_at if rnd.stabilized_at is not None else rnd.ended_at
        rebalance_ms = (
            ended - rnd.started_at if rnd.started_at is not None and (rnd.stable or rnd.ended_empty) else None
        )
        date = utc_date(rnd.ended_at if rnd.ended_at is not None else rnd.started_at)
        self.timeline.day(date).generations += 1
        members = sorted(rnd.members) if rnd.members is not None else None
        stood_in = None
        if members is not None and set(members) & set(rnd.stand_ins):
            # an old id stands for a replaced instance's new one, which no line named (yet)
            stood_in, members = members, None
        if not self.has_coordinator and not rnd.members_listed and not rnd.ended_empty and not connect:
            # members' logs only, and no leader's assignment for it: a member whose log shows nothing of
            # the generation (stalled, crashed after its JoinGroup) may be in it; the list is not known.
            # (A Connect leader logs no assignment line: its workers' lines are all there is, unless a
            # worker's JoinGroup went unanswered in its log: `_silent_joiner_may_be_in`.)
            members = stood_in = None
            rnd.member_count = None
        elif (
            connect
            and not self.has_coordinator
            and not rnd.ended_empty
            and self._silent_joiner_may_be_in(rnd)
        ):
            members = stood_in = None
            rnd.member_count = None
        self._out["generations"].append(
            {
                **self.key,
                "event_date": date,
                "generation_id": rnd.generation_id,
                "group_protocol": "classic",
                "protocol_type": rnd.protocol_type or self.group.protocol_type,
                "protocol_name": rnd.protocol_name or self.protocol_name,
                "rebalance_protocol": self.protocol,
                "leader_member_id": None
                if rnd.ended_empty or rnd.leader_id in rnd.stand_ins
                else rnd.leader_id,
                "member_count": rnd.member_count if rnd.member_count is not None else _len(members),
                "static_member_count": rnd.static_member_count,
                "members": members,
                "rebalance_started_at": rnd.started_at,
                "join_completed_at": rnd.join_completed_at,
                "stabilized_at": rnd.stabilized_at if rnd.stable else None,
                "ended_empty": rnd.ended_empty,
                "rebalance_reason": rnd.reason,
                "rebalance_ms": rebalance_ms,
                "episode_id": rnd.episode_id,
                "episode_round": rnd.episode_round,
                "source": rnd.source,
                "timing_source": rnd.timing_source,
            }
        )
        if rnd.stand_ins and (stood_in is not None or rnd.leader_id in rnd.stand_ins):
            self._stand_in_rows.append(
                [self._out["generations"][-1], stood_in, rnd.leader_id, list(rnd.stand_ins)]
            )

    def _silent_joiner_may_be_in(self, rnd: Round) -> bool:
        """Connect workers' logs only (the leader logs no assignment, so the workers' own lines are the
        member list): whether a worker whose log shows a JoinGroup and nothing answering it (it died or
        stalled after sending it) may be in generation `rnd`. A JoinGroup that reached the coordinator
        before the join phase completed is in the generation it completes (GroupCoordinator.onCompleteJoin
        / ClassicGroup: every member that joined): one sent before another the phase still awaited (a
        member of the generation sent it later), or more than twice the worker's own round trip
        (KIP-394's two JoinGroups) before the first response naming the generation (the coordinator answers every
        member at once on completion). One sent later may have missed it (its response, if logged,
        names the next generation). A dynamic member that does not rejoin is in that generation only: the
        next join phase's completion removes it (GroupCoordinator.onCompleteJoin), if its session did not
        expire first. A static one stays until its session expires (heartbeat expiration is scheduled at
        the join's completion, GroupCoordinator.completeAndScheduleNextHeartbeatExpiration):
        session.timeout.ms from the first generation it may be in (its config dump or
        `ReplaySettings.session_timeout_ms`; unknown: every later generation)."""
        formed = rnd.join_completed_at if rnd.join_completed_at is not None else rnd.stabilized_at
        if formed is None:
            return False
        views_may_be_in = False
        for view in self.views.values():
            if view.join_sent_at is None or view.member_id in (rnd.members or ()):
                continue
            if view.unanswered_since is not None and formed > view.unanswered_since and not view.instance:
                # counted in an earlier generation and never rejoined: this join phase's completion removed
                # it (GroupCoordinator.onCompleteJoin: dynamic members not rejoined), if its session did
                # not expire first; a static member stays until its session expires
                continue
            timeout = self._configured_session_timeout(view.member_id) or self.settings.session_timeout_ms
            if self._unanswered_join_may_be_in(view, rnd, formed, timeout):
                views_may_be_in = True
        # every silent joiner's state advances with each generation, whatever the views say
        return self._silent_joiners_may_be_in(rnd, formed) or views_may_be_in

    def _silent_joiners_may_be_in(self, rnd: Round, formed: int) -> bool:
        """`_silent_joiner_may_be_in` for the members no line named, or only their LeaveGroup
        (`SilentJoiner`). Such a member never rejoins: the join phase after the one that counted it removes
        it (GroupCoordinator.onCompleteJoin removes the dynamic members not rejoined; ClassicGroup in 4.0),
        if its session did not expire first. So it is in one generation at most: the first formed after its
        JoinGroup arrived; a JoinGroup sent within that bound of the formation may have made this one or
        the next. A LeaveGroup reaches the coordinator within a round trip of its line and removes the
        member (GroupCoordinator.removeMemberAndUpdateGroup): a generation formed later does not count it."""
        may_be_in, still_open = False, []
        for joiner in self.silent_joiners:
            if joiner.left_at is not None and formed >= joiner.left_at + (joiner.round_trip_ms or 0):
                continue  # its LeaveGroup arrived first
            if joiner.join_sent_at >= formed:
                still_open.append(joiner)
                continue
            may_be_in = True
            clearly_before = self._unanswered_join_may_be_in(joiner, rnd, formed, timeout=None)
            if not clearly_before and joiner.unanswered_since is None:
                joiner.unanswered_since = formed
                still_open.append(joiner)  # it may be in the next generation instead
        self.silent_joiners = still_open
        return may_be_in

    @staticmethod
    def _unanswered_join_may_be_in(
        joiner: MemberView | SilentJoiner, rnd: Round, formed: int, timeout: int | None
    ) -> bool:
        """`_silent_joiner_may_be_in` for one JoinGroup no line answered (`joiner.join_sent_at`)."""
        if joiner.unanswered_since is None:
            awaited, rtt = rnd.latest_member_join, joiner.round_trip_ms
            before_awaited = awaited is not None and joiner.join_sent_at < awaited
            # its JoinGroup's way there and the response's way back, each bounded by a round trip
            before_completion = rtt is not None and joiner.join_sent_at < formed - 2 * rtt
            if not (before_awaited or before_completion):
                return False
            joiner.unanswered_since = formed
        return timeout is None or formed <= joiner.unanswered_since + timeout

    def _maybe_end_episode(self) -> None:
        """An episode ends once its last round is Stable, every member with its own log applied that
        round's assignment, and no follow-up round is due (docs/metrics.md, Episode)."""
        rnd = self.round
        ep = self.timeline.episode
        if rnd is None or ep is None or not rnd.stable or self.follow_up_due:
            return
        if any(v.signal_ts is not None or v.pending is not None for v in self.views.values()):
            return  # a member with its own log is still rejoining or applying its assignment
        if self.protocol == "cooperative" and not rnd.assignment_known:
            return  # revocations unknown: the next round's reason tells whether it follows this one
        self._end_round()
        self._end_episode()

    def _end_episode(self, ts: int | None = None) -> None:
        self._note_protocol()
        self.timeline.end_episode(ts)

    def _note_protocol(self) -> None:
        """The open episode's protocol: the one detected by its end (it may be named after it began)."""
        ep = self.timeline.episode
        if ep is not None:
            ep.rebalance_protocol = self.protocol or ep.rebalance_protocol

    # ============================================================================ assignments
    def _synced_partitions(self, e: Event, member: str) -> tuple[list[TopicPartition] | None, str]:
        """The member's new assignment: its sync's partitions, else the leader's for it (or None)."""
        if e.partitions is not None:
            synced = sorted(e.partitions)
            known = (self.leader_assignment or {}).get(member)
            if known is not None and sorted(known) != synced:
                self._anomaly(
                    ASSIGNMENT_MISMATCH, e, f"leader assigned {len(known)}, member synced {len(synced)}"
                )
            return synced, "observed"
        if self.leader_assignment is not None and member in self.leader_assignment:
            return sorted(self.leader_assignment[member]), self.assignment_source
        return None, "observed"

    def _emit_assignment(
        self, assignment: dict[str, list[TopicPartition]], gen, ts: int, source: str
    ) -> None:
        if gen is None:
            return
        if self.emitted_generation != gen:
            self.emitted_generation, self.emitted = gen, []
        date = utc_date(ts)
        stand_ins = set(self.unnamed_replacements.values())
        rows = self._out["assignments"]
        for member in sorted(assignment):
            if member in self.emitted or member in stand_ins:  # rows once a line names the new id
                continue
            self.emitted.append(member)
            # the columns shared by the member's rows, made once per member rather than per partition
            of_member = {
                **self.key,
                "event_date": date,
                "generation_id": gen,
                "member_id": member,
                "group_instance_id": self._instance_of(member),
            }
            for tp in sorted(assignment[member]):
                rows.append({**of_member, "topic": tp.topic, "partition": tp.partition, "source": source})

    def _set_assignment(self, assignment: dict[str, list[TopicPartition]], gen, source: str) -> None:
        self.assignment = {m: list(tps) for m, tps in assignment.items()}
        self.assignment_generation = gen
        self.assignment_source = source

    def _check_assignment(self, assignment, e: Event) -> None:
        seen: dict[TopicPartition, str] = {}
        for member in sorted(assignment):
            for tp in assignment[member]:
                if tp in seen and seen[tp] != member:
                    self._anomaly(ASSIGNMENT_CONFLICT, e, f"{tp} assigned to {seen[tp]} and {member}")
                seen[tp] = member

    def _infer_assignment(self, rnd: Round) -> dict[str, list[TopicPartition]] | None:
        """Broker-only logs: rerun the group's assignor on the known membership and topics."""
        members = rnd.members
        if members is None and self.group.membership_known:
            members = list(self.group.members)
        protocol = (
            rnd.protocol_name or self.protocol_name or self.offered_protocol or self._configured_assignor()
        )
        if not members or not self.topics or protocol not in INFERABLE_ASSIGNORS:
            return None
        if rnd.member_count is not None and rnd.member_count != len(members):
            return None  # the membership is not fully known
        from rebalance_core.assignors import GroupSpec, MemberSubscription, get_assignor

        subs = []
        for m in sorted(members):
            info = self.group.members.get(m)
            topics = tuple(info.subscription) if info and info.subscription else tuple(sorted(self.topics))
            subs.append(
                MemberSubscription(
                    member_id=m,
                    subscription=topics,
                    group_instance_id=info.group_instance_id if info else None,
                    owned=tuple(sorted(self.assignment.get(m, ()))),
                    generation=self.assignment_generation if m in self.assignment else None,
                )
            )
        try:
            spec = GroupSpec(
                topics=dict(self.topics), members=tuple(subs), topic_ids=dict(self.settings.topic_ids)
            )
            result = get_assignor(protocol).assign(spec)
        except Exception as exc:  # the assignor is optional input: a failure is reported, not raised
            self._anomaly(INFERENCE_FAILED, None, f"{protocol}: {type(exc).__name__}: {exc}")
            return None
        rnd.protocol_name = rnd.protocol_name or protocol
        return {m: sorted(result.get(m, [])) for m in sorted(members)}

    # ================================================================================ helpers
    def _start(self, tp, member, ts, instance, gen, source) -> None:
        holder = self.timeline.owner_of(tp)
        problem = self.timeline.start(tp, member, ts, instance=instance, generation_id=gen, source=source)
        ep = self.timeline.episode
        if ep is not None and member in self.member_timed:  # self._timing_used(member), inline
            ep.timing_source = "member"
        if problem == DOUBLE_OWNERSHIP and self._left_behind(holder, gen):
            problem = None  # the holder loses it here (cause lost), as Kafka's protocol allows
        if problem:
            self._anomaly(problem, None, f"{tp} start by {member} at {ts}")

    def _left_behind(self, holder: str | None, gen: int | None) -> bool:
        """Whether `holder`'s own log last showed it in a generation older than `gen`: it never joined
        the round that gave its partition away. A static member that does not rejoin (GC pause, stuck
        poll) stays in the group (KIP-345: GroupMetadataManager.completeClassicGroupJoin removes only
        dynamic members that did not rejoin), the leader's assignment moves its partitions without it
        revoking them, and it learns at its next heartbeat or poll (ILLEGAL_GENERATION, poll timeout)
        and calls onPartitionsLost (ConsumerRebalanceListener: lost partitions "may already be owned
        by some other members in the group"). The new owner's start is then no double_ownership."""
        view = self.views.get(holder) if holder is not None else None
        return view is not None and None not in (view.generation_id, gen) and view.generation_id < gen

    def _stop(self, tp, member, ts, cause, instance=None, source="observed") -> None:
        problem = self.timeline.stop(tp, member, ts, cause, instance=instance, source=source)
        ep = self.timeline.episode
        if ep is not None and member in self.member_timed:  # self._timing_used(member), inline
            ep.timing_source = "member"
        if problem:
            self._anomaly(problem, None, f"{tp} stop by {member} at {ts}")

    def _stop_member(self, member: str, ts: int, cause: str, source: str = "observed") -> None:
        view = self.views.get(member)
        if view is not None:
            self._flush_pending(view)
        owned = self.timeline.partitions_of(member)
        instance = self._instance_of(member) if owned else None
        for tp in sorted(owned):
            self._stop(tp, member, ts, cause, instance, source)

    def _stop_unlogged_members(self, ts: int, source: str = "observed") -> None:
        """Eager, coordinator timing: members without a log of their own stop when the round starts (in
        member-only logs, at the first logged signal: an estimate, their own signal is in no line)."""
        for member in sorted(self._owners()):
            if not self._is_member_timed(member):
                self._stop_member(member, ts, "revoked", source)

    def _timing_used(self, member: str) -> None:
        ep = self.timeline.episode
        if ep is not None and member in self.member_timed:  # _is_member_timed(member)
            ep.timing_source = "member"

    def _flush_pending(self, view: MemberView) -> None:
        """The member's callbacks were not logged: its synced assignment applied at the sync."""
        pending = view.pending
        if pending is None:
            return
        view.pending = None
        for tp in pending.to_stop:
            self._stop(tp, view.member_id, pending.sync_ts, "revoked", view.instance)
        for tp in pending.to_start:
            self._start(
                tp, view.member_id, pending.sync_ts, view.instance, pending.generation_id, pending.source
            )

    def _flush_all_pending(self) -> None:
        for member in sorted(self.views):
            self._flush_pending(self.views[member])

    def _owners(self) -> set[str]:
        return set(self.timeline.consuming().values())

    def _instance_of(self, member: str) -> str | None:
        info = self.group.members.get(member)
        if info is not None and info.group_instance_id:
            return info.group_instance_id
        view = self.views.get(member)
        return view.instance if view else None

    def _is_member_timed(self, member: str, instance: str | None = None) -> bool:
        return member in self.member_timed or bool(instance and instance in self.member_timed)

    @property
    def protocol(self) -> str | None:
        """The group's rebalance protocol, the one notion every rule consults: eager | cooperative as the
        log shows it (the selected protocol, else the members' first offered one, else a member revoking
        after its sync), else the members' config dumps', else the configured `default_assignor`'s; None
        when none says. Member timing stops everything at the first rebalance signal only when it is eager;
        coordinator timing treats None as eager (the classic consumer's default assignor, range, is)."""
        return (
            self.rebalance_protocol
            or client_config.rebalance_protocol(self.client_configs)
            or rebalance_protocol_of(self._configured_assignor())
        )

    def _configured_assignor(self) -> str | None:
        """The assignor the members' config dumps make the coordinator select, else ReplaySettings'."""
        return client_config.selected_protocol(self.client_configs) or self.settings.default_assignor

    def _configured_session_timeout(self, member: str) -> int | None:
        """The member's own session.timeout.ms, from its config dump (classic: each member's own)."""
        info = self.group.members.get(member)
        return client_config.session_timeout_ms(
            self.client_configs, member, info.client_id if info else None, self._instance_of(member)
        )

    def _set_protocol(self, name: str | None) -> None:
        if not name:
            return
        self.protocol_name = name
        if self.round is not None:
            self.round.protocol_name = name
        detected = rebalance_protocol_of(name)
        if detected:
            self.rebalance_protocol = detected

    def _learn_topics(self, tps: Iterable[TopicPartition]) -> None:
        topics = self.topics
        for topic, partition in tps:
            if partition >= topics.get(topic, 0):
                topics[topic] = partition + 1

    def _collect_model_anomalies(self) -> None:
        if not self.group.anomalies:
            return
        for a in self.group.anomalies:
            self._anomaly_row(a.rule, a.ts, a.event_id, a.event_type, a.group_state, a.detail)
        self.group.anomalies.clear()

    def _anomaly(self, rule: str, e: Event | None, detail: str, ts: int | None = None) -> None:
        """Record an anomaly about `e` (default: the event being replayed)."""
        e = e or self._event
        ts = e.ts if e is not None else (ts if ts is not None else self.last_ts)
        state = self.group.state.value if self.group.state else None
        self._anomaly_row(rule, ts, e.event_id if e else None, e.event_type if e else None, state, detail)

    def _anomaly_row(self, rule, ts, event_id, event_type, group_state, detail) -> None:
        self._out["anomalies"].append(
            anomaly_row(
                self.timeline, self.key, rule, ts, event_id, event_type, group_state, detail, self.last_ts
            )
        )

    # =============================================================================== snapshot
    def _restore(self, state: dict) -> None:
        if state.get("state_version") != STATE_VERSION or state.get("group_protocol") != GROUP_PROTOCOL_KEY:
            raise ValueError(
                f"not a classic replay state (version {state.get('state_version')!r}, "
                f"group_protocol {state.get('group_protocol')!r})"
            )
        self.group = co.ClassicGroup.from_snapshot(state["group"])
        self.timeline = OwnershipTimeline(
            self.cluster, self.group_id, self.settings.scenario, state=state["timeline"]
        )
        self._out = _decode(state["out"])
        for name in _PLAIN_STATE:
            setattr(self, name, _decode(state[name]) if name in state else _STATE_DEFAULTS[name]())
        for topic, count in self.settings.topics.items():
            self.topics.setdefault(topic, count)


# Dispatch tables, event_type -> handler (`_c_<type>` for the coordinator's lines, `_m_<type>` for a
# member's): one dict lookup per event instead of a name built for getattr.
_COORDINATOR_HANDLERS = {n[3:]: f for n, f in vars(GroupReplayer).items() if n.startswith("_c_")}
_MEMBER_HANDLERS = {n[3:]: f for n, f in vars(GroupReplayer).items() if n.startswith("_m_")}
_COORDINATOR = Side.COORDINATOR.value
_CLIENT_CONFIG = EventType.CLIENT_CONFIG.value
# event types compared per event (an enum's .value is a property look-up each time)
_JOIN_SENT = EventType.JOIN_SENT.value
_LEAVE_SENT = EventType.LEAVE_SENT.value
_JOIN_REQUESTED = EventType.JOIN_REQUESTED.value
_REBALANCE_PREPARED = EventType.REBALANCE_PREPARED.value

_PLAIN_STATE = (
    "topics",
    "protocol_name",
    "offered_protocol",
    "rebalance_protocol",
    "has_coordinator",
    "last_ts",
    "round",
    "follow_up_due",
    "last_episode_id",
    "previous_episode_id",
    "closed_generation",
    "assignment",
    "assignment_generation",
    "assignment_source",
    "leader_assignment",
    "emitted_generation",
    "emitted",
    "views",
    "member_timed",
    "aliases",
    "joining_clients",
    "claimed_new",
    "fresh_join_sent",
    "unnamed_joins",
    "silent_joiners",
    "unnamed_replacements",
    "stable_replacements",
    "poll_timed_out",
    "kip415_delay_inferred",
    "closed_leader",
    "remaining_members",
    "fresh_join",
    "client_configs",
    "unlogged_generations",
)
_STATE_DEFAULTS = {
    "unnamed_replacements": dict,
    "stable_replacements": dict,
    "fresh_join_sent": dict,
    "unnamed_joins": dict,
    "silent_joiners": list,
    "poll_timed_out": dict,
    "kip415_delay_inferred": bool,
    "closed_leader": lambda: None,
    "remaining_members": lambda: None,
    "fresh_join": lambda: None,
    "client_configs": dict,
    "claimed_new": set,
    "unlogged_generations": list,
}  # fields added after STATE_VERSION 1 states were written


_CONNECT_TASK = re.compile(r"^(.+)-(\d+)$")


def _process_of(e: Event) -> str:
    """The consumer process whose log has `e`: its file (or source) and client id."""
    return f"{e.source or e.file or ''}|{e.client_id or ''}"


def _alias(e: Event) -> str:
    """The log a member-side event comes from: source (or file), client id and group.instance.id."""
    return f"{e.source or e.file or ''}|{e.client_id or ''}|{e.group_instance_id or ''}"


def _connect_tasks(listed: str | None) -> set[TopicPartition]:
    """The tasks of a Connect assignment attribute ("conn-0, conn-1, other-conn"), as the replay's
    partitions (connector, task number); connector names (no task number) are left out."""
    tasks = set()
    for item in (listed or "").split(","):
        match = _CONNECT_TASK.match(item.strip())
        if match:
            tasks.add(TopicPartition(match.group(1), int(match.group(2))))
    return tasks


def _existing_members_rejoin(reason: str | None) -> bool:
    """Whether a rebalance reason is an existing member's rejoin ("Leader X re-joining group during
    Stable", "Updating metadata for member X ...")."""
    named = co.members_named_in_reason(reason)
    return named is not None and not named[2]


def _len(items) -> int | None:
    return len(items) if items is not None else None


# ----------------------------------------------------------------------------- JSON state codec
def _encode(value: Any) -> Any:
    """JSON form of the replayer's state values (tagged where JSON has no type of its own)."""
    if isinstance(value, TopicPartition):
        return {"tp": [value.topic, value.partition]}
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {
            "dc": type(value).__name__,
            "f": {f.name: _encode(getattr(value, f.name)) for f in dataclasses.fields(value)},
        }
    if isinstance(value, dt.date):
        return {"date": value.isoformat()}
    if isinstance(value, set):
        return {"set": sorted(_encode(v) for v in value)}
    if isinstance(value, dict):
        return {"map": [[_encode(k), _encode(v)] for k, v in value.items()]}
    if isinstance(value, (list, tuple)):
        return [_encode(v) for v in value]
    return value


def _decode(value: Any) -> Any:
    if isinstance(value, list):
        return [_decode(v) for v in value]
    if not isinstance(value, dict):
        return value
    if "tp" in value:
        return TopicPartition(*value["tp"])
    if "dc" in value:
        return _STATE_CLASSES[value["dc"]](**{k: _decode(v) for k, v in value["f"].items()})
    if "date" in value:
        return dt.date.fromisoformat(value["date"])
    if "set" in value:
        return {_decode(v) for v in value["set"]}
    return {_decode(k): _decode(v) for k, v in value["map"]}


# ------------------------------------------------------------------------------------ many groups
def new_replayer(
    cluster: str,
    group_id: str,
    settings: ReplaySettings | None = None,
    state: dict | None = None,
    events: Iterable[Event] = (),
):
    """The replayer for a group: the KIP-848 `ConsumerGroupReplayer` when its state says so or any of
    `events` (the group's events, or a first batch) is one only a consumer-protocol group produces;
    else the classic `GroupReplayer`. Both have the same interface."""
    if state is not None:
        consumer = state.get("group_protocol") == "consumer"
    else:
        consumer = any(is_consumer_protocol_event(e) for e in events)
    cls = ConsumerGroupReplayer if consumer else GroupReplayer
    return cls(cluster, group_id, settings, state=state)


def events_by_group(events: Iterable[Event]) -> dict[tuple[str, str], list[Event]]:
    """(cluster, group_id) -> the group's events sorted by `event_order_key`, in key order. An offsets
    partition's hand-over (group_id `__consumer_offsets-P`) names no group and is left out: the run's
    coordinator moves read it (coordinator_moves.across_groups)."""
    by_group: dict[tuple[str, str], list[Event]] = {}
    for e in events:
        if e.event_type not in BROKER_WIDE_EVENT_TYPES:
            by_group.setdefault((e.cluster, e.group_id), []).append(e)
    return {key: sorted(by_group[key], key=event_order_key) for key in sorted(by_group)}


def replay(
    events: Iterable[Event],
    settings: ReplaySettings | None = None,
    states: dict[tuple[str, str], dict] | None = None,
) -> dict[str, list[dict]]:
    """Replay the events of any number of groups: grouped by (cluster, group_id), each sorted by
    `event_order_key`, one replayer each (`new_replayer`; resumed from `states` where given)."""
    out: dict[str, list[dict]] = {name: [] for name in REPLAY_TABLES}
    for key, group_events in events_by_group(events).items():
        replayer = new_replayer(key[0], key[1], settings, (states or {}).get(key), group_events)
        replayer.feed(group_events)
        for name, rows in replayer.finish().items():
            out[name].extend(rows)
    return out
