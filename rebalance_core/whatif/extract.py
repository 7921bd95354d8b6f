"""Extraction: a group's events -> its membership timeline, actual settings and latency model
(see the package docstring for the table of evidence -> timeline action)."""

from __future__ import annotations

import dataclasses
import re
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from rebalance_core.classic.connect import CONNECT_PROTOCOL_TYPE, CONNECT_PROTOCOLS, REBALANCE_STARTED
from rebalance_core.classic.coordinator import members_named_in_reason
from rebalance_core.consumer import is_consumer_protocol_event
from rebalance_core.events import Event, format_ts, is_revoke_rejoin
from rebalance_core.kafka_logs.patterns import PATTERNS
from rebalance_core.latency import LatencyFit, LatencyModel
from rebalance_core.replay import ReplaySettings, rebalance_protocol_of
from rebalance_core.timeline import (
    Action,
    Crash,
    EnforceRebalance,
    Heartbeat,
    Join,
    Leave,
    PartitionCount,
    Pause,
    Restart,
    Stall,
    Subscribe,
    Timeline,
)
from rebalance_core.whatif.compare import MODEL_CHECK_COUNTS, MODEL_CHECK_TIMES
from rebalance_core.whatif.config import (
    CLIENT_ASSIGNORS,
    DEFAULT_HEARTBEAT_INTERVAL_MS,
    DEFAULT_KIP848_HEARTBEAT_INTERVAL_MS,
    WARMUP_MARGIN_MS,
    ExtractionOptions,
    WhatIfError,
)
from schemas.events import EventType, RemovalReason, Side


# ------------------------------------------------------------------------------ actual settings
@dataclass(frozen=True)
class ActualSettings:
    """The group's settings as its events show them (`observed` names those read from events)."""

    group_protocol: str  # classic | consumer
    assignor: str
    protocol: str  # eager | cooperative | consumer
    session_timeout_ms: int
    max_poll_interval_ms: int
    heartbeat_interval_ms: int
    scheduled_rebalance_max_delay_ms: int
    latency: LatencyModel
    observed: tuple[str, ...] = ()
    # the classic protocol type the events show (consumer | connect | ...); None: no event says. KIP-415
    # is a Kafka Connect feature (IncrementalCooperativeAssignor), offered only where this is connect
    protocol_type: str | None = None
    # the members' Kafka client release as far as their log wording bounds it (the newest release every
    # logged member's wording allows, e.g. "2.5"); None: not bounded below a release whose assignors
    # differ from today's (rebalance_core.assignors.get_assignor)
    client_version: str | None = None


@dataclass(frozen=True)
class ExtractedGroup:
    """One group's membership timeline and settings, extracted from its events."""

    timeline: Timeline  # instance ids as observed (static members only)
    actual: ActualSettings
    observed_from: int  # the input's first event: scenario events before it are not measured
    has_coordinator_log: bool
    member_logged: frozenset[str]  # processes whose own log is in the input
    notes: tuple[str, ...] = ()  # what extraction had to assume
    # why the input's view cannot support a model check (None: it can): the as-actual replay would
    # compare a timeline with gaps the view cannot fill against what happened
    not_comparable: str | None = None
    # measure -> why the actual replay's value of it cannot check the model (a bound, or a rebalance whose
    # cause is in no line): the model check leaves those out and says so
    incomparable: tuple[tuple[str, str], ...] = ()


# ----------------------------------------------------------------------------------- extraction
# Kinds of evidence of a member's heartbeat instant (converted by heartbeat_instants at finish):
HEARTBEAT_ANSWERED = "answered"  # its own log: the heartbeat's answer (REBALANCE_IN_PROGRESS), exact
JOIN_COMPLETED = "join_completed"  # the coordinator completed a join phase it had to rejoin: at the latest
JOIN_RESPONDED = "join_responded"  # member logs only: the first JoinGroup response of that phase
KIP848_ARRIVED = "kip848_arrived"  # KIP-848 coordinator: its heartbeat got a new member epoch
KIP848_ANSWERED = "kip848_answered"  # KIP-848 client: the heartbeat's answer started a reconciliation

# a member's own log: it learned of a rebalance it did not start (AbstractCoordinator heartbeat thread,
# 2.x "Attempt to heartbeat failed since group is rebalancing" is heartbeat_rebalancing; an offset commit
# refused with REBALANCE_IN_PROGRESS: ConsumerCoordinator "offset commit failed since group is already
# rebalancing")
_NOTICED_REBALANCE = re.compile(r"already rebalancing|group is rebalancing", re.IGNORECASE)
_SAME_HEARTBEAT_MS = 50  # two instants of evidence this close are one heartbeat
# "group instanceid Some(i)" in 2.3/2.4, "group instance id Some(i)" later, "... id None" for dynamic ones
_ADDED_MEMBER = re.compile(r"Adding new member (\S+) with group instance ?id (?:Some\()?([^;)\s]+)")
# AbstractCoordinator's rejoin after MEMBER_ID_REQUIRED: 2.x "... needs to have a valid member id before
# actually entering a consumer group", 3.x "need to re-join with the given member-id"
_MEMBER_ID_REQUIRED = re.compile(r"valid member id before|re-join with the given member-id", re.IGNORECASE)
# KafkaConsumer.DEFAULT_REASON of enforceRebalance() (3.2+), as the client and the coordinator log it
_ENFORCED = re.compile(r"rebalance enforced by user", re.IGNORECASE)
_LEADER_REJOIN_IN_STABLE = re.compile(r"\bleader \S+ re-joining group during Stable", re.IGNORECASE)
_LEAVE_REASON = re.compile(r"removing member (\S+) on LeaveGroup", re.IGNORECASE)  # GroupCoordinator reason
_PREPARED_KEPT = 10_000  # recent rebalance starts kept to date a static member's crash
_GENERATIONS_KEPT = 64  # recent full assignments' member lists kept to find joins and departures
# coordinator lines stating the generation's member count ("Stabilized group G generation N with M
# members", 2.8+; "The group has M members", 3.0+): the members the timeline must hold then
_COUNTED_AT = frozenset({EventType.JOIN_COMPLETED.value, EventType.ASSIGNMENT_RECEIVED.value})
# How an incarnation (one member id of one process) ended.
LEFT, EXPIRED, POLL, FAILED, REPLACED, RESET = "left", "expired", "poll", "failed", "replaced", "reset"


@dataclass
class _Incarnation:
    member_id: str
    first_seen: int
    hint: str  # process identity: instance id, client id, source or member id
    instance_id: str | None = None
    start: int | None = None  # the process joined at (None: before the input)
    start_exact: bool = False  # from its own log (else coordinator instant, latency-corrected later)
    # the coordinator instant `start` is its second JoinGroup's (KIP-394: a dynamic member's first one,
    # without member id, is answered MEMBER_ID_REQUIRED; finish() takes that round trip off too)
    start_after_member_id_required: bool = False
    # its JoinGroup started a rebalance that other members' logs show they noticed at `start`: it joined
    # before (finish() places it so that the rebalance began before the first of them noticed)
    joined_before_notice: bool = False
    subscription: tuple[str, ...] | None = None
    changes: list[tuple[int, bool, tuple[str, ...]]] = field(default_factory=list)  # (ts, exact, topics)
    end: int | None = None
    end_kind: str | None = None
    end_exact: bool = True  # False: a LeaveGroup seen by the coordinator (latency-corrected later)
    removed_at: int | None = None
    reset_by_join: int | None = None  # the JoinGroup without member id (its own log) that ended it
    alive_after_end: bool = False
    revived_at: int | None = None  # its first own event after the group dropped it (end of a pause)
    # KIP-848: that event is its FENCED transition, logged on the answer to the heartbeat it sent on waking
    revived_on_answer: bool = False
    lost_at: int | None = None  # it logged partitions_lost (its membership was reset while it ran)
    logged: bool = False  # its own log is in the input
    client_key: str | None = None  # its member-side events' sender (see _client_key)
    poll_timeout_at: int | None = None  # its own log: max.poll.interval.ms expired here
    removal_reason: str | None = None
    # its application's KafkaConsumer.enforceRebalance() calls: (ts, exact: its own log, else the
    # coordinator's instant of its JoinGroup)
    enforced: list[tuple[int, bool]] = field(default_factory=list)
    # its JoinGroups as the leader of a Stable group that started a round for a cause in no line: (the
    # round's start, the previous round's end or None, the round's end)
    leader_rejoins: list[tuple[int, int | None, int]] = field(default_factory=list)
    # the start of the join phase whose rebalance timeout removed it (it kept its session, never rejoined)
    missed_join_phase_at: int | None = None
    last_member_event: str | None = None
    last_member_ts: int | None = None
    successor: str | None = None  # member id that replaced it (static replacement, KIP-345)
    join_reason: str | None = None  # the client reason of its first JoinGroup
    owns: bool | None = None  # its latest assignment had partitions (None: no assignment seen)
    last_join_at: int | None = None  # its latest JoinGroup at the coordinator
    # evidence of its heartbeat instants (see _Round, _heartbeat_instants): (instant, kind of evidence,
    # the instant the rebalance it noticed started, or None)
    heartbeats: list[tuple[int, str, int | None]] = field(default_factory=list)
    noticed: bool = False  # its own log showed a rebalance signal since its last sync
    joined_empty_group: bool = False  # `start` is the first join phase's end: the initial delay before


@dataclass
class _Round:
    """A join phase the group's members had to notice (a rebalance round), from its start until it
    completes: who was in the group, who caused it (named by the coordinator's reason), who showed in its
    own log when it noticed. A member learns of a rebalance at its next heartbeat (AbstractCoordinator:
    the heartbeat thread gets REBALANCE_IN_PROGRESS), at an instant its own drifting heartbeat timer
    decides; the join phase ends when the last member has rejoined (GroupCoordinator.tryCompleteJoin)."""

    started_at: int
    members: frozenset[str]  # member ids in the group when it started
    causes: set[str] = field(default_factory=set)  # member ids that rejoined of their own accord
    # the leader whose JoinGroup in Stable started it for a cause no line gives ("Leader X re-joining group
    # during Stable" without an enforced or revoking client reason)
    leader_rejoin: str | None = None


