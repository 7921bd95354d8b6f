"""The Java consumer's wording per era (used by `writer.KafkaLogWriter`; the eras are described there).

One class per era, a method per event type (none where the era logs nothing at INFO), `fields` = what
the text carries back per event type as the parser reads it (besides the prefix's client and instance
ids). Sources, read at the tags named: `AbstractCoordinator`, `ConsumerCoordinator`,
`ConsumerRebalanceListenerInvoker` (clients/.../consumer/internals) at 2.8.0 and 3.9.0 (trunk of the 4.0
line logs the same), the KIP-848 `ConsumerMembershipManager` / `HeartbeatRequestManager` of 3.9.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

from rebalance_core.events import REVOKE_REJOIN_REASON, Event, Partitions, TopicPartition, parse_partitions
from rebalance_core.kafka_logs.writer_lines import CLIENT, LogLine, coordinator_node, format_log_ts
from schemas.events import EventType

if TYPE_CHECKING:
    from rebalance_core.kafka_logs.writer_memory import GroupLogMemory

E = EventType
_CLIENTS = "org.apache.kafka.clients.consumer.internals."
ABSTRACT_COORDINATOR = _CLIENTS + "AbstractCoordinator"
CONSUMER_COORDINATOR = _CLIENTS + "ConsumerCoordinator"
LISTENER_INVOKER = _CLIENTS + "ConsumerRebalanceListenerInvoker"
MEMBERSHIP_MANAGER = _CLIENTS + "ConsumerMembershipManager"
HEARTBEAT_MANAGER = _CLIENTS + "HeartbeatRequestManager"

_LEAVING = "consumer pro-actively leaving the group"  # AbstractCoordinator.resetGenerationOnLeaveGroup
_POLL_TIMEOUT = "consumer poll timeout has expired"
_POLL_TIMEOUT_ADVICE = (
    "This means the time between subsequent calls to poll() was longer than the "
    "configured max.poll.interval.ms, which typically implies that the poll loop is spending too much time "
    "processing messages. You can address this either by increasing max.poll.interval.ms or by reducing the "
    "maximum size of batches returned in poll() with max.poll.records."
)


def tps(partitions: Iterable[TopicPartition] | None) -> str:
    """Utils.join(partitions, ", ") over a sorted set, as the 2.4-3.9 callbacks print them."""
    return ", ".join(str(tp) for tp in sorted(partitions or ()))


def tp_list(partitions: Iterable[TopicPartition] | None) -> str:
    """A Java collection's toString: `[t-0, t-1]`."""
    return f"[{tps(partitions)}]"


class ClientWording:
    fields: dict[EventType, tuple[str, ...]] = {}
    # group.protocol as the config dump prints it (KIP-848's switch, a consumer config from 3.7; None: older)
    group_protocol: str | None = "classic"
    # AbstractConfig.logAll's logger: up to 3.9 an instance field, getLogger(getClass()), so the config class's
    # own (ConsumerConfig); from 4.0 one static getLogger(AbstractConfig.class) (KAFKA-17185, not in 3.9)
    config_logger = "org.apache.kafka.clients.consumer.ConsumerConfig"

    def render(self, w: GroupLogMemory, event: Event) -> list[LogLine]:
        method: Callable | None = getattr(self, event.event_type, None)
        return method(w, event) if method is not None else []

    def line(
        self, event: Event, message: str, logger: str, *, level: str = "INFO", renders: bool = True
    ) -> LogLine:
        instance = f"instanceId={event.group_instance_id}, " if event.group_instance_id else ""
        prefix = f"[Consumer {instance}clientId={event.client_id}, groupId={event.group_id}] "
        text = f"[{format_log_ts(event.ts)}] {level} {prefix}{message} ({logger})"
        return LogLine(event.ts, CLIENT, text, (event.event_id,) if renders else ())

    def carried(self, w: GroupLogMemory, event: Event) -> tuple[str, dict[str, Any]]:
        names = self.fields.get(EventType(event.event_type), ())
        values = {name: getattr(event, name) for name in names}
        if "reason" in values:
            values["reason"] = self.logged_reason(w, event)
        return event.event_type, values

    def logged_reason(self, w: GroupLogMemory, event: Event) -> str | None:
        return event.reason

    def client_config(self, w: GroupLogMemory, event: Event) -> list[LogLine]:
        """AbstractConfig.logAll at the consumer's construction: `ConsumerConfig values: ` then one
        `\tkey = value` line per setting, keys sorted, under AbstractConfig.logAll's logger (`config_logger`;
        no `[Consumer …]` prefix); the settings a group's membership runs with (3.7+ adds group.protocol). A
        KIP-848 client prints heartbeat.interval.ms and session.timeout.ms too (every ConsumerConfig key): the
        classic protocol's, unused by it (the broker's group.consumer.* settings rule its membership)."""
        attributes = event.attributes or {}
        settings = {
            "client.id": event.client_id or "",
            "group.id": event.group_id,
            "group.instance.id": event.group_instance_id or "null",
            "heartbeat.interval.ms": attributes.get("heartbeat_interval_ms", "3000"),
            "max.poll.interval.ms": attributes.get("max_poll_interval_ms", "300000"),
            "session.timeout.ms": attributes.get("session_timeout_ms", "45000"),
        }
        if self.group_protocol:
            settings["group.protocol"] = self.group_protocol
        classes = [_ASSIGNOR_CLASSES.get(a) for a in (attributes.get("assignors") or "").split(",") if a]
        if classes and None not in classes:
            settings["partition.assignment.strategy"] = (
                "[" + ", ".join(f"class org.apache.kafka.clients.consumer.{c}" for c in classes) + "]"
            )
        body = "\n".join(f"\t{key} = {value}" for key, value in sorted(settings.items()))
        text = f"[{format_log_ts(event.ts)}] INFO ConsumerConfig values: \n{body} ({self.config_logger})"
        return [LogLine(event.ts, CLIENT, text, (event.event_id,))]

    # the rebalance callbacks' partition lists
    def callback_partitions(self, partitions: Partitions | None) -> str:
        return tps(partitions)


