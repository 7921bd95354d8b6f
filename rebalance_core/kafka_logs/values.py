"""Parsers for the values Kafka prints inside its group log messages (Java/Scala `toString` forms).

Each function takes the text Kafka printed and returns plain Python values; malformed text raises
`ValueError` (the parser turns that into a quarantine row with the message).
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from rebalance_core.events import Assignment, Partitions, TopicPartition

# Kafka's Node.toString: `host:port (id: N rack: R)`; 4.x appends ` isFenced: false`. For the group
# coordinator the client builds the node with id = Integer.MAX_VALUE - brokerId
# (AbstractCoordinator / FindCoordinatorResponse handling), so the broker id is recovered from it.
_NODE = re.compile(r"(?P<address>\S+) \(id: (?P<node_id>-?\d+) rack: [^)]*\)")
# KIP-848 client (CoordinatorRequestManager, 4.x): the FindCoordinator response's Coordinator data.
_COORDINATOR_DATA = re.compile(
    r"Coordinator\(key='[^']*', nodeId=(?P<node_id>-?\d+), host='(?P<host>[^']*)', port=(?P<port>\d+)"
)
_COORDINATOR_NODE_ID_BASE = 2147483647


def partition_list(text: str, topic_names: Mapping[str, str] | None = None) -> Partitions:
    """`[t-0, t-1]`, `t-0, t-1`, `{t-0}`, `[]` or `` (Kafka prints sets with and without brackets,
    Utils.join without). The number after the last '-' is the partition; topic names may contain '-'.
    `topic_names` maps topic ids (KIP-848 broker lines) to names."""
    body = text.strip()
    if body[:1] in "[{" and body[-1:] in "]}":
        body = body[1:-1].strip()
    if not body:
        return ()
    names = topic_names or None  # looked up once, not per item (a hot path of the parser)
    out = []
    for item in body.split(","):
        item = item.strip()
        topic, dash, number = item.rpartition("-")
        if not dash or not topic or not number.isdigit():
            raise ValueError(f"not a topic-partition: {item!r}")
        out.append(TopicPartition(names.get(topic, topic) if names else topic, int(number)))
    return tuple(out)


def partitions_text(partitions: Partitions) -> str:
    """Comma list used in string attributes (`t-0,t-1`)."""
    return ",".join(str(tp) for tp in partitions)


def _topic_name(topic: str, topic_names: Mapping[str, str] | None) -> str:
    return topic_names.get(topic, topic) if topic_names else topic


# ConsumerPartitionAssignor.Assignment.toString: `Assignment(partitions=[t-0], userDataSize=12)`.
_CLASSIC_MEMBER_ASSIGNMENT = re.compile(
    r"(?P<member>[^\s=,{}]+)=Assignment\(partitions=\[(?P<partitions>[^\]]*)\][^)]*\)"
)


def classic_assignment(text: str) -> Assignment:
    """The leader's "Finished assignment" map: `{m1=Assignment(partitions=[t-0]), m2=...}`."""
    out: Assignment = {}
    for m in _CLASSIC_MEMBER_ASSIGNMENT.finditer(text):
        out[m["member"]] = partition_list(m["partitions"])
    if not out and text.strip() not in ("{}", ""):
        raise ValueError("no member assignment found")
    return out


# KIP-848 broker: `{m1=MemberAssignment(partitions={topicId=[0, 1]}), ...}` (MemberAssignmentImpl).
_TARGET_MEMBER_ASSIGNMENT = re.compile(
    r"(?P<member>[^\s=,{}]+)=MemberAssignment\w*\(partitions=\{(?P<topics>[^}]*)\}\)"
)
_TOPIC_PARTITION_NUMBERS = re.compile(r"(?P<topic>[^\s=,{}\[\]]+)=\[(?P<numbers>[^\]]*)\]")


def target_assignment(text: str, topic_names: Mapping[str, str] | None = None) -> Assignment:
    out: Assignment = {}
    for m in _TARGET_MEMBER_ASSIGNMENT.finditer(text):
        out[m["member"]] = topic_partition_numbers(m["topics"], topic_names)
    if not out and text.strip() not in ("{}", ""):
        raise ValueError("no member assignment found")
    return out


def topic_partition_numbers(text: str, topic_names: Mapping[str, str] | None = None) -> Partitions:
    """`topicId=[0, 1], topicId2=[3]` (a Map<Uuid, Set<Integer>> printed by Java)."""
    out = []
    for m in _TOPIC_PARTITION_NUMBERS.finditer(text):
        topic = _topic_name(m["topic"], topic_names)
        out.extend(TopicPartition(topic, int(n)) for n in m["numbers"].split(",") if n.strip())
    return tuple(out)


def scala_option(text: str) -> str | None:
    """`Some(x)` / `None` (Scala), `Optional[x]` / `Optional.empty` (Java), `null`."""
    text = text.strip()
    if text in ("None", "null", "Optional.empty", ""):
        return None
    for head, tail in (("Some(", ")"), ("Optional[", "]")):
        if text.startswith(head) and text.endswith(tail):
            return text[len(head) : -len(tail)]
    return text


def id_collection(text: str) -> tuple[str, ...]:
    """`Set(a, b)` (Scala), `[a, b]` / `{a, b}` (Java collections) -> ids."""
    body = text.strip().rstrip(".")
    body = re.sub(r"^(?:\w*Set|List)\(", "(", body)
    if body[:1] in "([{" and body[-1:] in ")]}":
        body = body[1:-1]
    return tuple(item.strip() for item in body.split(",") if item.strip())


