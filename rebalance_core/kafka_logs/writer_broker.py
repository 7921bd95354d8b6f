"""The broker's wording per era (used by `writer.KafkaLogWriter`; the eras are described there).

One class per era; a method per event type returns the entries for one event (none where the era logs
nothing at INFO), `fields` says what the text carries back per event type (as the parser reads it).
Sources, read at the tags named: Scala `GroupCoordinator` / `GroupMetadataManager` 0.10.0.0, 2.8.0,
3.9.0 (`core/src/main/scala/kafka/coordinator/...`); Java `GroupMetadataManager` (`group-coordinator`,
trunk of the 4.0 line: classic-group and consumer-group paths).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import replace
from typing import Any

from rebalance_core.events import Event, TopicPartition, parse_partitions
from rebalance_core.kafka_logs.writer_lines import (
    BROKER,
    LogLine,
    broker_id,
    client_host,
    format_log_ts,
    is_leave_removal,
    is_pending_sync_removal,
    is_timeout_removal,
    partition_for,
)
from rebalance_core.kafka_logs.writer_memory import GroupLogMemory, MemberRecord
from schemas.events import EventType, RemovalReason

E = EventType

SCALA_COORDINATOR_0_10 = "kafka.coordinator.GroupCoordinator"  # package without `.group` before 0.11
SCALA_COORDINATOR = "kafka.coordinator.group.GroupCoordinator"
SCALA_METADATA_MANAGER = "kafka.coordinator.group.GroupMetadataManager"
JAVA_METADATA_MANAGER = "org.apache.kafka.coordinator.group.GroupMetadataManager"
SCALA_GROUP_METADATA = "kafka.coordinator.group.GroupMetadata"  # logs with no logIdent (no prefix)
JAVA_CLASSIC_GROUP = "org.apache.kafka.coordinator.group.classic.ClassicGroup"

# The simulator's (canonical) rebalance reasons, as the 3.x Scala coordinator builds them; each era
# words them its own way (`ClassicBroker.reason`). Anything else is written as it is.
_REASONS: tuple[tuple[str, re.Pattern], ...] = tuple(
    (kind, re.compile(pattern))
    for kind, pattern in (
        ("add", r"Adding new member (?P<member>\S+) with group instance ?id (?P<instance>\S+)"),
        ("leader", r"[Ll]eader (?P<member>\S+) re-joining group during (?P<state>\w+)"),
        (
            "static_update",
            r"Updating metadata for static member (?P<member>\S+) with instance id (?P<instance>\S+)",
        ),
        ("update", r"Updating metadata for member (?P<member>\S+) during (?P<state>\w+)"),
        ("joining", r"Member (?P<member>\S+) (?:is )?joining group during (?P<state>\w+)"),
        ("leave", r"[Rr]emoving member (?P<member>\S+) on LeaveGroup"),
        ("expired", r"[Rr]emoving member (?P<member>\S+) on heartbeat expiration\.?"),
        ("pending_sync", r"Removing (?P<members>.+) on pending sync request expiration"),
    )
)
_CLIENT_REASON = "; client reason: "
# the client's short reasons (AbstractCoordinator.requestRejoin's shortReason, sent in JoinGroup v8+)
_SHORT_REASONS = {"subscription changed": "subscription has changed"}


def parse_reason(reason: str | None) -> tuple[str, dict[str, str]]:
    """(kind, parts) of a canonical rebalance reason; kind "other" keeps the text in parts["text"]."""
    text = reason or ""
    head, sep, client = text.partition(_CLIENT_REASON)
    for kind, pattern in _REASONS:
        m = pattern.fullmatch(head)
        if m:
            parts = {k: v for k, v in m.groupdict().items() if v is not None}
            if sep:
                parts["client"] = client
            return kind, parts
    return "other", {"text": text}


def _ids(text: str) -> list[str]:
    """Member ids of a printed collection: `Set(a, b)`, `[a, b]`, `['a', 'b']`."""
    body = re.sub(r"^(?:\w*Set|List)?[(\[{]|[)\]}]$", "", text.strip())
    return [item.strip().strip("'\"") for item in body.split(",") if item.strip()]


def _instance_name(text: str | None) -> str | None:
    if not text or text in ("None", "null"):
        return None
    m = re.fullmatch(r"Some\((.*)\)", text)
    return m.group(1) if m else text


def scala_option(value: str | None) -> str:
    return f"Some({value})" if value else "None"


def _client_reason(parts: dict[str, str]) -> str:
    """JoinGroupRequest.joinReason: the client's reason, `not provided` for clients that send none."""
    client = parts.get("client") or "not provided"
    return _SHORT_REASONS.get(client, client)


