"""How long a group's protocol steps take, fitted from its own events (the latency model of a what-if).

A what-if replays a group's membership timeline through the simulator; for its rebalances to take as
long as the real ones, the simulator needs the group's own round trips and callback times. Each is the
low median of what the events show where both ends of the step are logged (low: a callback held up by a
busy poll loop is an outlier, not the step's time); a step no event pair shows keeps the simulator's
default (`SimulationSettings`), and `LatencyModel.fitted` says which ones were fitted.

Step                      pair of events (same member / generation)                     simulator setting
JoinGroup request         member join_sent -> coordinator join_received                 join_round_trip_ms // 2
JoinGroup response        coordinator join_completed -> first member join_response      the other half
SyncGroup (coordinator)   leader assignment_computed -> coordinator assignment_received sync_round_trip_ms // 2
                          coordinator assignment_received -> first member sync_response the other half
SyncGroup (member only)   leader assignment_computed -> the leader's sync_response      sync_round_trip_ms
JoinGroup (member only)   a member's join_sent -> its join_response, the quickest of a  join_round_trip_ms
                          generation (the last member to rejoin waits for nobody)
assignment                leader join_response -> assignment_computed                   assignment_ms
revocation callback       partitions_revoked (or _lost) -> the member's next join_sent  revoke_callback_ms
                          (eager: from the rebalance signal before it, when logged: the
                          poll loop's way to onJoinPrepare counts, as the join phase waits)
                          (eager onJoinPrepare, reset) or partitions_assigned (KIP-429);
                          KIP-848: RECONCILING -> partitions_revoked
KIP-848 assignment        its partitions_revoked (or RECONCILING when nothing is revoked)  assign_callback_ms
callback                  -> partitions_assigned: AsyncKafkaConsumer runs the listener on  (KIP-848 simulator)
                          the application thread inside its next poll() (the background
                          thread queues the callback event: ConsumerMembershipManager,
                          ConsumerRebalanceListenerInvoker), so this is mostly the wait
                          for the poll loop, and the acknowledgement waits for it
                          KIP-848 coordinator log only: a member's UNREVOKED_PARTITIONS
                          state -> its next state (its acknowledging heartbeat, sent at
                          once after the callbacks: ConsumerMembershipManager), minus a
                          round trip
metadata refresh          topic_metadata_changed -> a join_requested "metadata"         metadata_refresh_ms
initial rebalance delay   rebalance_prepared of an Empty group -> join_completed, split  group_initial_rebalance_delay_ms
                          into the delays new members' arrivals extended it by
KIP-848 heartbeat         member JOINING -> coordinator join_received                   join_round_trip_ms // 2
coordinator log only      join_completed -> assignment_received (the JoinGroup          the three above, scaled
                          response, the assignment and the SyncGroup request)           from their defaults

Not fitted (no event shows them): heartbeat.interval.ms (heartbeats are not logged) and the jitter.
The fit keeps at most `MAX_SAMPLES` samples per step and one pending instant per member, so it runs in
bounded memory over any number of events.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from statistics import median_low

from rebalance_core.events import Event
from schemas.events import EventType

MAX_SAMPLES = 1000


def _simulator_default(name: str) -> int:
    from rebalance_core.simulate import SimulationSettings  # the simulator's defaults are the defaults

    return getattr(SimulationSettings(), name)


def _kip848_default(name: str) -> int:
    from rebalance_core.consumer import ConsumerSimSettings

    return getattr(ConsumerSimSettings(), name)


@dataclass(frozen=True)
class LatencyModel:
    """The simulator's latency settings for one group (names as in `SimulationSettings`)."""

    join_round_trip_ms: int = field(default_factory=lambda: _simulator_default("join_round_trip_ms"))
    sync_round_trip_ms: int = field(default_factory=lambda: _simulator_default("sync_round_trip_ms"))
    revoke_callback_ms: int = field(default_factory=lambda: _simulator_default("revoke_callback_ms"))
    assignment_ms: int = field(default_factory=lambda: _simulator_default("assignment_ms"))
    metadata_refresh_ms: int = field(default_factory=lambda: _simulator_default("metadata_refresh_ms"))
    group_initial_rebalance_delay_ms: int = field(
        default_factory=lambda: _simulator_default("group_initial_rebalance_delay_ms")
    )
    # KIP-848 only (the consumer-protocol simulator's setting; the classic simulator has no such step)
    assign_callback_ms: int = field(default_factory=lambda: _kip848_default("assign_callback_ms"))
    fitted: tuple[str, ...] = ()  # the settings above that came from the events (the rest: defaults)


