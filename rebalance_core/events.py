"""Canonical events as plain dataclasses (the schema is declared in `schemas.events`)."""

from __future__ import annotations

import datetime as dt
import functools
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, fields
from typing import Any, NamedTuple

from schemas.events import EVENT_COLUMN_NAMES, EventType, Side


class TopicPartition(NamedTuple):
    """Ordered like Kafka's assignors order partitions: by topic name, then partition number."""

    topic: str
    partition: int

    def __str__(self) -> str:  # Kafka's TopicPartition.toString
        return f"{self.topic}-{self.partition}"


Partitions = tuple[TopicPartition, ...]
Assignment = dict[str, Partitions]


@dataclass(slots=True)
class Event:
    """One canonical event. `ts` is UTC epoch milliseconds (the core's only clock)."""

    event_id: str
    ts: int
    cluster: str
    group_id: str
    side: str
    event_type: str
    source: str | None = None
    member_id: str | None = None
    group_instance_id: str | None = None
    client_id: str | None = None
    generation_id: int | None = None
    protocol_type: str | None = None
    protocol_name: str | None = None
    leader_id: str | None = None
    reason: str | None = None
    partitions: Partitions | None = None
    subscription: tuple[str, ...] | None = None
    members: tuple[str, ...] | None = None
    member_count: int | None = None
    assignment: Assignment | None = None
    error: str | None = None
    group_epoch: int | None = None
    member_epoch: int | None = None
    assignment_epoch: int | None = None
    attributes: dict[str, str] = field(default_factory=dict)
    raw: str | None = None
    file: str | None = None
    line: int | None = None

    @property
    def type(self) -> EventType:
        # a dict lookup: EventType(value) goes through Enum.__call__, several times per parsed line
        found = _EVENT_TYPES.get(self.event_type)
        return found if found is not None else EventType(self.event_type)  # ValueError as before

    @property
    def is_coordinator(self) -> bool:
        return self.side == _COORDINATOR

    def to_row(self) -> dict[str, Any]:
        """A dict with the schema's column names; `ts` as a UTC datetime, partitions as dicts."""
        row = {name: getattr(self, name) for name in EVENT_COLUMN_NAMES}
        row["ts"] = ms_to_datetime(self.ts)
        row["partitions"] = _tps_to_rows(self.partitions)
        row["subscription"] = list(self.subscription) if self.subscription is not None else None
        row["members"] = list(self.members) if self.members is not None else None
        row["assignment"] = (
            {m: _tps_to_rows(tps) for m, tps in self.assignment.items()}
            if self.assignment is not None
            else None
        )
        row["attributes"] = dict(self.attributes) if self.attributes else None
        return row

    def to_json_dict(self) -> dict[str, Any]:
        """JSON-lines form: `ts` as ISO-8601 UTC with milliseconds; null fields dropped."""
        row = self.to_row()
        row["ts"] = format_ts(self.ts)
        return {k: v for k, v in row.items() if v is not None}

    @classmethod
    def from_row(cls, row: Mapping[str, Any]) -> Event:
        """Inverse of `to_row`/`to_json_dict`; accepts datetimes, ISO strings or epoch-ms for `ts`,
        and partitions as dicts, [topic, partition] pairs or "topic-N" strings. Values are plain Python
        ones with None for a null (JSON, Arrow's to_pylist; pandas rows go through
        jobs.replay_batches.plain_values, which turns pandas' NA and NaN into None)."""
        # Built positionally from the row (a missing field is None), then the few fields that need
        # parsing are replaced: the replay's hottest path after the core itself.
        event = cls(*map(row.get, _EVENT_FIELDS))
        event.ts = parse_ts(row["ts"])
        if event.partitions is not None:
            event.partitions = parse_partitions(event.partitions)
        if event.subscription is not None:
            event.subscription = tuple(event.subscription)
        if event.members is not None:
            event.members = tuple(event.members)
        if event.assignment is not None:
            event.assignment = parse_assignment(event.assignment)
        event.attributes = {} if event.attributes is None else parse_attributes(event.attributes)
        for key in _INT_FIELDS:
            value = getattr(event, key)
            if value is not None and value.__class__ is not int:  # e.g. numpy integers
                setattr(event, key, int(value))
        return event

    @classmethod
    def from_columns(cls, columns: Mapping[str, list[Any]]) -> list[Event]:
        """`from_row` of every row of a batch given column by column (name -> values, one per row; a
        missing column is all None; `ts` epoch milliseconds or what `parse_ts` reads): one constructor
        call per event, no per-row dict (the Spark worker's conversion, jobs.replay_batches)."""
        count = len(next(iter(columns.values()), ()))
        built = []
        for name in _EVENT_FIELDS:
            values = columns.get(name)
            if values is None:
                values = [None] * count
            parse = _COLUMN_PARSERS.get(name)
            if name == "ts" and _INT_OR_NONE.issuperset(map(type, values)):
                parse = None  # epoch milliseconds already (the Spark worker's `_ts_ms`)
            if parse is not None:
                values = [None if value is None else parse(value) for value in values]
            elif name in _INT_FIELDS and not _INT_OR_NONE.issuperset(map(type, values)):
                values = [None if value is None else int(value) for value in values]  # e.g. numpy integers
            built.append(values)
        events = list(map(cls, *built))
        for event in events:
            if event.attributes is None:
                event.attributes = {}
        return events


