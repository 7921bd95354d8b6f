"""Kafka's client-side round-robin assignor, `partition.assignment.strategy=roundrobin`.

Follows `org.apache.kafka.clients.consumer.RoundRobinAssignor`: all partitions of all subscribed topics
are laid out sorted (topics by name, a `TreeSet`; partitions in numeric order) and dealt one at a time
over a circular iterator of the members in `MemberInfo` order (static members by group.instance.id
first, then dynamic members by member id). A member not subscribed to the partition's topic is skipped,
which is how unequal subscriptions end up unbalanced. Eager only (AbstractPartitionAssignor's default).
"""

from __future__ import annotations

from rebalance_core.assignors.base import GroupAssignment, GroupSpec, RebalanceProtocol, sorted_assignment
from rebalance_core.assignors.range import java_string_key, member_order_key
from rebalance_core.events import TopicPartition


class RoundRobinAssignor:
    """`roundrobin`: deal the sorted partitions over the sorted members, skipping non-subscribers."""

    name = "roundrobin"
    supported_protocols = (RebalanceProtocol.EAGER,)

    def assign(self, spec: GroupSpec) -> GroupAssignment:
        assignment: GroupAssignment = {m.member_id: [] for m in spec.members}
        members = sorted(spec.members, key=member_order_key)
        subscriptions = [frozenset(m.subscription) for m in members]
        topics = sorted({t for m in members for t in m.subscription}, key=java_string_key)
        position = 0  # the circular iterator's next member
        for topic in topics:
            for partition in range(spec.topics.get(topic, 0)):
                # A subscriber exists: the topic comes from some member's subscription.
                while topic not in subscriptions[position]:
                    position = (position + 1) % len(members)
                assignment[members[position].member_id].append(TopicPartition(topic, partition))
                position = (position + 1) % len(members)
        return sorted_assignment(assignment)