def kip848_one_way_ms(join_round_trip_ms: int) -> int:
    """The KIP-848 simulator's one way, member <-> coordinator (`ConsumerSimSettings.network_ms`): half
    the fitted join round trip, at least 1 ms. The what-if plans a KIP-848 scenario with it and dates a
    KIP-848 member's heartbeats by it."""
    return max(1, join_round_trip_ms // 2)


class _Samples:
    def __init__(self) -> None:
        self.values: list[int] = []

    def add(self, value: int) -> None:
        if value >= 0 and len(self.values) < MAX_SAMPLES:
            self.values.append(value)

    def median(self) -> int | None:
        return (
            int(median_low(self.values)) if self.values else None
        )  # low: callbacks stalled by a busy poll loop are outliers

    def minimum(self) -> int | None:
        return min(self.values) if self.values else None


class LatencyFit:
    """Feed a group's events (in replay order); `model()` is the fitted LatencyModel."""

    def __init__(self) -> None:
        self.samples = {
            name: _Samples()
            for name in (
                "join_request",
                "join_response",
                "sync_request",
                "sync_response",
                "sync_member",
                "join_member",
                "assignment",
                "revoke",
                "assign",
                "revoke_ack",
                "metadata",
                "initial_delay",
                "completion",
            )
        }
        self._join_sent: dict[str, int] = {}  # member id or client key -> join_sent instant
        self._join_completed: tuple[int, int] | None = None  # (generation, ts), until its first response
        self._completed_at: tuple[int, int] | None = None  # (generation, ts) of the last join_completed
        self._leader_join: dict[tuple[str, int], int] = {}  # (member, generation) -> its join_response ts
        self._member_join_sent: dict[str, int] = {}  # member's client key -> its latest join_sent
        self._quickest_join: tuple[int, int] | None = None  # (generation, quickest join_sent -> response)
        self._assignment_computed: dict[int, tuple[str, int]] = {}  # generation -> (leader, ts)
        self._assignment_received: tuple[int, int] | None = None
        self._member_states = False  # KIP-848 client states are logged: callbacks timed from RECONCILING
        self._reconciling: dict[str, int] = {}  # KIP-848 client -> RECONCILING instant
        self._assign_from: dict[str, int] = {}  # KIP-848 client -> its reconciliation's revocation (or start)
        self._unrevoked: dict[str, int] = {}  # KIP-848 coordinator: member -> told to revoke (instant)
        self._revoked: dict[str, tuple[int, bool]] = {}  # client -> (revoked / lost instant, lost)
        self._signalled: dict[str, int] = {}  # client -> its first rebalance signal since its last JoinGroup
        self._metadata_changed: int | None = None
        self._empty_join = False  # a member joined an Empty group: the next prepare starts the delay
        self._prepared_empty: int | None = None
        self._delay_joins: list[int] = []  # new members' arrivals during the initial delay (offsets)

    def feed(self, events: Iterable[Event]) -> None:
        for e in events:
            self.observe(e)

    def observe(self, e: Event) -> None:
        kind = e.event_type
        member = e.member_id or ""
        if kind in (EventType.JOIN_REQUESTED.value, EventType.HEARTBEAT_REBALANCING.value):
            self._signalled.setdefault(_join_key(e, by_member=False), e.ts)
        if kind == EventType.JOIN_SENT.value:
            self._join_sent[_join_key(e)] = e.ts
            self._member_join_sent[_join_key(e, by_member=False)] = e.ts
            self._pop_revoke(e)
        elif kind == EventType.JOIN_RECEIVED.value:
            sent = self._join_sent.pop(member, None) if member else None
            if sent is None:
                sent = self._join_sent.pop(_join_key(e, by_member=False), None)
            if sent is not None:
                self.samples["join_request"].add(e.ts - sent)
            state = (e.attributes or {}).get("state")
            self._empty_join = state == "Empty"
            if (
                self._prepared_empty is not None
                and state == "PreparingRebalance"
                and len(self._delay_joins) < 64
            ):
                self._delay_joins.append(e.ts)  # a new member during the initial delay extends it
        elif kind == EventType.MEMBER_STATE_CHANGED.value:
            attrs = e.attributes or {}
            self._member_states = True
            client = _join_key(e, by_member=False)
            self._reconciling.pop(client, None)
            if attrs.get("to_state") == "JOINING" and member:  # KIP-848: the joining heartbeat goes out now
                self._join_sent[member] = e.ts
            elif attrs.get("to_state") == "RECONCILING":  # KIP-848: the revocation callback starts now
                self._reconciling[client] = self._assign_from[client] = e.ts
        elif kind == EventType.REBALANCE_PREPARED.value:
            self._prepared_empty = e.ts if self._empty_join else None
            self._delay_joins = []
            self._empty_join = False
        elif kind == EventType.JOIN_COMPLETED.value:
            if e.generation_id is not None:
                self._join_completed = self._completed_at = (e.generation_id, e.ts)
            if self._prepared_empty is not None:
                delay = _initial_delay(
                    e.ts - self._prepared_empty, [t - self._prepared_empty for t in self._delay_joins]
                )
                if delay is not None:
                    self.samples["initial_delay"].add(delay)
                self._prepared_empty = None
        elif kind == EventType.JOIN_RESPONSE.value:
            if self._join_completed is not None and self._join_completed[0] == e.generation_id:
                # the first response of a generation is a parked JoinGroup answered at once (later ones
                # may be members that joined after the phase, e.g. a static replacement)
                self.samples["join_response"].add(e.ts - self._join_completed[1])
                self._join_completed = None
            if member and e.generation_id is not None:
                # the leader is the member that logs the assignment (its join response names no leader)
                self._leader_join[(member, e.generation_id)] = e.ts
                if len(self._leader_join) > 64:
                    del self._leader_join[next(iter(self._leader_join))]
            sent = self._member_join_sent.pop(_join_key(e, by_member=False), None)
            if sent is not None and e.generation_id is not None:
                quickest = self._quickest_join
                if quickest is not None and quickest[0] != e.generation_id:
                    self.samples["join_member"].add(quickest[1])
                    quickest = None
                if quickest is None or e.ts - sent < quickest[1]:
                    self._quickest_join = (e.generation_id, e.ts - sent)
        elif kind == EventType.ASSIGNMENT_COMPUTED.value and e.generation_id is not None:
            joined = self._leader_join.pop((member, e.generation_id), None)
            if joined is not None:
                self.samples["assignment"].add(e.ts - joined)
            self._assignment_computed[e.generation_id] = (member, e.ts)
            if len(self._assignment_computed) > 4:  # only the latest generations can still pair
                del self._assignment_computed[min(self._assignment_computed)]
        elif kind == EventType.ASSIGNMENT_RECEIVED.value and e.generation_id is not None:
            computed = self._assignment_computed.get(e.generation_id)
            if computed is not None:
                self.samples["sync_request"].add(e.ts - computed[1])
            if self._completed_at is not None and self._completed_at[0] == e.generation_id:
                self.samples["completion"].add(e.ts - self._completed_at[1])
            self._assignment_received = (e.generation_id, e.ts)
        elif kind == EventType.SYNC_RESPONSE.value and e.generation_id is not None:
            received = self._assignment_received
            if received is not None and received[0] == e.generation_id:
                self.samples["sync_response"].add(e.ts - received[1])  # first of the generation, as above
                self._assignment_received = None
            computed = self._assignment_computed.get(e.generation_id)
            if computed is not None and computed[0] == member:
                self.samples["sync_member"].add(e.ts - computed[1])
        elif kind == EventType.PARTITIONS_REVOKED.value and self._member_states:
            client = _join_key(e, by_member=False)
            started = self._reconciling.pop(client, None)
            if started is not None:
                self.samples["revoke"].add(e.ts - started)
            if client in self._assign_from:
                self._assign_from[client] = e.ts
        elif kind == EventType.PARTITIONS_ASSIGNED.value and self._member_states:
            started = self._assign_from.pop(_join_key(e, by_member=False), None)
            if started is not None:
                self.samples["assign"].add(e.ts - started)
        elif kind in (EventType.PARTITIONS_REVOKED.value, EventType.PARTITIONS_LOST.value):
            # onPartitionsLost runs the revocation callback by default (ConsumerRebalanceListener)
            self._revoked[_join_key(e, by_member=False)] = (e.ts, kind == EventType.PARTITIONS_LOST.value)
        elif kind == EventType.PARTITIONS_ASSIGNED.value and not self._member_states:
            self._pop_revoke(e)
        elif kind == EventType.LEAVE_SENT.value:
            self._revoked.pop(_join_key(e, by_member=False), None)  # close(): no rejoin follows
        elif kind == EventType.MEMBER_EPOCH_UPDATED.value and member:
            # GroupMetadataManager "new assignment state": the heartbeat that got the revocation, then
            # the one acknowledging it (sent as soon as the callbacks ran)
            attrs = e.attributes or {}
            told = self._unrevoked.pop(member, None)
            if attrs.get("state") == "UNREVOKED_PARTITIONS" and attrs.get("revoked"):
                self._unrevoked[member] = e.ts
            elif told is not None:
                self.samples["revoke_ack"].add(e.ts - told)
        elif kind == EventType.TOPIC_METADATA_CHANGED.value:
            self._metadata_changed = e.ts
        elif (
            kind == EventType.JOIN_REQUESTED.value
            and self._metadata_changed is not None
            and "metadata" in (e.reason or "")
        ):
            self.samples["metadata"].add(e.ts - self._metadata_changed)
            self._metadata_changed = None

    def _pop_revoke(self, e: Event) -> None:
        """The callback ended at this JoinGroup / onPartitionsAssigned. A JoinGroup without member id
        after a revocation (not a loss) is a new process: a static member's close() sends no LeaveGroup."""
        client = _join_key(e, by_member=False)
        revoked = self._revoked.pop(client, None)
        signalled = self._signalled.pop(client, None) if e.event_type == EventType.JOIN_SENT.value else None
        new_process = e.event_type == EventType.JOIN_SENT.value and not e.member_id
        if revoked is not None and (revoked[1] or not new_process):
            began = signalled if signalled is not None and signalled <= revoked[0] else revoked[0]
            self.samples["revoke"].add(e.ts - began)

    def model(self) -> LatencyModel:
        values: dict[str, int] = {}
        request, response = self.samples["join_request"].median(), self.samples["join_response"].median()
        if request is not None or response is not None:
            # a one-sided fit doubles the side it has (the simulator splits a round trip in halves)
            values["join_round_trip_ms"] = (request if request is not None else response) + (
                response if response is not None else request
            )
        request, response = self.samples["sync_request"].median(), self.samples["sync_response"].median()
        if request is not None or response is not None:
            values["sync_round_trip_ms"] = (request if request is not None else response) + (
                response if response is not None else request
            )
        elif self.samples["sync_member"].median() is not None:
            values["sync_round_trip_ms"] = self.samples["sync_member"].median()
        if "join_round_trip_ms" not in values:
            quickest = _Samples()
            for value in self.samples["join_member"].values + (
                [self._quickest_join[1]] if self._quickest_join is not None else []
            ):
                quickest.add(value)
            if quickest.minimum() is not None:  # each is a bound: the quickest is the best one
                values["join_round_trip_ms"] = quickest.minimum()
        for name, setting in (
            ("assignment", "assignment_ms"),
            ("revoke", "revoke_callback_ms"),
            ("assign", "assign_callback_ms"),
            ("metadata", "metadata_refresh_ms"),
        ):
            value = self.samples[name].median()
            if value is not None:
                values[setting] = value
        acknowledged = self.samples["revoke_ack"].median()
        if "revoke_callback_ms" not in values and acknowledged is not None:
            # the answer to the member and its acknowledgement are a round trip; the rest is the callbacks
            rtt = values.get("join_round_trip_ms", LatencyModel().join_round_trip_ms)
            values["revoke_callback_ms"] = max(1, acknowledged - rtt)
        completion = self.samples["completion"].median()
        unfitted = [name for name in _COMPLETION_SHARES if name not in values]
        if completion is not None and len(unfitted) == len(_COMPLETION_SHARES):
            # coordinator log only: join_completed -> assignment_received is the JoinGroup response, the
            # leader's assignment and its SyncGroup request; scale the defaults to it
            default = LatencyModel()
            share = sum(getattr(default, name) * weight for name, weight in _COMPLETION_SHARES.items())
            for name in unfitted:
                values[name] = max(1, round(getattr(default, name) * completion / share))
        delay = self.samples["initial_delay"].minimum()
        if delay is not None:
            values["group_initial_rebalance_delay_ms"] = delay
        return LatencyModel(**values, fitted=tuple(sorted(values)))


# join_completed -> assignment_received = join response (half the join round trip) + assignment + SyncGroup
# request (half the sync round trip)
_COMPLETION_SHARES = {"join_round_trip_ms": 0.5, "assignment_ms": 1.0, "sync_round_trip_ms": 0.5}


def _join_key(e: Event, by_member: bool = True) -> str:
    """Pairs a JoinGroup with its arrival: by member id when the request carries one, else by the client
    (a new member's first JoinGroup has no member id yet)."""
    if by_member and e.member_id:
        return e.member_id
    return f"client|{e.group_instance_id or ''}|{e.client_id or e.source or ''}"


def _initial_delay(total: int, joins: list[int]) -> int | None:
    """group.initial.rebalance.delay.ms from one initial join phase (GroupCoordinator InitialDelayedJoin):
    the phase lasts n delays, each but the last extended because a new member arrived during it. The
    smallest n whose periods fit the arrivals gives the delay; None when none fits."""
    for n in range(1, len(joins) + 2):
        delay = total / n
        periods = {int(offset // delay) for offset in joins if offset < total}
        if periods == set(range(n - 1)) or (n == 1 and not periods):
            return round(delay)
    return None
