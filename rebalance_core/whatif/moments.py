"""The timeline moments that cost the most: every what-if number traced back to what happened.

Each rebalance episode of a replay (and each movement outside any episode, e.g. a static member's
restart that caused no rebalance) is charged to the timeline action that caused it: the latest action
whose effect on the group came at or before the episode began. An action takes effect when the
coordinator can see it: at once for a join, a leave, a subscription or partition count change, a
graceful restart; one session timeout after a crash, a kill or a GC pause (the coordinator's session
timer, GroupCoordinator heartbeat expiration); one max.poll.interval.ms into a slow poll (the heartbeat
thread's LeaveGroup). Per date, the costliest actions (partition-unavailable time, then stop-the-world,
then rebalances) are described in one line each, e.g.

    2024-11-08T10:05:00.003Z consumer-orders-3 joins: 1 rebalance (1 round), stop-the-world 43 ms,
    partitions unavailable 7.4 s, 3 moved, 3 revocations wasted
"""

from __future__ import annotations

import bisect
import datetime as dt
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from rebalance_core.events import format_ts
from rebalance_core.measure_records import utc_date
from rebalance_core.timeline import (
    Action,
    Crash,
    EnforceRebalance,
    Heartbeat,
    Join,
    Leave,
    PartitionCount,
    Pause,
    Restart,
    Stall,
    Subscribe,
    Timeline,
)

MOMENTS_PER_DAY = 3


@dataclass
class _Cost:
    action: Action | None
    at: int | None  # absolute instant of the action (None: no action explains it)
    rebalances: int = 0
    rounds: int = 0
    stw_ms: int = 0
    unavailable_ms: int = 0
    moved: int = 0
    wasted: int = 0
    dates: set = field(default_factory=set)

    def key(self) -> tuple:
        return (-self.unavailable_ms, -self.stw_ms, -self.rebalances, self.at or 0)


def costliest_moments(
    timeline: Timeline,
    tables: Mapping[str, Iterable[dict]],
    session_timeout_ms: int,
    max_poll_interval_ms: int,
    per_day: int = MOMENTS_PER_DAY,
) -> dict[dt.date, list[str]]:
    """event_date -> the descriptions of the costliest moments that day (see the module docstring)."""
    start = timeline.start_ms
    effects: list[tuple[int, int, Action]] = []  # (instant the coordinator sees it, action instant, action)
    for action in timeline.actions:
        if isinstance(action, Heartbeat):
            continue
        at = start + action.at
        effects.append((at + _delay(action, session_timeout_ms, max_poll_interval_ms), at, action))
    effects.sort(key=lambda item: item[0])
    instants = [effect for effect, _, _ in effects]
    # a movement outside any episode stops at the process's own instant (a static member down, which
    # the coordinator does not see): it is charged to the latest action at or before it
    by_action = sorted(range(len(effects)), key=lambda i: effects[i][1])
    action_instants = [effects[i][1] for i in by_action]
    costs: dict[int, _Cost] = {}

    def charge(instant: int | None, seen_by_coordinator: bool = True) -> _Cost:
        if instant is None:
            index = -1
        elif seen_by_coordinator:
            index = bisect.bisect_right(instants, instant) - 1
        else:
            found = bisect.bisect_right(action_instants, instant) - 1
            index = by_action[found] if found >= 0 else -1
        if index < 0:
            return costs.setdefault(-1, _Cost(None, None))
        _, at, action = effects[index]
        return costs.setdefault(index, _Cost(action, at))

    for row in tables.get("rebalance_episodes", ()):
        began = row.get("started_at") if row.get("started_at") is not None else row.get("stabilized_at")
        cost = charge(began)
        cost.rebalances += 1
        cost.rounds += row.get("rounds") or 0
        cost.stw_ms += row.get("stw_ms") or 0
        cost.unavailable_ms += row.get("partition_unavailable_ms") or 0
        cost.moved += row.get("partitions_moved") or 0
        cost.wasted += row.get("revocations_wasted") or 0
        cost.dates.add(row["event_date"])
    for row in tables.get("partition_movements", ()):
        if row.get("episode_id") is None and row.get("unavailable_ms"):
            cost = charge(row.get("revoked_at"), seen_by_coordinator=False)
            cost.unavailable_ms += row["unavailable_ms"]
            cost.moved += bool(row.get("moved"))
            cost.dates.add(row["event_date"])
    by_date: dict[dt.date, list[_Cost]] = {}
    for cost in costs.values():
        if cost.rebalances or cost.unavailable_ms or cost.stw_ms:
            day = min(cost.dates) if cost.dates else utc_date(cost.at or start)
            by_date.setdefault(day, []).append(cost)
    return {
        day: [_describe(cost) for cost in sorted(found, key=_Cost.key)[:per_day]]
        for day, found in sorted(by_date.items())
    }


def _delay(action: Action, session_timeout_ms: int, max_poll_interval_ms: int) -> int:
    if isinstance(action, Crash) or (isinstance(action, Restart) and not action.graceful):
        return session_timeout_ms
    if isinstance(action, Pause):
        return session_timeout_ms if action.kind == "gc" else max_poll_interval_ms
    if isinstance(action, Stall):  # removed at a rebalance timeout or its poll timer's expiry
        return max_poll_interval_ms
    return 0


def _what(action: Action | None) -> str:
    if action is None:
        return "before the timeline's first action"
    if isinstance(action, Join):
        return f"{action.member} joins"
    if isinstance(action, Leave):
        return f"{action.member} leaves (LeaveGroup)"
    if isinstance(action, Crash):
        return f"{action.member} crashes"
    if isinstance(action, Restart):
        how = "restarts" if action.graceful else "is killed and restarts"
        return f"{action.member} {how} (down {_duration(action.down_ms)})"
    if isinstance(action, Pause):
        what = "GC pause" if action.kind == "gc" else "slow poll"
        return f"{action.member} {what} of {_duration(action.duration_ms)}"
    if isinstance(action, Stall):
        return f"{action.member}'s poll loop stalls for good"
    if isinstance(action, EnforceRebalance):
        return f"{action.member} enforces a rebalance"
    if isinstance(action, Subscribe):
        return f"{action.member} subscribes to {', '.join(action.topics)}"
    if isinstance(action, PartitionCount):
        return f"topic {action.topic} grows to {action.count} partitions"
    return type(action).__name__.lower()


def _describe(cost: _Cost) -> str:
    when = format_ts(cost.at) if cost.at is not None else "-"
    parts = []
    if cost.rebalances:
        rounds = f" ({cost.rounds} round{'s' if cost.rounds != 1 else ''})" if cost.rounds else ""
        parts.append(f"{cost.rebalances} rebalance{'s' if cost.rebalances != 1 else ''}{rounds}")
    else:
        parts.append("no rebalance")
    parts.append(f"stop-the-world {_duration(cost.stw_ms)}")
    parts.append(f"partitions unavailable {_duration(cost.unavailable_ms)}")
    if cost.moved:
        parts.append(f"{cost.moved} moved")
    if cost.wasted:
        parts.append(f"{cost.wasted} revocation{'s' if cost.wasted != 1 else ''} wasted")
    return f"{when} {_what(cost.action)}: {', '.join(parts)}"


def _duration(ms: int) -> str:
    if ms < 1000:
        return f"{ms} ms"
    if ms < 60_000:
        return f"{ms / 1000:.1f} s"
    return f"{ms / 60_000:.1f} min"