# ------------------------------------------------------------------------------------ classic, 3.x
_CLASSIC_FIELDS: dict[EventType, tuple[str, ...]] = {
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
    E.CLIENT_CONFIG: ("client_id", "group_instance_id", "protocol_name"),
}
# an assignor's protocol name -> its class (partition.assignment.strategy as the config dump prints it)
_ASSIGNOR_CLASSES = {
    "range": "RangeAssignor",
    "roundrobin": "RoundRobinAssignor",
    "sticky": "StickyAssignor",
    "cooperative-sticky": "CooperativeStickyAssignor",
}


class ClassicClient(ClientWording):
    """The Java consumer 3.9 (AbstractCoordinator's lines under the ConsumerCoordinator logger from 3.0,
    the callbacks under ConsumerRebalanceListenerInvoker from 3.7)."""

    fields = _CLASSIC_FIELDS
    coordinator_logger = CONSUMER_COORDINATOR  # AbstractCoordinator's lines
    callback_logger = LISTENER_INVOKER

    def generation(self, event: Event, protocol: str | None) -> str:
        return (
            f"Generation{{generationId={event.generation_id}, memberId='{event.member_id or ''}', "
            f"protocol='{protocol}'}}"
        )

    # -- reasons (AbstractCoordinator.requestRejoin logs the full reason) ----------------------------
    def logged_reason(self, w: GroupLogMemory, event: Event) -> str | None:
        reason = event.reason or ""
        if event.event_type == E.LEAVE_SENT.value:
            return f"{_POLL_TIMEOUT}." if reason == _POLL_TIMEOUT else reason
        client = w.client_state(event)
        if reason == REVOKE_REJOIN_REASON:
            return f"need to revoke partitions {tp_list(client.last_revoked)} as indicated by the current assignment and re-join"
        if reason == "subscription changed":
            new = w.next_subscription.get(event.event_id, client.joined_subscription)
            return (
                f"subscription has changed from {_topic_list(client.joined_subscription)} at the beginning of the "
                f"rebalance to {_topic_list(new)}"
            )
        if reason == "cached metadata has changed":
            return (
                f"cached metadata has changed from {_snapshot(client.assignment_counts)} at the beginning of the "
                f"rebalance to {_snapshot(w.topics)}"
            )
        return reason

    # -- event types -------------------------------------------------------------------------------
    def join_requested(self, w: GroupLogMemory, event: Event) -> list[LogLine]:
        message = f"Request joining group due to: {self.logged_reason(w, event)}"
        return [self.line(event, message, self.coordinator_logger)]

    def join_sent(self, w: GroupLogMemory, event: Event) -> list[LogLine]:
        return [self.line(event, "(Re-)joining group", self.coordinator_logger)]

    def join_response(self, w: GroupLogMemory, event: Event) -> list[LogLine]:
        message = f"Successfully joined group with generation {self.generation(event, event.protocol_name)}"
        return [self.line(event, message, self.coordinator_logger)]

    def assignment_computed(self, w: GroupLogMemory, event: Event) -> list[LogLine]:
        body = ", ".join(
            f"{member}=Assignment(partitions={tp_list(partitions)})"
            for member, partitions in (event.assignment or {}).items()
        )
        message = f"Finished assignment for group at generation {event.generation_id}: {{{body}}}"
        return [self.line(event, message, CONSUMER_COORDINATOR)]

    def sync_response(self, w: GroupLogMemory, event: Event) -> list[LogLine]:
        client = w.client_state(event)
        assigned: Partitions = event.partitions or ()
        synced = f"Successfully synced group in generation {self.generation(event, client.protocol)}"
        lines = [self.line(event, synced, self.coordinator_logger)]
        if client.protocol == "cooperative-sticky":  # ConsumerCoordinator.onJoinComplete, COOPERATIVE only
            owned = client.owned
            block = (
                "Updating assignment with\n"
                f"\tAssigned partitions:                       {tp_list(assigned)}\n"
                f"\tCurrent owned partitions:                  {tp_list(owned)}\n"
                f"\tAdded partitions (assigned - owned):       {tp_list(set(assigned) - owned)}\n"
                f"\tRevoked partitions (owned - assigned):     {tp_list(owned - set(assigned))}\n"
            )
            lines.append(self.line(event, block, CONSUMER_COORDINATOR, renders=False))
        notify = f"Notifying assignor about the new Assignment(partitions={tp_list(assigned)})"
        lines.append(self.line(event, notify, CONSUMER_COORDINATOR, renders=False))
        return lines

    def partitions_revoked(self, w: GroupLogMemory, event: Event) -> list[LogLine]:
        message = f"Revoke previously assigned partitions {self.callback_partitions(event.partitions)}"
        return [self.line(event, message, self.callback_logger)]

    def partitions_assigned(self, w: GroupLogMemory, event: Event) -> list[LogLine]:
        message = f"Adding newly assigned partitions: {self.callback_partitions(event.partitions)}"
        return [self.line(event, message, self.callback_logger)]

    lost_context = (
        "Giving away all assigned partitions as lost since generation/memberID has been reset,"
        "indicating that consumer is in old state or no longer part of the group"
    )

    def partitions_lost(self, w: GroupLogMemory, event: Event) -> list[LogLine]:
        message = f"Lost previously assigned partitions {self.callback_partitions(event.partitions)}"
        return [
            self.line(event, self.lost_context, CONSUMER_COORDINATOR, renders=False),
            self.line(event, message, self.callback_logger),
        ]

    def poll_timeout_expired(self, w: GroupLogMemory, event: Event) -> list[LogLine]:
        message = f"{_POLL_TIMEOUT}. {_POLL_TIMEOUT_ADVICE}"
        lines = [self.line(event, message, self.coordinator_logger, level="WARN")]
        if event.group_instance_id:  # a static member sends no LeaveGroup (no leave_sent) but resets too
            lines.extend(self.reset_on_leave(event))
        return lines

    def leave_sent(self, w: GroupLogMemory, event: Event) -> list[LogLine]:
        node = coordinator_node(_coordinator_id(w, event))
        message = (
            f"Member {event.member_id} sending LeaveGroup request to coordinator {node} due to "
            f"{self.logged_reason(w, event)}"
        )
        return [self.line(event, message, self.coordinator_logger), *self.reset_on_leave(event)]

    def reset_on_leave(self, event: Event) -> list[LogLine]:
        """AbstractCoordinator.maybeLeaveGroup ends with resetGenerationOnLeaveGroup, for static members
        too: the member id is dropped and a rejoin requested (a later poll() joins as a new member)."""
        return [
            self.line(event, f"{message} due to: {_LEAVING}", self.coordinator_logger, renders=False)
            for message in ("Resetting generation and member id", "Request joining group")
        ]

    def coordinator_discovered(self, w: GroupLogMemory, event: Event) -> list[LogLine]:
        node = coordinator_node(_coordinator_id(w, event))
        return [self.line(event, f"Discovered group coordinator {node}", self.coordinator_logger)]

    unavailable_separator = ". "  # "… due to cause: C. isDisconnected: …" (3.3+)

    def coordinator_unavailable(self, w: GroupLogMemory, event: Event) -> list[LogLine]:
        node = coordinator_node(_coordinator_id(w, event))
        cause = event.attributes.get("cause", "coordinator unavailable")
        message = (
            f"Group coordinator {node} is unavailable or invalid due to cause: {cause}{self.unavailable_separator}"
            "isDisconnected: false. Rediscovery will be attempted."
        )
        return [self.line(event, message, self.coordinator_logger)]


