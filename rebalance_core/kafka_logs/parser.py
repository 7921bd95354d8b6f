"""Kafka log text -> canonical events, quarantine rows and line counts. Pure: no file I/O, no clock.

Every input line is accounted for exactly once: part of an event (`event_lines`), skipped (not about a
group, a comment, or a recognised group line without a canonical event; `skipped_by_reason`), or
quarantined (it looks like a group line but does not parse; the row says why).

What one client's lines leave unsaid is taken from its other lines in the same file (keyed by group and
client id), and marked in the event's attributes:
* `member_id_from` = earlier_line | later_line | assignment | before_reset: the member id of a line that
  prints none (1.0-2.6 join lines, rebalance callbacks, ...), never carried across a generation reset, a
  LeaveGroup or lost partitions (the next id may be new); `assignment` = the leader found itself among
  its assignment's members (`{client.id}-{UUID}`); `before_reset` = lost partitions after such a break
  belong to the id the client had before it (ConsumerCoordinator.onJoinPrepare/onLeavePrepare call
  onPartitionsLost for what the reset member owned), never to a later line's (new) id. A join_sent gets
  an id only after the client asked to rejoin (its JoinGroup then carries it); otherwise it may be a new
  process's first JoinGroup, and stays empty (docs/events.md: an empty join_sent starts a new member).
* `generation_from` = join_response: a sync_response without a generation gets this round's.
* `client_id_from` = next_client: a config dump (`client_config`) with an empty client.id belongs to the
  next client of its group the file shows first; a dump starts a new process: no member id carries over.
* `merged_lines`: lines that restated the event (MessagePattern.merge) and completed it.
Every event also carries `log_pattern`, the name of the row that matched.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import hashlib
import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from rebalance_core.events import REBALANCE_STARTED, Event, classic_member_owner, ms_to_datetime
from rebalance_core.kafka_logs.layouts import (
    KAFKA_LOGGER_CLASSES,
    LineDates,
    LogEntry,
    LooseLine,
    UndatedTimestamp,
    file_name_date,
    parse_timestamp,
    resolve_zone,
    split_entries,
)
from rebalance_core.kafka_logs.patterns import (
    CONNECT_MDC,
    PATTERNS_BY_SIDE,
    PREFIXES,
    PROTOCOL_TYPE_BY_CLIENT_KIND,
    MessagePattern,
)
from rebalance_core.kafka_logs.values import (
    classic_assignment,
    coordinator_node,
    partition_list,
    scala_option,
    target_assignment,
)
from schemas.events import EventType, Side

RAW_LIMIT = 10_000  # characters of an entry kept in `raw` (the file and line point at the rest)
_INT_FIELDS = frozenset({"generation_id", "member_count", "group_epoch", "member_epoch", "assignment_epoch"})
_TEXT_FIELDS = frozenset(
    {"group_id", "member_id", "leader_id", "group_instance_id", "reason", "protocol_name", "client_id"}
)
# Member-side events that belong to "this client's member" even when the line does not print the id.
_MEMBER_ID_FILLED = frozenset(
    {
        EventType.JOIN_REQUESTED,
        EventType.HEARTBEAT_REBALANCING,
        EventType.JOIN_RESPONSE,  # 1.0-2.6 print no member id
        EventType.ASSIGNMENT_COMPUTED,
        EventType.SYNC_RESPONSE,
        EventType.PARTITIONS_REVOKED,
        EventType.PARTITIONS_ASSIGNED,
        EventType.PARTITIONS_LOST,
        EventType.POLL_TIMEOUT_EXPIRED,
    }
)
_MEMBER_EPOCH_FILLED = frozenset(
    {
        EventType.SYNC_RESPONSE,
        EventType.PARTITIONS_REVOKED,
        EventType.PARTITIONS_ASSIGNED,
        EventType.PARTITIONS_LOST,
    }
)
# After these the client may get a new member id: ids are not filled across them (either way).
_MEMBER_ID_BREAKS = frozenset({EventType.LEAVE_SENT, EventType.PARTITIONS_LOST})
# These start a new JoinGroup round: a later "Notifying assignor"/"Joined group" belongs to a new sync.
# (Not "Request joining group": a cooperative member asks to rejoin before it notifies its assignor.)
# what a new client logs between its config dump and its first JoinGroup (`_settle_process_start`)
_BEFORE_FIRST_JOIN = frozenset({EventType.COORDINATOR_DISCOVERED, EventType.COORDINATOR_UNAVAILABLE})
_ROUND_STARTS = frozenset({EventType.JOIN_SENT, EventType.JOIN_RESPONSE, EventType.LEAVE_SENT})
_NO_MEMBER_ID = ("", "<no ID>", "null")


@dataclass(slots=True)
class QuarantinedLine:
    file: str
    line: int
    raw: str
    reason: str
    group_id: str | None = None
    ts: int | None = None
    raw_base64: str | None = None  # the lines' bytes where they are not UTF-8 (set by the file reader)
    line_numbers: tuple[int, ...] = ()  # the physical lines `raw` joins, where not line, line + 1, ...

    def to_row(self, cluster: str, scenario: str = "actual") -> dict[str, Any]:
        """A row of `schemas.tables.QUARANTINE` (event_date None when the timestamp is unreadable)."""
        return {
            "cluster": cluster,
            "group_id": self.group_id,
            "scenario": scenario,
            "event_date": ms_to_datetime(self.ts).date() if self.ts is not None else None,
            "source_file": self.file,
            "source_line": self.line,
            "raw": self.raw,
            "raw_base64": self.raw_base64,
            "reason": self.reason,
        }


@dataclass(slots=True)
class ParseCounts:
    read: int = 0  # physical lines
    events: int = 0
    event_lines: int = 0  # lines that are part of an event
    skipped: int = 0
    quarantined: int = 0  # lines
    skipped_by_reason: dict[str, int] = field(default_factory=dict)

    def skip(self, reason: str, lines: int) -> None:
        self.skipped += lines
        self.skipped_by_reason[reason] = self.skipped_by_reason.get(reason, 0) + lines

    def add(self, other: ParseCounts) -> None:
        self.read += other.read
        self.events += other.events
        self.event_lines += other.event_lines
        self.quarantined += other.quarantined
        for reason, lines in other.skipped_by_reason.items():
            self.skip(reason, lines)

    def as_dict(self) -> dict[str, Any]:
        return {
            "read": self.read,
            "events": self.events,
            "event_lines": self.event_lines,
            "skipped": self.skipped,
            "quarantined": self.quarantined,
            "skipped_by_reason": dict(sorted(self.skipped_by_reason.items())),
        }


@dataclass(slots=True)
class ParseResult:
    events: list[Event]
    quarantine: list[QuarantinedLine]
    counts: ParseCounts


def parse_lines(
    lines: Iterable[str],
    *,
    file: str,
    cluster: str,
    tz: str = "UTC",
    source: str | None = None,
    topic_ids: Mapping[str, str] | None = None,
    log_date: dt.date | str | None = None,
    numbered: bool = False,
) -> ParseResult:
    """Parse one log file's lines, in file order (any mix of broker and client logging, any layout).

    `file` names the input in events and quarantine rows and seeds the event ids (hash of file, line and
    the event's index in its entry), so a rerun yields the same ids. `tz` is the zone of naive
    timestamps. `source` (e.g. from the file path) overrides the one read from the log prefix (broker
    id, client id). `topic_ids` (topic name -> id, as in ReplaySettings) names topics that KIP-848 broker
    lines print by id; unknown ids are kept as the topic. A time-only timestamp takes its date from the
    file name (rolling-file conventions, `layouts.file_name_date`), else from `log_date`, rolling to the
    next day past midnight; a syslog `MMM dd` takes its year from the same; without either such a
    group line is quarantined, never dated by guess (`log_date` may be given as YYYY-MM-DD).
    `numbered`: `lines` are (line number, text) pairs that may leave lines out (`split_entries`); the
    counts then cover the lines given only."""
    if isinstance(log_date, str):
        log_date = dt.date.fromisoformat(log_date)
    reference = file_name_date(file) or log_date
    parser = _FileParser(
        file, cluster, resolve_zone(tz), source, {v: k for k, v in (topic_ids or {}).items()}
    )
    parser.undated_reason = (
        "" if reference else " (no date in the file name, no --log-date / input.options.date)"
    )
    for item in split_entries(lines, LineDates(reference), numbered=numbered):
        if isinstance(item, LooseLine):
            parser.loose(item)
        else:
            parser.entry(item)
    return ParseResult(parser.events, parser.quarantine, parser.counts)


@dataclass(slots=True)
class _Prefix:
    kind: str  # broker | client | streams | other | none
    message: str
    broker_id: str | None = None
    offsets_partition: str | None = None
    group_id: str | None = None
    client_id: str | None = None
    group_instance_id: str | None = None
    protocol_type: str | None = None


def _literal_head(regex: str) -> str:
    """The literal text every match of `regex` starts with (up to its first metacharacter)."""
    head: list[str] = []
    i = 0
    while i < len(regex):
        char = regex[i]
        if char == "\\" and i + 1 < len(regex) and not regex[i + 1].isalnum():
            char, step = regex[i + 1], 2
        elif char in "\\.^$*+?{}[]()|":
            break
        else:
            step = 1
        if regex[i + step : i + step + 1] in ("*", "?", "{"):  # the char is optional or repeated
            break
        head.append(char)
        i += step
    return "".join(head)


_PREFIX_HEADS = tuple((prefix, _literal_head(prefix.regex)) for prefix in PREFIXES)


def _read_prefix(message: str) -> _Prefix:
    """Kafka's own message prefix (after Connect's MDC context): who logs, and for clients which group."""
    mdc = CONNECT_MDC.match(message)
    if mdc:
        message = message[mdc.end() :]
    if not message.startswith(("[", "stream-")):
        return _Prefix("none", message)
    for prefix, head in _PREFIX_HEADS:
        if not message.startswith(head):  # a cheap test before the regex: most prefixes fail here
            continue
        m = prefix.compiled.match(message)
        if not m:
            continue
        rest = message[m.end() :]
        groups = m.groupdict()
        if prefix.kind == "broker":
            return _Prefix(
                "broker", rest, groups["broker_id"], groups.get("offsets_partition"), groups.get("group_id")
            )
        if prefix.kind == "client":
            fields = dict(item.split("=", 1) for item in groups["client_fields"].split(", ") if "=" in item)
            group_id = fields.get("groupId")
            return _Prefix(
                "client",
                rest,
                group_id=None if group_id in (None, "", "null") else group_id,
                client_id=fields.get("clientId") or None,
                group_instance_id=fields.get("instanceId") or None,
                protocol_type=PROTOCOL_TYPE_BY_CLIENT_KIND[groups["client_kind"]],
            )
        return _Prefix(prefix.kind, rest)
    return _Prefix("none", message)


def match_pattern(message: str, side: Side) -> tuple[MessagePattern | None, re.Match | None]:
    """The first row of `side` whose template matches the message (Kafka prefix already removed)."""
    row, match, _ = _match(PATTERNS_BY_SIDE[side], message)
    return row, match


def _match(rows: tuple[MessagePattern, ...], message: str):
    """(first matching row, its match, first row whose needle the message contains) in one pass."""
    first_line = message.split("\n", 1)[0]
    near = None
    cached = _MATCH_TABLES.get(id(rows))
    table = cached[1] if cached is not None and cached[0] is rows else _match_table(rows)
    for needle, multiline, compiled, row in table:
        scope = message if multiline else first_line
        if needle in scope:
            match = compiled.match(scope)
            if match:
                return row, match, row
            near = near or row
    return None, None, near


_MATCH_TABLES: dict[int, tuple[tuple[MessagePattern, ...], tuple]] = {}  # id(rows) -> (rows, table)


def _match_table(
    rows: tuple[MessagePattern, ...],
) -> tuple[tuple[str, bool, re.Pattern, MessagePattern], ...]:
    """The rows' (needle, multiline, compiled, row) as plain tuples: `_match` reads them for every line
    (attribute reads of a frozen dataclass cost more than the needle test)."""
    table = tuple((r.needle, r.multiline, r.compiled, r) for r in rows)
    _MATCH_TABLES[id(rows)] = (rows, table)  # the rows are kept alive with it, so the id stays theirs
    return table


# Without a Kafka prefix only the pre-1.0 client wordings apply: they name the group in the message.
# Scala's GroupMetadata logs with no logIdent: its lines (maybeElectNewJoinedLeader) have no "[GroupCoordinator N]"
_GROUP_METADATA_ROWS = tuple(
    p for p in PATTERNS_BY_SIDE[Side.COORDINATOR] if p.name.startswith("broker.leader_")
)
_UNPREFIXED_ROWS = (
    tuple(p for p in PATTERNS_BY_SIDE[Side.MEMBER] if "group_id" in p.compiled.groupindex)
    + _GROUP_METADATA_ROWS
)
_ALL_ROWS = PATTERNS_BY_SIDE[Side.COORDINATOR] + PATTERNS_BY_SIDE[Side.MEMBER]
_ROWS_BY_PREFIX_KIND = {"broker": PATTERNS_BY_SIDE[Side.COORDINATOR], "client": PATTERNS_BY_SIDE[Side.MEMBER]}


@dataclass(slots=True)
class _MemberContext:
    """What one client (group, client id) said earlier in the file: its member id, KIP-848 epoch, the
    events that still wait for an id, and the recent events a restating line completes."""

    member_id: str | None = None
    member_id_before_reset: str | None = None  # the id forgotten at the last reset / LeaveGroup
    id_dropped: bool = False  # reset or left, and no member id learned since
    rejoin_requested: bool = False  # a rebalance signal since the client's last JoinGroup
    last_request: Event | None = None  # that signal's event
    join_request: Event | None = None  # the signal before the client's last JoinGroup, if any
    member_epoch: int | None = None
    awaiting_member_id: list[Event] = field(default_factory=list)
    # a static member's JoinGroup with no rejoin request before it, and the id the client had: a new
    # process's first JoinGroup (empty id) unless the next id the client shows is that same one
    unrequested_static_join: tuple[Event, str] | None = None
    recent: dict[EventType, Event] = field(default_factory=dict)
    last: Event | None = None
    # the context before the last config dump, until that dump's process shows its first JoinGroup
    # (`_FileParser._settle_process_start`): a dump may be another consumer's with the same client.id
    predecessor: _MemberContext | None = None

    def forget_member_id(self) -> None:
        """The client reset its generation/member id or left: the next id may be a new one."""
        if self.member_id:
            self.member_id_before_reset = self.member_id
        self.member_id = None
        self.id_dropped = True
        self.awaiting_member_id.clear()

    def start_process(self) -> None:
        """A config dump: the client's process (re)started. No member id carries over, it owned nothing,
        and no earlier line is its own: its first JoinGroup follows no JoinGroup or signal of this
        process (so it is never the KIP-394 second one of the previous process's pair,
        `_new_member_rejoins`), and no line of it restates the previous process's events. The context
        before it is kept until the dump's process is known to be this client's (`predecessor`)."""
        saved = self.predecessor or replace(
            self, awaiting_member_id=list(self.awaiting_member_id), recent=dict(self.recent)
        )
        self.forget_member_id()
        self.member_id_before_reset = None
        self.rejoin_requested = False
        self.last_request = self.join_request = self.last = None
        self.recent.clear()
        self.predecessor = saved


class _FileParser:
    def __init__(
        self, file: str, cluster: str, zone, source: str | None, topic_names: dict[str, str]
    ) -> None:
        self.file = file
        self.cluster = cluster
        self.zone = zone
        self.source = source
        self.topic_names = topic_names
        self.events: list[Event] = []
        self.quarantine: list[QuarantinedLine] = []
        self.counts = ParseCounts()
        self.members: dict[tuple[str, str | None], _MemberContext] = {}
        # config dumps without a client.id (the client generates one after logging its config), per group,
        # waiting for the first line of a client id the file has not shown before (`_name_config_client`)
        self.unnamed_configs: dict[str, list[Event]] = {}
        self.undated_reason = ""  # why a time-only or yearless stamp has no date, for quarantine rows
        # member id -> the group a coordinator line of this file named it in: for a broker line that names
        # a member but no group ("Request memberId=… is fenced by current memberId=…")
        self.member_groups: dict[str, str] = {}

    # -- accounting -------------------------------------------------------------------------------
    def loose(self, item: LooseLine) -> None:
        self.counts.read += 1
        if item.comment:
            self.counts.skip("comment", 1)
        elif _match(_ALL_ROWS, item.text)[2] is not None:
            reason = "group message outside any recognised log layout" if item.stamped else "no timestamp"
            self._quarantine_lines(item.line, 1, item.text, reason)
        else:
            self.counts.skip("not_group", 1)

    def _quarantine_lines(
        self, line: int, count: int, raw: str, reason: str, group_id=None, ts=None, line_numbers=()
    ) -> None:
        self.counts.quarantined += count
        row = QuarantinedLine(self.file, line, raw[:RAW_LIMIT], reason, group_id, ts)
        row.line_numbers = tuple(line_numbers)
        self.quarantine.append(row)

    # -- one entry --------------------------------------------------------------------------------
    def entry(self, entry: LogEntry) -> None:
        self.counts.read += entry.line_count
        prefix = _read_prefix(entry.message)
        if prefix.kind in ("streams", "other"):
            self.counts.skip(
                "streams_internal" if prefix.kind == "streams" else "not_group", entry.line_count
            )
            return
        if prefix.kind == "none" and not _kafka_logger(entry.logger):
            self.counts.skip("not_group", entry.line_count)  # an application's own logging
            return
        rows = _ROWS_BY_PREFIX_KIND.get(prefix.kind, _UNPREFIXED_ROWS)
        message = prefix.message
        if (
            entry.logger is not None and not entry.tail_logger
        ):  # the layout printed the logger before the message
            message = _without_mdc_map(message)
        found = self._find(rows, message, prefix.group_id if prefix.kind == "client" else None)
        if isinstance(found, _Near):
            if found.row is not None:
                self._quarantine_entry(
                    entry, prefix, f"unknown wording of a group message (like {found.row.name})"
                )
            else:
                self.counts.skip("not_group", entry.line_count)
            return
        row, specs = found
        if row.event is None:
            if row.resets_member:
                self._context(prefix.group_id, prefix.client_id).forget_member_id()
            self.counts.skip("no_event", entry.line_count)
            return
        if isinstance(specs, ValueError):
            self._quarantine_entry(entry, prefix, f"{row.name}: {specs}")
            return
        if not specs:
            self.counts.skip("not_group", entry.line_count)
            return
        try:
            ts = self._timestamp(entry)
        except ValueError as exc:
            self._quarantine_entry(entry, prefix, str(exc))
            return
        group_id = specs[0][1].get("group_id") or prefix.group_id
        if not group_id and row.side == Side.COORDINATOR:
            group_id = self._group_of_member(specs[0][1])
        if not group_id:
            self._quarantine_entry(entry, prefix, f"{row.name}: no group id in the line", ts)
            return
        events = [
            self._event(entry, prefix, row, ts, group_id, event_type, fields, k)
            for k, (event_type, fields) in enumerate(specs)
        ]
        if row.side == Side.COORDINATOR:
            produced = events
            self._note_member_groups(events)
        else:
            produced = self._member_events(row, prefix, group_id, events)
        self.events.extend(produced)
        self.counts.events += len(produced)
        self.counts.event_lines += entry.line_count

    def _group_of_member(self, fields: dict[str, Any]) -> str | None:
        """The group an earlier coordinator line of this file named one of the line's member ids in."""
        attributes = fields.get("attributes") or {}
        for member in (
            fields.get("member_id"),
            fields.get("leader_id"),
            attributes.get("current_member_id"),
            attributes.get("old_member_id"),
            attributes.get("previous_leader_id"),
        ):
            if member and member in self.member_groups:
                return self.member_groups[member]
        return None

    def _note_member_groups(self, events: list[Event]) -> None:
        for event in events:
            attributes = event.attributes or {}
            named = (
                event.member_id,
                event.leader_id,
                attributes.get("old_member_id"),
                *(event.members or ()),
            )
            for member in named:
                if member:
                    self.member_groups[member] = event.group_id

    def _quarantine_entry(self, entry: LogEntry, prefix: _Prefix, reason: str, ts: int | None = None) -> None:
        if ts is None and entry.ts_text:
            with contextlib.suppress(ValueError):  # the quarantine table is partitioned by the entry's date
                ts = parse_timestamp(entry.ts_text, self.zone, entry.date)
        self._quarantine_lines(
            entry.first_line, entry.line_count, entry.raw, reason, prefix.group_id, ts, entry.line_numbers
        )

    def _timestamp(self, entry: LogEntry) -> int:
        """The entry's time in UTC ms; ValueError (the quarantine reason) when it has none or no date."""
        if entry.ts_text is None:
            raise ValueError("no timestamp")
        try:
            return parse_timestamp(entry.ts_text, self.zone, entry.date)
        except UndatedTimestamp as exc:
            raise ValueError(f"{exc}{self.undated_reason}") from None

    def _find(self, rows: tuple[MessagePattern, ...], message: str, client_group: str | None = None):
        """(row, its events or the ValueError that reading them raised), or _Near(first row whose needle
        the message contains). A layout may print text after the message (`[thread]`, MDC `key=value`,
        `{…}`): a message that matches no row, or whose fields do not read, or that reads a group id other
        than the one its client prefix names (`client_group`; the pre-1.0 `(Re-)joining group {groupId}`
        taking an MDC suffix for the group), is tried again without it."""
        near = failed = None
        for candidate in _without_layout_suffixes(message):
            row, match, candidate_near = _match(rows, candidate)
            if row is None:
                near = near or candidate_near
                if near is None:
                    break  # no wording's needle in it: not a group message, with or without a suffix
                continue
            if row.event is None:
                return row, None
            try:
                specs = self._extract(row, match, candidate)
            except ValueError as exc:
                failed = failed or (row, exc)
                continue
            if not specs:  # the row's extract found nothing about a group (a client config without group.id)
                return row, specs
            read_group = specs[0][1].get("group_id")
            if client_group and read_group and read_group != client_group:
                failed = failed or (
                    row,
                    ValueError(f"group {read_group!r} in the message, {client_group!r} in its prefix"),
                )
                continue
            return row, specs
        return failed or _Near(near)

    # -- fields -----------------------------------------------------------------------------------
    def _extract(self, row: MessagePattern, match, message: str) -> list[tuple[EventType, dict[str, Any]]]:
        fields: dict[str, Any] = {"attributes": {"log_pattern": row.name}}
        for name, value in list(row.constants.items()) + list(match.groupdict().items()):
            if value is None:
                continue
            if name.startswith("a_"):
                fields["attributes"][name[2:]] = value
            elif name.startswith("x_"):
                fields[name] = value
            elif name in _INT_FIELDS:
                fields[name] = int(value)
            elif name in _TEXT_FIELDS:
                fields[name] = value
            elif name == "partitions":
                fields["partitions"] = partition_list(value, self.topic_names)
            elif name == "instance":
                fields["group_instance_id"] = scala_option(value)
            elif name == "node":
                fields["attributes"].update(coordinator_node(value))
            elif name == "assignment":
                fields["assignment"] = classic_assignment(value)
            elif name == "target_assignment":
                fields["assignment"] = target_assignment(value, self.topic_names)
            else:
                raise AssertionError(f"pattern {row.name}: unknown group {name!r}")
        if row.extract is None:
            return [(row.event, fields)]
        specs = [
            (event_type or row.event, f) for event_type, f in row.extract(fields, message, self.topic_names)
        ]
        for _, spec in specs:
            spec["attributes"].setdefault("log_pattern", row.name)
        return specs

    def _event(self, entry, prefix, row, ts, group_id, event_type, fields, index) -> Event:
        attributes = fields.pop("attributes")
        fields = {k: v for k, v in fields.items() if not k.startswith("x_")}
        fields.pop("group_id", None)
        if fields.get("member_id") in _NO_MEMBER_ID:
            fields["member_id"] = None
        event = Event(
            event_id=_event_id(self.file, entry.first_line, index),
            ts=ts,
            cluster=self.cluster,
            group_id=group_id,
            side=row.side.value,
            event_type=event_type.value,
            source=self.source or _source_from_prefix(prefix) or entry.container,
            attributes=attributes,
            raw=entry.raw[:RAW_LIMIT],
            file=self.file,
            line=entry.first_line,
            **fields,
        )
        if row.side == Side.COORDINATOR:
            if prefix.offsets_partition and "offsets_partition" not in attributes:
                attributes["offsets_partition"] = prefix.offsets_partition
        else:
            event.client_id = event.client_id or prefix.client_id
            event.group_instance_id = event.group_instance_id or prefix.group_instance_id
            event.protocol_type = event.protocol_type or prefix.protocol_type
        return event

    # -- member context: ids the line does not print, and lines that restate an event ---------------
    def _context(self, group_id: str | None, client_id: str | None) -> _MemberContext:
        return self.members.setdefault((group_id or "", client_id), _MemberContext())

    def _member_events(
        self, row: MessagePattern, prefix: _Prefix, group_id: str, events: list[Event]
    ) -> list[Event]:
        self._name_config_client(group_id, prefix.client_id, events)
        ctx = self._context(group_id, prefix.client_id)
        produced = []
        for index, event in enumerate(events):
            if event.type == EventType.CLIENT_CONFIG:  # logged with no prefix: the client is the dump's own
                if event.client_id:  # a new process
                    self._context(group_id, event.client_id).start_process()
                produced.append(event)
                continue
            if ctx.predecessor is not None:
                ctx = self._settle_process_start(group_id, prefix.client_id, ctx, event)
            target = self._merge_target(ctx, event) if row.merge and index == 0 else None
            if target is not None:
                _merge(target, event)
                continue
            self._fill_member(ctx, event)
            self._note_join(ctx, event)
            if event.type in _ROUND_STARTS:
                ctx.recent.clear()
            ctx.recent[event.type] = event
            ctx.last = event
            if event.type in _MEMBER_ID_BREAKS:
                ctx.forget_member_id()
            produced.append(event)
        return produced

    def _settle_process_start(
        self, group_id: str, client_id: str | None, ctx: _MemberContext, event: Event
    ) -> _MemberContext:
        """The first line of a client after its config dump tells whose the dump was. A new consumer's
        first group line is its JoinGroup (AbstractCoordinator.ensureActiveGroup -> joinGroupIfNeeded: no
        rejoin request logged before it), after finding its coordinator; a Connect worker's is "Rebalance
        started" (WorkerCoordinator.onJoinPrepare) right before it. Any other line first (a heartbeat, a
        rejoin request, a commit, a line naming the old id) is the old member's: the dump was another
        KafkaConsumer's with the same client.id (a throwaway one looking up offsets, say), and the old
        member's context comes back."""
        old = ctx.predecessor
        if event.type == EventType.JOIN_SENT:
            ctx.predecessor = None
            return ctx
        names_old = event.member_id is not None and event.member_id == old.member_id
        before_join = event.type in _BEFORE_FIRST_JOIN or (
            event.type == EventType.JOIN_REQUESTED and event.reason == REBALANCE_STARTED
        )
        if before_join and not names_old:
            return ctx
        self.members[(group_id or "", client_id)] = old
        return old

    def _name_config_client(self, group_id: str, client_id: str | None, events: list[Event]) -> None:
        """A config dump with an empty client.id (1.x-3.x consumers and Connect workers generate
        `consumer-{group}-{n}` / `connect-{n}` after AbstractConfig.logAll ran) belongs to the next client
        of its group this file shows for the first time; `client_id_from` = next_client says so."""
        if events and events[0].type == EventType.CLIENT_CONFIG and events[0].client_id is None:
            self.unnamed_configs.setdefault(group_id, []).append(events[0])
            return
        waiting = self.unnamed_configs.get(group_id)
        if client_id and waiting and (group_id, client_id) not in self.members:
            config = waiting.pop(0)
            config.client_id = client_id
            config.source = config.source or events[0].source
            config.attributes["client_id_from"] = "next_client"

    @staticmethod
    def _merge_target(ctx: _MemberContext, event: Event) -> Event | None:
        if event.type == EventType.PARTITIONS_REVOKED:  # KIP-848: manager's "Revoking", then the callback's
            last = ctx.last
            same = (
                last is not None
                and last.type == event.type
                and set(last.partitions or ()) == set(event.partitions or ())
            )
            return last if same else None
        target = ctx.recent.get(event.type)
        if target is None:
            return None
        if (
            None not in (target.generation_id, event.generation_id)
            and target.generation_id != event.generation_id
        ):
            return None
        return target

    @staticmethod
    def _note_join(ctx: _MemberContext, event: Event) -> None:
        """A live member logs why it rejoins (AbstractCoordinator.requestRejoin, 3.0+; the heartbeat's
        rebalance signal before) and its JoinGroup carries its member id (generation.memberId), which
        "(Re-)joining group" does not print: such a join_sent gets the id, unless the client dropped it
        (reset, LeaveGroup) since. A JoinGroup without a request before it may be a new process's first,
        with an empty id: its join_sent keeps none, and for a static member (restarted within the
        session timeout, KIP-345, its log showing nothing of the restart) ids are not carried across it,
        unless its join response shows the id it had (`_confirm_static_rejoin`)."""
        if event.type in (EventType.JOIN_REQUESTED, EventType.HEARTBEAT_REBALANCING):
            ctx.rejoin_requested = True
            ctx.last_request = event
            return
        if event.type != EventType.JOIN_SENT:
            return
        requested, ctx.rejoin_requested = ctx.rejoin_requested, False
        request, ctx.last_request = ctx.last_request, None
        kip394_pair = not requested and ctx.last is not None and ctx.last.type == EventType.JOIN_SENT
        if kip394_pair and not event.member_id:
            _new_member_rejoins(ctx, event)
        ctx.join_request = request if requested else None
        if event.member_id or kip394_pair:
            return
        if requested and ctx.member_id:
            _set_member_id(event, ctx.member_id, "earlier_line")
        elif requested and not ctx.id_dropped:  # the log starts after the client learned its id
            ctx.awaiting_member_id.append(event)
        elif not requested and event.group_instance_id:
            if ctx.member_id:
                ctx.unrequested_static_join = (event, ctx.member_id)
            ctx.forget_member_id()

    def _fill_member(self, ctx: _MemberContext, event: Event) -> None:
        if event.type == EventType.ASSIGNMENT_COMPUTED and not event.member_id and not ctx.member_id:
            own = _own_member_id(event)
            if own is not None:  # 2.4-2.6 clients print their member id nowhere else
                _set_member_id(event, own, "assignment")
        if event.member_id:
            for waiting in ctx.awaiting_member_id:  # same client, earlier lines, no reset in between
                _set_member_id(waiting, event.member_id, "later_line")
            ctx.awaiting_member_id.clear()
            _confirm_static_rejoin(ctx, event.member_id)
            ctx.member_id = event.member_id
            ctx.id_dropped = False
        elif event.type in _MEMBER_ID_FILLED:
            if ctx.member_id:
                _set_member_id(event, ctx.member_id, "earlier_line")
            elif event.type == EventType.PARTITIONS_LOST:
                if ctx.member_id_before_reset:  # the partitions of the member that was reset
                    _set_member_id(event, ctx.member_id_before_reset, "before_reset")
            else:
                ctx.awaiting_member_id.append(event)
        if event.type == EventType.SYNC_RESPONSE and event.generation_id is None:
            joined = ctx.recent.get(EventType.JOIN_RESPONSE)  # this round's JoinGroup response
            if joined is not None and joined.generation_id is not None:
                event.generation_id = joined.generation_id
                event.attributes["generation_from"] = "join_response"
        if event.member_epoch is not None:
            ctx.member_epoch = event.member_epoch
        elif event.type in _MEMBER_EPOCH_FILLED and ctx.member_epoch is not None:
            event.member_epoch = ctx.member_epoch


