"""A discrete-event model of Kafka's classic consumer group protocol, with ground truth.

`simulate(timeline, settings)` plays a membership timeline (`rebalance_core.timeline`) against a model
of both sides of the protocol and returns the canonical events both sides would log (docs/events.md)
and the tables a perfect reconstruction must produce (docs/metrics.md), measured by the same
`OwnershipTimeline` the reconstructor uses, from the simulator's own record of when each member really
started and stopped each partition.

What is modelled, and where it comes from (Kafka):
- coordinator (GroupCoordinator / ClassicGroup): states Empty, PreparingRebalance, CompletingRebalance,
  Stable; JoinGroup / SyncGroup / Heartbeat / LeaveGroup; the first member to join an empty group leads,
  and the leader is kept while it rejoins; a leader that leaves or does not rejoin is replaced by the
  first member in the iteration order of the coordinator's members HashMap (`coordinator_member_map`,
  rebalance_core.classic.member_order), not the join order; the join phase completes when every member has rejoined or at the rebalance
  timeout (max.poll.interval.ms), dropping dynamic members that did not rejoin; an Empty group waits
  group.initial.rebalance.delay.ms (InitialDelayedJoin, extended while new members keep arriving, up to
  the rebalance timeout); a dynamic member's first JoinGroup only reserves its member id (KIP-394:
  MEMBER_ID_REQUIRED, a pending member that the join phase waits for and that expires after its
  session timeout if it never joins again); session expiry at last heartbeat + session.timeout.ms, except for members
  parked in the join or sync phase; pending-sync expiry; static membership (KIP-345): a known
  group.instance.id rejoining with an unknown member id replaces the old id, without a rebalance when
  the group is Stable.
- member (AbstractCoordinator / ConsumerCoordinator): the heartbeat thread learns of a rebalance at its
  next heartbeat; onJoinPrepare revokes everything (eager) or only unsubscribed topics (cooperative,
  KIP-429); onJoinComplete assigns everything (eager) or revokes owned-minus-assigned, assigns
  assigned-minus-owned and rejoins when it revoked anything (cooperative); a reset generation makes the
  partitions lost (so does close() during a rebalance); close() revokes and sends LeaveGroup (a static
  member sends none and stays until its session times out); a poll loop stuck past max.poll.interval.ms
  makes the heartbeat thread leave the group; the leader rejoins when the topic metadata its assignment
  used has changed (a static leader back without a rebalance, KIP-814 skipAssignment, from the metadata
  it sees on its return).
- Kafka Connect worker groups (settings.assignor `sessioned` / `compatible`): the same coordinator; the
  workers (WorkerCoordinator / DistributedHerder) and the leader's IncrementalCooperativeAssignor with
  KIP-415's scheduled.rebalance.max.delay.ms are `rebalance_core.classic.connect`. No consumer group has that
  delay: a consumer group's settings with it are a SimulationError.

Time is simulated (epoch ms from the timeline's start); nothing reads the wall clock. The same timeline,
settings and seed give the same events, ids and truth.

Ground truth (`rebalance_core.sim_truth`) follows the ownership rules of docs/metrics.md with
member-side timing: a partition starts at the member's onPartitionsAssigned; it stops at the first
rebalance signal (eager), at onPartitionsRevoked (cooperative, and close()), onPartitionsLost, at a
poll-timeout leave (member_left), or, for a member that died or froze, at its last heartbeat
(member_failed, recorded when the coordinator removes it). Where the events cannot reveal a true
instant (a member that died while parked in a rebalance, a static member killed and replaced before
its session expired, a member assigned partitions before its own log shows it), the simulator says so
in `SimulationResult.unobservable`; `unobservable_from_coordinator` lists what a broker log alone
cannot show, `unobservable_from_members` what the members' logs alone cannot (the last member failing
silently: only the coordinator logs its removal and the rebalance it starts).

Every protocol step runs in its own millisecond: replay orders events of the same instant by protocol
rank (`replay.event_order_key`), which matches causality only within one step.
"""

from __future__ import annotations

import random
import uuid
from collections import deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, fields
from typing import Any

