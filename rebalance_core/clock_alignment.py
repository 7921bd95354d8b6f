"""A member's log whose clock disagrees with the coordinator's: aligned by the protocol's own order.

Instants of different hosts' logs carry different clocks. Where a classic group's broker log and a
member's log are both in the input, Kafka's request/response causality bounds the member clock's offset
from the broker's: the member's JoinGroup reached the coordinator before the join phase it joined
completed, and the response naming that generation left after it (GroupCoordinator.onCompleteJoin
answers every member at completion; ClassicGroup in 4.0); its SyncGroup response for a generation left
after the leader's assignment arrived (GroupCoordinator.setAndPropagateAssignment). So with
offset = member clock - broker clock:
    join_sent - join_completed  <=  offset  <=  join_response - join_completed
    offset  <=  sync_response - assignment_received
A response logged before the completion it names proves the member clock behind, whatever the size:
no Kafka path answers earlier. A JoinGroup logged after that completion proves it ahead unless the
coordinator may have answered it with no join phase of its own, long after the completion: a static
member's JoinGroup in a Stable group (GroupCoordinator.updateStaticMemberAndRebalance), a member rejoining
with unchanged metadata in Stable or CompletingRebalance (handleJoinGroup); such a pair bounds nothing
beyond the allowance (`ReplaySettings.clock_skew_ms`). A pair that contradicts the log's other pairs (a
generation id reused after the group was deleted) is left out; the logs whose pairs contradict each other
beyond the allowance are reported (`ClockAlignment.contradicted`).
Each member log (`file`, else `source`) takes the narrowest interval its pairs give; where 0 lies outside it, the
clocks contradict the protocol and the log is moved by the least shift that restores the order (the
interval's end nearest 0); otherwise it is left as it is (the allowance rules, `ReplaySettings
.clock_skew_ms`, cover what clocks cannot order). Pure: no I/O, no clock.
"""

from __future__ import annotations

import dataclasses

from rebalance_core.events import Event
from schemas.events import EventType

_COORDINATOR = "coordinator"
_JOIN_SENT = EventType.JOIN_SENT.value
_JOIN_RESPONSE = EventType.JOIN_RESPONSE.value
_SYNC_RESPONSE = EventType.SYNC_RESPONSE.value
_JOIN_COMPLETED = EventType.JOIN_COMPLETED.value
_ASSIGNMENT_RECEIVED = EventType.ASSIGNMENT_RECEIVED.value
# What the rule reads, and nothing else: a caller holding many events (the Spark job) hands
# `member_log_offsets` only these, the coordinator's events of the first tuple and the other sides' of the
# second, with these fields.
COORDINATOR_EVENT_TYPES = (_JOIN_COMPLETED, _ASSIGNMENT_RECEIVED)
MEMBER_EVENT_TYPES = (_JOIN_SENT, _JOIN_RESPONSE, _SYNC_RESPONSE)
FIELDS_READ = (
    "side",
    "event_type",
    "generation_id",
    "ts",
    "client_id",
    "group_instance_id",
    "file",
    "source",
    "line",
)


def member_log_offsets(events: list[Event], skew_ms: int) -> dict[str, int]:
    """One group's events (any order) -> member log (`file`, else `source`) -> the shift (ms) to
    subtract from its instants for the protocol's order to hold against the coordinator's log; only the
    logs that need one."""
    return member_log_alignment(events, skew_ms).offsets


@dataclasses.dataclass(frozen=True)
class ClockAlignment:
    """`member_log_alignment`'s result: the shift per member log that needs one, and the logs whose pairs
    contradict each other by more than the allowance (log -> how far, ms): no one shift explains them."""

    offsets: dict[str, int]
    contradicted: dict[str, int]


