"""Line framing: which physical lines make one log entry, and the entry's timestamp, level, logger and message.

No whole-line layout is enumerated. A line is read in four steps, each tolerant of what it does not know:

1. Cleaned: line end, a UTF-8 BOM, and leading NUL bytes are removed (a `copytruncate` rotation leaves the
   file's start as a hole of zeros that the next written line follows), as is their caret rendering `^@`
   when the text was pasted; ANSI colour codes (Spring Boot's console, `%highlight`), also as `^[[` or,
   pasted without their ESC, `[2m` on a line that starts with one.
2. Outer prefixes are peeled, as many as are nested: CRI (`<RFC 3339> stdout|stderr F|P `; P = a partial
   record, joined with the next), a container runtime's own timestamp (`docker logs -t`), `kubectl logs
   --prefix` (`[pod/name/container] `), syslog / journald (`<pri>`, `MMM dd HH:mm:ss host tag[pid]: `,
   RFC 5424, ISO or `short-full` stamps), `docker compose logs` (`name  | `), and JSON stream records whose
   text is a log line (Docker's json-file `log`, journald's `MESSAGE`).
3. The layout's envelope is read token by token, in whatever order the layout puts them: timestamps (every
   form of `_STAMP`), the level (bare, padded or bracketed), `[thread]` / `[app]` / correlation brackets,
   Spring Boot's `pid ---`, and a logger followed by ` - ` or ` : ` (logback, Spring Boot, log4j2's
   `%c{1}:%L - `) or by a tab (tab-separated layouts) or directly by a Kafka message prefix, which ends
   it. Connect's context in the layout's own brackets (`[%X{connector.context}]%m`) is the message. A bracket that opens a Kafka message prefix (`[GroupCoordinator 1]: `,
   `[Consumer clientId=…] `, Connect's `[connector|task-0] `, from `patterns.PREFIXES`) is the message.
   A JSON object (one per line, or pretty-printed over several lines as log4j2's `JsonLayout` does by
   default) is read by its fields: ECS, logstash, log4j2 `JsonLayout` / `JsonTemplateLayout` templates,
   GELF, log4j 1 `JSONEventLayoutV1` (Strimzi's JSON).
4. The message's end: log4j's ` (logger)` (Connect: ` (logger:line)`; `%c{1}`: a Kafka class's name alone),
   and what layouts put after it: Strimzi's ` [thread]`, MDC `key=value` / `{…}` (layouts that print the
   logger first are handled by the parser, which retries a message that nearly matches without such a
   suffix).

A line heads a new entry when its envelope has a timestamp, a level or a logger, when its message starts
with a Kafka prefix, or when it is a structured JSON record. A head without a timestamp is still a head (the
parser quarantines its group events: "no timestamp"). Any other line continues the entry above it (stack
traces, "Updating assignment with" blocks, the ` (logger)` suffix alone on a line), with the prefixes of
step 2 peeled from it. A line whose head is not at its start (an unknown prefix: a quote mark, a line
number) is searched for a timestamp followed by an envelope with a level; the text before it is then
removed from the entry's continuation lines too. Lines starting with '#' are comments.

Dates: an entry keeps its timestamp as printed (`ts_text`) and its kind (`ts_kind`): `datetime` (a date
and a time), `epoch` (JSON numbers), `month_day` (syslog, no year) or `time` (no date). The innermost stamp
that has a date wins (an application's own over the container runtime's); a time-only application stamp
yields to a dated outer one. Time-only and yearless stamps are dated by `LineDates` (the file name's date
or a given date, rolled past midnight), never guessed; `parse_timestamp` turns the result into UTC ms.
"""

from __future__ import annotations

import datetime as dt
import json
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from zoneinfo import ZoneInfo

from rebalance_core.kafka_logs.patterns import CONNECT_MDC, PREFIXES

# -------------------------------------------------------------------------------------------- tokens
_MON = r"(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)"
_FRACTION = r"(?:[.,]\d{1,9})?"
_ZONE = r"(?: ?(?:Z|[+-]\d{2}(?::?\d{2})?|UTC|GMT)(?![\w:]))?"
# log4j/log4j2 `%d` (DEFAULT, ISO8601, ISO8601_OFFSET_*, DEFAULT_NANOS), logback/Spring Boot, RFC 3339
# (Docker, CRI, JSON), journald short-iso/short-full (weekday, `UTC`), log4j `%d{DATE}` (`02 Nov 2012`),
# syslog/journald `MMM dd HH:mm:ss[.micros]` (no year), log4j2 `%d{ABSOLUTE}` / logback `HH:mm:ss.SSS`
# (no date), journald short-unix (epoch seconds with a fraction).
_STAMP_BODY = (
    r"(?:(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun),? )?"
    rf"(?:(?P<datetime>\d{{4}}[-/]\d{{2}}[-/]\d{{2}}[T ]\d{{2}}:\d{{2}}:\d{{2}}{_FRACTION}{_ZONE})"
    rf"|(?P<day_month>\d{{1,2}} {_MON} \d{{4}},? \d{{2}}:\d{{2}}:\d{{2}}{_FRACTION}{_ZONE})"
    rf"|(?P<month_day>{_MON} [ \d]?\d \d{{2}}:\d{{2}}:\d{{2}}{_FRACTION})"
    rf"|(?P<time>\d{{2}}:\d{{2}}:\d{{2}}{_FRACTION})"
    r"|(?P<epoch>\d{10}\.\d{3,9}))"
)
_STAMP = re.compile(rf"(?P<open>\[)?{_STAMP_BODY}(?(open)\])(?![\w:.,])")

