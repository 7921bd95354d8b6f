"""The classic replayer's vocabulary and records: protocol names (eager, cooperative, KIP-415), the
event types and reasons it tests, the records it keeps per member and per round (`MemberView`,
`PendingApply`, `Round`, `SilentJoiner`), small helpers on events, and the JSON codec of its checkpoint.

`Round` is one generation of `ClassicGroup` / the Scala `GroupMetadata` (PreparingRebalance ->
CompletingRebalance -> Stable); `MemberView` is one member as its `AbstractCoordinator` /
`ConsumerCoordinator` logs it.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import re
from dataclasses import dataclass, field
from typing import Any

from rebalance_core.classic import coordinator as co
from rebalance_core.events import Event, TopicPartition
from schemas.events import EventType, Side

ASSIGNMENT_CONFLICT = "assignment_conflict"
ASSIGNMENT_MISMATCH = "assignment_mismatch"
INFERENCE_FAILED = "inference_failed"

# "Removing member M on LeaveGroup" (GroupCoordinator rebalance reason, 2.1-3.9; case varies)
LEAVE_REASON = re.compile(r"removing member (\S+) on LeaveGroup", re.IGNORECASE)
# AbstractCoordinator's leave reason after max.poll.interval.ms (2.4+; the words of its WARN line before)
POLL_TIMEOUT_REASON = "consumer poll timeout has expired."
SIGNALS = frozenset(
    {EventType.HEARTBEAT_REBALANCING.value, EventType.JOIN_REQUESTED.value, EventType.JOIN_SENT.value}
)
CALLBACKS = frozenset(
    {EventType.PARTITIONS_REVOKED.value, EventType.PARTITIONS_ASSIGNED.value, EventType.PARTITIONS_LOST.value}
)
# ConsumerCoordinator.onJoinComplete (cooperative, KIP-429) calls requestRejoin("need to revoke partitions
# ... and re-join", logged "Request joining group due to: ...") between onPartitionsRevoked and
# onPartitionsAssigned: that line is inside the member's callbacks, not after them.


COORDINATOR_SIDE = Side.COORDINATOR.value
CLIENT_CONFIG = EventType.CLIENT_CONFIG.value
# event types compared per event (an enum's .value is a property look-up each time)
JOIN_SENT = EventType.JOIN_SENT.value
LEAVE_SENT = EventType.LEAVE_SENT.value
# a member's JoinGroup, the response answering it, its LeaveGroup (`UnansweredJoins.note_process_line`)
PROCESS_JOIN_LINES = frozenset({JOIN_SENT, EventType.JOIN_RESPONSE.value, LEAVE_SENT})
JOIN_REQUESTED = EventType.JOIN_REQUESTED.value
REBALANCE_PREPARED = EventType.REBALANCE_PREPARED.value


@dataclass
class PendingApply:
    """A member's synced assignment not applied yet: its rebalance callbacks (partitions_revoked /
    partitions_assigned) give the instants; without them it applies at the sync instant."""

    sync_ts: int
    generation_id: int | None
    to_start: list[TopicPartition]
    to_stop: list[TopicPartition]
    source: str = "observed"


@dataclass
class MemberView:
    """A member as its own log shows it (member-side timing)."""

    member_id: str
    instance: str | None = None
    generation_id: int | None = None
    signal_ts: int | None = None  # first rebalance signal since its last sync (None: not rejoining)
    pending: PendingApply | None = None
    poll_timeout_ts: int | None = None  # max.poll.interval.ms expired here; its LeaveGroup follows
    synced_generation: int | None = None  # the generation of its last sync
    rejoin_since: int | None = None  # rejoining and given its generation back (no rebalance) since then
    revoked_unsignalled: bool = False  # eager revocation with no signal before it (`_unsignalled_rejoin`)
    lost_before_rejoin: bool = (
        False  # gave its partitions up as lost; a JoinGroup may follow (`_rejoin_after_lost`)
    )
    lost_at: int | None = None  # its last "Lost previously assigned partitions" line
    # members' logs only: its first JoinGroup no response of its log answered yet, and the first
    # generation formed after it (`_silent_joiner_may_be_in`)
    join_sent_at: int | None = None
    unanswered_since: int | None = None
    round_trip_ms: int | None = None  # KIP-394: its JoinGroup without a member id to the one with it
    revoked_at: int | None = None  # its last "Revoke previously assigned partitions" line
    # its process's JoinGroup without a member id is in the input: a new process (KIP-345: a static
    # member's may replace its instance's earlier one, `_earlier_process_unseen`)
    joined_fresh: bool = False

    def signal_unanswered(self) -> bool:
        """A rebalance signal its poll loop never acted on: no JoinGroup sent and no revocation logged since
        (onJoinPrepare revokes, then the JoinGroup goes out, in the same poll(): either shows it got there)."""
        return (
            self.signal_ts is not None
            and self.join_sent_at is None
            and (self.revoked_at is None or self.revoked_at < self.signal_ts)
        )


@dataclass
class SilentJoiner:
    """Members' logs only: a member whose JoinGroup reached the coordinator and whose own log shows no
    response to it, and no member id for it, or only in its LeaveGroup line: a Connect worker that died,
    stalled or left right after KIP-394's second JoinGroup (the one carrying the id the coordinator gave).
    The coordinator counts it (`GroupReplayer._silent_joiner_may_be_in`)."""

    join_sent_at: int  # the JoinGroup that made it a member
    round_trip_ms: int | None  # KIP-394: its JoinGroup without a member id to the one with it
    alias: str | None = None  # its log (`alias_of`) while a later line of it may still name or answer it
    left_at: int | None = None  # its LeaveGroup, sent before any response reached it
    unanswered_since: int | None = None  # the first generation formed after its JoinGroup
    # whose it is, for its own config dump (`client_config.group_rebalance_timeout_ms`)
    member_id: str | None = None
    client_id: str | None = None
    instance: str | None = None


@dataclass
class Round:
    """One join/sync cycle: PreparingRebalance -> Stable (or Empty); one generations row."""

    started_at: int | None
    reason: str | None
    timing_source: str
    episode_id: str
    episode_round: int
    generation_id: int | None = None
    join_completed_at: int | None = None
    stabilized_at: int | None = None
    ended_at: int | None = None
    ended_empty: bool = False
    leader_id: str | None = None
    members: list[str] | None = None
    member_count: int | None = None
    static_member_count: int | None = None
    protocol_type: str | None = None
    protocol_name: str | None = None
    source: str = "observed"
    stable: bool = False
    assignment_known: bool = False
    # old member ids standing for replaced instances in this generation's member list (their new ids,
    # not printed yet, are the members)
    stand_ins: list[str] = field(default_factory=list)
    # False for a round that started from an Empty (or new) group: no member owned anything before it,
    # so it revoked nothing and no follow-up round can be due to it (KIP-429)
    owned_before: bool = True
    joined: list[str] = field(default_factory=list)  # members whose JoinGroup in this round a line shows
    # a member's session expiry or LeaveGroup during the join phase: if the phase completes at that same
    # instant, the removal completed it, so every remaining member had joined (`_leader_if_rejoined`)
    removed_in_join_phase_at: int | None = None
    members_listed: bool = False  # member-side logs: the leader's assignment listed every member
    # member-side logs: the members whose own sync line stated what they revoked
    # (`RoundStarts._revocations_logged`, replay_rounds.py), and whether a member synced with a line
    # that did not
    revocations_stated_by: set[str] = field(default_factory=set)
    revocations_unstated: bool = False
    # coordinator side: the members the replay's own rerun of the assignor says revoked (cooperative), the
    # only basis of a follow-up round no line states (`RoundStarts._follow_up_disowned`)
    computed_revokers: list[str] = field(default_factory=list)
    # coordinator side: the Stable round's episode is held open for the next line (`RoundStarts._end_held_episode`)
    held_for_reason: bool = False
    # member-side logs: the latest JoinGroup of a member whose response named this generation: the
    # join phase still awaited it then (`_silent_joiner_may_be_in`)
    latest_member_join: int | None = None
    # members' logs only: the process (`process_of`) whose JoinGroup response dates `join_completed_at`:
    # its own instants compare with it without a clock-skew allowance (`UnansweredJoins.process_may_be_in`)
    join_completed_by: str | None = None
    # member-side logs: the last member's LeaveGroup at this instant left the group no member to wait
    # for, unless a new member's JoinGroup reached the coordinator first (`_left_group`)
    emptied_at: int | None = None
    signal_after_leave: tuple[int, str | None] | None = None  # the first rebalance signal since then
    # members' logs only: a member of the last generation, removed while others remained, rejoins with a
    # new member id and no line showed the rebalance its removal started: this round stands for it
    # from this instant (`_removed_member_rejoins`); a new member's JoinGroup since waits in
    # `signal_after_leave` until a JoinGroup response tells whether it joined this join phase
    removal_unseen_at: int | None = None
    # members' logs only: the processes (`process_of`) whose JoinGroup lines fall in this join phase
    joiners: list[str] = field(default_factory=list)
    # members' logs only: a JoinGroup response no JoinGroup line of its log preceded
    # (`UnansweredJoins.note_process_line`)
    join_unlogged: bool = False
    answered: list[str] = field(
        default_factory=list
    )  # members' logs only: members whose own response named it


STATE_CLASSES = {cls.__name__: cls for cls in (PendingApply, MemberView, Round, SilentJoiner)}


CONNECT_TASK = re.compile(r"^(.+)-(\d+)$")


def log_of(e: Event) -> str | None:
    """The log a coordinator line comes from: its file, else its `source`; None if neither is known. Not the
    source first: GroupMetadata's lines carry no "[GroupCoordinator N]" prefix, so no broker."""
    return e.file or e.source