# ------------------------------------------------------------------------------------ classic, 2.x
class ClassicClient2(ClassicClient):
    """The Java consumer 2.8: AbstractCoordinator logs under its own name; the heartbeat's
    REBALANCE_IN_PROGRESS is "Attempt to heartbeat failed since group is rebalancing" (INFO 2.0-2.8), a
    cooperative member's rejoin "Need to revoke partitions … and re-join the group", a subscription or
    metadata change "Requesting to re-join the group and trigger rebalance since …"; no "Request joining
    group due to" (3.0), the generation resets and KIP-394's MEMBER_ID_REQUIRED are DEBUG, the poll
    timeout shows only as the LeaveGroup's reason (a static member's not at all)."""

    group_protocol = None  # no group.protocol before 3.7

    coordinator_logger = ABSTRACT_COORDINATOR
    callback_logger = CONSUMER_COORDINATOR
    fields = {
        **_CLASSIC_FIELDS,
        E.HEARTBEAT_REBALANCING: ("member_id",),
        E.POLL_TIMEOUT_EXPIRED: (),
    }
    lost_context = (
        "Giving away all assigned partitions as lost since generation has been reset,"
        "indicating that consumer is no longer part of the group"
    )
    unavailable_separator = "."  # "… due to cause: C.isDisconnected: …" (2.7-3.2)

    def logged_reason(self, w: GroupLogMemory, event: Event) -> str | None:
        reason = event.reason or ""
        if event.event_type == E.LEAVE_SENT.value:
            return f"{_POLL_TIMEOUT}. {_POLL_TIMEOUT_ADVICE}" if reason == _POLL_TIMEOUT else reason
        client = w.client_state(event)
        if reason == REVOKE_REJOIN_REASON:
            return f"Need to revoke partitions {tp_list(client.last_revoked)} and re-join the group"
        if reason == "subscription changed":
            new = w.next_subscription.get(event.event_id, client.joined_subscription)
            return f"subscription has changed from {_topic_list(client.joined_subscription)} to {_topic_list(new)}"
        if reason == "cached metadata has changed":
            return (
                f"assignment metadata has changed from {_snapshot(client.assignment_counts)} to "
                f"{_snapshot(w.topics)}"
            )
        return None  # not logged at INFO

    def join_requested(self, w: GroupLogMemory, event: Event) -> list[LogLine]:
        reason = self.logged_reason(w, event)
        if reason is None:
            return []
        if event.reason == REVOKE_REJOIN_REASON:
            message = reason
        else:
            message = f"Requesting to re-join the group and trigger rebalance since the {reason}"
        return [self.line(event, message, CONSUMER_COORDINATOR)]

    def heartbeat_rebalancing(self, w: GroupLogMemory, event: Event) -> list[LogLine]:
        return [
            self.line(
                event, "Attempt to heartbeat failed since group is rebalancing", self.coordinator_logger
            )
        ]

    def poll_timeout_expired(self, w: GroupLogMemory, event: Event) -> list[LogLine]:
        return []

    def reset_on_leave(self, event: Event) -> list[LogLine]:
        return []  # resetGenerationOnLeaveGroup logs at DEBUG in 2.x