class BrokerWording:
    """What every broker wording shares: dispatch by event type and the carried fields."""

    fields: dict[EventType, tuple[str, ...]] = {}
    deletes_empty_groups = False  # 0.10.0: an emptied group is deleted (generations restart)

    def render(self, w: GroupLogMemory, event: Event) -> list[LogLine]:
        method: Callable | None = getattr(self, event.event_type, None)
        return method(w, event) if method is not None else []

    def holds(self, event: Event) -> bool:
        """Whether the event's line waits for the next event (same-instant reordering, shared lines)."""
        return False

    def timeout_removals(self, w: GroupLogMemory, events: list[Event]) -> list[LogLine]:
        return []

    def carried(self, w: GroupLogMemory, event: Event) -> tuple[str, dict[str, Any]]:
        names = self.fields.get(EventType(event.event_type), ())
        return event.event_type, {name: getattr(event, name) for name in names}


# ------------------------------------------------------------------------------------ classic, 3.x
_CLASSIC_FIELDS: dict[EventType, tuple[str, ...]] = {
    E.JOIN_RECEIVED: ("member_id", "group_instance_id"),
    E.REBALANCE_PREPARED: ("generation_id", "reason"),
    E.JOIN_COMPLETED: ("generation_id", "member_count"),
    E.ASSIGNMENT_RECEIVED: ("generation_id", "leader_id", "member_count"),
    E.MEMBER_REMOVED: ("member_id", "reason"),
    E.STATIC_MEMBER_REPLACED: ("group_instance_id",),  # the 3.x Scala line names the old member only
    E.LEADER_ELECTED: ("leader_id",),
    E.GROUP_EMPTY: ("generation_id",),
    E.GROUP_DEAD: ("generation_id",),
    E.GROUP_LOADED: ("generation_id",),
    E.GROUP_UNLOADED: ("generation_id",),
}