from rebalance_core.assignors import SERVER_ASSIGNORS, AssignmentError, RebalanceProtocol, get_assignor
from rebalance_core.classic.connect import (
    CONNECT_PROTOCOL_TYPE,
    CONNECT_PROTOCOLS,
    DEFAULT_MAX_DELAY_MS,
    WorkerAssignment,
)
from rebalance_core.classic.member_order import IMPLEMENTATIONS, SCALA_2_13, MemberMapOrder
from rebalance_core.classic.sim_coordinator import CoordinatorSide
from rebalance_core.classic.sim_join import CoordinatorJoin
from rebalance_core.classic.sim_member import MemberSide
from rebalance_core.classic.sim_member_join import MemberJoin
from rebalance_core.classic.sim_queue import EventQueue
from rebalance_core.classic.sim_state import EMPTY, GroupMember, Process
from rebalance_core.classic.sim_worker import ConnectWorkerSide
from rebalance_core.events import Event, TopicPartition
from rebalance_core.sim_truth import PROTOCOL_TYPE, GroundTruth
from rebalance_core.timeline import (
    STALLED_FOR_GOOD,
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
    TimelineError,
    load_timeline,
    parse_duration,
)
from schemas.events import EventType, Side

CONSUMER_PROTOCOL = "consumer"  # group.protocol=consumer (KIP-848)


class SimulationError(ValueError):
    """Settings (or a scenario) the simulator cannot run; the message says what."""