# Where a stamp may start in a line with an unknown prefix.
_STAMP_ANYWHERE = re.compile(
    rf"\[?(?:\d{{4}}[-/]\d{{2}}[-/]\d{{2}}[T ]|\d{{1,2}} {_MON} \d{{4}},? |{_MON} [ \d]?\d )?\d{{2}}:\d{{2}}:\d{{2}}"
)
_LEVELS = r"TRACE|DEBUG|INFO|WARN(?:ING)?|ERROR|FATAL|SEVERE|NOTICE|CRIT(?:ICAL)?|ALERT|EMERG(?:ENCY)?"
_LEVEL = re.compile(rf"\[\s*(?P<blevel>{_LEVELS})\s*\]|(?P<level>{_LEVELS})(?![\w.\-\]])")
_KAFKA_HEAD = re.compile(
    rf"\[(?P<ts>\d{{4}}-\d{{2}}-\d{{2}} \d{{2}}:\d{{2}}:\d{{2}},\d{{3}})\] (?P<level>{_LEVELS}) "
)
_BRACKET = re.compile(r"\[(?P<thread>[^\[\]]*)\]")
_PAREN_THREAD = re.compile(r"\((?P<thread>[^()\s]+)\)[ \t]+")
_PID = re.compile(r"(?:\d+\s+)?---(?=\s)")  # Spring Boot: `INFO 3618015 --- [thread]`
_NAME = r"[A-Za-z_$][\w$]*"
# `logger - msg` (logback, log4j2 `%c{1}:%L - `, `%C{2} (%F:%L) - `) and, for dotted names only,
# `logger : msg` / `logger: msg` (Spring Boot pads the logger to 40 characters).
_LOGGER_DASH = re.compile(rf"(?P<logger>{_NAME}(?:\.[\w$]+)*)(?::\d+)?(?:\s*\([\w$.]*:\d+\))?\s+-(?:\s|$)")
_LOGGER_COLON = re.compile(rf"(?P<logger>{_NAME}(?:\.[\w$]+)+)(?::\d+)?\s*:(?:\s|$)")
# A logger with no separator of its own: tab-separated layouts (`%d\t%p\t[%t]\t%c\t%m`, dotted names only), or
# `%c %m` where Kafka's message prefix follows the logger (checked by the caller).
_LOGGER_BARE = re.compile(rf"(?P<logger>{_NAME}(?:\.[\w$]+)*)(?::\d+)?(?P<sep>\t|\s+)")
# A Kafka message prefix (patterns.PREFIXES, Connect's MDC): the message starts here, it is no thread.
_KAFKA_PREFIX = re.compile(
    "|".join(re.sub(r"\(\?P<\w+>", "(?:", p.regex) for p in PREFIXES) + "|" + CONNECT_MDC.pattern
)
_BRACKETED_CONNECT_CONTEXT = re.compile(r"\[(?P<context>\[[^\[\]|\s]+\|[^\]\s]+\] )\]")
_KAFKA_PREFIX_WORDS = ("[GroupCoordinator ", "[GroupMetadataManager ", "[Group Metadata Manager",
                       "[Consumer ", "[ShareConsumer ", "[Worker ")  # fmt: skip
# Classes that log group messages (and AbstractConfig.logAll's dumps: the config class's logger up to 3.9,
# AbstractConfig's from 4.0, KAFKA-17185), for loggers printed without their package (log4j `%c{1}`).
KAFKA_LOGGER_CLASSES = frozenset(
    {
        "GroupCoordinator",
        "GroupMetadataManager",
        "AbstractCoordinator",
        "ConsumerCoordinator",
        "ConsumerRebalanceListenerInvoker",
        "ConsumerMembershipManager",
        "MembershipManagerImpl",
        "WorkerCoordinator",
        "DistributedHerder",
        "ConsumerConfig",
        "DistributedConfig",
        "AbstractConfig",
    }
)
# ` (org.apache.kafka.clients.consumer.internals.ConsumerCoordinator)` / `(…WorkerCoordinator:222)`: a dotted
# class name, or one of Kafka's classes above without its package (`%c{1}`: ` (ConsumerConfig)`), so
# "(reason: …)" or "(__consumer_offsets-3)" are never mistaken for it; then what a layout may print after
# it: Strimzi's `[thread]`, MDC as `key=value` or log4j2's `{key=value, …}`.
_TAIL_LOGGER = re.compile(
    rf"\s+\((?P<logger>(?:{_NAME}(?:\.[\w$]+)+|{'|'.join(sorted(KAFKA_LOGGER_CLASSES))})(?::\d+)?)\)"
    r"(?:\s+(?:\[[^\[\]]*\]|\{[^{}]*\}|[\w.-]+=\S*))*\s*$"
)

