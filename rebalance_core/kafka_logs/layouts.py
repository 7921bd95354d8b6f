"""Line envelopes: which physical lines make one log entry, and its timestamp, level, logger and message.

Layouts recognised at the start of a line (the "head" of an entry):
* log4j / log4j2 as Kafka ships them: `[2024-01-01 12:00:00,123] INFO msg (logger)` (Connect: `(logger:line)`);
  the logger is at the END of the message, so for a multi-line message it is on the entry's last line.
* logback / Spring Boot / plain: `2024-01-01 12:00:00.123 INFO [thread] logger - msg`,
  `2024-01-01 12:00:00.123  INFO 3618 --- [thread] o.a.k.c.c.i.ConsumerCoordinator  : msg`,
  `2024-01-01T12:00:00.123Z INFO msg (logger)`; ISO-8601 timestamps with `T`, `Z` or an offset.
* JSON lines from log shippers (one object per line): the message in `message`/`msg`/`log`/...; when that
  text itself starts with one of the heads above (Docker's json-file driver) its head is used, else the
  JSON timestamp/level/logger fields (structured loggers: ECS, logstash); a record with neither a head
  nor a level (a raw stream record, e.g. Docker's next line of a multi-line message) continues the
  entry above.
* `docker compose logs` prefixes (`kafka-1  | `) before any of these.

A line that is not a head continues the entry above it (stack traces, "Updating assignment with" blocks,
the ` (logger)` suffix alone on a line). Lines starting with '#' are comments.
"""

from __future__ import annotations

import datetime as dt
import json
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from zoneinfo import ZoneInfo

_TS = r"(?P<ts>\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}:\d{2}(?:[.,]\d{1,9})?(?: ?(?:Z|[+-]\d{2}:?\d{2}))?)"
_LEVEL = r"(?P<level>TRACE|DEBUG|INFO|WARN|WARNING|ERROR|FATAL|SEVERE|NOTICE)"
_LOG4J_HEAD = re.compile(rf"\[{_TS}\]\s+{_LEVEL}\s+(?P<rest>.*)")
_PLAIN_HEAD = re.compile(rf"{_TS}\s+{_LEVEL}\s+(?P<rest>.*)")
_SPRING_BODY = re.compile(
    r"\d+\s+---\s+(?:\[[^\]]*\]\s+)?\[\s*(?P<thread>[^\]]*)\]\s+(?P<logger>\S+)\s*:\s(?P<msg>.*)"
)
_LOGBACK_BODY = re.compile(r"\[(?P<thread>[^\]]*)\]\s+(?P<logger>[\w.$]+)\s+-\s(?P<msg>.*)")
# ` (org.apache.kafka.clients.consumer.internals.ConsumerCoordinator)` / `(…WorkerCoordinator:222)`:
# a dotted class name, so "(reason: …)" or "(__consumer_offsets-3)" are never mistaken for it.
_TAIL_LOGGER = re.compile(r"\s+\((?P<logger>[A-Za-z_$][\w$]*(?:\.[\w$]+)+(?::\d+)?)\)\s*$")
_COMPOSE_PREFIX = re.compile(r"(?P<container>[A-Za-z0-9][\w.-]*)\s+\| ?(?P<rest>.*)")
_TS_PARTS = re.compile(
    r"(?P<y>\d{4})-(?P<mo>\d{2})-(?P<d>\d{2})[ T](?P<h>\d{2}):(?P<mi>\d{2}):(?P<s>\d{2})(?:[.,](?P<frac>\d{1,9}))?"
    r" ?(?P<tz>Z|[+-]\d{2}:?\d{2})?$"
)
_JSON_MESSAGE_KEYS = ("message", "msg", "log", "@message", "MESSAGE", "text")
_JSON_TS_KEYS = ("@timestamp", "timestamp", "time", "ts", "@t", "date", "datetime")
_JSON_LEVEL_KEYS = ("level", "log.level", "severity", "levelname", "loglevel")
_JSON_LOGGER_KEYS = ("logger_name", "logger", "loggerName", "log.logger", "name")
_JSON_THREAD_KEYS = ("thread_name", "thread", "threadName")