# The reason of the JoinGroup a cooperative consumer requests right after revoking (KIP-429,
# ConsumerCoordinator.onJoinComplete -> requestRejoin). Kafka 3.2+ names the partitions in the middle
# ("need to revoke partitions [t-0] as indicated by the current assignment and re-join"): match the prefix.
REVOKE_REJOIN_REASON = "need to revoke partitions and re-join"
REVOKE_REJOIN_PREFIX = "need to revoke partitions"
# The reason of a Connect worker's rebalance: WorkerCoordinator.onJoinPrepare's INFO line "Rebalance started",
# as the parser reads it (kafka_logs.patterns connect.rebalance_started.2_3).
REBALANCE_STARTED = "rebalance started"


def is_revoke_rejoin(reason: str | None) -> bool:
    """Whether a reason carries that requestRejoin, in either wording: the 3.x reason above (also quoted
    as a "client reason" in the broker's lines), or
    2.4-2.8's sentence of its own "Need to revoke partitions [...] and re-join the group"."""
    return REVOKE_REJOIN_PREFIX in (reason or "").lower()


_EVENT_FIELDS = tuple(f.name for f in fields(Event))
_EVENT_TYPES = {t.value: t for t in EventType}
_COORDINATOR = Side.COORDINATOR.value  # a plain string: an enum member's .value is a Python-level property
# Partitions read from rows, shared: a big group's events name the same partitions over and over, and a
# cache hit (C) is cheaper than building a NamedTuple (Python).
_topic_partition = functools.lru_cache(maxsize=1 << 16)(TopicPartition)
_INT_OR_NONE = frozenset((int, type(None)))
_INT_FIELDS = ("generation_id", "member_count", "group_epoch", "member_epoch", "assignment_epoch", "line")


def parse_partitions(value: Any) -> Partitions | None:
    if value is None:
        return None
    out = []
    for item in value:
        if item.__class__ is dict:  # the common case first: Arrow structs and JSON objects
            out.append(_topic_partition(item["topic"], int(item["partition"])))
        elif isinstance(item, TopicPartition):
            out.append(item)
        elif isinstance(item, Mapping):
            out.append(TopicPartition(str(item["topic"]), int(item["partition"])))
        elif isinstance(item, str):
            topic, _, number = item.rpartition("-")
            out.append(TopicPartition(topic, int(number)))
        else:
            topic, number = item
            out.append(TopicPartition(str(topic), int(number)))
    return tuple(out)


def parse_assignment(value: Any) -> Assignment:
    """A member -> partitions map, as a mapping or (member, partitions) pairs (Arrow maps)."""
    items = value.items() if isinstance(value, Mapping) else value
    return {m: parse_partitions(tps) or () for m, tps in items}


def parse_attributes(value: Any) -> dict[str, str]:
    items = value.items() if isinstance(value, Mapping) else value
    return {str(k): str(v) for k, v in items}


def _tps_to_rows(tps: Iterable[TopicPartition] | None) -> list[dict[str, Any]] | None:
    if tps is None:
        return None
    return [{"topic": tp.topic, "partition": tp.partition} for tp in tps]


_EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.UTC)


def ms_to_datetime(ms: int) -> dt.datetime:
    return _EPOCH + dt.timedelta(milliseconds=ms)


def format_ts(ms: int) -> str:
    return ms_to_datetime(ms).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def parse_ts(value: Any) -> int:
    """UTC epoch milliseconds from a datetime (naive = UTC), pandas Timestamp, ISO string or number."""
    if isinstance(value, bool):
        raise ValueError(f"not a timestamp: {value!r}")
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        if value != value:
            raise ValueError("timestamp is NaN")
        return int(value)
    if isinstance(value, str):
        text = value.strip()
        if text.endswith("Z"):
            text = text[:-1] + "+00:00"
        value = dt.datetime.fromisoformat(text)
    if hasattr(value, "to_pydatetime"):  # pandas.Timestamp
        value = value.to_pydatetime()
    if isinstance(value, dt.datetime):
        if value.tzinfo is None:
            value = value.replace(tzinfo=dt.UTC)
        delta = value - _EPOCH
        return (delta.days * 86_400 + delta.seconds) * 1000 + delta.microseconds // 1000
    raise ValueError(f"not a timestamp: {value!r}")


# Classic member ids are made by the coordinator (Scala GroupMetadata / Java ClassicGroup
# .generateMemberId): `{group.instance.id}-{UUID}` for static members, else `{client.id}-{UUID}`.
_CLASSIC_MEMBER_ID = re.compile(r"(?P<owner>.+)-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")


# how Event.from_columns reads a column's non-null values (as from_row does)
_COLUMN_PARSERS = {
    "ts": parse_ts,
    "partitions": parse_partitions,
    "subscription": tuple,
    "members": tuple,
    "assignment": parse_assignment,
    "attributes": parse_attributes,
}


def classic_member_owner(member_id: str) -> str | None:
    """The client id (dynamic member) or group.instance.id (static member) a classic member id was made
    from; None for an id of another form (KIP-848 ids, Connect, ids not made by a coordinator)."""
    match = _CLASSIC_MEMBER_ID.fullmatch(member_id)
    return match["owner"] if match else None
