"""The one entry of a replay: canonical events (docs/events.md) of any number of groups -> the output
tables (schemas/tables.py). Groups events by (cluster, group_id), orders each group's events
(`event_order_key`), and picks the protocol's replayer per group (`new_replayer`): the classic
`classic.replayer.GroupReplayer` or the KIP-848 `consumer.ConsumerGroupReplayer`; both take
`replay_common.ReplaySettings`.
"""

from __future__ import annotations

from collections.abc import Iterable

from rebalance_core.classic.replayer import GroupReplayer
from rebalance_core.clock_alignment import align_member_clocks
from rebalance_core.consumer import ConsumerGroupReplayer, is_consumer_protocol_event
from rebalance_core.events import Event
from rebalance_core.replay_common import ReplaySettings, add_rows, empty_tables
from schemas.events import BROKER_WIDE_EVENT_TYPES, EventType

# Protocol order of event types at the same instant (docs/events.md, "Ordering").
EVENT_TYPE_RANK: dict[str, int] = {
    name.value: rank
    for rank, names in enumerate(
        [
            (
                EventType.CLIENT_CONFIG,  # settings at the client's start, before anything it does then
                EventType.COORDINATOR_DISCOVERED,
                EventType.GROUP_LOADED,
                EventType.TOPIC_METADATA_CHANGED,
            ),
            (EventType.MEMBER_REMOVED,),
            (EventType.HEARTBEAT_REBALANCING,),
            (EventType.JOIN_REQUESTED,),
            (EventType.JOIN_SENT,),
            (EventType.JOIN_RECEIVED,),
            (EventType.STATIC_MEMBER_REPLACED,),
            (EventType.REBALANCE_PREPARED,),
            (EventType.GROUP_EMPTY, EventType.LEADER_ELECTED),
            (EventType.JOIN_COMPLETED,),
            (EventType.JOIN_RESPONSE,),
            (EventType.ASSIGNMENT_COMPUTED,),
            (EventType.ASSIGNMENT_RECEIVED,),
            (EventType.GROUP_STABLE,),
            (EventType.SYNC_RESPONSE,),
            (EventType.PARTITIONS_LOST,),
            (EventType.PARTITIONS_REVOKED,),
            (EventType.PARTITIONS_ASSIGNED,),
            (EventType.POLL_TIMEOUT_EXPIRED,),
            (EventType.LEAVE_SENT,),
            (EventType.GROUP_DEAD,),
            (EventType.GROUP_UNLOADED, EventType.COORDINATOR_UNAVAILABLE),
            (EventType.GROUP_EPOCH_BUMPED,),
            (EventType.TARGET_ASSIGNMENT_COMPUTED,),
            (EventType.MEMBER_EPOCH_UPDATED,),
            (EventType.MEMBER_STATE_CHANGED,),
        ]
    )
    for name in names
}
UNKNOWN_RANK = len(set(EVENT_TYPE_RANK.values()))


def event_order_key(e: Event) -> tuple:
    """Replay order of a group's events: ts, protocol rank of the type, file, line, event_id."""
    return (
        e.ts,
        EVENT_TYPE_RANK.get(e.event_type, UNKNOWN_RANK),
        e.file or "",
        e.line if e.line is not None else -1,
        e.event_id or "",
    )


# ------------------------------------------------------------------------------------ many groups
def new_replayer(
    cluster: str,
    group_id: str,
    settings: ReplaySettings | None = None,
    state: dict | None = None,
    events: Iterable[Event] = (),
):
    """The replayer for a group: the KIP-848 `ConsumerGroupReplayer` when its state says so or any of
    `events` (the group's events, or a first batch) is one only a consumer-protocol group produces;
    else the classic `GroupReplayer`. Both have the same interface."""
    if state is not None:
        consumer = state.get("group_protocol") == "consumer"
    else:
        consumer = any(is_consumer_protocol_event(e) for e in events)
    cls = ConsumerGroupReplayer if consumer else GroupReplayer
    return cls(cluster, group_id, settings, state=state)


def events_by_group(
    events: Iterable[Event], clock_skew_ms: int = ReplaySettings.clock_skew_ms
) -> dict[tuple[str, str], list[Event]]:
    """(cluster, group_id) -> the group's events sorted by `event_order_key`, in key order. An offsets
    partition's hand-over (group_id `__consumer_offsets-P`) names no group and is left out: the run's
    coordinator moves read it (coordinator_moves.across_groups)."""
    by_group: dict[tuple[str, str], list[Event]] = {}
    for e in events:
        if e.event_type not in BROKER_WIDE_EVENT_TYPES:
            by_group.setdefault((e.cluster, e.group_id), []).append(e)
    # a member log whose clock contradicts the protocol's order against the broker's is aligned first
    return {
        key: sorted(align_member_clocks(by_group[key], clock_skew_ms), key=event_order_key)
        for key in sorted(by_group)
    }


def replay(
    events: Iterable[Event],
    settings: ReplaySettings | None = None,
    states: dict[tuple[str, str], dict] | None = None,
) -> dict[str, list[dict]]:
    """Replay the events of any number of groups: grouped by (cluster, group_id), each sorted by
    `event_order_key`, one replayer each (`new_replayer`; resumed from `states` where given)."""
    out = empty_tables()
    skew = (settings or ReplaySettings()).clock_skew_ms
    for key, group_events in events_by_group(events, skew).items():
        replayer = new_replayer(key[0], key[1], settings, (states or {}).get(key), group_events)
        replayer.feed(group_events)
        add_rows(out, replayer.finish())
    return out
