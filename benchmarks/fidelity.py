"""The fidelity matrix: the same simulated history, written as Kafka logs in every view, replayed and
compared with the simulator's truth, per measure.

    .venv/bin/python -m benchmarks.fidelity                  # full: fixed cases, 1000 random, 100 fleet;
                                                             # writes docs/fidelity.md (~3 min on 2 cores)
    .venv/bin/python -m benchmarks.fidelity --workloads 200 --fleet 20 --out -   # smaller, no report
    .venv/bin/python -m benchmarks.fidelity --quick          # a smoke run (~70 cases)
    .venv/bin/python -m benchmarks.fidelity --case random:17 --view broker-3.x   # one case, in detail

The output is deterministic: the same code and options give the same rows and the same report, whatever
the number of processes (no wall-clock time in the report). Every outcome that is not exact carries the
kind of mismatch (`Outcome.mismatch`: "extra member", "rounds split into more rebalances", "phantom",
"over, beyond the bound", ...); the report tallies them per view with the first case of each as example,
and the run ends by printing each view's most frequent silently wrong kinds.

Cases (a case id reproduces its workload exactly):
    sim:<name>           a scenario of conf/simulations
    test:<name>          a timeline the tests simulate (tests/logs/test_writer_roundtrip.py)
    hand:<name>          a hand-written event log of tests/core/replay_scenarios.py; it has no simulator
                         truth, so its reference is the replay of its canonical events (the log views
                         are then measured against what the events themselves give)
    random:<seed>        a seeded random workload: 2-6 members, joins, leaves, crashes, restarts
                         (graceful or killed), GC and poll pauses, subscription and partition count
                         changes, leader churn, rarely a poll loop stalled for good or an
                         enforceRebalance(), under eager, cooperative, static (KIP-345), KIP-415
                         delayed (cooperative) and KIP-848 consumer-protocol settings
    fleet:<seed>:<index> a small group of the workload generator's fleet (rebalance_core/workload/),
                         its first day's first segment simulated in compressed time (no stretching, so
                         the simulator's truth applies)

Views (`VIEWS`): the canonical events themselves (baseline), the broker's server.log alone in each
wording era (0.10, 2.x, 3.x Scala, 4.x Java), the consumers' logs alone (2.x, 3.x, 4.x), and both sides
(same era). Each view is written by `KafkaLogWriter`, parsed by `parse_lines` (the broker log as one
file, each consumer's as its own) and replayed by `rebalance_core.replay.replay` with the settings a user
would give: broker-only views get the topics' partition counts (as at the start) and the group's
assignor as `default_assignor` (no classic broker line names the protocol); KIP-848 views get the topic
ids. KIP-848 groups have no 0.10 or 2.x view.

Measures, and how a mismatch is classified (`compare`):
    parsed        every line of the view's log parsed (nothing quarantined): the writer's and the
                  parser's part
    generations   the generation ids (and which ended Empty), one row each; a client-only view cannot
                  see a generation that ended Empty (no member is in it): absent there = "flagged"
    members       per generation, the member ids; null = flagged
    leader        per generation, the leader's id; null = flagged
    assignments   per generation and member, the partitions; rows marked `inferred` = flagged
    rounds        rebalance episodes and the rounds of each, in order
    stw_ms, unavailable_ms   stop-the-world and partition-unavailable totals; a value timed by the
                  coordinator (`timing_source` coordinator/mixed) is flagged when within the bound the
                  protocol allows (per episode / per movement: heartbeat interval + round trips +
                  callbacks, twice), beyond it silently wrong
    moved, revoked, wasted   churn totals; flagged when the replay marks inferred each episode whose
                  value differs (the episode, an inferred assignment of one of its generations, or an
                  inferred movement of it: an inferred episode excuses only its own difference; what the
                  totals count outside the episodes by any inferred row); the same rule
                  excuses stw_ms and unavailable_ms beyond the bound. Episodes are paired with the
                  truth's by time (`_pair_episodes`)
Exact = equal to the truth; flagged = not equal but the replay says it cannot know (null, inferred,
a coordinator-timed bound, absent); silently wrong = anything else. Where the simulator itself says a
fact is unobservable from the events (`SimulationResult.unobservable`, `unobservable_from_coordinator`
for broker-only views, `unobservable_from_members` added for client-only views), the outcome is tagged
so (counted separately in the report).

Justified or over-cautious (`Outcome.over_cautious`, `_mark_over_cautious`): a flagged outcome in a cell the
view carries is *justified* when the view's own entries cannot state the fact, *over-cautious* when they
do (the replay could have been exact). Derived from the entries the view's lines parse to (`stated_by`)
and the truth, per measure:
    members       over-cautious when, for a generation the replay reports null, the members named by entries
                  of that generation (or by coordinator entries without a generation in its join phase: the
                  truth's rebalance start minus the slack to its join completion; KIP-848: a static member's
                  replacement, for the group epoch in force; a member named before that no line says left or
                  was fenced, for each later epoch) are exactly its truth members (more named candidates
                  than members do not say which were in it; classic coordinator entries alone name no
                  member rejoining, so also an entry of the generation must count or list its members)
    leader        ... when an entry of that generation names the leader (a leader id, or the leader's own
                  assignment line)
    assignments   ... when, for a flagged generation, an entry of that generation states each truth member's
                  partitions (the member's SyncGroup response / reconciled assignment, or an assignment map
                  naming it)
    generations, rounds "absent"   always justified (no member of the view was in it)
    rounds "inferred"   over-cautious when every truth generation of the differing episodes is named by
                  an entry (KIP-848: and states each truth member's assignment at it, since the rounds
                  follow from each epoch's convergence, which the bump line naming it does not state;
                  Connect, KIP-415: the same, since they follow from the leader's delay, which only the
                  workers' assignment lines state)
    partition measures   over-cautious when the view states the assignment of every truth generation the
                  flag is about (null: all of the day's; inferred / bound: those of the differing episodes);
                  moved and unavailable_ms also need each member's start of it (`Stated.states_start`;
                  KIP-848: a line of the member's own at that epoch, random:74 broker-3.x: the broker puts a
                  member whose poll loop stalled on its epoch, it never consumes);
                  stw_ms and unavailable_ms also need each stop's instant there (`_stops_untimed`: a line
                  of the member at it; a silent failure: the member's session.timeout.ms, its stop is the
                  coordinator's removal minus it)
A measure the view does not carry and an outcome tagged unobservable (above) are always justified.
The 0.10 view is compared with the history as 0.10.0 prints it: an emptied group is deleted there, so
that generation does not exist and later generations are numbered from 0 again
(`KafkaLogWriter.renumbering`).
"""

from __future__ import annotations

import argparse
import bisect
import dataclasses
import datetime as dt
import json
import random
import re
import subprocess
import sys
import time
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from rebalance_core.assignors.protocols import CONNECT_PROTOCOLS
from rebalance_core.classic.member_order import JAVA, SCALA_2_12, SCALA_2_13
from rebalance_core.consumer import ConsumerSimSettings, simulate_consumer_group
from rebalance_core.consumer.simulate import BROKER_MAX_SESSION_TIMEOUT_MS, BROKER_MIN_SESSION_TIMEOUT_MS
from rebalance_core.events import Event
from rebalance_core.kafka_logs import parse_lines
from rebalance_core.kafka_logs.writer import KafkaLogWriter
from rebalance_core.kafka_logs.writer_lines import BROKER, CLIENT, LogLine
from rebalance_core.replay import replay
from rebalance_core.replay_common import ReplaySettings
from rebalance_core.simulate import SimulationSettings, load_scenario, simulate
from rebalance_core.timeline import (
    Crash,
    EnforceRebalance,
    Join,
    Leave,
    PartitionCount,
    Pause,
    Restart,
    Stall,
    Subscribe,
    Timeline,
)
from rebalance_core.workload.fleet import CONSUMER, plan_group, topic_id
from rebalance_core.workload.segments import group_segments, simulation_settings
from schemas.events import EventType

ROOT = Path(__file__).resolve().parents[1]
SCENARIOS = ROOT / "conf" / "simulations"
DOC = ROOT / "docs" / "fidelity.md"
DAY0_MS = 1_704_067_200_000  # 2024-01-01T00:00:00Z, the fleet's first day

MEASURES = (
    "parsed",
    "generations",
    "members",
    "leader",
    "assignments",
    "rounds",
    "stw_ms",
    "unavailable_ms",
    "moved",
    "revoked",
    "wasted",
)
PARTITION_MEASURES = ("stw_ms", "unavailable_ms", "moved", "revoked", "wasted")
TIMED_MEASURES = ("stw_ms", "unavailable_ms")  # the partition measures timed by each stop's instant
STARTED_MEASURES = ("moved", "unavailable_ms")  # ... that count or end a movement at its new owner's start
EXACT, FLAGGED, WRONG = "exact", "flagged", "wrong"
GIVE_SESSION_TIMEOUT = False  # --session-timeout: the user also gives ReplaySettings.session_timeout_ms


# ------------------------------------------------------------------------------------------- views
@dataclass(frozen=True)
class View:
    """A view of a group's history: log text of a broker and/or client era, or (`sides`) the canonical
    events themselves, all or one side's (baselines: what the replay makes of exactly the events a log
    side carries, without any text in between)."""

    name: str
    broker_era: str | None  # None: no broker log
    client_era: str | None  # None: no client logs
    sides: tuple[str, ...] = ()  # canonical events of these sides (no log text)

    @property
    def canonical(self) -> bool:
        return bool(self.sides)

    @property
    def broker_only(self) -> bool:
        return self.sides == ("coordinator",) or (self.broker_era is not None and self.client_era is None)

    @property
    def client_only(self) -> bool:
        return self.sides == ("member",) or (self.client_era is not None and self.broker_era is None)

    def applies(self, consumer_protocol: bool) -> bool:
        eras = {self.broker_era, self.client_era} - {None}
        return not consumer_protocol or eras <= {"3.x", "4.x"}


VIEWS: tuple[View, ...] = (
    View("events", None, None, ("coordinator", "member")),
    View("events-broker", None, None, ("coordinator",)),
    View("events-client", None, None, ("member",)),
    View("broker-0.10", "0.10", None),
    View("broker-2.x", "2.x", None),
    View("broker-3.x", "3.x", None),
    View("broker-4.x", "4.x", None),
    View("client-2.x", None, "2.x"),
    View("client-3.x", None, "3.x"),
    View("client-4.x", None, "4.x"),
    View("both-2.x", "2.x", "2.x"),
    View("both-3.x", "3.x", "3.x"),
    View("both-4.x", "4.x", "4.x"),
)
VIEW_BY_NAME = {v.name: v for v in VIEWS}

# What each view carries (True: the replay can be exact, and a silently wrong value there is a bug the
# tests hold against; elsewhere the right answer is null, inferred or a flagged bound).
_BROKER_CARRIES = {
    "0.10": {"generations"},  # no member ids, no reasons, no counts
    "2.x": {
        "generations"
    },  # a new dynamic member shows only in a Preparing reason; no leader; no client reason
    "3.x": {"generations", "members", "leader", "rounds"},  # no assignment, no member's own timing
    "4.x": {"generations", "members", "leader", "rounds"},
}
_KIP848_BROKER_CARRIES = {
    "3.x": {"generations", "members", "leader", "rounds", "assignments", "moved"},  # each member's assignment
    "4.x": {"generations", "members", "leader", "rounds"},  # assignments at DEBUG
}
# Consumers' logs show no crash (a member's last heartbeat) and no emptied group: the stop-the-world,
# unavailable time and moves that depend on them are the broker's to tell.
_CLIENT_CARRIES = {"generations", "members", "leader", "assignments", "rounds", "revoked", "wasted"}


def carries(view: View, measure: str, consumer_protocol: bool = False) -> bool:
    """Whether `view` logs what `measure` needs."""
    if measure == "parsed" or view.name == "events":
        return True
    if view.client_only:
        return measure in _CLIENT_CARRIES
    if view.broker_only:
        era = view.broker_era or "3.x"  # events-broker: the coordinator's events as 3.x logs them
        table = _KIP848_BROKER_CARRIES if consumer_protocol else _BROKER_CARRIES
        return measure in table[era]
    return True  # both sides


