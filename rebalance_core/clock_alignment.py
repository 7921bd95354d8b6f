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
A pair whose bound lies beyond the clocks' disagreement allowance (`ReplaySettings.clock_skew_ms`) is no
clock matter and bounds nothing: a static member's JoinGroup in a Stable group gets the current generation
back with no join phase (GroupCoordinator.updateStaticMemberAndRebalance), a member rejoining with
unchanged metadata in Stable or CompletingRebalance the same (handleJoinGroup), long after it completed.
Each member log (`file`, else `source`) takes the narrowest interval its pairs give; where 0 lies outside it, the
clocks contradict the protocol and the log is moved by the least shift that restores the order (the
interval's end nearest 0); otherwise it is left as it is (the allowance rules, `ReplaySettings
.clock_skew_ms`, cover what clocks cannot order). Pairs that contradict each other leave the log as
it is. Pure: no I/O, no clock.
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
FIELDS_READ = ("side", "event_type", "generation_id", "ts", "client_id", "file", "source", "line")


def member_log_offsets(events: list[Event], skew_ms: int) -> dict[str, int]:
    """One group's events (any order) -> member log (`file`, else `source`) -> the shift (ms) to
    subtract from its instants for the protocol's order to hold against the coordinator's log; only the
    logs that need one."""
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
        return {}
    bounds: dict[str, list] = {}  # log -> [lowest offset, highest offset]
    last_join: dict[tuple[str, str], int] = {}  # (log, client) -> its last JoinGroup line
    for e in sorted(
        (e for e in events if e.side != _COORDINATOR), key=lambda e: (member_log(e), e.line or 0, e.ts)
    ):
        log, client = member_log(e), e.client_id or ""
        if e.event_type == _JOIN_SENT:
            last_join[(log, client)] = e.ts
            continue
        low = high = None
        if e.event_type == _JOIN_RESPONSE and e.generation_id in completed:
            at = completed[e.generation_id]
            high = e.ts - at
            sent = last_join.pop((log, client), None)
            if sent is not None and sent <= e.ts:
                low = sent - at
        elif e.event_type == _SYNC_RESPONSE and e.generation_id in assigned:
            high = e.ts - assigned[e.generation_id]
        low = low if low is not None and low <= skew_ms else None
        high = high if high is not None and high >= -skew_ms else None
        if low is None and high is None:
            continue
        interval = bounds.setdefault(log, [None, None])
        if low is not None:
            interval[0] = low if interval[0] is None else max(interval[0], low)
        if high is not None:
            interval[1] = high if interval[1] is None else min(interval[1], high)
    offsets = {}
    for log, (low, high) in bounds.items():
        if low is not None and high is not None and low > high:
            continue  # the pairs contradict each other: no single offset explains them
        if low is not None and low > 0:
            offsets[log] = low
        elif high is not None and high < 0:
            offsets[log] = high
    return offsets


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
