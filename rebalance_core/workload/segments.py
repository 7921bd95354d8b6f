"""The workload generator's runs: a group's planned incidents as simulator segments, and back to one history.

Lays a `fleet.GroupPlan`'s incidents out as `Timeline`s for the simulators (the classic one,
`rebalance_core.simulate`, or the KIP-848 one, `rebalance_core.consumer`), runs them, and joins their
events into one history per group the way Kafka continues an Empty group: the classic generation
(ClassicGroup.generationId) and the KIP-848 group epoch (ConsumerGroup.groupEpoch) run on.

Compressed time
    Only incidents make events (heartbeats are not logged), but the simulators heartbeat through idle
    hours at a cost. So each segment is simulated with its incidents packed close together, each
    incident in a window long enough for the group to settle (its actions + twice the longest protocol
    timer), and the events are then moved to the incident's real time (`stretch`). A window boundary
    is stretched only where the group was provably quiet: no event within the longest timer
    (max(session.timeout.ms, max.poll.interval.ms)) before it, so no timer was pending; otherwise the
    incident simply follows in simulated time. Heartbeat phases are kept from the compressed run.

Segments
    A simulation holds its events in memory, so a group's history is cut into segments at recreate
    deploys (the group is Empty in between), each estimated at <= SEGMENT_EVENT_BUDGET events: where a
    segment would grow beyond, a rolling deploy becomes a recreate deploy, or one is inserted. `GroupStream` joins the
    segments into one history: generations (classic) and epochs (KIP-848) continue where the previous
    segment ended, as Kafka keeps them for an Empty group; event ids and line numbers run on.
"""

from __future__ import annotations

import bisect
import math
import random
from collections.abc import Sequence
from dataclasses import dataclass, field, replace

from rebalance_core.consumer import ConsumerSimSettings, simulate_consumer_group
from rebalance_core.consumer.simulate import BROKER_MAX_SESSION_TIMEOUT_MS, BROKER_MIN_SESSION_TIMEOUT_MS
from rebalance_core.events import Event
from rebalance_core.measure_records import DAY_MS
from rebalance_core.simulate import SimulationSettings, simulate
from rebalance_core.timeline import Action, Join, Leave, PartitionCount, Pause, Restart, Timeline
from rebalance_core.workload.fleet import (
    COLD_START,
    CONSUMER,
    COOPERATIVE,
    CRASH,
    EAGER,
    GC_PAUSE,
    KIP848_MAX_MEMBERS,
    MAX_PARTITIONS,
    MINUTE_MS,
    PARTITION_INCREASE,
    POLL_STALL,
    RECREATE_DEPLOY,
    ROLLING_DEPLOY,
    SCALE_IN,
    SCALE_OUT,
    STATIC,
    GroupPlan,
    busy_incidents,
    member_name,
    nice_count,
    plan_incidents,
    topic_id,
)

SEGMENT_EVENT_BUDGET = 100_000  # estimated events per simulation (memory of one segment)


# ------------------------------------------------------------------------------------------ segments
@dataclass(frozen=True)
class Segment:
    """One simulation: a timeline in compressed time and where its incidents really happen."""

    plan: GroupPlan
    number: int
    timeline: Timeline  # start_ms = the real start of its cold start
    stretch_points: tuple[tuple[int, int], ...]  # (compressed start of an incident, its real start)
    incidents: tuple[str, ...]
    estimated_events: int

    @property
    def settings(self) -> SimulationSettings | ConsumerSimSettings:
        return simulation_settings(self.plan, self.number)