class ClassicBroker(BrokerWording):
    """Scala GroupCoordinator 3.9 (3.2+ wording: client reasons, MemberMetadata in the leave line)."""

    fields = _CLASSIC_FIELDS
    logger = SCALA_COORDINATOR
    # the LeaveGroup's "Preparing" line is logged before its "has left" line (3.x order)
    preparing_before_left = True

    # -- entries ---------------------------------------------------------------------------------
    def line(self, event: Event, message: str, *, logger: str | None = None, renders: bool = True) -> LogLine:
        prefix = f"[GroupCoordinator {broker_id(event.source)}]: "
        text = f"[{format_log_ts(event.ts)}] INFO {prefix}{message} ({logger or self.logger})"
        return LogLine(event.ts, BROKER, text, (event.event_id,) if renders else ())

    def metadata_manager_line(self, event: Event, message: str) -> LogLine:
        prefix = f"[GroupMetadataManager brokerId={broker_id(event.source)}] "
        text = f"[{format_log_ts(event.ts)}] INFO {prefix}{message} ({SCALA_METADATA_MANAGER})"
        return LogLine(event.ts, BROKER, text, (event.event_id,))

    def offsets(self, event: Event) -> str:
        return f"(__consumer_offsets-{partition_for(event.group_id)})"

    def holds(self, event: Event) -> bool:
        return (
            is_timeout_removal(event)
            or (self.preparing_before_left and is_leave_removal(event))
            or is_pending_sync_removal(event)
        )

    # -- reasons -----------------------------------------------------------------------------------
    def reason(self, event: Event) -> str:
        kind, parts = parse_reason(event.reason)
        render = getattr(self, f"reason_{kind}", None)
        return render(parts) if render is not None else parts.get("text", "")

    def reason_add(self, p: dict[str, str]) -> str:
        instance = scala_option(_instance_name(p["instance"]))
        return f"Adding new member {p['member']} with group instance id {instance}; client reason: {_client_reason(p)}"

    def reason_leader(self, p: dict[str, str]) -> str:
        return (
            f"Leader {p['member']} re-joining group during {p['state']}; client reason: {_client_reason(p)}"
        )

    def reason_update(self, p: dict[str, str]) -> str:
        return f"Updating metadata for member {p['member']} during {p['state']}; client reason: {_client_reason(p)}"

    def reason_joining(self, p: dict[str, str]) -> str:
        return f"Member {p['member']} joining group during {p['state']}; client reason: {_client_reason(p)}"

    def reason_static_update(self, p: dict[str, str]) -> str:
        instance = _instance_name(p["instance"])
        return (
            f"Updating metadata for static member {p['member']} with instance id {instance}; "
            f"client reason: {_client_reason(p)}"
        )

    def reason_leave(self, p: dict[str, str]) -> str:
        return f"Removing member {p['member']} on LeaveGroup; client reason: {_client_reason(p)}"

    def reason_expired(self, p: dict[str, str]) -> str:
        return f"removing member {p['member']} on heartbeat expiration"

    def reason_pending_sync(self, p: dict[str, str]) -> str:
        return f"Removing Set({', '.join(_ids(p['members']))}) on pending sync request expiration"

    # -- event types -------------------------------------------------------------------------------
    def join_received(self, w: GroupLogMemory, event: Event) -> list[LogLine]:
        member_id = event.member_id or ""
        if member_id in w.members:
            return []  # a known member's JoinGroup is logged at DEBUG only
        state = event.attributes.get("state", "Stable")
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
        return [self.line(event, message)]

    def rebalance_prepared(self, w: GroupLogMemory, event: Event) -> list[LogLine]:
        message = (
            f"Preparing to rebalance group {event.group_id} in state PreparingRebalance with old generation "
            f"{event.generation_id} {self.offsets(event)} (reason: {self.reason(event)})"
        )
        return [self.line(event, message)]

    def join_completed(self, w: GroupLogMemory, event: Event) -> list[LogLine]:
        message = (
            f"Stabilized group {event.group_id} generation {event.generation_id} {self.offsets(event)} "
            f"with {_member_count(event)} members"
        )
        return [self.line(event, message)]

    def leader_elected(self, w: GroupLogMemory, event: Event) -> list[LogLine]:
        """GroupMetadata.maybeElectNewJoinedLeader (2.3-3.9): the new leader printed as its MemberMetadata."""
        previous = event.attributes.get("previous_leader_id", "")
        instance = _member_record(w, event, previous).instance_id
        message = (
            f"Group leader [member.id: {previous}, group.instance.id: {scala_option(instance)}] failed to join "
            f"before rebalance timeout, while new leader {self.member_metadata(w, event, event.leader_id or '')} "
            "was elected."
        )
        text = f"[{format_log_ts(event.ts)}] INFO {message} ({SCALA_GROUP_METADATA})"
        return [LogLine(event.ts, BROKER, text, (event.event_id,))]

    def member_metadata(self, w: GroupLogMemory, event: Event, member_id: str) -> str:
        """MemberMetadata.toString."""
        known = _member_record(w, event, member_id)
        return (
            f"MemberMetadata(memberId={member_id}, groupInstanceId={scala_option(known.instance_id)}, "
            f"clientId={known.client_id}, clientHost={client_host(known.client_id)}, "
            f"sessionTimeoutMs={known.session_timeout_ms}, rebalanceTimeoutMs={known.rebalance_timeout_ms or 300000}, "
            f"supportedProtocols=List({known.protocol or 'range'}), )"
        )

    def assignment_received(self, w: GroupLogMemory, event: Event) -> list[LogLine]:
        static = event.attributes.get("static_member_count", "0")
        message = (
            f"Assignment received from leader {_leader(w, event)} for group {event.group_id} for generation "
            f"{event.generation_id}. The group has {_synced_count(w, event)} members, {static} of which are static."
        )
        return [self.line(event, message)]

    def member_removed(self, w: GroupLogMemory, event: Event) -> list[LogLine]:
        member_id = event.member_id or ""
        if event.reason == RemovalReason.SESSION_TIMEOUT.value and event.attributes.get("pending") == "true":
            # a KIP-394 pending member that never rejoined with its id (Scala GroupCoordinator.onExpireHeartbeat,
            # Java GroupMetadataManager: the same wording), not a member that "has failed"
            message = (
                f"Pending member {member_id} in group {event.group_id} has been removed after session timeout "
                "expiration."
            )
            return [self.line(event, message)]
        if event.reason == RemovalReason.SESSION_TIMEOUT.value:
            return [self.line(event, self.failed_message(event))]
        if event.reason != RemovalReason.LEAVE_GROUP.value:
            return []  # pending-sync removals are named in the rebalance reason; others are not logged
        return [self.line(event, self.left_message(w, event, _member_record(w, event, member_id)))]

    def failed_message(self, event: Event) -> str:
        return f"Member {event.member_id} in group {event.group_id} has failed, removing it from the group"

    def left_message(self, w: GroupLogMemory, event: Event, known: MemberRecord) -> str:
        member_id = event.member_id
        metadata = (
            f"MemberMetadata(memberId={member_id}, groupInstanceId={scala_option(known.instance_id)}, "
            f"clientId={known.client_id}, clientHost={client_host(known.client_id)}, "
            f"sessionTimeoutMs={known.session_timeout_ms}, rebalanceTimeoutMs={known.rebalance_timeout_ms or 300000}, "
            f"supportedProtocols=List({known.protocol or 'range'}))"
        )
        reason = w.leave_reasons.get(member_id or "", "not provided")
        return f"Member {metadata} has left group {event.group_id} through explicit `LeaveGroup`; client reason: {reason}"

    def timeout_removals(self, w: GroupLogMemory, events: list[Event]) -> list[LogLine]:
        """onCompleteJoin: one line names every dynamic member that did not rejoin."""
        first = events[0]
        message = f"Group {first.group_id} removed dynamic members who haven't joined: {self.id_set(e.member_id or '' for e in events)}"
        return [replace(self.line(first, message), event_ids=tuple(e.event_id for e in events))]

    def id_set(self, ids: Iterable[str]) -> str:
        return f"Set({', '.join(ids)})"

    def static_member_replaced(self, w: GroupLogMemory, event: Event) -> list[LogLine]:
        state = event.attributes.get("state", "Stable")
        message = (
            f"Static member with groupInstanceId={event.group_instance_id} and unknown member id joins group "
            f"{event.group_id} in {state} state. Replacing previously mapped member "
            f"{event.attributes.get('old_member_id')} with this groupInstanceId."
        )
        lines = [self.line(event, message)]
        if state == "Stable":
            lines.append(self.line(event, self.no_rebalance_message, renders=False))
        return lines

    no_rebalance_message = "Static member which joins during Stable stage and doesn't affect selectProtocol will not trigger rebalance."

    def group_empty(self, w: GroupLogMemory, event: Event) -> list[LogLine]:
        message = (
            f"Group {event.group_id} with generation {event.generation_id} is now empty {self.offsets(event)}"
        )
        return [self.line(event, message)]

    def group_dead(self, w: GroupLogMemory, event: Event) -> list[LogLine]:
        message = f"Group {event.group_id} transitioned to Dead in generation {event.generation_id}"
        return [self.metadata_manager_line(event, message)]

    def group_loaded(self, w: GroupLogMemory, event: Event) -> list[LogLine]:
        message = f"Loading group metadata for {event.group_id} with generation {event.generation_id}"
        return [self.line(event, message)]

    def group_unloaded(self, w: GroupLogMemory, event: Event) -> list[LogLine]:
        message = f"Unloading group metadata for {event.group_id} with generation {event.generation_id}"
        return [self.line(event, message)]

    # -- what the text carries ----------------------------------------------------------------------
    def carried(self, w: GroupLogMemory, event: Event) -> tuple[str, dict[str, Any]]:
        kind, values = super().carried(w, event)
        if "reason" in values and event.event_type == E.REBALANCE_PREPARED.value:
            values["reason"] = self.reason(event)
        return kind, values


