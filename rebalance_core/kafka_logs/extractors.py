"""Field extraction a regex's named groups cannot express, one function per structured message.

An extractor receives the fields already taken from the row's named groups (`x_*` groups are its raw
inputs), the whole message text and the topic-id -> name map, and returns the events of the entry as
`(event_type, fields)` pairs; the first pair is the row's own event (its type may be None to keep the
row's). Raises ValueError on text it cannot read (-> quarantine).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any

from rebalance_core.assignors.protocols import COOPERATIVE_PROTOCOLS
from rebalance_core.events import classic_member_owner
from rebalance_core.kafka_logs import values
from rebalance_core.rebalance_reasons import split_client_reason
from schemas.events import EventType, RemovalReason

Fields = dict[str, Any]
Extracted = list[tuple[EventType | None, Fields]]
Extractor = Callable[[Fields, str, Mapping[str, str]], Extracted]

# Reasons of "Preparing to rebalance" that name members the coordinator removed without logging a
# separate line (GroupCoordinator.removePendingSyncMembers, 3.0+).
_PENDING_SYNC_REASON = re.compile(r"Removing (?P<members>.+?) on pending sync request expiration")


def rebalance_reason(fields: Fields, text: str, topic_names: Mapping[str, str]) -> Extracted:
    """`reason` stays whole; `; client reason: R` (3.2+) is also kept apart; members dropped for not
    syncing in time become member_removed(pending_sync_timeout) events before the rebalance."""
    head, client_reason = split_client_reason(fields.get("reason"))
    if client_reason is not None:
        fields["attributes"]["client_reason"] = client_reason
    out: Extracted = []
    m = _PENDING_SYNC_REASON.search(head)
    if m:
        for member_id in values.id_collection(m["members"]):
            removed = {
                "member_id": member_id,
                "reason": RemovalReason.PENDING_SYNC_TIMEOUT.value,
                "attributes": {},
            }
            out.append((EventType.MEMBER_REMOVED, removed))
    return [(None, fields), *out]


def dynamic_member_client(fields: Fields, text: str, topic_names: Mapping[str, str]) -> Extracted:
    """A dynamic member's id is `{client.id}-{UUID}` (GroupMetadata / ClassicGroup.generateMemberId), so
    it names the JoinGroup's client, which the line does not print otherwise. The replay matches that to
    the client's own "(Re-)joining group" (member-side timing for a member whose log shows its join)."""
    if fields["attributes"].get("membership", "Dynamic") == "Dynamic":
        client_id = classic_member_owner(fields.get("member_id") or "")
        if client_id:
            fields["client_id"] = client_id
            fields["attributes"]["client_id_from"] = "member_id"
    return [(None, fields)]


def removed_members(fields: Fields, text: str, topic_names: Mapping[str, str]) -> Extracted:
    """ "Group g removed dynamic members who haven't joined: Set(a, b)": one removal per member."""
    member_ids = values.id_collection(fields.pop("x_members"))
    if not member_ids:
        raise ValueError("no member ids in the removed-members list")
    return [(None, {**fields, "member_id": m, "attributes": dict(fields["attributes"])}) for m in member_ids]


def member_metadata(fields: Fields, text: str, topic_names: Mapping[str, str]) -> Extracted:
    metadata = values.member_metadata(fields.pop("x_metadata"))
    fields["member_id"] = metadata["memberId"]
    fields["group_instance_id"] = values.scala_option(metadata.get("groupInstanceId", "None"))
    fields["client_id"] = metadata.get("clientId")
    attributes = fields["attributes"]
    for key, name in (
        ("clientHost", "client_host"),
        ("sessionTimeoutMs", "session_timeout_ms"),
        ("rebalanceTimeoutMs", "rebalance_timeout_ms"),
    ):
        if key in metadata:
            attributes[name] = metadata[key]
    protocols = metadata.get("supportedProtocols", "")
    if protocols.startswith("List("):
        attributes["supported_protocols"] = ",".join(values.id_collection(protocols))
    return [(None, fields)]


def subscription_metadata(fields: Fields, text: str, topic_names: Mapping[str, str]) -> Extracted:
    topics = values.subscription_metadata(fields.pop("x_metadata"))
    if not topics:
        raise ValueError("no TopicMetadata in the subscription metadata")
    for name, (topic_id, count) in topics.items():
        fields["attributes"][f"topic.{name}"] = str(count)
        fields["attributes"][f"topic_id.{name}"] = topic_id
    return [(None, fields)]