def _confirm_static_rejoin(ctx: _MemberContext, member_id: str) -> None:
    """The first id a client shows after a static member's unrequested JoinGroup (a 1.0-2.x client logs
    no rejoin request: enforceRebalance, a metadata change) tells which it was. A new process joins with
    an empty id and always gets a new one (KIP-345: GroupCoordinator.doUnknownJoinGroup ->
    updateStaticMemberAndRebalance in 2.3+, GroupMetadataManager.updateStaticMemberThenRebalanceOrCompleteJoin
    in 4.0): the same id means the live member rejoined, its JoinGroup carrying that id."""
    pending, ctx.unrequested_static_join = ctx.unrequested_static_join, None
    if pending is not None and pending[1] == member_id and pending[0].member_id is None:
        _set_member_id(pending[0], member_id, "earlier_line")


def _new_member_rejoins(ctx: _MemberContext, event: Event) -> None:
    """A JoinGroup right after the client's last one, no line between: KIP-394. The first carried no
    member id and got MEMBER_ID_REQUIRED; this one carries the id the coordinator gave
    (AbstractCoordinator.JoinGroupResponseHandler, which logs that requestRejoin at INFO from 3.0 on, but a
    Connect worker at DEBUG only: WorkerCoordinator.requestRejoin). So the first JoinGroup, and the signal
    before it (a Connect worker's "Rebalance started" precedes a new process's first JoinGroup too), were
    a new process's, with no id: an id an earlier line gave them was its crashed predecessor's, and a
    later line's id is this JoinGroup's."""
    for earlier in (ctx.last, ctx.join_request):
        if earlier is not None and earlier.attributes.get("member_id_from") in ("earlier_line", "later_line"):
            earlier.member_id = None
            del earlier.attributes["member_id_from"]
    ctx.forget_member_id()
    ctx.id_dropped = False
    ctx.awaiting_member_id.append(event)


