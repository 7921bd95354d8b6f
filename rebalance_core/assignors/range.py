"""Kafka's client-side range assignor, `partition.assignment.strategy=range`.

Follows `org.apache.kafka.clients.consumer.RangeAssignor` as of Kafka 3.5+ (KIP-881 rack awareness):

- Per topic, the subscribers are ordered like `AbstractPartitionAssignor.MemberInfo.compareTo`: static
  members (group.instance.id) first, by instance id, then dynamic members by member id. The partitions
  are laid out in numeric order; each subscriber gets `P // N`, and the first `P % N` one more.
- Rack awareness is used when consumers and replicas both carry racks and some partition is not on
  every rack (`AbstractPartitionAssignor.useRackAwareAssignment`). Partitions whose replicas sit on a
  consumer's rack are handed out first, within the same per-topic quotas; topics with the same
  subscribers (with their racks) and the same partition count stay co-partitioned (partition p of all
  of them goes to one consumer). What rack matching leaves over is assigned by plain range.

The assignor only ever sees the member list, subscriptions, racks and partition counts: it is eager
(AbstractPartitionAssignor's default protocol) and never looks at owned partitions.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from functools import partial

from rebalance_core.assignors.base import (
    GroupAssignment,
    GroupSpec,
    MemberSubscription,
    RebalanceProtocol,
    empty_assignment,
    sorted_assignment,
)
from rebalance_core.events import TopicPartition


def java_string_key(text: str) -> bytes:
    """A sort key in Java `String.compareTo` order (UTF-16 code units). Python compares code points,
    which orders characters beyond the Basic Multilingual Plane differently."""
    return text.encode("utf-16-be", "surrogatepass")


def member_order_key(member: MemberSubscription) -> tuple[int, bytes, bytes]:
    """`AbstractPartitionAssignor.MemberInfo.compareTo`: static members first, by group.instance.id,
    then dynamic members by member id. Two members with one instance id cannot both be in a Kafka group
    (the coordinator fences the older one); here the member id breaks that tie."""
    if member.group_instance_id is not None:
        return (0, java_string_key(member.group_instance_id), java_string_key(member.member_id))
    return (1, java_string_key(member.member_id), b"")


def member_rack(member: MemberSubscription) -> str | None:
    """The consumer's rack; Kafka ignores an empty `client.rack` (`RangeAssignor.consumerRacks`)."""
    return member.rack or None


class RackQueues:
    """Kafka's rack matching scans the members in order for the first one on a rack of the partition's
    replicas that can still take a partition. This finds the same member without the scan: members are
    queued per rack in that order, and a queue drops from its front the members that can take no more.
    That is sound because the callers' eligibility only ever shrinks (quotas fill, never empty).
    With `rackless_matches_all`, a member without a rack matches every partition (the range assignors);
    otherwise it matches none (`coordinator.group.assignor.Utils.isRackMatch`)."""

    def __init__(self, racks: list[str | None], *, rackless_matches_all: bool) -> None:
        self._queues: dict[str | None, deque[int]] = {}
        for position, rack in enumerate(racks):
            if rack is not None or rackless_matches_all:
                self._queues.setdefault(rack, deque()).append(position)

    def first(self, partition_racks: Iterable[str], eligible: Callable[[int], bool]) -> int | None:
        """The lowest position eligible and on one of `partition_racks` (or rackless, when those match)."""
        best: int | None = None
        for rack in (*partition_racks, None):
            queue = self._queues.get(rack)
            while queue and not eligible(queue[0]):
                queue.popleft()
            if queue and (best is None or queue[0] < best):
                best = queue[0]
        return best


def subscribers_by_topic(spec: GroupSpec) -> dict[str, list[MemberSubscription]]:
    """Existing topic (with partitions) -> its subscribers in MemberInfo order. Topics missing from the
    metadata are skipped, as `AbstractPartitionAssignor.assign` skips topics without metadata."""
    subscribers: dict[str, list[MemberSubscription]] = {}
    for member in sorted(spec.members, key=member_order_key):
        for topic in dict.fromkeys(member.subscription):
            if spec.topics.get(topic, 0) > 0:
                subscribers.setdefault(topic, []).append(member)
    return subscribers


def use_rack_aware_assignment(
    consumer_racks: set[str],
    partition_racks: set[str],
    racks_per_partition: Iterable[frozenset[str]],
    prefer_rack_aware_logic: bool = False,
) -> bool:
    """`AbstractPartitionAssignor.useRackAwareAssignment`: worth it only when consumer racks meet
    replica racks and some partition is missing from some rack. `prefer_rack_aware_logic` is Kafka's
    test-only switch that skips the last condition."""
    if not consumer_racks or consumer_racks.isdisjoint(partition_racks):
        return False
    if prefer_rack_aware_logic:
        return True
    return not all(racks == partition_racks for racks in racks_per_partition)


