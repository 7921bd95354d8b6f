"""KIP-848's broker-side uniform assignor, `group.consumer.assignors=uniform` (the default).

Follows the newest trunk `org.apache.kafka.coordinator.group.assignor.UniformAssignor`, which picks one
of two builders by the group's subscription type (computed by the coordinator from topic names):

- `UniformHomogeneousAssignmentBuilder` when every member subscribes to the same topics: each member
  gets `P // M` partitions and `P % M` members one more. Members keep what they own up to that quota
  (a member not filling its extra slot gives it up for a later member to claim), revoked and unowned
  partitions are listed, then, when member and replica racks make it worthwhile
  (`Utils.useRackAwareAssignment`), handed first to unfilled members on a replica's rack, and finally
  dealt out in order, the last unfilled members taking the remaining extra slots.
- `UniformHeterogeneousAssignmentBuilder` otherwise: members keep what they own of their topics; the
  rest is dealt topic by topic (most partitions per subscriber first) to the least loaded subscribers,
  then partitions move from the most to the least loaded subscribers until balanced (at most 16 rounds).

Both are sticky (`MemberSubscription.owned` is the member's current target assignment) and put balance
first. Their choices depend on iteration orders, reproduced here:

- Members are visited in the order of the coordinator's `HashMap<String, ...>` of member specs: by hash
  bucket of `String.hashCode` in a table sized for that many insertions. Members in one bucket keep
  the input order (Kafka's order there depends on insertion history we do not see).
- The homogeneous builder lists unassigned partitions topic by topic in the order of a
  `HashSet<Uuid>` of the subscribed topic ids (bucket of `Uuid.hashCode`). Topic ids come from
  `GroupSpec.topic_id`; an id that is not a Kafka base64 Uuid (e.g. a topic name standing in for a
  missing id) is hashed with `String.hashCode` instead.
- The heterogeneous builder breaks ties between topics by topic id (`Uuid.compareTo`; non-Uuid ids sort
  after Uuids, by string).
- A member's owned partitions are visited in the order of `owned` (Kafka visits its assignment map,
  whose order depends on how the coordinator built it). It only matters for which partitions a member
  over its quota keeps.

Deviations (input Kafka's coordinator never produces): owned partitions beyond the topic's partition
count, of topics that do not exist, or already claimed by a member visited earlier, are ignored.
"""

from __future__ import annotations

import base64
import binascii
import re
from collections import Counter
from collections.abc import Iterable, Sequence
from enum import Enum
from itertools import chain

from rebalance_core.assignors.base import (
    AssignmentError,
    GroupAssignment,
    GroupSpec,
    MemberSubscription,
    RebalanceProtocol,
    sorted_assignment,
)
from rebalance_core.assignors.range import RackQueues, member_rack, use_rack_aware_assignment
from rebalance_core.events import TopicPartition
from rebalance_core.java_hash import (
    java_hash_order,
    java_string_hash,
    table_size_after_puts,
    table_size_of_copy,
)

_MASK32 = 0xFFFFFFFF
_MASK64 = 0xFFFFFFFFFFFFFFFF
_KAFKA_UUID = re.compile(r"[A-Za-z0-9_-]{22}")

# UniformHeterogeneousAssignmentBuilder.MAX_ITERATION_COUNT: rounds of the final balancing phase.
MAX_BALANCE_ROUNDS = 16


# --- Java iteration orders -----------------------------------------------------------------------


def kafka_uuid_bits(topic_id: str) -> tuple[int, int] | None:
    """(mostSignificantBits, leastSignificantBits) as Java longs of a Kafka `Uuid.toString()` form
    (22 characters of URL-safe base64), or None when `topic_id` is not one."""
    if not _KAFKA_UUID.fullmatch(topic_id):
        return None
    try:
        raw = base64.urlsafe_b64decode(topic_id + "==")
    except (binascii.Error, ValueError):
        return None
    return int.from_bytes(raw[:8], "big", signed=True), int.from_bytes(raw[8:16], "big", signed=True)