# ------------------------------------------------------------------------------------ outer prefixes
_CRI = re.compile(
    r"(?P<ts>\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d{1,9})?(?:Z|[+-]\d{2}:\d{2})) (?:stdout|stderr) (?P<tag>[FP])(?: |$)"
)
_RUNTIME_TS = re.compile(r"(?P<ts>\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d{1,9})?(?:Z|[+-]\d{2}:\d{2})) ")
_KUBECTL = re.compile(r"\[pod/(?P<pod>[^/\]\s]+)/[^\]\s]+\] ?")
_SYSLOG_PRI = re.compile(r"<\d{1,3}>")
_RFC5424 = re.compile(
    r"<\d{1,3}>1 (?P<ts>\S+) (?P<host>\S+) \S+ \S+ \S+ (?:-|(?:\[(?:[^\]\\]|\\.)*\])+) ?(?:\ufeff)?"
)
# ` host tag[pid]: ` after a syslog stamp; the tag (a program name) starts with a letter, so an application's own
# `HH:mm:ss` after a runtime's stamp is never taken for one.
_SYSLOG_HOST_TAG = re.compile(r" (?P<host>[^\s\[\]]+) (?P<tag>[A-Za-z_][^\s\[\]:]*)(?P<pid>\[\d+\])?: ?")
_COMPOSE = re.compile(r"(?P<container>[A-Za-z0-9][\w.-]*)\s+\| ?")
_LEVEL_AHEAD = re.compile(rf"\s*(?:\[\s*)?(?:{_LEVELS})(?![\w.])")
_LEADING_NULS = re.compile(r"^(?:\x00|\^@)+")
# ANSI SGR colour codes (Spring Boot's console default on a terminal, logback `%highlight`/`%cyan`, log4j2
# `%highlight{}`/`%style{}`): `ESC[2m`, `ESC[0;39m`. ECMA-48 CSI: parameters, then a final letter.
_ANSI_CSI = re.compile(r"(?:\x1b|\^\[)\[[0-9;]*[A-Za-z]")  # also `^[[2m`, the caret rendering of ESC
# Pasted into a web page, the ESC is often lost and `[2m…[0;39m` stays: read so only on a line that starts
# with one (the coloured envelope comes first), and only SGR codes (`m`).
_PASTED_SGR = re.compile(r"\[[0-9;]*m")

# JSON fields, most specific first. Wrapper keys hold a whole log line (Docker json-file, journald).
_JSON_MESSAGE_KEYS = ("message", "msg", "short_message", "@message", "@m", "text", "log", "MESSAGE",
                      "full_message")  # fmt: skip
_JSON_WRAPPER_KEYS = frozenset({"log", "MESSAGE"})
_JSON_TS_KEYS = ("@timestamp", "timestamp", "time", "ts", "@t", "date", "datetime", "timeMillis",
                 "instant", "__REALTIME_TIMESTAMP")  # fmt: skip
_JSON_LEVEL_KEYS = ("level", "log.level", "severity", "levelname", "loglevel", "log_level", "@l")
_JSON_LOGGER_KEYS = ("logger_name", "logger", "loggerName", "log.logger", "_logger", "name")
_JSON_THREAD_KEYS = ("thread_name", "thread", "threadName", "process.thread.name", "_thread")
_PRETTY_JSON_LIMIT = 5000  # lines of one pretty-printed JSON record before it is read as plain lines


# --------------------------------------------------------------------------------------------- entries
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
    container: str | None = None  # named by a `docker compose` or `kubectl --prefix` prefix
    ts_kind: str | None = None  # datetime | epoch | month_day (no year) | time (no date)
    date: dt.date | None = None  # for `time` / `month_day` stamps: the date `LineDates` gave the line
    line_numbers: list[int] = field(default_factory=list)  # of raw_lines (comment lines in the span skipped)
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
            m = _tail_logger(text)
            if m is None and len(self.lines) > 1:  # log4j appends a throwable after "msg (logger)"
                first = _tail_logger(self.lines[0])
                if first:
                    self.logger = first["logger"]
                    text = "\n".join([self.lines[0][: first.start()], *self.lines[1:]])
            elif m is not None:
                self.logger = m["logger"]
                text = text[: m.start()]
        self.message = text.rstrip()
        return self


def _tail_logger(text: str) -> re.Match | None:
    """` (logger)` and its suffixes at the end of `text`: tried at the last '(' only (a literal search
    first; the logger is the last parenthesis a layout prints)."""
    start = text.rfind("(")
    if start <= 0:
        return None
    while start > 0 and text[start - 1].isspace():
        start -= 1
    return _TAIL_LOGGER.match(text, start)


@dataclass(frozen=True, slots=True)
class LooseLine:
    """A physical line that belongs to no entry: a comment, or text before the first head."""

    line: int
    text: str
    comment: bool
    stamped: bool = False  # a timestamp was seen on it (it is text, not an entry, for want of a level)


def split_entries(
    lines: Iterable[str] | Iterable[tuple[int, str]],
    dates: LineDates | None = None,
    *,
    numbered: bool = False,
) -> Iterator[LogEntry | LooseLine]:
    """Group physical lines into entries (in file order). Every input line ends up in exactly one
    yielded item. `dates` dates the time-only and yearless stamps (in file order: midnight rollover).
    `numbered`: the lines come as (line number, text), in increasing order, and may leave lines out (a
    reader's pre-filter drops the heads of entries not about groups): a gap ends the entry being read,
    and the lines after it that continue no entry are loose lines."""
    framer = _Framer(dates or LineDates(None))
    expected = 1
    for number, raw in lines if numbered else enumerate(lines, start=1):
        if number != expected:
            yield from framer.close()
        yield from framer.feed(number, raw)
        expected = number + 1
    yield from framer.close()


