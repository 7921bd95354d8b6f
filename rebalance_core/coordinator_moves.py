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

The broker-wide "Elected as the group coordinator for partition P" / "Resigned as the group coordinator
for partition P" lines (GroupCoordinator.onElection / onResignation, 2.8+; before 2.8 and in the 4.x
Java runtime "Scheduling loading / unloading of ... __consumer_offsets-P") name no group: they are
events `coordinator_elected` / `coordinator_resigned` of the partition (`PartitionHandover`), and
`apply_handovers` gives them to every group of the run whose offsets partition is P
(`partition_for`, with offsets.topic.num.partitions configured or inferred, coordinator_placement):
a tenure begins at the election and ends at the resignation (`elected` / `resigned`), and a group with
no line of its own on that broker gets the tenure from the partition alone (`seen_by` = `partition`).
A partition-only tenure is not carried across nightly runs (the next run sees it from its first line).

Pure: no I/O, no clock.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from rebalance_core.events import Event
from rebalance_core.incidents import IncidentKind, IncidentSettings, incident_row
from rebalance_core.kafka_logs.writer_lines import partition_for
from rebalance_core.measure_records import DAY_MS, day_end_ms, utc_date
from schemas.events import BROKER_WIDE_EVENT_TYPES, EventType

_BROKER_PREFIX = "broker-"
HANDOVER_TYPES = BROKER_WIDE_EVENT_TYPES


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
        self.tenure = Tenure(broker, from_ts, started_by, e.ts, seen_by=seen_by, day=e.ts // DAY_MS)

    def _next_day(self, ts: int) -> None:
        """A tenure is one row per UTC day it spans (rows are dated like every table, by the day that
        closes them): a new day's event closes the previous day's row (to_ts null: it went on)."""
        tenure = self.tenure
        if tenure is None or tenure.day is None or ts // DAY_MS <= tenure.day:
            return
        if not tenure.day_written:
            self.out.append(self._row(tenure, None, None))
        tenure.day, tenure.day_written = ts // DAY_MS, False

    def _end(self, ts: int, ended_by: str) -> None:
        self._next_day(ts)
        tenure, self.tenure = self.tenure, None
        if tenure is None:
            return
        self.out.append(self._row(tenure, ts, ended_by))

    def _row(self, tenure: Tenure, to_ts: int | None, ended_by: str | None) -> dict:
        day = tenure.day if tenure.day is not None else tenure.last_seen // DAY_MS
        return {
            **self.key,
            "event_date": utc_date(day * DAY_MS),
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
    partitions: dict[tuple[str, str, str], int] = {}
    for row in tenure_rows:
        if row.get("to_ts") is None or row.get("ended_by") is None:
            continue
        ends.setdefault((row.get("cluster"), row["broker"]), []).append((row["to_ts"], row["group_id"]))
        if row.get("offsets_partition") is not None:
            partitions[(row.get("cluster"), row["broker"], row["group_id"])] = row["offsets_partition"]
        else:
            partitions.setdefault((row.get("cluster"), row["broker"], row["group_id"]), None)
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
                    partitions=sorted(
                        {f"__consumer_offsets-{partitions[(cluster, broker, g)]}" for g in groups}
                        - {"__consumer_offsets-None"}
                    )
                    or None,
                    detail=f"broker {broker} stopped coordinating {len(groups)} groups",
                )
                row["incident_id"] = (
                    f"{cluster}:broker-{broker}:{IncidentKind.COORDINATOR_MOVE.value}@{burst[0][0]}"
                )
                out.append(row)
            burst = [(ts, group)] if ts is not None else []
    return out


# ------------------------------------------------------------------------- partition hand-overs
@dataclass(frozen=True)
class PartitionHandover:
    """A broker became (elected) or stopped being (resigned) the leader of `__consumer_offsets-P`."""

    cluster: str
    broker: str
    partition: int
    ts: int
    elected: bool


def handover_of(e: Event) -> PartitionHandover | None:
    """The hand-over a `coordinator_elected` / `coordinator_resigned` event records (None otherwise)."""
    return handover_from(e.cluster, e.source, e.event_type, e.ts, e.attributes)


def handover_from(
    cluster: str, source: str | None, event_type: str, ts: int, attributes: Mapping[str, str] | None
) -> PartitionHandover | None:
    """`handover_of` from an event's fields (the job reads them from its rows)."""
    if event_type not in HANDOVER_TYPES:
        return None
    partition = (attributes or {}).get("offsets_partition")
    broker = _broker_of(source)
    if broker is None or partition is None or not str(partition).isdigit():
        return None
    return PartitionHandover(
        cluster, broker, int(partition), ts, event_type == EventType.COORDINATOR_ELECTED.value
    )


@dataclass
class _Span:
    broker: str
    from_ts: int | None
    to_ts: int | None
    ended_by: str | None


def _partition_spans(handovers: list[PartitionHandover]) -> list[_Span]:
    """One partition's leadership spans from its hand-overs in time order. An election while another
    broker still leads ends that one (its resignation is not in the logs we have: `moved`); a repeated
    line (the Elected line and the loading line of one election) changes nothing."""
    spans: list[_Span] = []
    current: _Span | None = None
    for h in sorted(handovers, key=lambda h: (h.ts, not h.elected)):
        if h.elected:
            if current is not None and current.broker == h.broker:
                continue
            if current is not None:
                current.to_ts, current.ended_by = h.ts, "moved"
            current = _Span(h.broker, h.ts, None, None)
            spans.append(current)
        elif current is not None and current.broker == h.broker:
            current.to_ts, current.ended_by, current = h.ts, "resigned", None
        elif current is None and not (spans and spans[-1].broker == h.broker and spans[-1].ended_by):
            spans.append(_Span(h.broker, None, h.ts, "resigned"))  # led it since before the log
    return spans


def apply_handovers(
    tenure_rows: list[dict],
    handovers: Iterable[PartitionHandover],
    groups: Mapping[str, Iterable[str]],
    partition_counts: Mapping[str, int | None],
    last_ts: int | None = None,
    scenario: str = "actual",
) -> list[dict]:
    """`tenure_rows` (CoordinatorTracker's rows of the run, instants in epoch ms) with the partitions'
    hand-overs given to their groups: `groups` = cluster -> the run's group ids, `partition_counts` =
    cluster -> offsets.topic.num.partitions (None: unknown, the cluster's hand-overs are not used).
    A group's tenure on the broker is refined (begins at the election: `elected`; ends at the
    resignation: `resigned`, unless the group's own unload line ended it); a span with no tenure of the
    group on that broker becomes tenure rows of its own (`seen_by` = partition), one per UTC day like
    the tracker's, up to `last_ts` (the run's end) when the span is still open."""
    by_partition: dict[tuple[str, int], list[PartitionHandover]] = {}
    for h in handovers:
        by_partition.setdefault((h.cluster, h.partition), []).append(h)
    rows = [dict(r) for r in tenure_rows]
    by_group: dict[tuple[str, str], list[dict]] = {}
    for row in rows:
        by_group.setdefault((row["cluster"], row["group_id"]), []).append(row)
    added: list[dict] = []
    for cluster, names in sorted(groups.items(), key=lambda kv: str(kv[0])):
        count = partition_counts.get(cluster)
        if not count:
            continue
        for group_id in sorted(set(names)):
            partition = partition_for(group_id, count)
            found = by_partition.get((cluster, partition))
            if not found:
                continue
            own = by_group.get((cluster, group_id), [])
            key = {"cluster": cluster, "group_id": group_id, "scenario": scenario}
            for span in _partition_spans(found):
                matched = [r for r in own if r["broker"] == span.broker and _overlaps(r, span)]
                if matched:
                    _refine(matched, span, key, partition, added)
                else:
                    added.extend(_span_rows(key, span, partition, last_ts))
    return rows + added


def _row_end(row: dict) -> int:
    """A tenure row's last instant: its end, else the end of its day (the tenure went on)."""
    if row.get("to_ts") is not None:
        return row["to_ts"]
    return day_end_ms(row["event_date"])


def _overlaps(row: dict, span: _Span) -> bool:
    start = row["from_ts"] if row.get("from_ts") is not None else -(1 << 62)
    span_start = span.from_ts if span.from_ts is not None else -(1 << 62)
    span_end = span.to_ts if span.to_ts is not None else 1 << 62
    return start <= span_end and _row_end(row) >= span_start


def _refine(matched: list[dict], span: _Span, key: dict, partition: int, added: list[dict]) -> None:
    matched.sort(key=lambda r: (r["event_date"], r.get("to_ts") is None, r.get("to_ts") or 0))
    first, last = matched[0], matched[-1]
    if span.from_ts is not None and (first.get("from_ts") is None or first["from_ts"] > span.from_ts):
        old = first.get("from_ts")
        for row in matched:  # a tenure's rows of later days repeat its start
            if row.get("from_ts") == old:
                row["from_ts"], row["started_by"] = span.from_ts, "elected"
    for row in matched:
        if row.get("offsets_partition") is None:
            row["offsets_partition"] = partition
    if span.to_ts is None or span.ended_by != "resigned":
        return
    if last.get("to_ts") is not None:
        if last["to_ts"] > span.to_ts and last.get("ended_by") in ("moved", "coordinator_unavailable"):
            last["to_ts"], last["ended_by"] = span.to_ts, "resigned"
        return  # else its own unload line (logged by the same resignation) ends it
    if utc_date(span.to_ts) == last["event_date"]:
        last["to_ts"], last["ended_by"] = span.to_ts, "resigned"
    else:  # the group logged nothing on the resignation's day: the row of that day ends the tenure
        added.append(
            {**last, "event_date": utc_date(span.to_ts), "to_ts": span.to_ts, "ended_by": "resigned"}
        )


def _span_rows(key: dict, span: _Span, partition: int, last_ts: int | None) -> list[dict]:
    end = span.to_ts if span.to_ts is not None else (last_ts if last_ts is not None else span.from_ts)
    first_day = (span.from_ts if span.from_ts is not None else end) // DAY_MS
    last_day = max(first_day, end // DAY_MS)
    base = {
        **key,
        "broker": span.broker,
        "from_ts": span.from_ts,
        "started_by": "elected" if span.from_ts is not None else "first_seen",
        "offsets_partition": partition,
        "seen_by": "partition",
    }
    out = []
    for day in range(first_day, last_day + 1):
        closing = day == last_day and span.to_ts is not None
        out.append(
            {
                **base,
                "event_date": utc_date(day * DAY_MS),
                "to_ts": span.to_ts if closing else None,
                "ended_by": span.ended_by if closing else None,
            }
        )
    return out


def across_groups(
    tenure_rows: list[dict],
    handovers: Iterable[PartitionHandover],
    groups: Mapping[str, Iterable[str]],
    offsets_topic_partitions: int | None = None,
    last_ts: int | None = None,
    scenario: str = "actual",
    settings: IncidentSettings | None = None,
) -> tuple[list[dict], list[dict], list[dict]]:
    """What no single group shows, from the run's tenure rows and partition hand-overs: (tenure rows
    with the hand-overs applied, coordinator_move incidents, coordinator_placement rows without their
    event_date). The partition count per cluster is `offsets_topic_partitions` when configured, else
    inferred from the groups' logged partitions (coordinator_placement.check_placement)."""
    from rebalance_core.coordinator_placement import check_placement

    observed: dict[str, list[tuple[str, int]]] = {}
    for row in tenure_rows:
        if row.get("offsets_partition") is not None:
            observed.setdefault(row["cluster"], []).append((row["group_id"], row["offsets_partition"]))
    handovers = list(handovers)
    counts: dict[str, int | None] = {}
    placement: list[dict] = []
    for cluster in sorted({*observed, *groups, *(h.cluster for h in handovers)}, key=str):
        count, rows = check_placement(observed.get(cluster, ()), offsets_topic_partitions)
        counts[cluster] = count.count
        placement.extend({"cluster": cluster, "scenario": scenario, **row} for row in rows)
    tenures = apply_handovers(tenure_rows, handovers, groups, counts, last_ts, scenario)
    return tenures, move_incidents(tenures, settings, scenario), placement