# ------------------------------------------------------------------------------------ classic, 4.x
class ClassicClient4(ClassicClient):
    """3.9's wording (trunk of the 4.0 line logs the same) with the callbacks' partition lists in
    brackets, as 4.1-era clients print them (TEMPLATES.md, observed); the config dump under AbstractConfig's
    own logger (KAFKA-17185: AbstractConfig declares one static logger from 4.0)."""

    config_logger = "org.apache.kafka.common.config.AbstractConfig"

    def callback_partitions(self, partitions: Partitions | None) -> str:
        return tp_list(partitions)


# --------------------------------------------------------------------------- KIP-848 client, 3.x
class ConsumerClient(ClientWording):
    """The KIP-848 consumer (AsyncKafkaConsumer) 3.9: state transitions (TRACE), the start of each
    reconciliation (INFO, AbstractMembershipManager.maybeReconcile), the membership manager's "Revoking"
    before the listener invoker's callbacks, the heartbeat manager's poll timeout."""

    fields = {
        E.SYNC_RESPONSE: ("member_id", "partitions"),
        E.PARTITIONS_REVOKED: ("member_id", "partitions"),
        E.PARTITIONS_ASSIGNED: ("member_id", "partitions"),
        E.PARTITIONS_LOST: ("partitions",),
        E.POLL_TIMEOUT_EXPIRED: ("member_id",),
        E.MEMBER_STATE_CHANGED: ("member_id", "member_epoch"),
        E.CLIENT_CONFIG: ("client_id", "group_instance_id"),
    }
    group_protocol = "consumer"
    transition_level = "TRACE"

    def member_state_changed(self, w: GroupLogMemory, event: Event) -> list[LogLine]:
        attributes = event.attributes
        message = (
            f"Member {event.member_id} with epoch {event.member_epoch} transitioned from "
            f"{attributes.get('from_state')} to {attributes.get('to_state')}."
        )
        return [self.line(event, message, MEMBERSHIP_MANAGER, level=self.transition_level)]

    def sync_response(self, w: GroupLogMemory, event: Event) -> list[LogLine]:
        """The reconciliation's start: the member's new target assignment and what it owns (3.9's argument
        order; 3.8's MembershipManagerImpl swapped the member id and the local epoch)."""
        attributes = event.attributes or {}
        assigned = event.partitions or ()

        def listed(name: str) -> str:
            return tp_list(parse_partitions([tp for tp in attributes.get(name, "").split(",") if tp]))

        block = (
            f"Reconciling assignment with local epoch {attributes.get('local_epoch', 0)}\n"
            f"\tMember:                                    {event.member_id}\n"
            f"\tAssigned partitions:                       {tp_list(assigned)}\n"
            f"\tCurrent owned partitions:                  {listed('owned')}\n"
            f"\tAdded partitions (assigned - owned):       {listed('added')}\n"
            f"\tRevoked partitions (owned - assigned):     {listed('revoked')}\n"
        )
        return [self.line(event, block, MEMBERSHIP_MANAGER)]

    def partitions_revoked(self, w: GroupLogMemory, event: Event) -> list[LogLine]:
        revoking = f"Revoking previously assigned partitions {tp_list(event.partitions)}"
        message = f"Revoke previously assigned partitions {self.callback_partitions(event.partitions)}"
        return [
            self.line(event, revoking, MEMBERSHIP_MANAGER, renders=False),
            self.line(event, message, LISTENER_INVOKER),
        ]

    def partitions_assigned(self, w: GroupLogMemory, event: Event) -> list[LogLine]:
        message = f"Adding newly assigned partitions: {self.callback_partitions(event.partitions)}"
        return [self.line(event, message, LISTENER_INVOKER)]

    def partitions_lost(self, w: GroupLogMemory, event: Event) -> list[LogLine]:
        message = f"Lost previously assigned partitions {self.callback_partitions(event.partitions)}"
        return [self.line(event, message, LISTENER_INVOKER)]

    def poll_timeout_expired(self, w: GroupLogMemory, event: Event) -> list[LogLine]:
        message = f"Consumer poll timeout has expired. {_POLL_TIMEOUT_ADVICE}"
        return [self.line(event, message, HEARTBEAT_MANAGER, level="WARN")]