# ------------------------------------------------------------------------------------------ settings
@dataclass(frozen=True)
class SimulationSettings:
    """Client, broker and network settings of one simulation (Kafka config names in comments).

    A Kafka Connect worker group (`rebalance_core.classic.connect`) is one whose `assignor` is a Connect protocol,
    `sessioned` or `compatible` (connect.protocol; IncrementalCooperativeAssignor): its members are
    workers, the timeline's topics are connectors and their task counts, `max_poll_interval_ms` is the
    worker's rebalance.timeout.ms (Connect default 60 s; session 10 s, heartbeat 3 s: set them)."""

    assignor: str = "range"  # partition.assignment.strategy (one assignor), or a Connect protocol
    protocol: str | None = None  # eager | cooperative; None: the assignor's preferred (KIP-429)
    static_membership: bool = False  # every member gets group.instance.id = its name (KIP-345)
    session_timeout_ms: int = 45_000  # session.timeout.ms (classic protocol; the client's)
    # KIP-848 (group.protocol=consumer): the broker decides, the client's session.timeout.ms and
    # heartbeat.interval.ms do not apply (GroupCoordinatorConfig defaults)
    group_consumer_session_timeout_ms: int = 45_000  # broker group.consumer.session.timeout.ms
    group_consumer_heartbeat_interval_ms: int = 5_000  # broker group.consumer.heartbeat.interval.ms
    max_poll_interval_ms: int = 300_000  # max.poll.interval.ms, also the rebalance timeout
    heartbeat_interval_ms: int = 3_000  # heartbeat.interval.ms
    group_initial_rebalance_delay_ms: int = 3_000  # broker group.initial.rebalance.delay.ms
    # Connect's scheduled.rebalance.max.delay.ms (KIP-415; None: its default, 5 min); no consumer has it
    scheduled_rebalance_max_delay_ms: int | None = None
    join_round_trip_ms: int = 20  # JoinGroup / LeaveGroup request + response
    sync_round_trip_ms: int = 10  # SyncGroup request + response
    revoke_callback_ms: int = 5  # onPartitionsRevoked duration
    assignment_ms: int = 2  # the leader computing the assignment
    metadata_refresh_ms: int = 100  # the leader seeing a partition count change
    network_jitter_ms: int = 0  # each message takes up to this much longer (seeded)
    seed: int = 0
    # the members' Kafka client release ("2.5"), where an assignor's algorithm depends on it (the sticky
    # ones before 2.6: rebalance_core.assignors.get_assignor); None: today's
    client_version: str | None = None
    coordinator: str = "broker-0"  # `source` of coordinator events
    # the coordinator's members map, whose iteration order picks the next leader (rebalance_core.classic.member_order:
    # "java" = the Java coordinator of 3.6+/4.0, "scala-2.13" = Kafka 2.6-3.9, "scala-2.12" = up to 2.5);
    # the default is ReplaySettings.coordinator_member_map's
    coordinator_member_map: str = SCALA_2_13

    def __post_init__(self) -> None:
        for f in fields(self):
            value = getattr(self, f.name)
            if f.name.endswith("_ms") and (
                not isinstance(value, int) or isinstance(value, bool) or value < 0
            ):
                if value is None and f.name == "scheduled_rebalance_max_delay_ms":
                    continue
                raise SimulationError(f"{f.name} must be an integer >= 0, got {value!r}")
        if self.session_timeout_ms <= 0 or self.max_poll_interval_ms <= 0:
            raise SimulationError("session_timeout_ms and max_poll_interval_ms must be > 0")
        if not 0 < self.heartbeat_interval_ms < self.session_timeout_ms:
            raise SimulationError("heartbeat_interval_ms must be > 0 and below session_timeout_ms")
        if not 0 < self.group_consumer_heartbeat_interval_ms < self.group_consumer_session_timeout_ms:
            raise SimulationError(  # GroupCoordinatorConfig requires the same of the broker settings
                "group_consumer_heartbeat_interval_ms must be > 0 and below group_consumer_session_timeout_ms"
            )
        if self.protocol_type == CONNECT_PROTOCOL_TYPE:
            self._check_connect()
        else:
            self._check_consumer()
        if not isinstance(self.seed, int) or isinstance(self.seed, bool):
            raise SimulationError(f"seed must be an integer, got {self.seed!r}")
        if self.coordinator_member_map not in IMPLEMENTATIONS:
            raise SimulationError(
                f"coordinator_member_map must be one of {', '.join(IMPLEMENTATIONS)}, got {self.coordinator_member_map!r}"
            )

    def _check_connect(self) -> None:
        if self.protocol not in (None, RebalanceProtocol.COOPERATIVE.value):
            raise SimulationError(
                f"a Connect worker group ({self.assignor}) rebalances incrementally (cooperative),"
                f" not with protocol {self.protocol!r}"
            )
        if self.static_membership:
            raise SimulationError("Kafka Connect workers have no static membership (group.instance.id)")

    def _check_consumer(self) -> None:
        if self.scheduled_rebalance_max_delay_ms:
            raise SimulationError(
                "scheduled_rebalance_max_delay_ms (KIP-415) is Kafka Connect's (IncrementalCooperativeAssignor),"
                f" not a consumer group's: use a Connect group (assignor {' or '.join(CONNECT_PROTOCOLS)})"
            )
        try:
            assignor = get_assignor(self.assignor, self.client_version)
        except AssignmentError as exc:
            raise SimulationError(f"{exc} (or a Connect protocol: {', '.join(CONNECT_PROTOCOLS)})") from None
        supported = [p.value for p in assignor.supported_protocols]
        if self.assignor in SERVER_ASSIGNORS:
            supported.append(CONSUMER_PROTOCOL)
        elif self.protocol == CONSUMER_PROTOCOL:
            raise SimulationError(
                f"the consumer protocol (KIP-848) runs a broker-side assignor ({', '.join(SERVER_ASSIGNORS)}),"
                f" not {self.assignor!r}"
            )
        if self.protocol is not None and self.protocol not in supported:
            raise SimulationError(
                f"assignor {self.assignor!r} supports {', '.join(supported)}, not protocol {self.protocol!r}"
            )

    @property
    def protocol_type(self) -> str:
        """The JoinGroup's protocol type: `connect` for a Connect worker group, else `consumer`."""
        return CONNECT_PROTOCOL_TYPE if self.assignor in CONNECT_PROTOCOLS else PROTOCOL_TYPE

    @property
    def max_delay_ms(self) -> int:
        """Connect's scheduled.rebalance.max.delay.ms in effect (its default when not set)."""
        if self.scheduled_rebalance_max_delay_ms is None:
            return DEFAULT_MAX_DELAY_MS
        return self.scheduled_rebalance_max_delay_ms

    @property
    def rebalance_protocol(self) -> str:
        """ConsumerCoordinator picks the highest protocol all assignors support (COOPERATIVE > EAGER);
        a broker-side assignor means the KIP-848 consumer protocol; Connect's protocols are cooperative."""
        if self.protocol is not None:
            return self.protocol
        if self.assignor in CONNECT_PROTOCOLS:
            return RebalanceProtocol.COOPERATIVE.value
        if self.assignor in SERVER_ASSIGNORS:
            return CONSUMER_PROTOCOL
        supported = get_assignor(self.assignor).supported_protocols
        return (
            RebalanceProtocol.COOPERATIVE
            if RebalanceProtocol.COOPERATIVE in supported
            else RebalanceProtocol.EAGER
        ).value


