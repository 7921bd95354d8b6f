"""The Kafka Connect worker's wording per era (used by `writer.KafkaLogWriter` for a member event whose
protocol type is `connect`: a worker of a Connect cluster's group). Sources, read at 2.8.0 and at trunk
(3.9/4.0; 3.8.0 logs the same): `WorkerCoordinator`, `DistributedHerder`, the shared `AbstractCoordinator`
(connect/runtime/.../distributed, clients/.../consumer/internals); TEMPLATES.md §0 and §5.

What a worker logs at INFO, in order, for one round (AbstractCoordinator.joinGroupIfNeeded):
    WorkerCoordinator.onJoinPrepare          "Rebalance started"
    AbstractCoordinator                      "(Re-)joining group", "Successfully joined group with generation
                                             Generation{…, protocol='sessioned'}", "Successfully synced group
                                             in generation Generation{…}"
    WorkerCoordinator.onJoinComplete         -> DistributedHerder.onRevoked (only when the assignment revokes):
                                             "Finished stopping tasks in preparation for rebalance",
                                             "Finished flushing status backing store in preparation for
                                             rebalance"; then -> onAssigned: "Joined group at generation N with
                                             protocol version P and got assignment: Assignment{…} with
                                             rebalance delay: D"
    DistributedHerder.handleRebalanceCompleted  "Starting connectors and tasks using config offset O",
                                             "Finished starting connectors and tasks"
The "Joined group" line is the only one naming the assignment (its leader, the tasks added and revoked:
IncrementalCooperativeAssignor logs at DEBUG only): the parser completes the worker's sync_response with it
and reads the tasks started / stopped from it, so it is written at the instant the simulator stops the
revoked tasks (the partitions_revoked event) and renders the partitions_revoked / partitions_assigned
events of that instant. WorkerCoordinator.requestRejoin overrides AbstractCoordinator's and logs at DEBUG:
no "Request joining group due to" (3.0+) for a worker — the heartbeat's rebalance signal shows only in
2.x's "Attempt to heartbeat failed since group is rebalancing". The shipped connect-log4j layout is
`[%d] %p %X{connector.context}%m (%c:%L)%n`; the herder and coordinator threads have no connector context.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from rebalance_core.assignors.protocols import CONNECT_PROTOCOLS
from rebalance_core.events import REBALANCE_STARTED, Event
from rebalance_core.kafka_logs.writer_client import ABSTRACT_COORDINATOR, ClassicClient, ClassicClient2
from rebalance_core.kafka_logs.writer_lines import CLIENT, LogLine, format_log_ts
from schemas.events import EventType

if TYPE_CHECKING:
    from rebalance_core.kafka_logs.writer_memory import GroupLogMemory

E = EventType
_DISTRIBUTED = "org.apache.kafka.connect.runtime.distributed."
WORKER_COORDINATOR = _DISTRIBUTED + "WorkerCoordinator"
HERDER = _DISTRIBUTED + "DistributedHerder"
CONNECT_REST_PORT = 8083  # listeners default: http://:8083 (the leader's URL in the assignment)

# the source line of each message (the layout's %L), at 2.8.0 and at trunk
_LINES = {
    "2.x": {
        "Rebalance started": 221,
        "(Re-)joining group": 538,
        "Successfully joined": 594,
        "Successfully synced": 758,
        "Discovered": 848,
        "Group coordinator": 911,
        "Member": 1042,
        "Attempt to heartbeat": 1123,
        "Starting connectors": 1244,
        "Finished starting": 1272,
        "Joined group": 1694,
        "Finished stopping": 1771,
        "Finished flushing": 1790,
    },
    "3.x": {
        "Rebalance started": 243,
        "(Re-)joining group": 605,
        "Successfully joined": 666,
        "Successfully synced": 843,
        "Discovered": 937,
        "Group coordinator": 1000,
        "Resetting generation": 1056,
        "consumer poll timeout": 1148,
        "Member": 1174,
        "Starting connectors": 1981,
        "Finished starting": 2010,
        "Joined group": 2651,
        "Finished stopping": 2737,
        "Finished flushing": 2758,
    },
}
_LINES["4.x"] = _LINES["3.x"]


@dataclass
class _PendingJoin:
    """A worker's "Joined group" line waiting for the instant its revoked tasks are stopped and its new
    ones started (the partitions_revoked / partitions_assigned events it renders)."""

    sync: Event
    ts: int
    revoking: bool
    stopped: bool = False  # the revoked tasks' partitions_revoked was seen
    event_ids: list[str] = field(default_factory=list)

    @property
    def waiting(self) -> bool:
        """Its instant is still to come: the revoked tasks are being stopped."""
        return self.revoking and not self.stopped


class Worker(ClassicClient):
    """A Connect worker of 3.x (trunk; 3.0-3.9 log the same at INFO): AbstractCoordinator's lines under
    the WorkerCoordinator logger (3.0+), the `[Worker clientId=…, groupId=…] ` prefix."""

    era = "3.x"
    consumer_wording = ClassicClient
    coordinator_logger = WORKER_COORDINATOR
    fields = {
        E.JOIN_REQUESTED: ("reason",),  # "Rebalance started" names no member (the parser may learn it later)
        E.JOIN_SENT: (),
        E.JOIN_RESPONSE: ("generation_id", "member_id", "protocol_name"),
        E.SYNC_RESPONSE: ("generation_id", "member_id", "leader_id"),
        E.PARTITIONS_REVOKED: ("member_id", "partitions"),
        E.PARTITIONS_ASSIGNED: ("member_id", "partitions"),
        E.POLL_TIMEOUT_EXPIRED: ("member_id",),
        E.LEAVE_SENT: ("member_id", "reason"),
        E.COORDINATOR_DISCOVERED: (),
        E.COORDINATOR_UNAVAILABLE: (),
        E.CLIENT_CONFIG: ("client_id", "protocol_name"),
    }
    # AbstractConfig.logAll's logger (the config's own class up to 3.x; AbstractConfig's from 4.0,
    # KAFKA-17185) and the line of its log call (the layout's %L) at 2.8.0 / 3.8.0 / trunk
    config_logger = _DISTRIBUTED + "DistributedConfig"
    config_log_line = 372

    def __init__(self) -> None:
        self.pending: dict[str, _PendingJoin] = {}  # client id -> its "Joined group" line to come

    def line(
        self, event: Event, message: str, logger: str, *, level: str = "INFO", renders: bool = True
    ) -> LogLine:
        return self.line_at(
            event, event.ts, message, logger, level=level, ids=(event.event_id,) if renders else ()
        )

    def line_at(
        self,
        event: Event,
        ts: int,
        message: str,
        logger: str,
        *,
        level: str = "INFO",
        ids: tuple[str, ...] = (),
    ) -> LogLine:
        prefix = f"[Worker clientId={event.client_id}, groupId={event.group_id}] "
        number = next((n for key, n in _LINES[self.era].items() if message.startswith(key)), 0)
        text = f"[{format_log_ts(ts)}] {level} {prefix}{message} ({logger}:{number})"
        return LogLine(ts, CLIENT, text, ids)

    def logged_reason(self, w: GroupLogMemory, event: Event) -> str | None:
        if event.event_type == E.LEAVE_SENT.value:  # AbstractCoordinator's LeaveGroup reason, as a consumer's
            return self.consumer_wording.logged_reason(self, w, event)
        return event.reason

    # -- driving: the "Joined group" line waits for its instant (see the module docstring) -------------
    def render(self, w: GroupLogMemory, event: Event) -> list[LogLine]:
        client = event.client_id or event.source or ""
        out: list[LogLine] = []
        for other in [c for c, p in self.pending.items() if c != client and not p.waiting]:
            out.extend(self.settle(other))  # its instant has passed: keep the log in time order
        pending = self.pending.get(client)
        if pending is not None:
            kind, waiting = event.event_type, pending.waiting
            if kind == E.PARTITIONS_REVOKED.value and waiting:
                pending.ts, pending.stopped = event.ts, True
                pending.event_ids.append(event.event_id)
                return out
            if kind == E.PARTITIONS_ASSIGNED.value and (waiting or event.ts == pending.ts):
                pending.ts = event.ts
                pending.event_ids.append(event.event_id)
                return self.settle(client)
            if waiting:  # no task of its own was stopped: the line comes before this event's
                pending.ts = event.ts
            out.extend(self.settle(client))
        out.extend(super().render(w, event))
        return out

    def settle(self, client: str) -> list[LogLine]:
        pending = self.pending.pop(client)
        sync, ts = pending.sync, pending.ts
        lines = []
        if pending.revoking:  # DistributedHerder.RebalanceListener.onRevoked (protocol version >= 1)
            lines += [
                self.line_at(sync, ts, "Finished stopping tasks in preparation for rebalance", HERDER),
                self.line_at(
                    sync, ts, "Finished flushing status backing store in preparation for rebalance", HERDER
                ),
            ]
        lines.append(self.line_at(sync, ts, self.joined_message(sync), HERDER, ids=tuple(pending.event_ids)))
        offset = self.config_offset(sync)
        lines += [
            self.line_at(sync, ts, f"Starting connectors and tasks using config offset {offset}", HERDER),
            self.line_at(sync, ts, "Finished starting connectors and tasks", HERDER),
        ]
        return lines

    def flush(self) -> list[LogLine]:
        return [line for client in list(self.pending) for line in self.settle(client)]

    # -- the Assignment ----------------------------------------------------------------------------
    @staticmethod
    def config_offset(sync: Event) -> str:
        """The config topic offset the assignment was computed at (the simulator has no config topic:
        1, any offset the whole group agrees on)."""
        return sync.attributes.get("config_offset", "1")

    def joined_message(self, sync: Event) -> str:
        """DistributedHerder.RebalanceListener.onAssigned, ExtendedAssignment.toString (KIP-415)."""
        a = sync.attributes
        version = a.get("protocol_version") or str(CONNECT_PROTOCOLS.get(sync.protocol_name or "", 1))
        delay = a.get("delay_ms", "0")
        leader = sync.leader_id or ""
        assignment = (
            f"Assignment{{error={a.get('error_code', '0')}, leader='{leader}', leaderUrl='{_leader_url(leader)}', "
            f"offset={self.config_offset(sync)}, connectorIds={_ids(a.get('assigned_connectors'), ',')}, "
            f"taskIds={_ids(a.get('added'), ', ')}, revokedConnectorIds={_ids(a.get('revoked_connectors'), ',')}, "
            f"revokedTaskIds={_ids(a.get('revoked'), ', ')}, delay={delay}}}"
        )
        return (
            f"Joined group at generation {sync.generation_id} with protocol version {version} and got assignment: "
            f"{assignment} with rebalance delay: {delay}"
        )

    # -- event types -------------------------------------------------------------------------------
    def client_config(self, w: GroupLogMemory, event: Event) -> list[LogLine]:
        """ConnectDistributed builds the worker's DistributedConfig at start, whose constructor logs it
        whole (AbstractConfig.logAll): `DistributedConfig values: ` then one `\tkey = value` line per
        setting, keys sorted, under the config logger, with no connector context and no `[Worker …]`
        prefix. The group settings among them: WorkerCoordinator's timeouts, connect.protocol and
        IncrementalCooperativeAssignor's scheduled.rebalance.max.delay.ms (DistributedConfig defaults)."""
        attributes = event.attributes or {}
        settings = {
            "client.id": event.client_id or "",
            "connect.protocol": attributes.get("connect_protocol") or event.protocol_name or "sessioned",
            "group.id": event.group_id,
            "heartbeat.interval.ms": attributes.get("heartbeat_interval_ms", "3000"),
            "rebalance.timeout.ms": attributes.get("rebalance_timeout_ms", "60000"),
            "scheduled.rebalance.max.delay.ms": attributes.get("scheduled_rebalance_max_delay_ms", "300000"),
            "session.timeout.ms": attributes.get("session_timeout_ms", "10000"),
        }
        body = "\n".join(f"\t{key} = {value}" for key, value in sorted(settings.items()))
        text = (
            f"[{format_log_ts(event.ts)}] INFO DistributedConfig values: \n{body} "
            f"({self.config_logger}:{self.config_log_line})"
        )
        return [LogLine(event.ts, CLIENT, text, (event.event_id,))]

    def join_requested(self, w: GroupLogMemory, event: Event) -> list[LogLine]:
        if event.reason != REBALANCE_STARTED:  # WorkerCoordinator.requestRejoin: DEBUG
            return []
        return [self.line(event, "Rebalance started", WORKER_COORDINATOR)]

    def sync_response(self, w: GroupLogMemory, event: Event) -> list[LogLine]:
        client = w.client_state(event)
        synced = f"Successfully synced group in generation {self.generation(event, client.protocol)}"
        a = event.attributes
        revoking = bool(a.get("revoked") or a.get("revoked_connectors"))
        self.pending[event.client_id or event.source or ""] = _PendingJoin(event, event.ts, revoking)
        return [self.line(event, synced, self.coordinator_logger)]

    def assignment_computed(self, w: GroupLogMemory, event: Event) -> list[LogLine]:
        return []  # IncrementalCooperativeAssignor / EagerAssignor log the assignment at DEBUG

    def partitions_revoked(self, w: GroupLogMemory, event: Event) -> list[LogLine]:
        return []  # only in the "Joined group" line (render)

    def partitions_assigned(self, w: GroupLogMemory, event: Event) -> list[LogLine]:
        return []

    def partitions_lost(self, w: GroupLogMemory, event: Event) -> list[LogLine]:
        return []  # a worker has no lost-partitions callback

    def heartbeat_rebalancing(self, w: GroupLogMemory, event: Event) -> list[LogLine]:
        return []  # 3.0+: requestRejoin("group is already rebalancing"), WorkerCoordinator's: DEBUG

    def reset_on_leave(self, event: Event) -> list[LogLine]:
        """resetGenerationOnLeaveGroup: "Resetting generation and member id" at INFO, its requestRejoin
        is WorkerCoordinator's (DEBUG)."""
        message = "Resetting generation and member id due to: consumer pro-actively leaving the group"
        return [self.line(event, message, self.coordinator_logger, renders=False)]


