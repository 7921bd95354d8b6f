"""The membership timeline a simulation runs: what happens to the group's members, and when.

A timeline is plain data: the initial topics and a list of actions at instants (milliseconds after
`start`). It says nothing about how the group protocol reacts; `rebalance_core.simulate` does that.

Actions (each names the member it happens to, except partition count changes):

    join       a consumer process starts and joins (optionally with its own group.instance.id and topics)
    leave      close() for good: onLeavePrepare revokes everything; a dynamic member sends LeaveGroup (the
               coordinator rebalances at once), a static one (group.instance.id) sends none and stays in the
               group until session.timeout.ms expires, then the coordinator removes it and rebalances
               (AbstractCoordinator.maybeLeaveGroup, KIP-345)
    crash      the process dies right after a heartbeat, without LeaveGroup; the coordinator notices
               session.timeout.ms later (AbstractCoordinator heartbeats, GroupCoordinator session expiry)
    restart    the process goes down for `down` and comes back with the same client id (and the same
               group.instance.id when static). graceful (default): close() revokes its partitions and a
               dynamic member sends LeaveGroup, a static one does not (KIP-345); graceful false: killed.
    pause      the member stalls for `duration`: kind `gc` freezes the whole process, heartbeats included
               (beyond session.timeout.ms the coordinator removes it); kind `poll` is a slow poll loop while
               the heartbeat thread keeps running (beyond max.poll.interval.ms the member leaves the group)
    stall      the poll loop stalls for good (the application thread hangs) while the heartbeat thread lives
               on: the member keeps its session but never rejoins. A rebalance it does not rejoin removes
               it at the rebalance timeout (GroupCoordinator.onCompleteJoin, "removed dynamic members who
               haven't joined"; KIP-848: a revocation it never acknowledges fences it); with no rebalance,
               its heartbeat thread finds the poll timer expired after max.poll.interval.ms and leaves
               (AbstractCoordinator.HeartbeatThread: a LeaveGroup for a dynamic member only). Afterwards
               the process can only be killed (crash) or restarted.
    rebalance  the application calls KafkaConsumer.enforceRebalance(): the member rejoins with the client
               reason "rebalance enforced by user" (3.2+; ConsumerCoordinator.requestRejoin), an eager one
               revoking first. The consumer protocol (KIP-848) does not support it: a no-op (AsyncKafkaConsumer
               logs "Operation not supported in new consumer group protocol")
    subscribe  the member changes its subscription (it rejoins: KIP-429 revokes the unsubscribed partitions)
    partitions a topic's partition count grows (Kafka partitions only grow; a new topic starts at 0)
    heartbeat  the member's heartbeat thread sends a heartbeat at this instant. Kafka's heartbeat timer
               drifts (AbstractCoordinator's heartbeat thread waits in retry.backoff.ms steps), so when a
               member learns of a rebalance is its own: a what-if replays the observed instants. The
               regular heartbeat due less than one heartbeat interval before it does not happen.

Document form (YAML or JSON), durations as milliseconds or strings such as "250ms", "45s", "5m", "1h":

    cluster: sim                  # optional
    group_id: orders              # optional
    start: 2024-11-08T10:00:00Z   # optional (epoch ms or ISO-8601)
    end: 30m                      # optional: stop the simulation here (else when the group settles)
    topics: {t: 6}                # a Kafka Connect worker group has `connectors: {name: task count}`
    actions:
      - {at: 0s, action: join, member: c1}
      - {at: 0s, action: join, member: c2, instance_id: c2-host, topics: [t]}
      - {at: 60s, action: crash, member: c2}
      - {at: 90s, action: restart, member: c1, down: 20s, graceful: false}
      - {at: 2m, action: pause, member: c1, duration: 50s, kind: gc}
      - {at: 3m, action: subscribe, member: c1, topics: [t, u]}
      - {at: 4m, action: partitions, topic: t, count: 8}
      - {at: 5m, action: leave, member: c1}
      - {at: 5m30s, action: rebalance, member: c2}
      - {at: 6m, action: stall, member: c2}
      - {at: 301400ms, action: heartbeat, member: c2}

A scenario file adds `settings:` (SimulationSettings fields, read by `rebalance_core.simulate
.load_scenario`) and may carry `name:` and `description:`.

A Kafka Connect worker group (settings.assignor `sessioned` or `compatible`, `rebalance_core.classic.connect`)
names its work `connectors:` (connector -> task count; stored as `topics`) and runs join, leave, crash
and restart: a worker's `leave` stops its connectors and tasks and sends LeaveGroup (workers are dynamic
members); pauses, subscriptions and task count changes are not modelled for workers.
"""