def current_assignment(fields: Fields, text: str, topic_names: Mapping[str, str]) -> Extracted:
    """KIP-848 broker 3.6-3.7 "Member m transitioned from CurrentAssignment(...) to CurrentAssignment(...)":
    the new state is the event."""
    fields.pop("x_from")
    new = values.current_assignment(fields.pop("x_to"))
    fields["member_epoch"] = int(new["epoch"])
    fields["partitions"] = values.topic_partition_numbers(new["assigned"], topic_names)
    attributes = fields["attributes"]
    attributes["previous_epoch"] = new["previous"]
    attributes["state"] = new["state"]
    if "target" in new:
        attributes["target_epoch"] = new["target"]
    attributes["revoked"] = values.partitions_text(
        values.topic_partition_numbers(new.get("revoking", ""), topic_names)
    )
    return [(None, fields)]


def revoked_attribute(fields: Fields, text: str, topic_names: Mapping[str, str]) -> Extracted:
    revoked = fields.pop("x_revoked", None)
    if revoked is not None:
        fields["attributes"]["revoked"] = values.partitions_text(values.partition_list(revoked, topic_names))
    return [(None, fields)]


def assignment_block(fields: Fields, text: str, topic_names: Mapping[str, str]) -> Extracted:
    """ "Updating assignment with" (classic cooperative client) and "Reconciling assignment with local
    epoch" (KIP-848 client): partitions = the full new assignment; owned/added/revoked as attributes."""
    block = values.labelled_block(text)
    if "assigned" not in block:
        raise ValueError("assignment block without assigned partitions")
    fields["partitions"] = values.partition_list(block["assigned"], topic_names)
    for key in ("owned", "added", "revoked"):
        if key in block:
            fields["attributes"][key] = values.partitions_text(values.partition_list(block[key], topic_names))
    if "member" in block:
        local_epoch = fields.pop("x_local_epoch")
        member = block["member"]
        if (
            member.lstrip("-").isdigit() and not local_epoch.lstrip("-").isdigit()
        ):  # 3.8 swapped the arguments
            member, local_epoch = local_epoch, member
        fields["member_id"] = member
        fields["attributes"]["local_epoch"] = local_epoch
    return [(None, fields)]


def connect_assignment(fields: Fields, text: str, topic_names: Mapping[str, str]) -> Extracted:
    """Connect's "Joined group ... got assignment: Assignment{...}" completes the worker's sync_response.
    With KIP-415 (protocol version >= 1; the text has revoked lists) connectorIds/taskIds are what was
    added this round and revoked* what was taken away; before (eager) they are the full assignment."""
    assignment = values.connect_assignment(fields.pop("x_assignment"))
    attributes = fields["attributes"]
    fields["leader_id"] = assignment.get("leader") or None
    for key, name in (("error", "error_code"), ("leaderUrl", "leader_url"), ("offset", "config_offset")):
        if assignment.get(key) not in (None, ""):
            attributes[name] = str(assignment[key])
    if assignment.get("delay") not in (None, ""):  # KIP-415 scheduled.rebalance.max.delay.ms still to run
        attributes.setdefault("delay_ms", str(assignment["delay"]))
    incremental = "revokedTaskIds" in assignment
    connectors = assignment.get("connectorIds", ())
    tasks = values.connect_tasks(assignment.get("taskIds", ()))
    attributes["assigned_connectors"] = ",".join(connectors)
    out: Extracted = [(None, fields)]
    if incremental:
        revoked_connectors = assignment.get("revokedConnectorIds", ())
        revoked_tasks = values.connect_tasks(assignment.get("revokedTaskIds", ()))
        attributes["revoked_connectors"] = ",".join(revoked_connectors)
        attributes["added"] = values.partitions_text(tasks)
        attributes["revoked"] = values.partitions_text(revoked_tasks)
        if revoked_tasks:
            out.append((EventType.PARTITIONS_REVOKED, {"partitions": revoked_tasks, "attributes": {}}))
    else:
        fields["partitions"] = tasks
    if tasks:
        out.append((EventType.PARTITIONS_ASSIGNED, {"partitions": tasks, "attributes": {}}))
    return out


OFFSETS_TOPIC = "__consumer_offsets"


def partition_handover(fields: Fields, text: str, topic_names: Mapping[str, str]) -> Extracted:
    """ "Elected as / Resigned as the group coordinator for partition P" and the loading / unloading of
    `__consumer_offsets-P` name no group: the event's group id is the partition's name (the job maps P
    to its groups, rebalance_core.coordinator_moves)."""
    partition = fields["attributes"]["offsets_partition"]
    fields["group_id"] = f"{OFFSETS_TOPIC}-{partition}"
    return [(None, fields)]


