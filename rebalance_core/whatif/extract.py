"""Extraction: a group's events -> its membership timeline, actual settings and latency model
(see the package docstring for the table of evidence -> timeline action).

`TimelineExtractor` is fed one group's events and, at `finish()`, corrects the coordinator's instants
by the fitted latencies (a JoinGroup leaves its process half a round trip before the coordinator logs
it: AbstractCoordinator's request timing) and assembles the `Timeline`. What each kind of line
teaches it lives beside it, one responsibility a module:

    incarnations.py         one member id of one process (Incarnation), join phases (Round), bookkeeping
    coordinator_side.py     the coordinator's joins, removals, static replacements, classic join phases
    coordinator_kip848.py   the KIP-848 coordinator's epochs and member states (GroupMetadataManager)
    member_side.py          a member's own lines (AbstractCoordinator, ConsumerCoordinator, KIP-848 client)
    settings.py             the group's actual settings (ActualSettings) and its clients' release
    topics.py               partition counts and their changes
    actions.py              incarnations chained into processes and turned into timeline actions
    transitions.py          how an incarnation ends and its process comes back (leave, crash, restart, pause)
    view.py                 what the input's view cannot show (the model check's limits)
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from dataclasses import dataclass

from rebalance_core.assignors.protocols import CONNECT_PROTOCOL_TYPE, CONNECT_PROTOCOLS
from rebalance_core.consumer import is_consumer_protocol_event
from rebalance_core.events import Event, format_ts
from rebalance_core.latency import LatencyFit
from rebalance_core.replay_common import ReplaySettings
from rebalance_core.timeline import Join, PartitionCount, Timeline
from rebalance_core.whatif.actions import TimelineActions
from rebalance_core.whatif.config import WARMUP_MARGIN_MS, ExtractionOptions, WhatIfError
from rebalance_core.whatif.coordinator_kip848 import ConsumerGroupEvidence
from rebalance_core.whatif.coordinator_side import CoordinatorEvidence
from rebalance_core.whatif.incarnations import EXPIRED, GENERATIONS_KEPT, LEFT, RESET, Incarnation
from rebalance_core.whatif.member_side import MemberEvidence
from rebalance_core.whatif.settings import ActualSettings, SettingsEvidence
from rebalance_core.whatif.topics import TopicEvidence
from rebalance_core.whatif.view import ViewLimits
from schemas.events import EventType, Side


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


# coordinator lines stating the generation's member count ("Stabilized group G generation N with M
# members", 2.8+; "The group has M members", 3.0+): the members the timeline must hold then
_COUNTED_AT = frozenset({EventType.JOIN_COMPLETED.value, EventType.ASSIGNMENT_RECEIVED.value})


class TimelineExtractor(
    CoordinatorEvidence,
    ConsumerGroupEvidence,
    MemberEvidence,
    SettingsEvidence,
    TopicEvidence,
    TimelineActions,
    ViewLimits,
):
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
        self.first_ts: int | None = None
        self.last_ts: int | None = None
        self.has_coordinator = False
        self.kip848 = False
        self.notes: list[str] = []
        self.stated_counts: list[tuple[int, int]] = []  # (ts, member count a coordinator line states)
        self._init_membership()
        self._init_coordinator_side()
        self._init_consumer_group()
        self._init_member_side()
        self._init_settings()
        self._init_topics()

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
            del self.stated_counts[:-GENERATIONS_KEPT]
        elif e.side == Side.MEMBER.value:
            self._member_view_gap(e)
            self._bound_release(e)

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

    def _unexplained(self, inc: Incarnation, actual: ActualSettings) -> list[tuple[int, int | None, int]]:
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