class TimelineExtractor:
    """Feed one group's events (in `event_order_key` order, any number of `feed` calls); `finish()`
    returns the ExtractedGroup. Memory: one record per member id, not the events."""

    def __init__(
        self,
        cluster: str,
        group_id: str,
        options: ExtractionOptions | None = None,
        replay_settings: ReplaySettings | None = None,
    ):
        self.cluster = cluster
        self.group_id = group_id
        self.options = options or ExtractionOptions()
        self.replay_settings = replay_settings or ReplaySettings()
        self.latency = LatencyFit()
        self.incarnations: list[_Incarnation] = []
        self.current: dict[str, _Incarnation] = {}  # member id -> its latest incarnation
        self.pending_start: dict[str, int] = {}  # client key -> join_sent without member id
        self.pending_subscribe: dict[str, int] = {}  # member id -> "subscription changed" instant
        # member logs only: client key -> the static member its new process replaces
        self.awaiting_successor: dict[str, _Incarnation] = {}
        self.first_ts: int | None = None
        self.last_ts: int | None = None
        self.has_coordinator = False
        self.kip848 = False
        self.protocol_names: Counter[str] = Counter()
        self.offered_protocols: Counter[str] = Counter()
        self.session_timeouts: Counter[int] = Counter()
        self.rebalance_timeouts: Counter[int] = Counter()
        # KIP-848 config dumps' group.remote.assignor: the server assignor each member asks for
        self.remote_assignors: Counter[str] = Counter()
        self.kip415_delay = 0  # the largest KIP-415 delay a Connect assignment carried (0: none)
        self.protocol_types: Counter[str] = Counter()
        self.revoked_after_sync = False  # a member revoked on its sync: the cooperative protocol (KIP-429)
        self.topics: dict[str, int] = dict(self.replay_settings.topics)  # counts before any change
        self.topic_changes: list[tuple[int, str, int, bool]] = []  # (ts, topic, count, member-signalled)
        self.full_topics: set[str] = set()  # topics a full assignment has shown
        self.metadata_signal: int | None = None  # member logs: the leader saw changed metadata here
        self.leave_reasons: dict[str, str] = {}  # member id -> client reason of its LeaveGroup
        self.round_signal: int | None = None  # member logs: first rebalance signal since the last sync
        self.generations: list[tuple[int, frozenset[str]]] = []  # full assignments: (round start, members)
        self.members_listed = False  # a completed join phase's member list was in the input
        self.prepared_at: list[int] = []  # recent rebalance starts (PreparingRebalance)
        self.bumped_at: int | None = None  # KIP-848: the latest group epoch bump
        # KIP-848 coordinator: the input opens with an epoch's target assignment, bumped for a cause in no line
        self.opening_target: tuple[int | None, int] | None = None
        self.state_epochs: dict[
            str, int
        ] = {}  # KIP-848 coordinator: member -> epoch of its latest state line
        # (member, its epoch whose state line a later previousEpoch proves missing, the later line's epoch)
        self.missing_state_line: tuple[str, int, int | None] | None = None
        self.round: _Round | None = None  # the join phase in progress (classic)
        self.closed_round: _Round | None = None  # the last join phase that completed
        self.join_completed_at: int | None = None  # when the last join phase completed (classic)
        self.topic_ids: dict[str, str] = {}  # KIP-848 subscription metadata: topic name -> topic id
        self.partition_topics: set[str] = set()  # topics as the events' partitions name them
        self.stated_counts: list[tuple[int, int]] = []  # (ts, member count a coordinator line states)
        # member logs: a line listing the group's members (a leader's "Finished assignment for group")
        self.members_listed_by_member = False
        # member logs: (ts, client) of the first rebalance a logged member took part in without causing it
        self.rebalance_from_outside: tuple[int, str] | None = None
        self.member_ids_seen: set[str] = set()
        # rebalance timeouts the coordinator's removals show (join or sync phase expiry - its start)
        self.expired_rebalance_timeouts: Counter[int] = Counter()
        self.completed_generations: set[int] = set()  # member logs only: generations whose join phase ended
        self.notes: list[str] = []
        # clients' config dumps: heartbeat.interval.ms, Connect's scheduled.rebalance.max.delay.ms
        self.heartbeat_intervals: Counter[int] = Counter()
        self.configured_max_delays: Counter[int] = Counter()
        # member logs: client -> (oldest, newest) Kafka release its lines' wordings all appear in
        self.client_releases: dict[str, tuple[tuple[int, int], tuple[int, int]]] = {}

    # -------------------------------------------------------------------------------- feeding
    def feed(self, events: Iterable[Event]) -> None:
        for e in events:
            self.observe(e)

    def observe(self, e: Event) -> None:
        if e.cluster != self.cluster or e.group_id != self.group_id:
            return
        self.first_ts = e.ts if self.first_ts is None else min(self.first_ts, e.ts)
        self.last_ts = e.ts if self.last_ts is None else max(self.last_ts, e.ts)
        self.latency.observe(e)
        if e.protocol_type:
            self.protocol_types[e.protocol_type] += 1
        if is_consumer_protocol_event(e):
            self.kip848 = True
        self._learn_partitions(e)
        if e.side == Side.COORDINATOR.value:
            self.has_coordinator = True
            handler = getattr(self, f"_c_{e.event_type}", None)
        else:
            handler = getattr(self, f"_m_{e.event_type}", self._m_any)
        if handler is not None:
            handler(e)
        if e.side == Side.COORDINATOR.value and e.member_count and e.event_type in _COUNTED_AT:
            self.stated_counts.append((e.ts, e.member_count))
            del self.stated_counts[:-_GENERATIONS_KEPT]
        elif e.side == Side.MEMBER.value:
            self._member_view_gap(e)
            self._bound_release(e)

    # ------------------------------------------------------------------------ coordinator side
    def _c_join_received(self, e: Event) -> None:
        attrs = e.attributes or {}
        for key, counter in (
            ("session_timeout_ms", self.session_timeouts),
            ("rebalance_timeout_ms", self.rebalance_timeouts),
        ):
            if attrs.get(key, "").isdigit():
                counter[int(attrs[key])] += 1
        if e.protocol_name:
            self.offered_protocols[e.protocol_name] += 1
        if not e.member_id:
            return
        inc = self.current.get(e.member_id)
        if inc is None or inc.end_kind is not None:
            inc = self._new_incarnation(e, e.member_id)
            inc.join_reason = e.reason
            pending = self.pending_start.pop(_client_key(e), None)
            inc.start, inc.start_exact = (pending, True) if pending is not None else (e.ts, False)
        inc.last_join_at = e.ts
        if e.group_instance_id:
            inc.instance_id = e.group_instance_id
        self._identify(inc, e)
        if e.subscription:
            topics = tuple(e.subscription)
            if inc.subscription is None:
                inc.subscription = topics
            else:
                self._subscription_seen(inc, e, topics)

    def _subscription_seen(self, inc: _Incarnation, e: Event, topics: tuple[str, ...]) -> None:
        current = inc.changes[-1][2] if inc.changes else inc.subscription
        if current is not None and set(current) != set(topics):
            asked = self.pending_subscribe.pop(inc.member_id, None)
            inc.changes.append((asked, True, topics) if asked is not None else (e.ts, False, topics))

    def _c_member_removed(self, e: Event) -> None:
        if e.reason == RemovalReason.FENCED_STATIC.value:
            # a request of a static instance's old member id refused (GroupCoordinator
            # .validateCurrentMember): the instance was replaced before; nothing leaves the group here
            return
        member = e.member_id or self._member_of_instance(e.group_instance_id)
        if not member:
            return
        if (e.attributes or {}).get("pending") == "true":
            # KIP-394: a JoinGroup without member id creates a pending member only (MEMBER_ID_REQUIRED);
            # removed while still pending, it never was a member (its pending JoinGroup line, the only
            # one a 3.x broker logs, made an incarnation that is dropped here)
            pending = self.current.get(member)
            if pending is not None and pending.end_kind is None and pending.start is not None:
                self.incarnations.remove(pending)
                del self.current[member]
            return
        if member not in self.current:  # in the group before the input started
            self._known(member, e)
            self._identify(self.current[member], e)
        inc = self.current[member]
        inc.removed_at, inc.removal_reason = e.ts, e.reason
        if inc.end_kind not in (None, RESET):
            return  # its own log ended it already (more exact)
        # a removal after the process sent a JoinGroup without member id: a new process had replaced it
        # (a restart while the old member's session ran), not a reset of this one
        reason = e.reason
        attrs = e.attributes or {}
        if reason == RemovalReason.SESSION_TIMEOUT.value:
            timeout = (
                int(attrs["session_timeout_ms"]) if attrs.get("session_timeout_ms", "").isdigit() else None
            )
            if timeout is not None:
                self.session_timeouts[timeout] += 1
            else:
                timeout = self._session_timeout()
            # a member that stopped heartbeating did so at expiry - session timeout (docs/metrics.md)
            self._end(inc, EXPIRED, e.ts - timeout)
        elif reason == RemovalReason.LEAVE_GROUP.value:
            self._end(inc, LEFT, e.ts, exact=False)
        elif reason == RemovalReason.PENDING_SYNC_TIMEOUT.value and self.join_completed_at is not None:
            # GroupCoordinator.removePendingSyncMembers / ClassicGroup pending sync: the member was in the
            # join phase that completed and sent no SyncGroup within the rebalance timeout, while its
            # session (shorter, else it would have expired first) did not run out: its process stopped
            # right after its JoinGroup, when the join completed. The wait is the rebalance timeout
            # (max.poll.interval.ms of a consumer).
            self.expired_rebalance_timeouts[e.ts - self.join_completed_at] += 1
            if not inc.logged and self.closed_round is not None:
                # it rejoined that join phase by its end (a member first named by this removal)
                inc.heartbeats.append((self.join_completed_at, JOIN_COMPLETED, self.closed_round.started_at))
            self._end(inc, FAILED, self.join_completed_at, exact=False)
        else:  # rebalance timeout, fenced static member: stopped when removed
            if reason == RemovalReason.REBALANCE_TIMEOUT.value and self.round is not None:
                # GroupCoordinator.onCompleteJoin: not rejoined when the join phase's DelayedJoin expired
                self.expired_rebalance_timeouts[e.ts - self.round.started_at] += 1
                inc.missed_join_phase_at = self.round.started_at
            self._end(inc, FAILED, e.ts)

    def _c_static_member_replaced(self, e: Event) -> None:
        """KIP-345: a known group.instance.id joined with a new member id and took the old one's place."""
        old_id = (e.attributes or {}).get("old_member_id") or self._member_of_instance(e.group_instance_id)
        if not e.member_id:
            # 3.0+ "Replacing previously mapped member M with this groupInstanceId" names no new id: the
            # instance stays a member (no rebalance, it keeps its assignment); when its old process
            # stopped is in no broker line
            if old_id and old_id not in self.current:
                self._known(old_id, e)
                self._identify(self.current[old_id], e)
            return
        if old_id and old_id not in self.current:  # in the group before the input started
            self._known(old_id, e)
            self._identify(self.current[old_id], e)
        old = self.current.get(old_id) if old_id else None
        new = self.current.get(e.member_id)
        if new is old:
            return  # KIP-848: the member is back under its own id, already seen rejoining
        if new is None or new.end_kind is not None:
            new = self._new_incarnation(e, e.member_id)
            pending = self.pending_start.pop(_client_key(e), None)
            new.start, new.start_exact = (pending, True) if pending is not None else (e.ts, False)
        new.instance_id = e.group_instance_id
        if old is not None:
            old.successor = e.member_id
            new.subscription = old.changes[-1][2] if old.changes else old.subscription
            if old.end_kind in (None, RESET):  # its own JoinGroup without id was the new process
                old.end_kind = REPLACED  # its end instant is decided at finish()

    def _c_rebalance_prepared(self, e: Event) -> None:
        named = members_named_in_reason(e.reason)
        if named is not None and not named[2] and named[0]:
            # a member already in the group rejoined or changed ("Leader X re-joining group during
            # Stable", "Updating metadata for member X"): in the group before the input if unseen
            self._known(named[0], e)
            if named[1] and not self.current[named[0]].instance_id:
                self.current[named[0]].instance_id = self.current[named[0]].hint = named[1]
        if named is not None and not named[2] and named[0] and _ENFORCED.search(e.reason or ""):
            # "Leader X re-joining group during Stable; client reason: rebalance enforced by user" (3.2+)
            self.current[named[0]].enforced.append((e.ts, False))
        self.prepared_at.append(e.ts)
        del self.prepared_at[:-_PREPARED_KEPT]
        self._open_round(e.ts)
        if (
            named is not None
            and _LEADER_REJOIN_IN_STABLE.search(e.reason or "")
            and not _ENFORCED.search(e.reason or "")
            and not is_revoke_rejoin(e.reason)
        ):
            self.round.leader_rejoin = named[0]  # its cause is in no line: decided when the round closes
        # the member the reason names rejoined of its own accord (joined, left, re-joined, expired)
        self.round.causes.update(m for m in self.round.members if m in (e.reason or ""))
        # GroupCoordinator.addMemberAndRebalance: "Adding new member M with group instance id I": a member
        # whose JoinGroup line is not in the input (2.x brokers log none) joined here
        added = _ADDED_MEMBER.search(e.reason or "")
        if added and (
            added.group(1) not in self.current or self.current[added.group(1)].end_kind is not None
        ):
            inc = self._new_incarnation(e, added.group(1))
            inc.start, inc.start_exact = e.ts, False
            if added.group(2) not in (None, "None"):
                inc.instance_id = inc.hint = added.group(2)
            else:
                # GroupCoordinator.doUnknownJoinGroup (2.2+, JoinGroup v4+): a dynamic member is added by
                # its second JoinGroup, the one carrying the member id MEMBER_ID_REQUIRED gave it (the
                # wording "with group instance id" is 2.3+, brokers that all ask for it)
                inc.start_after_member_id_required = True
        # "removing member M on LeaveGroup; client reason: consumer poll timeout has expired"
        leaving = _LEAVE_REASON.search(e.reason or "")
        if leaving:
            self.leave_reasons[leaving.group(1)] = e.reason
        # ConsumerCoordinator.onJoinComplete (cooperative only, KIP-429): a member that had to revoke on
        # its sync rejoins with the client reason "need to revoke partitions and re-join"
        if is_revoke_rejoin(e.reason):
            self.revoked_after_sync = True

    def _c_join_completed(self, e: Event) -> None:
        if e.protocol_name:
            self.protocol_names[e.protocol_name] += 1
        started = self.round.started_at if self.round is not None else None
        self._close_round(e.ts)
        # who was in the group when this rebalance started is known when it is the group's first
        # generation (GroupMetadata starts at generation 0: nobody was a member) or when the input listed
        # an earlier generation's members (its member list or full assignment): then a member first seen
        # here joined during this rebalance, not before the input (2.x brokers log no JoinGroup, and a
        # join while PreparingRebalance starts no new rebalance: GroupCoordinator.maybePrepareRebalance)
        membership_known = e.generation_id == 1 or self.members_listed or bool(self.generations)
        for member in e.members or ():
            if member not in self.current and started is not None and membership_known:
                self._known(member, e)
                inc = self.current[member]
                inc.start, inc.start_exact = started, False
                # no line named an instance id for it: a dynamic member, added by its second JoinGroup
                inc.start_after_member_id_required = True
            else:
                self._known(member, e)
        if e.members:
            self.members_listed = True

    def _c_assignment_received(self, e: Event) -> None:
        if e.leader_id:
            # "Assignment received from leader L" (3.x): the leader is a member (in the group before the
            # input when no earlier line named it)
            first_generation = e.generation_id == 1 and e.leader_id not in self.current
            self._known(e.leader_id, e)
            if first_generation and self.join_completed_at is not None:
                # generation 1: the group was Empty, so the leader joined in the join phase that just
                # completed, which an Empty group holds open group.initial.rebalance.delay.ms
                # (GroupCoordinator InitialDelayedJoin / ClassicGroupJoin): finish() dates its JoinGroup
                inc = self.current[e.leader_id]
                inc.start, inc.start_exact = self.join_completed_at, False
                inc.start_after_member_id_required = inc.joined_empty_group = True
        if e.assignment:
            self._assignment_seen(e, self.prepared_at[-1] if self.prepared_at else e.ts)
            for member, tps in e.assignment.items():
                self.current[member].owns = bool(tps)

    def _c_group_epoch_bumped(self, e: Event) -> None:
        self.bumped_at = e.ts

    def _c_target_assignment_computed(self, e: Event) -> None:
        if e.protocol_name:
            self.protocol_names[e.protocol_name] += 1
        if e.assignment and not self.generations and self.bumped_at is None and e.ts == self.first_ts:
            # GroupMetadataManager bumps the group epoch and computes its target in the heartbeat that
            # caused it: the input's first line being the target, that cause (a join, a leave, a
            # subscription or metadata change) is before the input, in no line
            self.opening_target = (e.assignment_epoch, e.ts)
        if e.assignment:
            self._assignment_seen(e, self.bumped_at if self.bumped_at is not None else e.ts)

    def _c_member_epoch_updated(self, e: Event) -> None:
        if e.member_id:
            self._known(e.member_id, e)
            # the coordinator logs every change of a member's state ("new assignment state: epoch=E,
            # previousEpoch=P", 3.8+): P later than the member's last line proves its line at P missing
            previous = str((e.attributes or {}).get("previous_epoch") or "")
            last = self.state_epochs.get(e.member_id)
            if (
                last is not None
                and previous.isdigit()
                and int(previous) > last
                and not self.missing_state_line
            ):
                self.missing_state_line = (e.member_id, int(previous), e.member_epoch)
            if e.member_epoch is not None:
                self.state_epochs[e.member_id] = e.member_epoch
            # the coordinator updates a member's assignment state when its heartbeat arrives
            self.current[e.member_id].heartbeats.append((e.ts, KIP848_ARRIVED, None))

    def _c_topic_metadata_changed(self, e: Event) -> None:
        attrs = e.attributes or {}
        for key, value in attrs.items():
            if key.startswith("topic.") and value.isdigit():
                name = key[len("topic.") :]
                self._topic_count(e.ts, name, int(value))
                if attrs.get(f"topic_id.{name}"):
                    self.topic_ids[name] = attrs[f"topic_id.{name}"]

    # ----------------------------------------------------------------------------- member side
    def _bound_release(self, e: Event) -> None:
        """Each wording a client logs is printed by some Kafka releases only (kafka_logs.patterns `versions`):
        together they bound that client's release (2.5's "Updating assignment with / now assigned
        partitions" block: 2.4-2.5)."""
        bounds = _WORDING_RELEASES.get((e.attributes or {}).get("log_pattern"))
        client = e.client_id or e.source
        if bounds is None or not client:
            return
        low, high = self.client_releases.get(client, ((0, 0), _NEWEST))
        self.client_releases[client] = (max(low, bounds[0]), min(high, bounds[1]))

    def _client_version(self) -> str | None:
        """The newest release every logged client's wording allows, when all of them agree on the side of
        each assignor change (AbstractStickyAssignor.constrainedAssign from 2.6): the leader runs the
        assignor and may be any of them. None (today's algorithms) when no wording bounds it that far."""
        ranges = [r for r in self.client_releases.values() if r[0] <= r[1]]
        if not ranges or len(ranges) < len(self.client_releases):
            return None  # no member wording, or wordings of different releases in one client's lines
        newest = min(high for _, high in ranges)
        if newest == _NEWEST or any(low > newest for low, _ in ranges):
            return None
        if not all((high < _STICKY_CHANGE) == (newest < _STICKY_CHANGE) for _, high in ranges):
            return None
        return f"{newest[0]}.{newest[1]}" if newest < _STICKY_CHANGE else None

    def _member_view_gap(self, e: Event) -> None:
        """Member logs: whether a logged member took part in a rebalance it did not start (the heartbeat's
        or a commit's REBALANCE_IN_PROGRESS; its log opening inside a rebalance, or on Connect's
        "Rebalance started", which names no cause), and whether any line lists the group's members."""
        if e.assignment or e.members:
            self.members_listed_by_member = True
        first_line = bool(e.member_id) and e.member_id not in self.member_ids_seen
        if e.member_id:
            self.member_ids_seen.add(e.member_id)
        told = e.event_type == EventType.HEARTBEAT_REBALANCING.value or (
            e.event_type == EventType.JOIN_REQUESTED.value and _NOTICED_REBALANCE.search(e.reason or "")
        )
        opened_inside = first_line and (
            e.event_type in (EventType.JOIN_RESPONSE.value, EventType.SYNC_RESPONSE.value)
            or (e.event_type == EventType.JOIN_REQUESTED.value and e.reason == REBALANCE_STARTED)
        )
        if (told or opened_inside) and self.rebalance_from_outside is None:
            self.rebalance_from_outside = (e.ts, e.client_id or e.source or e.member_id)

    def _m_client_config(self, e: Event) -> None:
        """A client's config dump (docs/events.md `client_config`): the settings its JoinGroup carries.
        A KIP-848 member's session timeout is the broker's group.consumer.session.timeout.ms, not its own."""
        attrs = e.attributes or {}
        keys = [
            ("rebalance_timeout_ms", self.rebalance_timeouts),
            ("heartbeat_interval_ms", self.heartbeat_intervals),
        ]
        if attrs.get("group_protocol") != "consumer":
            keys.append(("session_timeout_ms", self.session_timeouts))
        elif attrs.get("remote_assignor"):
            self.remote_assignors[attrs["remote_assignor"].lower()] += 1
        keys.append(("scheduled_rebalance_max_delay_ms", self.configured_max_delays))
        for key, counter in keys:
            if attrs.get(key, "").isdigit():
                counter[int(attrs[key])] += 1
        if e.protocol_name:
            self.offered_protocols[e.protocol_name] += 1

    def _m_any(self, e: Event) -> _Incarnation | None:
        """Every member event: the incarnation it belongs to (created when first seen)."""
        if not e.member_id:
            return None
        inc = self.current.get(e.member_id)
        if inc is None:
            inc = self._new_incarnation(e, e.member_id)
        replaced = self.awaiting_successor.get(_client_key(e))
        if replaced is not None and replaced is not inc:
            replaced.successor = e.member_id
            del self.awaiting_successor[_client_key(e)]
        if inc.reset_by_join is not None and inc.end == inc.reset_by_join:
            # the coordinator answered that JoinGroup with this same member id: it carried the id, the log
            # line did not print it (a JoinGroup without one always gets a new id): no new process
            if self.pending_start.get(_client_key(e)) == inc.reset_by_join:
                del self.pending_start[_client_key(e)]
            if self.awaiting_successor.get(_client_key(e)) is inc:
                del self.awaiting_successor[_client_key(e)]
            inc.end_kind = inc.end = inc.reset_by_join = None
        dropped = [t for t in (inc.end, inc.removed_at, inc.poll_timeout_at) if t is not None]
        if inc.end_kind not in (None, REPLACED) and inc.revived_at is None and e.ts > max(dropped):
            # still running after the group dropped it: a pause, not a crash, and it ended here
            inc.alive_after_end, inc.revived_at = True, e.ts
        if not inc.start_exact:
            pending = self.pending_start.pop(_client_key(e), None)
            if pending is not None and (inc.start is None or pending <= inc.start):
                inc.start, inc.start_exact = pending, True
        inc.logged = True
        inc.client_key = _client_key(e)
        self._identify(inc, e)
        inc.last_member_event, inc.last_member_ts = e.event_type, e.ts
        delay = (e.attributes or {}).get("delay_ms", "")
        if delay.isdigit():
            self.kip415_delay = max(self.kip415_delay, int(delay))
        return inc

    def _m_join_sent(self, e: Event) -> None:
        if e.member_id:
            inc = self._m_any(e)
            if inc is not None and not self.has_coordinator:
                self._open_round(e.ts)
                if not inc.noticed:
                    self.round.causes.add(inc.member_id)
            return
        # a JoinGroup without member id: a new process, or one whose membership was reset (its old
        # member id expired or it left on a poll timeout): the new incarnation starts here
        key = _client_key(e)
        self.pending_start[key] = e.ts
        if not self.has_coordinator:
            self._open_round(e.ts)
        for inc in self.current.values():
            if inc.end_kind is None and inc.logged and inc.client_key == key:
                self._end(inc, RESET, e.ts)
                inc.reset_by_join = e.ts
                if self.round is not None:
                    self.round.causes.add(inc.member_id)  # it rejoins of its own accord
                if e.group_instance_id and not self.has_coordinator and inc.lost_at is None:
                    # KIP-345: a static member's new process takes over its instance id (no coordinator
                    # log to say so: assumed within the session timeout)
                    inc.end_kind = REPLACED
                    self.awaiting_successor[key] = inc

    def _m_join_response(self, e: Event) -> None:
        inc = self._m_any(e)
        if inc is not None:
            inc.noticed = False
        generation = e.generation_id
        if (
            not self.has_coordinator
            and generation is not None
            and generation not in self.completed_generations
        ):
            # member logs only: the first JoinGroup response of a generation is the join phase's end
            self.completed_generations.add(generation)
            self._close_round(e.ts, response=True)
        if e.protocol_name:
            self.protocol_names[e.protocol_name] += 1

    def _m_heartbeat_rebalancing(self, e: Event) -> None:
        self._noticed(self._m_any(e), e.ts)
        if self.round_signal is None:
            self.round_signal = e.ts

    def _m_assignment_computed(self, e: Event) -> None:
        self._m_any(e)
        if e.assignment:
            self._assignment_seen(e, self.round_signal if self.round_signal is not None else e.ts)

    def _m_sync_response(self, e: Event) -> None:
        inc = self._m_any(e)
        if inc is not None:
            inc.noticed = False
            if e.partitions is not None:  # its own assignment (a static rejoin gets it with no rebalance)
                inc.owns = bool(e.partitions)
        self.round_signal = self.metadata_signal = None

    def _m_partitions_lost(self, e: Event) -> None:
        inc = self._m_any(e)
        if inc is not None and inc.lost_at is None:
            inc.lost_at = e.ts

    def _m_partitions_revoked(self, e: Event) -> None:
        inc = self.current.get(e.member_id or "")
        if inc is not None and inc.last_member_event == EventType.SYNC_RESPONSE.value:
            # revoking right after its SyncGroup response: ConsumerCoordinator.onJoinComplete under the
            # COOPERATIVE protocol (KIP-429); an eager member revokes in onJoinPrepare, before rejoining
            self.revoked_after_sync = True
        self._m_any(e)

    def _m_join_requested(self, e: Event) -> None:
        inc = self._m_any(e)
        if inc is not None and inc.start is None and _MEMBER_ID_REQUIRED.search(e.reason or ""):
            # KIP-394: its JoinGroup without member id was answered MEMBER_ID_REQUIRED: a new member, whose
            # process joined here (not one in the group before the input)
            inc.start, inc.start_exact = e.ts, False
        if inc is not None and _ENFORCED.search(e.reason or "") and not self.has_coordinator:
            inc.enforced.append((e.ts, True))  # "Request joining group due to: rebalance enforced by user"
        if _NOTICED_REBALANCE.search(e.reason or ""):
            self._noticed(inc, e.ts)
        elif inc is not None and self.round is not None:
            self.round.causes.add(inc.member_id)  # it rejoins for its own reason
        if self.round_signal is None:
            self.round_signal = e.ts
        if inc is not None and "subscription" in (e.reason or "").lower():
            self.pending_subscribe[inc.member_id] = e.ts
        if "metadata" in (e.reason or "").lower() and not self.has_coordinator:
            self.metadata_signal = e.ts  # "cached metadata has changed": the leader's rejoin

    def _m_poll_timeout_expired(self, e: Event) -> None:
        inc = self.current.get(e.member_id or "")
        if inc is not None and inc.poll_timeout_at is None:
            inc.poll_timeout_at = e.ts  # before _m_any: this event is no sign of life after a removal
        inc = self._m_any(e)
        if inc is not None and inc.end_kind is None:
            self._end(inc, POLL, e.ts)

    def _m_leave_sent(self, e: Event) -> None:
        inc = self._m_any(e)
        if inc is not None and inc.end_kind is None:
            self._end(inc, LEFT, e.ts)

    def _m_member_state_changed(self, e: Event) -> None:
        """KIP-848 client states: UNSUBSCRIBED -> JOINING starts a process; PREPARE_LEAVING is close();
        FENCED -> JOINING with the same member id is a member the coordinator dropped while it was alive."""
        attrs = e.attributes or {}
        to_state, from_state = attrs.get("to_state"), attrs.get("from_state")
        inc = self.current.get(e.member_id or "")
        if to_state == "JOINING" and e.member_id and (inc is None or inc.end_kind is not None):
            alive = inc is not None and from_state in ("FENCED", "STALE")
            if inc is not None and alive:
                inc.alive_after_end = True
            new = self._new_incarnation(e, e.member_id)
            new.start, new.start_exact = e.ts, True
            if inc is not None:
                new.subscription = inc.changes[-1][2] if inc.changes else inc.subscription
        inc = self._m_any(e)
        if inc is None:
            return
        if to_state == "RECONCILING" and from_state == "STABLE":
            inc.heartbeats.append((e.ts, KIP848_ANSWERED, None))  # a heartbeat answered with a new assignment
        if to_state == "PREPARE_LEAVING" and inc.end_kind is None and inc.poll_timeout_at is None:
            self._end(inc, LEFT, e.ts)
        elif to_state == "FENCED" and inc.end_kind is None:
            self._end(inc, RESET, e.ts)
        if to_state == "FENCED" and inc.revived_at == e.ts:
            # AbstractHeartbeatRequestManager.onErrorResponse (FENCED_MEMBER_EPOCH, UNKNOWN_MEMBER_ID) calls
            # AbstractMembershipManager.transitionToFenced: the line is the answer to its first heartbeat
            # after the pause, a round trip after it woke
            inc.revived_on_answer = True

    # --------------------------------------------------------------------------------- helpers
    def _new_incarnation(self, e: Event, member_id: str) -> _Incarnation:
        hint = (
            e.group_instance_id
            or e.client_id
            or (e.source if e.side == Side.MEMBER.value else None)
            or member_id
        )
        previous = self.current.get(member_id)
        if previous is not None and e.group_instance_id is None and previous.hint:
            hint = previous.hint  # the same member id rejoining (KIP-848) is the same process
        inc = _Incarnation(member_id=member_id, first_seen=e.ts, hint=hint, instance_id=e.group_instance_id)
        self.incarnations.append(inc)
        self.current[member_id] = inc
        return inc

    def _noticed(self, inc: _Incarnation | None, ts: int) -> None:
        """Its own log shows it learned of a rebalance (the heartbeat's REBALANCE_IN_PROGRESS, or an
        offset commit refused for it): the first such signal since its last sync is its heartbeat instant."""
        if inc is None:
            return
        if not self.has_coordinator:
            self._open_round(ts)
        if not inc.noticed:
            inc.noticed = True
            inc.heartbeats.append((ts, HEARTBEAT_ANSWERED, None))

    def _open_round(self, ts: int) -> None:
        if self.round is None:
            members = frozenset(m for m, inc in self.current.items() if inc.end_kind is None)
            self.round = _Round(ts, members)

    def _close_round(self, ts: int, response: bool = False) -> None:
        """The join phase completed at `ts` (`response`: a member's JoinGroup response, member logs only).
        A member without a log of its own that was in the group and did not cause the round rejoined last
        at the latest: replayed as noticing the rebalance in time to rejoin by then (finish() subtracts
        the rejoin's own latency)."""
        since = self.join_completed_at
        found, self.round, self.join_completed_at = self.round, None, ts
        if found is None:
            return
        self.closed_round = found
        if found.leader_rejoin is not None and found.leader_rejoin in self.current:
            # GroupCoordinator (Stable, the leader's JoinGroup) rebalances so that the leader can reassign
            # for changes its metadata does not carry (a topic's partitions: ConsumerCoordinator's "cached
            # metadata has changed"), or for enforceRebalance(): a cause in no line when the client gave no
            # reason. With the membership unchanged by the round's end, the leader's rejoin is the round's
            # only cause: replayed as the leader rejoining then (the timeline action `rebalance`), unless
            # finish() finds the cause in the timeline (_unexplained). When a member joined or left during
            # it, that change is a cause the timeline has already (it starts the replayed round, later
            # than the leader did)
            still_in = frozenset(m for m, inc in self.current.items() if inc.end_kind is None)
            if still_in == found.members:
                self.current[found.leader_rejoin].leader_rejoins.append((found.started_at, since, ts))
        for member in found.members - found.causes:
            inc = self.current.get(member)
            if inc is not None and inc.end_kind is None and not inc.logged:
                inc.heartbeats.append((ts, JOIN_RESPONDED if response else JOIN_COMPLETED, found.started_at))

    def _identify(self, inc: _Incarnation, e: Event) -> None:
        """A member first known by its id alone gets its process identity from a later event."""
        if e.group_instance_id and not inc.instance_id:
            inc.instance_id = inc.hint = e.group_instance_id
        if inc.hint == inc.member_id and not inc.instance_id:
            better = e.client_id or (e.source if e.side == Side.MEMBER.value else None)
            if better:
                inc.hint = better

    def _assignment_seen(self, e: Event, started: int) -> None:
        """A full assignment lists the members of a rebalance that started at `started`. Where no join
        or leave of a member is logged (member logs only, KIP-848 target assignments), the membership
        change between two assignments is the evidence: a member new to a later one joined when that
        rebalance started; one missing from it had left (see _departures_from_assignments)."""
        members = frozenset(e.assignment)
        member_logs_only = not self.has_coordinator and e.side == Side.MEMBER.value
        # the input's first assignment: its unknown members were there before, unless the logged members
        # all learned of this rebalance from the coordinator (someone else's JoinGroup started it)
        noticed = member_logs_only and self.closed_round is not None and not self.closed_round.causes
        for member in members - set(self.current):
            self._known(member, e)
            if self.generations or noticed:  # it joined in this rebalance
                inc = self.current[member]
                inc.start, inc.start_exact = started, True
                inc.joined_before_notice = member_logs_only
        self.generations.append((started, members))
        del self.generations[:-_GENERATIONS_KEPT]

    def _known(self, member_id: str, e: Event) -> None:
        """A member the coordinator lists: one already in the group when the input started if unseen."""
        if member_id not in self.current:
            inc = _Incarnation(member_id=member_id, first_seen=e.ts, hint=member_id)
            self.incarnations.append(inc)
            self.current[member_id] = inc

    def _end(self, inc: _Incarnation, kind: str, ts: int, exact: bool = True) -> None:
        inc.end_kind, inc.end, inc.end_exact = kind, ts, exact

    def _member_of_instance(self, instance: str | None) -> str | None:
        if not instance:
            return None
        for inc in reversed(self.incarnations):
            if inc.instance_id == instance:
                return inc.member_id
        return None

    def _learn_partitions(self, e: Event) -> None:
        """Partition counts from the partitions events name. Growth after a full assignment of the topic
        was seen is a partition count change (at the leader's metadata signal when a member log shows
        one); before, the topic simply had that many."""
        full = e.assignment is not None
        owned_before = e.event_type in (EventType.PARTITIONS_REVOKED.value, EventType.PARTITIONS_LOST.value)
        for tps in (e.partitions or (), *(e.assignment or {}).values()):
            for tp in tps:
                self.partition_topics.add(tp.topic)
                if owned_before:
                    # a member gives up what it owned: the partition existed already (a cooperative
                    # assignment withholds a partition until its owner has revoked it: no growth)
                    self._existed(tp.topic, tp.partition + 1)
                elif tp.topic in self.full_topics:
                    signal = self.metadata_signal
                    self._topic_count(
                        e.ts if signal is None else signal, tp.topic, tp.partition + 1, signal is not None
                    )
                else:
                    self.topics[tp.topic] = max(self.topics.get(tp.topic, 0), tp.partition + 1)
        if full:
            self.full_topics.update(tp.topic for tps in e.assignment.values() for tp in tps)

    def _existed(self, topic: str, count: int) -> None:
        """The topic had at least `count` partitions as of the latest count known for it."""
        changes = [c for c in self.topic_changes if c[1] == topic]
        if not changes:
            self.topics[topic] = max(self.topics.get(topic, 0), count)
        elif changes[-1][2] < count:
            self.topic_changes[self.topic_changes.index(changes[-1])] = (
                *changes[-1][:2],
                count,
                changes[-1][3],
            )

    def _topic_count(self, ts: int, topic: str, count: int, signalled: bool = False) -> None:
        """The topic has `count` partitions from `ts` on (`signalled`: ts is a member's metadata signal,
        the change happened metadata_refresh_ms earlier)."""
        changes = [c for c in self.topic_changes if c[1] == topic]
        current = changes[-1][2] if changes else self.topics.get(topic, 0)
        if count <= current:
            return
        if topic not in self.topics and not changes:
            self.topics[topic] = count  # the first count the input shows: the topic's count
            if not signalled and ts > (self.first_ts or ts):
                self.notes.append(
                    f"topic {topic}: {count} partitions at {ts} after an unknown count: no change replayed"
                )
        elif changes and changes[-1][0] >= ts - 1:  # the same change, seen bigger
            self.topic_changes[self.topic_changes.index(changes[-1])] = (
                *changes[-1][:2],
                count,
                changes[-1][3],
            )
        else:
            self.topic_changes.append((ts, topic, count, signalled))

    def _session_timeout(self) -> int:
        if self.session_timeouts:
            return self.session_timeouts.most_common(1)[0][0]
        return self.replay_settings.session_timeout_ms or self.options.session_timeout_ms

    # ---------------------------------------------------------------------------------- finish
    def finish(self) -> ExtractedGroup:
        if self.first_ts is None:
            raise WhatIfError(f"group {self.cluster}/{self.group_id}: no events to extract a timeline from")
        actual = self._actual_settings()
        self._departures_from_assignments(actual)
        half_join = actual.latency.join_round_trip_ms // 2
        for inc in self.incarnations:
            inc.leader_rejoins = self._unexplained(inc, actual)
        for inc in self.incarnations:
            if inc.joined_before_notice:
                # its JoinGroup reached the coordinator before the first member noticed the rebalance
                inc.start -= 2 * actual.latency.join_round_trip_ms + 1
            if inc.joined_empty_group:
                inc.start -= actual.latency.group_initial_rebalance_delay_ms
            if inc.start is not None and not inc.start_exact:
                inc.start -= half_join  # the JoinGroup left the process half a round trip earlier
                if inc.start_after_member_id_required:
                    inc.start -= actual.latency.join_round_trip_ms  # its first JoinGroup, answered
            if inc.end_kind == LEFT and not inc.end_exact:
                inc.end -= half_join
            elif inc.end_kind == EXPIRED and self.kip848:
                inc.end -= half_join  # KIP-848: its last heartbeat reached the coordinator one way later
            inc.changes = [
                (ts if exact else ts - half_join - actual.latency.revoke_callback_ms, True, topics)
                for ts, exact, topics in inc.changes
            ]
            # an eager member revokes before its JoinGroup leaves (ConsumerCoordinator.onJoinPrepare), its
            # callback invoked only when it owns partitions (none when the group consumes nothing known)
            owns = inc.owns if inc.owns is not None else bool(self.topics or self.topic_changes)
            prepare = actual.latency.revoke_callback_ms if actual.protocol == "eager" and owns else 0
            inc.enforced += [(ts, False) for ts, _since, _until in inc.leader_rejoins]
            self.notes.extend(
                f"{inc.member_id}, the leader, rejoined the Stable group at {format_ts(ts)} for a cause in no "
                "line (a topic metadata change or enforceRebalance): replayed as its enforceRebalance()"
                for ts, _since, _until in inc.leader_rejoins
            )
            inc.enforced = [(ts if exact else ts - half_join - prepare, True) for ts, exact in inc.enforced]
        processes = self._processes()
        actions, member_logged, pre_existing = self._actions(processes, actual)
        if not any(isinstance(a, Join) for a in actions):
            # 0.9/0.10 broker lines and member logs without member ids name nobody: nothing to replay. A
            # client's own lines carry its member id only in some messages (before 2.7 not in "Successfully
            # joined"; before 2.2 not in the LeaveGroup line; 0.10 not even its client id): a client id or
            # group.instance.id alone does not tell the process's JoinGroups apart from the other members'
            raise WhatIfError(
                "the events name no member of the group (no line carries a member id): no membership timeline "
                "to replay"
            )
        warmup = 0
        if pre_existing:
            warmup = actual.latency.group_initial_rebalance_delay_ms + WARMUP_MARGIN_MS
            self.notes.append(
                f"{len(pre_existing)} member(s) were in the group before the input's first event "
                f"({', '.join(sorted(pre_existing)[:5])}): they join during a {warmup} ms warm-up that is not measured"
            )
        start = min([self.first_ts, *(a.at for a in actions if a.at is not None)]) - warmup
        self._one_key_per_topic()
        initial = dict(self.topics)
        counts = dict(initial)
        for ts, topic, count, signalled in sorted(self.topic_changes):
            if count > counts.get(topic, 0):  # the initial count may have been learned bigger later
                counts[topic] = count
                at = ts - actual.latency.metadata_refresh_ms if signalled else ts
                actions.append(PartitionCount(at=at, topic=topic, count=count))
        relative = [dataclasses.replace(a, at=(a.at - start) if a.at is not None else 0) for a in actions]
        timeline = Timeline(
            topics=initial,
            actions=tuple(relative),
            cluster=self.cluster,
            group_id=self.group_id,
            start_ms=start,
        )
        if not initial:
            self.notes.append(
                "no partition counts known (no assignment in the input, none configured): nothing to consume"
            )
        return ExtractedGroup(
            timeline=timeline,
            actual=actual,
            observed_from=self.first_ts,
            has_coordinator_log=self.has_coordinator,
            member_logged=frozenset(member_logged),
            notes=tuple(self.notes),
            not_comparable=(
                self._unnamed_members()
                or self._members_out_of_view()
                or self._revocations_out_of_view(actual, counts)
            ),
            incomparable=self._incomparable_measures(),
        )

    def _incomparable_measures(self) -> tuple[tuple[str, str], ...]:
        """Measures the actual replay cannot check the model with. A KIP-848 input opening with an epoch's
        target: the bump's cause is in no line, so the as-actual (whose members join in the unmeasured
        warm-up) has no such rebalance, and the lines of that epoch show who owned what where the
        as-actual's do not: no measure compares. A member state line provably missing: the actual's
        partition times around it are upper bounds (the replay marks them inferred), and whether the
        member's epoch converged before the next bump is unseen (the actual may join the two epochs in one
        rebalance of two rounds)."""
        out: dict[str, str] = {}
        if self.opening_target is not None:
            epoch, ts = self.opening_target
            why = (
                f"the input opens at {format_ts(ts)} with epoch {epoch}'s target assignment, bumped for a cause "
                "in no line: the as-actual cannot replay that rebalance, nor know who owned what before it"
            )
            out.update(dict.fromkeys((*MODEL_CHECK_COUNTS, *MODEL_CHECK_TIMES), why))
        if self.missing_state_line is not None:
            member, missing, later = self.missing_state_line
            why = (
                f"{member}'s state line at epoch {missing} is not in the input (its epoch-{later} line says "
                f"previousEpoch={missing}): the actual's partition times are upper bounds and that epoch's "
                "convergence is unseen"
            )
            out.update(
                dict.fromkeys(("rebalances", "generations", "stw_ms", "partition_unavailable_ms"), why)
            )
        return tuple(out.items())

    @staticmethod
    def _revocations_out_of_view(actual: ActualSettings, counts: Mapping[str, int]) -> str | None:
        """No partition count known (no assignment in the input, none configured) for a cooperative
        group: its follow-up rounds come from the partitions a member revokes (KIP-429,
        ConsumerCoordinator.onJoinComplete rejoins after a revocation), which a timeline with nothing to
        consume cannot have."""
        if counts or actual.protocol != "cooperative":
            return None
        return (
            "no partition counts known (no assignment in the input, none configured) for a cooperative "
            "group: its follow-up rounds come from revocations the replay cannot simulate"
        )

    def _members_out_of_view(self) -> str | None:
        """Member logs only, none listing the group's members, and a logged member took part in a
        rebalance someone else started: who joined, left or changed is in no line, so no timeline holds
        what the rest of the group did."""
        if self.has_coordinator or self.members_listed_by_member or self.rebalance_from_outside is None:
            return None
        ts, member = self.rebalance_from_outside
        return (
            f"member logs only: {member} took part at {format_ts(ts)} in a rebalance no logged member started, "
            "and no line lists the group's members (a leader's full assignment): the rest of the group is in no line"
        )

    def _unnamed_members(self) -> str | None:
        """A coordinator line counts more members than the input names at that instant: the others'
        joins, rejoins and departures are in no line (a broker log prints member ids only for some
        transitions), so no timeline can replay them and the as-actual replay misses what they did."""
        for ts, count in self.stated_counts:
            named = len(
                {
                    inc.instance_id or inc.member_id  # a static member replaced in place is one member
                    for inc in self.incarnations
                    if (inc.start is None or inc.start <= ts)
                    # a member until the coordinator removed it (its process may have stopped earlier)
                    and (inc.end is None or max(inc.end, inc.removed_at or inc.end) >= ts)
                }
            )
            if count > named:
                return (
                    f"the coordinator counts {count} members at {format_ts(ts)} where the input names "
                    f"{named}: the others' joins and departures are in no line"
                )
        return None

    def _one_key_per_topic(self) -> None:
        """A KIP-848 broker names a topic by its id in assignments (4.0: "assignedPartitions=[<id>-0]")
        and by name and id in its subscription metadata: one topic, counted once, under the key the
        events' partitions use (the replay's, unless replay settings map the id back)."""
        for name, topic_id in self.topic_ids.items():
            key, other = (topic_id, name) if topic_id in self.partition_topics else (name, topic_id)
            if other in self.topics:
                self.topics[key] = max(self.topics.get(key, 0), self.topics.pop(other))
            self.topic_changes = [
                (ts, key if topic == other else topic, count, signalled)
                for ts, topic, count, signalled in self.topic_changes
            ]

    def _left_on_poll_timeout(self, inc: _Incarnation, nxt: _Incarnation | None) -> bool:
        """A LeaveGroup (or a rejoin) whose client reason is the poll timeout ("consumer poll timeout has
        expired", AbstractCoordinator's heartbeat thread)."""
        reasons = (self.leave_reasons.get(inc.member_id, ""), nxt.join_reason if nxt is not None else "")
        return any("poll timeout" in (reason or "").lower() for reason in reasons)

    def _departures_from_assignments(self, actual: ActualSettings) -> None:
        """A member missing from a later full assignment, whose removal no event shows (member logs only,
        KIP-848 target assignments), left before that rebalance began. Silent in its own log: it crashed,
        a session timeout before the others' first signal; no log of its own: it left then (a crash and
        a leave look alike from the others)."""
        for inc in self.incarnations:
            killed = inc.end_kind == RESET and inc.lost_at is None  # its process restarted: when did it die?
            if (inc.end_kind is not None and not killed) or inc.successor:
                continue
            # the group knew of it (its JoinGroup arrived) before that rebalance started
            seen = max(t for t in (inc.start, inc.last_join_at, inc.first_seen) if t is not None)
            gone = next(
                (
                    started
                    for started, members in self.generations
                    if started > seen and inc.member_id not in members
                ),
                None,
            )
            if gone is None:
                continue
            if inc.logged:
                end = max(gone - actual.session_timeout_ms, inc.last_member_ts or seen)
                self._end(inc, EXPIRED, end)
            else:
                self._end(inc, LEFT, gone)
                self.notes.append(
                    f"member {inc.member_id} (no log of its own) left before {gone}: replayed as a leave"
                )

    def _actual_settings(self) -> ActualSettings:
        observed = []
        if self.kip848:
            group_protocol, protocol = "consumer", "consumer"
            # the assignor the broker's lines name, else the one the members ask for (group.remote.assignor:
            # ConsumerGroup.computePreferredServerAssignor takes the one most members name), else the
            # broker's default (group.consumer.assignors' first: uniform)
            assignor = _most_common(self.protocol_names) or _most_common(self.remote_assignors) or "uniform"
            if self.protocol_names or self.remote_assignors:
                observed.append("assignor")
        else:
            group_protocol = "classic"
            name = _most_common(self.protocol_names) or _most_common(self.offered_protocols)
            if name in CLIENT_ASSIGNORS:
                observed.append("assignor")
            elif name in CONNECT_PROTOCOLS and _most_common(self.protocol_types) == CONNECT_PROTOCOL_TYPE:
                # a Kafka Connect worker group: its leader assigns connectors and tasks with Connect's
                # IncrementalCooperativeAssignor (WorkerCoordinator, protocols compatible / sessioned),
                # replayed by rebalance_core.classic.connect, not by a consumer assignor
                observed.append("assignor")
            elif rebalance_protocol_of(name) == "cooperative" or (name is None and self.revoked_after_sync):
                # Streams' "stream", or members revoking on their sync (KIP-429): cooperative
                self.notes.append(
                    f"protocol {name or 'not logged'} is cooperative (KIP-429): replayed with cooperative-sticky"
                )
                name = "cooperative-sticky"
            else:
                if name is not None:
                    self.notes.append(
                        f"protocol {name!r} is not a consumer assignor the simulator has: range assumed"
                    )
                name = (
                    self.replay_settings.default_assignor
                    if self.replay_settings.default_assignor in CLIENT_ASSIGNORS
                    else "range"
                )
            assignor = name
            protocol = rebalance_protocol_of(assignor) or "eager"
        if self.session_timeouts:
            observed.append("session_timeout_ms")
        if self.rebalance_timeouts or self.expired_rebalance_timeouts:
            observed.append("max_poll_interval_ms")
        # the group's rebalance timeout is the largest of its members' (GroupMetadata.rebalanceTimeoutMs,
        # ClassicGroup.rebalanceTimeoutMs); an expiry the coordinator logged measures it directly
        max_poll = (
            max(self.rebalance_timeouts, default=None)
            or _most_common(self.expired_rebalance_timeouts)
            or self.options.max_poll_interval_ms
        )
        latency = self.latency.model()
        max_delay = 0
        if assignor in CONNECT_PROTOCOLS:
            # IncrementalCooperativeAssignor.handleLostAssignments: the first assignment after a worker's
            # work went missing carries delay = scheduled.rebalance.max.delay.ms, later ones what remains
            # of it, the revoking backoff (KAFKA-12495) at most that: the largest delay seen is the setting
            # when that first assignment is in the input, a lower bound otherwise
            # unless the workers' config dumps state the setting itself
            configured = _most_common(self.configured_max_delays)
            max_delay = configured if configured is not None else self.kip415_delay
            if max_delay or configured is not None:
                observed.append("scheduled_rebalance_max_delay_ms")
            if configured is None:
                self.notes.append(
                    f"scheduled.rebalance.max.delay.ms is not logged: {max_delay} ms, the largest delay an "
                    "assignment carried (the setting itself if the input holds the first assignment after lost "
                    "work, else a lower bound)"
                    if max_delay
                    else "scheduled.rebalance.max.delay.ms is not logged and no assignment carried a delay: "
                    "0 assumed (lost work reassigned at once)"
                )
        elif self.kip415_delay:
            self.notes.append(
                "KIP-415 delays seen but scheduled.rebalance.max.delay.ms is not logged: not replayed"
            )
        client_version = self._client_version() if group_protocol == "classic" else None
        if client_version is not None and assignor in ("sticky", "cooperative-sticky"):
            observed.append("client_version")
            self.notes.append(
                f"the members' log wording is Kafka {client_version} or older: {assignor} replayed as those "
                "clients run it (before 2.6's all-subscriptions-equal algorithm)"
            )
        heartbeat = self.options.heartbeat_interval_ms
        if self.heartbeat_intervals and group_protocol == "classic":  # the clients' own (config dumps)
            heartbeat = _most_common(self.heartbeat_intervals)
            observed.append("heartbeat_interval_ms")
        elif group_protocol == "consumer" and heartbeat == DEFAULT_HEARTBEAT_INTERVAL_MS:
            heartbeat = DEFAULT_KIP848_HEARTBEAT_INTERVAL_MS
        return ActualSettings(
            group_protocol=group_protocol,
            assignor=assignor,
            protocol=protocol,
            session_timeout_ms=self._session_timeout(),
            max_poll_interval_ms=max_poll,
            heartbeat_interval_ms=heartbeat,
            scheduled_rebalance_max_delay_ms=max_delay,
            latency=latency,
            observed=tuple(observed) + tuple(f"latency.{name}" for name in latency.fitted),
            protocol_type=_most_common(self.protocol_types),
            client_version=client_version,
        )

    def _processes(self) -> dict[str, list[_Incarnation]]:
        """Incarnations chained into processes: a static replacement or the same member id rejoining links
        directly; otherwise the latest ended incarnation with the same identity, if it ended before."""
        by_member_successor = {inc.successor: inc for inc in self.incarnations if inc.successor}
        processes: dict[str, list[_Incarnation]] = {}
        owner: dict[int, str] = {}  # id(incarnation) -> process name
        # members already in the group when the input started come first, then by their joins
        ordered = sorted(
            self.incarnations, key=lambda i: (i.start is not None, i.start or i.first_seen, i.first_seen)
        )
        previous_of_member: dict[str, _Incarnation] = {}
        for inc in ordered:
            linked = by_member_successor.get(inc.member_id)
            if linked is None:
                same_id = previous_of_member.get(inc.member_id)
                if same_id is not None and same_id.end_kind is not None:
                    linked = same_id
            if linked is None:
                linked = self._free_process(inc, processes)
            name = owner.get(id(linked)) if linked is not None else None
            if name is None:
                name = _unique_name(inc.hint or "member", processes)
                processes[name] = []
            processes[name].append(inc)
            owner[id(inc)] = name
            previous_of_member[inc.member_id] = inc
        return processes

    def _free_process(
        self, inc: _Incarnation, processes: dict[str, list[_Incarnation]]
    ) -> _Incarnation | None:
        if inc.start is None:
            return None
        best = None
        for chain in processes.values():
            last = chain[-1]
            if last.hint != inc.hint or last.end_kind in (None, REPLACED) or last.end is None:
                continue
            if last.end <= inc.start and (best is None or last.end > best.end):
                best = last
        return best

    def _unexplained(self, inc: _Incarnation, actual: ActualSettings) -> list[tuple[int, int | None, int]]:
        """The leader's rejoins in Stable whose cause the timeline does not have already: a partition count
        change, or a subscription change of its own, since the previous round (its leader rejoins for them:
        ConsumerCoordinator.rejoinNeededOrPending). A Connect worker group's leader rejoins for connector
        configuration changes, which no timeline action carries, and at the end of a KIP-415 delay, which
        the Connect replay schedules itself: none is added there."""
        if actual.assignor in CONNECT_PROTOCOLS or actual.protocol_type == CONNECT_PROTOCOL_TYPE:
            return []
        changes = [ts for ts, _topic, _count, _signalled in self.topic_changes]
        changes += [ts for ts, _exact, _topics in inc.changes]
        return [
            (ts, since, until)
            for ts, since, until in inc.leader_rejoins
            if not any((since is None or since < at) and at <= until for at in changes)
        ]

    def _actions(self, processes, actual: ActualSettings) -> tuple[list[Action], set[str], set[str]]:
        """Timeline actions per process (absolute instants; pre-existing joins have at=None)."""
        actions: list = []
        member_logged: set[str] = set()
        pre_existing: set[str] = set()
        for name, chain in processes.items():
            if any(inc.logged for inc in chain):
                member_logged.add(name)
            first = chain[0]
            if first.start is None:
                pre_existing.add(name)
            actions.append(
                Join(at=first.start, member=name, topics=first.subscription, instance_id=first.instance_id)
            )
            # a member in the group before the input acts from the input's start on, where the JoinGroup
            # behind the input's first line left its process up to a round trip and a callback earlier
            input_start = (
                self.first_ts - actual.latency.join_round_trip_ms - actual.latency.revoke_callback_ms
            )
            busy_until = first.start if first.start is not None else input_start
            for index, inc in enumerate(chain):
                actions.extend(
                    Heartbeat(at=at, member=name)
                    for at in self._heartbeat_instants(inc, actual)
                    if (inc.start is None or at > inc.start) and (inc.end is None or at < inc.end)
                )
                for ts, _exact, topics in inc.changes:
                    at = max(ts, busy_until or ts, inc.start or ts)
                    if inc.end is not None and at >= inc.end:
                        continue
                    actions.append(Subscribe(at=at, member=name, topics=topics))
                actions.extend(
                    EnforceRebalance(at=ts, member=name)
                    for ts, _exact in inc.enforced
                    if ts > max(busy_until or ts - 1, inc.start or ts - 1)
                    and (inc.end is None or ts < inc.end)
                )
                following = chain[index + 1] if index + 1 < len(chain) else None
                step, busy_until = self._transition(name, inc, following, actual, busy_until)
                actions.extend(step)
        return actions, member_logged, pre_existing

    def _heartbeat_instants(self, inc: _Incarnation, actual: ActualSettings) -> list[int]:
        """When the member's heartbeats went out, from the evidence (see the kinds above), so that the
        replayed member learns of each rebalance when the real one did. A member that had to rejoin by
        the end of a join phase it did not cause sent its JoinGroup half a round trip before, after its
        revocation callback (eager: onJoinPrepare revokes everything), learning of the rebalance at its
        heartbeat before that; such an instant before the rebalance began says nothing (it rejoined of its
        own accord)."""
        latency = actual.latency
        rtt = latency.join_round_trip_ms
        prepare = latency.revoke_callback_ms if actual.protocol == "eager" and inc.owns is not False else 0
        network = max(1, rtt // 2)  # the KIP-848 simulator's one way (plan: network_ms)
        instants = []
        for ts, kind, started in inc.heartbeats:
            if kind == HEARTBEAT_ANSWERED:
                at = ts
            elif kind == JOIN_COMPLETED:
                at = ts - rtt // 2 - prepare
            elif kind == JOIN_RESPONDED:
                at = ts - rtt - prepare
            elif kind == KIP848_ARRIVED:
                at = ts - network
            else:  # KIP848_ANSWERED: sent, arrived, answered
                at = ts - 2 * network
            if (
                kind in (JOIN_COMPLETED, JOIN_RESPONDED)
                and started is not None
                and started - rtt < at <= started
            ):
                # rejoined within a round trip of the round's start: told at its first heartbeat after the
                # start (the fitted latencies are medians; this phase was as fast as a round trip allows)
                at = started + 1
            if started is None or at > started:
                instants.append(at)
        kept: list[int] = []
        for at in sorted(instants):  # one heartbeat seen from both sides is one heartbeat
            if not kept or at - kept[-1] > _SAME_HEARTBEAT_MS:
                kept.append(at)
        return kept

    def _transition(
        self, name: str, inc: _Incarnation, nxt: _Incarnation | None, actual: ActualSettings, busy
    ):
        """The actions that end one incarnation of a process and bring back its next one (if any).
        Returns them and the instant from which the process may act again (Timeline validation)."""
        if inc.end_kind is None or (inc.end_kind == REPLACED and nxt is None):
            return [], busy
        floor = busy if busy is not None else self.first_ts
        end = max(inc.end if inc.end is not None else floor, floor)
        if nxt is None:
            if inc.end_kind == POLL or (inc.end_kind == LEFT and self._left_on_poll_timeout(inc, None)):
                self.notes.append(
                    f"{name} left on a poll timeout and did not rejoin in the input: replayed as a leave"
                )
            if inc.end_kind == EXPIRED and inc.instance_id and self._closed_static(inc):
                # a static member's close() for good: revoked, no LeaveGroup, removed a session later
                # (KIP-345): it left at its revocation, not at its last heartbeat
                return [Leave(at=max(inc.last_member_ts, floor), member=name)], end
            if inc.end_kind == FAILED and inc.missed_join_phase_at is not None:
                return [self._stalled_for_good(name, inc, floor)], end
            stop = Leave if inc.end_kind in (LEFT, POLL) else Crash
            return [stop(at=end, member=name)], end
        back = nxt.start if nxt.start is not None else nxt.first_seen
        if inc.revived_at is not None and inc.revived_at <= back:
            resume = inc.revived_at
            if inc.revived_on_answer:  # the KIP-848 simulator's one way each (plan: network_ms)
                resume = max(resume - 2 * max(1, actual.latency.join_round_trip_ms // 2), end)
        elif inc.owns is not False:  # on its return it first ran onPartitionsLost, then sent the JoinGroup
            resume = max(back - actual.latency.revoke_callback_ms, end)
        else:
            resume = back
        # proof that the same process came back after the group dropped it: its own log after the
        # removal, or its rejoin's client reason (AbstractCoordinator: "encountered UNKNOWN_MEMBER_ID")
        fenced = "unknown_member_id" in (nxt.join_reason or "").lower()
        kind, paused = inc.end_kind, inc.alive_after_end or fenced or self.options.expired_rejoin == "pause"
        closed = self._closed_static(inc) and inc.last_member_ts <= back
        if kind in (EXPIRED, REPLACED, RESET) and closed:
            return self._bounce(name, inc.last_member_ts, back, True, floor, inc, nxt)
        if kind == REPLACED and self._left_on_poll_timeout(inc, nxt):
            # a static member back from a poll timeout (no LeaveGroup): stalled at least max.poll.interval.ms
            paused_at = max(resume - actual.max_poll_interval_ms - 1, floor + 1)
            return [Pause(at=paused_at, member=name, duration_ms=resume - paused_at, kind="poll")], resume + 1
        if kind == REPLACED:
            # KIP-345, killed: the crash instant is in no log. A rebalance it did not rejoin before its
            # replacement shows it was gone by then; else down 0 (the replayer stops it at the replacement)
            seen = max(t for t in (inc.last_join_at, inc.start, inc.first_seen) if t is not None)
            missed = next((p for p in self.prepared_at if seen < p < back), back)
            return self._bounce(name, missed, back, False, floor, inc, nxt)
        if inc.poll_timeout_at is not None:  # its poll loop was away for max.poll.interval.ms
            kind, end = POLL, max(inc.poll_timeout_at, floor)
        elif kind == LEFT and self._left_on_poll_timeout(inc, nxt):
            kind = POLL
        elif kind == FAILED and inc.removal_reason == RemovalReason.REBALANCE_TIMEOUT.value:
            kind = POLL  # it did not rejoin within the rebalance timeout: its poll loop was away as long
        if kind == RESET:
            # its own log only, then a JoinGroup without member id from its process: it was dropped while
            # alive (it lost its partitions: a pause of at least a session timeout), or it is a new process
            # (killed and restarted at an instant no log shows: down 0)
            if inc.lost_at is not None:
                kind, paused, resume = EXPIRED, True, inc.lost_at
                end = max(resume - actual.session_timeout_ms - 1, floor)
            else:
                return self._bounce(name, back, back, False, floor, inc, nxt)
        if kind == POLL:
            paused_at = end - actual.max_poll_interval_ms
            if floor < paused_at < resume:
                return [
                    Pause(at=paused_at, member=name, duration_ms=resume - paused_at, kind="poll")
                ], resume + 1
            self.notes.append(f"{name}: poll timeout of unknown start: replayed as a leave and a rejoin")
            kind = LEFT
        if kind == EXPIRED and paused and resume >= end + actual.session_timeout_ms:
            # a GC pause the session timeout did not outlast: frozen from its last heartbeat to its revival
            return [Pause(at=end, member=name, duration_ms=resume - end, kind="gc")], resume + 1
        return self._bounce(name, end, back, kind == LEFT, floor, inc, nxt)

    def _stalled_for_good(self, name: str, inc: _Incarnation, floor: int) -> Stall:
        """Removed for not rejoining a join phase within its rebalance timeout, and never back: its
        heartbeats kept its session alive (else the session timeout would have removed it) while its
        poll loop, which sends the JoinGroup, never ran again (GroupCoordinator.onCompleteJoin removes
        such members; a crash would have been a session expiry, a rebalance more). Its poll timer had not
        expired by the removal (AbstractCoordinator.HeartbeatThread would have left on it first, and the
        rebalance timeout is max.poll.interval.ms), so the poll loop stalled after the join phase began."""
        self.notes.append(
            f"{name} did not rejoin the rebalance of {format_ts(inc.missed_join_phase_at)} within its rebalance "
            "timeout and never came back: replayed as its poll loop stalling for good"
        )
        return Stall(at=max(inc.missed_join_phase_at + 1, floor), member=name)

    @staticmethod
    def _closed_static(inc: _Incarnation) -> bool:
        """Its own log ends with a revocation and no LeaveGroup: a static member's close() (KIP-345;
        AbstractCoordinator.maybeLeaveGroup sends LeaveGroup for dynamic members only)."""
        return inc.last_member_event == EventType.PARTITIONS_REVOKED.value

    def _bounce(
        self, name: str, end: int, back: int, graceful: bool, floor: int, inc: _Incarnation, nxt: _Incarnation
    ):
        """Down at `end`, back at `back`. A restart: closed and back within the bounce window (a static
        member that sent a LeaveGroup left for good: Kafka's static close sends none), or killed and back
        within its session timeout; otherwise a leave or crash and a new join. A restarted process rejoins
        with its old subscription, so a changed one is a new join too."""
        end = max(end, floor)
        back = max(back, end)
        before = inc.changes[-1][2] if inc.changes else inc.subscription
        same_topics = nxt.subscription is None or before is None or set(nxt.subscription) == set(before)
        if graceful:
            # a static member's LeaveGroup (classic) is for good, unless the instance came back as its
            # replacement (KIP-848's temporary leave, epoch -2)
            for_good = inc.instance_id and inc.end_kind == LEFT and not inc.successor
            restart = back - end <= self.options.bounce_window_ms and not for_good
        else:
            restart = back - end <= self._session_timeout()
        if restart and same_topics:
            return [Restart(at=end, member=name, down_ms=back - end, graceful=graceful)], back + 1
        stop = Leave(at=end, member=name) if graceful else Crash(at=end, member=name)
        join_at = max(back, end + 1)
        return [
            stop,
            Join(at=join_at, member=name, topics=nxt.subscription, instance_id=nxt.instance_id),
        ], join_at


def _client_key(e: Event) -> str:
    """Who sent a JoinGroup, across member ids: instance id and client id (member log: its source)."""
    client = e.client_id or (e.source if e.side == Side.MEMBER.value else None) or ""
    return f"{e.group_instance_id or ''}|{client}"


def _unique_name(base: str, taken: Mapping[str, Any]) -> str:
    if base not in taken:
        return base
    n = 2
    while f"{base}#{n}" in taken:
        n += 1
    return f"{base}#{n}"


def _release(text: str) -> tuple[int, int]:
    major, minor = text.split(".")[:2]
    return int(major), int(minor)


def _wording_releases() -> dict[str, tuple[tuple[int, int], tuple[int, int]]]:
    """Member-side wording name -> (oldest, newest) release printing it ("2.4-2.5", "2.4+", "2.3");
    wordings with a second life elsewhere ("1.0-2.3 (KIP-848 membership manager 3.7+)") bound nothing."""
    out = {}
    for pattern in PATTERNS:
        versions = pattern.versions.strip()
        if pattern.side != Side.MEMBER or "(" in versions:
            continue
        if versions.endswith("+"):
            out[pattern.name] = (_release(versions[:-1]), _NEWEST)
        else:
            low, _, high = versions.partition("-")
            out[pattern.name] = (_release(low), _release(high or low))
    return out


_NEWEST = (99, 0)  # "+": up to the newest release
_STICKY_CHANGE = (2, 6)  # AbstractStickyAssignor.constrainedAssign (rebalance_core.assignors.sticky_2_5)
_WORDING_RELEASES = _wording_releases()


def _most_common(counter: Counter) -> Any:
    return counter.most_common(1)[0][0] if counter else None
