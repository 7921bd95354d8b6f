"""The Python side of the Spark replay: one Spark partition's sorted Arrow batches -> output rows.

Spark hands `replay_partition` the rows of a partition in (cluster, group_id, _kind, event order)
order, in pandas batches of at most spark.sql.execution.arrow.maxRecordsPerBatch rows. A group's
replayer (rebalance_core.replay.new_replayer: classic or KIP-848, wrapped by rebalance_core.explain with causes,
incidents and coordinators) lives across batches, so memory
stays bounded by one batch plus the replayers' state whatever the size of a group; a group ends when
the next group's first row (or the partition's end) arrives. A group's previous state, when it has one, is its first row (`_kind` = KIND_STATE, the
snapshot in `_state_json`).

`wire_row` makes the rows of that stream from Events (tests, benchmarks).

Before the sort, the job aligns each member log's clock against its group's coordinator log by the
core's rule (rebalance_core.clock_alignment, as rebalance_core.replay.events_by_group applies it):
`clock_offsets` computes the shifts per group from the few events the rule reads (a groupBy pre-pass, see
jobs.replay `_with_member_clocks_aligned`), and the job moves those logs' `ts` before sorting.

Every output table goes through one flat schema (`output_schema`): the union of the tables' columns
plus `_table`; the job splits it by `_table` afterwards. Its timestamp columns travel as the core's
epoch milliseconds (LONG): the job turns them into timestamps on the JVM side (jobs.replay
`_output_table`), where it is cheap, instead of a pandas datetime conversion here. No pyspark import here: this module also
runs under plain pandas (tests, the pure-core comparison).
"""

from __future__ import annotations

import datetime as dt
import functools
import itertools
import json
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
import pandas as pd

from jobs.pause_points import checkpoint
from rebalance_core.clock_alignment import member_log_offsets
from rebalance_core.events import Event
from rebalance_core.explain import EXPLAIN_TABLES, new_explained_replayer
from rebalance_core.replay_common import ReplaySettings
from schemas.events import EVENT_COLUMNS
from schemas.fields import LONG, STRING, TIMESTAMP, Column
from schemas.tables import REPLAY_TABLES, TABLES

KIND_STATE = 0  # sorts before a group's events
KIND_EVENT = 1
OUTPUT_TABLES = (*REPLAY_TABLES, *EXPLAIN_TABLES, "group_state")
# anomaly rule: a row the run cannot write (see RowSink._outside_run_dates)
OUTSIDE_RUN_DATES = "outside_run_dates"
# A group's replayer is chosen from its first events (new_replayer: a KIP-848 event type makes it a
# consumer-protocol group); a batch may end just after a group's first row, so its first events are
# kept until there are this many (or the group ends) before choosing.
DECIDE_AFTER_EVENTS = 1000


def _output_columns() -> tuple[Column, ...]:
    columns: dict[str, Column] = {}
    for table in OUTPUT_TABLES:
        for column in TABLES[table]:
            seen = columns.setdefault(column.name, column)
            if seen.type != column.type:  # one flat schema needs one type per column name
                raise TypeError(
                    f"column {column.name!r} is {seen.type} and {column.type} in the output tables"
                )
    return (*columns.values(), Column("_table", STRING, True))


OUTPUT_COLUMNS = _output_columns()
OUTPUT_NAMES = [c.name for c in OUTPUT_COLUMNS]
_TABLE_NAMES = {table: frozenset(c.name for c in TABLES[table]) for table in OUTPUT_TABLES}
TIMESTAMP_NAMES = frozenset(c.name for c in OUTPUT_COLUMNS if c.type == TIMESTAMP)
# RowSink.flush's two blocks: the instants (Int64) and the rest (object); name -> (is instant, row)
_INSTANT_NAMES = [name for name in OUTPUT_NAMES if name in TIMESTAMP_NAMES]
_OBJECT_NAMES = [name for name in OUTPUT_NAMES if name not in TIMESTAMP_NAMES]
_BLOCK_ROWS = {
    **{name: (False, i) for i, name in enumerate(_OBJECT_NAMES)},
    **{name: (True, i) for i, name in enumerate(_INSTANT_NAMES)},
}
_TABLE_ROW = _OBJECT_NAMES.index("_table")


def wire_columns(columns) -> tuple[Column, ...]:
    """`columns` as mapInPandas returns them: timestamps as epoch milliseconds (see the docstring)."""
    return tuple(replace(c, type=LONG) if c.type == TIMESTAMP else c for c in columns)


def output_schema():
    from schemas.fields import spark_schema

    return spark_schema(wire_columns(OUTPUT_COLUMNS))


