"""Realistic workloads for benchmarks: a fleet of consumer groups over days, as simulator runs.

Pure and deterministic (no I/O, no clock): a seed gives the same fleet, the same timelines and, through
the seeded simulators, the same events. `jobs/generate.py` writes the files.

The fleet
    Many groups of skewed sizes (most 2-6 members, a few 200-500; 1-10k partitions over 1-3 topics) on a
    few clusters, each group one of four kinds: `eager` (range / roundrobin / sticky), `cooperative`
    (cooperative-sticky, KIP-429), `static` (group.instance.id, KIP-345) or `consumer` (KIP-848 consumer
    protocol, `rebalance_core.consumer`). KIP-848 groups stay at <= 100 members: the KIP-848
    simulator's cost per heartbeat grows with the group, and idle heartbeats dominate its run time.
    The coordinator of a group is the leader of its __consumer_offsets partition (`partition_for`).

What happens to a group (incidents, Kubernetes-style operations):
    cold_start          every member starts within a minute (the first thing in each segment)
    rolling_deploy      each member bounced in turn (graceful close, back after 5-30 s); groups above 20
                        dynamic members bounce in waves of 25% (a Deployment's default maxUnavailable),
                        static groups one by one (a StatefulSet)
    recreate_deploy     every member leaves, the new version starts minutes later (ends a segment)
    crash               a member is killed (no LeaveGroup) and restarted 20 s - 3 min later
    gc_pause            a member freezes for longer than session.timeout.ms
    poll_stall          a member's poll loop stalls beyond max.poll.interval.ms
    scale_out/scale_in  an autoscaler adds / removes up to a quarter of the members at once, between
                        half and twice the group's planned size (min/max replicas)
    partition_increase  a topic's partition count grows (x1.5 or x2)

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

import base64
import bisect
import hashlib
import math
import random
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace

from rebalance_core.consumer import ConsumerSimSettings, simulate_consumer_group
from rebalance_core.consumer.simulate import BROKER_MAX_SESSION_TIMEOUT_MS, BROKER_MIN_SESSION_TIMEOUT_MS
from rebalance_core.events import Event
from rebalance_core.kafka_logs.writer import partition_for
from rebalance_core.simulate import SimulationSettings, simulate
from rebalance_core.timeline import Action, Join, Leave, PartitionCount, Pause, Restart, Timeline

DAY_MS = 86_400_000
MINUTE_MS = 60_000
MAX_PARTITIONS = 10_000
SEGMENT_EVENT_BUDGET = 100_000  # estimated events per simulation (memory of one segment)

EAGER, COOPERATIVE, STATIC, CONSUMER = "eager", "cooperative", "static", "consumer"
GROUP_KINDS = (EAGER, COOPERATIVE, STATIC, CONSUMER)

COLD_START = "cold_start"
ROLLING_DEPLOY = "rolling_deploy"
RECREATE_DEPLOY = "recreate_deploy"
CRASH = "crash"
GC_PAUSE = "gc_pause"
POLL_STALL = "poll_stall"
SCALE_OUT = "scale_out"
SCALE_IN = "scale_in"
PARTITION_INCREASE = "partition_increase"

# ------------------------------------------------------------------------------------------ the fleet
# (probability, min members, max members): most groups small, a few big (log-uniform within a bin)
SIZE_BINS = ((0.60, 2, 6), (0.25, 7, 20), (0.10, 21, 80), (0.04, 81, 200), (0.01, 201, 500))
# kind weights (eager, cooperative, static, consumer) by the largest group size they apply to
KIND_WEIGHTS = ((20, (40, 25, 15, 20)), (100, (25, 30, 25, 20)), (500, (15, 35, 50, 0)))
KIP848_MAX_MEMBERS = 100
PARTITIONS_PER_MEMBER = (0.5, 1, 1, 2, 2, 3, 4, 6, 8, 12)
CLUSTERS = (("prod-eu", 0.5, 6), ("prod-us", 0.35, 9), ("staging", 0.15, 3))  # name, share, brokers
APPS = (
    "orders", "payments", "billing", "inventory", "shipping", "clicks", "search", "audit", "fraud",
    "pricing", "ledger", "notifications", "sessions", "metrics", "recommendations", "checkout",
    "catalog", "users", "emails", "geo",
)  # fmt: skip
ROLES = ("processor", "enricher", "sink", "indexer", "aggregator", "router", "validator", "archiver")
TOPIC_SUFFIXES = ("events", "retry", "changelog")
NICE_COUNTS = (1, 2, 3, 4, 5, 6, 8, 10, 12, 16, 20, 24, 30, 32, 36, 40, 48, 50, 60, 64, 72, 80, 96, 100)

# expected incidents per group and day (at most one of each kind per day, except autoscaling)
DEPLOYS_PER_DAY = (0.15, 0.3, 0.5, 1.0)
CRASHES_PER_DAY = 0.15
GC_PAUSES_PER_DAY = 0.08
POLL_STALLS_PER_DAY = 0.05
SCALINGS_PER_DAY = 0.05  # groups without an autoscaler
PARTITION_INCREASES_PER_DAY = 0.02
AUTOSCALED_SHARE = 0.3  # these scale out every morning and in every evening
RECREATE_SHARE = 0.1  # groups deployed with the Recreate strategy


@dataclass(frozen=True)
class GroupPlan:
    """One consumer group of the fleet: what it is and how it is run."""

    index: int
    cluster: str
    group_id: str
    kind: str  # GROUP_KINDS
    assignor: str
    members: int  # at the first cold start
    topics: tuple[tuple[str, int], ...]  # (topic, partitions)
    broker_id: int  # coordinator: the leader of __consumer_offsets-{offsets_partition}
    offsets_partition: int
    session_timeout_ms: int
    max_poll_interval_ms: int
    deploys_per_day: float
    recreate: bool  # deploys stop every member first (Recreate strategy)
    autoscaled: bool
    seed: int

    @property
    def longest_timer_ms(self) -> int:
        """The longest protocol timer that can run silently (session expiry, rebalance timeout)."""
        return max(self.session_timeout_ms, self.max_poll_interval_ms) + 1_000

    @property
    def member_names(self) -> tuple[str, ...]:
        return tuple(_member_name(self, i) for i in range(self.members))


def topic_id(cluster: str, topic: str) -> str:
    """A stable Kafka-style topic id (Uuid printed as 22 url-safe base64 characters)."""
    digest = hashlib.blake2b(f"{cluster}/{topic}".encode(), digest_size=16).digest()
    return base64.urlsafe_b64encode(digest).decode().rstrip("=")


def plan_group(index: int, seed: int) -> GroupPlan:
    """The index-th group of the fleet of `seed` (independent of the fleet's size)."""
    rng = random.Random(f"{seed}:group:{index}")
    cluster, brokers = _pick_cluster(rng)
    members = _pick_size(rng)
    kind = _pick_kind(rng, members)
    app, role = rng.choice(APPS), rng.choice(ROLES)
    group_id = f"{app}-{role}-{index:04d}"
    offsets_partition = partition_for(group_id)
    if kind == EAGER:
        assignor = rng.choices(("range", "roundrobin", "sticky"), (6, 2, 2))[0]
    elif kind == COOPERATIVE:
        assignor = "cooperative-sticky"
    elif kind == STATIC:
        assignor = rng.choice(("range", "sticky", "cooperative-sticky"))
    else:
        assignor = rng.choices(("uniform", "server-range"), (8, 2))[0]
    if kind == STATIC:  # KIP-345 advice: a session timeout that covers a restart
        session_timeout_ms = rng.choice((45_000, 60_000, 120_000, 300_000))
    else:
        session_timeout_ms = rng.choices((45_000, 30_000, 10_000), (7, 2, 1))[0]
    big = members > 100
    return GroupPlan(
        index=index,
        cluster=cluster,
        group_id=group_id,
        kind=kind,
        assignor=assignor,
        members=members,
        topics=_pick_topics(rng, app, members),
        broker_id=offsets_partition % brokers + 1,
        offsets_partition=offsets_partition,
        session_timeout_ms=session_timeout_ms,
        max_poll_interval_ms=rng.choices((300_000, 120_000, 600_000), (8, 1, 1))[0],
        deploys_per_day=rng.choice(DEPLOYS_PER_DAY[:2] if big else DEPLOYS_PER_DAY),
        recreate=rng.random() < RECREATE_SHARE,
        autoscaled=kind != STATIC and rng.random() < AUTOSCALED_SHARE,
        seed=rng.getrandbits(32),
    )


def plan_fleet(groups: int, seed: int) -> list[GroupPlan]:
    return [plan_group(i, seed) for i in range(groups)]


def single_group_plan(seed: int) -> GroupPlan:
    """The one big group of the memory benchmark: 150 dynamic members (eager range), 1500 partitions,
    rebalancing around the clock (see `group_segments(..., events_target=N)`)."""
    group_id = "clicks-aggregator-big"
    offsets_partition = partition_for(group_id)
    return GroupPlan(
        index=0,
        cluster="prod-eu",
        group_id=group_id,
        kind=EAGER,
        assignor="range",
        members=150,
        topics=(("clicks.events", 1200), ("clicks.retry", 300)),
        broker_id=offsets_partition % 6 + 1,
        offsets_partition=offsets_partition,
        session_timeout_ms=45_000,
        max_poll_interval_ms=300_000,
        deploys_per_day=1.0,
        recreate=False,
        autoscaled=True,
        seed=random.Random(f"{seed}:single").getrandbits(32),
    )


def _pick_cluster(rng: random.Random) -> tuple[str, int]:
    name, _, brokers = rng.choices(CLUSTERS, [share for _, share, _ in CLUSTERS])[0]
    return name, brokers


def _pick_size(rng: random.Random) -> int:
    _, low, high = rng.choices(SIZE_BINS, [p for p, _, _ in SIZE_BINS])[0]
    return min(high, int(math.exp(rng.uniform(math.log(low), math.log(high + 1)))))


def _pick_kind(rng: random.Random, members: int) -> str:
    weights = next(w for limit, w in KIND_WEIGHTS if members <= limit)
    return rng.choices(GROUP_KINDS, weights)[0]


def _nice(count: float) -> int:
    """Round a partition count the way people pick them (12, 24, 60, ... 1000)."""
    if count <= NICE_COUNTS[-1]:
        return next(n for n in NICE_COUNTS if n >= count)
    step = 10 ** (len(str(int(count))) - 2) * 2
    return min(MAX_PARTITIONS, int(math.ceil(count / step) * step))


def _pick_topics(rng: random.Random, app: str, members: int) -> tuple[tuple[str, int], ...]:
    total = _nice(max(1.0, members * rng.choice(PARTITIONS_PER_MEMBER)))
    count = rng.choices((1, 2, 3), (6, 3, 1))[0]
    topics = [(f"{app}.{TOPIC_SUFFIXES[0]}", total)]
    for suffix in TOPIC_SUFFIXES[1:count]:  # smaller side topics (retry, changelog)
        topics.append((f"{app}.{suffix}", _nice(max(1, total // rng.choice((2, 4, 8))))))
    return tuple(topics)


def _member_name(plan: GroupPlan, number: int) -> str:
    """client.id (and group.instance.id of static members): one per consumer process slot."""
    return f"{plan.group_id}-{number}"


# ------------------------------------------------------------------------------------------ incidents
@dataclass(frozen=True)
class Incident:
    kind: str
    at_ms: int  # planned real time (epoch ms); moved later when the previous one is not over


def plan_incidents(plan: GroupPlan, start_ms: int, days: int) -> list[Incident]:
    """The group's incidents over `days` days from `start_ms`, by planned real time."""
    rng = random.Random(f"{plan.seed}:incidents")
    out: list[Incident] = []
    for day in range(days):
        day_start = start_ms + day * DAY_MS
        if rng.random() < plan.deploys_per_day:
            out.append(
                Incident(RECREATE_DEPLOY if plan.recreate else ROLLING_DEPLOY, _at(rng, day_start, 8, 17))
            )
        if rng.random() < CRASHES_PER_DAY:
            out.append(Incident(CRASH, _at(rng, day_start, 0, 23)))
        if rng.random() < GC_PAUSES_PER_DAY:
            out.append(Incident(GC_PAUSE, _at(rng, day_start, 0, 23)))
        if rng.random() < POLL_STALLS_PER_DAY:
            out.append(Incident(POLL_STALL, _at(rng, day_start, 0, 23)))
        if plan.autoscaled:
            out.append(Incident(SCALE_OUT, _at(rng, day_start, 6, 9)))
            out.append(Incident(SCALE_IN, _at(rng, day_start, 19, 22)))
        elif rng.random() < SCALINGS_PER_DAY:
            out.append(Incident(rng.choice((SCALE_OUT, SCALE_IN)), _at(rng, day_start, 0, 23)))
        if rng.random() < PARTITION_INCREASES_PER_DAY:
            out.append(Incident(PARTITION_INCREASE, _at(rng, day_start, 0, 23)))
    return sorted(out, key=lambda i: i.at_ms)


def _at(rng: random.Random, day_start: int, first_hour: int, last_hour: int) -> int:
    """A random instant between two hours of the day (UTC)."""
    return day_start + rng.randint(first_hour * 3_600_000, last_hour * 3_600_000)


def busy_incidents(plan: GroupPlan, start_ms: int, rng: random.Random) -> Iterable[Incident]:
    """An endless stream of incidents one after another (the single big group): mostly crashes, pauses
    and autoscaling, a rolling deploy every tenth incident. `at_ms` is only a lower bound."""
    kinds = (CRASH, SCALE_OUT, GC_PAUSE, SCALE_IN, CRASH, POLL_STALL, SCALE_OUT, CRASH, SCALE_IN)
    while True:
        for kind in (*kinds, ROLLING_DEPLOY):
            yield Incident(kind, start_ms)
            start_ms += rng.randint(MINUTE_MS, 20 * MINUTE_MS)


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
        walk.members = [_member_name(plan, walk.next_number + i) for i in range(len(members))]
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
        names = [_member_name(plan, walk.next_number + i) for i in range(max(0, count))]
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
        grown = min(MAX_PARTITIONS, _nice(count * rng.choice((1.5, 2.0))))
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