def _own_member_id(event: Event) -> str | None:
    """The leader's own id among its assignment's members: the broker makes classic member ids
    `{client.id}-{UUID}` (`{group.instance.id}-{UUID}` for static members), so exactly one id owned by
    this client identifies it; none or several (clients sharing a client.id) leave it unknown."""
    owners = {event.group_instance_id, event.client_id} - {None}
    own = [m for m in event.assignment or {} if classic_member_owner(m) in owners]
    return own[0] if len(own) == 1 else None


def _set_member_id(event: Event, member_id: str, learned_from: str) -> None:
    event.member_id = member_id
    event.attributes["member_id_from"] = learned_from
    if event.type == EventType.ASSIGNMENT_COMPUTED and event.leader_id is None:
        event.leader_id = member_id  # only the leader logs its assignment


def _merge(target: Event, restated: Event) -> None:
    """Complete `target` with what the restating line adds (never overwrite what it already says)."""
    for name in ("member_id", "leader_id", "generation_id", "protocol_name", "partitions", "member_epoch"):
        if getattr(target, name) is None and getattr(restated, name) is not None:
            setattr(target, name, getattr(restated, name))
    for key, value in restated.attributes.items():
        if key != "log_pattern":
            target.attributes.setdefault(key, value)
    merged = target.attributes.get("merged_lines")
    target.attributes["merged_lines"] = f"{merged},{restated.line}" if merged else str(restated.line)