# ------------------------------------------------------------------------------------ classic, 2.x
class ClassicBroker2(ClassicBroker):
    """Scala GroupCoordinator 2.8: reasons without the client's, "Member[…] … has left" before its
    Preparing line, static members' own join lines (2.5-2.8); a new dynamic member's JoinGroups (KIP-394)
    log at DEBUG, so only the Preparing reason ("Adding new member …") names it."""

    preparing_before_left = False
    fields = {
        **_CLASSIC_FIELDS,
        E.ASSIGNMENT_RECEIVED: ("generation_id", "member_count"),  # the leader is named from 3.0
        E.STATIC_MEMBER_REPLACED: ("group_instance_id", "member_id"),
    }

    def reason_add(self, p: dict[str, str]) -> str:
        return f"Adding new member {p['member']} with group instance id {scala_option(_instance_name(p['instance']))}"

    def reason_leader(self, p: dict[str, str]) -> str:
        return f"leader {p['member']} re-joining group during {p['state']}"

    def reason_update(self, p: dict[str, str]) -> str:
        return f"Updating metadata for member {p['member']} during {p['state']}"

    def reason_joining(self, p: dict[str, str]) -> str:
        return f"Member {p['member']} joining group during {p['state']}"

    def reason_static_update(self, p: dict[str, str]) -> str:
        return f"Updating metadata for static member {p['member']} with instance id {_instance_name(p['instance'])}"

    def reason_leave(self, p: dict[str, str]) -> str:
        return f"removing member {p['member']} on LeaveGroup"

    def join_received(self, w: GroupLogMemory, event: Event) -> list[LogLine]:
        if event.member_id in w.members or not event.group_instance_id:
            return []
        message = (
            f"Adding new static member {event.group_instance_id} to group {event.group_id} with member id "
            f"{event.member_id}."
        )
        return [self.line(event, message)]

    def assignment_received(self, w: GroupLogMemory, event: Event) -> list[LogLine]:
        static = event.attributes.get("static_member_count", "0")
        message = (
            f"Assignment received from leader for group {event.group_id} for generation {event.generation_id}. "
            f"The group has {_synced_count(w, event)} members, {static} of which are static."
        )
        return [self.line(event, message)]

    def left_message(self, w: GroupLogMemory, event: Event, known: MemberRecord) -> str:
        return (
            f"Member[group.instance.id {scala_option(known.instance_id)}, member.id {event.member_id}] in group "
            f"{event.group_id} has left, removing it from the group"
        )

    def static_member_replaced(self, w: GroupLogMemory, event: Event) -> list[LogLine]:
        message = (
            f"Static member {event.group_instance_id} of group {event.group_id} with unknown member id rejoins, "
            f"assigning new member id {event.member_id}, while old member id "
            f"{event.attributes.get('old_member_id')} will be removed."
        )
        lines = [self.line(event, message)]
        if event.attributes.get("state", "Stable") == "Stable":
            lines.append(self.line(event, self.no_rebalance_message, renders=False))
        return lines