def topic_id_hash(topic_id: str) -> int:
    """`Uuid.hashCode` (unsigned 32-bit), or `String.hashCode` for an id that is not a Kafka Uuid."""
    bits = kafka_uuid_bits(topic_id)
    if bits is None:
        return java_string_hash(topic_id)
    h = (bits[0] ^ bits[1]) & _MASK64
    return ((h >> 32) ^ h) & _MASK32


def topic_id_order_key(topic_id: str) -> tuple:
    """`Uuid.compareTo` (signed most, then least significant bits); non-Uuid ids after, by string."""
    bits = kafka_uuid_bits(topic_id)
    return (0, *bits) if bits is not None else (1, topic_id.encode("utf-16-be", "surrogatepass"))


# --- the assignor ---------------------------------------------------------------------------------


class SubscriptionType(str, Enum):
    """`api.assignor.SubscriptionType`: how the coordinator sees the group's subscriptions; it picks the
    builder of the uniform assignor and the path of the server-side range assignor."""

    HOMOGENEOUS = "homogeneous"
    HETEROGENEOUS = "heterogeneous"


def group_subscription_type(spec: GroupSpec) -> SubscriptionType:
    """`ModernGroup.subscriptionType`: homogeneous when every member subscribes to the same topic names
    (whether the topics exist or not)."""
    first = spec.members[0].subscription if spec.members else ()
    homogeneous = all(
        m.subscription == first or frozenset(m.subscription) == frozenset(first) for m in spec.members
    )
    return SubscriptionType.HOMOGENEOUS if homogeneous else SubscriptionType.HETEROGENEOUS


def coordinator_member_order(members: Sequence[MemberSubscription]) -> list[MemberSubscription]:
    """The order of the coordinator's `HashMap<String, ...>` of member specs (see the module doc)."""
    return java_hash_order(
        members, [java_string_hash(m.member_id) for m in members], table_size_after_puts(len(members))
    )


class UniformAssignor:
    """`uniform`: balanced and sticky, KIP-848's default server-side assignor."""

    name = "uniform"
    supported_protocols = (RebalanceProtocol.COOPERATIVE,)

    def assign(self, spec: GroupSpec, subscription_type: SubscriptionType | None = None) -> GroupAssignment:
        """`subscription_type` is what the coordinator passes in `GroupSpec.subscriptionType()`; by
        default it is computed as the coordinator does. Kafka's builder tests force it."""
        members = coordinator_member_order(spec.members)
        if (subscription_type or group_subscription_type(spec)) is SubscriptionType.HOMOGENEOUS:
            held = _HomogeneousBuilder(spec, members).build()
        else:
            held = _HeterogeneousBuilder(spec, members).build()
        by_member = {m.member_id: tps for m, tps in zip(members, held)}
        return sorted_assignment({m.member_id: by_member[m.member_id] for m in spec.members})


def subscribed_topics(spec: GroupSpec, member: MemberSubscription) -> list[str]:
    """The member's subscribed topics that exist (the coordinator resolves names to ids, dropping
    unknown names), without repeats, in subscription order."""
    return [t for t in dict.fromkeys(member.subscription) if t in spec.topics]


def _owners(
    spec: GroupSpec, members: list[MemberSubscription], subscribed_of: list[frozenset[str]]
) -> dict[str, list[int]]:
    """Each subscribed topic's owner per partition (member position, -1 for none), from what the members
    own of their subscribed topics. See the module doc for the claims ignored."""
    owners = {t: [-1] * spec.topics[t] for t in frozenset().union(*set(subscribed_of))}
    for position, (member, subscribed) in enumerate(zip(members, subscribed_of)):
        for topic, partition in member.owned:
            if (
                topic in subscribed
                and 0 <= partition < len(topic_owners := owners[topic])
                and topic_owners[partition] < 0
            ):
                topic_owners[partition] = position
    return owners