def member_log_alignment(events: list[Event], skew_ms: int) -> ClockAlignment:
    """`member_log_offsets` with the logs whose pairs contradict each other beyond `skew_ms`."""
    completed: dict[int, int] = {}
    assigned: dict[int, int] = {}
    for e in events:
        if e.side != _COORDINATOR or e.generation_id is None:
            continue
        if e.event_type == _JOIN_COMPLETED:
            completed.setdefault(e.generation_id, e.ts)
        elif e.event_type == _ASSIGNMENT_RECEIVED:
            assigned.setdefault(e.generation_id, e.ts)
    if not completed and not assigned:
        return ClockAlignment({}, {})
    pairs: dict[str, list[tuple[int | None, int | None]]] = {}  # log -> (lowest, highest offset) per pair
    last_join: dict[tuple[str, str], Event] = {}  # (log, client) -> its last JoinGroup line
    answered: set[tuple[str, str, int]] = set()  # (log, client, generation) a JoinGroup response named
    for e in sorted(
        (e for e in events if e.side != _COORDINATOR), key=lambda e: (member_log(e), e.line or 0, e.ts)
    ):
        log, client = member_log(e), e.client_id or ""
        if e.event_type == _JOIN_SENT:
            last_join[(log, client)] = e
            continue
        low = high = None
        if e.event_type == _JOIN_RESPONSE and e.generation_id in completed:
            at = completed[e.generation_id]
            high = e.ts - at
            sent = last_join.pop((log, client), None)
            if sent is not None and sent.ts <= e.ts:
                low = sent.ts - at
                if low > skew_ms and _may_be_answered_without_join_phase(sent, e, answered):
                    low = None
            answered.add((log, client, e.generation_id))
        elif e.event_type == _SYNC_RESPONSE and e.generation_id in assigned:
            high = e.ts - assigned[e.generation_id]
        if low is not None or high is not None:
            pairs.setdefault(log, []).append((low, high))
    offsets: dict[str, int] = {}
    contradicted: dict[str, int] = {}
    for log, log_pairs in pairs.items():
        low, high, beyond = _consensus(log_pairs)
        if beyond > skew_ms:
            contradicted[log] = beyond
        if low is not None and low > 0:
            offsets[log] = low
        elif high is not None and high < 0:
            offsets[log] = high
    return ClockAlignment(offsets, contradicted)


def _may_be_answered_without_join_phase(sent: Event, response: Event, answered: set) -> bool:
    """Whether the coordinator may have answered JoinGroup `sent` with the generation `response` names
    long after that generation's join phase completed, with no join phase of its own: a static member's
    JoinGroup in a Stable group (GroupCoordinator.updateStaticMemberAndRebalance returns the current
    generation), or a member rejoining with unchanged metadata in Stable or CompletingRebalance
    (GroupCoordinator.handleJoinGroup; ClassicGroup in 4.0), which its log shows as a second response
    naming the same generation. Such a pair bounds no clock offset."""
    if sent.group_instance_id or response.group_instance_id:
        return True
    return (member_log(response), response.client_id or "", response.generation_id) in answered


def _consensus(pairs: list[tuple[int | None, int | None]]) -> tuple[int | None, int | None, int]:
    """The offset interval (lowest, highest; None: unbounded) that the most pairs agree on, and how far
    (ms) the farthest pair left out lies from it (0: all agree). No Kafka path answers a JoinGroup or a
    SyncGroup before the completion it names, so one clock offset explains every pair of a log; a pair
    that contradicts the others names another lifetime of the group (a generation id reused after the
    group was deleted: GroupCoordinator.handleDeleteGroups, a new group counts from generation 0 again)
    and is left out."""
    lows = [low for low, _ in pairs if low is not None]
    highs = [high for _, high in pairs if high is not None]
    best, best_count = (None, None), -1
    for candidate in sorted(set(lows)) or [None]:
        # the interval from `candidate` up: the pairs whose lower bound it meets, cut by their upper bounds
        agreeing = [
            (low, high)
            for low, high in pairs
            if (candidate is None or low is None or low <= candidate)
            and (candidate is None or high is None or high >= candidate)
        ]
        if len(agreeing) > best_count:
            a_lows = [low for low, _ in agreeing if low is not None]
            a_highs = [high for _, high in agreeing if high is not None]
            best = (max(a_lows) if a_lows else None, min(a_highs) if a_highs else None)
            best_count = len(agreeing)
    if not lows:  # upper bounds only: they never contradict each other
        return None, min(highs) if highs else None, 0
    low, high = best
    beyond = 0
    for p_low, p_high in pairs:
        if p_low is not None and high is not None and p_low > high:
            beyond = max(beyond, p_low - high)
        if p_high is not None and low is not None and p_high < low:
            beyond = max(beyond, low - p_high)
    return low, high, beyond


def align_member_clocks(events: list[Event], skew_ms: int) -> list[Event]:
    """`events` with each member log's instants moved by its `member_log_offsets` shift (the others as
    they are); the same list when no log needs one."""
    offsets = member_log_offsets(events, skew_ms)
    if not offsets:
        return events
    return [
        dataclasses.replace(e, ts=e.ts - offsets[member_log(e)])
        if e.side != _COORDINATOR and member_log(e) in offsets
        else e
        for e in events
    ]


def member_log(e: Event) -> str:
    """The log an event comes from, the unit an offset applies to: its `file`, else its `source`."""
    return e.file or e.source or ""
