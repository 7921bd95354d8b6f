"""Patterns across one group's rebalances, as `rebalance_incidents` rows.

Kinds (`IncidentKind`):
  rebalance_storm     >= `storm_rebalances` episodes starting within `storm_window_ms` (one row per
                      maximal run of such windows)
  stuck_rebalance     an episode open longer than the group's rebalance timeout (the members'
                      JoinGroup rebalance_timeout_ms, else `default_rebalance_timeout_ms` = Kafka's
                      max.poll.interval.ms default): GroupCoordinator bounds a join phase by it
  rolling_restart     members leave (or fail, or are replaced: KIP-345) and rejoin one after another:
                      >= `rolling_members` distinct members, consecutive changes at most
                      `rolling_gap_ms` apart
  flapping_member     the same member (group.instance.id, else client id@host, else client id) leaves
                      and rejoins >= `flap_count` times within `flap_window_ms`
  unowned_partitions  a Stable generation leaves partitions of its subscribed topics with no owner
                      (e.g. members' subscriptions differ, a leader that did not see new partitions):
                      nobody consumes them until the next rebalance. Their partition-milliseconds are
                      the row's `partition_unavailable_ms`; those of partitions no member ever owned are
                      also `uncounted_unavailable_ms` (the ownership timeline has no stop for them, so
                      the replay's own unavailability misses them).
  coordinator_move    (cross-group, `coordinator.move_incidents`) one broker's groups moving at once

Pure: no I/O, no clock. `IncidentTracker` sees every event of one group (`observe`) and its annotated
episode rows (`episodes`), emits rows as the patterns close, and `finish` closes what is open.

Across nightly runs: a pattern is over only when its window has passed without a continuation (a storm
`storm_window_ms` after its last rebalance, a rolling restart `rolling_gap_ms` after its last change, a
flapping member `flap_window_ms` after its last departure; unowned partitions at the next rebalance).
A row is dated by that instant (`over_at`), so a storm whose last rebalance is at 23:55 with a 10 min
window belongs to the next day. A run that is not final (`finish(final=False)`) closes what is over by
the end of its last date (`run_end_ms`) and carries the rest, with the recent rebalances and departures
the windows look back on, in the group's state (`snapshot`): the next night's run continues them. So
running D-1 then D writes the same incidents as running both dates at once; a final run closes
everything at the end of its input, dated at most its last date.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from enum import Enum
from typing import Any

from rebalance_core.checkpoint_rows import tps_from_json, tps_to_json
from rebalance_core.events import Event, TopicPartition, classic_member_owner
from rebalance_core.measure_records import utc_date
from rebalance_core.rebalance_reasons import Cause
from schemas.events import EventType


class IncidentKind(str, Enum):
    REBALANCE_STORM = "rebalance_storm"
    STUCK_REBALANCE = "stuck_rebalance"
    ROLLING_RESTART = "rolling_restart"
    FLAPPING_MEMBER = "flapping_member"
    UNOWNED_PARTITIONS = "unowned_partitions"
    COORDINATOR_MOVE = "coordinator_move"


@dataclass(frozen=True)
class IncidentSettings:
    storm_rebalances: int = 5  # N
    storm_window_ms: int = 10 * 60_000  # M minutes
    default_rebalance_timeout_ms: int = 300_000  # max.poll.interval.ms default (JoinGroup rebalance timeout)
    rolling_members: int = 3
    rolling_gap_ms: int = 10 * 60_000
    flap_count: int = 3
    flap_window_ms: int = 30 * 60_000
    coordinator_move_window_ms: int = 60_000
    coordinator_move_groups: int = 2  # groups moving off one broker within the window: one incident


_DEPARTURES = frozenset(
    {Cause.MEMBER_LEFT.value, Cause.SESSION_TIMEOUT.value, Cause.POLL_TIMEOUT.value, Cause.SYNC_TIMEOUT.value}
)


def incident_row(
    key: dict[str, Any],
    kind: IncidentKind,
    started_at: int | None,
    ended_at: int | None,
    *,
    episodes: list[str] | None = None,
    members: list[str] | None = None,
    groups: list[str] | None = None,
    partitions: list[str] | None = None,
    partition_unavailable_ms: int | None = None,
    uncounted_unavailable_ms: int | None = None,
    detail: str | None = None,
    dated_at: int | None = None,
) -> dict[str, Any]:
    """A `rebalance_incidents` row, dated by `dated_at` (when it was known to be over), else its end
    (else its start)."""
    anchor = ended_at if ended_at is not None else started_at
    return {
        **key,
        "event_date": utc_date(dated_at if dated_at is not None else anchor or 0),
        "incident_id": f"{key.get('group_id') or key.get('cluster')}:{kind.value}@{anchor}",
        "kind": kind.value,
        "started_at": started_at,
        "ended_at": ended_at,
        "duration_ms": ended_at - started_at if started_at is not None and ended_at is not None else None,
        "episodes": len(episodes) if episodes is not None else None,
        "first_episode_id": episodes[0] if episodes else None,
        "last_episode_id": episodes[-1] if episodes else None,
        "members": sorted(set(members)) if members else None,
        "groups": sorted(set(groups)) if groups else None,
        "partitions": partitions,
        "partition_unavailable_ms": partition_unavailable_ms,
        "uncounted_unavailable_ms": uncounted_unavailable_ms,
        "detail": detail,
    }


@dataclass
class _Run:
    """An open pattern: its start, last instant, episodes and members so far."""

    started_at: int
    last_at: int
    episodes: list[str] = field(default_factory=list)
    members: list[str] = field(default_factory=list)
    reported: bool = False  # reached the threshold


@dataclass
class _Unowned:
    generation_id: int | None
    since: int
    partitions: list[str]
    never_owned: int


# event types compared with every event, as plain strings (an enum member's .value is a Python-level property)
_ASSIGNMENT_COMPUTED = EventType.ASSIGNMENT_COMPUTED.value
_ASSIGNMENT_RECEIVED = EventType.ASSIGNMENT_RECEIVED.value
_GROUP_DEAD = EventType.GROUP_DEAD.value
_GROUP_EMPTY = EventType.GROUP_EMPTY.value
_HEARTBEAT_REBALANCING = EventType.HEARTBEAT_REBALANCING.value
_JOIN_RECEIVED = EventType.JOIN_RECEIVED.value
_JOIN_REQUESTED = EventType.JOIN_REQUESTED.value
_MEMBER_REMOVED = EventType.MEMBER_REMOVED.value
_REBALANCE_PREPARED = EventType.REBALANCE_PREPARED.value
_STATIC_MEMBER_REPLACED = EventType.STATIC_MEMBER_REPLACED.value
_TOPIC_METADATA_CHANGED = EventType.TOPIC_METADATA_CHANGED.value


class IncidentTracker:
    def __init__(
        self,
        key: dict[str, Any],
        settings: IncidentSettings | None = None,
        topics=None,
        state: dict | None = None,
        run_end_ms: int | None = None,
    ):
        self.key = key
        self.run_end_ms = run_end_ms  # the end of the run's last date (None: the end of the input)
        self.settings = settings or IncidentSettings()
        self.topics: dict[str, int] = dict(topics or {})  # partition counts known
        self.subscriptions: dict[str, tuple[str, ...]] = {}  # member -> subscribed topics
        self.rebalance_timeout_ms: int | None = None
        self.ever_owned: set[TopicPartition] = set()
        self.previous_assignment: dict[str, set[TopicPartition]] = {}
        self.assignment_generation: int | None = None
        self.unowned: _Unowned | None = None
        self.recent_starts: deque[tuple[int, str]] = deque()
        self.storm: _Run | None = None
        self.rolling: _Run | None = None
        self.rolling_departed: set[str] = set()
        self.departures: dict[str, deque[int]] = {}  # identity -> departure instants (flapping)
        self.flapping: dict[str, _Run] = {}
        self.last_ts: int | None = None
        self.out: list[dict] = []
        if state:
            self._restore(state)

    # ------------------------------------------------------------------------------------- events
    def observe(self, e: Event) -> None:
        self.last_ts = e.ts if self.last_ts is None else max(self.last_ts, e.ts)
        t = e.event_type
        if t == _JOIN_RECEIVED:
            timeout = (e.attributes or {}).get("rebalance_timeout_ms")
            if timeout and timeout.isdigit():
                self.rebalance_timeout_ms = max(self.rebalance_timeout_ms or 0, int(timeout))
            if e.member_id and e.subscription is not None:
                self.subscriptions[e.member_id] = tuple(e.subscription)
        elif t == _GROUP_DEAD:
            self.assignment_generation = None  # generations restart at 0
        elif t == _TOPIC_METADATA_CHANGED:
            for name, value in (e.attributes or {}).items():
                if name.startswith("topic.") and value.isdigit():
                    self.topics[name[6:]] = int(value)
        elif t == _MEMBER_REMOVED and e.member_id:
            self.subscriptions.pop(e.member_id, None)
        elif t == _STATIC_MEMBER_REPLACED:
            # a static member restarted without a rebalance (KIP-345): it left and rejoined
            self._membership_change(
                e.ts, None, _identity(e.group_instance_id, e.client_id, None, e.member_id)
            )
        if t in (_ASSIGNMENT_RECEIVED, _ASSIGNMENT_COMPUTED) and e.assignment:
            self._stable_assignment(e)
        elif t in (
            _REBALANCE_PREPARED,
            _GROUP_EMPTY,
            _GROUP_DEAD,
            _JOIN_REQUESTED,
            _HEARTBEAT_REBALANCING,
        ):
            self._close_unowned(e.ts)

    def _stable_assignment(self, e: Event) -> None:
        if e.generation_id is not None and e.generation_id == self.assignment_generation:
            return  # the leader's and the coordinator's view of the same generation
        self.assignment_generation = e.generation_id
        self._close_unowned(e.ts)
        assigned = {tp for tps in e.assignment.values() for tp in tps}
        for tp in assigned:
            if tp.partition + 1 > self.topics.get(tp.topic, 0):
                self.topics[tp.topic] = tp.partition + 1
        members = list(e.assignment)
        subscribed: set[str] = set()
        for member in members:
            subscribed.update(self.subscriptions.get(member) or ())
        if not subscribed:
            subscribed = {tp.topic for tp in assigned}
        expected = {TopicPartition(t, p) for t in subscribed for p in range(self.topics.get(t, 0))}
        # KIP-429: a cooperative round withholds what a continuing member must revoke first; the follow-up
        # round hands it out (its time is the owner's revocation, already measured by the timeline)
        withheld = {
            tp
            for member, tps in e.assignment.items()
            for tp in self.previous_assignment.get(member, ())
            if tp not in tps
        }
        self.previous_assignment = {m: set(tps) for m, tps in e.assignment.items()}
        missing = sorted(expected - assigned - withheld)
        never = sum(1 for tp in missing if tp not in self.ever_owned)
        self.ever_owned.update(assigned)
        if missing:
            self.unowned = _Unowned(e.generation_id, e.ts, [str(tp) for tp in missing], never)

    def _close_unowned(self, ts: int) -> None:
        u, self.unowned = self.unowned, None
        if u is None:
            return
        duration = max(0, ts - u.since)
        self.out.append(
            incident_row(
                self.key,
                IncidentKind.UNOWNED_PARTITIONS,
                u.since,
                ts,
                partitions=u.partitions,
                partition_unavailable_ms=duration * len(u.partitions),
                uncounted_unavailable_ms=duration * u.never_owned,
                detail=f"generation {u.generation_id}: {len(u.partitions)} partition(s) of subscribed topics "
                f"unassigned ({u.never_owned} never owned)",
            )
        )

    # ----------------------------------------------------------------------------------- episodes
    def episodes(self, rows: list[dict]) -> None:
        for row in sorted(rows, key=lambda r: r.get("started_at") or r.get("stabilized_at") or 0):
            self._storm(row)
            self._stuck(row)
            cause = row.get("cause")
            identity = _identity(
                None, row.get("trigger_client_id"), row.get("trigger_host"), row.get("trigger_member_id")
            )
            at = row.get("started_at") or row.get("stabilized_at")
            if at is None:
                continue
            if cause in _DEPARTURES:
                self._membership_change(at, row["episode_id"], identity, departed=True)
            elif cause in (Cause.MEMBER_JOINED.value, Cause.STATIC_MEMBER_REPLACED.value):
                self._membership_change(
                    at, row["episode_id"], identity, departed=cause == Cause.STATIC_MEMBER_REPLACED.value
                )

    def _storm(self, row: dict) -> None:
        s = self.settings
        at = row.get("started_at") or row.get("stabilized_at")
        if at is None:
            return
        self.recent_starts.append((at, row["episode_id"]))
        while self.recent_starts and self.recent_starts[0][0] < at - s.storm_window_ms:
            self.recent_starts.popleft()
        if self.storm is not None and self.storm.last_at < at - s.storm_window_ms:
            self._close_storm()
        if len(self.recent_starts) >= s.storm_rebalances:
            if self.storm is None:
                first = self.recent_starts[0][0]
                self.storm = _Run(first, at, [ep for _, ep in self.recent_starts])
            else:
                self.storm.last_at = at
                self.storm.episodes.append(row["episode_id"])

    def _close_storm(self, until: int | None = None) -> None:
        storm, self.storm = self.storm, None
        if storm is None:
            return
        self.out.append(
            incident_row(
                self.key,
                IncidentKind.REBALANCE_STORM,
                storm.started_at,
                storm.last_at,
                episodes=storm.episodes,
                detail=f"{len(storm.episodes)} rebalances, >= {self.settings.storm_rebalances} within "
                f"{self.settings.storm_window_ms // 60_000} min",
                dated_at=_over_at(storm.last_at + self.settings.storm_window_ms, until),
            )
        )

    def _stuck(self, row: dict) -> None:
        timeout = self.rebalance_timeout_ms or self.settings.default_rebalance_timeout_ms
        started = row.get("started_at")
        ended = row.get("stabilized_at")
        open_episode = ended is None
        if started is None:
            return
        end = ended if ended is not None else self.last_ts
        if end is None or end - started <= timeout:
            return
        source = "the members' JoinGroup" if self.rebalance_timeout_ms else "default"
        self.out.append(
            incident_row(
                self.key,
                IncidentKind.STUCK_REBALANCE,
                started,
                ended,
                episodes=[row["episode_id"]],
                members=[row["trigger_member_id"]] if row.get("trigger_member_id") else None,
                detail=f"{'still open after' if open_episode else 'took'} {end - started} ms > rebalance "
                f"timeout {timeout} ms ({source}); {row.get('rounds')} round(s)",
            )
        )

    def _membership_change(self, at: int, episode: str | None, identity: str | None, departed=True) -> None:
        s = self.settings
        if self.rolling is not None and at - self.rolling.last_at > s.rolling_gap_ms:
            self._close_rolling()
        if self.rolling is None:
            self.rolling = _Run(at, at)
            self.rolling_departed = set()
        self.rolling.last_at = at
        if episode:
            self.rolling.episodes.append(episode)
        if identity:
            self.rolling.members.append(identity)
            if departed:
                self.rolling_departed.add(identity)
        if departed and identity:
            self._flap(at, identity, episode)

    def _close_rolling(self, until: int | None = None) -> None:
        run, self.rolling = self.rolling, None
        if run is None or len(self.rolling_departed) < self.settings.rolling_members:
            return
        self.out.append(
            incident_row(
                self.key,
                IncidentKind.ROLLING_RESTART,
                run.started_at,
                run.last_at,
                episodes=run.episodes,
                members=sorted(self.rolling_departed),
                detail=f"{len(self.rolling_departed)} members left and rejoined one after another",
                dated_at=_over_at(run.last_at + self.settings.rolling_gap_ms, until),
            )
        )

    def _flap(self, at: int, identity: str, episode: str | None) -> None:
        s = self.settings
        times = self.departures.setdefault(identity, deque())
        times.append(at)
        while times and times[0] < at - s.flap_window_ms:
            times.popleft()
        run = self.flapping.get(identity)
        if run is not None and at - run.last_at > s.flap_window_ms:
            self._close_flap(identity)
            run = None
        if len(times) >= s.flap_count:
            if run is None:
                run = self.flapping[identity] = _Run(times[0], at, members=[identity])
            run.last_at = at
            if episode:
                run.episodes.append(episode)

    def _close_flap(self, identity: str, until: int | None = None) -> None:
        run = self.flapping.pop(identity, None)
        if run is None:
            return
        departures = sum(1 for t in self.departures.get(identity, ()) if t >= run.started_at)
        self.out.append(
            incident_row(
                self.key,
                IncidentKind.FLAPPING_MEMBER,
                run.started_at,
                run.last_at,
                episodes=run.episodes or None,
                members=[identity],
                detail=f"{identity} left and rejoined {max(departures, self.settings.flap_count)} times",
                dated_at=_over_at(run.last_at + self.settings.flap_window_ms, until),
            )
        )

    # ------------------------------------------------------------------------------------- output
    def drain(self) -> list[dict]:
        out, self.out = self.out, []
        return out

    def finish(self, final: bool = True) -> list[dict]:
        """Close what is open at the end of the run. Final: everything (dated at most the run's end);
        else only what is over by the end of the run's last date, the rest is carried (`snapshot`)."""
        s, end = self.settings, self.run_end_ms
        if final:
            until = end if end is not None else self.last_ts
            if self.last_ts is not None:
                self._close_unowned(self.last_ts)
            self._close_storm(until)
            self._close_rolling(until)
            for identity in list(self.flapping):
                self._close_flap(identity, until)
            return self.drain()
        if end is None:
            return self.drain()  # no run end known: everything open goes on
        if self.storm is not None and self.storm.last_at + s.storm_window_ms <= end:
            self._close_storm()
        if self.rolling is not None and self.rolling.last_at + s.rolling_gap_ms <= end:
            self._close_rolling()
        for identity, run in list(self.flapping.items()):
            if run.last_at + s.flap_window_ms <= end:
                self._close_flap(identity)
        return self.drain()

    # ------------------------------------------------------------------------ across nightly runs
    def snapshot(self) -> dict:
        """What the next night's run needs to go on (JSON-ready): the open patterns and what their
        windows look back on, the subscriptions and ownership the unowned check compares with."""
        s, last = self.settings, self.last_ts or 0
        departures = {
            who: [t for t in times if t >= last - s.flap_window_ms] for who, times in self.departures.items()
        }
        return {
            "last_ts": self.last_ts,
            "topics": self.topics,
            "subscriptions": {m: list(t) for m, t in self.subscriptions.items()},
            "rebalance_timeout_ms": self.rebalance_timeout_ms,
            "ever_owned": sorted(tps_to_json(self.ever_owned)),
            "previous_assignment": {
                m: sorted(tps_to_json(tps)) for m, tps in self.previous_assignment.items()
            },
            "assignment_generation": self.assignment_generation,
            "unowned": None if self.unowned is None else vars(self.unowned).copy(),
            "recent_starts": [list(x) for x in self.recent_starts if x[0] >= last - s.storm_window_ms],
            "storm": _run_state(self.storm),
            "rolling": _run_state(self.rolling),
            "rolling_departed": sorted(self.rolling_departed),
            "departures": {who: times for who, times in departures.items() if times},
            "flapping": {who: _run_state(run) for who, run in self.flapping.items()},
        }

    def _restore(self, state: dict) -> None:
        self.last_ts = state.get("last_ts")
        for topic, count in (state.get("topics") or {}).items():
            self.topics[topic] = max(count, self.topics.get(topic, 0))
        self.subscriptions = {m: tuple(t) for m, t in (state.get("subscriptions") or {}).items()}
        self.rebalance_timeout_ms = state.get("rebalance_timeout_ms")
        self.ever_owned = set(tps_from_json(state.get("ever_owned") or ()))
        self.previous_assignment = {
            m: set(tps_from_json(tps)) for m, tps in (state.get("previous_assignment") or {}).items()
        }
        self.assignment_generation = state.get("assignment_generation")
        unowned = state.get("unowned")
        self.unowned = _Unowned(**{**unowned, "partitions": list(unowned["partitions"])}) if unowned else None
        self.recent_starts = deque(tuple(x) for x in state.get("recent_starts") or ())
        self.storm = _run_of(state.get("storm"))
        self.rolling = _run_of(state.get("rolling"))
        self.rolling_departed = set(state.get("rolling_departed") or ())
        self.departures = {who: deque(times) for who, times in (state.get("departures") or {}).items()}
        self.flapping = {who: _run_of(run) for who, run in (state.get("flapping") or {}).items()}


def _over_at(over_at: int, until: int | None) -> int:
    """When a pattern was over: its window's end, at most the end of the run (`until`) that closes it."""
    return over_at if until is None else min(over_at, until)


def _run_state(run: _Run | None) -> dict | None:
    return None if run is None else vars(run).copy()


def _run_of(state: dict | None) -> _Run | None:
    if state is None:
        return None
    return _Run(**{name: list(v) if isinstance(v, list) else v for name, v in state.items()})


def _identity(instance: str | None, client: str | None, host: str | None, member: str | None) -> str | None:
    """Who a member is across restarts: its group.instance.id (KIP-345), else client id@host, else the
    client id (weak: processes may share one), else the client id a classic member id was made from."""
    if instance:
        return instance
    if client and host:
        return f"{client}@{host}"
    if client:
        return client
    if member:
        return classic_member_owner(member) or member
    return None
