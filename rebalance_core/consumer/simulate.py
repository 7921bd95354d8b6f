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

import heapq
import itertools
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from rebalance_core.assignors import get_assignor
from rebalance_core.consumer.coordinator import (
    FENCED_MEMBER_EPOCH,
    UNKNOWN_MEMBER_ID,
    UNRELEASED_INSTANCE_ID,
    ConsumerGroupCoordinator,
    HeartbeatResponse,
)
from rebalance_core.consumer.epochs import EpochTracker
from rebalance_core.consumer.states import (
    LEAVE_GROUP_MEMBER_EPOCH,
    LEAVE_GROUP_STATIC_MEMBER_EPOCH,
    ClientState,
    GroupState,
    MemberState,
)
from rebalance_core.events import Event, TopicPartition, format_ts
from rebalance_core.measures import OwnershipTimeline, utc_date
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


# ----------------------------------------------------------------------------------------- model
@dataclass
class _Client:
    """One incarnation of a consumer process (a restart is a new incarnation with a new member id)."""

    name: str
    member_id: str
    instance_id: str | None
    topics: tuple[str, ...]
    state: ClientState = ClientState.UNSUBSCRIBED
    epoch: int = 0
    owned: frozenset[TopicPartition] = frozenset()
    # AbstractMembershipManager.currentAssignment: the partitions of the last completed reconciliation
    # (not those of one in progress), and how many reconciliations completed (its local epoch)
    reconciled: frozenset[TopicPartition] = frozenset()
    reconciled_count: int = 0
    # AbstractMembershipManager.currentTargetAssignment.localEpoch: one more per target assignment it
    # starts reconciling (-1: none yet; transitionToJoining resets it)
    local_epoch: int = -1
    reported_count: int | None = None  # reconciled_count when `reconciled` was last sent
    alive: bool = True
    frozen_until: int = 0  # gc pause: nothing runs before
    app_busy_until: int = 0  # poll pause: rebalance callbacks wait for the application thread
    poll_deadline: int | None = None  # max.poll.interval.ms expiry during a poll pause
    stalled: bool = False  # the application thread hangs for good (timeline `stall`)
    reconciling: bool = False
    in_flight: bool = False
    request: int = 0  # id of the heartbeat whose response is awaited (answers to older ones, e.g. sent
    # before a leave, are dropped)
    resyncing: bool = False  # just woke from a gc freeze: callbacks wait for a heartbeat response
    resync_after: int = 0  # ... to a heartbeat sent after waking (a request id above this)
    hb_wanted: bool = False  # a heartbeat became due while one was in flight
    hb_token: int = 0  # invalidates scheduled periodic heartbeats
    leaving_epoch: int | None = None
    dies_after_heartbeat: bool = False
    freeze_after_heartbeat: int = 0  # gc pause length to start right after the next heartbeat


