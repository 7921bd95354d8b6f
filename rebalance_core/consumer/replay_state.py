"""The KIP-848 replayer's vocabulary and records: the broker's and the client's defaults it falls back on
(GroupCoordinatorConfig group.consumer.*), the anomaly rules of its own,
the client states it groups (ConsumerMembershipManager / MembershipManagerImpl's MemberState), and
`MemberView`: one member as the coordinator's lines (GroupMetadataManager.consumerGroupHeartbeat,
CurrentAssignmentBuilder's member states) and its own log show it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from rebalance_core.consumer.states import ClientState
from rebalance_core.events import TopicPartition

# GroupCoordinatorConfig.CONSUMER_GROUP_SESSION_TIMEOUT_MS_DEFAULT (group.consumer.session.timeout.ms): a
# KIP-848 member's session is the broker's setting, not the client's session.timeout.ms
DEFAULT_CONSUMER_SESSION_TIMEOUT_MS = 45_000
# GroupCoordinatorConfig.CONSUMER_GROUP_HEARTBEAT_INTERVAL_MS_DEFAULT (group.consumer.heartbeat.interval.ms):
# a member learns a new target assignment at its next heartbeat, at most this long after it was computed
DEFAULT_CONSUMER_HEARTBEAT_INTERVAL_MS = 5_000
# GroupCoordinatorConfig.CONSUMER_GROUP_MAX_SESSION_TIMEOUT_MS_DEFAULT (group.consumer.max.session.timeout.ms):
# the longest session a member can have on a broker with default settings
CONSUMER_GROUP_MAX_SESSION_TIMEOUT_MS = 60_000

INVALID_TRANSITION = "invalid_transition"
UNKNOWN_STATE = "unknown_state"
STALE_EPOCH = "stale_epoch"

# client states in which a member is no longer (or not yet) part of the group's reconciliation
CLIENT_OUT = frozenset({ClientState.UNSUBSCRIBED, ClientState.LEAVING, ClientState.STALE, ClientState.FATAL})
# client states of a member that is leaving or out: its process closes the consumer (a restart that overlaps
# a graceful close is no crash)
CLIENT_LEAVING = CLIENT_OUT | {ClientState.PREPARE_LEAVING}
# member-side logs only: client states of a member the coordinator does not count (yet): JOINING has sent
# its first heartbeat, the member exists at the coordinator only once it is answered with a member epoch
# (ConsumerMembershipManager.onHeartbeatSuccess: JOINING -> RECONCILING), and that epoch's bump is its own
CLIENT_NOT_IN = CLIENT_OUT | {ClientState.JOINING}
# client states that follow a heartbeat response stating the member's (new) epoch
CLIENT_RECONCILING = frozenset(
    {ClientState.RECONCILING.value, ClientState.ACKNOWLEDGING.value, ClientState.STABLE.value}
)


@dataclass
class MemberView:
    """What the replay knows of one member."""

    member_id: str
    instance: str | None = None
    joined: bool = False  # the coordinator knows it (a join, a target, an assignment state)
    server_lines: bool = False  # the coordinator logged its assignment state
    server_epoch: int | None = None
    server_state: str | None = None
    server_assigned: list[TopicPartition] | None = None
    # coordinator timing: the partitions its latest assignment-state line added, and that line's instant
    server_started: list[TopicPartition] | None = None
    server_started_at: int | None = None
    # coordinator timing: the instant of the assignment-state line that handed it each partition, and the
    # latest line that proves its application thread ran its rebalance callbacks (an acknowledged revocation):
    # a partition handed before that one it surely consumed
    server_started_each: dict[TopicPartition, int] = field(default_factory=dict)
    callbacks_ran_at: int | None = None
    left_static: bool = False  # member epoch -2: gone for now, partitions reserved
    left_static_at: int | None = None  # when the coordinator saw it leave so (epoch -2)
    # member-side logs only: the group epoch when its own log showed it leave so (epoch -2)
    left_static_epoch: int | None = None
    # member-side logs only: a static member that closed while JOINING (its leave heartbeat, epoch -2, went
    # out before a response stated a member epoch): whether the coordinator created it from its join
    # heartbeat (then it holds the instance, reserved, until its session expires or a member of its instance
    # replaces it) no log of it shows; `unanswered_until_epoch`: the epoch its instance's successor was
    # answered with, after which it is surely out
    left_unanswered: bool = False
    unanswered_until_epoch: int | None = None
    member_timed: bool = False  # its own log is present: member-side timing
    client_state: str | None = None
    client_epoch: int | None = None  # the member epoch its own last state line states
    # the epoch its own line showed it STABLE at when it started leaving (PREPARE_LEAVING logs the epoch it
    # holds: AbstractMembershipManager.leaveGroup), one the coordinator may have moved it to silently
    stable_epoch: int | None = None
    # its own latest "Reconciling assignment" block: the member epoch it logged before it, and the partitions
    # it names (what the coordinator handed it at that epoch, withheld ones left out)
    block_epoch: int | None = None
    block_assigned: tuple[TopicPartition, ...] = ()
    joined_in_input: bool = False  # its own log shows its join: all it consumes since is in the input
    process: str | None = None  # who logged its own lines (host or file, client id): the consumer process
    client_id: str | None = None  # the client.id its own lines carry (its config dump's key, client_config)
    # member-side logs only: its process logged a join under another member id with no leave of this one (a
    # crashed consumer restarted), so this member is dead, but still in the group until the coordinator
    # fences it, one group.consumer.session.timeout.ms (the broker's setting) after its last heartbeat
    process_gone: bool = False
    replaces: str | None = None  # a static member's previous member id, out once this one has its epoch
    # member-side logs only: the group epoch when it logged leaving for good (epoch -1), until the next
    # epoch opens: its leave heartbeat may reach the coordinator after another member's join
    left_in_epoch: int | None = None
    # the instant of its own latest line stating the group's current epoch (a line at an older epoch, after
    # a pause, does not show it is still a member)
    current_at: int | None = None
    # the latest instant a coordinator line shows it heartbeating (its join, an assignment state of its own)
    heartbeat_seen_at: int | None = None
    # its rebalance timeout as a line states it (its join's rebalanceTimeoutMs, a rebalance-timeout fence): the
    # client's max.poll.interval.ms (ConsumerHeartbeatRequestManager sends it as RebalanceTimeoutMs)
    rebalance_timeout_ms: int | None = None
