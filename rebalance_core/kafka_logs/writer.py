"""Canonical events -> Kafka log text: what a broker's server.log and the consumers' logs would show.

The inverse of `rebalance_core.kafka_logs.parse_lines` for the events a Kafka log can express, in the
wording of ONE release, Apache Kafka 3.9 (see /work/shared/kafka-logs/TEMPLATES.md):
    broker, classic groups     Scala `kafka.coordinator.group.GroupCoordinator` (and GroupMetadataManager)
    broker, consumer groups    Java `org.apache.kafka.coordinator.group.GroupMetadataManager` (KIP-848)
    client, classic protocol   `ConsumerCoordinator` (AbstractCoordinator's lines use the subclass's
                               logger from 3.0), `ConsumerRebalanceListenerInvoker` for the callbacks (3.7+)
    client, consumer protocol  `ConsumerMembershipManager` + `ConsumerRebalanceListenerInvoker`
in Kafka's shipped log4j layout `[%d] %p %m (%c)%n`, `%d` = `yyyy-MM-dd HH:mm:ss,SSS` (here UTC).

Pure: events in, `LogLine`s out. One writer per group, fed the group's events in order (it remembers
what the text needs and the event does not carry: a member's client id and timeouts for the
LeaveGroup line, a client's owned partitions for "Updating assignment with", a member's epoch).

Events Kafka 3.9 does not log at INFO produce no line (`ROUNDTRIP_FIELDS` lists the types that do, and
which of their fields the text carries): a known member's JoinGroup (`join_received`, DEBUG), the
heartbeat's rebalance signal (3.x logs only "Request joining group due to: ..."), classic topic
metadata changes, pending-sync removals (named only in the "Preparing to rebalance" reason).
Lines Kafka logs around an event without an event of their own are written as context (no event ids):
"Notifying assignor", "Updating assignment with", "Giving away all assigned partitions as lost", the
generation reset after a LeaveGroup. Not written, for want of an event that says when: a new dynamic
member's second JoinGroup (KIP-394: the client's "Request joining group due to: need to re-join with the
given member-id" and second "(Re-)joining group"; the events model one JoinGroup), and the reset lines
of a static member's close (nothing but its onLeavePrepare revocation marks the close).
Order: like the 3.x Scala coordinator, a LeaveGroup's "Preparing to rebalance" line precedes its
"has left" line (same millisecond), and members dropped at the rebalance timeout share one line.
"""

from __future__ import annotations

import functools
import hashlib
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from rebalance_core.events import Event, Partitions, TopicPartition, parse_partitions
from schemas.events import EventType, RemovalReason

E = EventType
BROKER, CLIENT = "broker", "client"
OFFSETS_TOPIC_PARTITIONS = 50  # offsets.topic.num.partitions default
COORDINATOR_NODE_ID_BASE = 2_147_483_647  # clients address the coordinator as Integer.MAX_VALUE - brokerId

SCALA_COORDINATOR = "kafka.coordinator.group.GroupCoordinator"
SCALA_METADATA_MANAGER = "kafka.coordinator.group.GroupMetadataManager"
JAVA_METADATA_MANAGER = "org.apache.kafka.coordinator.group.GroupMetadataManager"
_CLIENTS = "org.apache.kafka.clients.consumer.internals."
CONSUMER_COORDINATOR = _CLIENTS + "ConsumerCoordinator"
LISTENER_INVOKER = _CLIENTS + "ConsumerRebalanceListenerInvoker"
MEMBERSHIP_MANAGER = _CLIENTS + "ConsumerMembershipManager"
HEARTBEAT_MANAGER = _CLIENTS + "HeartbeatRequestManager"

_LEAVING = "consumer pro-actively leaving the group"  # AbstractCoordinator.resetGenerationOnLeaveGroup
_POLL_TIMEOUT_ADVICE = (
    "poll timeout has expired. This means the time between subsequent calls to poll() was longer than the "
    "configured max.poll.interval.ms, which typically implies that the poll loop is spending too much time "
    "processing messages. You can address this either by increasing max.poll.interval.ms or by reducing the "
    "maximum size of batches returned in poll() with max.poll.records."
)