# ------------------------------------------------------------------------------------------- framing
@dataclass(slots=True)
class _Line:
    """A logical line: one physical line, or several joined (CRI / Docker partial records)."""

    first: int
    last: int
    raws: list[str]
    text: str  # after the outer prefixes
    stamps: list[tuple[str, str]]  # outer stamps (text, kind), outermost first
    container: str | None
    compose: bool
    partial: bool
    doc: dict | None = None  # the line's JSON object, already decoded


@dataclass(slots=True)
class _Head:
    """What the envelope of a head line says."""

    stamps: list[tuple[str, str]]
    level: str | None
    logger: str | None
    thread: str | None
    message: str
    tail_logger: bool


class _Framer:
    def __init__(self, dates: LineDates) -> None:
        self.dates = dates
        self.current: LogEntry | None = None
        self.compose = False  # the current entry came through `docker compose logs`
        self.unknown_prefix = ""  # text before the current entry's head (removed from its continuations)
        self.partial: _Line | None = None
        self.block: list[_Line] | None = None  # a pretty-printed JSON record being collected

    def feed(self, number: int, raw: str) -> Iterator[LogEntry | LooseLine]:
        raw = _clean(raw, number)
        if raw.startswith("#") and self.partial is None and self.block is None:
            yield LooseLine(number, raw, comment=True)
            return
        line = self._peel(number, raw)
        if self.partial is not None:
            line = self._join(self.partial, line)
            self.partial = None
        if line.partial:
            self.partial = line
            return
        if self.block is not None:
            yield from self._block_line(line)
            return
        if line.text.strip() == "{" and line.doc is None:
            self.block = [line]
            return
        yield from self._logical(line)

    def close(self) -> Iterator[LogEntry | LooseLine]:
        if self.partial is not None:
            line, self.partial = self.partial, None
            if self.block is not None:
                self.block.append(line)
            else:
                yield from self._logical(line)
        if self.block is not None:
            block, self.block = self.block, None
            for line in block:
                yield from self._logical(line)
        if self.current is not None:
            yield self.current.finish()
            self.current = None

    # -- step 2: outer prefixes -------------------------------------------------------------------
    def _peel(self, number: int, raw: str) -> _Line:
        text, stamps, container, compose, partial, doc = raw, [], None, False, False, None
        while text:
            c = text[0]
            if c.isdigit():
                m = _CRI.match(text)
                if m:
                    stamps.append((m["ts"], "datetime"))
                    partial = m["tag"] == "P"
                    text = text[m.end() :]
                    continue
                m = _syslog(text)
                if m is not None:
                    stamps.append(m[0])
                    text = text[m[1] :]
                    continue
                m = _RUNTIME_TS.match(text)
                if m and not _LEVEL_AHEAD.match(text, m.end()):  # else it is the application's own stamp
                    stamps.append((m["ts"], "datetime"))
                    text = text[m.end() :]
                    continue
            elif c == "[":
                m = _KUBECTL.match(text) if text.startswith("[pod/") else None
                if m:
                    container = m["pod"]
                    text = text[m.end() :]
                    continue
            elif c == "<":
                m = _RFC5424.match(text)
                if m:
                    if m["ts"] != "-":
                        stamps.append((m["ts"], "datetime"))
                    text = text[m.end() :]
                    continue
                m = _SYSLOG_PRI.match(text)
                if m and _syslog(text[m.end() :]) is not None:
                    text = text[m.end() :]
                    continue
            elif c in _MONTH_OR_WEEKDAY_INITIALS:
                m = _syslog(text)
                if m is not None:
                    stamps.append(m[0])
                    text = text[m[1] :]
                    continue
            elif c == "{":
                wrapped = _json_wrapper(text)
                if wrapped is not None:
                    doc, inner, stamp, partial = wrapped
                    if inner is not None:
                        if stamp is not None:
                            stamps.append(stamp)
                        text, doc = inner, None
                        continue
                break
            if not compose and c.isalnum() and " |" in text[:120]:
                m = _COMPOSE.match(text)
                # Sticky for the lines of an entry that came through compose; otherwise only before a head.
                if m and (self.compose or _looks_like_head(text[m.end() :])):
                    container, compose = m["container"], True
                    text = text[m.end() :]
                    continue
            break
        return _Line(number, number, [raw], text, stamps, container, compose, partial, doc)

    @staticmethod
    def _join(first: _Line, then: _Line) -> _Line:
        """A partial record and the record that continues it (same line of the application's output)."""
        return _Line(
            first.first,
            then.last,
            first.raws + then.raws,
            first.text + then.text,
            first.stamps or then.stamps,
            first.container or then.container,
            first.compose or then.compose,
            then.partial,
            None,
        )

    # -- pretty-printed JSON ----------------------------------------------------------------------
    def _block_line(self, line: _Line) -> Iterator[LogEntry | LooseLine]:
        block = self.block
        block.append(line)
        if line.text.rstrip() in ("}", "},"):
            text = "\n".join(part.text for part in block).rstrip().rstrip(",")
            try:
                doc = json.loads(text)
            except (ValueError, RecursionError):  # nested deeper than Python's stack allows: text
                doc = None
            if isinstance(doc, dict):
                self.block = None
                joined = _Line(block[0].first, line.last, [r for part in block for r in part.raws], "",
                               block[0].stamps, block[0].container, block[0].compose, False, doc)  # fmt: skip
                head = _json_head(doc, joined)
                if head is not None:
                    yield from self._start(joined, head)
                else:
                    for part in block:
                        yield from self._continue(part)
                return
        if len(block) > _PRETTY_JSON_LIMIT:
            self.block = None
            for part in block:
                yield from self._logical(part)

    # -- steps 3 and 4 ----------------------------------------------------------------------------
    def _logical(self, line: _Line) -> Iterator[LogEntry | LooseLine]:
        text = line.text
        if line.doc is not None:
            head = _json_head(line.doc, line)
        elif text[:1] == "{":
            doc = _json_object(text)
            head = _json_head(doc, line) if doc is not None else None
            if doc is not None and head is None:
                text = _json_message(doc) or text  # a raw stream record: its text continues the entry
        else:
            head = _envelope(text, line.stamps)
        if head is None and self.unknown_prefix and text.startswith(self.unknown_prefix):
            text = text[len(self.unknown_prefix) :]  # the prefix of the entry above, on its next line
            head = _envelope(text, line.stamps)
            if head is not None:
                yield from self._start(line, head)
                return
        elif head is None and text and text[0] != "{":
            found = _after_unknown_prefix(text)
            if found is not None:
                self.unknown_prefix = text[: found[0]]
                yield from self._start(line, found[1])
                return
        elif head is not None:
            self.unknown_prefix = ""
            yield from self._start(line, head)
            return
        line.text = text
        yield from self._continue(line)

    def _continue(self, line: _Line) -> Iterator[LogEntry | LooseLine]:
        current = self.current
        if current is None:
            stamped = bool(line.stamps) or _STAMP_ANYWHERE.search(line.text) is not None
            for offset, raw in enumerate(line.raws):
                yield LooseLine(line.first + offset, raw, comment=False, stamped=stamped)
            return
        current.lines.extend(line.text.split("\n"))
        current.raw_lines.extend(line.raws)
        current.line_numbers.extend(range(line.first, line.first + len(line.raws)))
        current.last_line = line.last

    def _start(self, line: _Line, head: _Head) -> Iterator[LogEntry]:
        if self.current is not None:
            yield self.current.finish()
        ts_text, ts_kind = _chosen_stamp(head.stamps)
        date = None
        if ts_kind == "time":
            date = self.dates.date_of_time(ts_text)
        elif ts_kind == "month_day":
            date = self.dates.reference
        self.compose = line.compose
        self.current = LogEntry(
            first_line=line.first,
            last_line=line.last,
            ts_text=ts_text,
            level=head.level,
            logger=head.logger,
            thread=head.thread,
            lines=head.message.split("\n"),
            raw_lines=list(line.raws),
            line_numbers=list(range(line.first, line.first + len(line.raws))),
            tail_logger=head.tail_logger,
            container=line.container,
            ts_kind=ts_kind,
            date=date,
        )