def load_settings(doc: Mapping[str, Any] | None) -> SimulationSettings:
    """SimulationSettings from a mapping (field names of SimulationSettings; *_ms accept '45s')."""
    if doc is None:
        return SimulationSettings()
    if not isinstance(doc, Mapping):
        raise SimulationError("'settings' must be a mapping")
    names = {f.name for f in fields(SimulationSettings)}
    unknown = sorted(set(doc) - names)
    if unknown:
        raise SimulationError(f"unknown setting(s): {', '.join(map(str, unknown))}")
    kwargs = {}
    for key, value in doc.items():
        if key.endswith("_ms"):
            try:
                value = parse_duration(value, key)
            except TimelineError as exc:
                raise SimulationError(str(exc)) from None
        kwargs[key] = value
    return SimulationSettings(**kwargs)


def load_scenario(doc: Any, seed: int | None = None) -> tuple[Timeline, SimulationSettings]:
    """A scenario document: a timeline (see rebalance_core.timeline) with an optional `settings` mapping.
    `seed` overrides the settings' seed. Raises TimelineError / SimulationError (both ValueError)."""
    if not isinstance(doc, Mapping):
        raise TimelineError("a scenario must be a mapping with 'topics', 'actions' and optional 'settings'")
    timeline = load_timeline(doc)
    settings_doc = dict(doc.get("settings") or {})
    if seed is not None:
        settings_doc["seed"] = seed
    settings = load_settings(settings_doc)
    connect = settings.protocol_type == CONNECT_PROTOCOL_TYPE
    if connect != ("connectors" in doc):
        raise SimulationError(
            "a Connect worker group (assignor sessioned or compatible) names its work 'connectors:'"
            if connect
            else "'connectors:' is a Connect worker group's work: set assignor sessioned or compatible"
        )
    return timeline, settings


@dataclass
class SimulationResult:
    events: list[Event]  # in the order they happened
    truth: dict[str, list[dict]]  # schemas.tables.REPLAY_TABLES -> rows, as the reconstructor emits them
    unobservable: list[str] = field(default_factory=list)  # true facts the events cannot reveal
    # true facts the coordinator's events alone cannot reveal (a broker log without client logs)
    unobservable_from_coordinator: list[str] = field(default_factory=list)
    # true facts the members' events alone cannot reveal (consumer logs without the broker's)
    unobservable_from_members: list[str] = field(default_factory=list)
    # a leader was picked by the members map's iteration order among several members (the leader left or
    # did not rejoin): another `coordinator_member_map` may have picked another one
    leader_by_member_order: bool = False


def simulate(timeline: Timeline, settings: SimulationSettings | None = None) -> SimulationResult:
    """Run `timeline` under `settings` (defaults: SimulationSettings()); deterministic for a seed.
    A broker-side assignor (uniform, server-range) runs the KIP-848 consumer protocol model."""
    settings = settings or SimulationSettings()
    if settings.rebalance_protocol == CONSUMER_PROTOCOL:
        from rebalance_core.consumer import ConsumerSimSettings, simulate_consumer_group

        run = simulate_consumer_group(timeline, ConsumerSimSettings.from_simulation_settings(settings))
        # KIP-848 broker logs carry every member's epoch and assignment: what a broker log alone cannot
        # show is what the member-side events cannot show either.
        return SimulationResult(run.events, run.truth, run.unobservable, list(run.unobservable))
    return _Simulation(timeline, settings).run()