@dataclass
class _TopicState:
    """`RangeAssignor.TopicAssignmentState`: one topic's quotas and what is still unassigned."""

    topic: str
    consumers: list[str]
    consumer_racks: dict[str, str | None]
    partition_racks: list[frozenset[str]]  # empty when no subscriber has a rack
    needs_rack_aware: bool
    per_consumer: int
    remaining_with_extra: int
    assigned_count: dict[str, int] = field(default_factory=dict)
    taken: bytearray = field(default_factory=bytearray)
    head: int = 0  # every partition before `head` is taken

    @property
    def num_partitions(self) -> int:
        return len(self.taken)

    def racks_match(self, consumer: str, partition: int) -> bool:
        rack = self.consumer_racks[consumer]
        if rack is None:
            return True
        return bool(self.partition_racks) and rack in self.partition_racks[partition]

    def max_assignable(self, consumer: str) -> int:
        quota = self.per_consumer + (1 if self.remaining_with_extra > 0 else 0)
        return max(0, quota - self.assigned_count[consumer])

    def first_unassigned(self, limit: int, accept: Callable[[int], bool]) -> list[int]:
        """Up to `limit` unassigned partitions in numeric order that `accept` takes."""
        found: list[int] = []
        partition = self.head
        while partition < self.num_partitions and len(found) < limit:
            if not self.taken[partition] and accept(partition):
                found.append(partition)
            partition += 1
        return found

    def on_assigned(self, consumer: str, partitions: list[int]) -> None:
        count = self.assigned_count[consumer] + len(partitions)
        self.assigned_count[consumer] = count
        if count > self.per_consumer:
            self.remaining_with_extra -= 1
        for partition in partitions:
            self.taken[partition] = 1
        while self.head < self.num_partitions and self.taken[self.head]:
            self.head += 1

    @property
    def exhausted(self) -> bool:
        return self.head >= self.num_partitions


class RangeAssignor:
    """`range`: per-topic contiguous ranges, with KIP-881 rack matching when it helps."""

    name = "range"
    supported_protocols = (RebalanceProtocol.EAGER,)

    def __init__(self, *, prefer_rack_aware_logic: bool = False) -> None:
        # Kafka's package-private test switch (AbstractPartitionAssignor.preferRackAwareLogic): use rack
        # matching even when every partition is on every rack. Only the ported tests set it.
        self.prefer_rack_aware_logic = prefer_rack_aware_logic

    def assign(self, spec: GroupSpec) -> GroupAssignment:
        assignment = empty_assignment(spec)
        states = [
            self._topic_state(spec, topic, members) for topic, members in subscribers_by_topic(spec).items()
        ]
        if any(state.needs_rack_aware for state in states):
            self._assign_with_rack_matching(states, assignment)
        for state in states:
            self._assign_ranges(state, lambda consumer, partition: True, assignment)
        return sorted_assignment(assignment)

    def _topic_state(self, spec: GroupSpec, topic: str, members: list[MemberSubscription]) -> _TopicState:
        num_partitions = spec.topics[topic]
        consumer_racks = {m.member_id: member_rack(m) for m in members}
        racks_of_consumers = {rack for rack in consumer_racks.values() if rack is not None}
        partition_racks: list[frozenset[str]] = []
        if racks_of_consumers:
            known = spec.partition_racks.get(topic, ())
            partition_racks = [
                frozenset(r for r in known[p] if r is not None) if p < len(known) else frozenset()
                for p in range(num_partitions)
            ]
        all_partition_racks = set().union(*partition_racks)
        return _TopicState(
            topic=topic,
            consumers=[m.member_id for m in members],
            consumer_racks=consumer_racks,
            partition_racks=partition_racks,
            needs_rack_aware=use_rack_aware_assignment(
                racks_of_consumers, all_partition_racks, partition_racks, self.prefer_rack_aware_logic
            ),
            per_consumer=num_partitions // len(members),
            remaining_with_extra=num_partitions % len(members),
            assigned_count={m.member_id: 0 for m in members},
            taken=bytearray(num_partitions),
        )

    @staticmethod
    def _assign(
        consumer: str, partitions: list[int], state: _TopicState, assignment: GroupAssignment
    ) -> None:
        assignment[consumer].extend(TopicPartition(state.topic, p) for p in partitions)
        state.on_assigned(consumer, partitions)

    def _assign_ranges(
        self, state: _TopicState, may_assign: Callable[[str, int], bool], assignment: GroupAssignment
    ) -> None:
        """`RangeAssignor.assignRanges`: each consumer in order takes the lowest unassigned partitions
        it may take, up to its remaining quota."""
        for consumer in state.consumers:
            if state.exhausted:
                break
            partitions = state.first_unassigned(state.max_assignable(consumer), partial(may_assign, consumer))
            if partitions:
                self._assign(consumer, partitions, state, assignment)

    def _assign_with_rack_matching(self, states: list[_TopicState], assignment: GroupAssignment) -> None:
        """`RangeAssignor.assignWithRackMatching`: topics with the same subscribers (and racks) and the
        same partition count are matched together, keeping them co-partitioned."""
        groups: dict[tuple, list[_TopicState]] = {}
        for state in states:
            key = (tuple(state.consumer_racks.items()), len(state.partition_racks))
            groups.setdefault(key, []).append(state)
        for (consumers, num_partitions), group in groups.items():
            if len(group) > 1:
                self._assign_co_partitioned(group, [c for c, _ in consumers], num_partitions, assignment)
            elif group[0].needs_rack_aware:
                self._assign_ranges(group[0], group[0].racks_match, assignment)

    def _assign_co_partitioned(
        self, group: list[_TopicState], consumers: list[str], num_partitions: int, assignment: GroupAssignment
    ) -> None:
        """`RangeAssignor.assignCoPartitionedWithRackMatching`: partition p of every topic goes to the
        first consumer that matches the racks of all of them and still has room in all of them."""
        remaining = list(consumers)
        for partition in range(num_partitions):
            match = next(
                (
                    c
                    for c in remaining
                    if all(s.racks_match(c, partition) and s.max_assignable(c) > 0 for s in group)
                ),
                None,
            )
            if match is None:
                continue
            for state in group:
                self._assign(match, [partition], state, assignment)
            if all(state.max_assignable(match) <= 0 for state in group):
                remaining.remove(match)
                if not remaining:
                    break
