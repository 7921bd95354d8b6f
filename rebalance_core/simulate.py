"""The simulator's entry: settings, scenarios and the result of a simulated consumer group, with ground truth.

`simulate(timeline, settings)` plays a membership timeline (`rebalance_core.timeline`) against a model
of both sides of the protocol and returns the canonical events both sides would log (docs/events.md)
and the tables a perfect reconstruction must produce (docs/metrics.md), measured by the same
`OwnershipTimeline` the reconstructor uses, from the simulator's own record of when each member really
started and stopped each partition (`rebalance_core.sim_truth`).

The models, and where they come from (Kafka):
- the classic protocol (JoinGroup / SyncGroup / Heartbeat / LeaveGroup): `rebalance_core.classic.simulator`,
  whose parts are the coordinator (GroupCoordinator / ClassicGroup: `classic.sim_join`,
  `classic.sim_coordinator`), the member (AbstractCoordinator / ConsumerCoordinator: `classic.sim_member`,
  `classic.sim_member_join`) and Kafka Connect workers (settings.assignor `sessioned` / `compatible`:
  `classic.sim_worker`, with the leader's IncrementalCooperativeAssignor and KIP-415's
  scheduled.rebalance.max.delay.ms in `rebalance_core.classic.connect`). No consumer group has that
  delay: a consumer group's settings with it are a SimulationError.
- the KIP-848 consumer protocol (a broker-side assignor, uniform or server-range):
  `rebalance_core.consumer.simulate`.

Time is simulated (epoch ms from the timeline's start); nothing reads the wall clock. The same timeline,
settings and seed give the same events, ids and truth.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from typing import Any

from rebalance_core.assignors import SERVER_ASSIGNORS, AssignmentError, RebalanceProtocol, get_assignor
from rebalance_core.assignors.protocols import CONNECT_PROTOCOL_TYPE, CONNECT_PROTOCOLS
from rebalance_core.classic.connect import DEFAULT_MAX_DELAY_MS
from rebalance_core.classic.member_order import IMPLEMENTATIONS, SCALA_2_13
from rebalance_core.classic.simulator import ClassicSimulation
from rebalance_core.consumer import ConsumerSimSettings, simulate_consumer_group
from rebalance_core.events import Event
from rebalance_core.sim_truth import PROTOCOL_TYPE
from rebalance_core.timeline import (
    EnforceRebalance,
    Join,
    PartitionCount,
    Pause,
    Stall,
    Subscribe,
    Timeline,
    TimelineError,
    load_timeline,
    parse_duration,
)

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
    # the default is the replay's until a coordinator line tells (ReplaySettings.coordinator_member_map None)
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
        run = simulate_consumer_group(timeline, ConsumerSimSettings.from_simulation_settings(settings))
        # KIP-848 broker logs carry every member's epoch and assignment: what a broker log alone cannot
        # show is what the member-side events cannot show either.
        return SimulationResult(run.events, run.truth, run.unobservable, list(run.unobservable))
    if settings.protocol_type == CONNECT_PROTOCOL_TYPE:
        _check_connect_timeline(timeline)
    simulation = ClassicSimulation(timeline, settings)
    truth = simulation.run()
    return SimulationResult(
        simulation.events,
        truth,
        simulation.unobservable,
        simulation.unobservable_from_coordinator,
        simulation.unobservable_from_members,
        simulation.leader_by_member_order,
    )


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
