"""Simulate a KIP-848 consumer group (`group.protocol=consumer`) over a membership `Timeline`.

A discrete-event model of the coordinator (`coordinator.ConsumerGroupCoordinator`) and of each member's
client (`ConsumerMembershipManager`: JOINING -> RECONCILING -> ACKNOWLEDGING -> STABLE, FENCED,
PREPARE_LEAVING -> LEAVING, FATAL, STALE). Members talk to the coordinator only through heartbeats:
every `heartbeat_interval_ms`, and at once when joining, acknowledging a reconciliation or leaving; a
heartbeat carries the owned partitions only when joining or after a completed reconciliation. The
coordinator serves one request at a time (each takes 1 ms), so its events are strictly ordered.

Output: the canonical events both sides log (docs/events.md, KIP-848 rows) and the ground-truth tables,
measured by the same `OwnershipTimeline` / `EpochTracker` as the replay: consumption starts at the
member's onPartitionsAssigned and stops at onPartitionsRevoked / onPartitionsLost, or when the process
dies; generations are group epochs, converged when the coordinator's group state turns Stable.

Timeline actions, in KIP-848 terms:
    join       UNSUBSCRIBED -> JOINING, heartbeat with epoch 0 (static: with its group.instance.id)
    leave      close(): PREPARE_LEAVING (revoke all), LEAVING: heartbeat epoch -1, or -2 when static
    crash      a last heartbeat, then the process is gone; the session times out
    restart    leave (graceful) or crash, then after `down` a new incarnation joins with a new member id
               (same instance id). A static member killed and back before its session expired is
               refused (UNRELEASED_INSTANCE_ID, fatal for the KIP-848 client), as in Kafka.
    pause      gc: the process freezes after a heartbeat (beyond the session timeout it is fenced and, on
               waking, gets FENCED: onPartitionsLost, rejoin); poll: callbacks wait for the application
               thread and beyond max.poll.interval.ms the member leaves (-1/-2), STALE, then rejoins
    stall      the application thread hangs for good while the background thread heartbeats: callbacks
               never run, so a revocation is never acknowledged and the coordinator fences the member at
               the rebalance timeout (GroupMetadataManager's rebalance timeout for a member in
               UNREVOKED_PARTITIONS); fenced, it waits for onPartitionsLost on that thread and does not
               rejoin (AbstractMembershipManager.transitionToFenced); beyond max.poll.interval.ms the
               background thread leaves (-1/-2, STALE) and it never rejoins
    subscribe  the next heartbeat carries the new topics: the coordinator bumps the epoch
    rebalance  enforceRebalance() is not supported by the consumer protocol: nothing happens
               (AsyncKafkaConsumer.enforceRebalance only logs a warning)
    partitions the coordinator's metadata changes: the next heartbeat bumps the epoch
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from rebalance_core.assignors import get_assignor
from rebalance_core.consumer.coordinator import ConsumerGroupCoordinator
from rebalance_core.consumer.epochs import EpochTracker
from rebalance_core.consumer.sim_member import ClientIncarnation, MemberSide
from rebalance_core.consumer.states import (
    LEAVE_GROUP_MEMBER_EPOCH,
    LEAVE_GROUP_STATIC_MEMBER_EPOCH,
    ClientState,
    GroupState,
    MemberState,
)
from rebalance_core.events import Event, format_ts
from rebalance_core.measure_records import utc_date
from rebalance_core.measures import OwnershipTimeline
from rebalance_core.sim_queue import EventQueue
from rebalance_core.timeline import (
    STALLED_FOR_GOOD,
    Crash,
    Heartbeat,
    Join,
    Leave,
    PartitionCount,
    Pause,
    Restart,
    Stall,
    Subscribe,
    Timeline,
)
from schemas.events import EventType, Side
from schemas.tables import REPLAY_TABLES

# GroupCoordinatorConfig defaults: group.consumer.min.session.timeout.ms, group.consumer.max.session.timeout.ms
BROKER_MIN_SESSION_TIMEOUT_MS = 45_000
BROKER_MAX_SESSION_TIMEOUT_MS = 60_000


@dataclass(frozen=True)
class ConsumerSimSettings:
    """KIP-848 defaults: group.consumer.heartbeat.interval.ms 5 s, group.consumer.session.timeout.ms 45 s,
    max.poll.interval.ms 5 min (sent as the member's rebalance timeout), server assignor `uniform`
    (group.consumer.assignors). Names follow `rebalance_core.simulate.SimulationSettings` where they mean
    the same thing."""

    assignor: str = "uniform"  # uniform | server-range
    static_membership: bool = False  # every member without an instance id uses its name as group.instance.id
    heartbeat_interval_ms: int = 5_000  # broker group.consumer.heartbeat.interval.ms
    session_timeout_ms: int = 45_000  # broker group.consumer.session.timeout.ms (not the client's)
    # the bounds the broker accepts it in: group.consumer.min.session.timeout.ms (default 45 s; a broker may
    # lower it) and group.consumer.max.session.timeout.ms (default 60 s); None: not stated (a broker that
    # accepts `session_timeout_ms`)
    min_session_timeout_ms: int | None = None
    max_session_timeout_ms: int | None = None
    max_poll_interval_ms: int = 300_000
    network_ms: int = 1  # one way, member <-> coordinator
    revoke_callback_ms: int = 5  # onPartitionsRevoked (typically a commit)
    assign_callback_ms: int = 2  # onPartitionsAssigned
    coordinator: str = "broker-0"  # `source` of coordinator events
    topic_ids: dict[str, str] = field(default_factory=dict)
    max_settle_ms: int = 86_400_000  # give up this long after the last action if the group never settles

    def __post_init__(self) -> None:
        for name in ("heartbeat_interval_ms", "session_timeout_ms", "max_poll_interval_ms"):
            if getattr(self, name) <= 0:
                raise ValueError(f"{name} must be > 0")
        # GroupCoordinatorConfig refuses to start a broker otherwise (its require(...) of the consumer group
        # settings): min <= session <= max, and the heartbeat interval below the session timeout
        low = (
            self.min_session_timeout_ms
            if self.min_session_timeout_ms is not None
            else self.session_timeout_ms
        )
        high = (
            self.max_session_timeout_ms
            if self.max_session_timeout_ms is not None
            else self.session_timeout_ms
        )
        if not low <= self.session_timeout_ms <= high:
            raise ValueError(
                f"session_timeout_ms {self.session_timeout_ms} is outside the broker's accepted "
                f"[{low}, {high}] (group.consumer.min/max.session.timeout.ms)"
            )
        if self.heartbeat_interval_ms >= self.session_timeout_ms:
            raise ValueError("heartbeat_interval_ms must be below session_timeout_ms")
        # >= 1 ms keeps each member's causal chain strictly ordered in time (event_order_key ranks
        # member_state_changed after the callbacks at one instant)
        for name in ("network_ms", "revoke_callback_ms", "assign_callback_ms"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be >= 1")
        get_assignor(self.assignor)  # AssignmentError (a ValueError) for an unknown one

    @classmethod
    def from_simulation_settings(cls, settings: Any) -> ConsumerSimSettings:
        """The KIP-848 reading of a `SimulationSettings` whose assignor is a broker-side one: the session
        timeout and heartbeat interval are the broker's group.consumer.* settings (the coordinator sends
        the interval in every heartbeat response and expires members on its own session timeout; the
        client's session.timeout.ms / heartbeat.interval.ms belong to the classic protocol), the rest
        carries over (max.poll.interval.ms is the member's rebalance timeout)."""
        return cls(
            assignor=settings.assignor,
            static_membership=settings.static_membership,
            heartbeat_interval_ms=settings.group_consumer_heartbeat_interval_ms,
            session_timeout_ms=settings.group_consumer_session_timeout_ms,
            max_poll_interval_ms=settings.max_poll_interval_ms,
            revoke_callback_ms=max(1, settings.revoke_callback_ms),
            coordinator=settings.coordinator,
        )


@dataclass
class ConsumerSimulation:
    """Like `rebalance_core.simulate.SimulationResult`: events in the order they happened; truth =
    REPLAY_TABLES rows (+ group_daily_summary) as the replay must produce them; unobservable = true facts
    the events cannot reveal. reconciliations: per member and group epoch, target computed -> reconciled."""

    events: list[Event]
    truth: dict[str, list[dict]]
    unobservable: list[str]
    reconciliations: list[dict]


def simulate_consumer_group(
    timeline: Timeline, settings: ConsumerSimSettings | None = None
) -> ConsumerSimulation:
    return _Simulation(timeline, settings or ConsumerSimSettings()).run()


# ----------------------------------------------------------------------------------------- the model
class _Simulation(MemberSide):
    """The run loop, the timeline's actions and the coordinator side; the member side is `MemberSide`."""

    def __init__(self, timeline: Timeline, settings: ConsumerSimSettings):
        self.timeline = timeline
        self.settings = settings
        self.start = timeline.start_ms
        self.cluster = timeline.cluster
        self.group_id = timeline.group_id
        self.queue = EventQueue()
        self.events: list[Event] = []
        self.truth = OwnershipTimeline(self.cluster, self.group_id)
        self.tracker = EpochTracker(
            self.truth, lambda: {m.member_id: m.instance_id for m in self.coordinator.members.values()}
        )
        self.coordinator = ConsumerGroupCoordinator(
            dict(timeline.topics),
            settings.assignor,
            settings.session_timeout_ms,
            settings.max_poll_interval_ms,
            self._coordinator_event,
            settings.topic_ids,
        )
        self.coordinator_free_at = 0
        self.clients: dict[str, ClientIncarnation] = {}  # timeline member name -> current incarnation
        self.by_member_id: dict[str, ClientIncarnation] = {}
        self.incarnations: dict[str, int] = {}
        self.pending_actions = 0
        # member -> the instants its heartbeat timer drifted to (timeline `heartbeat` actions), ascending
        self.heartbeat_instants: dict[str, deque[int]] = {}
        self.now = self.start
        self.unobservable: list[str] = []

    # =========================================================================== event loop
    def run(self) -> ConsumerSimulation:
        for action in self.timeline.actions:
            if isinstance(action, Heartbeat):
                self.heartbeat_instants.setdefault(action.member, deque()).append(self.start + action.at)
                continue
            self._at(self.start + action.at, self._action, action)
            self.pending_actions += 1
        last_action = self.start + max(
            (a.at for a in self.timeline.actions if not isinstance(a, Heartbeat)), default=0
        )
        end = self.start + self.timeline.end_ms if self.timeline.end_ms is not None else None
        give_up = last_action + self.settings.max_settle_ms
        while (due := self.queue.pop(None)) is not None:
            ts, fn, args = due
            if (end is not None and ts > end) or ts > give_up:
                break
            self.now = ts
            fn(ts, *args)
            if end is None and self._settled():
                break
        return self._result()

    def _at(self, ts: int, fn: Callable[..., None], *args: Any) -> None:
        self.queue.push(ts, fn, *args)

    def _settled(self) -> bool:
        """All actions done, every running member STABLE and idle, the coordinator Stable (or Empty) with
        no member left behind (a crashed or temporarily left member must first time out)."""
        if self.pending_actions:
            return False
        if self.coordinator.state not in (GroupState.STABLE, GroupState.EMPTY):
            return False
        live = {
            c.member_id: c
            for c in self.clients.values()
            if c.alive
            and c.state is not ClientState.FATAL
            # a stalled member out of the group (fenced, or left on its poll timer) stays out for good
            and not (c.stalled and c.member_id not in self.coordinator.members)
        }
        if set(self.coordinator.members) != set(live):
            return False
        return all(
            c.state is ClientState.STABLE
            and not (c.reconciling or c.in_flight)
            and c.owned == self.coordinator.members[m].assignment.assigned
            and self.now >= max(c.frozen_until, c.app_busy_until)
            for m, c in live.items()
        )

    # =============================================================================== actions
    def _action(self, ts: int, action) -> None:
        self.pending_actions -= 1
        if isinstance(action, PartitionCount):
            self.coordinator.topic_partitions_changed(action.topic, action.count)
            return
        if isinstance(action, Join):
            self._join(ts, action.member, action.topics, action.instance_id)
            return
        client = self.clients.get(action.member)
        if client is None or not client.alive:
            return
        if isinstance(action, Leave):
            self._close(ts, client)
        elif isinstance(action, Crash):
            self._crash(ts, client)
        elif isinstance(action, Restart):
            if action.graceful:
                self._close(ts, client)
            else:
                self._crash(ts, client)
            self.pending_actions += 1
            self._at(
                ts + action.down_ms,
                self._rejoin_after_restart,
                action.member,
                client.topics,
                client.instance_id,
            )
        elif isinstance(action, Pause):
            if action.kind == "gc":
                client.freeze_after_heartbeat = action.duration_ms
                self._send_heartbeat(ts, client)
            else:
                self._poll_pause(ts, client, action.duration_ms)
        elif isinstance(action, Stall):
            client.stalled = True
            self._poll_pause(ts, client, STALLED_FOR_GOOD)
        elif isinstance(action, Subscribe):
            client.topics = tuple(action.topics)

    def _rejoin_after_restart(
        self, ts: int, name: str, topics: tuple[str, ...], instance: str | None
    ) -> None:
        self.pending_actions -= 1
        self._join(ts, name, topics, instance)

    def _join(self, ts: int, name: str, topics: tuple[str, ...] | None, instance_id: str | None) -> None:
        n = self.incarnations[name] = self.incarnations.get(name, 0) + 1
        member_id = name if n == 1 else f"{name}#{n}"
        if instance_id is None and self.settings.static_membership:
            instance_id = name
        client = ClientIncarnation(name, member_id, instance_id, tuple(topics or tuple(self.timeline.topics)))
        self.clients[name] = client
        self.by_member_id[member_id] = client
        # the consumer's constructor logs its config (AbstractConfig.logAll, "ConsumerConfig values:",
        # group.protocol = consumer) before it joins: no member id yet; max.poll.interval.ms is its poll timer
        self._event(
            ts,
            Side.MEMBER,
            EventType.CLIENT_CONFIG,
            source=name,
            group_instance_id=instance_id,
            client_id=name,
            protocol_type="consumer",
            attributes={
                "config_class": "ConsumerConfig",
                "group_protocol": "consumer",
                "max_poll_interval_ms": str(self.settings.max_poll_interval_ms),
                "rebalance_timeout_ms": str(self.settings.max_poll_interval_ms),
            },
        )
        self._transition(ts, client, ClientState.JOINING)
        self._send_heartbeat(ts, client)

    def _crash(self, ts: int, client: ClientIncarnation) -> None:
        """The process dies right after a heartbeat: the next one it sends (at once, or as soon as the
        one in flight is answered) is its last."""
        client.dies_after_heartbeat = True
        self._send_heartbeat(ts, client)

    def _close(self, ts: int, client: ClientIncarnation) -> None:
        """close(): PREPARE_LEAVING, onPartitionsRevoked for everything, LEAVING (epoch -1 / -2)."""
        if client.state in (ClientState.STALE, ClientState.FATAL):
            client.alive = False  # not in the group: close() only unsubscribes
            return
        if client.state in (ClientState.PREPARE_LEAVING, ClientState.LEAVING, ClientState.UNSUBSCRIBED):
            return
        client.reconciling = False  # a reconciliation in progress is abandoned
        self._transition(ts, client, ClientState.PREPARE_LEAVING)
        if client.owned:
            self._client_step(
                ts + self.settings.revoke_callback_ms, client, self._leave_revoke, app_thread=True
            )
        else:
            self._send_leave(ts, client)

    def _leave_revoke(self, ts: int, client: ClientIncarnation) -> None:
        self._member_event(ts, client, EventType.PARTITIONS_REVOKED, partitions=tuple(sorted(client.owned)))
        for tp in sorted(client.owned):
            self.truth.stop(tp, client.member_id, ts, "member_left", instance=client.instance_id)
        client.owned = frozenset()
        client.reconciled = frozenset()  # AbstractMembershipManager: currentAssignment = NONE
        self._send_leave(ts, client)

    def _send_leave(self, ts: int, client: ClientIncarnation, stale: bool = False) -> None:
        client.leaving_epoch = (
            LEAVE_GROUP_STATIC_MEMBER_EPOCH if client.instance_id else LEAVE_GROUP_MEMBER_EPOCH
        )
        self._transition(ts, client, ClientState.LEAVING, epoch=client.leaving_epoch)
        client.in_flight = False  # the leave heartbeat goes out at once
        self._send_heartbeat(ts, client)
        client.hb_token += 1
        if stale:
            self._transition(ts, client, ClientState.STALE)
        else:
            self._transition(ts, client, ClientState.UNSUBSCRIBED)
            client.alive = False

    def _arrive(self, ts: int, client: ClientIncarnation, request: int, epoch: int, topics, owned) -> None:
        """The request reaches the coordinator, which serves one request at a time."""
        if ts < self.coordinator_free_at:
            self._at(self.coordinator_free_at, self._arrive, client, request, epoch, topics, owned)
            return
        self.coordinator_free_at = ts + 1
        response = self.coordinator.heartbeat(ts, client.member_id, epoch, client.instance_id, topics, owned)
        if client.dies_after_heartbeat and client.owned:
            # the process died right after this heartbeat: it stopped consuming when the coordinator saw it
            self._failed(client, ts)
        self._after_coordinator(ts)
        self._schedule_timers(client.member_id)
        self._client_step(ts + self.settings.network_ms, client, self._response, request, response)

    def _schedule_timers(self, member_id: str) -> None:
        deadline = self.coordinator.next_deadline(member_id)
        if deadline is not None:
            self._at(deadline, self._timer, member_id)

    def _timer(self, ts: int, member_id: str) -> None:
        if ts < self.coordinator_free_at:
            self._at(self.coordinator_free_at, self._timer, member_id)
            return
        member = self.coordinator.members.get(member_id)
        if member is None:
            return
        client = self.by_member_id.get(member_id)
        session_expired = member.last_heartbeat + self.settings.session_timeout_ms <= ts
        if session_expired and client is not None and client.owned and ts < client.frozen_until:
            # a frozen (gc) process stopped at its last heartbeat, unaware: it still holds its partitions
            self._failed(client, member.last_heartbeat, process_gone=False)
            # an epoch closed since without a target had it consuming nothing (as a crash, told at once)
            self.tracker.member_stopped_at(client.member_id, member.last_heartbeat)
            # told only now, so partitions others started since the heartbeat were all that was consumed:
            # the gap before them is stop-the-world (as a crash's, whose stop is told at the heartbeat itself)
            self.truth.recount_backdated_stop(member.last_heartbeat)
        if self.coordinator.expire(ts, member_id) is None:
            return
        self.coordinator_free_at = ts + 1
        self._after_coordinator(ts)

    def _failed(self, client: ClientIncarnation, ts: int, process_gone: bool = True) -> None:
        """The member stopped consuming at `ts`. A frozen process (`process_gone` False) does not know: its
        SubscriptionState still holds the partitions, so on waking its "Reconciling assignment" block names
        them as owned, and its fencing loses them (AbstractMembershipManager.transitionToFenced:
        onPartitionsLost, "Lost previously assigned partitions"); those later stops are no-ops for the truth."""
        for tp in sorted(client.owned):
            self.truth.stop(tp, client.member_id, ts, "member_failed", instance=client.instance_id)
        if process_gone:
            client.owned = frozenset()
        self.unobservable.append(
            f"{client.member_id} stopped consuming at {format_ts(ts)} (its last heartbeat); the events reveal it "
            "only at its session expiry, so stop-the-world before that is not recounted by a replay"
        )

    def _after_coordinator(self, ts: int) -> None:
        if (
            self.coordinator.state is GroupState.STABLE
            and self.tracker.epoch == self.coordinator.target_epoch
        ):
            self.tracker.converged(ts)
        self.tracker.maybe_end_episode()

    def _coordinator_event(self, ts: int, event_type: EventType, **fields: Any) -> None:
        self._event(ts, Side.COORDINATOR, event_type, source=self.settings.coordinator, **fields)
        tracker = self.tracker
        if event_type is EventType.GROUP_EPOCH_BUMPED:
            # ground truth times consumption by the members' callbacks: member timing
            tracker.open_epoch(fields["group_epoch"], ts, reason=fields.get("reason"), timing_source="member")
            if not self.coordinator.members:
                tracker.group_empty(ts)
        elif event_type is EventType.TARGET_ASSIGNMENT_COMPUTED:
            instances = {
                m.member_id: m.instance_id for m in self.coordinator.members.values() if m.instance_id
            }
            tracker.target_computed(ts, fields["assignment"], fields["protocol_name"], instances)
        elif (
            event_type is EventType.MEMBER_EPOCH_UPDATED
            and fields["attributes"]["state"] == MemberState.STABLE.value
            and fields["member_epoch"] == self.coordinator.target_epoch
        ):
            tracker.member_reconciled(fields["member_id"], ts, "coordinator")

    def _event(self, ts: int, side: Side, event_type: EventType, **fields: Any) -> None:
        seq = len(self.events)
        self.events.append(
            Event(
                event_id=f"{self.group_id}-{seq}",
                ts=ts,
                cluster=self.cluster,
                group_id=self.group_id,
                side=side.value,
                event_type=event_type.value,
                line=seq,
                **fields,
            )
        )

    # ================================================================================ result
    def _result(self) -> ConsumerSimulation:
        last_ts = self.events[-1].ts if self.events else self.start
        self.tracker.finish(final=True, last_ts=last_ts)
        truth: dict[str, list[dict]] = {name: [] for name in REPLAY_TABLES}
        for name, rows in self.tracker.drain().items():
            truth[name].extend(rows)
        for name, rows in self.truth.finish(final=True).items():
            truth[name].extend(rows)
        for e in self.events:
            self.truth.day(utc_date(e.ts)).events += 1
        truth["group_daily_summary"] = self.truth.daily_rows()
        return ConsumerSimulation(self.events, truth, self.unobservable, self.tracker.drain_reconciliations())