@dataclass(slots=True)
class LogEntry:
    """One log event: its head line and the continuation lines below it."""

    first_line: int  # 1-based physical line numbers of the head and of the last continuation line
    last_line: int
    ts_text: str | None  # as printed (or a JSON value); parsed by `parse_timestamp`
    level: str | None
    logger: str | None
    thread: str | None
    lines: list[str]  # message text lines (envelope removed from the head line)
    raw_lines: list[str]
    tail_logger: bool  # log4j-style layout: the logger ends the message
    container: str | None = None
    message: str = field(init=False, default="")

    @property
    def line_count(self) -> int:
        """Physical lines of the entry (comment lines inside its span are not part of it)."""
        return len(self.raw_lines)

    @property
    def raw(self) -> str:
        return "\n".join(self.raw_lines)

    def finish(self) -> LogEntry:
        text = "\n".join(self.lines)
        if self.tail_logger:
            m = _TAIL_LOGGER.search(text)
            if m is None and len(self.lines) > 1:  # log4j appends a throwable after "msg (logger)"
                first = _TAIL_LOGGER.search(self.lines[0])
                if first:
                    self.logger = first["logger"]
                    text = "\n".join([self.lines[0][: first.start()], *self.lines[1:]])
            elif m is not None:
                self.logger = m["logger"]
                text = text[: m.start()]
        self.message = text.rstrip()
        return self


@dataclass(frozen=True, slots=True)
class LooseLine:
    """A physical line that belongs to no entry: a comment, or text before the first head."""

    line: int
    text: str
    comment: bool


def split_entries(lines: Iterable[str]) -> Iterator[LogEntry | LooseLine]:
    """Group physical lines into entries (in file order). Every input line ends up in exactly one
    yielded item."""
    current: LogEntry | None = None
    compose = False
    for number, raw in enumerate(lines, start=1):
        raw = raw.rstrip("\r\n")
        if raw.startswith("#"):
            yield LooseLine(number, raw, comment=True)
            continue
        text, container = raw, None
        if compose or not _starts_head(raw):
            m = _COMPOSE_PREFIX.match(raw)
            if m and (compose or _starts_head(m["rest"])):
                compose = True
                text, container = m["rest"], m["container"]
        head = _head(text, number, raw, container)
        if head is not None:
            if current is not None:
                yield current.finish()
            current = head
        elif current is not None:
            current.lines.extend(_continuation(text).split("\n"))
            current.raw_lines.append(raw)
            current.last_line = number
        else:
            yield LooseLine(number, raw, comment=False)
    if current is not None:
        yield current.finish()


def _starts_head(text: str) -> bool:
    return bool(text) and (text[0] == "[" or text[0].isdigit() or text[0] == "{")


def _head(text: str, number: int, raw: str, container: str | None) -> LogEntry | None:
    if not _starts_head(text):
        return None
    if text[0] == "{":
        return _json_head(text, number, raw, container)
    return _text_head(text, number, raw, container)


def _text_head(text: str, number: int, raw: str, container: str | None) -> LogEntry | None:
    m = _LOG4J_HEAD.match(text)
    if m:
        return _entry(number, raw, m["ts"], m["level"], None, None, m["rest"], True, container)
    m = _PLAIN_HEAD.match(text)
    if not m:
        return None
    rest = m["rest"]
    body = _SPRING_BODY.match(rest) or _LOGBACK_BODY.match(rest)
    if body:
        return _entry(
            number, raw, m["ts"], m["level"], body["logger"], body["thread"], body["msg"], False, container
        )
    return _entry(number, raw, m["ts"], m["level"], None, None, rest, True, container)