# ----------------------------------------------------------------------------------- classic, 0.10
class ClassicBroker010(ClassicBroker):
    """Scala GroupCoordinator 0.10.0 (`kafka.coordinator`): only the rebalance's start and end, the
    leader's SyncGroup and load/unload at INFO; no reasons, member ids or counts. onCompleteJoin of an
    emptied group deletes it ("is dead and removed", printing the generation it had): the next group of
    that name starts at generation 0, so later generations print lower than the simulated ones
    (`KafkaLogWriter.renumbering`)."""

    logger = SCALA_COORDINATOR_0_10
    deletes_empty_groups = True
    preparing_before_left = False
    fields = {
        E.REBALANCE_PREPARED: ("generation_id",),
        E.JOIN_COMPLETED: ("generation_id",),
        E.ASSIGNMENT_RECEIVED: ("generation_id",),
        E.GROUP_DEAD: ("generation_id",),
        E.GROUP_LOADED: ("generation_id",),
        E.GROUP_UNLOADED: ("generation_id",),
    }

    def holds(self, event: Event) -> bool:
        return False

    def join_received(self, w: GroupLogMemory, event: Event) -> list[LogLine]:
        return []

    def leader_elected(self, w: GroupLogMemory, event: Event) -> list[LogLine]:
        return []  # maybeElectNewJoinedLeader came with KIP-345 (2.3)

    def static_member_replaced(self, w: GroupLogMemory, event: Event) -> list[LogLine]:
        return []  # static membership (KIP-345) came with 2.3

    def member_removed(self, w: GroupLogMemory, event: Event) -> list[LogLine]:
        return []  # "Member … has failed" is TRACE; leaves are not logged

    def rebalance_prepared(self, w: GroupLogMemory, event: Event) -> list[LogLine]:
        message = (
            f"Preparing to restabilize group {event.group_id} with old generation "
            f"{w.printed_generation(event.generation_id)}"
        )
        return [self.line(event, message)]

    def join_completed(self, w: GroupLogMemory, event: Event) -> list[LogLine]:
        message = f"Stabilized group {event.group_id} generation {w.printed_generation(event.generation_id)}"
        return [self.line(event, message)]

    def assignment_received(self, w: GroupLogMemory, event: Event) -> list[LogLine]:
        message = (
            f"Assignment received from leader for group {event.group_id} for generation "
            f"{w.printed_generation(event.generation_id)}"
        )
        return [self.line(event, message)]

    def group_empty(self, w: GroupLogMemory, event: Event) -> list[LogLine]:
        # no initNextGeneration for an emptied group: it dies with the generation it had
        generation = w.printed_generation((event.generation_id or 1) - 1)
        return [self.line(event, f"Group {event.group_id} generation {generation} is dead and removed")]

    def group_dead(self, w: GroupLogMemory, event: Event) -> list[LogLine]:
        return []  # offset expiry deleted groups silently in 0.10.0

    def carried(self, w: GroupLogMemory, event: Event) -> tuple[str, dict[str, Any]]:
        base = w.generation_base  # (called as the event is written)
        if event.event_type == E.GROUP_EMPTY.value:
            return E.GROUP_DEAD.value, {"generation_id": (event.generation_id or 1) - 1 - base}
        kind, values = BrokerWording.carried(self, w, event)
        if values.get("generation_id") is not None:
            values["generation_id"] -= base
        return kind, values