_MONTH_OR_WEEKDAY_INITIALS = frozenset("JFMASONDTW")


def _clean(raw: str, number: int) -> str:
    raw = raw.rstrip("\r\n")
    if number == 1 and raw.startswith("\ufeff"):
        raw = raw[1:]
    if raw[:1] == "\x00" or raw[:2] == "^@":
        raw = _LEADING_NULS.sub("", raw, count=1)
    if "\x1b" in raw or "^[[" in raw:
        raw = _ANSI_CSI.sub("", raw)
    elif raw[:1] == "[" and _PASTED_SGR.match(raw):
        raw = _PASTED_SGR.sub("", raw)
    return raw


def _looks_like_head(text: str) -> bool:
    c = text[:1]
    return c in ("[", "{", "<") or c.isdigit() or c in _MONTH_OR_WEEKDAY_INITIALS


def _syslog(text: str) -> tuple[tuple[str, str], int] | None:
    """A syslog / journald prefix at the start: (its stamp, where the message starts). After an ISO stamp
    (rsyslog's RFC 3339 template, journald short-iso / short-full) the tag must carry its `[pid]`, as those
    print it: a container runtime's stamp before message text (`… revoked partitions: `) is no syslog line."""
    m = _STAMP.match(text)
    if m is None or m["open"] or m["time"] or m["day_month"]:
        return None
    h = _SYSLOG_HOST_TAG.match(text, m.end())
    zone = _ZONE_ABBREVIATION.match(text, m.end()) if h is None and m["datetime"] else None
    if zone is not None:  # journald short-full: `Sun 2024-03-10 23:59:59 CET host tag[pid]: `
        h = _SYSLOG_HOST_TAG.match(text, zone.end())
    if h is None or _LEVEL.fullmatch(h["host"]) or (m["datetime"] and not h["pid"]):
        return None
    kind = m.lastgroup
    return (m[kind], kind), h.end()


# A zone abbreviation (`CET`, `PDT`): ambiguous (IST, CST), so not read; the stamp before it is local time.
_ZONE_ABBREVIATION = re.compile(r" [A-Z]{3,5}(?= )")


