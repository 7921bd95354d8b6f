"""The canonical rebalance event: one schema for the simulator, the log parsers, the protocol core
and the Spark job. Version history is at the bottom of docs/events.md.

A canonical event is one thing that one side of the group protocol did or saw, at one instant:
the coordinator (broker) or a member (consumer / Connect worker / Streams thread). Both sides of the
same rebalance may be present (broker log + client logs) or only one.
"""

from __future__ import annotations

from enum import Enum, StrEnum

from schemas.fields import (
    ASSIGNMENT,
    ATTRIBUTES,
    INT,
    LONG,
    PARTITIONS,
    STRING,
    STRINGS,
    TIMESTAMP,
    Column,
    arrow_schema,
    json_schema,
    spark_schema,
)

SCHEMA_VERSION = 1


class Side(str, Enum):
    COORDINATOR = "coordinator"
    MEMBER = "member"


class EventType(StrEnum):
    """Event types, named after what happened. `side` says who saw it. Field use per type is in
    docs/events.md; the table below is the short form. A StrEnum: a member equals, hashes and formats as
    its value, so members and the raw strings of an `event_type` column mix freely."""

    # ---- coordinator side (classic protocol: JoinGroup / SyncGroup / Heartbeat / LeaveGroup) -------
    JOIN_RECEIVED = "join_received"  # member_id, group_instance_id, client_id, reason, attributes.state
    REBALANCE_PREPARED = (
        "rebalance_prepared"  # generation_id = OLD generation, reason (-> PreparingRebalance)
    )
    JOIN_COMPLETED = (
        "join_completed"  # "Stabilized group": generation_id = new, leader_id, members/member_count
    )
    ASSIGNMENT_RECEIVED = (
        "assignment_received"  # leader's SyncGroup: generation_id, leader_id, [assignment]; -> Stable
    )
    GROUP_STABLE = "group_stable"  # explicit Stable transition where a source logs it
    # the leader did not rejoin by the join phase's end; another joined member leads (maybeElectNewJoinedLeader):
    # leader_id (new), attributes.previous_leader_id; just before that round's join_completed
    LEADER_ELECTED = "leader_elected"
    MEMBER_REMOVED = "member_removed"  # member_id, reason in RemovalReason
    STATIC_MEMBER_REPLACED = (
        "static_member_replaced"  # group_instance_id, member_id(new), attributes.old_member_id
    )
    GROUP_EMPTY = "group_empty"  # generation_id (the new, empty generation)
    GROUP_DEAD = "group_dead"  # generation_id; the group is deleted, generations restart at 0
    GROUP_LOADED = "group_loaded"  # coordinator took the group over (generation_id)
    GROUP_UNLOADED = "group_unloaded"  # coordinator gave it up (generation_id)
    TOPIC_METADATA_CHANGED = "topic_metadata_changed"  # attributes: topic -> partition count
    # broker-wide: the broker now leads / no longer leads __consumer_offsets-P (GroupCoordinator
    # onElection / onResignation); the line names no group: group_id is the partition's name
    # (`__consumer_offsets-P`), attributes offsets_partition, coordinator_epoch. Not replayed per group:
    # rebalance_core.coordinator_moves maps P to its groups.
    COORDINATOR_ELECTED = "coordinator_elected"
    COORDINATOR_RESIGNED = "coordinator_resigned"
    # ---- coordinator side, KIP-848 consumer protocol (no generations; epochs) ---------------------
    GROUP_EPOCH_BUMPED = "group_epoch_bumped"  # group_epoch
    TARGET_ASSIGNMENT_COMPUTED = "target_assignment_computed"  # assignment_epoch, assignment, protocol_name
    MEMBER_EPOCH_UPDATED = "member_epoch_updated"  # member_id, member_epoch, partitions, attributes.state

    # ---- member side ------------------------------------------------------------------------------
    JOIN_REQUESTED = (
        "join_requested"  # the member decided to (re)join: reason ("Request joining group due to")
    )
    JOIN_SENT = "join_sent"  # "(Re-)joining group"
    JOIN_RESPONSE = "join_response"  # "Successfully joined group": generation_id, member_id, protocol_name
    ASSIGNMENT_COMPUTED = "assignment_computed"  # leader only: generation_id, assignment (all members)
    SYNC_RESPONSE = "sync_response"  # "Successfully synced group": generation_id, [partitions = all assigned]
    PARTITIONS_REVOKED = "partitions_revoked"  # partitions
    PARTITIONS_ASSIGNED = "partitions_assigned"  # partitions newly added (cooperative) or all (eager)
    PARTITIONS_LOST = "partitions_lost"  # partitions
    HEARTBEAT_REBALANCING = "heartbeat_rebalancing"  # heartbeat answered REBALANCE_IN_PROGRESS
    POLL_TIMEOUT_EXPIRED = "poll_timeout_expired"  # max.poll.interval.ms exceeded; a LeaveGroup follows
    LEAVE_SENT = "leave_sent"  # reason
    COORDINATOR_DISCOVERED = "coordinator_discovered"  # attributes.coordinator
    COORDINATOR_UNAVAILABLE = "coordinator_unavailable"  # attributes.coordinator
    # the client's group settings as its config dump at startup states them ("ConsumerConfig values:",
    # Connect "DistributedConfig values:"): client_id, group_instance_id, protocol_type, protocol_name (the
    # preferred assignor / Connect protocol), attributes session_timeout_ms, heartbeat_interval_ms,
    # max_poll_interval_ms, rebalance_timeout_ms, assignors, rebalance_protocol, group_protocol, ...
    CLIENT_CONFIG = "client_config"
    MEMBER_STATE_CHANGED = (
        "member_state_changed"  # KIP-848 client: attributes.from_state/to_state, member_epoch
    )