# ------------------------------------------------------------------------------------ classic, 4.x
class ClassicBroker4(ClassicBroker):
    """The Java GroupMetadataManager's classic-group lines (4.0): the same events as the 3.x Scala
    coordinator, Java's punctuation and Option/Set printing, "has left" (with a `[Group G] ` tag) before
    its Preparing line, and KIP-394's second JoinGroup at INFO ("Pending dynamic member … joins")."""

    logger = JAVA_METADATA_MANAGER
    preparing_before_left = False

    def line(self, event: Event, message: str, *, logger: str | None = None, renders: bool = True) -> LogLine:
        prefix = (
            f"[GroupCoordinator id={broker_id(event.source)} topic=__consumer_offsets "
            f"partition={partition_for(event.group_id)}] "
        )
        text = f"[{format_log_ts(event.ts)}] INFO {prefix}{message} ({logger or self.logger})"
        return LogLine(event.ts, BROKER, text, (event.event_id,) if renders else ())

    def reason_add(self, p: dict[str, str]) -> str:
        instance = _instance_name(p["instance"]) or "null"
        return f"Adding new member {p['member']} with group instance id {instance}; client reason: {_client_reason(p)}"

    def reason_joining(self, p: dict[str, str]) -> str:
        return (
            f"Member {p['member']} is joining group during {p['state']}; client reason: {_client_reason(p)}"
        )

    def reason_leave(self, p: dict[str, str]) -> str:
        return f"explicit `LeaveGroup` request for ({p['member']}) members."

    def reason_expired(self, p: dict[str, str]) -> str:
        return f"removing member {p['member']} on heartbeat expiration."

    def reason_pending_sync(self, p: dict[str, str]) -> str:
        return f"Removing [{', '.join(_ids(p['members']))}] on pending sync request expiration"

    def id_set(self, ids: Iterable[str]) -> str:
        return f"[{', '.join(ids)}]"

    def leader_elected(self, w: GroupLogMemory, event: Event) -> list[LogLine]:
        """ClassicGroup.maybeElectNewJoinedLeader: the new leader printed as its ClassicGroupMember."""
        previous = event.attributes.get("previous_leader_id", "")
        instance = _member_record(w, event, previous).instance_id or "None"
        leader = event.leader_id or ""
        known = _member_record(w, event, leader)
        member = (
            f"ClassicGroupMember(memberId='{leader}', groupInstanceId='{known.instance_id or ''}', "
            f"clientId='{known.client_id}', clientHost='{client_host(known.client_id)}', "
            f"rebalanceTimeoutMs={known.rebalance_timeout_ms or 300000}, sessionTimeoutMs={known.session_timeout_ms}, "
            f"protocolType='consumer', supportedProtocols=[{known.protocol or 'range'}])"
        )
        message = (
            f"Group leader [memberId: {previous}, groupInstanceId: {instance}] failed to join before the rebalance "
            f"timeout. Member {member} was elected as the new leader."
        )
        return [self.line(event, message, logger=JAVA_CLASSIC_GROUP)]

    def join_received(self, w: GroupLogMemory, event: Event) -> list[LogLine]:
        member_id = event.member_id or ""
        state = event.attributes.get("state", "Stable")
        if member_id in w.pending and event.attributes.get("pending") != "true":
            message = (
                f"Pending dynamic member with id {member_id} joins group {event.group_id} in {state} state. "
                "Adding to the group now."
            )
        elif member_id in w.members:
            return []
        elif event.group_instance_id:
            message = (
                f"Static member with groupInstanceId={event.group_instance_id} and unknown member id joins group "
                f"{event.group_id} in {state} state. Created a new member id {member_id} for this member and "
                "added to the group."
            )
        else:
            message = (
                f"Dynamic member with unknown member id joins group {event.group_id} in {state} state. Created a "
                f"new member id {member_id} and requesting the member to rejoin with this id."
            )
        return [self.line(event, message)]

    def rebalance_prepared(self, w: GroupLogMemory, event: Event) -> list[LogLine]:
        message = (
            f"Preparing to rebalance group {event.group_id} in state PreparingRebalance with old generation "
            f"{event.generation_id} (reason: {self.reason(event)})."
        )
        return [self.line(event, message)]

    def join_completed(self, w: GroupLogMemory, event: Event) -> list[LogLine]:
        message = f"Stabilized group {event.group_id} generation {event.generation_id} with {_member_count(event)} members."
        return [self.line(event, message)]

    def failed_message(self, event: Event) -> str:
        return f"Member {event.member_id} in group {event.group_id} has failed, removing it from the group."

    def left_message(self, w: GroupLogMemory, event: Event, known: MemberRecord) -> str:
        reason = w.leave_reasons.get(event.member_id or "", "not provided")
        return (
            f"[Group {event.group_id}] Member {event.member_id} has left group through explicit `LeaveGroup` "
            f"request; client reason: {reason}"
        )

    no_rebalance_message = (
        "Static member which joins during Stable stage and doesn't affect the selected protocol will not trigger "
        "a rebalance."
    )

    def group_empty(self, w: GroupLogMemory, event: Event) -> list[LogLine]:
        return [
            self.line(event, f"Group {event.group_id} with generation {event.generation_id} is now empty.")
        ]

    def group_dead(self, w: GroupLogMemory, event: Event) -> list[LogLine]:
        return []

    def group_loaded(self, w: GroupLogMemory, event: Event) -> list[LogLine]:
        count = event.member_count if event.member_count is not None else len(event.members or ())
        return [self.line(event, f"Loaded classic group {event.group_id} with {count} members.")]

    def group_unloaded(self, w: GroupLogMemory, event: Event) -> list[LogLine]:
        message = f"[GroupId={event.group_id}] Unloading group metadata for generation {event.generation_id}."
        return [self.line(event, message)]