# Kafka's own assignors by class (`partition.assignment.strategy`), as their `name()` (the protocol name a
# JoinGroup offers). A class not listed keeps its simple name: a custom assignor, no known protocol.
_ASSIGNOR_NAMES = {
    "RangeAssignor": "range",
    "RoundRobinAssignor": "roundrobin",
    "StickyAssignor": "sticky",
    "CooperativeStickyAssignor": "cooperative-sticky",
    "StreamsPartitionAssignor": "stream",
}
# Connect's `connect.protocol` -> the protocols the worker offers, preferred first (WorkerCoordinator.metadata;
# ConnectProtocolCompatibility: EAGER's protocol is named "default").
_CONNECT_PROTOCOLS = {
    "eager": ("default",),
    "compatible": ("compatible", "default"),
    "sessioned": ("sessioned", "compatible", "default"),
}
# config key -> attribute name (all `*_ms` values are integers)
_CONFIG_ATTRIBUTES = {
    "session.timeout.ms": "session_timeout_ms",
    "heartbeat.interval.ms": "heartbeat_interval_ms",
    "max.poll.interval.ms": "max_poll_interval_ms",
    "rebalance.timeout.ms": "rebalance_timeout_ms",
    "scheduled.rebalance.max.delay.ms": "scheduled_rebalance_max_delay_ms",
    "group.protocol": "group_protocol",
    "group.remote.assignor": "remote_assignor",
    "connect.protocol": "connect_protocol",
}
_CONFIG_LINE = re.compile(r"^[ \t]+(?P<key>[\w.-]+) = (?P<value>.*?)\r?$", re.MULTILINE)


def config_values(text: str) -> dict[str, str]:
    """AbstractConfig.logAll's body: one `\\t{key} = {value}` line per config (0.10-4.x)."""
    return {m["key"]: m["value"] for m in _CONFIG_LINE.finditer(text)}


def client_config(fields: Fields, text: str, topic_names: Mapping[str, str]) -> Extracted:
    """ "ConsumerConfig values:" / "DistributedConfig values:" (AbstractConfig.logAll, at the client's
    construction): the settings its group membership runs with. `protocol_name` is the protocol the member
    prefers (first assignor; Connect's connect.protocol), attributes.assignors all it offers and
    attributes.rebalance_protocol the one ConsumerCoordinator derives from them (cooperative only when every
    assignor supports it). A classic consumer's rebalance timeout is its max.poll.interval.ms
    (ConsumerCoordinator passes it as the JoinGroup's rebalanceTimeoutMs); Connect's is rebalance.timeout.ms."""
    config_class = fields.pop("x_class")
    if fields.get("group_id") in (None, "", "null") or config_class == "ShareConsumerConfig":
        return []  # a client in no group (a share group, KIP-932, is no consumer group)
    config = config_values(text)
    attributes = fields["attributes"]
    attributes["config_class"] = config_class
    for key, name in _CONFIG_ATTRIBUTES.items():
        value = config.get(key)
        if value in (None, "", "null"):
            continue
        if name.endswith("_ms") and not value.lstrip("-").isdigit():
            raise ValueError(f"{key} = {value!r} is not a number")
        attributes[name] = value.lower() if name in ("group_protocol", "connect_protocol") else value
    fields["client_id"] = config.get("client.id") or None
    fields["group_instance_id"] = values.scala_option(config.get("group.instance.id") or "null")
    if config_class == "DistributedConfig":
        fields["protocol_type"] = "connect"
        offered = _CONNECT_PROTOCOLS.get(attributes.get("connect_protocol", ""))
        if offered:
            fields["protocol_name"] = offered[0]
            attributes["assignors"] = ",".join(offered)
        return [(None, fields)]
    fields["protocol_type"] = "consumer"
    if "max_poll_interval_ms" in attributes:
        attributes["rebalance_timeout_ms"] = attributes["max_poll_interval_ms"]
    strategy = config.get("partition.assignment.strategy", "")
    assignors = [_assignor_name(item) for item in values.id_collection(strategy)]
    if assignors:
        attributes["assignors"] = ",".join(assignors)
        fields["protocol_name"] = assignors[0]
        if all(a in _ASSIGNOR_NAMES.values() for a in assignors):
            cooperative = all(a in COOPERATIVE_PROTOCOLS for a in assignors)  # supportedProtocols
            attributes["rebalance_protocol"] = "cooperative" if cooperative else "eager"
    return [(None, fields)]


def _assignor_name(item: str) -> str:
    """`class org.apache.kafka.clients.consumer.RangeAssignor` (a Class default) or the configured
    `org.apache.kafka.clients.consumer.RangeAssignor` / `range`-less class name -> the assignor's name."""
    simple = item.removeprefix("class ").strip().rsplit(".", 1)[-1]
    return _ASSIGNOR_NAMES.get(simple, simple)