class _Simulation:
    def __init__(self, timeline: Timeline, settings: ConsumerSimSettings):
        self.timeline = timeline
        self.settings = settings
        self.start = timeline.start_ms
        self.cluster = timeline.cluster
        self.group_id = timeline.group_id
        self._queue: list[tuple[int, int, Callable[..., None], tuple]] = []
        self._seq = itertools.count()
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
        self.clients: dict[str, _Client] = {}  # timeline member name -> current incarnation
        self.by_member_id: dict[str, _Client] = {}
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
        while self._queue:
            ts, _, fn, args = heapq.heappop(self._queue)
            if (end is not None and ts > end) or ts > give_up:
                break
            self.now = ts
            fn(ts, *args)
            if end is None and self._settled():
                break
        return self._result()

    def _at(self, ts: int, fn: Callable[..., None], *args: Any) -> None:
        heapq.heappush(self._queue, (ts, next(self._seq), fn, args))

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
        client = _Client(name, member_id, instance_id, tuple(topics or tuple(self.timeline.topics)))
        self.clients[name] = client
        self.by_member_id[member_id] = client
        self._transition(ts, client, ClientState.JOINING)
        self._send_heartbeat(ts, client)

    def _crash(self, ts: int, client: _Client) -> None:
        """The process dies right after a heartbeat: the next one it sends (at once, or as soon as the
        one in flight is answered) is its last."""
        client.dies_after_heartbeat = True
        self._send_heartbeat(ts, client)

    def _close(self, ts: int, client: _Client) -> None:
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

    def _leave_revoke(self, ts: int, client: _Client) -> None:
        self._member_event(ts, client, EventType.PARTITIONS_REVOKED, partitions=tuple(sorted(client.owned)))
        for tp in sorted(client.owned):
            self.truth.stop(tp, client.member_id, ts, "member_left", instance=client.instance_id)
        client.owned = frozenset()
        client.reconciled = frozenset()  # AbstractMembershipManager: currentAssignment = NONE
        self._send_leave(ts, client)

    def _send_leave(self, ts: int, client: _Client, stale: bool = False) -> None:
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

    def _poll_pause(self, ts: int, client: _Client, duration: int) -> None:
        """The application thread is busy: callbacks wait; beyond max.poll.interval.ms the member leaves."""
        client.app_busy_until = max(client.app_busy_until, ts + duration)
        if duration > self.settings.max_poll_interval_ms:
            deadline = ts + self.settings.max_poll_interval_ms
            client.poll_deadline = deadline
            self._client_step(deadline, client, self._poll_timer_expired, deadline, ts + duration)

    def _poll_timer_expired(self, ts: int, client: _Client, deadline: int, resume_at: int) -> None:
        """AbstractMembershipManager.transitionToSendingLeaveGroup(dueToExpiredPollTimer): the member
        leaves at once (no callback first), STALE; onPartitionsLost runs when the application polls again."""
        if client.poll_deadline != deadline or client.state not in (
            ClientState.STABLE,
            ClientState.RECONCILING,
            ClientState.ACKNOWLEDGING,
            ClientState.JOINING,
        ):
            return
        client.poll_deadline = None
        client.reconciling = False
        self._member_event(ts, client, EventType.POLL_TIMEOUT_EXPIRED)
        self._transition(ts, client, ClientState.PREPARE_LEAVING)
        lost = client.owned
        for tp in sorted(lost):
            self.truth.stop(tp, client.member_id, ts, "member_left", instance=client.instance_id)
        client.owned = frozenset()
        client.reconciled = frozenset()  # AbstractMembershipManager: currentAssignment = NONE
        self._send_leave(ts, client, stale=True)
        if not client.stalled:
            self._client_step(resume_at, client, self._rejoin_after_stale, lost, app_thread=True)

    def _rejoin_after_stale(self, ts: int, client: _Client, lost: frozenset[TopicPartition]) -> None:
        if client.state is not ClientState.STALE:
            return
        if lost:
            self._member_event(ts, client, EventType.PARTITIONS_LOST, partitions=tuple(sorted(lost)))
        client.epoch = 0
        client.leaving_epoch = None
        self._transition(ts, client, ClientState.JOINING)
        self._send_heartbeat(ts, client)

    def _client_step(
        self, ts: int, client: _Client, fn: Callable[..., None], *args: Any, app_thread: bool = False
    ) -> None:
        """Run fn(ts, client, *args) at `ts` in this client's process: not once it is gone, and not before
        a gc freeze (or, for rebalance callbacks, the application thread) lets it run."""
        self._at(ts, self._run_client_step, client, fn, args, app_thread)

    def _run_client_step(self, ts: int, client: _Client, fn, args: tuple, app_thread: bool) -> None:
        if not client.alive:
            return
        ready = max(client.frozen_until, client.app_busy_until if app_thread else 0)
        if ts < ready:
            self._at(ready, self._run_client_step, client, fn, args, app_thread)
            return
        if app_thread and client.resyncing:
            self._at(ts + self.settings.network_ms, self._run_client_step, client, fn, args, app_thread)
            return
        fn(ts, client, *args)

    def _thaw(self, ts: int, client: _Client) -> None:
        """End of a gc freeze: the first thing the consumer does is heartbeat (it may have been fenced
        meanwhile), and rebalance callbacks wait for that heartbeat's answer. The answer to the request
        sent before the freeze is not lost: it waited in the socket and is read now (then the heartbeat
        follows). Dropping it would leave the member a step behind the coordinator: its next heartbeat
        would carry the previous epoch without owned partitions (unchanged since sent), which
        GroupMetadataManager.throwIfConsumerGroupMemberEpochIsInvalid fences (isSubset(null) is false)."""
        client.resyncing = True
        client.resync_after = client.request
        self._send_heartbeat(ts, client)

    # ============================================================================ heartbeats
    def _schedule_heartbeat(self, ts: int, client: _Client) -> None:
        """The next heartbeat, an interval from now, unless the timeline says the member's timer drifted to
        an instant less than two intervals away (a `heartbeat` action): then at that instant."""
        client.hb_token += 1
        interval = self.settings.heartbeat_interval_ms
        due = ts + interval
        pinned = self.heartbeat_instants.get(client.name)
        while pinned and pinned[0] <= ts:
            pinned.popleft()
        if pinned and pinned[0] < ts + 2 * interval:
            due = pinned.popleft()
        self._client_step(due, client, self._periodic_heartbeat, client.hb_token)

    def _periodic_heartbeat(self, ts: int, client: _Client, token: int) -> None:
        if token == client.hb_token:
            self._send_heartbeat(ts, client)

    def _send_heartbeat(self, ts: int, client: _Client) -> None:
        if not client.alive or client.state in (
            ClientState.FATAL,
            ClientState.UNSUBSCRIBED,
            ClientState.STALE,
        ):
            return
        if client.in_flight:
            client.hb_wanted = True
            return
        client.in_flight = True
        client.hb_wanted = False
        client.request += 1
        epoch = client.leaving_epoch if client.leaving_epoch is not None else client.epoch
        # ConsumerHeartbeatRequestManager.HeartbeatState.buildRequestData: the owned partitions are sent
        # when joining or when the reconciled assignment changed since the last heartbeat, else omitted
        # (null), which CurrentAssignmentBuilder.ownsRevokedPartitions takes as "still owns them". So a
        # heartbeat sent mid-reconciliation (a gc freeze's, a periodic one) does not tell the coordinator
        # "owns nothing": it must not release a partition this member's reconciliation is about to start.
        owned: frozenset[TopicPartition] | None = None
        if client.state is ClientState.JOINING or client.reported_count != client.reconciled_count:
            owned = client.reconciled
            client.reported_count = client.reconciled_count
        if client.state is ClientState.ACKNOWLEDGING:
            # AbstractMembershipManager.onHeartbeatRequestGenerated: the acknowledgement is on its way
            self._transition(ts, client, ClientState.STABLE)
        self._at(
            ts + self.settings.network_ms,
            self._arrive,
            client,
            client.request,
            epoch,
            client.topics,
            owned,
        )
        if client.dies_after_heartbeat:
            client.alive = False
        elif client.freeze_after_heartbeat:
            client.frozen_until = ts + client.freeze_after_heartbeat
            client.freeze_after_heartbeat = 0
            self._client_step(client.frozen_until, client, self._thaw)

    def _arrive(self, ts: int, client: _Client, request: int, epoch: int, topics, owned) -> None:
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
            self._failed(client, member.last_heartbeat)  # a frozen (gc) process stopped at its last heartbeat
            # an epoch closed since without a target had it consuming nothing (as a crash, told at once)
            self.tracker.member_stopped_at(client.member_id, member.last_heartbeat)
            # told only now, so partitions others started since the heartbeat were all that was consumed:
            # the gap before them is stop-the-world (as a crash's, whose stop is told at the heartbeat itself)
            self.truth.recount_backdated_stop(member.last_heartbeat)
        if self.coordinator.expire(ts, member_id) is None:
            return
        self.coordinator_free_at = ts + 1
        self._after_coordinator(ts)

    def _failed(self, client: _Client, ts: int) -> None:
        for tp in sorted(client.owned):
            self.truth.stop(tp, client.member_id, ts, "member_failed", instance=client.instance_id)
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

    # ============================================================================= responses
    def _response(self, ts: int, client: _Client, request: int, response: HeartbeatResponse) -> None:
        if request != client.request:
            return  # the answer to a request sent before a leave
        client.in_flight = False
        if request > client.resync_after:
            client.resyncing = False
        if response.error is None and response.member_epoch < 0:  # the leave heartbeat's answer
            if client.hb_wanted:
                self._send_heartbeat(ts, client)
            return
        if client.state in (ClientState.LEAVING, ClientState.UNSUBSCRIBED, ClientState.STALE):
            return
        if response.error in (FENCED_MEMBER_EPOCH, UNKNOWN_MEMBER_ID):
            self._fenced(ts, client)
            return
        if response.error == UNRELEASED_INSTANCE_ID:
            self._transition(ts, client, ClientState.FATAL)
            client.alive = False
            return
        client.epoch = response.member_epoch
        settled = client.state is not ClientState.JOINING and response.assignment == client.owned
        if client.state is not ClientState.PREPARE_LEAVING and not client.reconciling and not settled:
            self._reconcile(ts, client, response.assignment)
        if client.hb_wanted:
            self._send_heartbeat(ts, client)
        elif not client.in_flight:
            self._schedule_heartbeat(ts, client)

    def _fenced(self, ts: int, client: _Client) -> None:
        """FENCED: onPartitionsLost, then JOINING with epoch 0 (AbstractMembershipManager.transitionToFenced).
        The rejoin waits for the callback, which runs on the application thread: a member whose
        application thread hangs for good stays FENCED (its partitions are lost to it all the same)."""
        self._transition(ts, client, ClientState.FENCED)
        client.epoch = 0
        client.reconciling = False
        if client.stalled:
            for tp in sorted(client.owned):  # the callback (and its log line) never runs
                self.truth.stop(tp, client.member_id, ts, "lost", instance=client.instance_id)
            client.owned = client.reconciled = frozenset()
            return
        if client.owned:
            self._member_event(ts, client, EventType.PARTITIONS_LOST, partitions=tuple(sorted(client.owned)))
            for tp in sorted(client.owned):
                self.truth.stop(tp, client.member_id, ts, "lost", instance=client.instance_id)
            client.owned = frozenset()
        client.reconciled = frozenset()  # AbstractMembershipManager: currentAssignment = NONE
        self._transition(ts, client, ClientState.JOINING)
        self._send_heartbeat(ts, client)

    def _reconcile(self, ts: int, client: _Client, assignment: frozenset[TopicPartition]) -> None:
        """ConsumerMembershipManager reconciliation: revoke first, then assign, then acknowledge."""
        client.reconciling = True
        self._transition(ts, client, ClientState.RECONCILING)
        client.local_epoch += 1
        self._client_step(ts + 1, client, self._reconciliation_started, assignment)
        revoked = client.owned - assignment
        if revoked:
            self._client_step(
                ts + self.settings.revoke_callback_ms,
                client,
                self._revoke_step,
                revoked,
                assignment,
                app_thread=True,
            )
        else:
            self._client_step(
                ts + self.settings.assign_callback_ms, client, self._assign_step, assignment, app_thread=True
            )

    def _reconciliation_started(
        self, ts: int, client: _Client, assignment: frozenset[TopicPartition]
    ) -> None:
        """The reconciliation's start, logged at INFO (AbstractMembershipManager.maybeReconcile, 3.8+:
        "Reconciling assignment with local epoch ..." with the assigned, currently owned, added and revoked
        partitions) on the background thread's next loop after the RECONCILING transition (the real 4.x
        client logs it 1-3 ms later; callbacks take >= 1 ms, so it precedes them): the member's event
        `sync_response` as the parser reads that block (attributes.owned: what it consumes now)."""
        if not client.reconciling:
            return
        self._member_event(
            ts,
            client,
            EventType.SYNC_RESPONSE,
            member_epoch=client.epoch,
            partitions=tuple(sorted(assignment)),
            attributes={
                "local_epoch": str(client.local_epoch),
                "owned": _comma_list(client.owned),
                "added": _comma_list(assignment - client.owned),
                "revoked": _comma_list(client.owned - assignment),
            },
        )

    def _revoke_step(self, ts: int, client: _Client, revoked, assignment) -> None:
        if not client.reconciling:
            return
        self._member_event(ts, client, EventType.PARTITIONS_REVOKED, partitions=tuple(sorted(revoked)))
        for tp in sorted(revoked):
            self.truth.stop(tp, client.member_id, ts, "revoked", instance=client.instance_id)
        client.owned = client.owned - revoked
        self._client_step(
            ts + self.settings.assign_callback_ms, client, self._assign_step, assignment, app_thread=True
        )

    def _assign_step(self, ts: int, client: _Client, assignment: frozenset[TopicPartition]) -> None:
        if not client.reconciling:
            return
        added = assignment - client.owned
        self._member_event(ts, client, EventType.PARTITIONS_ASSIGNED, partitions=tuple(sorted(added)))
        for tp in sorted(added):
            self.truth.start(
                tp, client.member_id, ts, instance=client.instance_id, generation_id=self.tracker.epoch
            )
        client.owned = client.owned | added
        client.reconciled = client.owned
        client.reconciled_count += 1
        client.reconciling = False
        self._transition(ts, client, ClientState.ACKNOWLEDGING)
        self._send_heartbeat(ts, client)
        self.tracker.maybe_end_episode()

    # ================================================================================ events
    def _transition(self, ts: int, client: _Client, to_state: ClientState, epoch: int | None = None) -> None:
        from_state = client.state
        client.state = to_state
        if to_state is ClientState.JOINING:  # clearPendingAssignmentsAndLocalNamesCache: target NONE
            client.local_epoch = -1
        self._member_event(
            ts,
            client,
            EventType.MEMBER_STATE_CHANGED,
            member_epoch=client.epoch if epoch is None else epoch,
            attributes={"from_state": from_state.value, "to_state": to_state.value},
        )

    def _member_event(self, ts: int, client: _Client, event_type: EventType, **fields: Any) -> None:
        self._event(
            ts,
            Side.MEMBER,
            event_type,
            source=client.name,
            member_id=client.member_id,
            group_instance_id=client.instance_id,
            client_id=client.name,
            **fields,
        )

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


def _comma_list(partitions: Iterable[TopicPartition]) -> str:
    """A partition set as the parser carries it in string attributes (`t-0,t-1`, sorted)."""
    return ",".join(str(tp) for tp in sorted(partitions))