# --------------------------------------------------------------------------- consumer groups, 3.x
class ConsumerGroupBroker(BrokerWording):
    """The Java GroupMetadataManager's consumer-group (KIP-848) lines, 3.9."""

    fields = {
        E.JOIN_RECEIVED: ("member_id", "group_instance_id"),
        E.MEMBER_REMOVED: ("member_id", "reason"),
        E.STATIC_MEMBER_REPLACED: ("group_instance_id", "member_id"),
        E.TOPIC_METADATA_CHANGED: (),  # attributes topic.<name>
        E.GROUP_EPOCH_BUMPED: ("group_epoch",),
        E.TARGET_ASSIGNMENT_COMPUTED: ("assignment_epoch", "assignment", "protocol_name"),
        E.MEMBER_EPOCH_UPDATED: ("member_id", "member_epoch", "partitions"),
    }

    def line(self, event: Event, message: str) -> LogLine:
        prefix = (
            f"[GroupCoordinator id={broker_id(event.source)} topic=__consumer_offsets "
            f"partition={partition_for(event.group_id)}] [GroupId {event.group_id}] "
        )
        text = f"[{format_log_ts(event.ts)}] INFO {prefix}{message} ({JAVA_METADATA_MANAGER})"
        return LogLine(event.ts, BROKER, text, (event.event_id,))

    def topic_id(self, w: GroupLogMemory, topic: str) -> str:
        return w.topic_ids.get(topic, topic)

    def id_partitions(self, w: GroupLogMemory, partitions: Iterable[TopicPartition] | None) -> str:
        return (
            "["
            + ", ".join(f"{self.topic_id(w, tp.topic)}-{tp.partition}" for tp in sorted(partitions or ()))
            + "]"
        )

    def join_received(self, w: GroupLogMemory, event: Event) -> list[LogLine]:
        if event.group_instance_id:
            message = (
                f"Static member {event.member_id} with instance id {event.group_instance_id} joins the consumer "
                "group using the consumer protocol."
            )
        else:
            message = f"Member {event.member_id} joins the consumer group using the consumer protocol."
        return [self.line(event, message)]

    def static_member_replaced(self, w: GroupLogMemory, event: Event) -> list[LogLine]:
        message = (
            f"Static member with instance id {event.group_instance_id} re-joins the consumer group using the "
            f"consumer protocol. Created a new member {event.member_id} to replace the existing member "
            f"{event.attributes.get('old_member_id')}."
        )
        return [self.line(event, message)]

    def member_removed(self, w: GroupLogMemory, event: Event) -> list[LogLine]:
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
            epoch = w.epochs.get(member_id or "", 0)
            timeout = event.attributes.get("rebalance_timeout_ms", "300000")
            message = (
                f"Member {member_id} fenced from the group because it failed to transition from epoch {epoch} "
                f"within {timeout}ms."
            )
        else:
            return []
        return [self.line(event, message)]

    def group_epoch_bumped(self, w: GroupLogMemory, event: Event) -> list[LogLine]:
        return [self.line(event, f"Bumped group epoch to {event.group_epoch}.")]

    def target_map(self, w: GroupLogMemory, event: Event) -> str:
        members = []
        for member_id, partitions in sorted((event.assignment or {}).items()):
            by_topic: dict[str, list[int]] = {}
            for tp in sorted(partitions):
                by_topic.setdefault(self.topic_id(w, tp.topic), []).append(tp.partition)
            topics = ", ".join(f"{t}=[{', '.join(map(str, ps))}]" for t, ps in by_topic.items())
            members.append(f"{member_id}=MemberAssignment(partitions={{{topics}}})")
        return "{" + ", ".join(members) + "}"

    def target_assignment_computed(self, w: GroupLogMemory, event: Event) -> list[LogLine]:
        message = (
            f"Computed a new target assignment for epoch {event.assignment_epoch} with '{event.protocol_name}' "
            f"assignor in {_compute_ms(event)}ms: {self.target_map(w, event)}."
        )
        return [self.line(event, message)]

    def member_epoch_updated(self, w: GroupLogMemory, event: Event) -> list[LogLine]:
        attributes = event.attributes
        revoked = parse_partitions(attributes["revoked"].split(",")) if attributes.get("revoked") else ()
        message = (
            f"Member {event.member_id} new assignment state: epoch={event.member_epoch}, "
            f"previousEpoch={attributes.get('previous_epoch', event.member_epoch)}, "
            f"state={attributes.get('state', 'STABLE')}, assignedPartitions={self.id_partitions(w, event.partitions)} "
            f"and revokedPartitions={self.id_partitions(w, revoked)}."
        )
        return [self.line(event, message)]

    def topic_metadata_changed(self, w: GroupLogMemory, event: Event) -> list[LogLine]:
        topics = [
            (key.removeprefix("topic."), value)
            for key, value in sorted(event.attributes.items())
            if key.startswith("topic.")
        ]
        if not topics:
            return []
        body = ", ".join(
            f"{t}=TopicMetadata(id={self.topic_id(w, t)}, name={t}, numPartitions={n}, partitionRacks={{}})"
            for t, n in topics
        )
        return [self.line(event, f"Computed new subscription metadata: {{{body}}}.")]


