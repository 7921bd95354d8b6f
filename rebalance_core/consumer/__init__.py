"""Kafka's next-generation consumer group protocol (KIP-848, `group.protocol=consumer`).

states      the three state machines as data (group, coordinator-side member, client)
reconcile   one member's reconciliation step (CurrentAssignmentBuilder)
coordinator the coordinator's heartbeat handling, leaves and timers (GroupMetadataManager)
epochs      group epochs -> generations / episodes / per-member reconcile latency (shared measuring)
simulate    `simulate_consumer_group(timeline, settings)`: events + ground truth
sim_member  the simulator's member side (ConsumerMembershipManager: heartbeats, reconciliation)
replayer    `ConsumerGroupReplayer`: events -> the replay tables (same interface as GroupReplayer),
            with its parts replay_* (coordinator lines, member lines, member-only epochs, members,
            convergence, presumed convergence, ownership, checkpoint, state)
"""

from rebalance_core.consumer.replayer import (
    CONSUMER_PROTOCOL_EVENT_TYPES,
    ConsumerGroupReplayer,
    is_consumer_protocol_event,
)
from rebalance_core.consumer.simulate import (
    ConsumerSimSettings,
    ConsumerSimulation,
    simulate_consumer_group,
)

__all__ = [
    "CONSUMER_PROTOCOL_EVENT_TYPES",
    "ConsumerGroupReplayer",
    "ConsumerSimSettings",
    "ConsumerSimulation",
    "is_consumer_protocol_event",
    "simulate_consumer_group",
]
