"""A discrete-event model of Kafka's classic consumer group protocol, with ground truth: its run loop.

`ClassicSimulation` is the classic model `rebalance_core.simulate.simulate` runs: the clock
(`rebalance_core.sim_queue`), the timeline's actions, the events both sides log and the ground truth. Its steps
live by responsibility, each a part it inherits:
- the coordinator (GroupCoordinator / ClassicGroup): receiving a JoinGroup, `classic.sim_join`; the join
  phase, SyncGroup, heartbeats, leaving and expiry, `classic.sim_coordinator`;
- the member (AbstractCoordinator / ConsumerCoordinator): its process, poll loop and heartbeat thread,
  `classic.sim_member`; its JoinGroup / SyncGroup exchange, `classic.sim_member_join`;
- Kafka Connect workers (WorkerCoordinator / DistributedHerder), `classic.sim_worker`;
and their records (states, errors, a process, the coordinator's member) are `classic.sim_state`.

Ground truth (`rebalance_core.sim_truth`) follows the ownership rules of docs/metrics.md with
member-side timing: a partition starts at the member's onPartitionsAssigned; it stops at the first
rebalance signal (eager), at onPartitionsRevoked (cooperative, and close()), onPartitionsLost, at a
poll-timeout leave (member_left), or, for a member that died or froze, at its last heartbeat
(member_failed, recorded when the coordinator removes it). Where the events cannot reveal a true
instant (a member that died while parked in a rebalance, a static member killed and replaced before
its session expired, a member assigned partitions before its own log shows it), the simulator says so
in `unobservable` (`SimulationResult.unobservable`); `unobservable_from_coordinator` lists what a broker
log alone cannot show, `unobservable_from_members` what the members' logs alone cannot (the last member failing
silently: only the coordinator logs its removal and the rebalance it starts).

Every protocol step runs in its own millisecond: replay orders events of the same instant by protocol
rank (`replay.event_order_key`), which matches causality only within one step.
"""

from __future__ import annotations

import random
import uuid
from collections import deque
from collections.abc import Callable
from typing import Any

from rebalance_core import timeline as tl
from rebalance_core.assignors import RebalanceProtocol, get_assignor
from rebalance_core.assignors.protocols import CONNECT_PROTOCOL_TYPE
from rebalance_core.classic.connect import WorkerAssignment
from rebalance_core.classic.member_order import MemberMapOrder
from rebalance_core.classic.sim_coordinator import CoordinatorSide
from rebalance_core.classic.sim_join import CoordinatorJoin
from rebalance_core.classic.sim_member import MemberSide
from rebalance_core.classic.sim_member_join import MemberJoin
from rebalance_core.classic.sim_state import EMPTY, GroupMember, Process
from rebalance_core.classic.sim_worker import ConnectWorkerSide
from rebalance_core.events import Event, TopicPartition
from rebalance_core.sim_queue import EventQueue
from rebalance_core.sim_truth import GroundTruth
from schemas.events import EventType, Side


class ClassicSimulation(CoordinatorSide, CoordinatorJoin, MemberJoin, MemberSide, ConnectWorkerSide):
    """One run of the classic protocol model: the coordinator's and each member's state, the clock, the
    events and the ground truth. Its steps are the parts it inherits (see the module docstring)."""

    def __init__(self, timeline: tl.Timeline, settings):
        # settings: the entry's rebalance_core.simulate.SimulationSettings (not imported: the entry imports
        # this module)
        self.timeline = timeline
        self.s = settings
        self.protocol = settings.rebalance_protocol
        self.cooperative = self.protocol == RebalanceProtocol.COOPERATIVE.value
        self.protocol_type = settings.protocol_type
        self.connect = self.protocol_type == CONNECT_PROTOCOL_TYPE
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
    def run(self) -> dict[str, list[dict]]:
        """Play the timeline; the truth tables (schemas.tables.REPLAY_TABLES -> rows). The events and what they
        cannot reveal are then `events`, `unobservable*` and `leader_by_member_order`."""
        start = self.timeline.start_ms
        for action in self.timeline.actions:
            if isinstance(action, tl.Heartbeat):
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
        return self.truth.finish(self.events[-1].ts if self.events else self.now)

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
        if isinstance(action, tl.PartitionCount):
            self._change_partition_count(action.topic, action.count)
            return
        if isinstance(action, tl.Join):
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
        if isinstance(action, tl.Leave):
            self._on_member(p, self._close, poll_loop=False)
        elif isinstance(action, tl.Crash):
            self._on_member(p, self._die, poll_loop=False)
        elif isinstance(action, tl.Restart):
            if action.graceful:
                self._on_member(p, self._close, poll_loop=False)
            else:
                self._on_member(p, self._die, poll_loop=False)
            self.restarting.add(p.name)
            self._later(action.down_ms, self._restart_process, p.name, p.instance_id, p.subscription)
        elif isinstance(action, tl.Pause):
            if action.kind == "gc":
                self._on_member(p, self._freeze, action.duration_ms)
            else:
                self._on_member(p, self._slow_poll, action.duration_ms)
        elif isinstance(action, tl.Stall):
            self._on_member(p, self._slow_poll, tl.STALLED_FOR_GOOD)
        elif isinstance(action, tl.EnforceRebalance):
            self._on_member(p, self._enforce_rebalance)
        elif isinstance(action, tl.Subscribe):
            self._on_member(p, self._change_subscription, action.topics)

    def _change_partition_count(self, topic: str, count: int) -> None:
        self.topics[topic] = count
        self._coordinator_event(EventType.TOPIC_METADATA_CHANGED, attributes={f"topic.{topic}": count})
        for p in self.processes.values():
            if p.alive and p.is_leader:
                self._member_later(self.s.metadata_refresh_ms, p, self._check_metadata)