def _envelope(
    text: str, outer: list[tuple[str, str]], pos: int = 0, need_level: bool = False
) -> _Head | None:
    """Step 3 on a text line: its envelope tokens, in any order, up to the message."""
    stamps: list[tuple[str, str]] = []
    level = thread = logger = None
    n = len(text)
    m = _KAFKA_HEAD.match(text, pos) if text.startswith("[", pos) else None
    if m is not None:  # Kafka's own `[%d] %p ` (server.log, Connect): most lines of most inputs
        stamps.append((m["ts"], "datetime"))
        level, pos = m["level"], m.end()
    while True:
        while pos < n and text[pos] in " \t":
            pos += 1
        if pos >= n:
            break
        c = text[pos]
        if c == "[":
            after = text[pos + 1 : pos + 2]
            if after.isdigit() or after in _MONTH_OR_WEEKDAY_INITIALS:
                m = _STAMP.match(text, pos)
                if m:
                    stamps.append(_stamp_of(m))
                    pos = m.end()
                    continue
            m = _BRACKETED_CONNECT_CONTEXT.match(text, pos)
            if (
                m
            ):  # `[%X{connector.context}]%m`: Connect's context in the layout's own brackets is the message
                text, n = text[: m.start()] + m["context"] + text[m.end() :], n - 2
                break
            if _KAFKA_PREFIX.match(text, pos):
                break
            m = _LEVEL.match(text, pos)
            if m:
                level = level or m["blevel"]
                pos = m.end()
                continue
            m = _BRACKET.match(text, pos)
            if m:
                thread = m["thread"].strip() or thread  # `[]`: an empty MDC value, no thread
                pos = m.end()
                continue
            break
        if c.isdigit():
            m = _STAMP.match(text, pos)
            if m:
                stamps.append(_stamp_of(m))
                pos = m.end()
                continue
            m = _PID.match(text, pos)
            if m:
                pos = m.end()
                continue
            break
        if c == "(" and (stamps or level):
            m = _PAREN_THREAD.match(text, pos)
            if m and _KAFKA_PREFIX.match(
                text, m.end()
            ):  # Quarkus `[%c{3.}] (%t) %s`: the bracket was the logger
                if thread and "." in thread and " " not in thread:
                    logger = thread
                thread, pos = m["thread"], m.end()
            break
        if c == "-":
            m = _PID.match(text, pos)
            if m:
                pos = m.end()
                continue
            break
        if "A" <= c <= "Z":
            if c in _MONTH_OR_WEEKDAY_INITIALS:
                m = _STAMP.match(text, pos)
                if m:
                    stamps.append(_stamp_of(m))
                    pos = m.end()
                    continue
            m = _LEVEL.match(text, pos)
            if m:
                level = level or m["level"]
                pos = m.end()
                continue
        if (stamps or level) and (c.isalpha() or c in "_$"):
            m = _LOGGER_DASH.match(text, pos) or _LOGGER_COLON.match(text, pos) or _bare_logger(text, pos)
            if m:
                logger = m["logger"]
                pos = m.end()
        break
    message = text[pos:]
    kafka = message[:1] in ("[", "s") and _KAFKA_PREFIX.match(message) is not None
    if level is None and not kafka and stamps and "[" in message:
        moved = _kafka_message_after_envelope(message)
        if moved is not None:
            level, message = moved
            kafka = True
    if need_level and level is None:
        return None
    if not (stamps or level or logger or kafka):
        return None
    return _Head(outer + stamps, level, logger, thread, message, logger is None)


def _bare_logger(text: str, pos: int) -> re.Match | None:
    """A logger ended by a tab (dotted names), or by spaces when Kafka's message prefix follows it."""
    m = _LOGGER_BARE.match(text, pos)
    if m is None:
        return None
    if (m["sep"] == "\t" and "." in m["logger"]) or _KAFKA_PREFIX.match(text, m.end()):
        return m
    return None


def _kafka_message_after_envelope(message: str) -> tuple[str, str] | None:
    """An envelope token this module does not know (an MDC value before the level, …): when the level is
    further on and a Kafka prefix follows it, the message starts at the prefix."""
    for word in _KAFKA_PREFIX_WORDS:
        q = message.find(word)
        if q > 0 and _KAFKA_PREFIX.match(message, q):
            before = message[:q]
            level = _LEVEL.search(before)
            if level is not None and len(before.split()) <= 8:
                return level["level"] or level["blevel"], message[q:]
            return None
    return None


def _after_unknown_prefix(text: str) -> tuple[int, _Head] | None:
    """A head after text this module does not know: a timestamp, then an envelope with a level."""
    m = _STAMP_ANYWHERE.search(text, 1)
    if m is None:
        return None
    head = _envelope(text, [], m.start(), need_level=True)
    if head is None or not head.stamps:
        return None
    return m.start(), head


def _stamp_of(m: re.Match) -> tuple[str, str]:
    kind = m.lastgroup  # the kinds are the last named groups of _STAMP, none nested in another
    return m[kind], ("datetime" if kind == "day_month" else kind)


def _chosen_stamp(stamps: list[tuple[str, str]]) -> tuple[str | None, str | None]:
    """The innermost stamp with a full date (the application's own, read with its zone), else the
    innermost yearless one, else the innermost time of day. A dated stamp to the second (syslog,
    journald short-iso) takes the milliseconds of a time-only application stamp inside it that shows the
    same second (the same clock and zone: logback through journald)."""
    for wanted in (("datetime", "epoch"), ("month_day",), ("time",)):
        for text, kind in reversed(stamps):
            if kind in wanted:
                if kind != "time" and stamps[-1][1] == "time":
                    return _with_fraction_of(text, stamps[-1][0]), kind
                return text, kind
    return None, None


_WHOLE_SECOND = re.compile(
    r"(?P<head>.*?\d{2}:\d{2}:(?P<s>\d{2}))(?P<tail>(?: ?(?:Z|[+-]\d{2}(?::?\d{2})?|UTC|GMT))?)"
)