# The fields of each written event that the log text carries back (besides ts, side, event_type,
# group_id, and for member events the prefix's client_id and group_instance_id).
ROUNDTRIP_FIELDS: dict[EventType, tuple[str, ...]] = {
    E.JOIN_RECEIVED: ("member_id", "group_instance_id"),
    E.REBALANCE_PREPARED: ("generation_id", "reason"),
    E.JOIN_COMPLETED: ("generation_id", "member_count"),
    E.ASSIGNMENT_RECEIVED: ("generation_id", "leader_id", "member_count"),
    E.MEMBER_REMOVED: ("member_id", "reason"),
    E.STATIC_MEMBER_REPLACED: ("group_instance_id",),  # the 3.x Scala line names the old member only
    E.GROUP_EMPTY: ("generation_id",),
    E.GROUP_DEAD: ("generation_id",),
    E.GROUP_LOADED: ("generation_id",),
    E.GROUP_UNLOADED: ("generation_id",),
    E.TOPIC_METADATA_CHANGED: (),  # consumer groups only; attributes topic.<name>
    E.GROUP_EPOCH_BUMPED: ("group_epoch",),
    E.TARGET_ASSIGNMENT_COMPUTED: ("assignment_epoch", "assignment", "protocol_name"),
    E.MEMBER_EPOCH_UPDATED: ("member_id", "member_epoch", "partitions"),
    E.JOIN_REQUESTED: ("member_id", "reason"),
    E.JOIN_SENT: (),
    E.JOIN_RESPONSE: ("generation_id", "member_id", "protocol_name"),
    E.ASSIGNMENT_COMPUTED: ("generation_id", "assignment"),
    E.SYNC_RESPONSE: ("generation_id", "member_id", "partitions"),
    E.PARTITIONS_REVOKED: ("member_id", "partitions"),
    E.PARTITIONS_ASSIGNED: ("member_id", "partitions"),
    E.PARTITIONS_LOST: ("partitions",),
    E.POLL_TIMEOUT_EXPIRED: ("member_id",),
    E.LEAVE_SENT: ("member_id", "reason"),
    E.COORDINATOR_DISCOVERED: (),
    E.COORDINATOR_UNAVAILABLE: (),
    E.MEMBER_STATE_CHANGED: ("member_id", "member_epoch"),
}


@dataclass(frozen=True, slots=True)
class LogLine:
    ts: int
    stream: str  # BROKER (server.log) | CLIENT (the consumer's log)
    text: str  # one log4j entry; a multi-line message spans several lines; no trailing newline
    event_ids: tuple[str, ...]  # the canonical events this entry renders; (): context Kafka logs around them


def java_string_hash(text: str) -> int:
    """Java's String.hashCode (over UTF-16 code units) as a signed 32-bit int."""
    data = text.encode("utf-16-be")
    h = 0
    for i in range(0, len(data), 2):
        h = (31 * h + int.from_bytes(data[i : i + 2], "big")) & 0xFFFFFFFF
    return h - (1 << 32) if h >= 1 << 31 else h


@functools.lru_cache(maxsize=65536)
def partition_for(group_id: str, partitions: int = OFFSETS_TOPIC_PARTITIONS) -> int:
    """GroupMetadataManager.partitionFor: Utils.abs(groupId.hashCode) % offsets.topic.num.partitions.
    Utils.abs is Math.abs with Integer.MIN_VALUE -> 0 (not Utils.toPositive's `& 0x7fffffff`, which gives
    another partition for a negative hash: "testtopic-app" is in __consumer_offsets-31, not 17)."""
    h = java_string_hash(group_id)
    return (0 if h == -(1 << 31) else abs(h)) % partitions


def format_log_ts(ms: int) -> str:
    """log4j's default %d: `2024-11-08 10:02:05,229` (UTC)."""
    seconds, millis = divmod(ms, 1000)
    return f"{_second_text(seconds)},{millis:03d}"


@functools.lru_cache(maxsize=4096)
def _second_text(seconds: int) -> str:
    return time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(seconds))


def _tps(partitions: Iterable[TopicPartition] | None) -> str:
    """Utils.join(partitions, ", ") over a sorted set, as the 3.x listener invoker prints them."""
    return ", ".join(str(tp) for tp in sorted(partitions or ()))