# ------------------------------------------------------------------------------------------- cases
@dataclass
class Case:
    case_id: str
    kind: str  # sim | test | hand | random | fleet
    description: str
    events: list[Event]
    truth: dict[str, list[dict]] | None  # None: no simulator truth (hand-written events)
    topics: dict[str, int]  # partition counts at the start
    topic_ids: dict[str, str]
    assignor: str
    consumer_protocol: bool
    slack_ms: int  # what coordinator timing may miss per stop or start (heartbeat + round trips)
    unobservable: list[str] = field(default_factory=list)
    unobservable_from_coordinator: list[str] = field(default_factory=list)
    session_timeout_ms: int | None = None
    unobservable_from_members: list[str] = field(default_factory=list)
    # the same history under another coordinator members map (member_order implementation -> the case),
    # where the simulator picked a leader by that map's order: the views of that era compare with it
    by_member_map: dict[str, Case] = field(default_factory=dict)


# the members map of the coordinator each wording era's broker has (rebalance_core.classic.member_order): Kafka
# up to 2.5 built with Scala 2.11/2.12 by default (gradle.properties scalaVersion), 2.6-3.9 with 2.13, 4.0's
# Java group coordinator. The writer's 2.x era is Kafka 2.8's wording, a 2.13 default build; the canonical
# events are the default simulation's (ReplaySettings' default map)
_ERA_MEMBER_MAP = {"0.10": SCALA_2_12, "2.x": SCALA_2_13, "3.x": SCALA_2_13, "4.x": JAVA}


def case_for_view(case: Case, view: View) -> Case:
    """The case whose history `view` shows (the leader a new-leader choice picked depends on the era)."""
    era = view.broker_era or view.client_era
    return case.by_member_map.get(_ERA_MEMBER_MAP.get(era, ""), case)


def _classic_slack(s: SimulationSettings) -> int:
    return (
        s.heartbeat_interval_ms
        + 2 * (s.join_round_trip_ms + s.sync_round_trip_ms + s.network_jitter_ms)
        + s.revoke_callback_ms
        + s.assignment_ms
    )


def _simulated_case(
    case_id, kind, description, timeline: Timeline, settings, other_maps: bool = True
) -> Case:
    """The case simulated under `settings`; where the simulator picked a leader by the coordinator's members
    map order, also under the other maps (`by_member_map`, see `case_for_view`)."""
    if isinstance(settings, ConsumerSimSettings):
        run = simulate_consumer_group(timeline, settings)
        events, truth = run.events, run.truth
        unobservable, from_coordinator = list(run.unobservable), list(run.unobservable)
        from_members = []
        assignor, consumer, topic_ids = settings.assignor, True, dict(settings.topic_ids)
        slack = settings.heartbeat_interval_ms + 4 * settings.network_ms + settings.revoke_callback_ms
        slack += settings.assign_callback_ms
    else:
        result = simulate(timeline, settings)
        if result.leader_by_member_order and other_maps:
            by_member_map = {
                impl: _simulated_case(
                    case_id,
                    kind,
                    description,
                    timeline,
                    dataclasses.replace(settings, coordinator_member_map=impl),
                    other_maps=False,
                )
                for impl in set(_ERA_MEMBER_MAP.values()) - {settings.coordinator_member_map}
            }
            case = _simulated_case(case_id, kind, description, timeline, settings, other_maps=False)
            case.by_member_map = by_member_map
            return case
        events, truth = result.events, result.truth
        unobservable, from_coordinator = result.unobservable, result.unobservable_from_coordinator
        from_members = result.unobservable_from_members
        consumer = settings.rebalance_protocol == "consumer"
        assignor, topic_ids, slack = settings.assignor, {}, _classic_slack(settings)
        if consumer:
            topic_ids = {t: topic_id(timeline.cluster, t) for t in timeline.topics}
            slack = 5_000 + 10
    return Case(
        case_id,
        kind,
        description,
        events,
        truth,
        dict(timeline.topics),
        topic_ids,
        assignor,
        consumer,
        slack,
        list(unobservable),
        list(from_coordinator),
        settings.session_timeout_ms,
        list(from_members),
    )


def build_case(case_id: str) -> Case:
    kind, _, rest = case_id.partition(":")
    builder = {
        "sim": _sim_case,
        "test": _test_case,
        "hand": _hand_case,
        "random": _random_case,
        "fleet": _fleet_case,
    }
    if kind not in builder:
        raise ValueError(f"unknown case kind in {case_id!r} (sim, test, hand, random, fleet)")
    return builder[kind](case_id, rest)


def _sim_case(case_id: str, name: str) -> Case:
    doc = yaml.safe_load((SCENARIOS / f"{name}.yaml").read_text())
    timeline, settings = load_scenario(doc)
    return _simulated_case(case_id, "sim", doc.get("name", name), timeline, settings)


_TEST_CASES = {
    "writer_classic_range": ("range", False),
    "writer_classic_cooperative": ("cooperative-sticky", False),
    "writer_classic_static_sticky": ("sticky", True),
    "writer_consumer_dynamic": (None, False),
    "writer_consumer_static": (None, True),
}


def _test_case(case_id: str, name: str) -> Case:
    from tests.logs import test_writer_roundtrip as t

    assignor, static = _TEST_CASES[name]
    if assignor is None:
        timeline = Timeline(
            topics={"orders": 6},
            actions=(
                Join(0, "c1"),
                Join(0, "c2"),
                Join(5_000, "c3"),
                Crash(60_000, "c2"),
                Pause(200_000, "c3", duration_ms=60_000, kind="gc"),
                Pause(400_000, "c1", duration_ms=400_000, kind="poll"),
                PartitionCount(900_000, "orders", 8),
                Restart(1_000_000, "c1", down_ms=10_000),
                Leave(1_100_000, "c3"),
            ),
            group_id="orders-next",
            start_ms=1_731_060_000_000,
        )
        settings = ConsumerSimSettings(
            coordinator="broker-1", topic_ids=t.TOPIC_IDS, static_membership=static
        )
        return _simulated_case(case_id, "test", f"{name} (test_writer_roundtrip)", timeline, settings)
    settings = SimulationSettings(assignor=assignor, static_membership=static, seed=3, coordinator="broker-2")
    return _simulated_case(case_id, "test", f"{name} (test_writer_roundtrip)", t.classic_timeline(), settings)


_HAND_CASES = (
    "eager_both_sides",
    "eager_broker_only",
    "cooperative_two_rounds",
    "session_timeout_crash",
    "static_restart",
    "log_04_dead_then_generation_zero",
    "log_05_join_leave",
    "log_09_client_eager",
    "broker_only_no_assignments",
    "starts_mid_rebalance",
)


def _hand_case(case_id: str, name: str) -> Case:
    from tests.core import replay_scenarios

    events = getattr(replay_scenarios, name)()
    events = [
        dataclasses.replace(e, source=e.source or ("broker-1" if e.is_coordinator else e.member_id))
        for e in events
    ]
    events = [
        e if e.is_coordinator or e.client_id else dataclasses.replace(e, client_id=_client_of(e.member_id))
        for e in events
    ]
    topics: dict[str, int] = {}
    for e in events:
        for tp in list(e.partitions or ()) + [tp for tps in (e.assignment or {}).values() for tp in tps]:
            topics[tp.topic] = max(topics.get(tp.topic, 0), tp.partition + 1)
    protocol = next((e.protocol_name for e in events if e.protocol_name), None) or "range"
    return Case(
        case_id,
        "hand",
        f"{name} (tests/core/replay_scenarios.py)",
        events,
        None,
        topics,
        {},
        protocol,
        False,
        5_000,
    )


def _client_of(member_id: str | None) -> str | None:
    return member_id.split("-", 1)[0] if member_id else None


# -- random workloads ---------------------------------------------------------------------------------
RANDOM_KINDS = ("eager", "cooperative", "static", "kip415", "consumer")


def random_workload(seed: int) -> tuple[str, Timeline, SimulationSettings | ConsumerSimSettings]:
    """A seeded random workload (kind, timeline, settings); every action valid where it happens."""
    rng = random.Random(f"fidelity:{seed}")
    kind = RANDOM_KINDS[seed % len(RANDOM_KINDS)]
    session = rng.choice((6_000, 10_000, 45_000))
    max_poll = rng.choice((session, 2 * session, 300_000))
    topics = {"t": rng.randint(1, 12)}
    if rng.random() < 0.4:
        topics["u"] = rng.randint(1, 4)
    connect = kind == "kip415"  # KIP-415 is Kafka Connect's (IncrementalCooperativeAssignor): a worker group
    timeline = _random_timeline(
        rng, topics, session, max_poll, static=kind == "static", seed=seed, connect=connect
    )
    if kind == "consumer":
        settings: SimulationSettings | ConsumerSimSettings = ConsumerSimSettings(
            assignor=rng.choice(("uniform", "uniform", "server-range")),
            static_membership=rng.random() < 0.3,
            session_timeout_ms=session,
            # group.consumer.session.timeout.ms below the broker's default minimum (45 s): a broker that
            # lowered group.consumer.min.session.timeout.ms to it
            min_session_timeout_ms=min(session, BROKER_MIN_SESSION_TIMEOUT_MS),
            max_session_timeout_ms=BROKER_MAX_SESSION_TIMEOUT_MS,
            max_poll_interval_ms=max_poll,
            coordinator="broker-1",
            topic_ids={t: topic_id(timeline.cluster, t) for t in topics},
        )
        return kind, timeline, settings
    assignor = {
        "eager": rng.choice(("range", "range", "roundrobin", "sticky")),
        "cooperative": "cooperative-sticky",
        "kip415": "sessioned",
        "static": rng.choice(("range", "sticky", "cooperative-sticky")),
    }[kind]
    settings = SimulationSettings(
        assignor=assignor,
        static_membership=kind == "static",
        session_timeout_ms=session,
        heartbeat_interval_ms=session // 3,
        max_poll_interval_ms=max_poll,
        group_initial_rebalance_delay_ms=rng.choice((0, 3_000)),
        scheduled_rebalance_max_delay_ms=rng.choice((10_000, 30_000)) if kind == "kip415" else 0,
        join_round_trip_ms=rng.randint(2, 40),
        sync_round_trip_ms=rng.randint(2, 20),
        revoke_callback_ms=rng.randint(0, 10),
        network_jitter_ms=rng.choice((0, 0, 5)),
        seed=rng.getrandbits(16),
        coordinator="broker-1",
    )
    return kind, timeline, settings


