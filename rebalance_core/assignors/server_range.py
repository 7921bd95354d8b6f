"""KIP-848's broker-side range assignor, `group.consumer.assignors=range` (named `server-range` here).

Follows the newest trunk `org.apache.kafka.coordinator.group.assignor.RangeAssignor`:

- Members are sorted like the client's `MemberInfo`: static members by instance id first, then the
  others by member id (`RangeAssignor.sortMemberIds`). Per topic, each subscriber in that order gets
  `P // N` partitions and the first `P % N` get one more, in contiguous ranges.
- Since the move to `RangeSet` ranges the assignor is no longer sticky: the current assignment
  (`MemberSubscription.owned`) is not read. Static members keep their ranges because their instance id
  keeps their place in the order.
- Homogeneous groups (every member subscribes to the same topic names) get rack matching when member
  racks meet replica racks and the partitions are not all on the same racks; co-partitioned topics
  (all with one partition count) stay co-partitioned. A member without a rack matches every partition.
  Heterogeneous groups get plain ranges.

Deviation: when rack matching has already handed out every partition of a topic and a member is still
below its quota, Kafka's `addPartitionsToAssignment` falls back to `RangeSet(nextRange, ...)` starting
at partition 0, giving out partitions that other members hold. Here that member simply gets nothing
more (a partition is never assigned twice).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from rebalance_core.assignors.base import (
    GroupAssignment,
    GroupSpec,
    MemberSubscription,
    RebalanceProtocol,
    sorted_assignment,
)
from rebalance_core.assignors.range import RackQueues, member_order_key, member_rack
from rebalance_core.assignors.uniform import SubscriptionType, group_subscription_type, subscribed_topics
from rebalance_core.events import TopicPartition


@dataclass
class _Topic:
    """`RangeAssignor.TopicMetadata`: quota bookkeeping and the partitions not yet handed out."""

    topic: str
    num_partitions: int
    num_members: int = 0
    partition_racks: dict[int, frozenset[str]] = field(default_factory=dict)  # only partitions with racks
    min_quota: int = -1
    extra_partitions: int = -1
    taken: bytearray = field(default_factory=bytearray)
    head: int = 0  # every partition before `head` is taken

    def __post_init__(self) -> None:
        self.taken = bytearray(self.num_partitions)

    def compute_quota(self) -> None:
        if self.min_quota == -1:
            self.min_quota, self.extra_partitions = divmod(self.num_partitions, self.num_members)

    def racks_match(self, partition: int, rack: str | None) -> bool:
        return rack is None or rack in self.partition_racks.get(partition, ())

    def mark_assigned(self, partition: int) -> None:
        self.taken[partition] = 1
        while self.head < self.num_partitions and self.taken[self.head]:
            self.head += 1

    def take_unassigned(self, count: int) -> list[int]:
        """The `count` lowest partitions not yet handed out (fewer if fewer are left)."""
        taken: list[int] = []
        partition = self.head
        while partition < self.num_partitions and len(taken) < count:
            if not self.taken[partition]:
                taken.append(partition)
            partition += 1
        for p in taken:
            self.mark_assigned(p)
        return taken


class ServerRangeAssignor:
    """`server-range`: the KIP-848 coordinator's range assignor."""

    name = "server-range"
    supported_protocols = (RebalanceProtocol.COOPERATIVE,)

    def assign(self, spec: GroupSpec, subscription_type: SubscriptionType | None = None) -> GroupAssignment:
        """`subscription_type` is what the coordinator passes in `GroupSpec.subscriptionType()`; by
        default it is computed as the coordinator does. Kafka's tests force it."""
        members = sorted(spec.members, key=member_order_key)
        held: dict[str, dict[str, list[int]]] = {m.member_id: {} for m in spec.members}  # topic -> partitions
        if not members:
            return {}
        if (subscription_type or group_subscription_type(spec)) is SubscriptionType.HOMOGENEOUS:
            self._assign_homogeneous(spec, members, held)
        else:
            self._assign_heterogeneous(spec, members, held)
        return sorted_assignment(
            {
                member_id: [TopicPartition(t, p) for t, partitions in by_topic.items() for p in partitions]
                for member_id, by_topic in held.items()
            }
        )

    def _assign_homogeneous(
        self, spec: GroupSpec, members: list[MemberSubscription], held: dict[str, dict[str, list[int]]]
    ) -> None:
        topics = [
            _Topic(t, spec.topics[t], len(members), self._partition_racks(spec, t))
            for t in subscribed_topics(spec, members[0])
        ]
        for topic in topics:
            topic.compute_quota()
        racks = [member_rack(m) for m in members]
        if self._use_rack_aware(racks, topics):
            if len(topics) > 1 and len({t.num_partitions for t in topics}) == 1:
                self._assign_co_partitioned(topics, members, racks, held)
            else:
                for topic in topics:
                    self._assign_topic_with_rack_matching(topic, members, racks, held)
        for member in members:
            for topic in topics:
                self._add_partitions(topic, held[member.member_id])

    def _assign_heterogeneous(
        self, spec: GroupSpec, members: list[MemberSubscription], held: dict[str, dict[str, list[int]]]
    ) -> None:
        topics: dict[str, _Topic] = {}
        for member in members:
            for t in subscribed_topics(spec, member):
                topics.setdefault(t, _Topic(t, spec.topics[t])).num_members += 1
        for member in members:
            for t in subscribed_topics(spec, member):
                topics[t].compute_quota()
                self._add_partitions(topics[t], held[member.member_id])

    @staticmethod
    def _partition_racks(spec: GroupSpec, topic: str) -> dict[int, frozenset[str]]:
        known = spec.partition_racks.get(topic, ())
        racks = {
            p: frozenset(r for r in known[p] if r is not None)
            for p in range(min(len(known), spec.topics[topic]))
        }
        return {p: r for p, r in racks.items() if r}

    @staticmethod
    def _use_rack_aware(racks: list[str | None], topics: list[_Topic]) -> bool:
        """`RangeAssignor.shouldUseRackAwareAssignment`: member racks meet replica racks, and the
        partitions are not all on one same set of racks."""
        member_racks = {r for r in racks if r is not None}
        rack_sets = {r for topic in topics for r in topic.partition_racks.values()}
        all_partition_racks = set().union(*rack_sets)
        if not member_racks or member_racks.isdisjoint(all_partition_racks):
            return False
        return len(rack_sets) > 1

    @staticmethod
    def _assign_co_partitioned(
        topics: list[_Topic],
        members: list[MemberSubscription],
        racks: list[str | None],
        held: dict[str, dict[str, list[int]]],
    ) -> None:
        """`RangeAssignor.assignCoPartitionedWithRackMatching`: partition p of every topic goes to the
        first member (in order) with room whose rack holds a replica of p in every topic."""
        first = topics[0]
        capacity = first.min_quota + (1 if first.extra_partitions > 0 else 0)
        counts = [0] * len(members)
        remaining = [True] * len(members)
        queues = RackQueues(racks, rackless_matches_all=True)
        for partition in range(first.num_partitions):
            common_racks = frozenset.intersection(
                *(t.partition_racks.get(partition, frozenset()) for t in topics)
            )
            position = queues.first(common_racks, lambda i: remaining[i] and counts[i] < capacity)
            if position is None:
                continue
            member_id = members[position].member_id
            for topic in topics:
                held[member_id].setdefault(topic.topic, []).append(partition)
                topic.mark_assigned(partition)
            counts[position] += 1
            quota = first.min_quota + (1 if counts[position] <= first.extra_partitions else 0)
            if counts[position] >= quota:
                remaining[position] = False
                if not any(remaining):
                    break

    @staticmethod
    def _assign_topic_with_rack_matching(
        topic: _Topic,
        members: list[MemberSubscription],
        racks: list[str | None],
        held: dict[str, dict[str, list[int]]],
    ) -> None:
        """`RangeAssignor.assignTopicWithRackMatching`: each partition goes to the first member (in
        order) whose rack holds a replica and whose count is below its quota. The quota counts the
        extra partition while the member's count is below the number of extra partitions."""
        counts = [0] * len(members)

        def has_room(i: int) -> bool:
            return counts[i] < topic.min_quota + (1 if counts[i] < topic.extra_partitions else 0)

        queues = RackQueues(racks, rackless_matches_all=True)
        for partition in range(topic.num_partitions):
            position = queues.first(topic.partition_racks.get(partition, ()), has_room)
            if position is None:
                continue
            held[members[position].member_id].setdefault(topic.topic, []).append(partition)
            topic.mark_assigned(partition)
            counts[position] += 1

    @staticmethod
    def _add_partitions(topic: _Topic, by_topic: dict[str, list[int]]) -> None:
        """`RangeAssignor.addPartitionsToAssignment`: fill the member up to its quota (one more while
        extra partitions remain) from the lowest unassigned partitions."""
        already = len(by_topic.get(topic.topic, ()))
        quota = topic.min_quota
        if topic.extra_partitions > 0:
            quota += 1
            topic.extra_partitions -= 1
        needed = quota - already
        if needed > 0:
            partitions = topic.take_unassigned(needed)
            if partitions:
                by_topic.setdefault(topic.topic, []).extend(partitions)