from __future__ import annotations

import datetime as dt
import re
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from rebalance_core.events import parse_ts

DEFAULT_START_MS = 1_730_800_000_000  # 2024-11-05T09:46:40Z: any fixed instant keeps runs reproducible


class TimelineError(ValueError):
    """A timeline document or object that cannot be simulated; the message says what and where."""


# ------------------------------------------------------------------------------------------- actions
@dataclass(frozen=True)
class Join:
    at: int
    member: str
    topics: tuple[str, ...] | None = None  # None: every topic of the timeline's initial `topics`
    instance_id: str | None = None  # group.instance.id; the settings may give every member one


@dataclass(frozen=True)
class Leave:
    at: int
    member: str


@dataclass(frozen=True)
class Crash:
    at: int
    member: str


@dataclass(frozen=True)
class Restart:
    at: int
    member: str
    down_ms: int
    graceful: bool = True


PAUSE_KINDS = ("gc", "poll")


@dataclass(frozen=True)
class Pause:
    at: int
    member: str
    duration_ms: int
    kind: str = "gc"


# a poll loop stalled for good (Stall) is, to a simulator, a slow poll that never returns
STALLED_FOR_GOOD = sys.maxsize


@dataclass(frozen=True)
class Stall:
    """The member's poll loop stops for good; its heartbeat thread keeps running (see the docstring)."""

    at: int
    member: str


@dataclass(frozen=True)
class EnforceRebalance:
    """KafkaConsumer.enforceRebalance() (see the docstring)."""

    at: int
    member: str


@dataclass(frozen=True)
class Subscribe:
    at: int
    member: str
    topics: tuple[str, ...]


@dataclass(frozen=True)
class PartitionCount:
    at: int
    topic: str
    count: int


@dataclass(frozen=True)
class Heartbeat:
    at: int
    member: str


Action = (
    Join | Leave | Crash | Restart | Pause | Stall | EnforceRebalance | Subscribe | PartitionCount | Heartbeat
)

ACTION_NAMES: dict[str, type] = {
    "join": Join,
    "leave": Leave,
    "crash": Crash,
    "restart": Restart,
    "pause": Pause,
    "stall": Stall,
    "rebalance": EnforceRebalance,
    "subscribe": Subscribe,
    "partitions": PartitionCount,
    "heartbeat": Heartbeat,
}


@dataclass(frozen=True)
class Timeline:
    """Initial topics and the actions, sorted by `at` (ties keep document order)."""

    topics: Mapping[str, int]
    actions: tuple[Action, ...]
    cluster: str = "sim"
    group_id: str = "group"
    start_ms: int = DEFAULT_START_MS
    end_ms: int | None = None  # offset after start; None: run until the group settles

    def __post_init__(self) -> None:
        object.__setattr__(self, "topics", dict(self.topics))
        object.__setattr__(self, "actions", tuple(sorted(self.actions, key=lambda a: a.at)))
        validate(self)