def _with_fraction_of(dated: str, time_only: str) -> str:
    """`dated` (to the second) with the fraction of `time_only` when both show the same time of day."""
    m = _WHOLE_SECOND.fullmatch(dated)
    if m is None or time_only[8:9] not in (".", ",") or dated[m.end("s") - 8 : m.end("s")] != time_only[:8]:
        return dated
    return m["head"] + "." + time_only[9:] + m["tail"]


# ---------------------------------------------------------------------------------------------- JSON
def _json_object(text: str) -> dict | None:
    try:
        doc = json.loads(text)
    except (ValueError, RecursionError):
        return None
    return doc if isinstance(doc, dict) else None


def _json_wrapper(text: str):
    """A JSON stream record that wraps a log line (Docker json-file `log`, journald `MESSAGE`):
    (doc, inner text or None, its stamp, partial). Docker splits lines over 16 KiB into records whose
    `log` lacks the final newline: partial."""
    doc = _json_object(text)
    if doc is None:
        return None
    for key in ("log", "MESSAGE"):
        value = doc.get(key)
        if isinstance(value, str):
            partial = key == "log" and "stream" in doc and not value.endswith("\n")
            inner = value[:-1] if value.endswith("\n") else value
            stamp = _json_stamp(doc)
            return doc, inner, stamp, partial
    return doc, None, None, False


def _json_head(doc: dict, line: _Line) -> _Head | None:
    """A structured record (ECS, logstash, log4j2 JSON layouts, GELF, JSONEventLayoutV1): a head when it
    has a message and a level, or a message and a time; its message may itself carry a text envelope."""
    key, message = _json_message_field(doc)
    if message is None:
        return None
    stamp = _json_stamp(doc)
    outer = line.stamps + ([stamp] if stamp is not None else [])
    inner = _envelope(message, outer)
    if inner is not None and len(inner.stamps) > len(outer):
        return inner
    level = _json_value(doc, _JSON_LEVEL_KEYS)
    if level is None and (stamp is None or key in _JSON_WRAPPER_KEYS):
        return None
    logger, thread = (_str_or_none(_json_value(doc, keys)) for keys in (_JSON_LOGGER_KEYS, _JSON_THREAD_KEYS))
    return _Head(outer, _str_or_none(level), logger, thread, message, False)


def _json_message(doc: dict) -> str | None:
    return _json_message_field(doc)[1]


def _json_message_field(doc: dict) -> tuple[str | None, str | None]:
    for key in _JSON_MESSAGE_KEYS:
        value = doc.get(key)
        if isinstance(value, str):
            return key, value[:-1] if value.endswith("\n") else value
    return None, None


def _json_stamp(doc: dict) -> tuple[str, str] | None:
    value = _json_value(doc, _JSON_TS_KEYS)
    if value is None:
        return None
    if isinstance(value, dict):  # log4j2 JsonLayout `instant: {epochSecond, nanoOfSecond}`
        seconds, nanos = value.get("epochSecond"), value.get("nanoOfSecond", 0)
        if not isinstance(seconds, int) or not isinstance(nanos, int):
            return None
        return str(seconds * 1000 + nanos // 1_000_000), "epoch"
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        return None
    text = str(value).strip()
    if _NUMBER.fullmatch(text):
        return text, "epoch"
    m = _STAMP.fullmatch(text)
    return (_stamp_of(m) if m else (text, "datetime")) if text else None


_NUMBER = re.compile(r"\d+(?:\.\d+)?")


def _json_value(doc: dict, keys: tuple[str, ...]):
    for key in keys:
        if key in doc:
            return doc[key]
        if "." in key:  # ECS nested form: {"log": {"level": ...}}, {"process": {"thread": {"name": ...}}}
            node = doc
            for part in key.split("."):
                node = node.get(part) if isinstance(node, dict) else None
                if node is None:
                    break
            if node is not None and not isinstance(node, dict):
                return node
    return None


def _str_or_none(value) -> str | None:
    return None if value is None else str(value)


# --------------------------------------------------------------------------------------------- dates
_FILE_DATE = re.compile(r"(?<!\d)(?P<y>(?:19|20)\d{2})(?P<sep>[-_.]?)(?P<m>\d{2})(?P=sep)(?P<d>\d{2})(?!\d)")


def file_name_date(path: str) -> dt.date | None:
    """The date in a log file's name, as rolling appenders write it: `app.2024-05-06.log`,
    `app-2024-05-06.0.log.gz`, `server.log.2024-05-06-13` (hourly), `server.log.2024-05-06`,
    `app.20240506.log`, kubelet's `0.log.20240506-134501`. The last date in the name; None if none."""
    name = path.replace("\\", "/").rsplit("/", 1)[-1]
    found = None
    for m in _FILE_DATE.finditer(name):
        try:
            found = dt.date(int(m["y"]), int(m["m"]), int(m["d"]))
        except ValueError:
            continue
    return found


class LineDates:
    """Per file, in line order: the date of each time-only line and the year reference of syslog lines.

    `reference` is the file's first date (the file name's, else the one given); None when neither is
    known (such lines are then quarantined, never dated by guess). A time of day that falls back by more
    than 12 hours is the next day (the file ran past midnight); one that jumps ahead by more than 12
    hours is a late line of the day before (out of order across midnight)."""

    _HALF_DAY = 12 * 3600

    def __init__(self, reference: dt.date | None) -> None:
        self.reference = reference
        self._day = reference
        self._last: int | None = None

    def date_of_time(self, time_text: str) -> dt.date | None:
        seconds = int(time_text[0:2]) * 3600 + int(time_text[3:5]) * 60 + int(time_text[6:8])
        last, self._last = self._last, seconds
        if last is not None:
            if seconds < last - self._HALF_DAY:
                self._day = self._day + dt.timedelta(days=1) if self._day else None
            elif seconds > last + self._HALF_DAY:
                self._last = last  # a late line: the day pointer and the clock stay
                return self._day - dt.timedelta(days=1) if self._day else None
        return self._day


# ----------------------------------------------------------------------------------------- timestamps
def resolve_zone(name: str) -> dt.tzinfo:
    """The zone naive timestamps are read in ("UTC", "Europe/Paris", "+02:00"). ValueError if unknown."""
    if name.upper() in ("UTC", "Z", "GMT"):
        return dt.UTC
    m = re.fullmatch(r"([+-])(\d{2}):?(\d{2})?", name)
    if m:
        sign = 1 if m[1] == "+" else -1
        return dt.timezone(sign * dt.timedelta(hours=int(m[2]), minutes=int(m[3] or 0)))
    try:
        return ZoneInfo(name)
    except Exception as exc:  # ZoneInfoNotFoundError, ValueError for malformed keys
        raise ValueError(f"unknown time zone {name!r}") from exc


_EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.UTC)
_MONTHS = {m: i for i, m in enumerate(_MON[3:-1].split("|"), start=1)}
_DATETIME_PARTS = re.compile(
    r"(?:(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun),? )?"
    r"(?:(?P<y>\d{4})[-/](?P<mo>\d{2})[-/](?P<d>\d{2})[T ]|(?P<d2>\d{1,2}) (?P<mon2>[A-Z][a-z]{2}) (?P<y2>\d{4}),? "
    r"|(?P<mon3>[A-Z][a-z]{2}) [ ]?(?P<d3>\d{1,2}) )?"
    r"(?P<h>\d{2}):(?P<mi>\d{2}):(?P<s>\d{2})(?:[.,](?P<frac>\d{1,9}))?"
    r" ?(?P<tz>Z|[+-]\d{2}(?::?\d{2})?|UTC|GMT)?"
)


