"""The one small interface every assignor implements.

It mirrors what Kafka hands an assignor: the client-side `ConsumerPartitionAssignor.assign(Cluster,
GroupSubscription)` (topic metadata + each member's Subscription: topics, owned partitions,
generation, group.instance.id, rack) and the broker-side KIP-848 `ConsumerGroupPartitionAssignor
.assign(GroupSpec, SubscribedTopicDescriber)` (the same facts, topics named by id).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import Enum
from typing import Protocol

from rebalance_core.events import TopicPartition


class RebalanceProtocol(str, Enum):
    """ConsumerPartitionAssignor.RebalanceProtocol (KIP-429)."""

    EAGER = "eager"
    COOPERATIVE = "cooperative"


class AssignmentError(ValueError):
    """Input an assignor cannot work with (as opposed to a topic that simply does not exist)."""


@dataclass(frozen=True)
class MemberSubscription:
    """One member as the assignor sees it (Kafka's `Subscription` / KIP-848 `MemberSubscriptionSpec`).

    `owned` is what the member last owned: `Subscription.ownedPartitions` for cooperative and KIP-848
    assignors, and the previous assignment carried in user data for the eager StickyAssignor.
    `generation` is the generation that ownership is from (None: unknown, Kafka's DEFAULT_GENERATION).
    """

    member_id: str
    subscription: tuple[str, ...]
    group_instance_id: str | None = None
    owned: tuple[TopicPartition, ...] = ()
    generation: int | None = None
    rack: str | None = None


@dataclass(frozen=True)
class GroupSpec:
    """Everything an assignor needs: topic metadata and the members.

    topics: topic -> partition count. A subscribed topic missing here has no partitions (as in Kafka,
        where metadata lacks it): not an error.
    partition_racks: topic -> per partition, the racks of its replicas (KIP-881 rack awareness).
    topic_ids: topic -> Kafka topic id (KIP-848 assignors order and hash by topic id).
    """

    topics: Mapping[str, int]
    members: tuple[MemberSubscription, ...]
    partition_racks: Mapping[str, tuple[frozenset[str], ...]] = field(default_factory=dict)
    topic_ids: Mapping[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        seen: set[str] = set()
        for m in self.members:
            if m.member_id in seen:
                raise AssignmentError(f"duplicate member id {m.member_id!r}")
            seen.add(m.member_id)
        for topic, count in self.topics.items():
            if count < 0:
                raise AssignmentError(f"negative partition count {count} for topic {topic!r}")

    def partitions_of(self, topic: str) -> list[TopicPartition]:
        return [TopicPartition(topic, p) for p in range(self.topics.get(topic, 0))]

    def topic_id(self, topic: str) -> str:
        """The topic's id; without ids, the name stands for it (documented in the CLI help)."""
        return self.topic_ids.get(topic, topic)


GroupAssignment = dict[str, list[TopicPartition]]


class Assignor(Protocol):
    """`name` is what Kafka calls it (`partition.assignment.strategy` / `group.consumer.assignors`)."""

    name: str
    supported_protocols: tuple[RebalanceProtocol, ...]

    def assign(self, spec: GroupSpec) -> GroupAssignment:
        """member_id -> sorted partitions, with every member present (possibly with no partitions)."""
        ...


def empty_assignment(spec: GroupSpec) -> GroupAssignment:
    return {m.member_id: [] for m in spec.members}


def sorted_assignment(assignment: Mapping[str, list[TopicPartition]]) -> GroupAssignment:
    return {member: sorted(tps) for member, tps in assignment.items()}