def _json_head(text: str, number: int, raw: str, container: str | None) -> LogEntry | None:
    try:
        doc = json.loads(text)
    except (ValueError, RecursionError):  # RecursionError: nested deeper than Python's stack allows
        return None
    if not isinstance(doc, dict):
        return None
    message = _json_value(doc, _JSON_MESSAGE_KEYS)
    if not isinstance(message, str):
        return None
    message = message[:-1] if message.endswith("\n") else message
    inner = _text_head(message, number, raw, container)
    if inner is not None:
        return inner
    ts, level = _json_value(doc, _JSON_TS_KEYS), _json_value(doc, _JSON_LEVEL_KEYS)
    if ts is None or level is None:
        return None  # a raw stream record continuing the entry above (Docker: one record per line)
    logger, thread = (_json_value(doc, keys) for keys in (_JSON_LOGGER_KEYS, _JSON_THREAD_KEYS))
    return _entry(
        number,
        raw,
        str(ts),
        _str_or_none(level),
        _str_or_none(logger),
        _str_or_none(thread),
        message,
        False,
        container,
    )


def _continuation(text: str) -> str:
    """A non-head line's text; for a JSON continuation record, its message."""
    if text.startswith("{"):
        try:
            doc = json.loads(text)
        except (ValueError, RecursionError):
            return text
        message = _json_value(doc, _JSON_MESSAGE_KEYS) if isinstance(doc, dict) else None
        if isinstance(message, str):
            return message[:-1] if message.endswith("\n") else message
    return text


def _json_value(doc: dict, keys: tuple[str, ...]):
    for key in keys:
        if key in doc:
            return doc[key]
        head, _, tail = key.partition(".")
        if (
            tail and isinstance(doc.get(head), dict) and tail in doc[head]
        ):  # ECS nested {"log": {"level": ...}}
            return doc[head][tail]
    return None


def _str_or_none(value) -> str | None:
    return None if value is None else str(value)


def _entry(number, raw, ts, level, logger, thread, first_text, tail_logger, container) -> LogEntry:
    return LogEntry(
        first_line=number,
        last_line=number,
        ts_text=ts,
        level=level,
        logger=logger,
        thread=thread,
        lines=first_text.split("\n"),
        raw_lines=[raw],
        tail_logger=tail_logger,
        container=container,
    )


def resolve_zone(name: str) -> dt.tzinfo:
    """The zone naive timestamps are read in ("UTC", "Europe/Paris", "+02:00"). ValueError if unknown."""
    if name.upper() in ("UTC", "Z"):
        return dt.timezone.utc
    m = re.fullmatch(r"([+-])(\d{2}):?(\d{2})", name)
    if m:
        sign = 1 if m[1] == "+" else -1
        return dt.timezone(sign * dt.timedelta(hours=int(m[2]), minutes=int(m[3])))
    try:
        return ZoneInfo(name)
    except Exception as exc:  # ZoneInfoNotFoundError, ValueError for malformed keys
        raise ValueError(f"unknown time zone {name!r}") from exc


_EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.timezone.utc)


def parse_timestamp(text: str, tz: dt.tzinfo) -> int:
    """UTC epoch milliseconds. Naive timestamps (log4j's `%d` is the JVM's local time) are read in `tz`;
    ISO offsets/`Z` win. JSON numbers: epoch seconds, milliseconds or microseconds. ValueError if unreadable."""
    text = text.strip()
    if re.fullmatch(r"\d+(?:\.\d+)?", text):
        number = float(text)
        if number >= 1e14:
            return int(number // 1000)
        return int(number) if number >= 1e11 else int(number * 1000)
    m = _TS_PARTS.match(text)
    if not m:
        raise ValueError(f"unreadable timestamp {text!r}")
    micro = int((m["frac"] or "0")[:6].ljust(6, "0"))
    zone = tz
    if m["tz"]:
        zone = resolve_zone(m["tz"]) if m["tz"] != "Z" else dt.timezone.utc
    when = dt.datetime(
        int(m["y"]), int(m["mo"]), int(m["d"]), int(m["h"]), int(m["mi"]), int(m["s"]), micro, zone
    )
    return (when - _EPOCH) // dt.timedelta(milliseconds=1)