class _HomogeneousBuilder:
    """`UniformHomogeneousAssignmentBuilder`."""

    def __init__(self, spec: GroupSpec, members: list[MemberSubscription]) -> None:
        self.spec = spec
        self.members = members
        first = subscribed_topics(spec, members[0]) if members else []
        self.topics = java_hash_order(
            first, [topic_id_hash(spec.topic_id(t)) for t in first], table_size_of_copy(len(first))
        )
        self.racks = [member_rack(m) for m in members]
        self.partition_racks = self._partition_racks() if any(self.racks) else {}
        self.use_rack_strategy = bool(self.partition_racks) and use_rack_aware_assignment(
            {r for r in self.racks if r is not None},
            set().union(*(r for racks in self.partition_racks.values() for r in racks)),
            (r for racks in self.partition_racks.values() for r in racks),
        )

    def _partition_racks(self) -> dict[str, list[frozenset[str]]]:
        racks: dict[str, list[frozenset[str]]] = {}
        for topic in self.topics:
            known = self.spec.partition_racks.get(topic, ())
            racks[topic] = [
                frozenset(r for r in known[p] if r is not None) if p < len(known) else frozenset()
                for p in range(self.spec.topics[topic])
            ]
        return racks

    @staticmethod
    def _owned_by_topic(
        position: int, member: MemberSubscription, owners: dict[str, list[int]]
    ) -> Iterable[list]:
        """The member's partitions (those `_owners` credits it with), grouped by topic in `owned` order."""
        by_topic: dict[str, list[TopicPartition]] = {}
        for tp in member.owned:
            topic, partition = tp
            topic_owners = owners.get(topic)
            if (
                topic_owners is not None
                and 0 <= partition < len(topic_owners)
                and topic_owners[partition] == position
            ):
                if type(tp) is not TopicPartition:
                    tp = TopicPartition(topic, partition)
                if topic in by_topic:
                    by_topic[topic].append(tp)
                else:
                    by_topic[topic] = [tp]
        return by_topic.values()

    def _rack_match(self, position: int, tp: TopicPartition) -> bool:
        """`Utils.isRackMatch`: the member has a rack and a replica of the partition is on it."""
        rack = self.racks[position]
        return rack is not None and rack in self.partition_racks[tp.topic][tp.partition]

    def build(self) -> list[list[TopicPartition]]:
        held: list[list[TopicPartition]] = [[] for _ in self.members]
        if not self.topics:
            return held
        owners = _owners(self.spec, self.members, [frozenset(self.topics)] * len(self.members))
        unassigned = [
            TopicPartition(t, p) for t in self.topics for p, owner in enumerate(owners[t]) if owner < 0
        ]
        total = sum(self.spec.topics[t] for t in self.topics)
        self.min_quota, self.extras = divmod(total, len(self.members))

        # maybeRevokePartitions: keep owned partitions up to the quota, list the rest as unassigned.
        unfilled: list[int] = []  # member positions
        quotas: list[int] = []  # their remaining quota, same index
        for position, member in enumerate(self.members):
            quota = self.min_quota
            has_extra = self.extras > 0
            if has_extra:
                quota += 1
            for partitions in self._owned_by_topic(position, member, owners):
                if not self.use_rack_strategy and len(partitions) <= quota:
                    held[position].extend(partitions)
                    quota -= len(partitions)
                    continue
                for tp in partitions:
                    if quota > 0 and (not self.use_rack_strategy or self._rack_match(position, tp)):
                        quota -= 1
                        held[position].append(tp)
                    else:
                        unassigned.append(tp)
            if quota > 0 and has_extra:
                quota -= 1  # give the unfilled extra slot up for another member to claim
                has_extra = False
            if quota == 0 and has_extra:
                self.extras -= 1
            if quota > 0 or (self.extras > 0 and not has_extra):
                unfilled.append(position)
                quotas.append(quota)

        alive = [True] * len(unfilled)
        if self.use_rack_strategy:
            unassigned = self._assign_rack_matching(unassigned, unfilled, quotas, alive, held)
        self._assign_remaining(unassigned, unfilled, quotas, alive, held)
        return held

    def _assign_rack_matching(
        self,
        unassigned: list[TopicPartition],
        unfilled: list[int],
        quotas: list[int],
        alive: list[bool],
        held: list[list[TopicPartition]],
    ) -> list[TopicPartition]:
        """`assignRackAwarenessRemainingPartitions`: each unassigned partition goes to the first unfilled
        member on a replica's rack that can still take one (its quota, else an extra slot, which
        fills it). Returns what is still unassigned, in order."""
        queues = RackQueues([self.racks[position] for position in unfilled], rackless_matches_all=False)

        def can_take(index: int) -> bool:
            return alive[index] and (quotas[index] > 0 or self.extras > 0)

        left: list[TopicPartition] = []
        for tp in unassigned:
            index = queues.first(self.partition_racks[tp.topic][tp.partition], can_take)
            if index is None:
                left.append(tp)
                continue
            held[unfilled[index]].append(tp)
            if quotas[index] > 0:
                quotas[index] -= 1
            else:
                alive[index] = False
                self.extras -= 1
        return left

    def _assign_remaining(
        self,
        unassigned: list[TopicPartition],
        unfilled: list[int],
        quotas: list[int],
        alive: list[bool],
        held: list[list[TopicPartition]],
    ) -> None:
        """`assignRemainingPartitions`: the last unfilled members take the extra slots still open, then
        the unfilled members in order take the unassigned partitions in order."""
        indexes = [i for i in range(len(unfilled)) if alive[i]]
        for index in reversed(indexes):
            if self.extras <= 0:
                break
            self.extras -= 1
            quotas[index] += 1
        next_partition = 0
        for index in indexes:
            taken = unassigned[next_partition : next_partition + quotas[index]]
            next_partition += len(taken)
            held[unfilled[index]].extend(taken)
        if next_partition < len(unassigned):
            raise AssignmentError("uniform assignor left partitions unassigned")