class ConsumerGroupBroker4(ConsumerGroupBroker):
    """4.0: the target assignment's map and each member's "new assignment state" are DEBUG
    (GroupMetadataManager.updateTargetAssignment / maybeReconcile): the broker names who is in the group
    and the epochs, not who owns what."""

    fields = {
        **ConsumerGroupBroker.fields,
        E.TARGET_ASSIGNMENT_COMPUTED: ("assignment_epoch", "protocol_name"),
    }

    def target_assignment_computed(self, w: GroupLogMemory, event: Event) -> list[LogLine]:
        message = (
            f"Computed a new target assignment for epoch {event.assignment_epoch} with '{event.protocol_name}' "
            f"assignor in {_compute_ms(event)}ms."
        )
        return [self.line(event, message)]

    def member_epoch_updated(self, w: GroupLogMemory, event: Event) -> list[LogLine]:
        return []


# ---------------------------------------------------------------------------------------- helpers
def _member_count(event: Event) -> int:
    return event.member_count if event.member_count is not None else len(event.members or ())


def _synced_count(w: GroupLogMemory, event: Event) -> int:
    """The group's size at the leader's SyncGroup: the event's, else its assignment's, else its join phase's."""
    if event.member_count is not None:
        return event.member_count
    if event.assignment:
        return len(event.assignment)
    return w.joined.get(event.generation_id, (0, None))[0]


def _leader(w: GroupLogMemory, event: Event) -> str | None:
    return event.leader_id or w.joined.get(event.generation_id, (0, None))[1]


def _compute_ms(event: Event) -> int:
    return len(event.assignment or {}) // 50  # the assignor's run time, as printed


def _member_record(w: GroupLogMemory, event: Event, member_id: str) -> MemberRecord:
    return w.members.get(member_id) or MemberRecord(
        event.client_id,
        event.group_instance_id,
        event.attributes.get("session_timeout_ms", "45000"),
        "",
        None,
    )


_CLASSIC = {"0.10": ClassicBroker010, "2.x": ClassicBroker2, "3.x": ClassicBroker, "4.x": ClassicBroker4}
_CONSUMER_GROUPS = {"3.x": ConsumerGroupBroker, "4.x": ConsumerGroupBroker4}


def wording(era: str, consumer_protocol: bool) -> BrokerWording:
    return (_CONSUMER_GROUPS if consumer_protocol else _CLASSIC)[era]()