def _kafka_logger(logger: str | None) -> bool:
    """Without a Kafka prefix, a line can be Kafka's only if its logger is unknown or Kafka's (also
    abbreviated: logback's `o.a.k.c.c.i.ConsumerCoordinator`, log4j's `%c{1}` class name)."""
    return (
        logger is None
        or "kafka" in logger.lower()
        or logger.startswith("o.a.k.")
        or logger.rsplit(".", 1)[-1].split(":", 1)[0] in KAFKA_LOGGER_CLASSES
    )


@dataclass(frozen=True, slots=True)
class _Near:
    row: MessagePattern | None  # the first row whose needle the message contains; None: not a group line


# Text a layout prints after the message (logback `%msg [%thread]`, `%msg %mdc`, log4j2 `%m %X`).
_LAYOUT_SUFFIX = re.compile(r"\s+(?:\[[^\[\]\n]*\]|\{[^{}\n]*\}|[\w.-]+=[^\s=]*,?)$")


def _without_layout_suffixes(message: str) -> Iterator[str]:
    """The message, then (at most four times) without one more trailing layout suffix, taken from the
    end of its first line when it has more lines (a single-line message with a stack trace below)."""
    yield message
    head, sep, rest = message.partition("\n")
    for _ in range(4):
        m = _LAYOUT_SUFFIX.search(head)
        if m is None:
            return
        head = head[: m.start()]
        yield head + sep + rest


# logback `%mdc` / log4j2 `%X` after the message: `{key=value, key=value}` with plain values. Kafka's own
# messages that end in a map print Assignment(…)/MemberAssignment(…) values, which this shape excludes.
_MDC_MAP_SUFFIX = re.compile(r"[ \t]+\{[\w.-]+=[^,{}()\[\]\n]*(?:, [\w.-]+=[^,{}()\[\]\n]*)*\}(?=\n|$)")


def _without_mdc_map(message: str) -> str:
    """A logger-first layout's MDC map removed from the end of the message's first line, so that free text
    (a join reason) does not take it in."""
    head, sep, rest = message.partition("\n")
    m = _MDC_MAP_SUFFIX.search(head)
    return head[: m.start()] + sep + rest if m else message


def _source_from_prefix(prefix: _Prefix) -> str | None:
    if prefix.kind == "broker":
        return f"broker-{prefix.broker_id}"
    return prefix.client_id


def _event_id(file: str, line: int, index: int) -> str:
    return hashlib.blake2b(f"{file}\x00{line}\x00{index}".encode(), digest_size=12).hexdigest()