def replay_partition(
    batches: Iterator[pd.DataFrame], settings: ReplaySettings, date_from: dt.date, date_to: dt.date
) -> Iterator[pd.DataFrame]:
    """mapInPandas function: replay the sorted rows of one partition (see the module docstring)."""
    checkpoint("replaying")  # the tests' hook (jobs.pause_points): a pause in the Python worker
    sink = RowSink(settings, date_from, date_to)
    group: _Group | None = None
    for batch in batches:
        keys = zip(batch["cluster"].tolist(), batch["group_id"].tolist())
        states = batch["_state_json"].tolist()
        for key, state_json, event in zip(keys, states, batch_events(batch)):
            if group is None or key != group.key:
                if group is not None:
                    sink.finish(group)
                group = _Group(key, state_json if event is None else None)
                if event is None:
                    continue
            group.pending.append(event)
        if group is not None:
            sink.drain(group)
        frame = sink.flush()
        if frame is not None:
            yield frame
    if group is not None:
        sink.finish(group)
        frame = sink.flush()
        if frame is not None:
            yield frame


def batch_events(batch: pd.DataFrame) -> list[Event | None]:
    """The batch's rows as core Events, None for a KIND_STATE row: column by column (Event.from_columns,
    one constructor call per event; a dict per row cost as much as the core's replay of the event),
    `ts` from `_ts_ms` (epoch milliseconds; pandas' datetime column is not read)."""
    events: list[Event | None] = frame_events(batch)
    for index, kind in enumerate(batch["_kind"].tolist()):
        if kind != KIND_EVENT:
            events[index] = None
    return events


def frame_events(frame: pd.DataFrame) -> list[Event]:
    """Every row of a frame of event columns (any subset; `ts` from `_ts_ms`) as a core Event."""
    columns = {name: plain_values(frame[name]) for name in _EVENT_NAMES if name in frame.columns}
    columns["ts"] = plain_values(frame["_ts_ms"])
    return Event.from_columns(columns)


def plain_values(column: pd.Series) -> list:
    """A column's values as plain Python ones, None for a null (where `tolist()` gives pd.NA for a null
    of a nullable integer, NaN of a float), column by column: pandas' to_dict("records") boxes every cell
    one at a time."""
    if isinstance(column.dtype, pd.api.extensions.ExtensionDtype):
        return column.array.to_numpy(dtype=object, na_value=None).tolist()
    values = column.tolist()
    if column.dtype.kind == "f":
        values = [None if value != value else value for value in values]
    return values


def wire_row(event: Event) -> dict:
    """The row of `event` as the job's replay stream carries it (jobs.replay._replay): the event's
    columns, `_kind`, `_state_json` and `_ts_ms`."""
    return {**event.to_row(), "_kind": KIND_EVENT, "_state_json": None, "_ts_ms": event.ts}


_EVENT_NAMES = tuple(c.name for c in EVENT_COLUMNS if c.name != "ts")


CLOCK_OFFSET_COLUMNS = (
    Column("cluster", STRING, False),
    Column("group_id", STRING, False),
    Column("_log", STRING, False),
    Column("_clock_offset_ms", LONG, False),
)


def clock_offsets(rows: pd.DataFrame, skew_ms: int) -> pd.DataFrame:
    """applyInPandas function over one group's events the clock rule reads (clock_alignment
    .FIELDS_READ, `ts` as `_ts_ms`): a row per member log that needs a shift (CLOCK_OFFSET_COLUMNS)."""
    events = frame_events(rows)
    offsets = member_log_offsets(events, skew_ms) if events else {}
    cluster, group_id = (events[0].cluster, events[0].group_id) if events else (None, None)
    # typed arrays: an empty list would make a float column, which Arrow cannot turn into the schema's string
    strings = functools.partial(np.array, dtype=object)
    return pd.DataFrame(
        {
            "cluster": strings([cluster] * len(offsets)),
            "group_id": strings([group_id] * len(offsets)),
            "_log": strings(list(offsets)),
            "_clock_offset_ms": np.array(list(offsets.values()), dtype=np.int64),
        },
        columns=[c.name for c in CLOCK_OFFSET_COLUMNS],
    )


@dataclass
class _Group:
    """The group being replayed: its previous state, its events not fed yet, its replayer (made once
    its first events tell a KIP-848 group from a classic one, see DECIDE_AFTER_EVENTS)."""

    key: tuple[str, str]
    state_json: str | None
    pending: list[Event] = field(default_factory=list)
    replayer: Any = None


