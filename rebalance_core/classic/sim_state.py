"""The classic-protocol simulator's records of both sides (rebalance_core.classic.simulator).

What the model keeps of each side and the words both sides speak: the coordinator's group states
(ClassicGroupState), a member's states (AbstractCoordinator.MemberState, with the rejoin split out), the
errors of the responses (org.apache.kafka.common.protocol.Errors); one run of a consumer process (the
client: AbstractCoordinator / ConsumerCoordinator state), the coordinator's record of a member
(MemberMetadata / ClassicGroupMember) and the leader's SyncGroup assignment.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from rebalance_core.classic.connect import WorkerAssignment, WorkerState
from rebalance_core.events import TopicPartition

# Coordinator states (ClassicGroupState names, as Kafka prints them).
EMPTY, PREPARING, COMPLETING, STABLE = "Empty", "PreparingRebalance", "CompletingRebalance", "Stable"

# Member states (AbstractCoordinator.MemberState, with the rejoin split out).
UNJOINED = "unjoined"  # no generation (new, or reset after an error / poll timeout)
REJOINING = "rejoining"  # knows it must rejoin; the poll loop has not sent the JoinGroup yet
JOINING = "joining"  # JoinGroup sent (PREPARING_REBALANCE)
SYNCING = "syncing"  # JoinGroup answered, SyncGroup not (COMPLETING_REBALANCE)
STABLE_MEMBER = "stable"
HEARTBEATING = (REJOINING, SYNCING, STABLE_MEMBER)  # the heartbeat thread runs (AbstractCoordinator)


# Errors in responses (org.apache.kafka.common.protocol.Errors)
UNKNOWN_MEMBER_ID = "UNKNOWN_MEMBER_ID"
ILLEGAL_GENERATION = "ILLEGAL_GENERATION"
REBALANCE_IN_PROGRESS = "REBALANCE_IN_PROGRESS"


@dataclass(eq=False)
class Process:
    """One run of a consumer process (a restart makes a new one with the same name)."""

    name: str
    instance_id: str | None
    subscription: tuple[str, ...]
    alive: bool = True
    member_id: str | None = None
    generation: int = -1
    state: str = UNJOINED
    owned: set[TopicPartition] = field(default_factory=set)  # what the consumer believes it owns
    last_assignment: tuple[TopicPartition, ...] = ()  # eager sticky user data: previous assignment
    last_assignment_generation: int | None = None
    joined_subscription: tuple[str, ...] | None = None
    is_leader: bool = False
    metadata_snapshot: dict[str, int] | None = None  # leader: partition counts its assignment used
    frozen_until: int | None = None  # GC pause: nothing runs
    busy_until: int | None = None  # slow poll: the poll loop is away, the heartbeat thread runs
    slow_poll_ms: int | None = None  # a slow poll waiting for the member to be stable
    frozen_queue: list = field(default_factory=list)
    busy_queue: list = field(default_factory=list)
    heartbeat_token: int | None = None
    failed_at: int | None = None  # when it stopped heartbeating without leaving (its last heartbeat)
    # when it last consumed, while it consumes nothing: frozen by a GC pause (nothing runs) or its poll loop
    # stalled for good (no poll(), no records: KIP-62); None while it consumes (see MemberSide._idle_stop)
    idle_since: int | None = None
    stalled: bool = False  # its poll loop stalled for good (timeline `stall`)
    request: int = 0  # id of the JoinGroup / SyncGroup in flight: responses to older ones are stale
    leader_id: str | None = None  # the leader its last JoinGroup response named
    worker: WorkerState | None = None  # a Kafka Connect worker's state (None: a consumer)
    # a Connect worker's last assignment as its JoinGroup metadata carries it beyond the work it runs
    # (WorkerCoordinator.assignmentSnapshot: the leader, what it revoked, the delay)
    worker_snapshot: tuple | None = None

    @property
    def heartbeating(self) -> bool:
        return (
            self.alive
            and self.frozen_until is None
            and self.member_id is not None
            and self.state in HEARTBEATING
        )


@dataclass(eq=False)
class LeaderAssignment:
    """The leader's SyncGroup: each member's assignment (all its partitions / the tasks it will run),
    and for a Connect group the KIP-415 delay and each worker's increments."""

    full: dict[str, tuple[TopicPartition, ...]]
    delay_ms: int = 0
    workers: dict[str, WorkerAssignment] | None = None


@dataclass(eq=False)
class GroupMember:
    """The coordinator's record of a member (MemberMetadata)."""

    member_id: str
    instance_id: str | None
    client_id: str
    process: Process
    subscription: tuple[str, ...]
    owned: tuple[TopicPartition, ...]
    owned_generation: int | None
    worker_snapshot: tuple | None = None  # a Connect worker's (Process.worker_snapshot)
    awaiting_join: bool = False
    awaiting_sync: bool = False
    last_seen: int = 0
    check_token: int | None = None
    request: int = 0  # the parked JoinGroup / SyncGroup the response answers


def client_reason(reason: str | None) -> str:
    """GroupCoordinator (3.x) appends the JoinGroup / LeaveGroup reason the client sent."""
    return f"; client reason: {reason}" if reason else ""


def sorted_partitions(tps) -> tuple[TopicPartition, ...]:
    return tuple(sorted(tps))
