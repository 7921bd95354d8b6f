"""KIP-848 consumer group protocol states, as data (enums + transition tables).

Three state machines, each named after the Kafka class it follows:

- `GroupState`: the coordinator's view of the group (`ConsumerGroup.ConsumerGroupState`), derived from
  the group epoch, the target assignment epoch and the members (`ConsumerGroup.maybeUpdateGroupState`).
- `MemberState`: the coordinator's reconciliation state of one member (`modern.MemberState`, driven by
  `CurrentAssignmentBuilder`).
- `ClientState`: the member's own state (`clients.consumer.internals.MemberState`, driven by
  `AbstractMembershipManager` / `ConsumerMembershipManager`).
"""

from __future__ import annotations

from collections.abc import Iterable
from enum import Enum

# ConsumerGroupHeartbeat member epochs with a meaning of their own (KIP-848,
# ConsumerGroupHeartbeatRequest.LEAVE_GROUP_MEMBER_EPOCH / LEAVE_GROUP_STATIC_MEMBER_EPOCH).
JOIN_GROUP_MEMBER_EPOCH = 0  # a member (re)joins
LEAVE_GROUP_MEMBER_EPOCH = -1  # a member leaves for good: the coordinator fences it (group epoch bump)
LEAVE_GROUP_STATIC_MEMBER_EPOCH = -2  # a static member leaves temporarily: its partitions stay reserved


class GroupState(str, Enum):
    """ConsumerGroup.ConsumerGroupState."""

    EMPTY = "Empty"
    ASSIGNING = "Assigning"  # group epoch > target assignment epoch: a new target is due
    RECONCILING = "Reconciling"  # some member is not yet at the target epoch in STABLE
    STABLE = "Stable"
    DEAD = "Dead"


class MemberState(str, Enum):
    """The coordinator's per-member reconciliation state (modern.MemberState)."""

    STABLE = "STABLE"  # the member owns its target partitions at the target epoch
    UNREVOKED_PARTITIONS = "UNREVOKED_PARTITIONS"  # it must first revoke partitions (keeps its old epoch)
    UNRELEASED_PARTITIONS = "UNRELEASED_PARTITIONS"  # at the target epoch, waits for others to release some
    UNKNOWN = "UNKNOWN"  # a state from a newer coordinator; Kafka fences such a member


class ClientState(str, Enum):
    """The member's own state (clients.consumer.internals.MemberState, AK 3.7+)."""

    UNSUBSCRIBED = "UNSUBSCRIBED"
    JOINING = "JOINING"  # sends a heartbeat with epoch 0
    RECONCILING = "RECONCILING"  # runs onPartitionsRevoked / onPartitionsAssigned for a new assignment
    ACKNOWLEDGING = "ACKNOWLEDGING"  # reconciled; the next heartbeat (sent at once) acknowledges it
    STABLE = "STABLE"
    FENCED = "FENCED"  # epoch rejected: onPartitionsLost, then JOINING
    PREPARE_LEAVING = "PREPARE_LEAVING"  # close()/unsubscribe(): releases its partitions
    LEAVING = "LEAVING"  # sends the leave heartbeat (epoch -1 or -2)
    FATAL = "FATAL"
    STALE = "STALE"  # max.poll.interval.ms expired: left the group, waits for the next poll


# MemberState.previousValidStates of the Java client (AK 3.9+): to-state -> allowed from-states.
CLIENT_PREVIOUS_VALID_STATES: dict[ClientState, frozenset[ClientState]] = {
    ClientState.STABLE: frozenset({ClientState.JOINING, ClientState.ACKNOWLEDGING, ClientState.RECONCILING}),
    ClientState.RECONCILING: frozenset(
        {ClientState.STABLE, ClientState.JOINING, ClientState.ACKNOWLEDGING, ClientState.RECONCILING}
    ),
    ClientState.ACKNOWLEDGING: frozenset({ClientState.RECONCILING}),
    ClientState.FATAL: frozenset(
        {
            ClientState.JOINING,
            ClientState.STABLE,
            ClientState.RECONCILING,
            ClientState.ACKNOWLEDGING,
            ClientState.PREPARE_LEAVING,
            ClientState.LEAVING,
            ClientState.UNSUBSCRIBED,
        }
    ),
    ClientState.FENCED: frozenset(
        {
            ClientState.JOINING,
            ClientState.STABLE,
            ClientState.RECONCILING,
            ClientState.ACKNOWLEDGING,
            ClientState.PREPARE_LEAVING,
            ClientState.LEAVING,
        }
    ),
    ClientState.JOINING: frozenset({ClientState.FENCED, ClientState.UNSUBSCRIBED, ClientState.STALE}),
    ClientState.PREPARE_LEAVING: frozenset(
        {
            ClientState.JOINING,
            ClientState.STABLE,
            ClientState.RECONCILING,
            ClientState.ACKNOWLEDGING,
            ClientState.UNSUBSCRIBED,
        }
    ),
    ClientState.LEAVING: frozenset({ClientState.PREPARE_LEAVING}),
    ClientState.UNSUBSCRIBED: frozenset(
        {ClientState.PREPARE_LEAVING, ClientState.LEAVING, ClientState.FENCED}
    ),
    ClientState.STALE: frozenset({ClientState.LEAVING}),
}

# Client states that say "a rebalance is going on for me" (the member-side rebalance signal).
CLIENT_REBALANCE_SIGNALS = frozenset(
    {ClientState.JOINING, ClientState.RECONCILING, ClientState.FENCED, ClientState.PREPARE_LEAVING}
)


def is_valid_client_transition(from_state: ClientState, to_state: ClientState) -> bool:
    return from_state in CLIENT_PREVIOUS_VALID_STATES[to_state]


def parse_client_state(text: str | None) -> ClientState | None:
    """A logged client state name; None for a missing or unknown one (the caller reports it)."""
    if not text:
        return None
    try:
        return ClientState(text.strip().upper())
    except ValueError:
        return None


def parse_member_state(text: str | None) -> MemberState:
    """A logged coordinator member state; anything unknown is UNKNOWN, as in Kafka."""
    try:
        return MemberState((text or "").strip().upper())
    except ValueError:
        return MemberState.UNKNOWN


def derive_group_state(
    group_epoch: int, target_epoch: int, member_reconciled: Iterable[bool], has_members: bool
) -> GroupState:
    """ConsumerGroup.maybeUpdateGroupState: Empty / Assigning / Reconciling / Stable."""
    if not has_members:
        return GroupState.EMPTY
    if group_epoch > target_epoch:
        return GroupState.ASSIGNING
    if not all(member_reconciled):
        return GroupState.RECONCILING
    return GroupState.STABLE
