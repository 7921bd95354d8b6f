"""The Python side of the Spark replay: one Spark partition's sorted Arrow batches -> output rows.

Spark hands `replay_partition` the rows of a partition in (cluster, group_id, _kind, event order)
order, in pandas batches of at most spark.sql.execution.arrow.maxRecordsPerBatch rows. A group's
replayer (rebalance_core.replay.new_replayer: classic or KIP-848) lives across batches, so memory
stays bounded by one batch plus the replayers' state whatever the size of a group; a group ends when
the next group's first row (or the partition's end) arrives. A group's previous state, when it has one, is its first row (`_kind` = KIND_STATE, the
snapshot in `_state_json`).

Every output table goes through one flat schema (`output_schema`): the union of the tables' columns
plus `_table`; the job splits it by `_table` afterwards. No pyspark import here: this module also
runs under plain pandas (tests, the pure-core comparison).
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from rebalance_core.events import Event
from rebalance_core.replay import ReplaySettings, new_replayer
from schemas.fields import STRING, TIMESTAMP, Column
from schemas.tables import REPLAY_TABLES, TABLES

KIND_STATE = 0  # sorts before a group's events
KIND_EVENT = 1
OUTPUT_TABLES = (*REPLAY_TABLES, "group_state")
OUTSIDE_RUN_DATES = "outside_run_dates"  # anomaly rule: a row the run cannot write (see _keep)
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
_TIMESTAMPS = [c.name for c in OUTPUT_COLUMNS if c.type == TIMESTAMP]


def output_schema():
    from schemas.fields import spark_schema

    return spark_schema(OUTPUT_COLUMNS)


def replay_partition(
    batches: Iterator[pd.DataFrame], settings: ReplaySettings, date_from: dt.date, date_to: dt.date
) -> Iterator[pd.DataFrame]:
    """mapInPandas function: replay the sorted rows of one partition (see the module docstring)."""
    sink = RowSink(settings, date_from, date_to)
    group: _Group | None = None
    for batch in batches:
        for row in batch.to_dict("records"):
            key = (row["cluster"], row["group_id"])
            if group is None or key != group.key:
                if group is not None:
                    sink.finish(group)
                group = _Group(key, row["_state_json"] if row["_kind"] == KIND_STATE else None)
                if row["_kind"] == KIND_STATE:
                    continue
            group.pending.append(event_from_row(row))
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


def event_from_row(row: dict) -> Event:
    """A core Event from a pandas row of the sorted stream (`_ts_ms`: ts in epoch milliseconds)."""
    return Event.from_row({**row, "ts": int(row["_ts_ms"])})


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
        self.rows: list[dict] = []

    def drain(self, group: _Group) -> None:
        if group.replayer is None and len(group.pending) < DECIDE_AFTER_EVENTS:
            return  # too few events yet to tell the group's protocol: wait for more (or its end)
        self.add(self._fed(group).drain())

    def finish(self, group: _Group) -> None:
        replayer = self._fed(group)
        self.add(replayer.finish())
        snapshot = replayer.snapshot()
        self.rows.append(
            {
                "cluster": replayer.cluster,
                "group_id": replayer.group_id,
                "scenario": self.settings.scenario,
                "event_date": self.date_to,
                "as_of_ts": replayer.last_ts,
                "state_version": snapshot["state_version"],
                "state_json": json.dumps(snapshot, separators=(",", ":"), sort_keys=True),
                "_table": "group_state",
            }
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
                return new_replayer(cluster, group_id, self.settings, state, group.pending)
            except (ValueError, KeyError, TypeError) as exc:  # e.g. a state written by another version
                detail = f"previous state ignored: {exc}"
                self._anomaly(cluster, group_id, self.date_from, "state_unreadable", detail)
        return new_replayer(cluster, group_id, self.settings, None, group.pending)

    def add(self, tables: dict[str, list[dict]]) -> None:
        for table, rows in tables.items():
            for row in rows:
                if self._keep(table, row):
                    self.rows.append({**row, "_table": table})

    def flush(self) -> pd.DataFrame | None:
        if not self.rows:
            return None
        # Every column named in every row: a missing key would become NaN, which Arrow cannot turn
        # into a list, map or string.
        frame = pd.DataFrame.from_records(
            [{n: r.get(n) for n in OUTPUT_NAMES} for r in self.rows], columns=OUTPUT_NAMES
        )
        self.rows = []
        for name in _TIMESTAMPS:  # the core's epoch milliseconds -> UTC instants
            frame[name] = pd.to_datetime(frame[name].astype("Int64"), unit="ms", utc=True)
        return frame

    def _keep(self, table: str, row: dict) -> bool:
        """A row dated outside the run's dates cannot be written (a run replaces its own dates only):
        it becomes an anomaly on the nearest run date instead of disappearing."""
        date = row["event_date"]
        if self.date_from <= date <= self.date_to:
            return True
        nearest = self.date_from if date < self.date_from else self.date_to
        detail = f"{table} row dated {date} (generation {row.get('generation_id')}, episode {row.get('episode_id')})"
        self._anomaly(row["cluster"], row["group_id"], nearest, OUTSIDE_RUN_DATES, detail)
        return False

    def _anomaly(self, cluster: str, group_id: str, date: dt.date, rule: str, detail: str) -> None:
        self.rows.append(
            {
                "cluster": cluster,
                "group_id": group_id,
                "scenario": self.settings.scenario,
                "event_date": date,
                "rule": rule,
                "detail": detail,
                "_table": "anomalies",
            }
        )