class _Balancer:
    """`UniformHeterogeneousAssignmentBuilder.MemberAssignmentBalancer`: walks the subscribers of one
    topic from the least loaded up (to give partitions) and from the most loaded down (to take them),
    reading the live assignment sizes."""

    def __init__(self, sizes: list[int]) -> None:
        self.sizes = sizes
        self.members: list[int] = []

    def initialize(self, members: list[int]) -> int:
        """Start over on these members (in ascending position order, so that the stable sort breaks ties
        by position like Kafka's memberComparator); returns the spread of their sizes."""
        sizes = self.sizes
        self.members = sorted(members, key=sizes.__getitem__)
        count = len(self.members)
        self.least_end = 0
        self.least_count = sizes[self.members[0]] - 1
        self.next_least = 0
        self.most_start = count
        self.most_end = count
        self.most_count = sizes[self.members[-1]] + 1
        self.next_most = count - 1
        return sizes[self.members[-1]] - sizes[self.members[0]]

    def next_least_loaded(self) -> int:
        if self.next_least >= self.least_end:
            # Everyone in the range got one more: raise its level and take in the members now level.
            self.least_count += 1
            while (
                self.least_end < len(self.members)
                and self.sizes[self.members[self.least_end]] == self.least_count
            ):
                self.least_end += 1
            self.next_least = 0
        member = self.members[self.next_least]
        self.next_least += 1
        return member

    def next_most_loaded(self) -> int:
        """The next member to give a partition up, or -1 when none can."""
        if self.next_most < self.most_start:
            if self.most_end <= self.most_start and self.most_start > 0:
                # The range emptied through exclusions: restart its level from the next member down.
                self.most_count = self.sizes[self.members[self.most_start - 1]]
            else:
                self.most_count -= 1
            while self.most_start > 0 and self.sizes[self.members[self.most_start - 1]] == self.most_count:
                self.most_start -= 1
            self.next_most = self.most_end - 1
        if self.next_most < 0:
            return -1
        member = self.members[self.next_most]
        self.next_most -= 1
        return member

    def exclude_most_loaded(self) -> None:
        """Drop the member last returned by `next_most_loaded` from the most loaded range."""
        members = self.members
        excluded = members[self.next_most + 1]
        members[self.next_most + 1] = members[self.most_end - 1]
        members[self.most_end - 1] = excluded
        self.most_end -= 1

    def is_balanced(self) -> bool:
        return self.most_count - self.least_count <= 1