def coordinator_node(text: str) -> dict[str, str]:
    """Attributes for a coordinator printed by a client: address and broker id."""
    m = _NODE.search(text)
    if m:
        node_id = int(m["node_id"])
        broker_id = (
            _COORDINATOR_NODE_ID_BASE - node_id if node_id > _COORDINATOR_NODE_ID_BASE // 2 else node_id
        )
        return {"coordinator": m["address"], "coordinator_id": str(broker_id)}
    m = _COORDINATOR_DATA.search(text)
    if m:
        return {"coordinator": f"{m['host']}:{m['port']}", "coordinator_id": m["node_id"]}
    raise ValueError(f"not a coordinator node: {text!r}")


# Scala MemberMetadata.toString (3.0-3.9), e.g. `MemberMetadata(memberId=m, groupInstanceId=None,
# clientId=c, clientHost=/1.2.3.4, sessionTimeoutMs=45000, rebalanceTimeoutMs=300000,
# supportedProtocols=List(range, cooperative-sticky))`.
_MEMBER_METADATA_FIELD = re.compile(r"(?P<key>\w+)=(?P<value>List\([^)]*\)|[^,()]*(?:\([^)]*\))?)")


def member_metadata(text: str) -> dict[str, str]:
    inner = text.strip()
    if not (inner.startswith("MemberMetadata(") and inner.endswith(")")):
        raise ValueError("not a MemberMetadata")
    fields = {
        m["key"]: m["value"].strip()
        for m in _MEMBER_METADATA_FIELD.finditer(inner[len("MemberMetadata(") : -1])
    }
    if "memberId" not in fields:
        raise ValueError("MemberMetadata without memberId")
    return fields


# Connect (Extended)ConnectProtocol.Assignment.toString, e.g. `Assignment{error=0, leader='w1',
# leaderUrl='http://w1:8083/', offset=7, connectorIds=[c], taskIds=[c-0], revokedConnectorIds=[],
# revokedTaskIds=[], delay=0}`.
_CONNECT_FIELD = re.compile(r"(?P<key>\w+)=(?:'(?P<quoted>[^']*)'|\[(?P<items>[^\]]*)\]|(?P<plain>[^,}]*))")


def connect_assignment(text: str) -> dict[str, str | tuple[str, ...]]:
    body = text.strip()
    if not (body.startswith("Assignment{") and body.endswith("}")):
        raise ValueError("not a Connect Assignment")
    out: dict[str, str | tuple[str, ...]] = {}
    for m in _CONNECT_FIELD.finditer(body[len("Assignment{") : -1]):
        if m["items"] is not None:
            out[m["key"]] = tuple(i.strip() for i in m["items"].split(",") if i.strip())
        else:
            out[m["key"]] = m["quoted"] if m["quoted"] is not None else m["plain"].strip()
    if "connectorIds" not in out:
        raise ValueError("Connect Assignment without connectorIds")
    return out


def connect_tasks(task_ids: tuple[str, ...]) -> Partitions:
    """Connect tasks as TopicPartition(connector, task number): ConnectorTaskId prints `{connector}-{task}`,
    the same shape as a topic-partition, so task movements replay like partition movements."""
    return partition_list(", ".join(task_ids))


# Client "Updating assignment with" (ConsumerCoordinator.onJoinComplete, COOPERATIVE only) and KIP-848
# "Reconciling assignment with local epoch" blocks: one labelled partition list per line.
_BLOCK_LABELS = {
    "now assigned partitions": "assigned",  # 2.4-2.5
    "compare with previously owned partitions": "owned",
    "newly added partitions": "added",
    "revoked partitions": "revoked",
    "assigned partitions": "assigned",  # 2.6+, KIP-848 client
    "current owned partitions": "owned",
    "added partitions (assigned - owned)": "added",
    "revoked partitions (owned - assigned)": "revoked",
    "member": "member",  # KIP-848 client 3.8+
}


def labelled_block(text: str) -> dict[str, str]:
    """`label: value` lines of a multi-line block -> {assigned|owned|added|revoked|member: value}."""
    out = {}
    for line in text.splitlines()[1:]:
        label, colon, value = line.partition(":")
        key = _BLOCK_LABELS.get(label.strip().lower())
        if colon and key:
            out[key] = value.strip()
    return out


# KIP-848 broker 3.6-3.7: ConsumerGroupMember.currentAssignmentSummary().
_CURRENT_ASSIGNMENT = re.compile(
    r"CurrentAssignment\(memberEpoch=(?P<epoch>-?\d+), previousMemberEpoch=(?P<previous>-?\d+), "
    r"(?:targetMemberEpoch=(?P<target>-?\d+), )?state=(?P<state>\w+), assignedPartitions=\{(?P<assigned>[^}]*)\}"
    r"(?:, partitionsPendingRevocation=\{(?P<revoking>[^}]*)\})?"
)


def current_assignment(text: str) -> dict[str, str]:
    m = _CURRENT_ASSIGNMENT.search(text)
    if not m:
        raise ValueError("not a CurrentAssignment")
    return {k: v for k, v in m.groupdict().items() if v is not None}


# KIP-848 broker: "Computed new subscription metadata: {t=TopicMetadata(id=..., name=t, numPartitions=6, ...)}".
_TOPIC_METADATA = re.compile(
    r"TopicMetadata\(id=(?P<id>[^,\s]+), name=(?P<name>[^,\s]+), numPartitions=(?P<count>\d+)"
)


def subscription_metadata(text: str) -> dict[str, tuple[str, int]]:
    """topic name -> (topic id, partition count)."""
    return {m["name"]: (m["id"], int(m["count"])) for m in _TOPIC_METADATA.finditer(text)}