def _random_timeline(
    rng: random.Random,
    topics: dict[str, int],
    session: int,
    max_poll: int,
    *,
    static: bool,
    seed: int,
    connect: bool = False,
) -> Timeline:
    """A Connect worker group (`connect`) only joins, leaves, crashes and restarts: its workers subscribe to
    no topics and the simulator's Connect model has no pauses or task-count changes.

    A consumer group may also, rarely, see a poll loop stall for good (`Stall`: afterwards that member can
    only crash or restart) or an `enforceRebalance()` (`EnforceRebalance`). Those are drawn from a second
    random stream after each step's action, so a seed that draws neither has the timeline it had before
    they existed."""
    members = [f"c{i}" for i in range(1, rng.randint(2, 6) + 1)]
    durations = {"short": session // 2, "session": session + session // 3, "poll": max_poll + session}
    running: list[str] = []  # in join order: the first is the likely leader
    busy_until: dict[str, int] = {}
    counts = dict(topics)
    actions: list[Any] = []
    rare = random.Random(f"fidelity-rare:{seed}")  # stalls and enforced rebalances (see the docstring)
    stalled: set[str] = set()  # poll loop stalled for good: can only crash or restart
    at = 0
    for m in rng.sample(members, rng.randint(1, len(members))):  # the group forms
        actions.append(Join(at, m))
        running.append(m)
        at += rng.choice((0, 5, 500, 2_000))
    for _ in range(rng.randint(2, 10)):
        at += rng.choice((0, 5, 500, 2_000, 7_000, 20_000, 60_000, 120_000))
        up = [m for m in running if busy_until.get(m, -1) < at]
        free = [m for m in up if m not in stalled]
        stopped = [m for m in members if m not in running and busy_until.get(m, -1) < at]
        kind = rng.choice(
            ("join", "leave", "crash", "restart", "leader_churn", "join")
            if connect
            else (
                "join",
                "leave",
                "crash",
                "restart",
                "pause",
                "subscribe",
                "partitions",
                "leader_churn",
                "join",
            )
        )
        if kind == "partitions":
            topic = rng.choice(sorted(counts))
            counts[topic] += rng.randint(1, 3)
            actions.append(PartitionCount(at, topic, counts[topic]))
        elif kind == "join" and stopped:
            m = rng.choice(stopped)
            actions.append(
                Join(at, m, topics=None if connect else rng.choice((None, ("t",), tuple(sorted(topics)))))
            )
            running.append(m)
        elif kind in ("leave", "leader_churn") and free:
            m = free[0] if kind == "leader_churn" else rng.choice(free)
            if kind == "leader_churn" and rng.random() < 0.5:
                down = durations[rng.choice(("short", "session"))]
                actions.append(Restart(at, m, down, graceful=rng.random() < 0.5))
                busy_until[m] = at + down + 1
            else:
                actions.append(Leave(at, m))
                running.remove(m)
                busy_until[m] = at + 1
        elif kind == "crash" and (free or stalled & set(up)):
            m = rng.choice(free or sorted(stalled & set(up)))
            actions.append(Crash(at, m))
            running.remove(m)
            stalled.discard(m)
            busy_until[m] = at + 1
        elif kind == "restart" and (free or stalled & set(up)):
            m = rng.choice(free or sorted(stalled & set(up)))
            down = durations[rng.choice(("short", "session"))]
            actions.append(Restart(at, m, down, graceful=rng.random() < 0.5))
            stalled.discard(m)
            busy_until[m] = at + down + 1
        elif kind == "pause" and free:
            m = rng.choice(free)
            duration = durations[rng.choice(("short", "session", "poll"))]
            actions.append(Pause(at, m, duration, kind=rng.choice(("gc", "poll"))))
            busy_until[m] = at + duration + 1
        elif kind == "subscribe" and free:
            actions.append(Subscribe(at, rng.choice(free), rng.choice((("t",), tuple(sorted(topics))))))
        if not connect:
            _rare_action(rare, actions, at, running, busy_until, stalled)
    return Timeline(
        topics=topics, actions=tuple(actions), group_id=f"g{seed}", start_ms=DAY0_MS + (seed % 1000) * 60_000
    )


RARE_ACTION_SHARE = 0.04  # per step of a random consumer-group timeline: a stall or an enforced rebalance


def _rare_action(
    rare: random.Random,
    actions: list[Any],
    at: int,
    running: list[str],
    busy_until: dict[str, int],
    stalled: set[str],
) -> None:
    """After a step, rarely: a member's poll loop stalls for good, or it calls enforceRebalance(); on a
    member running, not busy and not the one this step's action named."""
    draw, choice = rare.random(), rare.random()
    if draw >= RARE_ACTION_SHARE:
        return
    acted = (
        actions[-1].member if actions and actions[-1].at == at and hasattr(actions[-1], "member") else None
    )
    free = [m for m in running if busy_until.get(m, -1) < at and m not in stalled and m != acted]
    if not free:
        return
    m = free[int(choice * len(free))]
    if rare.random() < 0.5:
        actions.append(Stall(at, m))
        stalled.add(m)
    else:
        actions.append(EnforceRebalance(at, m))


def _random_case(case_id: str, rest: str) -> Case:
    seed = int(rest)
    kind, timeline, settings = random_workload(seed)
    return _simulated_case(case_id, "random", f"random {kind} workload", timeline, settings)


def _fleet_case(case_id: str, rest: str) -> Case:
    seed, index = (int(x) for x in rest.split(":"))
    plan = plan_group(index, seed)
    segment = next(iter(group_segments(plan, DAY0_MS, 1)))
    settings = simulation_settings(plan, segment.number)
    description = f"fleet {plan.kind} group, {plan.members} members, {plan.assignor}, incidents {', '.join(segment.incidents)}"
    case = _simulated_case(case_id, "fleet", description, segment.timeline, settings)
    case.consumer_protocol = plan.kind == CONSUMER
    return case


def fleet_indexes(seed: int, count: int, max_members: int = 8) -> list[int]:
    """Indexes of the fleet's first `count` small groups (the matrix replays each in 11 views)."""
    out, index = [], 0
    while len(out) < count:
        if plan_group(index, seed).members <= max_members:
            out.append(index)
        index += 1
    return out


def case_ids(random_count: int, fleet_count: int, fixed: bool = True) -> list[str]:
    ids: list[str] = []
    if fixed:
        ids += [f"sim:{p.stem}" for p in sorted(SCENARIOS.glob("*.yaml"))]
        ids += [f"test:{name}" for name in _TEST_CASES]
        ids += [f"hand:{name}" for name in _HAND_CASES]
    ids += [f"random:{seed}" for seed in range(random_count)]
    ids += [f"fleet:0:{i}" for i in fleet_indexes(0, fleet_count)]
    return ids


# ------------------------------------------------------------------------------------------- views
@dataclass
class Observed:
    events: list[Event]
    settings: ReplaySettings
    renumbering: list[tuple[int, int]]  # 0.10: (first simulated generation, base)
    lines: list[LogLine]
    quarantined: int


_CLIENT_ID = re.compile(r"clientId=([^,\]]*)")
# a config dump (AbstractConfig.logAll, "ConsumerConfig values:") has no "[Consumer clientId=...]" prefix:
# it names its client in its `client.id = X` row, and goes to that client's file as in a real deployment
# (a consumer process logs its dump at start, before its first JoinGroup)
_CONFIG_CLIENT_ID = re.compile(r"^\s*client\.id = (\S+)$", re.MULTILINE)


def observe(case: Case, view: View) -> Observed:
    """The events `view` gives a user of this case, with the ReplaySettings that user would pass."""
    cluster = case.events[0].cluster if case.events else "sim"
    if view.canonical:
        events = [e for e in case.events if e.side in view.sides]
        if view.broker_only and not case.consumer_protocol:  # no classic broker log prints these
            events = [dataclasses.replace(e, assignment=None, members=None) for e in events]
        settings = ReplaySettings(topics=dict(case.topics), topic_ids=dict(case.topic_ids))
        if view.broker_only:
            settings = dataclasses.replace(settings, default_assignor=case.assignor)
        return Observed(events, settings, [], [], 0)
    writer = KafkaLogWriter(
        consumer_protocol=case.consumer_protocol,
        topic_ids=case.topic_ids,
        broker_era=view.broker_era or "3.x",
        client_era=view.client_era or "3.x",
    )
    lines = writer.write_all(case.events)
    files: dict[str, list[str]] = defaultdict(list)
    for line in lines:
        if line.stream == BROKER and view.broker_era is not None:
            files["server.log"].extend(line.text.split("\n"))
        elif line.stream == CLIENT and view.client_era is not None:
            m = _CLIENT_ID.search(line.text) or _CONFIG_CLIENT_ID.search(line.text)
            files[f"{m.group(1) if m else 'client'}.log"].extend(line.text.split("\n"))
    events: list[Event] = []
    quarantined = 0
    for name, text in sorted(files.items()):
        result = parse_lines(text, file=name, cluster=cluster, topic_ids=case.topic_ids)
        events.extend(result.events)
        quarantined += len(result.quarantine)
    settings = ReplaySettings(
        topic_ids=dict(case.topic_ids),
        session_timeout_ms=GIVE_SESSION_TIMEOUT and case.session_timeout_ms or None,
    )
    if view.broker_only:
        settings = dataclasses.replace(settings, topics=dict(case.topics), default_assignor=case.assignor)
    return Observed(events, settings, list(writer.renumbering), lines, quarantined)


# ------------------------------------------------------------------------------------------ measures
@dataclass
class Outcome:
    cls: str  # EXACT | FLAGGED | WRONG
    flag: str = ""  # FLAGGED: null | inferred | bound | absent
    detail: str = ""  # WRONG / FLAGGED: what differs (truth vs replay), short
    mismatch: str = (
        ""  # WRONG / FLAGGED: the kind of mismatch (e.g. "extra member", "phantom"), for the tallies
    )
    unobservable: bool = False
    over_cautious: bool = False  # FLAGGED: the view's lines state what the replay flagged (`stated_by`)


def renumbered_truth(
    truth: dict[str, list[dict]], renumbering: list[tuple[int, int]]
) -> dict[str, list[dict]]:
    """The truth as a 0.10.0 coordinator numbers it (see `KafkaLogWriter.renumbering`): emptied
    generations do not exist, later ones count from 0 again."""
    if not renumbering:
        return truth

    def base(generation: int | None) -> int:
        value = 0
        for first, b in renumbering:
            if generation is not None and generation >= first:
                value = b
        return value

    def shift(row: dict, name: str = "generation_id") -> dict:
        g = row.get(name)
        return {**row, name: g - base(g)} if g is not None else row

    out = dict(truth)
    out["generations"] = [shift(r) for r in truth["generations"] if not r.get("ended_empty")]
    out["assignments"] = [shift(r) for r in truth["assignments"]]
    out["partition_movements"] = [shift(r) for r in truth["partition_movements"]]
    return out


def _generations(tables) -> dict[int, dict]:
    """Generation id -> its row (of several rows of one generation, the last: see `_duplicated`)."""
    return {r["generation_id"]: r for r in tables["generations"] if r.get("generation_id") is not None}


def _row_counts(tables) -> Counter:
    return Counter(r["generation_id"] for r in tables["generations"] if r.get("generation_id") is not None)


def _duplicated(truth, replayed) -> list[int]:
    """Generations the replay has more rows of than the truth (a replay that opened a generation twice;
    the truth has two only where 0.10 numbered a deleted group's successor from 0 again)."""
    t_counts = _row_counts(truth)
    return sorted(g for g, n in _row_counts(replayed).items() if n > max(1, t_counts[g]))


def _assignments(tables) -> dict[int, dict[str, tuple]]:
    out: dict[int, dict[str, list]] = defaultdict(lambda: defaultdict(list))
    for r in tables["assignments"]:
        out[r["generation_id"]][r["member_id"]].append((r["topic"], r["partition"]))
    return {g: {m: tuple(sorted(tps)) for m, tps in members.items()} for g, members in out.items()}


def _inferred_generations(tables) -> set[int]:
    rows = tables["assignments"] + tables["generations"]
    return {r["generation_id"] for r in rows if r.get("source") == "inferred"}


TOTAL_COLUMNS = {  # partition measure -> group_daily_summary column
    "stw_ms": "stw_ms",
    "unavailable_ms": "partition_unavailable_ms",
    "moved": "partitions_moved",
    "revoked": "partitions_revoked",
    "wasted": "revocations_wasted",
}


def _totals(tables) -> dict[str, int | None]:
    """Per partition measure, the day's total over the group's summary rows; None when any row says
    null (the replay does not know it; the known rows' sum is then only a lower bound)."""
    rows = tables["group_daily_summary"]
    out: dict[str, int | None] = {}
    for measure, column in TOTAL_COLUMNS.items():
        values = [r.get(column) for r in rows]
        out[measure] = None if any(v is None for v in values) else sum(values)
    return out


def _known_totals(tables) -> dict[str, int]:
    """The sum of the rows that state a value (null rows left out)."""
    return {m: sum(r.get(c) or 0 for r in tables["group_daily_summary"]) for m, c in TOTAL_COLUMNS.items()}


def _rounds(tables, generations: set[int] | None = None) -> list[int]:
    """Rounds per episode, in order; with `generations`, only episodes that reached one of them."""
    episodes = sorted(tables["rebalance_episodes"], key=lambda r: (r.get("started_at") or 0, r["episode_id"]))
    if generations is not None:
        episodes = [r for r in episodes if _episode_generations(r) & generations]
    return [r["rounds"] for r in episodes]


def _episode_generations(episode: dict, previous: bool = False) -> set[int]:
    """The generations an episode formed; with `previous`, also the one before it (whose assignment the
    episode's stops, moves and revocations are of)."""
    first, last = episode.get("first_generation_id"), episode.get("last_generation_id")
    if first is None or last is None:
        return set()
    return set(range(first - 1 if previous else first, last + 1))


def _coordinator_timed(tables) -> bool:
    rows = tables["group_daily_summary"] + tables["rebalance_episodes"]
    return any(r.get("timing_source") in ("coordinator", "mixed") for r in rows)


def _member_generations(case: Case) -> set[int]:
    """Generations a member-side event names (join responses, the leader's assignment, syncs; KIP-848:
    the member epochs the members print, which are the group epochs they reconciled to)."""
    out = set()
    for e in case.events:
        if not e.is_coordinator:
            value = e.member_epoch if case.consumer_protocol else e.generation_id
            if value is not None and value > 0:
                out.add(value)
    return out


@dataclass
class Stated:
    """What a view's log entries state, per generation: the members its lines name, the generations whose
    leader a line names, the members whose partitions a line states, and the generations some line names
    (see `stated_by`)."""

    named: dict[int, set[str]] = field(default_factory=lambda: defaultdict(set))
    leader: set[int] = field(default_factory=set)
    # per generation and member, each set of partitions a line states it has (sorted (topic, partition))
    assigned: dict[int, dict[str, set[tuple]]] = field(
        default_factory=lambda: defaultdict(lambda: defaultdict(set))
    )
    generations: set[int] = field(default_factory=set)
    # KIP-848: per epoch, members in the group before it whose leaving no line states nor denies
    in_doubt: dict[int, set[str]] = field(default_factory=lambda: defaultdict(set))
    # whose session.timeout.ms a line states: members (the coordinator's line naming one with it), clients
    # (their config dump); the members' client ids, to pair the two
    session_timeout_members: set[str] = field(default_factory=set)
    session_timeout_clients: set[str] = field(default_factory=set)
    client_of: dict[str, str] = field(default_factory=dict)
    # (member id or client id, ts) of every member-side entry: the instants a member's own lines show
    member_instants: set[tuple[str, int]] = field(default_factory=set)
    # per generation, the members with a line of their own carrying it (KIP-848: whether they started)
    own_lines: dict[int, set[str]] = field(default_factory=lambda: defaultdict(set))
    # classic coordinator entries only: per generation, the member count an entry states; the generations an
    # entry lists in full (a member list or an assignment map)
    classic_coordinator_only: bool = False
    counted: dict[int, int] = field(default_factory=dict)
    listed: set[int] = field(default_factory=set)

    def states_instant(self, member: str, ts: int) -> bool:
        client = self.client_of.get(member)
        return (member, ts) in self.member_instants or (
            client is not None and (client, ts) in self.member_instants
        )

    def states_session_timeout(self, member: str) -> bool:
        client = self.client_of.get(member)
        return member in self.session_timeout_members or (
            client is not None and client in self.session_timeout_clients
        )

    def states_members(self, generation: int, members: Iterable[str]) -> bool:
        """The lines name exactly the generation's members: more candidates than members (a member that
        left in the join phase, another that joined) leave which ones made it unstated. A classic
        coordinator names the members that joined anew, its leader, those it removed, but no line per
        member rejoining (GroupCoordinator logs "Preparing to rebalance" for the trigger only): without a
        member count or list for the generation, a member of the previous one no entry names may be in
        it (hand:cooperative_two_rounds events-broker: generation 1's members are before the events)."""
        members = set(members)
        if self.classic_coordinator_only and not (
            generation in self.listed or self.counted.get(generation) == len(members)
        ):
            return False
        return members == self.named.get(generation, set()) and not self.in_doubt.get(generation)

    def states_assignment(self, generation: int, assignment: Mapping[str, Iterable]) -> bool:
        """A line states each member's partitions of the generation as given (member -> partitions): a line
        with other partitions does not (KIP-848: a member reconciles at its epoch only the partitions
        nobody else still owns, CurrentAssignmentBuilder's UNRELEASED_PARTITIONS; test:writer_consumer_dynamic
        c2 at epoch 2 logs none of the three its target gives it)."""
        stated = self.assigned.get(generation, {})
        return all(_partition_key(tps) in stated.get(m, ()) for m, tps in assignment.items())

    def states_start(self, generation: int, members: Iterable[str], consumer_protocol: bool) -> bool:
        """Whether the lines state that each member started consuming its assignment of the generation.
        Classic: its SyncGroup response does (the poll loop that sent the JoinGroup receives it and runs
        onPartitionsAssigned). KIP-848: only the member's own lines do: the coordinator moves a member to
        the new epoch with the partitions nobody releases at once (CurrentAssignmentBuilder), and the
        consumer's background thread reconciles without the application thread when no listener is set,
        so a member whose poll loop stalled is shown on its epoch by the broker and never consumed."""
        return not consumer_protocol or set(members) <= self.own_lines.get(generation, set())


def _partition_key(partitions: Iterable) -> tuple:
    return tuple(sorted((tp[0], tp[1]) for tp in partitions))


def _event_generation(e: Event, consumer_protocol: bool) -> int | None:
    """The generation an entry names: its generation id; KIP-848: the member epoch a member prints (the
    group epoch it reconciled to) or the group epoch the coordinator prints."""
    if e.generation_id is not None:
        return e.generation_id
    if consumer_protocol:
        value = e.member_epoch if e.member_epoch is not None else e.group_epoch
        return value if value is not None and value > 0 else None
    return None


def stated_by(events: Iterable[Event], truth: dict, consumer_protocol: bool, slack_ms: int) -> Stated:
    """What the view's entries (`events`: parsed from its lines, or a canonical view's events) state about
    the truth's generations. An entry names member M for generation G when it carries G (generation id;
    KIP-848: epoch) and names M (its member id, leader id, member list or assignment), or is a coordinator
    entry without a generation that names M in G's join phase (the truth's rebalance start minus `slack_ms`
    to its join completion: the broker's JoinGroup line; a member's own join request without a generation
    says only that it asked). A line states G's leader when it carries G and a leader id, or is the
    leader's own assignment line. A line states M's partitions in G when it carries G and either is M's own
    line with partitions (SyncGroup response; KIP-848: its reconciled assignment) or an assignment map
    naming M (the leader's computed assignment; KIP-848: the coordinator's per-member assignment)."""
    stated = Stated()
    windows = []
    for row in truth["generations"]:
        g, start = row.get("generation_id"), row.get("rebalance_started_at")
        if g is None or start is None:
            continue
        end = row.get("join_completed_at") or row.get("stabilized_at") or start
        windows.append((start - slack_ms, end, g))
    group_epoch = None  # KIP-848: the group epoch in force (the coordinator's last bump line)
    first_named: dict[str, int] = {}  # KIP-848: member -> the first instant a line names it
    departed: dict[str, int] = {}  # ... -> the first instant a line states it left the group
    own_epochs: dict[str, list[tuple[int, int]]] = defaultdict(list)  # ... -> (ts, epoch) of its own lines
    coordinator_lines = member_lines = False
    for e in events:
        coordinator_lines = coordinator_lines or e.is_coordinator
        member_lines = member_lines or not e.is_coordinator
        if consumer_protocol:
            _note_membership(e, first_named, departed)
            if not e.is_coordinator and e.member_id and e.member_epoch is not None:
                own_epochs[e.member_id].append((e.ts, e.member_epoch))
        if e.member_id and e.client_id:
            stated.client_of.setdefault(e.member_id, e.client_id)
        if consumer_protocol and e.is_coordinator and e.group_epoch is not None:
            group_epoch = e.group_epoch
        if (
            consumer_protocol
            and group_epoch is not None
            and e.event_type == EventType.STATIC_MEMBER_REPLACED.value
            and e.member_id
        ):
            # KIP-848: a static member's replacement takes over the old member's place and assignment without
            # bumping the group epoch (GroupMetadataManager: "Created a new member ... to replace the existing
            # member", replaceMember; the epoch is bumped only on a subscription change): the new member is a
            # candidate for the epoch in force, which was one of it if that epoch had not converged yet
            stated.named[group_epoch].add(e.member_id)
        if not e.is_coordinator:
            stated.member_instants |= {(who, e.ts) for who in (e.member_id, e.client_id) if who}
        if (e.attributes or {}).get("session_timeout_ms"):
            if e.event_type == EventType.CLIENT_CONFIG.value:
                # KIP-848: the consumer's own session.timeout.ms (its dump prints the default) is the classic
                # protocol's; the ConsumerGroupHeartbeat carries none, the coordinator fences after its
                # group.consumer.session.timeout.ms (GroupMetadataManager.consumerGroupSessionTimeoutMs)
                if not consumer_protocol:
                    stated.session_timeout_clients.add(e.client_id or "")
            elif e.member_id:
                stated.session_timeout_members.add(e.member_id)
        names = {m for m in (e.member_id, e.leader_id) if m} | set(e.members or ()) | set(e.assignment or {})
        g = _event_generation(e, consumer_protocol)
        if g is None:
            if (
                not e.is_coordinator
            ):  # a member's JoinGroup request: it asked, the coordinator may not have it
                continue
            for start, end, window_generation in windows:
                if start <= e.ts <= end:
                    stated.named[window_generation] |= names
            continue
        stated.generations.add(g)
        stated.named[g] |= names
        if e.member_count is not None:
            stated.counted[g] = e.member_count
        if e.members or e.assignment:
            stated.listed.add(g)
        if not e.is_coordinator and e.member_id:
            stated.own_lines[g].add(e.member_id)
        if e.leader_id or e.event_type == "assignment_computed":
            stated.leader.add(g)
        if e.member_id and e.partitions is not None:
            stated.assigned[g][e.member_id].add(_partition_key(e.partitions))
        for member, tps in (e.assignment or {}).items():
            stated.assigned[g][member].add(_partition_key(tps))
    stated.classic_coordinator_only = not consumer_protocol and not member_lines
    if consumer_protocol:
        # KIP-848: a member stays in the group, and so in each later epoch, until it leaves or the coordinator
        # fences it. The broker logs each leave and fencing: a member it named and did not remove is in the
        # epoch. The members' logs show a member in an epoch it printed no line of when its next line is at
        # that epoch or a later one (no rejoin from epoch 0 between); otherwise (a member that died silently:
        # its fencing is logged by no member) whether it was still in is unstated (random:79 client-4.x: c4
        # crashed at epoch 2, the bump to 6 is its fencing)
        for row in truth["generations"]:
            g, start = row.get("generation_id"), row.get("rebalance_started_at")
            if g is None or start is None:
                continue
            for m, ts in first_named.items():
                if ts >= start or departed.get(m, start + 1) <= start or m in stated.named[g]:
                    continue
                later = [epoch for at, epoch in own_epochs.get(m, ()) if at > start]
                if coordinator_lines or (later and later[0] >= g):
                    stated.named[g].add(m)
                else:
                    stated.in_doubt[g].add(m)
    return stated


def _note_membership(e: Event, first_named: dict[str, int], departed: dict[str, int]) -> None:
    """KIP-848: when an entry first names each member, and when one states a member left the group: its
    leave (member epoch -1), the coordinator's removal, a static member's replacement (of the old id). A
    static member's temporary leave (epoch -2) keeps it in the group (ConsumerGroupMember, until its
    session expires or a new member replaces it)."""
    for who in {m for m in (e.member_id, e.leader_id) if m} | set(e.assignment or {}):
        first_named.setdefault(who, e.ts)
    gone = None
    if e.event_type == EventType.STATIC_MEMBER_REPLACED.value:
        gone = (e.attributes or {}).get("old_member_id")
    elif e.member_id and (
        e.member_epoch == -1
        or e.member_epoch != -2
        and e.event_type in (EventType.MEMBER_REMOVED.value, EventType.LEAVE_SENT.value)
    ):
        gone = e.member_id
    if gone:
        departed.setdefault(gone, e.ts)


def _short(value: Any, limit: int = 160) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def compare(
    case: Case, view: View, truth: dict, replayed: dict, entries: Iterable[Event] | None = None
) -> dict[str, Outcome]:
    """Per measure, how the replay of `view` compares with `truth` (see the module docstring); every
    outcome that is not exact names its kind (`Outcome.mismatch`), and a flagged one says whether the
    view's `entries` (default: the case's canonical events) state what the replay flagged
    (`Outcome.over_cautious`, see `_mark_over_cautious`)."""
    out: dict[str, Outcome] = {}
    t_gen, r_gen = _generations(truth), _generations(replayed)
    out["generations"] = _compare_generations(case, view, t_gen, r_gen)
    duplicated = _duplicated(truth, replayed)
    if duplicated and out["generations"].cls != WRONG:
        detail = f"generations {duplicated} have several rows"
        out["generations"] = Outcome(WRONG, "", detail, mismatch="a generation in several rows")
    for measure, column in (("members", "members"), ("leader", "leader_member_id")):
        out[measure] = _compare_generation_column(t_gen, r_gen, column)
    inferred = _inferred_generations(replayed)
    members_unknown = {g for g, r in r_gen.items() if r.get("members") is None}
    out["assignments"] = _compare_assignments(
        _assignments(truth), _assignments(replayed), inferred, members_unknown
    )
    out["rounds"] = _compare_rounds(case, view, truth, replayed)
    totals, differing = _compare_totals(case, truth, replayed, inferred)
    out.update(totals)
    unobservable = case.unobservable_from_coordinator if view.broker_only else case.unobservable
    if view.client_only:
        unobservable = unobservable + case.unobservable_from_members
    if unobservable:  # the simulator's unobservable facts are instants and revocations: partition measures
        for measure in PARTITION_MEASURES:
            out[measure].unobservable = out[measure].cls != EXACT
    stated = stated_by(
        case.events if entries is None else entries, truth, case.consumer_protocol, case.slack_ms
    )
    _mark_over_cautious(case, view, out, truth, replayed, stated, differing)
    return out


def _mark_over_cautious(
    case: Case,
    view: View,
    out: dict[str, Outcome],
    truth: dict,
    replayed: dict,
    stated: Stated,
    differing: dict[str, set[int]],
) -> None:
    """Per flagged outcome, whether the flag is forced by the view ("justified") or the view's entries
    state the fact ("over-cautious"; see the module docstring for the rule per measure). A measure the view
    does not carry (`carries`) and an outcome the simulator calls unobservable are always justified."""
    t_gen, r_gen = _generations(truth), _generations(replayed)
    t_asg = _assignments(truth)

    def assignments_stated(generations: Iterable[int]) -> bool:
        return all(stated.states_assignment(g, t_asg.get(g, {})) for g in generations)

    for measure, outcome in out.items():
        if (
            outcome.cls != FLAGGED
            or outcome.unobservable
            or not carries(view, measure, case.consumer_protocol)
        ):
            continue
        if measure == "members":
            flagged = [g for g in set(t_gen) & set(r_gen) if r_gen[g].get("members") is None]
            outcome.over_cautious = any(
                stated.states_members(g, t_gen[g].get("members") or ()) for g in flagged
            )
        elif measure == "leader":
            flagged = [
                g
                for g in set(t_gen) & set(r_gen)
                if r_gen[g].get("leader_member_id") is None and t_gen[g].get("leader_member_id")
            ]
            outcome.over_cautious = any(g in stated.leader for g in flagged)
        elif measure == "assignments":
            r_asg = _assignments(replayed)
            flagged = [g for g in set(t_asg) | set(r_asg) if g is not None and t_asg.get(g) != r_asg.get(g)]
            outcome.over_cautious = any(g in t_asg and assignments_stated([g]) for g in flagged)
        elif measure == "rounds" and outcome.flag == "inferred":
            generations = differing.get("rounds", set())
            outcome.over_cautious = bool(generations) and generations <= stated.generations
            if case.consumer_protocol or case.assignor in CONNECT_PROTOCOLS:
                # KIP-848: whether an epoch is a round of its own or of the next bump's rebalance depends on
                # its convergence (every member reconciled to it, ConsumerGroup.maybeUpdateGroupState), which
                # a line naming the epoch (its bump) does not state: each member's assignment at it must be.
                # KIP-415 (Connect): whether a generation is followed by the delayed rebalance of its own
                # episode depends on the leader's delay (IncrementalCooperativeAssignor: lost work, which
                # only the workers' "Joined group ... delay=D" assignment lines state), not on a line naming
                # the generation: each worker's assignment at it must be stated (random:33 broker views)
                outcome.over_cautious = outcome.over_cautious and all(
                    stated.states_assignment(
                        g, {m: t_asg.get(g, {}).get(m, ()) for m in t_gen[g].get("members") or ()}
                    )
                    for g in generations
                    if g in t_gen
                )
        elif measure in PARTITION_MEASURES:
            # null covers the day: every generation's assignment; inferred / bound: the differing episodes'
            generations = set(t_asg) if outcome.flag == "null" else differing.get(measure, set())
            outcome.over_cautious = assignments_stated(generations)
            if measure in STARTED_MEASURES:
                # a movement is counted and ends at its new owner's start: the assignment must be consumed
                outcome.over_cautious = outcome.over_cautious and all(
                    stated.states_start(
                        g, [m for m, tps in t_asg.get(g, {}).items() if tps], case.consumer_protocol
                    )
                    for g in generations
                )
            if measure in TIMED_MEASURES:
                outcome.over_cautious = outcome.over_cautious and not _stops_untimed(
                    truth, stated, None if outcome.flag == "null" else generations
                )


def _stops_untimed(truth: dict, stated: Stated, generations: set[int] | None) -> bool:
    """Whether a stop of the truth in `generations` (None: any) is at an instant no line of the view
    dates. A member that failed silently (`member_failed`: it died or froze) stopped at its last
    heartbeat, which no line shows: only the coordinator's removal minus the member's session timeout
    dates it (GroupCoordinator.completeAndScheduleNextHeartbeatExpiration), and the classic broker prints
    that timeout only in a LeaveGroup line's MemberMetadata, the member in its config dump. Any other stop
    is a step of the member's own, dated when a line of that member at that instant shows it. Without the
    instant the stop-the-world and unavailable time are estimates the view cannot make exact. A stop no
    generation took over (the group emptied) belongs to its episode's generations."""
    episodes = {e["episode_id"]: _episode_generations(e) for e in truth["rebalance_episodes"]}

    def in_generations(m: dict) -> bool:
        if generations is None:
            return True
        if m.get("generation_id") is not None:
            return m["generation_id"] in generations
        return bool(episodes.get(m.get("episode_id"), set()) & generations)

    def untimed(m: dict) -> bool:
        member = m.get("from_member_id") or ""
        if m.get("stop_cause") == "member_failed":
            return not stated.states_session_timeout(member)
        # any other stop is at a step of the member's own (a revocation, a lost callback, a poll-timeout
        # leave): some line of that member at that instant must show it (a 2.x static member's poll
        # timeout shows in none)
        return m.get("revoked_at") is not None and not stated.states_instant(member, m["revoked_at"])

    return any(in_generations(m) and untimed(m) for m in truth["partition_movements"])


def _compare_generations(case: Case, view: View, t_gen: dict, r_gen: dict) -> Outcome:
    t_ids = {g: bool(r.get("ended_empty")) for g, r in t_gen.items()}
    r_ids = {g: bool(r.get("ended_empty")) for g, r in r_gen.items()}
    if t_ids == r_ids:
        return Outcome(EXACT)
    detail = f"truth {_short(sorted(t_ids.items()))} replay {_short(sorted(r_ids.items()))}"
    # a client-only view sees the generations some member's JoinGroup or SyncGroup got; a generation
    # the replay inferred beyond those (an Empty one after the last member's LeaveGroup) must be the truth's
    seen = _member_generations(case) | set(r_ids) if view.client_only else set(t_ids)
    if {g: e for g, e in t_ids.items() if g in seen} == r_ids:
        return Outcome(FLAGGED, "absent", detail, mismatch="no member of the view was in it")
    parts = []
    if set(t_ids) - set(r_ids):
        parts.append("missing generation")
    if set(r_ids) - set(t_ids):
        parts.append("extra generation")
    if any(t_ids[g] != r_ids[g] for g in set(t_ids) & set(r_ids)):
        parts.append("ended Empty differs")
    return Outcome(WRONG, "", detail, mismatch=" + ".join(parts))


def _compare_generation_column(t_gen: dict, r_gen: dict, column: str) -> Outcome:
    """Members or leader, per generation both sides have; the first differing generation's kind."""
    worst = Outcome(EXACT)
    for g in sorted(set(t_gen) & set(r_gen)):
        t_value, r_value = t_gen[g].get(column), r_gen[g].get(column)
        if column == "members":
            t_value = sorted(t_value) if t_value is not None else None
            r_value = sorted(r_value) if r_value is not None else None
        if t_value == r_value:
            continue
        detail = f"generation {g}: truth {_short(t_value)} replay {_short(r_value)}"
        if r_value is None:
            outcome = Outcome(FLAGGED, "null", detail, mismatch="null")
        elif t_value is None:
            outcome = Outcome(WRONG, "", detail, mismatch=f"{column} where the truth has none")
        elif column == "members":
            extra, missing = set(r_value) - set(t_value), set(t_value) - set(r_value)
            kind = (
                "extra and missing members"
                if extra and missing
                else "extra member"
                if extra
                else "missing member"
            )
            outcome = Outcome(WRONG, "", detail, mismatch=kind)
        else:
            outcome = Outcome(WRONG, "", detail, mismatch="another member")
        worst = _worse(worst, outcome)
    return worst


def _compare_assignments(t_asg: dict, r_asg: dict, inferred: set[int], members_unknown: set[int]) -> Outcome:
    """Per generation, the members' partitions. A generation whose member list the replay reports null
    (it says it does not know who was in it) has the rows of the members the view showed: flagged when
    each of them is the truth's (the others' rows are absent, not wrong)."""
    worst = Outcome(EXACT)
    for g in sorted(set(t_asg) | set(r_asg), key=lambda x: (x is None, x)):
        t_value, r_value = t_asg.get(g), r_asg.get(g)
        if t_value == r_value:
            continue
        detail = f"generation {g}: truth {_short(t_value)} replay {_short(r_value)}"
        if r_value is None:
            outcome = Outcome(FLAGGED, "null", detail, mismatch="null")
        elif g in inferred:
            outcome = Outcome(FLAGGED, "inferred", detail, mismatch="inferred")
        elif g in members_unknown and t_value and all(t_value.get(m) == tps for m, tps in r_value.items()):
            outcome = Outcome(FLAGGED, "null", detail, mismatch="members unknown: the rows the view showed")
        elif t_value is None:
            outcome = Outcome(WRONG, "", detail, mismatch="assignment of a generation the truth lacks")
        elif set(t_value) != set(r_value):
            outcome = Outcome(WRONG, "", detail, mismatch="other members assigned")
        else:
            outcome = Outcome(WRONG, "", detail, mismatch="other partitions")
        worst = _worse(worst, outcome)
    return worst


def _compare_rounds(case: Case, view: View, truth: dict, replayed: dict) -> Outcome:
    t_rounds, r_rounds = _rounds(truth), _rounds(replayed)
    if t_rounds == r_rounds:
        return Outcome(EXACT)
    detail = f"truth {t_rounds} replay {r_rounds}"
    replayed_generations = set().union(*map(_episode_generations, replayed["rebalance_episodes"]))
    if view.client_only and _rounds(truth, _member_generations(case) | replayed_generations) == r_rounds:
        return Outcome(FLAGGED, "absent", detail, mismatch="no member of the view was in it")
    if _differing_episodes_inferred(truth, replayed, case.slack_ms):
        return Outcome(FLAGGED, "inferred", detail, mismatch="inferred")
    if len(r_rounds) > len(t_rounds):
        kind = "rounds split into more rebalances" if sum(r_rounds) == sum(t_rounds) else "extra rebalances"
    elif len(r_rounds) < len(t_rounds):
        kind = "rebalances merged" if sum(r_rounds) == sum(t_rounds) else "missing rebalances"
    else:
        kind = "more rounds per rebalance" if sum(r_rounds) > sum(t_rounds) else "fewer rounds per rebalance"
    return Outcome(WRONG, "", detail, mismatch=kind)


def _pair_episodes(
    truth: dict, replayed: dict, tolerance_ms: int
) -> tuple[list[tuple[dict, list[dict]]], list[dict]]:
    """Each replayed episode with the truth episodes it stands for, and the truth episodes before every
    replayed one (missing). Episodes are paired by time, not by their rounds. First each replayed episode
    takes the truth episode that started nearest to it within `tolerance_ms`, nearest pairs first, one each
    (the coordinator dates a rebalance by the JoinGroup it got, later than the member that started it; a
    member notices a crash a heartbeat after the coordinator). Every other truth episode belongs to the last
    replayed episode that started at or before it (an inferred episode that merged it), so an observed
    episode that matches its truth keeps counting as matched between two inferred ones; unless the next
    replayed episode claims its generations (`_generations_of_next_episode`)."""

    def by_start(rows):
        return sorted(rows, key=lambda r: (r.get("started_at") or 0, r["episode_id"]))

    episodes, truths = by_start(replayed["rebalance_episodes"]), by_start(truth["rebalance_episodes"])
    starts = [r.get("started_at") or 0 for r in episodes]
    truth_starts = [t.get("started_at") or 0 for t in truths]
    near = sorted(
        (abs(start - at), ti, ri)
        for ti, at in enumerate(truth_starts)
        for ri, start in enumerate(starts)
        if abs(start - at) <= tolerance_ms
    )
    owner: dict[int, int] = {}  # truth index -> replayed index
    taken: set[int] = set()
    for _, ti, ri in near:
        if ti not in owner and ri not in taken:
            owner[ti] = ri
            taken.add(ri)
    paired: list[list[dict]] = [[] for _ in episodes]
    unpaired = []
    for ti, t in enumerate(truths):
        index = owner.get(ti)
        if index is None:
            index = bisect.bisect_right(starts, truth_starts[ti]) - 1
            if _generations_of_next_episode(t, episodes, index + 1):
                index += 1
        (paired[index] if index >= 0 else unpaired).append(t)
    return list(zip(episodes, paired, strict=True)), unpaired


def _generations_of_next_episode(truth_episode: dict, episodes: list[dict], index: int) -> bool:
    """Whether a truth episode no replayed one started near belongs to the replayed episode `index` (the
    one after it in time) by generation ids: that episode formed exactly its generations, or is inferred
    and its generations all lie after the previous replayed episode's last and up to its own last (the
    replay attributes them to it: it skipped or formed them). Either is dated later than the truth's
    rebalance began: by the member that noticed it, or by its first sight (a member-only log learns of a
    generation no member logged from the next generation id or a late line)."""
    if not 0 <= index < len(episodes):
        return False
    generations = _episode_generations(truth_episode)
    if episodes[index].get("source") != "inferred":
        # an observed episode of the very same generations is the same rebalance, dated later by the
        # member that noticed it (a heartbeat after the coordinator: a crash's session expiry)
        return bool(generations) and generations == _episode_generations(episodes[index])
    last = episodes[index].get("last_generation_id")
    before = episodes[index - 1].get("last_generation_id") if index > 0 else 0
    if last is None and episodes[index].get("first_generation_id") is None and index + 1 < len(episodes):
        # an inferred episode that formed no generation of its own: a removal no line showed whose join
        # phase completed as generations no member logged (docs/metrics.md), dated at the latest it can
        # be; those are the ones between the previous episode's last and the next one's first
        after = episodes[index + 1].get("first_generation_id")
        last = after - 1 if after is not None else None
    return (
        bool(generations)
        and None not in (last, before)
        and before < min(generations) <= max(generations) <= last
    )


def _differing_episodes_inferred(truth: dict, replayed: dict, tolerance_ms: int) -> bool:
    """Whether every replayed episode whose rounds differ from the truth's is marked inferred: the replay
    said it could not tell which rebalance those rounds were (episodes paired by `_pair_episodes`). A
    truth episode before every replayed one is missing, and so silently wrong."""
    pairs, unpaired = _pair_episodes(truth, replayed, tolerance_ms)
    if not pairs or unpaired:
        return False
    differing = [r for r, ts in pairs if [t["rounds"] for t in ts] != [r["rounds"]]]
    return bool(differing) and all(r.get("source") == "inferred" for r in differing)


def _differing_rounds_generations(truth: dict, replayed: dict, tolerance_ms: int) -> set[int]:
    """The truth generations of the episodes whose rounds differ (paired by `_pair_episodes`): each round's
    generation, also one whose join phase completed but never turned Stable (the episode's first and last
    generation count only the rounds that completed; random:63, a member paused through generation 1)."""
    pairs, _ = _pair_episodes(truth, replayed, tolerance_ms)
    rounds_of: dict[str, set[int]] = {}
    for row in truth["generations"]:
        if row.get("generation_id") is not None and row.get("episode_id"):
            rounds_of.setdefault(row["episode_id"], set()).add(row["generation_id"])
    out: set[int] = set()
    for r, ts in pairs:
        if [t["rounds"] for t in ts] != [r["rounds"]]:
            for t in ts:
                out |= _episode_generations(t) | rounds_of.get(t["episode_id"], set())
    return out


def _excused_by_inferred(
    truth: dict, replayed: dict, measure: str, inferred: set[int], tolerance_ms: int, bound: int = 0
) -> tuple[bool, set[int]]:
    """Whether each difference in `measure`'s total comes from an episode the replay marks inferred (the
    episode itself, an inferred assignment of one of its generations, or an inferred movement of it): an
    inferred episode excuses only its own difference (its generations and the one before it, whose assignment
    it stops, moves and revokes). Also those truth generations of the differing episodes.
    A truth episode before every replayed one with a nonzero value is missed (not excused); what the totals
    count outside the episodes (which generation's assignment it is of, the rows do not say) is excused by
    any inferred generation or movement. `bound`: what coordinator timing may miss in all (a coordinator-timed
    stw_ms or unavailable_ms): the differences of the episodes no inferred mark excuses, together within it,
    are excused by it (an inferred episode excuses its own difference, the bound the rest)."""
    column = TOTAL_COLUMNS[measure]
    pairs, unpaired = _pair_episodes(truth, replayed, tolerance_ms)
    inferred_movements = {
        m.get("episode_id") for m in replayed["partition_movements"] if m.get("source") == "inferred"
    }

    def value(row: dict) -> int:
        return row.get(column) or 0

    excused, generations, unflagged = True, set(), 0
    if any(value(t) for t in unpaired):
        excused = False
    previous_last: int | None = None
    for r, ts in pairs:
        # what an episode stops, moves and revokes is what the group held before it: the generations since
        # the previous episode's last (a failed round may leave no generation of its own in the row)
        formed = _episode_generations(r, previous=True)
        if previous_last is not None and formed:
            formed |= set(range(previous_last, min(formed)))
        previous_last = r.get("last_generation_id", previous_last)
        if sum(map(value, ts)) == value(r):
            continue
        generations |= set().union(set(), *(_episode_generations(t, previous=True) for t in ts)) or formed
        if not (
            r.get("source") == "inferred" or r["episode_id"] in inferred_movements or bool(formed & inferred)
        ):
            unflagged += abs(sum(map(value, ts)) - value(r))
    excused = excused and unflagged <= bound
    outside_truth = (_totals(truth)[measure] or 0) - sum(map(value, truth["rebalance_episodes"]))
    outside_replay = (_totals(replayed)[measure] or 0) - sum(map(value, replayed["rebalance_episodes"]))
    if outside_truth != outside_replay:  # which generation's assignment that part is of, the rows do not say
        excused = excused and bool(inferred or inferred_movements)
        generations |= set(_generations(truth))
    return excused, generations


def _compare_totals(
    case: Case, truth: dict, replayed: dict, inferred: set[int]
) -> tuple[dict[str, Outcome], dict[str, set[int]]]:
    """The partition measures' outcomes, and per measure the truth generations whose episodes differ
    (what a flag there is about: `_mark_over_cautious`)."""
    out: dict[str, Outcome] = {}
    differing: dict[str, set[int]] = {"rounds": _differing_rounds_generations(truth, replayed, case.slack_ms)}
    t_tot, r_tot = _totals(truth), _totals(replayed)
    coordinator_timed = _coordinator_timed(replayed)
    bounds = {
        "stw_ms": 2 * case.slack_ms * max(1, len(truth["rebalance_episodes"])),
        "unavailable_ms": 2 * case.slack_ms * max(1, len(truth["partition_movements"])),
    }
    assignment_known = bool(replayed["assignments"])
    for measure in PARTITION_MEASURES:
        t_value, r_value = t_tot[measure], r_tot[measure]
        if t_value == r_value:
            out[measure] = Outcome(EXACT)
            continue
        detail = f"truth {t_value} replay {r_value}"
        if (
            r_value is None
        ):  # null: the replay says it does not know (what it knows must not exceed the truth)
            known = _known_totals(replayed)[measure]
            if known <= (t_value or 0):
                out[measure] = Outcome(FLAGGED, "null", f"{detail} (known rows {known})", mismatch="null")
            else:
                out[measure] = Outcome(
                    WRONG, "", f"{detail} (known rows {known})", mismatch="over, beside a null"
                )
            continue
        if t_value is None:  # a hand-written case whose events give no number either
            out[measure] = Outcome(WRONG, "", detail, mismatch="a number where the reference is null")
            continue
        direction = _direction(t_value, r_value)
        timing_bound = bounds.get(measure, 0) if coordinator_timed else 0
        excused, differing[measure] = _excused_by_inferred(
            truth, replayed, measure, inferred, case.slack_ms, timing_bound
        )
        if not assignment_known:  # a number without any assignment behind it: should have been null
            out[measure] = Outcome(
                WRONG,
                "",
                f"{detail} (no assignment known)",
                mismatch=f"{direction}, no assignment known (not null)",
            )
        elif measure in bounds and coordinator_timed and abs(t_value - r_value) <= bounds[measure]:
            out[measure] = Outcome(FLAGGED, "bound", f"{detail} (bound {bounds[measure]})", mismatch="bound")
        elif excused:
            out[measure] = Outcome(FLAGGED, "inferred", detail, mismatch="inferred")
        elif measure in bounds and coordinator_timed:
            out[measure] = Outcome(
                WRONG,
                "",
                f"{detail} (beyond the bound {bounds[measure]})",
                mismatch=f"{direction}, beyond the bound",
            )
        else:
            out[measure] = Outcome(WRONG, "", detail, mismatch=direction)
    return out, differing


def _direction(truth: int, replayed: int) -> str:
    """How a total is off: phantom (truth 0), missed (replay 0), over or under."""
    if truth == 0:
        return "phantom"
    if replayed == 0:
        return "missed"
    return "over" if replayed > truth else "under"


_RANK = {EXACT: 0, FLAGGED: 1, WRONG: 2}


def _worse(a: Outcome, b: Outcome) -> Outcome:
    return b if _RANK[b.cls] > _RANK[a.cls] else a


# ------------------------------------------------------------------------------------------ running
CONNECT_ASSIGNORS = ("sessioned", "compatible")  # Connect's classic protocols (ConnectProtocolCompatibility)


def applies(view: View, case: Case) -> bool:
    """Whether `view` exists for `case`: its protocol's eras, and a side that has events at all (a
    hand-written log of one side has no view of the other)."""
    if not view.applies(case.consumer_protocol):
        return False
    sides = {e.side for e in case.events}
    if view.broker_only:
        return "coordinator" in sides
    return "member" in sides if view.client_only else True


@dataclass(frozen=True)
class Row:
    case_id: str
    kind: str
    consumer_protocol: bool
    view: str
    measure: str
    cls: str
    flag: str
    detail: str
    mismatch: str  # Outcome.mismatch
    unobservable: bool
    over_cautious: bool = False  # Outcome.over_cautious


def run_case(case_id: str, views: Sequence[str] | None = None) -> list[Row]:
    """Every applicable view of one case, every measure (an error in a view: every measure wrong)."""
    default_case = build_case(case_id)
    rows: list[Row] = []
    default_reference = default_case.truth
    if default_reference is None:  # hand-written events: measured against what the events themselves give
        observed = observe(default_case, VIEW_BY_NAME["events"])
        default_reference = replay(observed.events, observed.settings)
    for view in VIEWS:
        if (views and view.name not in views) or not applies(view, default_case):
            continue
        case = case_for_view(default_case, view)
        reference = default_reference if case is default_case else case.truth
        try:
            observed = observe(case, view)
            replayed = replay(observed.events, observed.settings)
            truth = renumbered_truth(reference, observed.renumbering)
            outcomes = compare(case, view, truth, replayed, observed.events)
            outcomes["parsed"] = (
                Outcome(
                    WRONG, "", f"{observed.quarantined} log entries quarantined", mismatch="quarantined lines"
                )
                if observed.quarantined
                else Outcome(EXACT)
            )
        except Exception as exc:  # a crash is a finding: every measure of the view is wrong
            detail, kind = f"error: {type(exc).__name__}: {exc}"[:200], f"error: {type(exc).__name__}"
            outcomes = {m: Outcome(WRONG, "", detail, mismatch=kind) for m in MEASURES}
        for measure in MEASURES:
            o = outcomes[measure]
            rows.append(
                Row(
                    case_id,
                    case.kind,
                    case.consumer_protocol,
                    view.name,
                    measure,
                    o.cls,
                    o.flag,
                    o.detail,
                    o.mismatch,
                    o.unobservable,
                    o.over_cautious,
                )
            )
    return rows


def run_cases(
    ids: Sequence[str], processes: int = 1, views: Sequence[str] | None = None, progress=None
) -> list[Row]:
    rows: list[Row] = []
    started = time.monotonic()
    if processes <= 1:
        for n, case_id in enumerate(ids, 1):
            rows.extend(run_case(case_id, views))
            if progress:
                progress(n, len(ids), started)
        return rows
    with ProcessPoolExecutor(max_workers=processes) as pool:
        for n, case_rows in enumerate(pool.map(_run_case_for_pool, ids, [views] * len(ids), chunksize=2), 1):
            rows.extend(case_rows)
            if progress:
                progress(n, len(ids), started)
    return rows


def _run_case_for_pool(case_id: str, views) -> list[Row]:
    return run_case(case_id, views)


def _print_progress(n: int, total: int, started: float) -> None:
    if n == total or n % 25 == 0:
        elapsed = time.monotonic() - started
        rate = n / elapsed if elapsed else 0.0
        eta = (total - n) / rate if rate else 0.0
        print(f"  {n}/{total} cases, {elapsed:.0f} s, ~{eta:.0f} s left", file=sys.stderr, flush=True)


# ------------------------------------------------------------------------------------------ the matrix
@dataclass
class Cell:
    n: int = 0
    counts: Counter = field(default_factory=Counter)  # cls -> groups
    flags: Counter = field(default_factory=Counter)  # flag kind -> groups
    unobservable: Counter = field(default_factory=Counter)  # cls -> groups tagged unobservable
    over_cautious: int = 0  # flagged groups whose view states what the replay flagged

    def share(self, cls: str) -> float:
        return 100.0 * self.counts[cls] / self.n if self.n else 0.0


SECTIONS = (
    ("classic", "Classic groups (eager, cooperative, static, KIP-415 delayed)"),
    ("consumer", "KIP-848 consumer-protocol groups"),
    (
        "hand",
        "Hand-written event logs (tests/core/replay_scenarios.py; reference = the replay of their events)",
    ),
)


def section_of(row: Row) -> str:
    if row.kind == "hand":
        return "hand"
    return "consumer" if row.consumer_protocol else "classic"


def matrix(rows: Iterable[Row], section: str | None = None) -> dict[tuple[str, str], Cell]:
    """(view, measure) -> Cell over the rows of a section (`SECTIONS`; None: all)."""
    cells: dict[tuple[str, str], Cell] = defaultdict(Cell)
    for row in rows:
        if section is not None and section_of(row) != section:
            continue
        cell = cells[(row.view, row.measure)]
        cell.n += 1
        cell.counts[row.cls] += 1
        if row.flag:
            cell.flags[row.flag] += 1
        if row.unobservable:
            cell.unobservable[row.cls] += 1
        cell.over_cautious += row.over_cautious
    return cells


def _table(cells, value, views: Sequence[str]) -> list[str]:
    header = "| view | n | " + " | ".join(MEASURES) + " |"
    lines = [header, "|" + "---|" * (len(MEASURES) + 2)]
    for view in views:
        present = [cells.get((view, m)) for m in MEASURES]
        if not any(present):
            continue
        n = max(c.n for c in present if c)
        lines.append(
            f"| {view} | {n} | " + " | ".join(value(c, view, m) for c, m in zip(present, MEASURES)) + " |"
        )
    return lines


def _exact_cell(cell: Cell | None, view: str, measure: str, consumer: bool) -> str:
    if cell is None or not cell.n:
        return "n/a"
    text = f"{cell.share(EXACT):.1f}"
    if cell.counts[WRONG]:
        text += f" ⚠{cell.share(WRONG):.0f}"
    return text if carries(VIEW_BY_NAME[view], measure, consumer) else f"({text})"


def _flag_cell(cell: Cell | None) -> str:
    if cell is None or not cell.n:
        return "n/a"
    if not cell.counts[FLAGGED]:
        return "-"
    kinds = ", ".join(f"{k} {100.0 * v / cell.n:.0f}" for k, v in cell.flags.most_common())
    return f"{cell.share(FLAGGED):.1f} ({kinds})"


def _wrong_cell(cell: Cell | None) -> str:
    if cell is None or not cell.n:
        return "n/a"
    if not cell.counts[WRONG]:
        return "0"
    text = f"{cell.share(WRONG):.1f}"
    if cell.unobservable[WRONG]:
        text += f" (u {100.0 * cell.unobservable[WRONG] / cell.n:.0f})"
    return text


def _over_cautious_cell(cell: Cell | None, view: str, measure: str, consumer: bool) -> str:
    if cell is None or not cell.n:
        return "n/a"
    if not carries(VIEW_BY_NAME[view], measure, consumer):
        return "·"
    return f"{100.0 * cell.over_cautious / cell.n:.1f}" if cell.over_cautious else "0"


def render_matrix(rows: list[Row]) -> list[str]:
    out: list[str] = []
    views = [v.name for v in VIEWS]
    for protocol, title in SECTIONS:
        cells = matrix(rows, protocol)
        if not cells:
            continue
        consumer = protocol == "consumer"
        out += [
            f"### {title}",
            "",
            "**% of groups exact** (⚠ = % silently wrong; parentheses = the view does not carry it):",
            "",
        ]
        out += _table(cells, lambda c, v, m, consumer=consumer: _exact_cell(c, v, m, consumer), views)
        out += [
            "",
            "**% flagged: the replay says it cannot know** (null, inferred, a coordinator-timed bound, absent; "
            "per kind, % of groups):",
            "",
        ]
        out += _table(cells, lambda c, v, m: _flag_cell(c), views)
        out += ["", "**% silently wrong** (u = of which the simulator says the events cannot show it):", ""]
        out += _table(cells, lambda c, v, m: _wrong_cell(c), views)
        out += [
            "",
            "**% over-cautious** (of the flagged groups, those whose view's lines state what the replay flagged: "
            "the flag is not forced by the view; · = the view does not carry the measure):",
            "",
        ]
        out += _table(cells, lambda c, v, m, consumer=consumer: _over_cautious_cell(c, v, m, consumer), views)
        out.append("")
    return out


@dataclass
class Tally:
    """Groups with one kind of mismatch in one (view, measure); the first case (in case order) as example,
    and the first seeded random workload among them (its seed reproduces it: `--case random:SEED`)."""

    groups: int = 0
    unobservable: int = 0
    over_cautious: int = 0
    example: str = ""
    random_example: str = ""

    @property
    def examples(self) -> str:
        found = [self.example] + (
            [self.random_example] if self.random_example not in ("", self.example) else []
        )
        return " ".join(f"`{e}`" for e in found)


def mismatch_tallies(rows: Iterable[Row], section: str | None = None) -> dict[tuple, Tally]:
    """(view, measure, cls, mismatch) -> Tally over the non-exact rows of a section (None: all)."""
    tallies: dict[tuple, Tally] = defaultdict(Tally)
    for row in rows:
        if row.cls == EXACT or (section is not None and section_of(row) != section):
            continue
        tally = tallies[(row.view, row.measure, row.cls, row.mismatch or row.flag)]
        tally.groups += 1
        tally.unobservable += row.unobservable
        tally.over_cautious += row.over_cautious
        tally.example = tally.example or row.case_id
        if row.kind == "random":
            tally.random_example = tally.random_example or row.case_id
    return tallies


def top_mismatches(rows: list[Row], view: str, cls: str = WRONG, limit: int = 5) -> list[tuple[tuple, Tally]]:
    """The most frequent kinds of `cls` outcomes in `view` (all sections), most groups first."""
    tallies = mismatch_tallies(r for r in rows if r.view == view)
    found = [(key, t) for key, t in tallies.items() if key[2] == cls]
    return sorted(found, key=lambda kt: (-kt[1].groups, MEASURES.index(kt[0][1]), kt[0][3]))[:limit]


def top_over_cautious(rows: list[Row], view: str | None = None, limit: int = 5) -> list[tuple[tuple, Tally]]:
    """The most frequent kinds of over-cautious flags (in `view`, None: all), most groups first."""
    tallies = mismatch_tallies(r for r in rows if r.over_cautious and view in (None, r.view))
    return sorted(
        tallies.items(), key=lambda kt: (-kt[1].groups, kt[0][0], MEASURES.index(kt[0][1]), kt[0][3])
    )[:limit]


def render_mismatches(rows: list[Row]) -> list[str]:
    out = [
        "## Mismatch kinds",
        "",
        "Every outcome that is not exact, by kind, per view: silently wrong first, then what the replay "
        "reports instead where it cannot know (flagged). *groups* counts the groups of the section with that "
        "kind in that measure (u = of which the simulator says the events cannot show it; over-cautious = of "
        "which the view's lines state what the replay flagged); *example* is the "
        "first such case and the first seeded random workload among them, which "
        "`.venv/bin/python -m benchmarks.fidelity --case CASE --view VIEW --measure MEASURE [--show-log]` "
        "replays in detail.",
        "",
    ]
    order = {WRONG: 0, FLAGGED: 1}
    for section, title in SECTIONS:
        tallies = mismatch_tallies(rows, section)
        if not tallies:
            continue
        groups = {(r.view, r.case_id) for r in rows if section_of(r) == section}
        view_groups = Counter(v for v, _ in groups)
        out += [f"### {title}", ""]
        for view in (v.name for v in VIEWS):
            found = sorted(
                ((key, t) for key, t in tallies.items() if key[0] == view),
                key=lambda kt: (order[kt[0][2]], MEASURES.index(kt[0][1]), -kt[1].groups, kt[0][3]),
            )
            if not found:
                continue
            n = view_groups[view]
            out += [f"**{view}** ({n} groups)", "", "| measure | outcome | kind | groups | % | example |"]
            out.append("|---|---|---|---|---|---|")
            for (_, measure, cls, mismatch), t in found:
                label = "silently wrong" if cls == WRONG else "flagged"
                count = f"{t.groups} (u {t.unobservable})" if t.unobservable else str(t.groups)
                count += f" (over-cautious {t.over_cautious})" if t.over_cautious else ""
                out.append(
                    f"| {measure} | {label} | {mismatch} | {count} | {100.0 * t.groups / n:.1f} | {t.examples} |"
                )
            out.append("")
    return out


def render_remaining(rows: list[Row], limit: int = 3) -> list[str]:
    """The doc's summary: per view, the most frequent silently wrong kinds (all sections)."""
    out = [
        "## What remains: the most frequent silently wrong kinds per view",
        "",
        f"Up to {limit} per view, over all sections; groups = cases with that kind in that measure; example = "
        "the first such case and the first random workload among them (`--case CASE --view VIEW`). The full "
        "tallies, flagged kinds included: *Mismatch kinds* below. Of those groups, *replay wrong* are the "
        "ones where the view carries the fact and the replay got it wrong (a replay bug); *u* the ones "
        "where the simulator says the events cannot show it (`SimulationResult.unobservable`): the view "
        "cannot know, but the replay gave a number instead of saying so (null, inferred or a bound).",
        "",
        "| view | measure | kind | groups | replay wrong | u | example |",
        "|---|---|---|---|---|---|---|",
    ]
    for view in (v.name for v in VIEWS):
        for (_, measure, _, mismatch), t in top_mismatches(rows, view, WRONG, limit):
            out.append(
                f"| {view} | {measure} | {mismatch} | {t.groups} | {t.groups - t.unobservable} "
                f"| {t.unobservable} | {t.examples} |"
            )
    out += [
        "",
        "### Then: the most frequent over-cautious flags per view",
        "",
        f"Up to {limit} per view: flagged outcomes (null, `inferred`, a bound, absent) where the view's own lines "
        "state what the replay flagged, so the flag is not forced by the view (the rule per measure: the "
        "script's docstring, *Justified or over-cautious*). groups = cases with that kind in that measure.",
        "",
        "| view | measure | kind | groups | example |",
        "|---|---|---|---|---|",
    ]
    for view in (v.name for v in VIEWS):
        for (_, measure, _, mismatch), t in top_over_cautious(rows, view, limit):
            out.append(f"| {view} | {measure} | {mismatch} | {t.groups} | {t.examples} |")
    return out + [""]


def render_top_over_cautious(rows: list[Row], limit: int = 15) -> list[str]:
    """The most frequent over-cautious flags over all views (the run's summary)."""
    return [
        f"  {t.groups:5d} {view:14} {measure:15} {mismatch:45} e.g. {t.examples.replace('`', '')}"
        for (view, measure, _, mismatch), t in top_over_cautious(rows, None, limit)
    ]


def render_top_mismatches(rows: list[Row], limit: int = 5) -> list[str]:
    """Per view, the most frequent silently wrong kinds with an example case (the run's summary)."""
    out = []
    for view in (v.name for v in VIEWS):
        top = top_mismatches(rows, view, WRONG, limit)
        if not top:
            continue
        out.append(f"{view}:")
        for (_, measure, _, mismatch), t in top:
            unobservable = f"(u {t.unobservable})" if t.unobservable else ""
            out.append(
                f"  {t.groups:5d} {unobservable:8} {measure:15} {mismatch:45} e.g. {t.examples.replace('`', '')}"
            )
    return out


def git_describe() -> str:
    try:
        described = subprocess.run(
            ["git", "-C", str(ROOT), "describe", "--always", "--dirty", "--tags"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
        date = subprocess.run(
            ["git", "-C", str(ROOT), "log", "-1", "--format=%cI"], capture_output=True, text=True, check=True
        ).stdout.strip()
        return f"{described} ({date})"
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def render_unknowable(rows: list[Row]) -> list[str]:
    """Per view, the measures it does not carry and what the replay reports for them instead."""
    out = [
        "## What a view cannot know, and what the replay reports instead",
        "",
        "Per view, each measure its logs do not carry (`carries` in the script) and, over the groups of the "
        "section, what the replay gave: the truth anyway (exact), a null / an `inferred` value / a "
        "coordinator-timed bound / nothing for a generation no line shows (flagged), or a confident wrong "
        "value (silently wrong, the target is 0).",
        "",
    ]
    for section, title in SECTIONS[:2]:
        cells = matrix(rows, section)
        if not cells:
            continue
        consumer = section == "consumer"
        out += [f"### {title}", "", "| view | measure | exact % | flagged % (kinds) | silently wrong % |"]
        out.append("|---|---|---|---|---|")
        for view in VIEWS:
            for measure in MEASURES:
                cell = cells.get((view.name, measure))
                if cell is None or not cell.n or carries(view, measure, consumer):
                    continue
                kinds = ", ".join(f"{k} {100.0 * v / cell.n:.0f}" for k, v in cell.flags.most_common())
                flagged = f"{cell.share(FLAGGED):.1f}" + (f" ({kinds})" if kinds else "")
                out.append(
                    f"| {view.name} | {measure} | {cell.share(EXACT):.1f} | {flagged} | {cell.share(WRONG):.1f} |"
                )
        out.append("")
    return out


def render_doc(rows: list[Row], command: str) -> str:
    """The report; deterministic for a given code and command (no wall-clock time in it)."""
    kinds = Counter(k for k, _ in {(r.kind, r.case_id) for r in rows})
    lines = [
        "# Fidelity matrix",
        "",
        "Generated by `benchmarks/fidelity.py` (do not edit by hand): the same simulated histories written as "
        "Kafka logs in every view, parsed, replayed and compared with the simulator's truth per measure. How "
        "cases, views, measures and the classification are defined: the script's docstring.",
        "",
        f"- command: `{command}`",
        f"- code: `{git_describe()}`",
        f"- cases: {sum(kinds.values())} ({', '.join(f'{k} {v}' for k, v in sorted(kinds.items()))}); "
        f"{len(rows)} (case, view, measure) outcomes",
        "",
        "Views: `events` = the canonical events (baseline, no log text); `broker-E` = the broker's server.log "
        "alone in wording era E (0.10, 2.x, 3.x = Scala 3.9, 4.x = the Java coordinator of 4.0), replayed with "
        "the topics' partition counts and the group's assignor as `default_assignor`; `client-E` = the "
        "consumers' logs alone; `both-E` = both. KIP-848 groups exist from 3.6 on (no 0.10/2.x views).",
        "",
        "Classification: *exact* = equal to the truth; *flagged* = differs, and the replay says it cannot know "
        "(null, `inferred`, a coordinator-timed value within the protocol's bound, a generation no line of the "
        "view shows); *silently wrong* = differs without saying so. A cell in parentheses is one the view does "
        "not carry (e.g. assignments in a broker log): flagged is the right answer there; a cell without "
        "parentheses must reach 100% exact.",
        "",
    ]
    lines += render_remaining(rows)
    lines += ["## The matrix", ""]
    lines += render_matrix(rows)
    lines += render_unknowable(rows)
    lines += render_mismatches(rows)
    return "\n".join(lines).rstrip() + "\n"


# ------------------------------------------------------------------------------------------ one case
def explain(case_id: str, view_name: str, measure: str | None, show_log: bool) -> None:
    view = VIEW_BY_NAME[view_name]
    case = case_for_view(build_case(case_id), view)
    print(f"{case_id}: {case.description}; {len(case.events)} events; view {view.name}")
    if case.unobservable or case.unobservable_from_coordinator or case.unobservable_from_members:
        print(
            "  simulator: unobservable:",
            case.unobservable[:3],
            "from coordinator:",
            case.unobservable_from_coordinator[:3],
            "from members:",
            case.unobservable_from_members[:3],
        )
    reference = case.truth
    if reference is None:
        observed = observe(case, VIEW_BY_NAME["events"])
        reference = replay(observed.events, observed.settings)
    observed = observe(case, view)
    if show_log:
        for line in observed.lines:
            if (line.stream == BROKER and view.broker_era) or (line.stream == CLIENT and view.client_era):
                print(line.text)
    replayed = replay(observed.events, observed.settings)
    truth = renumbered_truth(reference, observed.renumbering)
    print(
        f"  parsed {len(observed.events)} events, {observed.quarantined} quarantined; settings {observed.settings}"
    )
    for name, outcome in compare(case, view, truth, replayed, observed.events).items():
        if measure and name != measure:
            continue
        kind = f"[{outcome.mismatch}] " if outcome.mismatch else ""
        kind += "[over-cautious] " if outcome.over_cautious else ""
        print(f"  {name:15} {outcome.cls:8} {kind}{outcome.detail}")
    if measure in (None, "rounds", "stw_ms", "unavailable_ms", "moved", "revoked", "wasted"):
        for label, tables in (("truth", truth), ("replay", replayed)):
            print(f"  {label} episodes:")
            for r in tables["rebalance_episodes"]:
                print(
                    f"    {r['episode_id']} rounds={r['rounds']} gens={r['first_generation_id']}-{r['last_generation_id']} "
                    f"stw={r['stw_ms']} unavail={r['partition_unavailable_ms']} moved={r['partitions_moved']} "
                    f"revoked={r['partitions_revoked']} wasted={r['revocations_wasted']} timing={r['timing_source']} "
                    f"source={r['source']}"
                )
    if replayed["anomalies"]:
        print("  replay anomalies:", Counter(a["rule"] for a in replayed["anomalies"]).most_common())


# ------------------------------------------------------------------------------------------ command line
def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--quick",
        action="store_true",
        help="a smoke run: the fixed cases, 40 random workloads, 10 fleet groups",
    )
    parser.add_argument(
        "--workloads", type=int, default=1000, help="seeded random workloads, seeds 0..N-1 (default 1000)"
    )
    parser.add_argument("--fleet", type=int, default=100, help="small fleet groups (default 100)")
    parser.add_argument("--processes", type=int, default=2, help="worker processes (default 2)")
    parser.add_argument(
        "--out", default=str(DOC), help=f"the report (default {DOC.relative_to(ROOT)}); '-' = none"
    )
    parser.add_argument(
        "--rows", metavar="PATH", help="also write every (case, view, measure) outcome as JSON lines"
    )
    parser.add_argument("--case", help="explain one case (e.g. random:17) instead of running the matrix")
    parser.add_argument("--view", default="broker-3.x", help="with --case: the view (default broker-3.x)")
    parser.add_argument("--measure", choices=MEASURES, help="with --case: only this measure")
    parser.add_argument("--show-log", action="store_true", help="with --case: print the view's log text")
    parser.add_argument(
        "--session-timeout",
        action="store_true",
        help="log views also get the group's session.timeout.ms in ReplaySettings (a user who knows it)",
    )
    args = parser.parse_args(argv)
    global GIVE_SESSION_TIMEOUT
    GIVE_SESSION_TIMEOUT = args.session_timeout
    if args.case:
        explain(args.case, args.view, args.measure, args.show_log)
        return 0
    random_count, fleet_count = (40, 10) if args.quick else (args.workloads, args.fleet)
    ids = case_ids(random_count, fleet_count)
    print(f"fidelity: {len(ids)} cases x {len(VIEWS)} views, {args.processes} processes", file=sys.stderr)
    started = time.monotonic()
    rows = run_cases(ids, args.processes, progress=_print_progress)
    seconds = time.monotonic() - started
    # the command that reproduces the rows (processes, --out and --rows do not change them)
    command = f".venv/bin/python -m benchmarks.fidelity --workloads {random_count} --fleet {fleet_count}"
    command += " --session-timeout" if args.session_timeout else ""
    doc = render_doc(rows, command)
    print("\n".join(render_matrix(rows)))
    print("\nmost frequent silently wrong kinds per view (groups, measure, kind, example case):")
    print("\n".join(render_top_mismatches(rows)))
    print("\nmost frequent over-cautious flags (groups, view, measure, kind, example case):")
    print("\n".join(render_top_over_cautious(rows)))
    print(f"{len(ids)} cases, {len(rows)} outcomes, {seconds:.0f} s", file=sys.stderr)
    if args.rows:
        with open(args.rows, "w") as f:
            for row in rows:
                f.write(json.dumps(dataclasses.asdict(row)) + "\n")
    if args.out != "-":
        Path(args.out).write_text(doc)
        print(f"wrote {args.out} ({dt.datetime.now(dt.UTC):%Y-%m-%d %H:%M} UTC)", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