def process_of(e: Event) -> str:
    """The consumer process whose log has `e`: its file (or source) and client id."""
    return f"{e.source or e.file or ''}|{e.client_id or ''}"


def alias_of(e: Event) -> str:
    """The log a member-side event comes from: source (or file), client id and group.instance.id."""
    return f"{e.source or e.file or ''}|{e.client_id or ''}|{e.group_instance_id or ''}"


def connect_tasks(listed: str | None) -> set[TopicPartition]:
    """The tasks of a Connect assignment attribute ("conn-0, conn-1, other-conn"), as the replay's
    partitions (connector, task number); connector names (no task number) are left out."""
    tasks = set()
    for item in (listed or "").split(","):
        match = CONNECT_TASK.match(item.strip())
        if match:
            tasks.add(TopicPartition(match.group(1), int(match.group(2))))
    return tasks


def existing_members_rejoin(reason: str | None) -> bool:
    """Whether a rebalance reason is an existing member's rejoin ("Leader X re-joining group during
    Stable", "Updating metadata for member X ...")."""
    named = co.members_named_in_reason(reason)
    return named is not None and not named[2]


def len_or_none(items) -> int | None:
    return len(items) if items is not None else None


# ----------------------------------------------------------------------------- JSON state codec
def encode_state(value: Any) -> Any:
    """JSON form of the replayer's state values (tagged where JSON has no type of its own)."""
    if isinstance(value, TopicPartition):
        return {"tp": [value.topic, value.partition]}
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {
            "dc": type(value).__name__,
            "f": {f.name: encode_state(getattr(value, f.name)) for f in dataclasses.fields(value)},
        }
    if isinstance(value, dt.date):
        return {"date": value.isoformat()}
    if isinstance(value, set):
        return {"set": sorted(encode_state(v) for v in value)}
    if isinstance(value, dict):
        return {"map": [[encode_state(k), encode_state(v)] for k, v in value.items()]}
    if isinstance(value, (list, tuple)):
        return [encode_state(v) for v in value]
    return value


def decode_state(value: Any) -> Any:
    if isinstance(value, list):
        return [decode_state(v) for v in value]
    if not isinstance(value, dict):
        return value
    if "tp" in value:
        return TopicPartition(*value["tp"])
    if "dc" in value:
        return STATE_CLASSES[value["dc"]](**{k: decode_state(v) for k, v in value["f"].items()})
    if "date" in value:
        return dt.date.fromisoformat(value["date"])
    if "set" in value:
        return {decode_state(v) for v in value["set"]}
    return {decode_state(k): decode_state(v) for k, v in value["map"]}