# ---------------------------------------------------------------------------------------- validation
def validate(timeline: Timeline) -> None:
    """Raise TimelineError on a timeline that cannot happen (a member acting while it is not running)."""
    for topic, count in timeline.topics.items():
        if not isinstance(count, int) or isinstance(count, bool) or count < 0:
            raise TimelineError(f"topic {topic!r}: partition count must be an integer >= 0, got {count!r}")
    counts = dict(timeline.topics)
    # per member: "up", "down" (left/crashed) or the instant a restart or pause ends
    busy_until: dict[str, int] = {}
    up: dict[str, bool] = {}
    stalled: set[str] = set()  # poll loop stalled for good: the process can only be killed or restarted
    for i, action in enumerate(timeline.actions):
        where = f"action #{i + 1} ({type(action).__name__.lower()} at {action.at} ms)"
        if action.at < 0:
            raise TimelineError(f"{where}: 'at' must be >= 0")
        if isinstance(action, PartitionCount):
            current = counts.get(action.topic, 0)
            if action.count <= current:
                raise TimelineError(
                    f"{where}: topic {action.topic!r} has {current} partitions; Kafka partition counts only grow"
                )
            counts[action.topic] = action.count
            continue
        member = action.member
        if not member:
            raise TimelineError(f"{where}: 'member' must be a non-empty name")
        if isinstance(action, Heartbeat):
            if member not in up:
                raise TimelineError(f"{where}: member {member!r} has not joined")
            continue  # an instant of its heartbeat timer: taken only while it runs
        if member in busy_until and action.at < busy_until[member]:
            raise TimelineError(
                f"{where}: member {member!r} is restarting or paused until {busy_until[member]} ms"
            )
        if isinstance(action, Join):
            if up.get(member):
                raise TimelineError(f"{where}: member {member!r} is already running")
            if action.topics is not None and not action.topics:
                raise TimelineError(f"{where}: 'topics' must not be empty")
            up[member] = True
            continue
        if not up.get(member):
            raise TimelineError(f"{where}: member {member!r} is not running (join it first)")
        if member in stalled and not isinstance(action, (Crash, Restart)):
            raise TimelineError(
                f"{where}: member {member!r}'s poll loop stalled for good: it can only crash or restart"
            )
        stalled.discard(member)
        if isinstance(action, Stall):
            stalled.add(member)
        elif isinstance(action, (Leave, Crash)):
            up[member] = False
        elif isinstance(action, Restart):
            if action.down_ms < 0:
                raise TimelineError(f"{where}: 'down' must be >= 0")
            busy_until[member] = action.at + action.down_ms + 1
        elif isinstance(action, Pause):
            if action.duration_ms <= 0:
                raise TimelineError(f"{where}: 'duration' must be > 0")
            if action.kind not in PAUSE_KINDS:
                raise TimelineError(f"{where}: 'kind' must be one of {', '.join(PAUSE_KINDS)}")
            busy_until[member] = action.at + action.duration_ms + 1
        elif isinstance(action, Subscribe) and not action.topics:
            raise TimelineError(f"{where}: 'topics' must not be empty")
    if timeline.end_ms is not None and timeline.end_ms < 0:
        raise TimelineError("'end' must be >= 0")


# ------------------------------------------------------------------------------------------- loading
_DURATION = re.compile(r"^\s*(\d+)\s*(ms|s|m|h|d)?\s*$")
_UNIT_MS = {"ms": 1, "s": 1000, "m": 60_000, "h": 3_600_000, "d": 86_400_000, None: 1}


def parse_duration(value: Any, what: str = "duration") -> int:
    """Milliseconds from an int (ms) or a string like '250ms', '45s', '5m', '1h', '2d'."""
    if isinstance(value, bool):
        raise TimelineError(f"{what}: expected a duration, got {value!r}")
    if isinstance(value, int):
        return value
    if isinstance(value, str):
        match = _DURATION.match(value)
        if match:
            return int(match.group(1)) * _UNIT_MS[match.group(2)]
    raise TimelineError(f"{what}: expected milliseconds or a duration such as '45s', got {value!r}")


def load_timeline(doc: Mapping[str, Any]) -> Timeline:
    """A Timeline from a parsed YAML/JSON document (see the module docstring); TimelineError if bad."""
    if not isinstance(doc, Mapping):
        raise TimelineError("a timeline must be a mapping with 'topics' and 'actions'")
    known = {"cluster", "group_id", "start", "end", "topics", "connectors", "actions", "settings", "name"}
    unknown = sorted(set(doc) - known - {"description"})
    if unknown:
        raise TimelineError(f"unknown timeline field(s): {', '.join(map(str, unknown))}")
    if "connectors" in doc:  # a Kafka Connect worker group's work: connector -> task count
        if "topics" in doc:
            raise TimelineError(
                "give 'topics' (a consumer group) or 'connectors' (a Connect group), not both"
            )
        topics = doc["connectors"]
        if not isinstance(topics, Mapping) or not topics:
            raise TimelineError("'connectors' must be a non-empty mapping connector -> task count")
    else:
        topics = doc.get("topics")
        if not isinstance(topics, Mapping) or not topics:
            raise TimelineError("'topics' must be a non-empty mapping topic -> partition count")
    raw_actions = doc.get("actions")
    if not isinstance(raw_actions, list) or not raw_actions:
        raise TimelineError("'actions' must be a non-empty list")
    actions = [_load_action(i, raw) for i, raw in enumerate(raw_actions)]
    kwargs: dict[str, Any] = {}
    for key in ("cluster", "group_id"):
        if key in doc:
            if not isinstance(doc[key], str) or not doc[key]:
                raise TimelineError(f"'{key}' must be a non-empty string")
            kwargs[key] = doc[key]
    if "start" in doc:
        kwargs["start_ms"] = _parse_start(doc["start"])
    if "end" in doc:
        kwargs["end_ms"] = parse_duration(doc["end"], "'end'")
    return Timeline(topics={str(t): c for t, c in topics.items()}, actions=tuple(actions), **kwargs)