class _Simulation(CoordinatorSide, CoordinatorJoin, MemberJoin, MemberSide, ConnectWorkerSide):
    def __init__(self, timeline: Timeline, settings: SimulationSettings):
        self.timeline = timeline
        self.s = settings
        self.protocol = settings.rebalance_protocol
        self.cooperative = self.protocol == RebalanceProtocol.COOPERATIVE.value
        self.protocol_type = settings.protocol_type
        self.connect = self.protocol_type == CONNECT_PROTOCOL_TYPE
        if self.connect:
            _check_connect_timeline(timeline)
        self.assignor = None if self.connect else get_assignor(settings.assignor, settings.client_version)
        self.rng = random.Random(settings.seed)
        self.queue = EventQueue()
        self.now = timeline.start_ms
        self.events: list[Event] = []
        self.topics: dict[str, int] = dict(timeline.topics)
        self.processes: dict[str, Process] = {}
        self.restarting: set[str] = set()  # members whose restart has not started the new process yet
        self.requests = 0
        self.logged_members: set[str] = set()  # member ids that appear in member-side events
        self.unobservable: list[str] = []
        self.unobservable_from_coordinator: list[str] = []
        self.unobservable_from_members: list[str] = []
        # The broker's view of KIP-429 follow-ups: what each member held by the last assignment (moved on a
        # static replacement, dropped on removal), and whether the latest assignment takes some of it away
        self.held: dict[str, tuple[TopicPartition, ...]] = {}
        self.implied_follow_up = False
        self.truth = GroundTruth(
            timeline.cluster, timeline.group_id, settings.assignor, self.protocol, self.protocol_type
        )
        # coordinator state
        self.state = EMPTY
        self.generation = 0
        self.leader: str | None = None
        self.members: dict[str, GroupMember] = {}  # insertion order = join order
        # the coordinator's HashMap of members: its iteration order, not the join order, picks a new leader
        self.member_order = MemberMapOrder(settings.coordinator_member_map)
        self.member_order.fresh()
        self.leader_by_member_order = False
        self.static_ids: dict[str, str] = {}  # group.instance.id -> member id
        self.assignment: dict[str, tuple[TopicPartition, ...]] = {}
        self.assignment_delay_ms = 0
        self.worker_assignments: dict[str, WorkerAssignment] = {}  # Connect: each worker's increments
        self.pending_sync: set[str] = set()
        self.pending_members: dict[str, int] = {}  # KIP-394 member id -> its expiry timer
        self.join_timer: int | None = None
        self.sync_timer: int | None = None
        self.initial_delay_active = False
        self.initial_remaining_ms = 0
        self.initial_last_delay_ms = 0
        self.new_member_added = False
        # member -> the instants its heartbeat timer drifted to (timeline `heartbeat` actions), ascending
        self.heartbeat_instants: dict[str, deque[int]] = {}

    # ------------------------------------------------------------------------------------- driver
    def run(self) -> SimulationResult:
        start = self.timeline.start_ms
        for action in self.timeline.actions:
            if isinstance(action, Heartbeat):
                self.heartbeat_instants.setdefault(action.member, deque()).append(start + action.at)
            else:
                self.queue.push(start + action.at, self._apply_action, action)
        end = start + self.timeline.end_ms if self.timeline.end_ms is not None else None
        while self.queue.has_essential():
            if self.events:
                # One step per millisecond: replay orders same-instant events by protocol rank
                # (event_order_key), which only matches causality within one step. A step due at or
                # before the last event's instant waits for the next millisecond.
                self.queue.defer_through(self.events[-1].ts)
            step = self.queue.pop(end)
            if step is None:
                break
            self.now, fn, args = step
            fn(*args)
            self.truth.maybe_end_episode()
        truth = self.truth.finish(self.events[-1].ts if self.events else self.now)
        return SimulationResult(
            self.events,
            truth,
            self.unobservable,
            self.unobservable_from_coordinator,
            self.unobservable_from_members,
            self.leader_by_member_order,
        )

    def _later(self, delay: int, fn: Callable, *args: Any, essential: bool = True) -> int:
        return self.queue.push(self.now + delay, fn, *args, essential=essential)

    def _latency(self, round_trip_ms: int, half: int) -> int:
        """One way of a round trip (half 0: request, 1: response), plus seeded jitter."""
        one_way = round_trip_ms // 2 if half == 0 else round_trip_ms - round_trip_ms // 2
        jitter = self.rng.randint(0, self.s.network_jitter_ms) if self.s.network_jitter_ms else 0
        return one_way + jitter

    def _next_request(self, p: Process) -> int:
        self.requests += 1
        p.request = self.requests
        return p.request

    def _new_member_id(self, client_id: str) -> str:
        """Kafka: clientId + "-" + a random UUID (here from the seeded generator)."""
        return f"{client_id}-{uuid.UUID(int=self.rng.getrandbits(128), version=4)}"

    # ------------------------------------------------------------------------------------- events
    def _emit(self, side: Side, event_type: EventType, **values: Any) -> Event:
        seq = len(self.events) + 1
        attributes = {k: str(v) for k, v in (values.pop("attributes", None) or {}).items()}
        event = Event(
            event_id=f"{self.timeline.group_id}-{self.s.seed}-{seq:06d}",
            ts=self.now,
            cluster=self.timeline.cluster,
            group_id=self.timeline.group_id,
            side=side.value,
            event_type=event_type.value,
            attributes=attributes,
            line=seq,
            **values,
        )
        self.events.append(event)
        self.truth.observe(event)
        return event

    def _coordinator_event(self, event_type: EventType, **values: Any) -> Event:
        return self._emit(Side.COORDINATOR, event_type, source=self.s.coordinator, **values)

    def _member_event(self, p: Process, event_type: EventType, **values: Any) -> Event:
        values.setdefault("member_id", p.member_id)
        if self.connect:  # as the parser tags a "[Worker clientId=…]" line
            values.setdefault("protocol_type", CONNECT_PROTOCOL_TYPE)
        if values["member_id"]:
            self.logged_members.add(values["member_id"])
        return self._emit(
            Side.MEMBER,
            event_type,
            source=p.name,
            client_id=p.name,
            group_instance_id=p.instance_id,
            **values,
        )

    # ------------------------------------------------------------------------------------ actions
    def _apply_action(self, action: Any) -> None:
        if isinstance(action, PartitionCount):
            self._change_partition_count(action.topic, action.count)
            return
        if isinstance(action, Join):
            instance_id = action.instance_id or (action.member if self.s.static_membership else None)
            topics = action.topics or tuple(self.timeline.topics)
            self._start_process(action.member, instance_id, topics)
            return
        p = self.processes.get(action.member)
        if p is None or action.member in self.restarting:
            # its join or restart, due earlier, still waits for its millisecond (one step per ms): the
            # member's actions keep the timeline's order
            self._later(1, self._apply_action, action)
            return
        if isinstance(action, Leave):
            self._on_member(p, self._close, poll_loop=False)
        elif isinstance(action, Crash):
            self._on_member(p, self._die, poll_loop=False)
        elif isinstance(action, Restart):
            if action.graceful:
                self._on_member(p, self._close, poll_loop=False)
            else:
                self._on_member(p, self._die, poll_loop=False)
            self.restarting.add(p.name)
            self._later(action.down_ms, self._restart_process, p.name, p.instance_id, p.subscription)
        elif isinstance(action, Pause):
            if action.kind == "gc":
                self._on_member(p, self._freeze, action.duration_ms)
            else:
                self._on_member(p, self._slow_poll, action.duration_ms)
        elif isinstance(action, Stall):
            self._on_member(p, self._slow_poll, STALLED_FOR_GOOD)
        elif isinstance(action, EnforceRebalance):
            self._on_member(p, self._enforce_rebalance)
        elif isinstance(action, Subscribe):
            self._on_member(p, self._change_subscription, action.topics)

    def _change_partition_count(self, topic: str, count: int) -> None:
        self.topics[topic] = count
        self._coordinator_event(EventType.TOPIC_METADATA_CHANGED, attributes={f"topic.{topic}": count})
        for p in self.processes.values():
            if p.alive and p.is_leader:
                self._member_later(self.s.metadata_refresh_ms, p, self._check_metadata)


def _check_connect_timeline(timeline: Timeline) -> None:
    """A Connect worker group runs join, leave, crash and restart (SimulationError otherwise)."""
    for action in timeline.actions:
        what = f"{type(action).__name__.lower()} at {action.at} ms"
        if isinstance(action, (Pause, Stall, EnforceRebalance, Subscribe, PartitionCount)):
            raise SimulationError(
                f"{what}: a Connect worker group simulates join, leave, crash and restart only"
            )
        if isinstance(action, Join) and (action.topics is not None or action.instance_id is not None):
            raise SimulationError(f"{what}: a Connect worker joins with neither topics nor an instance id")
