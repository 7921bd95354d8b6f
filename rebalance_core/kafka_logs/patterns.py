"""Kafka's group-protocol log messages as data: one row per wording, with the Kafka versions that print
it, the side that logs it and the canonical event it yields.

Sources: Apache Kafka's `GroupCoordinator`/`GroupMetadataManager` (Scala, `kafka.coordinator.group`),
the Java group coordinator (`org.apache.kafka.coordinator.group.GroupMetadataManager`, 3.6+),
`AbstractCoordinator`, `ConsumerCoordinator`, `ConsumerRebalanceListenerInvoker`, the KIP-848
membership managers, Connect's `WorkerCoordinator`/`DistributedHerder`; wording per release as
collected in /work/shared/kafka-logs/TEMPLATES.md and checked against the Kafka source.

How a row is read (the parser does exactly this, nothing else):
* `regex` is matched (re.match) against the message after the envelope and the Kafka prefix
  (`[GroupCoordinator 1]: `, `[Consumer clientId=…, groupId=…] `, …) are removed; single-line rows see
  the first line of the message, `multiline` rows the whole entry.
* named groups become event fields: `group_id`, `member_id`, `leader_id`, `group_instance_id`, `reason`,
  `protocol_name`, `client_id` as text; `generation_id`, `member_count`, `group_epoch`, `member_epoch`,
  `assignment_epoch` as ints; `partitions` (a printed partition list); `instance` (Scala/Java Option of
  the group.instance.id); `node` (a coordinator Node -> attributes coordinator, coordinator_id);
  `assignment` (the leader's classic assignment map); `target_assignment` (KIP-848 map by topic id);
  `a_<name>` -> attributes[<name>] (text); `x_<name>` -> input for the row's `extract` only.
* `constants` are fixed fields (`reason`, `member_epoch`, or `a_<name>` attributes); `extract` builds what groups cannot
  (MemberMetadata, Connect assignments, multi-line blocks, one event per removed member).
* `event` None = a recognised group line that has no canonical event (counted as skipped, "no_event").
* `merge` = the line restates an event the same member just logged (e.g. "Notifying assignor about the
  new Assignment" after "Successfully synced"); it completes that event instead of making a second one.
* `needle` is literal text every wording of the message contains: a message that contains a needle
  but matches no row is quarantined (a wording we do not know), never silently skipped.
* `versions` = the Apache Kafka releases that print this wording ("2.1-3.9", "3.6+"; "+" = up to the
  newest checked, 4.x). `example` is a real or source-faithful message (tests parse every example).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field

from rebalance_core.events import REBALANCE_STARTED
from rebalance_core.kafka_logs import extractors as x
from rebalance_core.kafka_logs.extractors import Extractor
from schemas.events import EventType, RemovalReason, Side

E = EventType
COORD = Side.COORDINATOR
MEMBER = Side.MEMBER


@dataclass(frozen=True)
class MessagePattern:
    name: str
    side: Side
    versions: str
    event: EventType | None
    regex: str
    needle: str
    example: str
    constants: Mapping[str, str] = field(default_factory=dict)
    extract: Extractor | None = None
    merge: bool = False
    multiline: bool = False
    resets_member: bool = False  # the client reset its generation/member id: ids are not carried across
    compiled: re.Pattern = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        flags = re.DOTALL if self.multiline else 0
        object.__setattr__(self, "compiled", re.compile(self.regex, flags))


def _removed(reason: RemovalReason, **attrs: str) -> dict[str, str]:
    return {"reason": reason.value, **{f"a_{k}": v for k, v in attrs.items()}}


KIP848 = {"a_group_protocol": "consumer"}
_OFFSETS = r" \(__consumer_offsets-(?P<a_offsets_partition>\d+)\)"
_GENERATION = (
    r"Generation\{generationId=(?P<generation_id>-?\d+), memberId='(?P<member_id>[^']*)', "
    r"protocol='(?P<protocol_name>[^']*)'\}"
)
_UUID = "0eec4c23-8ca2-4a89-becc-9a2b139de9f9"

P = MessagePattern

# fmt: off
# ------------------------------------------------------------------------------------------------
# Broker, classic protocol (JoinGroup / SyncGroup / Heartbeat / LeaveGroup)
# ------------------------------------------------------------------------------------------------
BROKER_CLASSIC: tuple[MessagePattern, ...] = (
    # -- rebalance start (GroupCoordinator.prepareRebalance); generation_id is the OLD generation
    P("broker.prepare.0_9", COORD, "0.9-0.10.2", E.REBALANCE_PREPARED,
      r"Preparing to restabilize group (?P<group_id>.+?) with old generation (?P<generation_id>-?\d+)$",
      "Preparing to re", "Preparing to restabilize group g1 with old generation 3"),
    P("broker.prepare.0_11", COORD, "0.11-2.0", E.REBALANCE_PREPARED,
      rf"Preparing to rebalance group (?P<group_id>.+?) with old generation (?P<generation_id>-?\d+){_OFFSETS}$",
      "Preparing to re", "Preparing to rebalance group g1 with old generation 3 (__consumer_offsets-12)"),
    P("broker.prepare.2_1", COORD, "2.1-3.9", E.REBALANCE_PREPARED,
      rf"Preparing to rebalance group (?P<group_id>.+?) in state (?P<a_state>\w+) with old generation "
      rf"(?P<generation_id>-?\d+){_OFFSETS} \(reason: (?P<reason>.*)\)$",
      "Preparing to re",
      "Preparing to rebalance group g1 in state PreparingRebalance with old generation 3 (__consumer_offsets-12) "
      "(reason: Adding new member c1-" + _UUID + " with group instance id None; client reason: not provided)",
      extract=x.rebalance_reason),
    P("broker.prepare.java", COORD, "3.6+", E.REBALANCE_PREPARED,
      r"Preparing to rebalance group (?P<group_id>.+?) in state (?P<a_state>\w+) with old generation "
      r"(?P<generation_id>-?\d+) \(reason: (?P<reason>.*)\)\.?$",
      "Preparing to re",
      "Preparing to rebalance group g1 in state PreparingRebalance with old generation 3 "
      "(reason: removing member c1-" + _UUID + " on heartbeat expiration.).",
      extract=x.rebalance_reason),
    # -- join phase complete (-> CompletingRebalance); generation_id is the NEW generation
    P("broker.stabilized.0_9", COORD, "0.9-0.10.2", E.JOIN_COMPLETED,
      r"Stabilized group (?P<group_id>.+?) generation (?P<generation_id>\d+)$",
      "Stabilized group", "Stabilized group g1 generation 4"),
    P("broker.stabilized.0_11", COORD, "0.11-2.7", E.JOIN_COMPLETED,
      rf"Stabilized group (?P<group_id>.+?) generation (?P<generation_id>\d+){_OFFSETS}$",
      "Stabilized group", "Stabilized group g1 generation 4 (__consumer_offsets-12)"),
    P("broker.stabilized.2_8", COORD, "2.8-3.9", E.JOIN_COMPLETED,
      rf"Stabilized group (?P<group_id>.+?) generation (?P<generation_id>\d+){_OFFSETS} "
      r"with (?P<member_count>\d+) members$",
      "Stabilized group", "Stabilized group g1 generation 4 (__consumer_offsets-12) with 2 members"),
    P("broker.stabilized.java", COORD, "3.6+", E.JOIN_COMPLETED,
      r"Stabilized group (?P<group_id>.+?) generation (?P<generation_id>\d+) with (?P<member_count>\d+) members\.$",
      "Stabilized group", "Stabilized group g1 generation 4 with 2 members."),
    # -- leader's SyncGroup (-> Stable)
    P("broker.assignment.0_9", COORD, "0.9-2.7", E.ASSIGNMENT_RECEIVED,
      r"Assignment received from leader for group (?P<group_id>.+?) for generation (?P<generation_id>\d+)$",
      "Assignment received from leader", "Assignment received from leader for group g1 for generation 4"),
    P("broker.assignment.2_8", COORD, "2.8", E.ASSIGNMENT_RECEIVED,
      r"Assignment received from leader for group (?P<group_id>.+?) for generation (?P<generation_id>\d+)\. "
      r"The group has (?P<member_count>\d+) members, (?P<a_static_member_count>\d+) of which are static\.$",
      "Assignment received from leader",
      "Assignment received from leader for group g1 for generation 4. The group has 2 members, 0 of which are static."),
    P("broker.assignment.3_0", COORD, "3.0+", E.ASSIGNMENT_RECEIVED,
      r"Assignment received from leader (?P<leader_id>\S+) for group (?P<group_id>.+?) for generation "
      r"(?P<generation_id>\d+)\. The group has (?P<member_count>\d+) members, (?P<a_static_member_count>\d+) "
      r"of which are static\.$",
      "Assignment received from leader",
      "Assignment received from leader c1-" + _UUID + " for group g1 for generation 4. "
      "The group has 2 members, 1 of which are static."),
    # -- a rebalance that ends with no members still consumes a generation
    P("broker.empty.0_10_1", COORD, "0.10.1-0.10.2", E.GROUP_EMPTY,
      r"Group (?P<group_id>.+?) with generation (?P<generation_id>\d+) is now empty$",
      "is now empty", "Group g1 with generation 5 is now empty"),
    P("broker.empty.0_11", COORD, "0.11-3.9", E.GROUP_EMPTY,
      rf"Group (?P<group_id>.+?) with generation (?P<generation_id>\d+) is now empty{_OFFSETS}$",
      "is now empty", "Group g1 with generation 5 is now empty (__consumer_offsets-12)"),
    P("broker.empty.java", COORD, "3.6+", E.GROUP_EMPTY,
      r"Group (?P<group_id>.+?) with generation (?P<generation_id>\d+) is now empty\.$",
      "is now empty", "Group g1 with generation 5 is now empty."),
    P("broker.dead.0_9", COORD, "0.9-0.10.0", E.GROUP_DEAD,
      r"Group (?P<group_id>.+?) generation (?P<generation_id>\d+) is dead and removed$",
      "is dead and removed", "Group g1 generation 5 is dead and removed"),
    P("broker.dead.1_0", COORD, "1.0-3.9", E.GROUP_DEAD,  # GroupMetadataManager: offsets expired, group deleted
      r"Group (?P<group_id>.+?) transitioned to Dead in generation (?P<generation_id>\d+)$",
      "transitioned to Dead", "Group g1 transitioned to Dead in generation 5"),
    # -- coordinator failover (the __consumer_offsets partition moved)
    P("broker.loading.0_9", COORD, "0.9-3.9", E.GROUP_LOADED,
      r"Loading group metadata for (?P<group_id>.+?) with generation (?P<generation_id>\d+)$",
      "group metadata for", "Loading group metadata for g1 with generation 5"),
    P("broker.unloading.0_9", COORD, "0.9-3.9", E.GROUP_UNLOADED,
      r"Unloading group metadata for (?P<group_id>.+?) with generation (?P<generation_id>\d+)$",
      "group metadata for", "Unloading group metadata for g1 with generation 5"),
    P("broker.loaded.java", COORD, "3.6+", E.GROUP_LOADED,
      r"Loaded (?P<a_group_type>classic|generic|consumer|share|streams) group (?P<group_id>.+?) with "
      r"(?P<member_count>\d+) members\.$",
      "Loaded ", "Loaded classic group g1 with 2 members."),
    P("broker.unloading.java", COORD, "3.6+", E.GROUP_UNLOADED,  # group id from the [GroupId=g] prefix
      r"Unloading group metadata for generation (?P<generation_id>\d+)\.$",
      "group metadata for", "Unloading group metadata for generation 5."),
    # -- the broker leads / stops leading __consumer_offsets-P (every group of P moves with it)
    P("broker.elected.2_8", COORD, "2.8+", E.COORDINATOR_ELECTED,  # GroupCoordinator.onElection
      r"Elected as the group coordinator for partition (?P<a_offsets_partition>\d+)"
      r"(?: in epoch (?P<a_coordinator_epoch>\d+))?$",
      "group coordinator for partition", "Elected as the group coordinator for partition 12 in epoch 3",
      extract=x.partition_handover),
    P("broker.resigned.2_8", COORD, "2.8+", E.COORDINATOR_RESIGNED,  # GroupCoordinator.onResignation
      r"Resigned as the group coordinator for partition (?P<a_offsets_partition>\d+)"
      r"(?: in epoch (?:Some\(|OptionalInt\[)?(?P<a_coordinator_epoch>\d+)[)\]]?|"
      r" in epoch (?:None|OptionalInt\.empty))?$",
      "group coordinator for partition", "Resigned as the group coordinator for partition 12 in epoch 3",
      extract=x.partition_handover),
    # before 2.8 only GroupMetadataManager tells (scheduleLoadGroupAndOffsets / removeGroupsForPartition);
    # the 4.x Java runtime (CoordinatorRuntime.scheduleLoadOperation / scheduleUnloadOperation)
    P("broker.loading_partition.1_0", COORD, "1.0+", E.COORDINATOR_ELECTED,
      r"Scheduling loading of offsets and group metadata from __consumer_offsets-(?P<a_offsets_partition>\d+)"
      r"(?: for epoch (?P<a_coordinator_epoch>\d+))?$",
      "Scheduling loading of", "Scheduling loading of offsets and group metadata from __consumer_offsets-12",
      extract=x.partition_handover),
    P("broker.unloading_partition.1_0", COORD, "1.0+", E.COORDINATOR_RESIGNED,
      r"Scheduling unloading of offsets and group metadata from __consumer_offsets-(?P<a_offsets_partition>\d+)$",
      "Scheduling unloading of",
      "Scheduling unloading of offsets and group metadata from __consumer_offsets-12",
      extract=x.partition_handover),
    P("broker.loading_partition.java", COORD, "3.6+", E.COORDINATOR_ELECTED,
      r"Scheduling loading of metadata from __consumer_offsets-(?P<a_offsets_partition>\d+) with epoch "
      r"(?P<a_coordinator_epoch>\d+)$",
      "Scheduling loading of", "Scheduling loading of metadata from __consumer_offsets-12 with epoch 3",
      extract=x.partition_handover),
    P("broker.unloading_partition.java", COORD, "3.6+", E.COORDINATOR_RESIGNED,
      r"Scheduling unloading of metadata for __consumer_offsets-(?P<a_offsets_partition>\d+) with epoch "
      r"(?:OptionalInt\[)?(?P<a_coordinator_epoch>\d+)\]?$",
      "Scheduling unloading of",
      "Scheduling unloading of metadata for __consumer_offsets-12 with epoch OptionalInt[3]",
      extract=x.partition_handover),
    P("broker.unloaded.java", COORD, "3.8+", E.GROUP_UNLOADED,
      r"Unloaded group metadata for group epoch (?P<group_epoch>\d+)\.$",
      "group metadata for", "Unloaded group metadata for group epoch 7."),
    # -- JoinGroup arrivals
    P("broker.join.pending.2_4", COORD, "2.4-3.9", E.JOIN_RECEIVED,  # KIP-394: told to rejoin with the new id
      r"Dynamic member with unknown member id (?:re)?joins group (?P<group_id>.+?) in (?P<a_state>\w+) state\. "
      r"Created a new member id (?P<member_id>\S+) and request the member to rejoin with this id\.$",
      "unknown member id",
      "Dynamic member with unknown member id joins group g1 in Stable state. Created a new member id c1-" + _UUID
      + " and request the member to rejoin with this id.",
      constants={"a_pending": "true"}, extract=x.dynamic_member_client),
    P("broker.join.pending.java", COORD, "3.6+", E.JOIN_RECEIVED,
      r"Dynamic member with unknown member id joins group (?P<group_id>.+?) in (?P<a_state>\w+) state\. "
      r"Created a new member id (?P<member_id>\S+) and requesting the member to rejoin with this id\.$",
      "unknown member id",
      "Dynamic member with unknown member id joins group g1 in Empty state. Created a new member id c1-" + _UUID
      + " and requesting the member to rejoin with this id.",
      constants={"a_pending": "true"}, extract=x.dynamic_member_client),
    P("broker.join.added.2_5", COORD, "2.5-3.9", E.JOIN_RECEIVED,  # old JoinGroup versions (no KIP-394)
      r"(?P<a_membership>Static|Dynamic) Member with unknown member id joins group (?P<group_id>.+?) in "
      r"(?P<a_state>\w+) state\. Created a new member id (?P<member_id>\S+) for this member and add to the group\.$",
      "unknown member id",
      "Dynamic Member with unknown member id joins group g1 in Stable state. Created a new member id c1-" + _UUID
      + " for this member and add to the group.",
      extract=x.dynamic_member_client),
    P("broker.join.added.java", COORD, "3.6+", E.JOIN_RECEIVED,
      r"Dynamic member with unknown member id joins group (?P<group_id>.+?) in state (?P<a_state>\w+)\. "
      r"Created a new member id (?P<member_id>\S+) and added the member to the group\.$",
      "unknown member id",
      "Dynamic member with unknown member id joins group g1 in state Stable. Created a new member id c1-" + _UUID
      + " and added the member to the group.",
      extract=x.dynamic_member_client),
    P("broker.join.known.2_5", COORD, "2.5+", E.JOIN_RECEIVED,  # the rejoin with the assigned id (DEBUG < 4.0)
      r"(?:Pending dynamic member with id|Dynamic Member with specific member id) (?P<member_id>\S+) joins group "
      r"(?P<group_id>.+?) in (?P<a_state>\w+) state\. Adding to the group now\.$",
      "joins group",
      "Pending dynamic member with id c1-" + _UUID + " joins group g1 in PreparingRebalance state. "
      "Adding to the group now.",
      extract=x.dynamic_member_client),
    P("broker.join.static_new.2_5", COORD, "2.5-2.8", E.JOIN_RECEIVED,
      r"Adding new static member (?P<group_instance_id>\S+) to group (?P<group_id>.+?) with member id "
      r"(?P<member_id>\S+)\.$",
      "new static member", "Adding new static member i1 to group g1 with member id i1-" + _UUID + "."),
    P("broker.join.static_new.3_0", COORD, "3.0+", E.JOIN_RECEIVED,
      r"Static member with groupInstanceId=(?P<group_instance_id>\S+) and unknown member id joins group "
      r"(?P<group_id>.+?) in (?P<a_state>\w+) state\. Created a new member id (?P<member_id>\S+) for this member "
      r"and add(?:ed)? to the group\.$",
      "unknown member id",
      "Static member with groupInstanceId=i1 and unknown member id joins group g1 in Empty state. "
      "Created a new member id i1-" + _UUID + " for this member and add to the group."),
    # -- static member restarted within the session timeout: new member id, no rebalance when Stable (KIP-345)
    P("broker.static_replaced.2_3", COORD, "2.3-2.4", E.STATIC_MEMBER_REPLACED,  # no group id in the text
      r"Static member (?P<group_instance_id>\S+) with unknown member id rejoins, assigning new member id "
      r"(?P<member_id>\S+), while old member (?P<a_old_member_id>\S+) will be removed\.$",
      "with unknown member id rejoins",
      "Static member i1 with unknown member id rejoins, assigning new member id i1-new, while old member i1-old "
      "will be removed."),
    P("broker.static_replaced.2_5", COORD, "2.5-2.8", E.STATIC_MEMBER_REPLACED,
      r"Static member (?P<group_instance_id>\S+) of group (?P<group_id>.+?) with unknown member id rejoins, "
      r"assigning new member id (?P<member_id>\S+), while old member id (?P<a_old_member_id>\S+) will be removed\.$",
      "with unknown member id rejoins",
      "Static member i1 of group g1 with unknown member id rejoins, assigning new member id i1-new, "
      "while old member id i1-old will be removed."),
    P("broker.static_replaced.3_0", COORD, "3.0+", E.STATIC_MEMBER_REPLACED,  # new member id not printed
      r"Static member with groupInstanceId=(?P<group_instance_id>\S+) and unknown member id joins group "
      r"(?P<group_id>.+?) in (?P<a_state>\w+) state\. Replacing previously mapped member (?P<a_old_member_id>\S+) "
      r"with this groupInstanceId\.$",
      "unknown member id",
      "Static member with groupInstanceId=i1 and unknown member id joins group g1 in Stable state. "
      "Replacing previously mapped member i1-old with this groupInstanceId."),
    # -- a request of a replaced static member's old id is refused (FENCED_INSTANCE_ID): the line names the
    # instance's current member id, which the 3.x replacement line does not print
    # (GroupCoordinator.validateCurrentMember). It names no group: the parser finds the group from the
    # file's earlier lines that named one of the two ids (parser: _FileParser._group_of_member)
    P("broker.static_fenced_request.3_0", COORD, "3.0+", E.MEMBER_REMOVED,
      r"Request memberId=(?P<member_id>\S+) for static member with groupInstanceId=(?P<group_instance_id>\S+) "
      r"is fenced by current memberId=(?P<a_current_member_id>\S+) during operation (?P<a_operation>\w+)$",
      "is fenced by current memberId",
      "Request memberId=i1-old for static member with groupInstanceId=i1 is fenced by current memberId=i1-new "
      "during operation JoinGroup",
      constants=_removed(RemovalReason.FENCED_STATIC)),
    # -- the join phase ended without the leader: another member that rejoined leads
    # (GroupMetadata / ClassicGroup.maybeElectNewJoinedLeader). Scala's GroupMetadata logs with no
    # "[GroupCoordinator N]" prefix (parser: _GROUP_METADATA_ROWS); neither wording names the group, which the
    # file's earlier lines naming one of the two ids give (parser: _FileParser._group_of_member)
    P("broker.leader_elected.2_3", COORD, "2.3-3.9", E.LEADER_ELECTED,
      r"Group leader \[member\.id: (?P<a_previous_leader_id>\S+), group\.instance\.id: .*?\] failed to join "
      r"before rebalance timeout, while new leader MemberMetadata\(memberId=(?P<leader_id>[^,]+), .* was "
      r"elected\.$",
      "failed to join before rebalance timeout, while new leader",
      "Group leader [member.id: c1-old, group.instance.id: Some(c1)] failed to join before rebalance timeout, "
      "while new leader MemberMetadata(memberId=c2-new, groupInstanceId=Some(c2), clientId=c2, clientHost=/10.0.0.2, "
      "sessionTimeoutMs=45000, rebalanceTimeoutMs=300000, supportedProtocols=List(range), ) was elected."),
    P("broker.leader_elected.java", COORD, "3.6+", E.LEADER_ELECTED,
      r"Group leader \[memberId: (?P<a_previous_leader_id>\S+), groupInstanceId: .*?\] failed to join before the "
      r"rebalance timeout\. Member ClassicGroupMember\(memberId='(?P<leader_id>[^']+)'.* was elected as the new "
      r"leader\.$",
      "failed to join before the rebalance timeout. Member",
      "Group leader [memberId: c1-old, groupInstanceId: c1] failed to join before the rebalance timeout. Member "
      "ClassicGroupMember(memberId='c2-new', groupInstanceId='c2', clientId='c2', clientHost='/10.0.0.2', "
      "rebalanceTimeoutMs=300000, sessionTimeoutMs=45000, protocolType='consumer', supportedProtocols=[range]) "
      "was elected as the new leader."),
    P("broker.leader_not_elected.2_3", COORD, "2.3+", None,  # no member rejoined: the join phase waits again
      r"Group leader \[.*\] failed to join before (?:the )?rebalance timeout,? and the group couldn't proceed to "
      r"(?:the )?next generation ?because no member joined\.$",
      "couldn't proceed to",
      "Group leader [member.id: c1-old, group.instance.id: Some(c1)] failed to join before rebalance timeout, "
      "and the group couldn't proceed to next generationbecause no member joined."),
    # -- removals
    P("broker.failed.0_9", COORD, "0.9-0.11", E.MEMBER_REMOVED,  # TRACE/DEBUG in those releases
      r"Member (?P<member_id>\S+) in group (?P<group_id>.+?) has failed$",
      "has failed", "Member c1-" + _UUID + " in group g1 has failed",
      constants=_removed(RemovalReason.SESSION_TIMEOUT)),
    P("broker.failed.1_0", COORD, "1.0+", E.MEMBER_REMOVED,  # heartbeat (session) expiration
      r"Member (?P<member_id>\S+) in group (?P<group_id>.+?) has failed, removing it from the group\.?$",
      "has failed", "Member c1-" + _UUID + " in group g1 has failed, removing it from the group",
      constants=_removed(RemovalReason.SESSION_TIMEOUT)),
    P("broker.pending_expired.2_2", COORD, "2.2+", E.MEMBER_REMOVED,
      r"Pending member (?P<member_id>\S+) in group (?P<group_id>.+?) has been removed after session timeout "
      r"expiration\.$",
      "has been removed after session timeout",
      "Pending member c1-" + _UUID + " in group g1 has been removed after session timeout expiration.",
      constants=_removed(RemovalReason.SESSION_TIMEOUT, pending="true")),
    P("broker.left.1_0", COORD, "1.0-2.3", E.MEMBER_REMOVED,  # DEBUG before 2.2
      r"Member (?P<member_id>\S+) in group (?P<group_id>.+?) has left, removing it from the group$",
      "has left", "Member c1-" + _UUID + " in group g1 has left, removing it from the group",
      constants=_removed(RemovalReason.LEAVE_GROUP)),
    P("broker.left.2_4", COORD, "2.4-2.8", E.MEMBER_REMOVED,
      r"Member\[group\.instance\.id (?P<instance>\S+), member\.id (?P<member_id>\S+)\] in group (?P<group_id>.+?) "
      r"has left, removing it from the group$",
      "has left",
      "Member[group.instance.id Some(i1), member.id i1-" + _UUID + "] in group g1 has left, removing it from the group",
      constants=_removed(RemovalReason.LEAVE_GROUP)),
    P("broker.pending_left.2_2", COORD, "2.2-2.8", E.MEMBER_REMOVED,
      r"Pending member (?P<member_id>\S+) is leaving group (?P<group_id>.+?)\.$",
      "is leaving group", "Pending member c1-" + _UUID + " is leaving group g1.",
      constants=_removed(RemovalReason.LEAVE_GROUP, pending="true")),
    P("broker.left.3_0", COORD, "3.0-3.9", E.MEMBER_REMOVED,  # logged after the "Preparing" line it caused
      r"Member (?P<x_metadata>MemberMetadata\(.*\)) has left group (?P<group_id>.+?) through explicit `LeaveGroup`"
      r"(?: request|; client reason: (?P<a_client_reason>.*))$",
      "has left group",
      "Member MemberMetadata(memberId=c1-" + _UUID + ", groupInstanceId=None, clientId=c1, clientHost=/10.0.0.7, "
      "sessionTimeoutMs=45000, rebalanceTimeoutMs=300000, supportedProtocols=List(range, cooperative-sticky)) "
      "has left group g1 through explicit `LeaveGroup`; client reason: the consumer is being closed",
      constants=_removed(RemovalReason.LEAVE_GROUP), extract=x.member_metadata),
    P("broker.pending_left.3_0", COORD, "3.0-3.9", E.MEMBER_REMOVED,
      r"Pending member with memberId=(?P<member_id>\S+) has left group (?P<group_id>.+?) through explicit "
      r"`LeaveGroup` request$",
      "has left group",
      "Pending member with memberId=c1-" + _UUID + " has left group g1 through explicit `LeaveGroup` request",
      constants=_removed(RemovalReason.LEAVE_GROUP, pending="true")),
    P("broker.left.java", COORD, "3.7+", E.MEMBER_REMOVED,  # group id from the [Group g] prefix
      r"(?:(?P<a_membership>Dynamic|Static) )?Member (?P<member_id>\S+)(?: with instance id "
      r"(?P<group_instance_id>\S+))? has left group through explicit `LeaveGroup` request"
      r"(?:; client reason: (?P<a_client_reason>.*))?$",
      "has left group",
      "Static Member i1-" + _UUID + " with instance id i1 has left group through explicit `LeaveGroup` request; "
      "client reason: the consumer is being closed",
      constants=_removed(RemovalReason.LEAVE_GROUP)),
    P("broker.pending_left.java", COORD, "3.7+", E.MEMBER_REMOVED,
      r"Pending member (?P<member_id>\S+) has left group through explicit `LeaveGroup` request"
      r"(?:; client reason: (?P<a_client_reason>.*))?$",
      "has left group",
      "Pending member c1-" + _UUID + " has left group through explicit `LeaveGroup` request; client reason: "
      "the consumer is being closed",
      constants=_removed(RemovalReason.LEAVE_GROUP, pending="true")),
    P("broker.not_rejoined.2_7", COORD, "2.7+", E.MEMBER_REMOVED,  # one event per member (rebalance timeout)
      r"Group (?P<group_id>.+?) removed? dynamic members who haven't joined: (?P<x_members>.*?)\.?$",
      "dynamic members who haven't joined",
      "Group g1 removed dynamic members who haven't joined: Set(c1-" + _UUID + ")",
      constants=_removed(RemovalReason.REBALANCE_TIMEOUT), extract=x.removed_members),
    # -- recognised, no canonical event
    P("broker.static_no_rebalance.2_3", COORD, "2.3+", None,
      r"Static member (?:which )?joins during \w+ stage.* will not trigger (?:a )?rebalance\.$",
      "will not trigger", "Static member which joins during Stable stage and doesn't affect selectProtocol will "
      "not trigger rebalance."),
    P("broker.empty_assignment.2_5", COORD, "2.5+", None,
      r"(?:Setting empty assignments for members .* of .+ for generation \d+|Sending empty assignment to member "
      r"\S+ of .+ for generation \d+ with no errors)\.?$",
      "empty assignment", "Setting empty assignments for members Set(c1-" + _UUID + ") of g1 for generation 4"),
    P("broker.no_rejoin.2_3", COORD, "2.3+", None,
      r"Group (?P<group_id>.+?) could not complete rebalance because no members rejoined\.?$",
      "no members rejoined", "Group g1 could not complete rebalance because no members rejoined"),
    P("broker.dead_skip.2_3", COORD, "2.3+", None,
      r"Group (?P<group_id>.+?) is dead, skipping rebalance stage$",
      "skipping rebalance stage", "Group g1 is dead, skipping rebalance stage"),
    P("broker.heartbeat_after_unload.2_4", COORD, "2.4+", None,
      r"Received notification of heartbeat expiration for member \S+ after group (?P<group_id>.+?) had already "
      r"been unloaded or deleted\.$",
      "notification of heartbeat expiration",
      "Received notification of heartbeat expiration for member c1-" + _UUID + " after group g1 had already "
      "been unloaded or deleted."),
    P("broker.unexpected_rejoin.2_2", COORD, "2.2+", None,
      r"Attempt to add rejoining member \S+ of group (?P<group_id>.+?) in unexpected group state \w+$",
      "Attempt to add rejoining member",
      "Attempt to add rejoining member c1-" + _UUID + " of group g1 in unexpected group state Dead"),
    P("broker.group_converted.4_0", COORD, "4.0+", None,  # classic <-> consumer group (KIP-848 online migration)
      r"Converted the (?:classic|consumer) group to a (?:consumer|classic) group\.$",
      "Converted the", "Converted the classic group to a consumer group."),
)

# ------------------------------------------------------------------------------------------------
# Broker, KIP-848 consumer protocol (Java GroupMetadataManager; group id from `[GroupId g] `)
# ------------------------------------------------------------------------------------------------
_KIP848_MEMBER = "gjWzAEmmRlOfypB2_GB_9Q"
_TOPIC_ID = "8iWjCLGESE6MUiR5ANkArg"
BROKER_KIP848: tuple[MessagePattern, ...] = (
    P("kip848.join.3_6", COORD, "3.6+", E.JOIN_RECEIVED,
      r"Member (?P<member_id>\S+) joins the consumer group(?: using the (?P<a_member_protocol>\w+) protocol)?\.$",
      "the consumer group", f"Member {_KIP848_MEMBER} joins the consumer group using the consumer protocol.",
      constants=KIP848),
    P("kip848.static_join.3_7", COORD, "3.7+", E.JOIN_RECEIVED,
      r"Static member (?P<member_id>\S+) with instance id (?P<group_instance_id>\S+) (?P<a_join_kind>joins|re-joins) "
      r"the consumer group(?: using the (?P<a_member_protocol>\w+) protocol)?\.$",
      "the consumer group", f"Static member {_KIP848_MEMBER} with instance id i1 joins the consumer group.",
      constants=KIP848),
    P("kip848.static_replaced.3_8", COORD, "3.8", E.STATIC_MEMBER_REPLACED,
      r"Static member with unknown member id and instance id (?P<group_instance_id>\S+) re-joins the consumer "
      r"group\. Created a new member (?P<member_id>\S+) to replace the existing member (?P<a_old_member_id>\S+)\.$",
      "the consumer group",
      f"Static member with unknown member id and instance id i1 re-joins the consumer group. Created a new member "
      f"{_KIP848_MEMBER} to replace the existing member 6nc1qt8rSeyTwBh__vZELQ.",
      constants=KIP848),
    P("kip848.static_replaced.3_9", COORD, "3.9+", E.STATIC_MEMBER_REPLACED,
      r"Static member with instance id (?P<group_instance_id>\S+) re-joins the consumer group using the "
      r"(?P<a_member_protocol>\w+) protocol\. Created a new member (?P<member_id>\S+) to replace the existing "
      r"member (?P<a_old_member_id>\S+)\.$",
      "the consumer group",
      f"Static member with instance id i1 re-joins the consumer group using the consumer protocol. Created a new "
      f"member {_KIP848_MEMBER} to replace the existing member 6nc1qt8rSeyTwBh__vZELQ.",
      constants=KIP848),
    P("kip848.classic_pending_join.3_8", COORD, "3.8+", E.JOIN_RECEIVED,  # classic member joining a consumer group
      r"Dynamic member with unknown member id joins the consumer group\. Created a new member id "
      r"(?P<member_id>\S+) and requesting the member to rejoin with this id\.$",
      "the consumer group",
      "Dynamic member with unknown member id joins the consumer group. Created a new member id c1-" + _UUID
      + " and requesting the member to rejoin with this id.",
      constants={**KIP848, "a_pending": "true", "a_member_protocol": "classic"}),
    P("kip848.subscribed.3_6", COORD, "3.6+", None,
      r"Member \S+ updated its subscribed (?:topics|regex) to: .*$",
      "updated its subscribed", f"Member {_KIP848_MEMBER} updated its subscribed topics to: [t1, t2]."),
    P("kip848.subscription_metadata.3_6", COORD, "3.6+", E.TOPIC_METADATA_CHANGED,
      r"Computed new subscription metadata: (?P<x_metadata>\{.*\})\.$",
      "Computed new subscription metadata",
      f"Computed new subscription metadata: {{t1=TopicMetadata(id={_TOPIC_ID}, name=t1, numPartitions=6, "
      f"partitionRacks={{}})}}.",
      constants=KIP848, extract=x.subscription_metadata),
    P("kip848.epoch_bumped.3_6", COORD, "3.6+", E.GROUP_EPOCH_BUMPED,  # "with metadata hash" observed in 4.x
      r"Bumped group epoch to (?P<group_epoch>\d+)(?: with metadata hash (?P<a_metadata_hash>-?\d+))?\.$",
      "Bumped group epoch", "Bumped group epoch to 2 with metadata hash 2421248355301747518.",
      constants=KIP848),
    P("kip848.target.3_6", COORD, "3.6", E.TARGET_ASSIGNMENT_COMPUTED,
      r"Computed a new target assignment for epoch (?P<assignment_epoch>\d+): (?P<target_assignment>\{.*\})\.$",
      "Computed a new target assignment",
      f"Computed a new target assignment for epoch 4: {{{_KIP848_MEMBER}=MemberAssignment(partitions="
      f"{{{_TOPIC_ID}=[0, 1]}})}}.",
      constants=KIP848),
    P("kip848.target.3_7", COORD, "3.7", E.TARGET_ASSIGNMENT_COMPUTED,
      r"Computed a new target assignment for epoch (?P<assignment_epoch>\d+) with '(?P<protocol_name>[^']+)' "
      r"assignor: (?P<target_assignment>\{.*\})\.$",
      "Computed a new target assignment",
      f"Computed a new target assignment for epoch 4 with 'uniform' assignor: {{{_KIP848_MEMBER}=MemberAssignment("
      f"partitions={{{_TOPIC_ID}=[0, 1]}})}}.",
      constants=KIP848),
    P("kip848.target.3_8", COORD, "3.8-3.9", E.TARGET_ASSIGNMENT_COMPUTED,
      r"Computed a new target assignment for epoch (?P<assignment_epoch>\d+) with '(?P<protocol_name>[^']+)' "
      r"assignor in (?P<a_compute_ms>\d+)ms: (?P<target_assignment>\{.*\})\.$",
      "Computed a new target assignment",
      f"Computed a new target assignment for epoch 4 with 'uniform' assignor in 10ms: {{{_KIP848_MEMBER}="
      f"MemberAssignment(partitions={{{_TOPIC_ID}=[0, 1, 2]}})}}.",
      constants=KIP848),
    P("kip848.target.4_0", COORD, "4.0+", E.TARGET_ASSIGNMENT_COMPUTED,  # the map moved to DEBUG
      r"Computed a new target assignment for epoch (?P<assignment_epoch>\d+) with '(?P<protocol_name>[^']+)' "
      r"assignor in (?P<a_compute_ms>\d+)ms\.$",
      "Computed a new target assignment",
      "Computed a new target assignment for epoch 4 with 'uniform' assignor in 3ms.",
      constants=KIP848),
    P("kip848.transition.3_6", COORD, "3.6-3.7", E.MEMBER_EPOCH_UPDATED,
      r"Member (?P<member_id>\S+) transitioned from (?P<x_from>CurrentAssignment\(.*?\)) to "
      r"(?P<x_to>CurrentAssignment\(.*\))\.$",
      "transitioned from",
      f"Member {_KIP848_MEMBER} transitioned from CurrentAssignment(memberEpoch=3, previousMemberEpoch=2, "
      f"targetMemberEpoch=3, state=stable, assignedPartitions={{{_TOPIC_ID}=[0]}}, partitionsPendingRevocation={{}}, "
      f"partitionsPendingAssignment={{}}) to CurrentAssignment(memberEpoch=4, previousMemberEpoch=3, "
      f"targetMemberEpoch=4, state=stable, assignedPartitions={{{_TOPIC_ID}=[0, 1]}}, "
      f"partitionsPendingRevocation={{}}, partitionsPendingAssignment={{}}).",
      constants=KIP848, extract=x.current_assignment),
    P("kip848.assignment_state.3_8", COORD, "3.8+", E.MEMBER_EPOCH_UPDATED,  # 4.0: DEBUG; topics by id
      r"Member (?P<member_id>\S+) new assignment state: epoch=(?P<member_epoch>-?\d+), "
      r"previousEpoch=(?P<a_previous_epoch>-?\d+), state=(?P<a_state>\w+), assignedPartitions=(?P<partitions>\[.*?\])"
      r"(?: and revokedPartitions=(?P<x_revoked>\[.*?\]))?\.$",
      "new assignment state",
      f"Member {_KIP848_MEMBER} new assignment state: epoch=4, previousEpoch=3, state=STABLE, "
      f"assignedPartitions=[{_TOPIC_ID}-0, {_TOPIC_ID}-1] and revokedPartitions=[].",
      constants=KIP848, extract=x.revoked_attribute),
    P("kip848.left.3_6", COORD, "3.6+", E.MEMBER_REMOVED,
      r"Member (?P<member_id>\S+) left the consumer group\.$",
      "the consumer group", f"Member {_KIP848_MEMBER} left the consumer group.",
      constants={**KIP848, **_removed(RemovalReason.LEAVE_GROUP)}),
    P("kip848.static_left.3_7", COORD, "3.7+", E.MEMBER_REMOVED,
      r"Static Member (?P<member_id>\S+) with instance id (?P<group_instance_id>\S+) left the consumer group\.$",
      "the consumer group", f"Static Member {_KIP848_MEMBER} with instance id i1 left the consumer group.",
      constants={**KIP848, **_removed(RemovalReason.LEAVE_GROUP)}),
    # a static member leaving with epoch -2 (ConsumerGroupHeartbeat LEAVE_GROUP_STATIC_MEMBER_EPOCH) keeps its
    # assignment reserved until its session expires: member_removed with member_epoch -2, which the KIP-848
    # replayer reads as "stopped consuming, partitions reserved", not as a removal
    P("kip848.static_temporary_leave.3_7", COORD, "3.7+", E.MEMBER_REMOVED,
      r"Static Member (?P<member_id>\S+) with instance id (?P<group_instance_id>\S+) temporarily left the consumer "
      r"group\.$",
      "the consumer group", f"Static Member {_KIP848_MEMBER} with instance id i1 temporarily left the consumer group.",
      constants={**KIP848, **_removed(RemovalReason.LEAVE_GROUP), "member_epoch": "-2"}),
    P("kip848.fenced_session.3_6", COORD, "3.6-3.7", E.MEMBER_REMOVED,
      r"Member (?P<member_id>\S+) fenced from the group because its session expired\.$",
      "fenced from the group", f"Member {_KIP848_MEMBER} fenced from the group because its session expired.",
      constants={**KIP848, **_removed(RemovalReason.SESSION_TIMEOUT)}),
    P("kip848.fenced_revocation.3_6", COORD, "3.6-3.7", E.MEMBER_REMOVED,
      r"Member (?P<member_id>\S+) fenced from the group because it failed to revoke partitions within "
      r"(?P<a_timeout_ms>\d+)ms\.$",
      "fenced from the group",
      f"Member {_KIP848_MEMBER} fenced from the group because it failed to revoke partitions within 300000ms.",
      constants={**KIP848, **_removed(RemovalReason.REBALANCE_TIMEOUT)}),
    P("kip848.fenced_session.3_8", COORD, "3.8+", E.MEMBER_REMOVED,  # note Kafka's doubled '..'
      r"Member (?P<member_id>\S+) fenced from the group because the member session expired\.\.?$",
      "fenced from the group", f"Member {_KIP848_MEMBER} fenced from the group because the member session expired..",
      constants={**KIP848, **_removed(RemovalReason.SESSION_TIMEOUT)}),
    P("kip848.fenced_join_timeout.3_8", COORD, "3.8+", E.MEMBER_REMOVED,
      r"Member (?P<member_id>\S+) fenced from the group because the classic member failed to join within the "
      r"rebalance timeout\.\.?$",
      "fenced from the group",
      "Member c1-" + _UUID + " fenced from the group because the classic member failed to join within the "
      "rebalance timeout..",
      constants={**KIP848, **_removed(RemovalReason.REBALANCE_TIMEOUT)}),
    P("kip848.fenced_sync_timeout.3_8", COORD, "3.8+", E.MEMBER_REMOVED,
      r"Member (?P<member_id>\S+) fenced from the group because the member failed to sync within timeout\.\.?$",
      "fenced from the group",
      "Member c1-" + _UUID + " fenced from the group because the member failed to sync within timeout..",
      constants={**KIP848, **_removed(RemovalReason.PENDING_SYNC_TIMEOUT)}),
    P("kip848.fenced_transition.3_8", COORD, "3.8+", E.MEMBER_REMOVED,
      r"Member (?P<member_id>\S+) fenced from the group because it failed to transition from epoch "
      r"(?P<member_epoch>-?\d+) within (?P<a_timeout_ms>\d+)ms\.$",
      "fenced from the group",
      f"Member {_KIP848_MEMBER} fenced from the group because it failed to transition from epoch 5 within 300000ms.",
      constants={**KIP848, **_removed(RemovalReason.REBALANCE_TIMEOUT)}),
    P("kip848.static_refused.3_7", COORD, "3.7+", None,  # the NEW member is refused; nobody is removed
      r"Static member \S+ with instance id \S+ (?:is fenced by existing member|cannot join the group because the "
      r"instance id is is owned by member) \S+\.$",
      "with instance id",
      f"Static member {_KIP848_MEMBER} with instance id i1 is fenced by existing member 6nc1qt8rSeyTwBh__vZELQ."),
)

# ------------------------------------------------------------------------------------------------
# Client, classic protocol (AbstractCoordinator / ConsumerCoordinator / ConsumerRebalanceListenerInvoker),
# KIP-848 client (membership managers) and Connect (WorkerCoordinator / DistributedHerder)
# ------------------------------------------------------------------------------------------------
_NODE_TEXT = "kafka-1:9092 (id: 2147483646 rack: null)"
# AbstractConfig.logAll (0.10-4.x): "{SimpleClassName} values: " and one "\t{key} = {value}" line per setting,
# keys sorted from 0.10.1 (a tab a log shipper turned into spaces is read too); group_id from the group.id line (absent or `null`/empty: the extract makes no event)
_CONFIG_DUMP = (
    r"(?P<x_class>{}) values: ?\r?\n(?:(?:.*\n)?[ \t]+group\.id = (?P<group_id>[^\r\n]*?)\r?(?:\n|$))?"
)
CLIENT: tuple[MessagePattern, ...] = (
    P("client.discovered.0_10", MEMBER, "0.10-0.11", E.COORDINATOR_DISCOVERED,
      r"Discovered coordinator (?P<node>.+?) for group (?P<group_id>.+?)\.$",
      "Discovered ", f"Discovered coordinator {_NODE_TEXT} for group g1."),
    P("client.discovered.1_0", MEMBER, "1.0+", E.COORDINATOR_DISCOVERED,  # "group " from 1.1; KIP-848 prints Coordinator(...)
      r"Discovered (?:group )?coordinator (?P<node>.+)$",
      "Discovered ", f"Discovered group coordinator {_NODE_TEXT}"),
    P("client.coordinator_unavailable.1_1", MEMBER, "1.1+", E.COORDINATOR_UNAVAILABLE,
      r"Group coordinator (?P<node>.+?) is unavailable or invalid(?:, will attempt rediscovery| due to cause: "
      r"(?P<a_cause>.*?)\. ?isDisconnected: (?P<a_disconnected>\w+)\. Rediscovery will be attempted\.)$",
      "is unavailable or invalid",
      f"Group coordinator {_NODE_TEXT} is unavailable or invalid due to cause: coordinator unavailable. "
      "isDisconnected: false. Rediscovery will be attempted."),
    P("client.coordinator_dead.0_10", MEMBER, "0.10-1.0", E.COORDINATOR_UNAVAILABLE,
      r"Marking the coordinator (?P<node>.+?) dead(?: for group (?P<group_id>.+?))?\.?$",
      "Marking the coordinator", f"Marking the coordinator {_NODE_TEXT} dead for group g1"),
    # -- the member decides to (re)join
    P("client.heartbeat_rebalancing.0_9", MEMBER, "0.9", E.HEARTBEAT_REBALANCING,
      r"Attempt to heart beat failed since the group is rebalancing, try to re-join group\.$",
      "Attempt to heart", "Attempt to heart beat failed since the group is rebalancing, try to re-join group."),
    P("client.heartbeat_rebalancing.0_10", MEMBER, "0.10-0.11", E.HEARTBEAT_REBALANCING,  # DEBUG
      r"Attempt to heart ?beat failed for group (?P<group_id>.+?) since it is rebalancing\.$",
      "Attempt to heart", "Attempt to heartbeat failed for group g1 since it is rebalancing."),
    P("client.heartbeat_rebalancing.1_0", MEMBER, "1.0-2.8", E.HEARTBEAT_REBALANCING,  # INFO from 2.0
      r"Attempt to heartbeat failed since group is rebalancing$",
      "Attempt to heart", "Attempt to heartbeat failed since group is rebalancing"),
    P("client.heartbeat_error.2_0", MEMBER, "2.0+", None,  # the member learns it was removed/fenced
      r"Attempt to heartbeat (?:failed for since member id|failed since generation|with (?:stale )?Generation).*$",
      "Attempt to heart",
      "Attempt to heartbeat with Generation{generationId=4, memberId='c1-" + _UUID + "', protocol='range'} and "
      "group instance id Optional.empty failed due to UNKNOWN_MEMBER_ID, resetting generation"),
    # maybeLeaveGroup ends with resetGenerationOnLeaveGroup -> requestRejoin: bookkeeping of a member that
    # left (LeaveGroup, or a static member's close / poll timeout), not a rebalance signal; a later
    # JoinGroup of the consumer, as a new member, logs "(Re-)joining group"
    P("client.request_join_after_leave.3_0", MEMBER, "3.0+", None,
      r"Request joining group due to: consumer pro-actively leaving the group$",
      "Request joining group", "Request joining group due to: consumer pro-actively leaving the group"),
    # KIP-394: a JoinGroup without a member id is answered MEMBER_ID_REQUIRED with the new member's id,
    # which the next JoinGroup carries (AbstractCoordinator.JoinGroupResponseHandler)
    P("client.request_join_member_id.3_0", MEMBER, "3.0+", E.JOIN_REQUESTED,
      r"Request joining group due to: (?P<reason>need to re-join with the given member-id: (?P<member_id>\S+))$",
      "Request joining group", "Request joining group due to: need to re-join with the given member-id: c1-" + _UUID),
    P("client.request_join.3_0", MEMBER, "3.0+", E.JOIN_REQUESTED,
      r"Request joining group due to: (?P<reason>.*)$",
      "Request joining group", "Request joining group due to: group is already rebalancing"),
    P("client.need_revoke.2_7", MEMBER, "2.7-2.8", E.JOIN_REQUESTED,
      r"(?P<reason>Need to revoke partitions .* and re-join the group)$",
      "and re-join the group", "Need to revoke partitions [t1-2] and re-join the group"),
    P("client.rejoin_changed.2_7", MEMBER, "2.7-2.8", E.JOIN_REQUESTED,
      r"Requesting to re-join the group and trigger rebalance since the (?P<reason>.*)$",
      "Requesting to re-join", "Requesting to re-join the group and trigger rebalance since the subscription has changed from "
      "[t1] to [t1, t2]"),
    P("client.reset_generation.3_0", MEMBER, "3.0+", None,
      r"Resetting generation (?:and member id )?due to: .*$",
      "Resetting generation", "Resetting generation and member id due to: consumer pro-actively leaving the group",
      resets_member=True),
    # -- JoinGroup / SyncGroup round trip
    P("client.join_sent.0_10", MEMBER, "0.10-0.11", E.JOIN_SENT,  # DEBUG in 0.9
      r"\(Re-\)joining group (?P<group_id>.+)$",
      "joining group", "(Re-)joining group g1"),
    P("client.join_sent.1_0", MEMBER, "1.0+", E.JOIN_SENT,
      r"\(Re-\)joining group$",
      "joining group", "(Re-)joining group"),
    P("client.joined.0_10", MEMBER, "0.10-0.11", E.JOIN_RESPONSE,
      r"Successfully joined group (?P<group_id>.+?) with generation (?P<generation_id>-?\d+)$",
      "Successfully joined group", "Successfully joined group g1 with generation 5"),
    P("client.joined.1_0", MEMBER, "1.0-2.6", E.JOIN_RESPONSE,
      r"Successfully joined group with generation (?P<generation_id>-?\d+)$",
      "Successfully joined group", "Successfully joined group with generation 5"),
    P("client.joined.2_7", MEMBER, "2.7+", E.JOIN_RESPONSE,
      rf"Successfully joined group with generation {_GENERATION}$",
      "Successfully joined group",
      "Successfully joined group with generation Generation{generationId=5, memberId='c1-" + _UUID
      + "', protocol='range'}"),
    P("client.assignment.2_4", MEMBER, "2.4+", E.ASSIGNMENT_COMPUTED,  # leader only
      r"Finished assignment for group at generation (?P<generation_id>-?\d+): (?P<assignment>\{.*\})$",
      "Finished assignment for group",
      "Finished assignment for group at generation 5: {c1-" + _UUID + "=Assignment(partitions=[t1-0, t1-1]), "
      "c2-5485febc-752b-4881-b106-5829a1889014=Assignment(partitions=[t1-2])}"),
    P("client.assignment.0_9", MEMBER, "0.9-2.3", E.ASSIGNMENT_COMPUTED,  # DEBUG; no generation printed
      r"Finished assignment for group (?!at generation )(?P<group_id>.+?): (?P<assignment>\{.*\})$",
      "Finished assignment for group",
      "Finished assignment for group g1: {c1-" + _UUID + "=Assignment(partitions=[t1-0, t1-1])}"),
    P("client.static_leader_skip.3_2", MEMBER, "3.2+", None,
      r"Skipped assignment for returning static leader at generation -?\d+\..*$",
      "Skipped assignment", "Skipped assignment for returning static leader at generation 5. The static leader "
      "will continue with its existing assignment."),
    P("client.synced.2_7", MEMBER, "2.7+", E.SYNC_RESPONSE,
      rf"Successfully synced group in generation {_GENERATION}$",
      "Successfully synced group",
      "Successfully synced group in generation Generation{generationId=5, memberId='c1-" + _UUID
      + "', protocol='range'}"),
    # the member's full new assignment, right after the sync: completes the sync_response
    P("client.notify_assignor.2_6", MEMBER, "2.6+", E.SYNC_RESPONSE,
      r"Notifying assignor about the new Assignment\(partitions=(?P<partitions>\[[^\]]*\])"
      r"(?:, userDataSize=(?P<a_user_data_size>\d+))?\)$",
      "Notifying assignor", "Notifying assignor about the new Assignment(partitions=[t1-0, t1-1])",
      merge=True),
    P("client.updating_assignment.2_4", MEMBER, "2.4-2.5", E.SYNC_RESPONSE,  # COOPERATIVE only
      r"Updating assignment with\s*\nnow assigned partitions:.*",
      "Updating assignment with",
      "Updating assignment with\nnow assigned partitions: t1-0, t1-1\ncompare with previously owned partitions: "
      "t1-0\nnewly added partitions: t1-1\nrevoked partitions: \n",
      merge=True, multiline=True, extract=x.assignment_block),
    P("client.updating_assignment.2_6", MEMBER, "2.6+", E.SYNC_RESPONSE,  # COOPERATIVE only; KIP-848 client 3.7
      r"Updating assignment with\s*\n\s*Assigned partitions:.*",
      "Updating assignment with",
      "Updating assignment with\n\tAssigned partitions:                       [t1-0, t1-1]\n"
      "\tCurrent owned partitions:                  [t1-0]\n\tAdded partitions (assigned - owned):       [t1-1]\n"
      "\tRevoked partitions (owned - assigned):     []\n",
      merge=True, multiline=True, extract=x.assignment_block),
    # KIP-848 client: the member received a new target assignment and reconciles towards it (3.8 swaps the
    # member id and the local epoch: the extractor tells them apart)
    P("client.reconciling.3_8", MEMBER, "3.8+", E.SYNC_RESPONSE,
      r"Reconciling assignment with local epoch (?P<x_local_epoch>\S+)\s*\n\s*Member:.*",
      "Reconciling assignment",
      "Reconciling assignment with local epoch 1\n\tMember:                                    tKQVSQuHR9aBocp13XT9nw\n"
      "\tAssigned partitions:                       [t1-0, t1-1]\n\tCurrent owned partitions:                  "
      "[t1-0, t1-1, t1-2]\n\tAdded partitions (assigned - owned):       []\n\tRevoked partitions (owned - assigned):"
      "     [t1-2]\n",
      multiline=True, constants=KIP848, extract=x.assignment_block),
    # -- rebalance listener callbacks
    P("client.revoking.0_9", MEMBER, "0.9-0.11", E.PARTITIONS_REVOKED,
      r"Revoking previously assigned partitions (?P<partitions>\[.*?\]) for group (?P<group_id>.+)$",
      "previously assigned partitions", "Revoking previously assigned partitions [t1-0, t1-1] for group g1"),
    P("client.setting.0_9", MEMBER, "0.9-0.11", E.PARTITIONS_ASSIGNED,
      r"Setting newly assigned partitions (?P<partitions>\[.*?\]) for group (?P<group_id>.+)$",
      "newly assigned partitions", "Setting newly assigned partitions [t1-0, t1-1] for group g1"),
    P("client.revoking.1_0", MEMBER, "1.0-2.3 (KIP-848 membership manager 3.7+)", E.PARTITIONS_REVOKED,
      r"Revoking previously assigned partitions (?P<partitions>.*)$",
      "previously assigned partitions", "Revoking previously assigned partitions [t1-0, t1-1]"),
    P("client.setting.1_0", MEMBER, "1.0-2.1", E.PARTITIONS_ASSIGNED,
      r"Setting newly assigned partitions (?P<partitions>\[.*\])$",
      "newly assigned partitions", "Setting newly assigned partitions [t1-0, t1-1]"),
    P("client.setting.2_2", MEMBER, "2.2-2.3", E.PARTITIONS_ASSIGNED,
      r"Setting newly assigned partitions:(?P<partitions>.*)$",
      "newly assigned partitions", "Setting newly assigned partitions: t1-0, t1-1"),
    P("client.adding.2_4", MEMBER, "2.4+", E.PARTITIONS_ASSIGNED,  # brackets observed in 4.1-era clients
      r"Adding newly assigned partitions:(?P<partitions>.*)$",
      "newly assigned partitions", "Adding newly assigned partitions: t1-0, t1-1"),
    P("client.revoke.2_4", MEMBER, "2.4+", E.PARTITIONS_REVOKED,  # KIP-848: restates the manager's "Revoking"
      r"Revoke previously assigned partitions(?P<partitions>.*)$",
      "previously assigned partitions", "Revoke previously assigned partitions t1-0, t1-1",
      merge=True),
    P("client.lost.2_4", MEMBER, "2.4+", E.PARTITIONS_LOST,
      r"Lost previously assigned partitions(?P<partitions>.*)$",
      "previously assigned partitions", "Lost previously assigned partitions t1-0, t1-1"),
    P("client.giving_away_lost.2_4", MEMBER, "2.4+", None,  # the "Lost previously assigned" line follows
      r"Giving away all assigned partitions as lost since generation.*$",
      "as lost since generation", "Giving away all assigned partitions as lost since generation has been reset,"
      "indicating that consumer is no longer part of the group"),
    # -- leaving
    P("client.leave.2_1", MEMBER, "0.10-2.1", E.LEAVE_SENT,  # DEBUG before 2.1
      r"Sending LeaveGroup request to coordinator (?P<node>.+?)(?: for group (?P<group_id>.+?))?$",
      "LeaveGroup request", f"Sending LeaveGroup request to coordinator {_NODE_TEXT}"),
    P("client.leave.2_2", MEMBER, "2.2+", E.LEAVE_SENT,  # "due to" from 2.4
      r"Member (?P<member_id>\S+) sending LeaveGroup request to coordinator (?P<node>.+?)(?: due to (?P<reason>.*))?$",
      "LeaveGroup request",
      f"Member c1-{_UUID} sending LeaveGroup request to coordinator {_NODE_TEXT} due to the consumer is being closed"),
    P("client.poll_timeout.2_1", MEMBER, "2.1-2.3", E.POLL_TIMEOUT_EXPIRED,  # WARN
      r"This member will leave the group because consumer poll timeout has expired\..*$",
      "poll timeout has expired", "This member will leave the group because consumer poll timeout has expired. This "
      "means the time between subsequent calls to poll() was longer than the configured max.poll.interval.ms"),
    P("client.poll_timeout.2_4", MEMBER, "2.4+", E.POLL_TIMEOUT_EXPIRED,  # WARN; KIP-848 client capitalises
      r"(?:[Cc]onsumer|worker) poll timeout has expired\..*$",
      "poll timeout has expired", "consumer poll timeout has expired. This means the time between subsequent calls "
      "to poll() was longer than the configured max.poll.interval.ms"),
    P("client.poll_timeout_rejoin.4_0", MEMBER, "4.0+", E.POLL_TIMEOUT_EXPIRED,
      r"Time between subsequent calls to poll\(\) was longer than the configured max\.poll\.interval\.ms, exceeded "
      r"approximately by (?P<a_exceeded_ms>\d+) ms\. Member (?P<member_id>\S+) will rejoin the group now\.$",
      "max.poll.interval.ms", "Time between subsequent calls to poll() was longer than the configured "
      f"max.poll.interval.ms, exceeded approximately by 512 ms. Member {_KIP848_MEMBER} will rejoin the group now."),
    P("client.round_failed.2_7", MEMBER, "2.7+", None,  # a round aborted; the member rejoins
      r"(?:JoinGroup|SyncGroup) failed.*$",
      "Group failed", "SyncGroup failed: The group began another rebalance. Need to re-join the group. Sent "
      "generation was Generation{generationId=5, memberId='c1', protocol='range'}"),
    P("client.generation_cleared.2_7", MEMBER, "2.7+", None,
      r"Generation data was cleared by heartbeat thread.*$",
      "Generation data was cleared", "Generation data was cleared by heartbeat thread to Generation{generationId=-1, "
      "memberId='', protocol='null'} and state is now UNJOINED before receiving SyncGroup response, marking this "
      "rebalance as failed and retry"),
    P("client.leave_failed.2_2", MEMBER, "2.2+", None,
      r"LeaveGroup request (?:with .* )?failed.*$",
      "LeaveGroup request", "LeaveGroup request with Generation{generationId=5, memberId='c1', protocol='range'} "
      "failed with error: The coordinator is not aware of this member."),
    # -- KIP-848 client state machine (TRACE <=3.9, INFO 4.0+)
    P("client.member_transition.3_7", MEMBER, "3.7+", E.MEMBER_STATE_CHANGED,
      r"Member (?P<member_id><no ID>|\S+)(?: with epoch (?P<member_epoch>-?\d+))? transitioned from (?P<a_from_state>\w+) "
      r"to (?P<a_to_state>\w+)\.$",
      "transitioned from", "Member tKQVSQuHR9aBocp13XT9nw with epoch 1 transitioned from STABLE to RECONCILING.",
      constants=KIP848),
    P("client.member_fenced.3_7", MEMBER, "3.7+", None,
      r"Member \S+ with epoch -?\d+ (?:got fenced|transitioned to fatal state).*$",
      "with epoch", "Member tKQVSQuHR9aBocp13XT9nw with epoch 3 got fenced but it is already preparing to leave "
      "the group, so it will stop sending heartbeat and won't attempt to send the leave request or rejoin."),
    # -- the client's configuration, logged whole at its construction (AbstractConfig.logAll, INFO, by the
    # config class's own logger, without the `[Consumer …]` prefix): one event per client; a dump without a
    # group.id (an assign()-only consumer, Connect's internal log readers) yields none (extract: [])
    P("client.config.0_10", MEMBER, "0.10+", E.CLIENT_CONFIG,
      _CONFIG_DUMP.format("(?:Share)?ConsumerConfig"), "ConsumerConfig values: ",
      "ConsumerConfig values: \n\tallow.auto.create.topics = true\n\tclient.id = c-1\n\tgroup.id = g1\n"
      "\tgroup.instance.id = null\n\theartbeat.interval.ms = 3000\n\tmax.poll.interval.ms = 300000\n"
      "\tpartition.assignment.strategy = [class org.apache.kafka.clients.consumer.RangeAssignor, "
      "class org.apache.kafka.clients.consumer.CooperativeStickyAssignor]\n\tsession.timeout.ms = 45000\n",
      multiline=True, extract=x.client_config),
    P("connect.config.0_10", MEMBER, "0.10+", E.CLIENT_CONFIG,
      _CONFIG_DUMP.format("DistributedConfig"), "DistributedConfig values: ",
      "DistributedConfig values: \n\tclient.id = \n\tconnect.protocol = sessioned\n\tgroup.id = g1\n"
      "\theartbeat.interval.ms = 3000\n\trebalance.timeout.ms = 60000\n"
      "\tscheduled.rebalance.max.delay.ms = 300000\n\tsession.timeout.ms = 10000\n",
      multiline=True, extract=x.client_config),
    # -- Connect worker (KIP-415 incremental cooperative); tasks replay as TopicPartition(connector, task)
    P("connect.rebalance_started.2_3", MEMBER, "2.3+", E.JOIN_REQUESTED,
      r"Rebalance started$",
      "Rebalance started", "Rebalance started",
      constants={"reason": REBALANCE_STARTED}),
    P("connect.forcing_rebalance", MEMBER, "1.0+", E.JOIN_REQUESTED,
      r"(?P<reason>Current config state offset \S+ does not match group assignment \S+\. Forcing rebalance\.)$",
      "Forcing rebalance", "Current config state offset 7 does not match group assignment 5. Forcing rebalance."),
    P("connect.joined.2_4", MEMBER, "2.4+", E.SYNC_RESPONSE,
      r"Joined group at generation (?P<generation_id>-?\d+) with protocol version (?P<a_protocol_version>\d+) and got "
      r"assignment: (?P<x_assignment>Assignment\{.*\}) with rebalance delay: (?P<a_delay_ms>-?\d+)$",
      "Joined group",
      "Joined group at generation 4 with protocol version 2 and got assignment: Assignment{error=0, leader='w1-"
      + _UUID + "', leaderUrl='http://w1:8083/', offset=7, connectorIds=[c1], taskIds=[c1-0], revokedConnectorIds=[], "
      "revokedTaskIds=[], delay=0} with rebalance delay: 0",
      merge=True, extract=x.connect_assignment),
    P("connect.joined.2_3", MEMBER, "2.3", E.SYNC_RESPONSE,
      r"Joined group at generation (?P<generation_id>-?\d+) and got assignment: (?P<x_assignment>Assignment\{.*\})$",
      "Joined group",
      "Joined group at generation 4 and got assignment: Assignment{error=0, leader='w1-" + _UUID + "', "
      "leaderUrl='http://w1:8083/', offset=7, connectorIds=[c1], taskIds=[c1-0], revokedConnectorIds=[], "
      "revokedTaskIds=[], delay=0}",
      merge=True, extract=x.connect_assignment),
    P("connect.joined.0_10", MEMBER, "0.10-2.2", E.SYNC_RESPONSE,  # eager: the full assignment
      r"Joined group and got assignment: (?P<x_assignment>Assignment\{.*\})$",
      "Joined group",
      "Joined group and got assignment: Assignment{error=0, leader='w1-" + _UUID + "', leaderUrl='http://w1:8083/', "
      "offset=7, connectorIds=[c1], taskIds=[c1-0, c1-1]}",
      merge=True, extract=x.connect_assignment),
    P("connect.rebalance_bookkeeping.2_3", MEMBER, "2.3+", None,
      r"Finished (?:stopping tasks|flushing status backing store) in preparation for rebalance$",
      "in preparation for rebalance", "Finished stopping tasks in preparation for rebalance"),
    P("connect.resume_failed", MEMBER, "1.0+", None,
      r"Wasn't able to resume work after last rebalance.*$",
      "resume work after last rebalance", "Wasn't able to resume work after last rebalance, can skip stopping "
      "connectors and tasks"),
    # the worker stops its tasks on its own; the group sees it only when it rejoins
    P("connect.coordinator_unreachable.2_4", MEMBER, "2.4+", None,
      r"Broker coordinator was unreachable for \d+ms\. Revoking previous assignment .*$",
      "Broker coordinator was unreachable", "Broker coordinator was unreachable for 3000ms. Revoking previous "
      "assignment Assignment{error=0, leader='w1', leaderUrl='http://w1:8083/', offset=7, connectorIds=[c1], "
      "taskIds=[c1-0], revokedConnectorIds=[], revokedTaskIds=[], delay=0} to avoid running tasks while not being "
      "a member the group"),
)
# fmt: on

PATTERNS: tuple[MessagePattern, ...] = BROKER_CLASSIC + BROKER_KIP848 + CLIENT
PATTERNS_BY_SIDE: dict[Side, tuple[MessagePattern, ...]] = {
    side: tuple(p for p in PATTERNS if p.side == side) for side in Side
}

# ------------------------------------------------------------------------------------------------
# Kafka's message prefixes (part of the message text, after the layout's envelope). Each says who logs
# and, for clients, which group; `kind` selects the rows above (broker -> coordinator rows, client ->
# member rows). Connect's MDC context (`[connector|task-0] `) may precede them and is removed first.
# ------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class PrefixPattern:
    name: str
    kind: str  # broker | client | streams | other
    versions: str
    regex: str
    compiled: re.Pattern = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "compiled", re.compile(self.regex))


# fmt: off
PREFIXES: tuple[PrefixPattern, ...] = (
    PrefixPattern("broker.scala", "broker", "0.9-3.9", r"\[GroupCoordinator (?P<broker_id>\d+)\]: "),
    PrefixPattern("broker.scala_metadata_manager", "broker", "1.0-3.9",
                  r"\[GroupMetadataManager brokerId=(?P<broker_id>\d+)\] "),
    PrefixPattern("broker.scala_metadata_manager_old", "broker", "0.9-0.11",
                  r"\[Group Metadata Manager on Broker (?P<broker_id>\d+)\]: "),
    PrefixPattern("broker.java", "broker", "3.6+",
                  r"\[GroupCoordinator id=(?P<broker_id>\d+)(?: topic=\S+ partition=(?P<offsets_partition>\d+))?\] "
                  r"(?:\[(?:GroupId |Group |GroupId=)(?P<group_id>[^\]]+)\] )?"),
    PrefixPattern("client.consumer", "client", "1.0+",
                  r"\[(?P<client_kind>Consumer|ShareConsumer|Worker) (?P<client_fields>(?:\w+=[^,\]]*(?:, )?)+)\] "),
    PrefixPattern("client.streams", "streams", "1.0+", r"stream-(?:thread|client) \[[^\]]*\] "),
    PrefixPattern("client.other", "other", "1.0+",
                  r"\[(?:Producer|AdminClient|LegacyAdminClient|Admin) [^\]]*\] "),
)
# fmt: on

# Connect's `%X{connector.context}`: `[connector|task-0] `, `[connector|worker] ` (2.3+).
CONNECT_MDC = re.compile(r"(?:\[[^\]|\s]+\|[^\]\s]+\] )+")

PROTOCOL_TYPE_BY_CLIENT_KIND = {"Consumer": "consumer", "ShareConsumer": "share", "Worker": "connect"}

Release = tuple[int, int]  # (major, minor)

# a row's `versions`: "2.1-3.9", "0.9-0.10.2", "3.0+", "2.8", then optionally a space and a remark
_RELEASES = re.compile(r"^(?P<low>\d+\.\d+(?:\.\d+)?)(?:(?P<plus>\+)|-(?P<high>\d+\.\d+(?:\.\d+)?))?(?:$|\s)")


def release_range(versions: str) -> tuple[Release, Release | None] | None:
    """(oldest, newest) release printing a wording, from the `versions` of its row; newest None for "+"
    (up to the newest release); text after the range and a space is allowed ("1.0-2.3 (KIP-848 membership
    manager 3.7+)"). None when `versions` does not open with a range."""
    m = _RELEASES.match(versions)
    if m is None:
        return None
    oldest = _release(m["low"])
    return oldest, None if m["plus"] else _release(m["high"] or m["low"])


def _release(text: str) -> Release:
    major, minor = text.split(".")[:2]
    return int(major), int(minor)