class UndatedTimestamp(ValueError):
    """A timestamp that has no date (time of day) or no year (syslog), and nothing to take it from."""


def parse_timestamp(text: str, tz: dt.tzinfo, date: dt.date | None = None) -> int:
    """UTC epoch milliseconds. Naive timestamps (log4j's `%d` is the JVM's local time) are read in `tz`;
    ISO offsets/`Z`/`UTC` win. Numbers: epoch seconds, milliseconds, microseconds or nanoseconds. A time
    of day takes `date`; a syslog `MMM dd` takes the year that puts it nearest `date`. ValueError if
    unreadable (UndatedTimestamp when the date or year is missing)."""
    text = text.strip()
    if _NUMBER.fullmatch(text):
        return _epoch_ms(text)
    m = _DATETIME_PARTS.fullmatch(text)
    if not m:
        raise ValueError(f"unreadable timestamp {text!r}")
    if m["y"]:
        year, month, day = int(m["y"]), int(m["mo"]), int(m["d"])
    elif m["y2"]:
        year, month, day = int(m["y2"]), _month(m["mon2"], text), int(m["d2"])
    elif m["mon3"]:
        if date is None:
            raise UndatedTimestamp(f"syslog timestamp {text!r} without a year")
        month, day = _month(m["mon3"], text), int(m["d3"])
        year = min((date.year - 1, date.year, date.year + 1), key=lambda y: _distance(y, month, day, date))
    else:
        if date is None:
            raise UndatedTimestamp(f"time of day {text!r} without a date")
        year, month, day = date.year, date.month, date.day
    micro = int((m["frac"] or "0")[:6].ljust(6, "0"))
    zone = tz
    if m["tz"]:
        zone = dt.UTC if m["tz"] in ("Z", "UTC", "GMT") else resolve_zone(m["tz"])
    try:
        when = dt.datetime(year, month, day, int(m["h"]), int(m["mi"]), int(m["s"]), micro, zone)
    except ValueError as exc:
        raise ValueError(f"unreadable timestamp {text!r}: {exc}") from None
    return (when - _EPOCH) // dt.timedelta(milliseconds=1)


def _epoch_ms(text: str) -> int:
    """Epoch seconds, ms, µs or ns by magnitude (a fraction read as digits, not as a float: GELF's
    `1620146491.006` is exactly 006 ms)."""
    whole, _, fraction = text.partition(".")
    number = int(whole)
    if number >= 10**17:
        return number // 1_000_000
    if number >= 10**14:
        return number // 1000
    if number >= 10**11:
        return number
    return number * 1000 + int(fraction[:3].ljust(3, "0"))


def _month(name: str, text: str) -> int:
    if name not in _MONTHS:
        raise ValueError(f"unreadable timestamp {text!r}")
    return _MONTHS[name]


def _distance(year: int, month: int, day: int, reference: dt.date) -> int:
    try:
        return abs((dt.date(year, month, day) - reference).days)
    except ValueError:  # Feb 29 in a year without it
        return 10**6