class RowSink:
    """Replays groups and collects their output rows between two flushes."""

    def __init__(self, settings: ReplaySettings, date_from: dt.date, date_to: dt.date):
        self.settings = settings
        self.date_from = date_from
        self.date_to = date_to
        self.tables: dict[str, list[dict]] = {}  # table -> rows since the last flush

    def drain(self, group: _Group) -> None:
        if group.replayer is None and len(group.pending) < DECIDE_AFTER_EVENTS:
            return  # too few events yet to tell the group's protocol: wait for more (or its end)
        self.add(self._fed(group).drain())

    def finish(self, group: _Group) -> None:
        replayer = self._fed(group)
        self.add(replayer.finish())
        snapshot = replayer.snapshot()
        self._append(
            "group_state",
            {
                "cluster": replayer.cluster,
                "group_id": replayer.group_id,
                "scenario": self.settings.scenario,
                "event_date": self.date_to,
                "as_of_ts": replayer.last_ts,
                "state_version": snapshot["state_version"],
                "state_json": json.dumps(snapshot, separators=(",", ":"), sort_keys=True),
            },
        )

    def _fed(self, group: _Group):
        if group.replayer is None:
            group.replayer = self._new_replayer(group)
        group.replayer.feed(group.pending)
        group.pending = []
        return group.replayer

    def _new_replayer(self, group: _Group):
        cluster, group_id = group.key
        if group.state_json is not None:
            try:
                state = json.loads(group.state_json)
                return new_explained_replayer(cluster, group_id, self.settings, state, group.pending)
            except (ValueError, KeyError, TypeError) as exc:  # e.g. a state written by another version
                detail = f"previous state ignored: {exc}"
                self._anomaly(cluster, group_id, self.date_from, "state_unreadable", detail)
        return new_explained_replayer(cluster, group_id, self.settings, None, group.pending)

    def add(self, tables: dict[str, list[dict]]) -> None:
        date_from, date_to = self.date_from, self.date_to
        for table, rows in tables.items():
            kept = [row for row in rows if date_from <= row["event_date"] <= date_to]
            if len(kept) < len(rows):
                for row in rows:
                    if not date_from <= row["event_date"] <= date_to:
                        self._outside_run_dates(table, row)
            if kept:
                self.tables.setdefault(table, []).extend(kept)

    def _append(self, table: str, row: dict) -> None:
        self.tables.setdefault(table, []).append(row)

    def flush(self) -> pd.DataFrame | None:
        if not self.tables:
            return None
        # Two 2-D blocks filled a table's rows at a time, None where a table has no such column (a
        # missing value must be None: pandas' NaN cannot become a list, map or string in Arrow); one
        # frame of each block, the object one declared object (no per-column type inference). np.fromiter
        # keeps list values whole (slice assignment from a list would not).
        tables, self.tables = self.tables, {}
        total = sum(len(rows) for rows in tables.values())
        objects = np.full((len(_OBJECT_NAMES), total), None, dtype=object)
        instants = np.full((len(_INSTANT_NAMES), total), None, dtype=object)
        start = 0
        for table, rows in tables.items():
            end = start + len(rows)
            objects[_TABLE_ROW, start:end] = table
            for name in _TABLE_NAMES[table]:
                block, index = _BLOCK_ROWS[name]
                values = np.fromiter(
                    map(dict.get, rows, itertools.repeat(name)), dtype=object, count=len(rows)
                )
                (instants if block else objects)[index, start:end] = values
            start = end
        # instants: epoch milliseconds, nullable (Int64): no float NaN for a missing instant
        missing = np.equal(instants, None)
        instants[missing] = 0
        instants = instants.astype(np.int64)
        nullable = {
            name: pd.arrays.IntegerArray(instants[i], missing[i]) for i, name in enumerate(_INSTANT_NAMES)
        }
        parts = (
            pd.DataFrame(objects.T, columns=_OBJECT_NAMES, dtype=object, copy=False),
            pd.DataFrame(nullable, copy=False),
        )
        return pd.concat(parts, axis=1, copy=False)[OUTPUT_NAMES]

    def _outside_run_dates(self, table: str, row: dict) -> None:
        """A row dated outside the run's dates cannot be written (a run replaces its own dates only):
        it becomes an anomaly on the nearest run date instead of disappearing."""
        date = row["event_date"]
        nearest = self.date_from if date < self.date_from else self.date_to
        detail = f"{table} row dated {date} (generation {row.get('generation_id')}, episode {row.get('episode_id')})"
        self._anomaly(row["cluster"], row["group_id"], nearest, OUTSIDE_RUN_DATES, detail)

    def _anomaly(self, cluster: str, group_id: str, date: dt.date, rule: str, detail: str) -> None:
        self._append(
            "anomalies",
            {
                "cluster": cluster,
                "group_id": group_id,
                "scenario": self.settings.scenario,
                "event_date": date,
                "rule": rule,
                "detail": detail,
            },
        )