class RemovalReason(str, Enum):
    """Why the coordinator removed a member (the `reason` of MEMBER_REMOVED)."""

    SESSION_TIMEOUT = "session_timeout"  # heartbeat expiration (AbstractCoordinator session.timeout.ms)
    REBALANCE_TIMEOUT = "rebalance_timeout"  # did not rejoin within the rebalance timeout
    LEAVE_GROUP = "leave_group"  # explicit LeaveGroup
    FENCED_STATIC = "fenced_static"  # static instance id taken over by a newer member (KIP-345)
    PENDING_SYNC_TIMEOUT = "pending_sync_timeout"  # did not SyncGroup in time (KIP-559 era)


COORDINATOR_EVENTS = frozenset(
    {
        EventType.JOIN_RECEIVED,
        EventType.REBALANCE_PREPARED,
        EventType.JOIN_COMPLETED,
        EventType.ASSIGNMENT_RECEIVED,
        EventType.GROUP_STABLE,
        EventType.LEADER_ELECTED,
        EventType.MEMBER_REMOVED,
        EventType.STATIC_MEMBER_REPLACED,
        EventType.GROUP_EMPTY,
        EventType.GROUP_DEAD,
        EventType.GROUP_LOADED,
        EventType.GROUP_UNLOADED,
        EventType.TOPIC_METADATA_CHANGED,
        EventType.COORDINATOR_ELECTED,
        EventType.COORDINATOR_RESIGNED,
        EventType.GROUP_EPOCH_BUMPED,
        EventType.TARGET_ASSIGNMENT_COMPUTED,
        EventType.MEMBER_EPOCH_UPDATED,
    }
)
EVENT_TYPES = frozenset(e.value for e in EventType)
# about no single group (a broker's __consumer_offsets partition): not replayed per group
BROKER_WIDE_EVENT_TYPES = frozenset(
    {EventType.COORDINATOR_ELECTED.value, EventType.COORDINATOR_RESIGNED.value}
)

EVENT_COLUMNS: tuple[Column, ...] = (
    Column("event_id", STRING, True, "Unique id; reruns and duplicates are detected by it"),
    Column("ts", TIMESTAMP, True, "When it happened, UTC"),
    Column("cluster", STRING, True, "Kafka cluster name (configured or from the path)"),
    Column("group_id", STRING, True, "Consumer group / Connect group id"),
    Column("source", STRING, False, "Who logged it: broker id, client id or host"),
    Column("side", STRING, True, "coordinator | member"),
    Column("event_type", STRING, True, "One of EventType"),
    Column("member_id", STRING),
    Column("group_instance_id", STRING, False, "Static membership id (KIP-345)"),
    Column("client_id", STRING),
    Column("generation_id", INT, False, "Classic generation (old generation for rebalance_prepared)"),
    Column("protocol_type", STRING, False, "consumer | connect | ... (classic protocol type)"),
    Column("protocol_name", STRING, False, "Assignor / selected protocol: range, cooperative-sticky, ..."),
    Column("leader_id", STRING),
    Column("reason", STRING),
    Column("partitions", PARTITIONS, False, "Partitions the event is about"),
    Column("subscription", STRINGS, False, "Subscribed topics"),
    Column("members", STRINGS, False, "Member ids of a generation, where known"),
    Column("member_count", INT, False, "Member count of a generation, where only the count is known"),
    Column("assignment", ASSIGNMENT, False, "member_id -> partitions (leader's full assignment)"),
    Column("error", STRING),
    Column("group_epoch", INT, False, "KIP-848 group epoch"),
    Column("member_epoch", INT, False, "KIP-848 member epoch"),
    Column("assignment_epoch", INT, False, "KIP-848 target assignment epoch"),
    Column("attributes", ATTRIBUTES, False, "Free key/value details (state, timeouts, delays, ...)"),
    Column("raw", STRING, False, "Raw log text it came from"),
    Column("file", STRING, False, "Source file"),
    Column("line", LONG, False, "Line number in the source file (1-based) or sequence number"),
)
EVENT_COLUMN_NAMES = [c.name for c in EVENT_COLUMNS]
REQUIRED_EVENT_COLUMNS = [c.name for c in EVENT_COLUMNS if c.required]


def event_spark_schema():
    return spark_schema(EVENT_COLUMNS)


def event_arrow_schema():
    return arrow_schema(EVENT_COLUMNS)


def event_json_schema() -> dict:
    schema = json_schema(
        EVENT_COLUMNS,
        title="rebalance-replay canonical event",
        schema_id=f"https://rebalance-replay/schemas/event-v{SCHEMA_VERSION}.json",
        extra={"x-schema-version": SCHEMA_VERSION},
    )
    schema["properties"]["event_type"]["enum"] = sorted(EVENT_TYPES)
    schema["properties"]["side"]["enum"] = [s.value for s in Side]
    return schema
