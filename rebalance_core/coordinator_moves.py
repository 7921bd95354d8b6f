"""Which broker coordinated a group when, and coordinator moves hitting many groups at once.

A broker logs a group's lines only while it coordinates the group (it leads the group's
`__consumer_offsets` partition), so each coordinator-side event's `source` (`broker-<id>`) names the
coordinator at that instant. Explicit hand-overs: "Loading group metadata for G with generation N" /
Java "Loaded classic group G" (`group_loaded`: the broker took the group over, GroupCoordinator
.onElection -> GroupMetadataManager.scheduleLoadGroupAndOffsets) and "Unloading group metadata for G"
(`group_unloaded`: onResignation). A member's "Discovered group coordinator X" / "Group coordinator X
is unavailable or invalid ... Rediscovery will be attempted" (`coordinator_discovered` /
`coordinator_unavailable`, attribute `coordinator_id` = the broker id) tell the same from the member's
side.

`CoordinatorTracker` turns one group's events into `group_coordinators` rows (one per tenure: broker,
from, to, how it began and ended, the logged offsets partition); `move_incidents` finds the instants
where one broker lost several groups at once (a broker restart in a rolling upgrade) and makes each one
`coordinator_move` incident.

Not read: the broker-wide "Elected as the group coordinator for partition P" / "Resigned as ..." lines
name no group (the parser quarantines nothing for them: they are skipped as not about a group); the
per-group load/unload lines above carry the same hand-over.

Pure: no I/O, no clock.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from rebalance_core.events import Event
from rebalance_core.incidents import IncidentKind, IncidentSettings, incident_row
from rebalance_core.measures import utc_date
from schemas.events import EventType

_BROKER_PREFIX = "broker-"
_DAY_MS = 86_400_000


@dataclass
class Tenure:
    broker: str
    from_ts: int | None  # None: before the log
    started_by: str  # group_loaded | coordinator_discovered | first_seen | moved
    last_seen: int
    offsets_partition: int | None = None
    seen_by: str = "coordinator"  # coordinator | member
    # the UTC day (epoch day) of the row being built, and whether that day's row is out already (a nightly
    # run writes the day it ends with; the next run must not write it again)
    day: int | None = None
    day_written: bool = False


# event types compared with every event, as plain strings (an enum member's .value is a Python-level property)
_COORDINATOR_DISCOVERED = EventType.COORDINATOR_DISCOVERED.value
_COORDINATOR_UNAVAILABLE = EventType.COORDINATOR_UNAVAILABLE.value
_GROUP_LOADED = EventType.GROUP_LOADED.value
_GROUP_UNLOADED = EventType.GROUP_UNLOADED.value


class CoordinatorTracker:
    def __init__(self, key: dict[str, Any], state: dict | None = None):
        self.key = key
        self.tenure: Tenure | None = None
        self.out: list[dict] = []
        if state and state.get("tenure"):
            self.tenure = Tenure(**state["tenure"])

    def observe(self, e: Event) -> None:
        self._next_day(e.ts)
        t = e.event_type
        attributes = e.attributes or {}
        if e.is_coordinator:
            broker = _broker_of(e.source)
            if broker is None:
                return
            partition = attributes.get("offsets_partition")
            if t == _GROUP_UNLOADED:
                self._begin_if_needed(broker, e, "first_seen", "coordinator")
                self._end(e.ts, "group_unloaded")
                return
            started_by = "group_loaded" if t == _GROUP_LOADED else "first_seen"
            self._begin_if_needed(broker, e, started_by, "coordinator", loaded=t == _GROUP_LOADED)
            if partition is not None and partition.isdigit() and self.tenure is not None:
                self.tenure.offsets_partition = int(partition)
        elif t == _COORDINATOR_DISCOVERED:
            broker = attributes.get("coordinator_id")
            if broker:
                self._begin_if_needed(str(broker), e, "coordinator_discovered", "member")
        elif t == _COORDINATOR_UNAVAILABLE:
            broker = attributes.get("coordinator_id")
            if self.tenure is not None and (not broker or str(broker) == self.tenure.broker):
                self._end(e.ts, "coordinator_unavailable")

    def _begin_if_needed(self, broker: str, e: Event, started_by: str, seen_by: str, loaded=False) -> None:
        current = self.tenure
        if current is not None and current.broker == broker and not (loaded and current.seen_by == "member"):
            current.last_seen = e.ts
            if seen_by == "coordinator":
                current.seen_by = "coordinator"
            return
        if current is not None and current.broker == broker:  # a member found it first; the load confirms
            current.last_seen, current.seen_by = e.ts, "coordinator"
            return
        if current is not None:
            self._end(e.ts, "moved")
            started_by = started_by if started_by != "first_seen" else "moved"
        # the first line of a group in the log: its coordinator since before the log, unless it loads now
        from_ts = e.ts if (started_by != "first_seen" or self.out) else None
        self.tenure = Tenure(broker, from_ts, started_by, e.ts, seen_by=seen_by, day=e.ts // _DAY_MS)

    def _next_day(self, ts: int) -> None:
        """A tenure is one row per UTC day it spans (rows are dated like every table, by the day that
        closes them): a new day's event closes the previous day's row (to_ts null: it went on)."""
        tenure = self.tenure
        if tenure is None or tenure.day is None or ts // _DAY_MS <= tenure.day:
            return
        if not tenure.day_written:
            self.out.append(self._row(tenure, None, None))
        tenure.day, tenure.day_written = ts // _DAY_MS, False

    def _end(self, ts: int, ended_by: str) -> None:
        self._next_day(ts)
        tenure, self.tenure = self.tenure, None
        if tenure is None:
            return
        self.out.append(self._row(tenure, ts, ended_by))

    def _row(self, tenure: Tenure, to_ts: int | None, ended_by: str | None) -> dict:
        day = tenure.day if tenure.day is not None else tenure.last_seen // _DAY_MS
        return {
            **self.key,
            "event_date": utc_date(day * _DAY_MS),
            "broker": tenure.broker,
            "from_ts": tenure.from_ts,
            "to_ts": to_ts,
            "started_by": tenure.started_by,
            "ended_by": ended_by,
            "offsets_partition": tenure.offsets_partition,
            "seen_by": tenure.seen_by,
        }

    def drain(self) -> list[dict]:
        out, self.out = self.out, []
        return out

    def finish(self, final: bool = True) -> list[dict]:
        """The open tenure's row of its last day (to_ts null: still coordinating at the end of the input),
        once; a nightly run (`final` False) carries the tenure on to the next run."""
        tenure = self.tenure
        if tenure is not None and not tenure.day_written:
            self.out.append(self._row(tenure, None, None))
            tenure.day_written = True
        if final:
            self.tenure = None
        return self.drain()

    def snapshot(self) -> dict:
        t = self.tenure
        return {"tenure": None if t is None else t.__dict__.copy()}


def _broker_of(source: str | None) -> str | None:
    if not source:
        return None
    return source[len(_BROKER_PREFIX) :] if source.startswith(_BROKER_PREFIX) else source


def move_incidents(
    tenure_rows: list[dict], settings: IncidentSettings | None = None, scenario: str = "actual"
) -> list[dict]:
    """`coordinator_move` incidents: per cluster and broker, groups whose tenure on it ended (unloaded,
    moved, or the member lost it) within `coordinator_move_window_ms` of each other, when at least
    `coordinator_move_groups` of them: one row per such burst, naming the groups."""
    s = settings or IncidentSettings()
    ends: dict[tuple[str, str], list[tuple[int, str]]] = {}
    for row in tenure_rows:
        if row.get("to_ts") is None or row.get("ended_by") is None:
            continue
        ends.setdefault((row.get("cluster"), row["broker"]), []).append((row["to_ts"], row["group_id"]))
    out = []
    for (cluster, broker), items in sorted(ends.items(), key=lambda kv: (str(kv[0][0]), kv[0][1])):
        items.sort()
        burst: list[tuple[int, str]] = []
        for ts, group in [*items, (None, None)]:
            if ts is not None and (not burst or ts - burst[-1][0] <= s.coordinator_move_window_ms):
                burst.append((ts, group))
                continue
            groups = sorted({g for _, g in burst})
            if len(groups) >= s.coordinator_move_groups:
                key = {"cluster": cluster, "group_id": None, "scenario": scenario}
                row = incident_row(
                    key,
                    IncidentKind.COORDINATOR_MOVE,
                    burst[0][0],
                    burst[-1][0],
                    groups=groups,
                    detail=f"broker {broker} stopped coordinating {len(groups)} groups",
                )
                row["incident_id"] = (
                    f"{cluster}:broker-{broker}:{IncidentKind.COORDINATOR_MOVE.value}@{burst[0][0]}"
                )
                out.append(row)
            burst = [(ts, group)] if ts is not None else []
    return out