class ConsumerClient4(ConsumerClient):
    """4.x: the state transitions at INFO, bracketed callback lists (observed in 4.1-era clients)."""

    transition_level = "INFO"
    config_logger = "org.apache.kafka.common.config.AbstractConfig"  # KAFKA-17185 (4.0)

    def callback_partitions(self, partitions: Partitions | None) -> str:
        return tp_list(partitions)


# ---------------------------------------------------------------------------------------- helpers
def _coordinator_id(w: GroupLogMemory, event: Event) -> int:
    coordinator = event.attributes.get("coordinator_id")
    return int(coordinator) if coordinator and coordinator.isdigit() else w.coordinator


def _topic_list(topics: Iterable[str]) -> str:
    return f"[{', '.join(sorted(t for t in topics if t))}]"


def _snapshot(counts: dict[str, int]) -> str:
    """ConsumerCoordinator.MetadataSnapshot, shown by partition count per topic."""
    return "{" + ", ".join(f"{t}={n}" for t, n in sorted(counts.items())) + "}"


_CLASSIC = {"2.x": ClassicClient2, "3.x": ClassicClient, "4.x": ClassicClient4}
_CONSUMER = {"3.x": ConsumerClient, "4.x": ConsumerClient4}


def wording(era: str, consumer_protocol: bool) -> ClientWording:
    return (_CONSUMER if consumer_protocol else _CLASSIC)[era]()
