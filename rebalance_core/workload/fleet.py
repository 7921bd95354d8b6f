"""The workload generator's plans: a fleet of consumer groups and the incidents of each over days.

Models a Kafka user's fleet, not a Kafka class: who runs which groups with which client settings, and
what operations (Kubernetes-style) happen to them. The one Kafka rule used: the coordinator of a group
is the leader of its __consumer_offsets partition (`partition_for`, GroupCoordinator.partitionFor).
Pure and deterministic: a seed gives the same fleet and the same incidents. `segments` turns a plan
into simulator runs.

The fleet
    Many groups of skewed sizes (most 2-6 members, a few 200-500; 1-10k partitions over 1-3 topics) on a
    few clusters, each group one of four kinds: `eager` (range / roundrobin / sticky), `cooperative`
    (cooperative-sticky, KIP-429), `static` (group.instance.id, KIP-345) or `consumer` (KIP-848 consumer
    protocol, `rebalance_core.consumer`). KIP-848 groups stay at <= 100 members: the KIP-848
    simulator's cost per heartbeat grows with the group, and idle heartbeats dominate its run time.

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
"""

from __future__ import annotations

import base64
import hashlib
import math
import random
from collections.abc import Iterable
from dataclasses import dataclass

from rebalance_core.kafka_logs.writer_lines import partition_for
from rebalance_core.measure_records import DAY_MS

MINUTE_MS = 60_000
MAX_PARTITIONS = 10_000

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
        return tuple(member_name(self, i) for i in range(self.members))


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


def nice_count(count: float) -> int:
    """Round a partition count the way people pick them (12, 24, 60, ... 1000)."""
    if count <= NICE_COUNTS[-1]:
        return next(n for n in NICE_COUNTS if n >= count)
    step = 10 ** (len(str(int(count))) - 2) * 2
    return min(MAX_PARTITIONS, int(math.ceil(count / step) * step))


def _pick_topics(rng: random.Random, app: str, members: int) -> tuple[tuple[str, int], ...]:
    total = nice_count(max(1.0, members * rng.choice(PARTITIONS_PER_MEMBER)))
    count = rng.choices((1, 2, 3), (6, 3, 1))[0]
    topics = [(f"{app}.{TOPIC_SUFFIXES[0]}", total)]
    for suffix in TOPIC_SUFFIXES[1:count]:  # smaller side topics (retry, changelog)
        topics.append((f"{app}.{suffix}", nice_count(max(1, total // rng.choice((2, 4, 8))))))
    return tuple(topics)


def member_name(plan: GroupPlan, number: int) -> str:
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