def _tp_list(partitions: Iterable[TopicPartition] | None) -> str:
    """A Java collection's toString: `[t-0, t-1]`."""
    return f"[{_tps(partitions)}]"


def _scala_option(value: str | None) -> str:
    return f"Some({value})" if value else "None"


def _client_host(client_id: str | None) -> str:
    digest = hashlib.blake2b((client_id or "").encode(), digest_size=3).digest()
    return "/10.{}.{}.{}".format(*digest)


def _broker_id(source: str | None) -> int:
    digits = "".join(ch for ch in (source or "") if ch.isdigit())
    return int(digits) if digits else 0


def _node(broker_id: int) -> str:
    """Node.toString of the coordinator as a client knows it."""
    return f"kafka-{broker_id}:9092 (id: {COORDINATOR_NODE_ID_BASE - broker_id} rack: null)"


@dataclass
class _Member:
    """What the broker knows about a classic member from its JoinGroup (MemberMetadata)."""

    client_id: str | None
    instance_id: str | None
    session_timeout_ms: str
    rebalance_timeout_ms: str
    protocol: str | None


@dataclass
class _Client:
    """A consumer process as its own log knows it."""

    protocol: str | None = None
    owned: set[TopicPartition] = field(default_factory=set)


class KafkaLogWriter:
    """One group's canonical events -> log entries (see the module docstring). `consumer_protocol`: the
    group uses KIP-848 (its broker lines come from the Java GroupMetadataManager). `topic_ids` (topic
    -> id) is needed for KIP-848 broker lines, which print topic ids."""

    def __init__(self, *, consumer_protocol: bool = False, topic_ids: Mapping[str, str] | None = None):
        self.consumer_protocol = consumer_protocol
        self.topic_ids = dict(topic_ids or {})
        self._members: dict[str, _Member] = {}
        self._leave_reasons: dict[str, str] = {}
        self._clients: dict[str, _Client] = {}
        self._epochs: dict[str, int] = {}
        self._held: list[Event] = []  # coordinator events whose line waits for the next event
        self._coordinator = 0  # broker id of the group's coordinator, as its events name it

    # -- driving -------------------------------------------------------------------------------
    def write(self, event: Event) -> list[LogLine]:
        """The entries for one event (and for any event held back before it), in log order."""
        out: list[LogLine] = []
        if self._held:
            first = self._held[0]
            if _is_timeout_removal(event) and _is_timeout_removal(first) and event.ts == first.ts:
                self._held.append(event)
                return out
            if event.event_type == E.REBALANCE_PREPARED.value and event.ts == first.ts:
                out.extend(self._render(event))
                out.extend(self.flush())
                return out
            out.extend(self.flush())
        if not self.consumer_protocol and (_is_timeout_removal(event) or _is_leave_removal(event)):
            self._held.append(event)
            return out
        out.extend(self._render(event))
        return out

    def write_all(self, events: Iterable[Event]) -> list[LogLine]:
        out: list[LogLine] = []
        for event in events:
            out.extend(self.write(event))
        out.extend(self.flush())
        return out

    def flush(self) -> list[LogLine]:
        """Entries still held back (call at the end of the group's events)."""
        held, self._held = self._held, []
        if not held:
            return []
        if _is_timeout_removal(held[0]):
            return self._timeout_removals(held)
        return [line for event in held for line in self._render(event)]

    def _render(self, event: Event) -> list[LogLine]:
        if event.is_coordinator:
            self._coordinator = _broker_id(event.source)
        table = (
            (_CONSUMER_BROKER if self.consumer_protocol else _CLASSIC_BROKER)
            if event.is_coordinator
            else (_CONSUMER_CLIENT if self.consumer_protocol else _CLASSIC_CLIENT)
        )
        render = table.get(event.event_type)
        return render(self, event) if render is not None else []

    # -- entries ---------------------------------------------------------------------------------
    def _broker(self, event: Event, message: str, *, level: str = "INFO", renders: bool = True) -> LogLine:
        broker_id = _broker_id(event.source)
        if self.consumer_protocol:
            prefix = (
                f"[GroupCoordinator id={broker_id} topic=__consumer_offsets "
                f"partition={partition_for(event.group_id)}] [GroupId {event.group_id}] "
            )
            logger = JAVA_METADATA_MANAGER
        elif event.event_type == E.GROUP_DEAD.value:
            prefix, logger = f"[GroupMetadataManager brokerId={broker_id}] ", SCALA_METADATA_MANAGER
        else:
            prefix, logger = f"[GroupCoordinator {broker_id}]: ", SCALA_COORDINATOR
        text = f"[{format_log_ts(event.ts)}] {level} {prefix}{message} ({logger})"
        return LogLine(event.ts, BROKER, text, (event.event_id,) if renders else ())

    def _client(
        self, event: Event, message: str, logger: str, *, level: str = "INFO", renders: bool = True
    ) -> LogLine:
        instance = f"instanceId={event.group_instance_id}, " if event.group_instance_id else ""
        prefix = f"[Consumer {instance}clientId={event.client_id}, groupId={event.group_id}] "
        text = f"[{format_log_ts(event.ts)}] {level} {prefix}{message} ({logger})"
        return LogLine(event.ts, CLIENT, text, (event.event_id,) if renders else ())

    def _offsets(self, event: Event) -> str:
        return f"(__consumer_offsets-{partition_for(event.group_id)})"

    # -- broker, classic (Scala GroupCoordinator 3.2-3.9) --------------------------------------------
    def _classic_join_received(self, event: Event) -> list[LogLine]:
        member_id = event.member_id or ""
        if member_id in self._members:
            return []  # a known member's JoinGroup is logged at DEBUG only
        attributes = event.attributes
        self._members[member_id] = _Member(
            event.client_id,
            event.group_instance_id,
            attributes.get("session_timeout_ms", "45000"),
            attributes.get("rebalance_timeout_ms", "300000"),
            event.protocol_name,
        )
        state = attributes.get("state", "Stable")
        if event.group_instance_id:
            message = (
                f"Static member with groupInstanceId={event.group_instance_id} and unknown member id joins group "
                f"{event.group_id} in {state} state. Created a new member id {member_id} for this member and "
                "add to the group."
            )
        else:  # KIP-394: the member is told its id and rejoins with it (that JoinGroup logs at DEBUG)
            message = (
                f"Dynamic member with unknown member id joins group {event.group_id} in {state} state. Created a "
                f"new member id {member_id} and request the member to rejoin with this id."
            )
        return [self._broker(event, message)]

    def _classic_prepared(self, event: Event) -> list[LogLine]:
        message = (
            f"Preparing to rebalance group {event.group_id} in state PreparingRebalance with old generation "
            f"{event.generation_id} {self._offsets(event)} (reason: {event.reason})"
        )
        return [self._broker(event, message)]

    def _classic_join_completed(self, event: Event) -> list[LogLine]:
        count = event.member_count if event.member_count is not None else len(event.members or ())
        message = (
            f"Stabilized group {event.group_id} generation {event.generation_id} {self._offsets(event)} "
            f"with {count} members"
        )
        return [self._broker(event, message)]

    def _classic_assignment_received(self, event: Event) -> list[LogLine]:
        static = event.attributes.get("static_member_count", "0")
        message = (
            f"Assignment received from leader {event.leader_id} for group {event.group_id} for generation "
            f"{event.generation_id}. The group has {event.member_count} members, {static} of which are static."
        )
        return [self._broker(event, message)]

    def _classic_member_removed(self, event: Event) -> list[LogLine]:
        member_id = event.member_id or ""
        if event.reason == RemovalReason.SESSION_TIMEOUT.value:
            message = f"Member {member_id} in group {event.group_id} has failed, removing it from the group"
            return [self._broker(event, message)]
        if event.reason != RemovalReason.LEAVE_GROUP.value:
            return []  # pending-sync removals are named in the rebalance reason; others are not logged
        known = self._members.get(member_id) or _Member(
            event.client_id,
            event.group_instance_id,
            event.attributes.get("session_timeout_ms", "45000"),
            "",
            None,
        )
        metadata = (
            f"MemberMetadata(memberId={member_id}, groupInstanceId={_scala_option(known.instance_id)}, "
            f"clientId={known.client_id}, clientHost={_client_host(known.client_id)}, "
            f"sessionTimeoutMs={known.session_timeout_ms}, rebalanceTimeoutMs={known.rebalance_timeout_ms or 300000}, "
            f"supportedProtocols=List({known.protocol or 'range'}))"
        )
        reason = self._leave_reasons.get(member_id, "not provided")
        message = f"Member {metadata} has left group {event.group_id} through explicit `LeaveGroup`; client reason: {reason}"
        return [self._broker(event, message)]

    def _timeout_removals(self, events: list[Event]) -> list[LogLine]:
        """GroupCoordinator.onCompleteJoin: one line names every dynamic member that did not rejoin."""
        first = events[0]
        ids = ", ".join(e.member_id or "" for e in events)
        message = f"Group {first.group_id} removed dynamic members who haven't joined: Set({ids})"
        line = self._broker(first, message)
        return [LogLine(line.ts, line.stream, line.text, tuple(e.event_id for e in events))]

    def _classic_static_replaced(self, event: Event) -> list[LogLine]:
        if event.member_id:
            old = self._members.get(event.attributes.get("old_member_id", ""))
            if old is not None:
                self._members[event.member_id] = old
        state = event.attributes.get("state", "Stable")
        message = (
            f"Static member with groupInstanceId={event.group_instance_id} and unknown member id joins group "
            f"{event.group_id} in {state} state. Replacing previously mapped member "
            f"{event.attributes.get('old_member_id')} with this groupInstanceId."
        )
        lines = [self._broker(event, message)]
        if state == "Stable":
            no_rebalance = (
                "Static member which joins during Stable stage and doesn't affect selectProtocol will not "
                "trigger rebalance."
            )
            lines.append(self._broker(event, no_rebalance, renders=False))
        return lines

    def _classic_group_empty(self, event: Event) -> list[LogLine]:
        message = f"Group {event.group_id} with generation {event.generation_id} is now empty {self._offsets(event)}"
        return [self._broker(event, message)]

    def _group_dead(self, event: Event) -> list[LogLine]:
        message = f"Group {event.group_id} transitioned to Dead in generation {event.generation_id}"
        return [self._broker(event, message)]

    def _group_loaded(self, event: Event) -> list[LogLine]:
        message = f"Loading group metadata for {event.group_id} with generation {event.generation_id}"
        return [self._broker(event, message)]

    def _group_unloaded(self, event: Event) -> list[LogLine]:
        message = f"Unloading group metadata for {event.group_id} with generation {event.generation_id}"
        return [self._broker(event, message)]

    # -- broker, consumer groups (Java GroupMetadataManager 3.9, KIP-848) -----------------------------
    def _topic_id(self, topic: str) -> str:
        return self.topic_ids.get(topic, topic)

    def _id_partitions(self, partitions: Iterable[TopicPartition] | None) -> str:
        return (
            "["
            + ", ".join(f"{self._topic_id(tp.topic)}-{tp.partition}" for tp in sorted(partitions or ()))
            + "]"
        )

    def _consumer_join_received(self, event: Event) -> list[LogLine]:
        if event.group_instance_id:
            message = (
                f"Static member {event.member_id} with instance id {event.group_instance_id} joins the consumer "
                "group using the consumer protocol."
            )
        else:
            message = f"Member {event.member_id} joins the consumer group using the consumer protocol."
        return [self._broker(event, message)]

    def _consumer_static_replaced(self, event: Event) -> list[LogLine]:
        message = (
            f"Static member with instance id {event.group_instance_id} re-joins the consumer group using the "
            f"consumer protocol. Created a new member {event.member_id} to replace the existing member "
            f"{event.attributes.get('old_member_id')}."
        )
        return [self._broker(event, message)]

    def _consumer_member_removed(self, event: Event) -> list[LogLine]:
        member_id = event.member_id
        if event.reason == RemovalReason.LEAVE_GROUP.value:
            if event.member_epoch == -2 and event.group_instance_id:
                message = (
                    f"Static Member {member_id} with instance id {event.group_instance_id} temporarily left the "
                    "consumer group."
                )
            elif event.group_instance_id:
                message = f"Static Member {member_id} with instance id {event.group_instance_id} left the consumer group."
            else:
                message = f"Member {member_id} left the consumer group."
        elif event.reason == RemovalReason.SESSION_TIMEOUT.value:
            message = f"Member {member_id} fenced from the group because the member session expired.."
        elif event.reason == RemovalReason.REBALANCE_TIMEOUT.value:
            epoch = self._epochs.get(member_id or "", 0)
            timeout = event.attributes.get("rebalance_timeout_ms", "300000")
            message = (
                f"Member {member_id} fenced from the group because it failed to transition from epoch {epoch} "
                f"within {timeout}ms."
            )
        else:
            return []
        return [self._broker(event, message)]

    def _epoch_bumped(self, event: Event) -> list[LogLine]:
        return [self._broker(event, f"Bumped group epoch to {event.group_epoch}.")]

    def _target_assignment(self, event: Event) -> list[LogLine]:
        members = []
        for member_id, partitions in sorted((event.assignment or {}).items()):
            by_topic: dict[str, list[int]] = {}
            for tp in sorted(partitions):
                by_topic.setdefault(self._topic_id(tp.topic), []).append(tp.partition)
            topics = ", ".join(f"{t}=[{', '.join(map(str, ps))}]" for t, ps in by_topic.items())
            members.append(f"{member_id}=MemberAssignment(partitions={{{topics}}})")
        compute_ms = len(event.assignment or {}) // 50  # the assignor's run time, as printed
        message = (
            f"Computed a new target assignment for epoch {event.assignment_epoch} with '{event.protocol_name}' "
            f"assignor in {compute_ms}ms: {{{', '.join(members)}}}."
        )
        return [self._broker(event, message)]

    def _member_epoch_updated(self, event: Event) -> list[LogLine]:
        if event.member_id and event.member_epoch is not None:
            self._epochs[event.member_id] = event.member_epoch
        attributes = event.attributes
        revoked = parse_partitions(attributes["revoked"].split(",")) if attributes.get("revoked") else ()
        message = (
            f"Member {event.member_id} new assignment state: epoch={event.member_epoch}, "
            f"previousEpoch={attributes.get('previous_epoch', event.member_epoch)}, "
            f"state={attributes.get('state', 'STABLE')}, assignedPartitions={self._id_partitions(event.partitions)} "
            f"and revokedPartitions={self._id_partitions(revoked)}."
        )
        return [self._broker(event, message)]

    def _subscription_metadata(self, event: Event) -> list[LogLine]:
        topics = [
            (key.removeprefix("topic."), value)
            for key, value in sorted(event.attributes.items())
            if key.startswith("topic.")
        ]
        if not topics:
            return []
        body = ", ".join(
            f"{t}=TopicMetadata(id={self._topic_id(t)}, name={t}, numPartitions={n}, partitionRacks={{}})"
            for t, n in topics
        )
        return [self._broker(event, f"Computed new subscription metadata: {{{body}}}.")]

    # -- client, classic protocol (ConsumerCoordinator 3.9) --------------------------------------------
    def _state(self, event: Event) -> _Client:
        return self._clients.setdefault(event.client_id or event.source or "", _Client())

    def _generation(self, event: Event, protocol: str | None) -> str:
        return (
            f"Generation{{generationId={event.generation_id}, memberId='{event.member_id or ''}', "
            f"protocol='{protocol}'}}"
        )

    def _join_requested(self, event: Event) -> list[LogLine]:
        return [self._client(event, f"Request joining group due to: {event.reason}", CONSUMER_COORDINATOR)]

    def _join_sent(self, event: Event) -> list[LogLine]:
        if not event.member_id:  # a new process (or one whose member id was reset) owns nothing
            self._state(event).owned.clear()
        return [self._client(event, "(Re-)joining group", CONSUMER_COORDINATOR)]

    def _join_response(self, event: Event) -> list[LogLine]:
        self._state(event).protocol = event.protocol_name
        message = f"Successfully joined group with generation {self._generation(event, event.protocol_name)}"
        return [self._client(event, message, CONSUMER_COORDINATOR)]

    def _assignment_computed(self, event: Event) -> list[LogLine]:
        body = ", ".join(
            f"{member}=Assignment(partitions={_tp_list(partitions)})"
            for member, partitions in (event.assignment or {}).items()
        )
        message = f"Finished assignment for group at generation {event.generation_id}: {{{body}}}"
        return [self._client(event, message, CONSUMER_COORDINATOR)]

    def _sync_response(self, event: Event) -> list[LogLine]:
        client = self._state(event)
        assigned: Partitions = event.partitions or ()
        synced = f"Successfully synced group in generation {self._generation(event, client.protocol)}"
        lines = [self._client(event, synced, CONSUMER_COORDINATOR)]
        if client.protocol == "cooperative-sticky":  # ConsumerCoordinator.onJoinComplete, COOPERATIVE only
            owned = client.owned
            block = (
                "Updating assignment with\n"
                f"\tAssigned partitions:                       {_tp_list(assigned)}\n"
                f"\tCurrent owned partitions:                  {_tp_list(owned)}\n"
                f"\tAdded partitions (assigned - owned):       {_tp_list(set(assigned) - owned)}\n"
                f"\tRevoked partitions (owned - assigned):     {_tp_list(owned - set(assigned))}\n"
            )
            lines.append(self._client(event, block, CONSUMER_COORDINATOR, renders=False))
        notify = f"Notifying assignor about the new Assignment(partitions={_tp_list(assigned)})"
        lines.append(self._client(event, notify, CONSUMER_COORDINATOR, renders=False))
        return lines

    def _revoked(self, event: Event) -> list[LogLine]:
        self._state(event).owned -= set(event.partitions or ())
        lines = []
        if self.consumer_protocol:  # the membership manager, then the callback on the application thread
            message = f"Revoking previously assigned partitions {_tp_list(event.partitions)}"
            lines.append(self._client(event, message, MEMBERSHIP_MANAGER, renders=False))
        message = f"Revoke previously assigned partitions {_tps(event.partitions)}"
        lines.append(self._client(event, message, LISTENER_INVOKER))
        return lines

    def _assigned(self, event: Event) -> list[LogLine]:
        self._state(event).owned |= set(event.partitions or ())
        return [
            self._client(
                event, f"Adding newly assigned partitions: {_tps(event.partitions)}", LISTENER_INVOKER
            )
        ]

    def _lost(self, event: Event) -> list[LogLine]:
        self._state(event).owned.clear()
        lines = []
        if not self.consumer_protocol:
            reset = (
                "Giving away all assigned partitions as lost since generation/memberID has been reset,"
                "indicating that consumer is in old state or no longer part of the group"
            )
            lines.append(self._client(event, reset, CONSUMER_COORDINATOR, renders=False))
        message = f"Lost previously assigned partitions {_tps(event.partitions)}"
        lines.append(self._client(event, message, LISTENER_INVOKER))
        return lines

    def _poll_timeout(self, event: Event) -> list[LogLine]:
        if self.consumer_protocol:
            return [self._client(event, "Consumer " + _POLL_TIMEOUT_ADVICE, HEARTBEAT_MANAGER, level="WARN")]
        lines = [self._client(event, "consumer " + _POLL_TIMEOUT_ADVICE, CONSUMER_COORDINATOR, level="WARN")]
        if event.group_instance_id:  # a static member sends no LeaveGroup (no leave_sent) but resets too
            lines.extend(self._reset_on_leave(event))
        return lines

    def _leave_sent(self, event: Event) -> list[LogLine]:
        if event.member_id:
            self._leave_reasons[event.member_id] = event.reason or "not provided"
        node = _node(self._coordinator_id(event))
        message = (
            f"Member {event.member_id} sending LeaveGroup request to coordinator {node} due to {event.reason}"
        )
        return [self._client(event, message, CONSUMER_COORDINATOR), *self._reset_on_leave(event)]

    def _reset_on_leave(self, event: Event) -> list[LogLine]:
        """AbstractCoordinator.maybeLeaveGroup ends with resetGenerationOnLeaveGroup, for static members
        too: the member id is dropped and a rejoin requested (a later poll() joins as a new member)."""
        return [
            self._client(event, f"{message} due to: {_LEAVING}", CONSUMER_COORDINATOR, renders=False)
            for message in ("Resetting generation and member id", "Request joining group")
        ]

    def _coordinator_id(self, event: Event) -> int:
        coordinator = event.attributes.get("coordinator_id")
        return int(coordinator) if coordinator and coordinator.isdigit() else self._coordinator

    def _discovered(self, event: Event) -> list[LogLine]:
        node = _node(self._coordinator_id(event))
        return [self._client(event, f"Discovered group coordinator {node}", CONSUMER_COORDINATOR)]

    def _unavailable(self, event: Event) -> list[LogLine]:
        node = _node(self._coordinator_id(event))
        cause = event.attributes.get("cause", "coordinator unavailable")
        message = (
            f"Group coordinator {node} is unavailable or invalid due to cause: {cause}. isDisconnected: false. "
            "Rediscovery will be attempted."
        )
        return [self._client(event, message, CONSUMER_COORDINATOR)]

    # -- client, consumer protocol (AsyncKafkaConsumer 3.9) -------------------------------------------
    def _state_changed(self, event: Event) -> list[LogLine]:
        attributes = event.attributes
        message = (
            f"Member {event.member_id} with epoch {event.member_epoch} transitioned from "
            f"{attributes.get('from_state')} to {attributes.get('to_state')}."
        )
        return [self._client(event, message, MEMBERSHIP_MANAGER, level="TRACE")]