def _parse_start(value: Any) -> int:
    if isinstance(value, dt.datetime):  # YAML parses unquoted timestamps itself
        value = value if value.tzinfo else value.replace(tzinfo=dt.UTC)
    try:
        return parse_ts(value)
    except (TypeError, ValueError):
        raise TimelineError(
            f"'start': expected epoch milliseconds or an ISO-8601 instant, got {value!r}"
        ) from None


_FIELDS: dict[str, dict[str, bool]] = {  # per action: field -> required
    "join": {"member": True, "topics": False, "instance_id": False},
    "leave": {"member": True},
    "crash": {"member": True},
    "restart": {"member": True, "down": True, "graceful": False},
    "pause": {"member": True, "duration": True, "kind": False},
    "stall": {"member": True},
    "rebalance": {"member": True},
    "subscribe": {"member": True, "topics": True},
    "partitions": {"topic": True, "count": True},
    "heartbeat": {"member": True},
}


def _load_action(index: int, raw: Any) -> Action:
    where = f"action #{index + 1}"
    if not isinstance(raw, Mapping):
        raise TimelineError(f"{where}: must be a mapping with 'at' and 'action'")
    name = raw.get("action")
    if name not in ACTION_NAMES:
        raise TimelineError(f"{where}: 'action' must be one of {', '.join(ACTION_NAMES)}, got {name!r}")
    where = f"{where} ({name})"
    if "at" not in raw:
        raise TimelineError(f"{where}: missing 'at'")
    fields = _FIELDS[name]
    unknown = sorted(set(raw) - set(fields) - {"at", "action"})
    if unknown:
        raise TimelineError(f"{where}: unknown field(s) {', '.join(map(str, unknown))}")
    for field_name, required in fields.items():
        if required and field_name not in raw:
            raise TimelineError(f"{where}: missing '{field_name}'")
    at = parse_duration(raw["at"], f"{where}: 'at'")
    if name == "partitions":
        topic, count = raw["topic"], raw["count"]
        if not isinstance(topic, str) or not topic:
            raise TimelineError(f"{where}: 'topic' must be a topic name")
        if not isinstance(count, int) or isinstance(count, bool):
            raise TimelineError(f"{where}: 'count' must be an integer")
        return PartitionCount(at=at, topic=topic, count=count)
    member = raw["member"]
    if not isinstance(member, str) or not member:
        raise TimelineError(f"{where}: 'member' must be a non-empty string")
    if name == "join":
        instance_id = raw.get("instance_id")
        if instance_id is not None and (not isinstance(instance_id, str) or not instance_id):
            raise TimelineError(f"{where}: 'instance_id' must be a non-empty string")
        topics = _topics(raw["topics"], where) if raw.get("topics") is not None else None
        return Join(at=at, member=member, topics=topics, instance_id=instance_id)
    if name == "leave":
        return Leave(at=at, member=member)
    if name == "heartbeat":
        return Heartbeat(at=at, member=member)
    if name == "crash":
        return Crash(at=at, member=member)
    if name == "stall":
        return Stall(at=at, member=member)
    if name == "rebalance":
        return EnforceRebalance(at=at, member=member)
    if name == "restart":
        graceful = raw.get("graceful", True)
        if not isinstance(graceful, bool):
            raise TimelineError(f"{where}: 'graceful' must be true or false")
        return Restart(
            at=at, member=member, down_ms=parse_duration(raw["down"], f"{where}: 'down'"), graceful=graceful
        )
    if name == "pause":
        kind = raw.get("kind", "gc")
        duration = parse_duration(raw["duration"], f"{where}: 'duration'")
        return Pause(at=at, member=member, duration_ms=duration, kind=kind)
    return Subscribe(at=at, member=member, topics=_topics(raw["topics"], where))


def _topics(value: Any, where: str) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(t, str) and t for t in value):
        raise TimelineError(f"{where}: 'topics' must be a list of topic names")
    return tuple(dict.fromkeys(value))