class _HeterogeneousBuilder:
    """`UniformHeterogeneousAssignmentBuilder`."""

    def __init__(self, spec: GroupSpec, members: list[MemberSubscription]) -> None:
        self.spec = spec
        self.members = members
        self.topics_of = [subscribed_topics(spec, m) for m in members]
        subscribers: dict[str, list[int]] = {t: [] for t in spec.topics}
        for position, topics in enumerate(self.topics_of):
            for topic in topics:
                subscribers[topic].append(position)
        self.subscribers = {t: positions for t, positions in subscribers.items() if positions}
        self.sizes = [0] * len(members)

    def _topic_order(self, topic: str) -> tuple:
        """Partitions per subscriber descending, then subscriber count ascending, then topic id."""
        subscribers = len(self.subscribers[topic])
        return (
            -(self.spec.topics[topic] / subscribers),
            subscribers,
            topic_id_order_key(self.spec.topic_id(topic)),
        )

    def build(self) -> list[list[TopicPartition]]:
        held: list[list[TopicPartition]] = [[] for _ in self.members]
        if not self.subscribers:
            return held
        self.owners = _owners(self.spec, self.members, [frozenset(topics) for topics in self.topics_of])
        for position, count in Counter(chain.from_iterable(self.owners.values())).items():
            if position >= 0:
                self.sizes[position] = count

        # assignRemainingPartitions: topic by topic, each unowned partition to the least loaded subscriber.
        balancer = _Balancer(self.sizes)
        unassigned = {t: [p for p, o in enumerate(owners) if o < 0] for t, owners in self.owners.items()}
        for topic in sorted((t for t, ps in unassigned.items() if ps), key=self._topic_order):
            balancer.initialize(self.subscribers[topic])
            owners, sizes, next_member = self.owners[topic], self.sizes, balancer.next_least_loaded
            for partition in unassigned[topic]:
                member = next_member()
                owners[partition] = member
                sizes[member] += 1

        movable = [t for t, subscribers in self.subscribers.items() if len(subscribers) >= 2]
        if movable:
            self._balance_topics(sorted(movable, key=self._topic_order), balancer)

        for topic, owners in self.owners.items():
            for partition, owner in enumerate(owners):
                held[owner].append(TopicPartition(topic, partition))
        return held

    def _assign(self, topic: str, partition: int, member: int) -> None:
        previous = self.owners[topic][partition]
        if previous >= 0:
            self.sizes[previous] -= 1
        self.owners[topic][partition] = member
        self.sizes[member] += 1

    def _balance_topics(self, topics: list[str], balancer: _Balancer) -> None:
        """`balanceTopics`: go round the topics until a full round moves nothing (or the round limit)."""
        last_rebalanced = -1
        for _ in range(MAX_BALANCE_ROUNDS):
            for index, topic in enumerate(topics):
                if index == last_rebalanced:
                    return
                if self._balance_topic(topic, balancer) > 0 or last_rebalanced == -1:
                    last_rebalanced = index

    def _balance_topic(self, topic: str, balancer: _Balancer) -> int:
        """`balanceTopic`: move the topic's partitions from its most to its least loaded subscribers
        until their sizes are within one; returns how many moved."""
        if balancer.initialize(self.subscribers[topic]) <= 1:
            return 0
        owners = self.owners[topic]
        # The topic's partitions grouped by owner (in partition order within one owner: the sort is
        # stable), each owner's as a range [start, end) of this list.
        partitions = sorted(range(len(owners)), key=owners.__getitem__)
        start: dict[int, int] = {}
        end: dict[int, int] = {}
        for index, partition in enumerate(partitions):
            start.setdefault(owners[partition], index)
            end[owners[partition]] = index + 1
        moved = 0
        while not balancer.is_balanced():
            most = balancer.next_most_loaded()
            while most != -1 and end.get(most, 0) - start.get(most, 0) <= 0:
                balancer.exclude_most_loaded()
                most = balancer.next_most_loaded()
            if most == -1:
                break
            end[most] -= 1
            partition = partitions[end[most]]
            least = balancer.next_least_loaded()
            if balancer.is_balanced():
                break
            self._assign(topic, partition, least)
            moved += 1
        return moved