def _is_timeout_removal(event: Event) -> bool:
    return (
        event.event_type == E.MEMBER_REMOVED.value and event.reason == RemovalReason.REBALANCE_TIMEOUT.value
    )


def _is_leave_removal(event: Event) -> bool:
    return event.event_type == E.MEMBER_REMOVED.value and event.reason == RemovalReason.LEAVE_GROUP.value


W = KafkaLogWriter
_CLASSIC_BROKER = {
    E.JOIN_RECEIVED.value: W._classic_join_received,
    E.REBALANCE_PREPARED.value: W._classic_prepared,
    E.JOIN_COMPLETED.value: W._classic_join_completed,
    E.ASSIGNMENT_RECEIVED.value: W._classic_assignment_received,
    E.MEMBER_REMOVED.value: W._classic_member_removed,
    E.STATIC_MEMBER_REPLACED.value: W._classic_static_replaced,
    E.GROUP_EMPTY.value: W._classic_group_empty,
    E.GROUP_DEAD.value: W._group_dead,
    E.GROUP_LOADED.value: W._group_loaded,
    E.GROUP_UNLOADED.value: W._group_unloaded,
}
_CONSUMER_BROKER = {
    E.JOIN_RECEIVED.value: W._consumer_join_received,
    E.STATIC_MEMBER_REPLACED.value: W._consumer_static_replaced,
    E.MEMBER_REMOVED.value: W._consumer_member_removed,
    E.GROUP_EPOCH_BUMPED.value: W._epoch_bumped,
    E.TARGET_ASSIGNMENT_COMPUTED.value: W._target_assignment,
    E.MEMBER_EPOCH_UPDATED.value: W._member_epoch_updated,
    E.TOPIC_METADATA_CHANGED.value: W._subscription_metadata,
}
_CLASSIC_CLIENT = {
    E.JOIN_REQUESTED.value: W._join_requested,
    E.JOIN_SENT.value: W._join_sent,
    E.JOIN_RESPONSE.value: W._join_response,
    E.ASSIGNMENT_COMPUTED.value: W._assignment_computed,
    E.SYNC_RESPONSE.value: W._sync_response,
    E.PARTITIONS_REVOKED.value: W._revoked,
    E.PARTITIONS_ASSIGNED.value: W._assigned,
    E.PARTITIONS_LOST.value: W._lost,
    E.POLL_TIMEOUT_EXPIRED.value: W._poll_timeout,
    E.LEAVE_SENT.value: W._leave_sent,
    E.COORDINATOR_DISCOVERED.value: W._discovered,
    E.COORDINATOR_UNAVAILABLE.value: W._unavailable,
}
_CONSUMER_CLIENT = {
    E.MEMBER_STATE_CHANGED.value: W._state_changed,
    E.PARTITIONS_REVOKED.value: W._revoked,
    E.PARTITIONS_ASSIGNED.value: W._assigned,
    E.PARTITIONS_LOST.value: W._lost,
    E.POLL_TIMEOUT_EXPIRED.value: W._poll_timeout,
}