def simulation_settings(plan: GroupPlan, segment: int) -> SimulationSettings | ConsumerSimSettings:
    if plan.kind == CONSUMER:
        return ConsumerSimSettings(
            assignor=plan.assignor,
            session_timeout_ms=plan.session_timeout_ms,
            # a draw below the broker's default minimum (45 s) runs on a broker that lowered it
            min_session_timeout_ms=min(plan.session_timeout_ms, BROKER_MIN_SESSION_TIMEOUT_MS),
            max_session_timeout_ms=BROKER_MAX_SESSION_TIMEOUT_MS,
            max_poll_interval_ms=plan.max_poll_interval_ms,
            coordinator=f"broker-{plan.broker_id}",
            topic_ids={t: topic_id(plan.cluster, t) for t, _ in plan.topics},
        )
    return SimulationSettings(
        assignor=plan.assignor,
        static_membership=plan.kind == STATIC,
        session_timeout_ms=plan.session_timeout_ms,
        max_poll_interval_ms=plan.max_poll_interval_ms,
        heartbeat_interval_ms=min(3_000, plan.session_timeout_ms // 3),
        # network and broker queueing delay; it grows with the group (hundreds of JoinGroup at once)
        network_jitter_ms=min(300, 5 + plan.members),
        seed=random.Random(f"{plan.seed}:segment:{segment}").getrandbits(32),
        coordinator=f"broker-{plan.broker_id}",
    )


@dataclass
class _Walk:
    """The group as the incidents are laid out: its members and topics, and the segment being built."""

    plan: GroupPlan
    rng: random.Random
    members: list[str]
    next_number: int
    topics: dict[str, int]  # partition counts now
    segment: int = 0
    segment_topics: dict[str, int] = field(default_factory=dict)  # partition counts at the segment start
    start_ms: int = 0  # real start of the current segment
    offset_ms: int = 0  # compressed time used so far in the segment (ms after start_ms)
    actions: list[Action] = field(default_factory=list)
    points: list[tuple[int, int]] = field(default_factory=list)
    incidents: list[str] = field(default_factory=list)
    estimate: int = 0
    real_free_ms: int = 0  # the next incident starts no earlier (real time)


def group_segments(
    plan: GroupPlan, start_ms: int, days: int, *, events_target: int | None = None
) -> list[Segment]:
    """The group's history as simulations. Incidents follow `plan_incidents`; with `events_target`
    the group instead rebalances around the clock (`busy_incidents`) until about that many events are
    planned, over as many days as that takes."""
    rng = random.Random(f"{plan.seed}:walk")
    walk = _Walk(plan, rng, list(plan.member_names), plan.members, dict(plan.topics))
    end_ms = start_ms + days * DAY_MS
    segments: list[Segment] = []
    first_start = start_ms + rng.randint(0, 3_600_000)
    _cold_start(walk, first_start)
    planned = (
        busy_incidents(plan, first_start, rng)
        if events_target is not None
        else iter(plan_incidents(plan, start_ms, days))
    )
    total = 0
    for incident in planned:
        at = max(incident.at_ms, walk.real_free_ms)
        if events_target is not None:
            if total + walk.estimate >= events_target:
                break
        elif at + _window(plan, MINUTE_MS) >= end_ms:
            continue
        kind = incident.kind
        over_budget = len(walk.incidents) > 1 and walk.estimate + _estimate(walk, kind) > SEGMENT_EVENT_BUDGET
        if over_budget and kind == ROLLING_DEPLOY:
            kind = RECREATE_DEPLOY  # the history is cut here (see the module docstring)
        elif over_budget:  # cut before the incident: a recreate deploy, then the incident
            total += _recreate(walk, segments, at)
            at = walk.real_free_ms
        if kind == RECREATE_DEPLOY:
            total += _recreate(walk, segments, at)
        else:
            _add_incident(walk, kind, at)
    segments.append(_close_segment(walk))
    return segments


def _recreate(walk: _Walk, segments: list[Segment], real_ms: int) -> int:
    """Every member leaves (closing the segment); the next version cold-starts minutes later. Returns
    the estimated events of the closed segment."""
    downtime = walk.rng.randint(2 * MINUTE_MS, 10 * MINUTE_MS)
    leave_span = _add_incident(walk, RECREATE_DEPLOY, real_ms)
    segments.append(_close_segment(walk))
    walk.segment += 1
    _cold_start(walk, real_ms + leave_span + downtime + 2 * walk.plan.longest_timer_ms)
    return segments[-1].estimated_events


def estimated_events(segments: Sequence[Segment]) -> int:
    return sum(s.estimated_events for s in segments)


def _window(plan: GroupPlan, span_ms: int) -> int:
    """Compressed time given to an incident: its actions, then time to settle and to prove it quiet."""
    return span_ms + 2 * plan.longest_timer_ms + MINUTE_MS


def _cold_start(walk: _Walk, real_ms: int) -> None:
    walk.start_ms = real_ms
    walk.segment_topics = dict(walk.topics)
    walk.offset_ms = 0
    walk.actions, walk.points, walk.incidents, walk.estimate = [], [], [], 0
    walk.real_free_ms = real_ms
    _add_incident(walk, COLD_START, real_ms)


def _close_segment(walk: _Walk) -> Segment:
    plan = walk.plan
    timeline = Timeline(
        topics=walk.segment_topics,
        actions=tuple(walk.actions),
        cluster=plan.cluster,
        group_id=plan.group_id,
        start_ms=walk.start_ms,
    )
    return Segment(
        plan=plan,
        number=walk.segment,
        timeline=timeline,
        stretch_points=tuple(walk.points),
        incidents=tuple(walk.incidents),
        estimated_events=walk.estimate,
    )


def _add_incident(walk: _Walk, kind: str, real_ms: int) -> int:
    """Lay out one incident at the next free compressed instant; returns its span (ms)."""
    estimate = _estimate(walk, kind)
    actions, span = _incident_actions(walk, kind)
    if not actions:
        return 0
    at = walk.offset_ms
    walk.actions.extend(replace(a, at=a.at + at) for a in actions)
    walk.points.append((walk.start_ms + at, real_ms))
    walk.incidents.append(kind)
    walk.estimate += estimate
    window = _window(walk.plan, span)
    walk.offset_ms += window
    walk.real_free_ms = real_ms + window
    return span


def _incident_actions(walk: _Walk, kind: str) -> tuple[list[Action], int]:
    """Timeline actions of one incident (`at` from the incident's start) and when the last one ends."""
    plan, rng, members = walk.plan, walk.rng, walk.members
    actions: list[Action] = []
    if kind == COLD_START:
        spread = min(60_000, 1_000 + 300 * len(members))
        actions = [Join(at=rng.randint(0, spread), member=m) for m in members]
        return actions, spread
    if kind == RECREATE_DEPLOY:
        actions = [Leave(at=rng.randint(0, 2_000), member=m) for m in members]
        walk.members = [member_name(plan, walk.next_number + i) for i in range(len(members))]
        walk.next_number += len(members)
        return actions, 2_000
    if kind == ROLLING_DEPLOY:
        batch = 1 if plan.kind == STATIC or len(members) <= 20 else math.ceil(len(members) / 4)
        t = 0
        for first in range(0, len(members), batch):
            wave_end = t
            for m in members[first : first + batch]:
                at = t + (rng.randint(0, 3_000) if batch > 1 else 0)
                down = rng.randint(5_000, 30_000)
                actions.append(Restart(at=at, member=m, down_ms=down, graceful=True))
                wave_end = max(wave_end, at + down)
            t = wave_end + rng.randint(10_000, 40_000)  # readiness, then the next pod or wave
        return actions, t
    if kind == CRASH:
        down = rng.randint(20_000, 180_000)
        return [Restart(at=0, member=rng.choice(members), down_ms=down, graceful=False)], down
    if kind == GC_PAUSE:
        duration = plan.session_timeout_ms + rng.randint(5_000, 60_000)
        return [Pause(at=0, member=rng.choice(members), duration_ms=duration, kind="gc")], duration
    if kind == POLL_STALL:
        duration = plan.max_poll_interval_ms + rng.randint(10_000, 120_000)
        return [Pause(at=0, member=rng.choice(members), duration_ms=duration, kind="poll")], duration
    if kind == SCALE_OUT:  # the autoscaler raises the replica count: the new pods start together
        ceiling = min(2 * plan.members, KIP848_MAX_MEMBERS if plan.kind == CONSUMER else 500)  # maxReplicas
        count = min(ceiling - len(members), rng.randint(1, max(1, len(members) // 4)))
        names = [member_name(plan, walk.next_number + i) for i in range(max(0, count))]
        walk.next_number += len(names)
        walk.members.extend(names)
        actions = [Join(at=rng.randint(0, 5_000), member=name) for name in names]
        return actions, 5_000
    if kind == SCALE_IN:  # ... or lowers it: the surplus pods are terminated together
        floor = max(1, plan.members // 2)  # minReplicas
        count = max(0, min(len(members) - floor, rng.randint(1, max(1, len(members) // 4))))
        names = rng.sample(members, count)
        for name in names:
            walk.members.remove(name)
        actions = [Leave(at=rng.randint(0, 2_000), member=name) for name in names]
        return actions, 2_000
    if kind == PARTITION_INCREASE:
        topic = rng.choice(sorted(walk.topics))
        count = walk.topics[topic]
        grown = min(MAX_PARTITIONS, nice_count(count * rng.choice((1.5, 2.0))))
        if grown <= count:
            return [], 0
        walk.topics[topic] = grown
        return [PartitionCount(at=0, topic=topic, count=grown)], 0
    raise ValueError(f"unknown incident kind {kind!r}")


# Events per member per rebalance (classic: both sides of JoinGroup/SyncGroup + callbacks; cooperative:
# two rounds; KIP-848: epoch updates, state changes, callbacks), measured on simulator runs.
_EVENTS_PER_MEMBER = {EAGER: 8.5, COOPERATIVE: 12.0, CONSUMER: 3.0}


def _estimate(walk: _Walk, kind: str) -> int:
    """Events an incident will make (a rough model, used to size segments and fleets)."""
    plan, n = walk.plan, max(1, len(walk.members))
    protocol = plan.kind
    if protocol == STATIC:
        protocol = COOPERATIVE if plan.assignor == "cooperative-sticky" else EAGER
    rebalance = _EVENTS_PER_MEMBER[protocol] * n + 6
    if kind == COLD_START:  # one rebalance; nobody has partitions to revoke yet
        return int(5 * n + 6)
    if kind == RECREATE_DEPLOY:
        return int(3 * n + 2 * rebalance)
    if kind == ROLLING_DEPLOY:
        if plan.kind == STATIC:  # back within the session timeout: no rebalance
            return 4 * n
        # one by one: a rebalance as each member leaves and one as it returns; in waves, the returns of
        # a wave's members straggle over seconds and each one rebalances the group
        return int(2 * n * rebalance) if n <= 20 else int(30 * rebalance)
    if kind == CRASH and plan.kind == STATIC:
        return int(rebalance / 2)  # often back within the session timeout: no rebalance at all
    if kind in (CRASH, GC_PAUSE, POLL_STALL):
        return int(2 * rebalance)
    if kind in (SCALE_OUT, SCALE_IN):  # joins / leaves within seconds: one or two rebalances
        return int(2 * rebalance)
    return int(rebalance)


# ------------------------------------------------------------------------------------------ running
def simulate_segment(segment: Segment) -> list[Event]:
    """Run the segment's simulator and move each incident's events to its real time."""
    settings = segment.settings
    if isinstance(settings, ConsumerSimSettings):
        events = simulate_consumer_group(segment.timeline, settings).events
    else:
        events = simulate(segment.timeline, settings).events
    stretch(events, segment.stretch_points, segment.plan.longest_timer_ms)
    return events


def stretch(events: list[Event], points: Sequence[tuple[int, int]], quiet_ms: int) -> None:
    """Shift events in place: those from a stretch point's compressed start on move by (real start -
    compressed start), provided no event happened within `quiet_ms` before that point (the group was
    settled, no timer pending); otherwise they keep the previous shift. Shifts never decrease, so the
    order of events is kept."""
    if not events:
        return
    times = [e.ts for e in events]
    shifts: list[tuple[int, int]] = []  # (compressed start, shift)
    shift = 0
    for compressed, real in points:
        before = bisect.bisect_left(times, compressed)
        quiet = before == 0 or times[before - 1] <= compressed - quiet_ms
        if quiet:
            shift = max(shift, real - compressed)
        shifts.append((compressed, shift))
    starts = [c for c, _ in shifts]
    for event in events:
        k = bisect.bisect_right(starts, event.ts) - 1
        if k >= 0:
            event.ts += shifts[k][1]


class GroupStream:
    """Joins a group's segments into one history (see the module docstring). Not thread-safe; one per
    group, fed its segments in order."""

    MIN_GAP_MS = MINUTE_MS  # between the last event of a segment and the first of the next

    def __init__(self) -> None:
        self.generation = 0  # classic: the last generation so far
        self.epoch = 0  # KIP-848: the last group epoch so far
        self.line = 0
        self.last_ts: int | None = None
        self.shift_ms = 0  # added to every later segment when one ran past the next one's start

    def join(self, events: list[Event]) -> list[Event]:
        """Renumber one segment's events in place (ids, lines, generations, epochs, time)."""
        if not events:
            return events
        if self.last_ts is not None and events[0].ts + self.shift_ms < self.last_ts + self.MIN_GAP_MS:
            self.shift_ms = self.last_ts + self.MIN_GAP_MS - events[0].ts
        generation, epoch = self.generation, self.epoch
        for event in events:
            event.ts += self.shift_ms
            self.line += 1
            event.line = self.line
            event.event_id = f"{event.group_id}-{self.line}"
            if event.generation_id is not None and event.generation_id >= 0:
                event.generation_id += generation
                self.generation = max(self.generation, event.generation_id)
            if event.group_epoch is not None:
                event.group_epoch += epoch
                self.epoch = max(self.epoch, event.group_epoch)
            if event.assignment_epoch is not None:
                event.assignment_epoch += epoch
            if event.member_epoch is not None and event.member_epoch > 0:
                event.member_epoch += epoch
            previous = event.attributes.get("previous_epoch")
            if previous is not None and previous.isdigit() and int(previous) > 0:
                event.attributes["previous_epoch"] = str(int(previous) + epoch)
        self.last_ts = events[-1].ts
        return events
