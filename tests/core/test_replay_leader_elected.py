"""A leader that does not rejoin before the join phase ends is replaced by a member that did
(GroupMetadata.maybeElectNewJoinedLeader, Scala 2.3-3.9; ClassicGroup.maybeElectNewJoinedLeader, Java): the line
Kafka logs then names the new leader, which leads the generation that completes next."""

from __future__ import annotations

from rebalance_core.kafka_logs import parse_lines
from tests.builders import scala_line
from tests.core.broker_log import replay_log

C1 = "c1-6442c601-9227-4f06-b7c3-755f6f5d5b8a"
C2 = "c2-e918e1fa-84d9-47fe-a010-51b79549c2f8"
C2_AGAIN = "c2-250c8c5b-d1a4-465f-9be7-faaec7097636"
C4 = "c4-62cffd9c-557b-4885-80bc-adb4b74f17f0"
OFFSETS = "(__consumer_offsets-21)"


def _static_join(ts: str, instance: str, member: str, old_generation: int) -> list[str]:
    """2.5-2.8: a new static member's join line, then the rebalance it starts."""
    return [
        scala_line(ts, f"Adding new static member {instance} to group g1 with member id {member}."),
        scala_line(
            ts,
            f"Preparing to rebalance group g1 in state PreparingRebalance with old generation {old_generation} "
            f"{OFFSETS} (reason: Adding new member {member} with group instance id Some({instance}))",
        ),
    ]


def _generation(ts: str, generation: int, members: int) -> list[str]:
    """2.8: "Stabilized" with the count, then the leader's SyncGroup (2.x names no leader)."""
    return [
        scala_line(
            f"{ts},000", f"Stabilized group g1 generation {generation} {OFFSETS} with {members} members"
        ),
        scala_line(
            f"{ts},030",
            f"Assignment received from leader for group g1 for generation {generation}. The group has {members} "
            f"members, {members} of which are static.",
        ),
    ]


def _scala_elected(ts: str, previous: str, previous_instance: str, leader: str, instance: str) -> str:
    """GroupMetadata logs with no "[GroupCoordinator N]" prefix (it has no logIdent) and no group id."""
    metadata = (
        f"MemberMetadata(memberId={leader}, groupInstanceId=Some({instance}), clientId={instance}, "
        f"clientHost=/10.0.0.1, sessionTimeoutMs=45000, rebalanceTimeoutMs=300000, supportedProtocols=List(range), )"
    )
    return (
        f"[2024-11-08 {ts}] INFO Group leader [member.id: {previous}, group.instance.id: Some({previous_instance})] "
        f"failed to join before rebalance timeout, while new leader {metadata} was elected. "
        "(kafka.coordinator.group.GroupMetadata)"
    )


def _leaders(out: dict[str, list[dict]]) -> dict[int, str | None]:
    return {g["generation_id"]: g["leader_member_id"] for g in out["generations"]}


def test_a_leader_that_did_not_rejoin_is_replaced_by_the_member_the_line_names():
    """2.8 broker: c2 leads generations 1-2 (it joined the empty group first, GroupMetadata.add). In the round
    c1 starts, static c2 does not rejoin within the rebalance timeout; it stays a member (onCompleteJoin removes
    only dynamic members) and c1, which did rejoin, is elected: c1 leads generation 3. When c2 later rejoins
    with an unknown member id (replaceStaticMember) the leadership does not follow it: c2 no longer leads, so
    generation 4 is never c2's new id. c1's own rejoin (a known static member's JoinGroup) is not logged at
    INFO, but its completion ran maybeElectNewJoinedLeader again (GroupCoordinator.onCompleteJoin), which
    logged nothing this time, in a log that shows its lines: c1 rejoined and leads generation 4."""
    lines = [
        *_static_join("10:00:00,000", "c2", C2, 0),
        *_generation("10:00:00", 1, 1),
        *_static_join("10:00:10,000", "c4", C4, 1),
        *_generation("10:00:10", 2, 2),
        *_static_join("10:01:00,000", "c1", C1, 2),
        _scala_elected("10:06:00,000", C2, "c2", C1, "c1"),
        *_generation("10:06:00", 3, 3),
        scala_line(
            "10:06:45,000",
            f"Static member c2 of group g1 with unknown member id rejoins, assigning new member id {C2_AGAIN}, "
            f"while old member id {C2} will be removed.",
        ),
        scala_line(
            "10:06:45,000",
            f"Preparing to rebalance group g1 in state PreparingRebalance with old generation 3 {OFFSETS} "
            f"(reason: Updating metadata for static member {C2_AGAIN} with instance id c2)",
        ),
        *_generation("10:06:46", 4, 3),
    ]
    leaders = _leaders(replay_log(lines))
    assert leaders[3] == C1
    assert leaders[4] == C1


def test_the_java_coordinators_election_line_names_both_leaders():
    """ClassicGroup.maybeElectNewJoinedLeader (Java coordinator): the new leader printed as its
    ClassicGroupMember; the group comes from the file's earlier line naming the old leader."""
    prefix = "[GroupCoordinator id=1 topic=__consumer_offsets partition=21]"
    logger = "org.apache.kafka.coordinator.group.GroupMetadataManager"
    lines = [
        f"[2024-11-08 10:00:00,000] INFO {prefix} Static member with groupInstanceId=c2 and unknown member id "
        f"joins group g1 in Empty state. Created a new member id {C2} for this member and add to the group. "
        f"({logger})",
        f"[2024-11-08 10:06:00,000] INFO {prefix} Group leader [memberId: {C2}, groupInstanceId: c2] failed to "
        f"join before the rebalance timeout. Member ClassicGroupMember(memberId='{C1}', groupInstanceId='c1', "
        "clientId='c1', clientHost='/10.0.0.1', rebalanceTimeoutMs=300000, sessionTimeoutMs=45000, "
        "protocolType='consumer', supportedProtocols=[range]) was elected as the new leader. "
        "(org.apache.kafka.coordinator.group.classic.ClassicGroup)",
    ]
    parsed = parse_lines(lines, file="server.log", cluster="k")
    assert not parsed.quarantine
    elected = parsed.events[-1]
    assert (elected.event_type, elected.group_id, elected.leader_id) == ("leader_elected", "g1", C1)
    assert elected.attributes["previous_leader_id"] == C2