class Worker2(Worker):
    """A Connect worker of 2.x (2.8; "Joined group at generation N with protocol version" from 2.4):
    AbstractCoordinator's lines under its own logger, the heartbeat's "Attempt to heartbeat failed since
    group is rebalancing" at INFO, the generation reset at DEBUG, no poll-timeout line of the herder."""

    era = "2.x"
    consumer_wording = ClassicClient2
    coordinator_logger = ABSTRACT_COORDINATOR
    fields = {**Worker.fields, E.HEARTBEAT_REBALANCING: ("member_id",)}
    unavailable_separator = "."

    def heartbeat_rebalancing(self, w: GroupLogMemory, event: Event) -> list[LogLine]:
        message = "Attempt to heartbeat failed since group is rebalancing"
        return [self.line(event, message, self.coordinator_logger)]

    def poll_timeout_expired(self, w: GroupLogMemory, event: Event) -> list[LogLine]:
        return []  # 2.8: only the LeaveGroup's reason says it

    def reset_on_leave(self, event: Event) -> list[LogLine]:
        return []


class Worker4(Worker):
    """4.x: trunk of the 4.0 line, the same lines as 3.x."""

    era = "4.x"
    config_logger = "org.apache.kafka.common.config.AbstractConfig"
    config_log_line = 371


def _leader_url(leader_id: str) -> str:
    """The leader's advertised REST URL: its host, here its client id (the member id without the
    broker's `-{UUID}` suffix)."""
    host = leader_id[:-37] if len(leader_id) > 37 and leader_id[-37] == "-" else leader_id
    return f"http://{host or 'localhost'}:{CONNECT_REST_PORT}/"


def _ids(text: str | None, separator: str) -> str:
    """A Java collection's toString of the ids a simulator attribute lists."""
    return "[" + ", ".join(i.strip() for i in (text or "").split(separator) if i.strip()) + "]"


_ERAS = {"2.x": Worker2, "3.x": Worker, "4.x": Worker4}


def wording(era: str) -> Worker:
    return _ERAS[era]()
