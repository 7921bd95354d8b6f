"""Property: a Kafka group message parses to the same events whatever layout, prefix and suffix surround it.

The messages are every wording of the pattern table (each row's example is written from Kafka's source, as
collected in /work/shared/kafka-logs/TEMPLATES.md), logged with its side's Kafka prefix; the reference is
Kafka's own log4j rendering `[%d] %p %m (%c)`. Layouts, prefixes and suffixes are rendered as their
documentation defines them (see the layout_* fixtures for where each comes from)."""

from __future__ import annotations

import datetime as dt
import json

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rebalance_core.kafka_logs import parse_lines
from rebalance_core.kafka_logs.patterns import PATTERNS
from schemas.events import Side
from tests.logs.kafka_log_fixtures import compact

DAY = dt.date(2024, 5, 6)
UTC = dt.UTC
PLUS_TWO = dt.timezone(dt.timedelta(hours=2))
PREFIX = {
    Side.COORDINATOR: "[GroupCoordinator id=1 topic=__consumer_offsets partition=3] [GroupId g1] ",
    Side.MEMBER: "[Consumer clientId=c1, groupId=g1] ",
}
LOGGER = {
    Side.COORDINATOR: "org.apache.kafka.coordinator.group.GroupMetadataManager",
    Side.MEMBER: "org.apache.kafka.clients.consumer.internals.ConsumerCoordinator",
}


def _d(t: dt.datetime, sep: str = ",") -> str:
    return t.strftime("%Y-%m-%d %H:%M:%S") + f"{sep}{t.microsecond // 1000:03d}"


def _abbreviated(logger: str) -> str:  # logback %logger{36}
    parts = logger.split(".")
    return ".".join([p[0] for p in parts[:-1]] + parts[-1:])


def _quarkus_logger(logger: str) -> str:  # `%c{3.}`: package parts cut to 3 characters
    parts = logger.split(".")
    return ".".join([p[:3] for p in parts[:-1]] + parts[-1:])


def _iso(t: dt.datetime, zone: dt.tzinfo = UTC) -> str:
    local = t.astimezone(zone)
    offset = local.strftime("%z")
    return (
        local.strftime("%Y-%m-%dT%H:%M:%S.")
        + f"{local.microsecond // 1000:03d}"
        + offset[:3]
        + ":"
        + offset[3:]
    )


# A layout: (time, logger, message) -> physical lines; True if its logger follows the message (a suffix may
# follow the logger), and whether it prints only the time of day.
TEXT_LAYOUTS = {
    "log4j kafka": (lambda t, lg, m: f"[{_d(t)}] INFO {m} ({lg})", True, False),
    "strimzi log4j1": (lambda t, lg, m: f"{_d(t)} INFO {m} ({lg}) [executor-Heartbeat]", True, False),
    "log4j2 iso offset": (lambda t, lg, m: f"{_d(t).replace(' ', 'T')}+00:00 INFO {m} ({lg})", True, False),
    "logback default": (
        lambda t, lg, m: f"{t:%H:%M:%S}.{t.microsecond // 1000:03d} [main] INFO  {_abbreviated(lg)} - {m}",
        False,
        True,
    ),
    "logback dated": (lambda t, lg, m: f"{_d(t, '.')} INFO  [main] {_abbreviated(lg)} - {m}", False, False),
    "spring boot 2": (
        lambda t, lg, m: f"{_d(t, '.')}  INFO 3618 --- [ntainer#0-0-C-1] {_abbreviated(lg):<40} : {m}",
        False,
        False,
    ),
    "spring boot 3": (
        lambda t, lg, m: (
            f"{_iso(t, PLUS_TWO)}  INFO 12 --- [app] [           main] {_abbreviated(lg):<40} : {m}"
        ),
        False,
        False,
    ),
    "log4j2 pattern manual": (
        lambda t, lg, m: f"{_d(t)} INFO  [main] {'.'.join(lg.split('.')[-2:])} (X.java:42) - {m}",
        False,
        False,
    ),
    "spring boot 2 colour": (  # %clr(...): ANSI SGR codes around the envelope's tokens
        lambda t, lg, m: (
            f"\x1b[2m{_d(t, '.')}\x1b[0;39m \x1b[32m INFO\x1b[0;39m \x1b[35m3618\x1b[0;39m \x1b[2m---\x1b[0;39m "
            f"\x1b[2m[ntainer#0-0-C-1]\x1b[0;39m \x1b[36m{_abbreviated(lg):<40}\x1b[0;39m \x1b[2m:\x1b[0;39m {m}"
        ),
        False,
        False,
    ),
    "quarkus": (  # `%d{yyyy-MM-dd HH:mm:ss,SSS} %-5p [%c{3.}] (%t) %s%e%n`: logger in brackets, thread in parentheses
        lambda t, lg, m: f"{_d(t)} INFO  [{_quarkus_logger(lg)}] (executor-thread-1) {m}",
        False,
        False,
    ),
    "tab separated": (lambda t, lg, m: f"{_d(t, '.')}\tINFO\t[main]\t{lg}\t{m}", False, False),
    "logback msg mdc": (  # `%msg %mdc%n`: the MDC map after the message
        lambda t, lg, m: (
            f"{_d(t, '.')} INFO  [main] {_abbreviated(lg)} - {m} {{traceId=4bf92f35, tenant=acme}}"
        ),
        False,
        False,
    ),
    "strimzi log4j2": (
        lambda t, lg, m: f"{_d(t)} INFO  [main] {lg.rsplit('.', 1)[-1]}:42 - {m}",
        False,
        False,
    ),
}
JSON_LAYOUTS = {
    "ecs": lambda t, lg, m: {
        "@timestamp": _iso(t).replace("+00:00", "Z"),
        "log.level": "INFO",
        "message": m,
        "process.thread.name": "main",
        "log.logger": lg,
    },  # fmt: skip
    "logstash": lambda t, lg, m: {
        "@timestamp": _iso(t, PLUS_TWO),
        "@version": "1",
        "message": m,
        "logger_name": lg,
        "thread_name": "main",
        "level": "INFO",
    },  # fmt: skip
    "gelf": lambda t, lg, m: {
        "version": "1.1",
        "host": "h",
        "short_message": m,
        "level": 6,
        "_logger": lg,
        "timestamp": float(f"{int(t.timestamp())}.{t.microsecond // 1000:03d}"),
    },  # fmt: skip
    "log4j2 jsonlayout instant": lambda t, lg, m: {
        "instant": {"epochSecond": int(t.timestamp()), "nanoOfSecond": t.microsecond * 1000},
        "thread": "main",
        "level": "INFO",
        "loggerName": lg,
        "message": m,
    },  # fmt: skip
    "log4j2 jsonlayout millis": lambda t, lg, m: {
        "timeMillis": int(t.timestamp()) * 1000 + t.microsecond // 1000,
        "level": "INFO",
        "loggerName": lg,
        "message": m,
    },  # fmt: skip
    "strimzi json": lambda t, lg, m: {
        "@timestamp": _iso(t).replace("+00:00", "Z"),
        "level": "INFO",
        "thread_name": "main",
        "@version": 1,
        "logger_name": lg,
        "message": m,
    },  # fmt: skip
}
SUFFIXES = ["", " traceId=4bf92f35 spanId=00f067aa", " {traceId=4bf92f35}", " [pool-1-thread-3]"]


def _prefixes(t: dt.datetime):
    """name -> (prefix of the first line, prefix of the next lines); stamps are the same instant."""
    nano = t.strftime("%Y-%m-%dT%H:%M:%S.") + f"{t.microsecond * 1000 + 417:09d}Z"
    syslog = f"{t:%b %d %H:%M:%S}.{t.microsecond:06d} kafka-0 java[1234]: "
    short_full = f"{t:%a %Y-%m-%d %H:%M:%S} WET kafka-0 java[1234]: "
    return {
        "none": ("", ""),
        "docker -t": (nano + " ", nano + " "),
        "cri": (nano + " stdout F ", nano + " stdout F "),
        "compose": ("kafka-1  | ", "kafka-1  | "),
        "kubectl": ("[pod/kafka-0/kafka] ", "[pod/kafka-0/kafka] "),
        "journald": (syslog, syslog),
        "journald short-full": (short_full, short_full),
        "rfc5424": (f"<14>1 {nano} kafka-0 java 1234 - - ", f"<14>1 {nano} kafka-0 java 1234 - - "),
        "nul": ("\x00" * 64, ""),
        "caret nul": ("^@" * 8, ""),
        "quoted": ("> ", "> "),
    }


def _reference_messages():
    """(side, message) of every wording whose Kafka-rendered line yields events without quarantine."""
    out = []
    for row in PATTERNS:
        if row.event is None:
            continue
        message = PREFIX[row.side] + row.example
        result = _parse(_text("log4j kafka", _at(0), LOGGER[row.side], message, "", "none"))
        if result.events and not result.quarantine:
            out.append((row.side, message))
    return out


def _at(ms_of_day: int) -> dt.datetime:
    return dt.datetime(DAY.year, DAY.month, DAY.day, tzinfo=UTC) + dt.timedelta(milliseconds=ms_of_day)


def _text(layout, t, logger, message, suffix, prefix):
    render, tail, _ = TEXT_LAYOUTS[layout]
    body = render(t, logger, message) + (suffix if tail else "")
    first, rest = _prefixes(t)[prefix]
    lines = body.split("\n")
    return [first + lines[0]] + [rest + line for line in lines[1:]]


def _json(layout, t, logger, message, prefix):
    first, _ = _prefixes(t)[prefix]
    return [first + json.dumps(JSON_LAYOUTS[layout](t, logger, message))]


def _parse(lines, **options):
    return parse_lines(lines, file="app.log", cluster="c", **options)


def _events(result) -> list[dict]:
    out = []
    for event in result.events:
        row = compact(event)
        row.pop("line")
        row["attributes"].pop("merged_lines", None)
        out.append(row)
    return out


MESSAGES = _reference_messages()


def test_the_reference_covers_every_side_and_most_wordings():
    assert {side for side, _ in MESSAGES} == {Side.COORDINATOR, Side.MEMBER}
    assert len(MESSAGES) > 0.8 * sum(1 for row in PATTERNS if row.event is not None)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.sampled_from(MESSAGES),
    st.integers(min_value=0, max_value=86_399_999),
    st.sampled_from(sorted(TEXT_LAYOUTS)),
    st.sampled_from(SUFFIXES),
    st.sampled_from(sorted(_prefixes(_at(0)))),
)
def test_a_message_in_any_text_layout_prefix_and_suffix_gives_the_same_events(
    message, ms, layout, suffix, prefix
):
    side, text = message
    t = _at(ms)
    reference = _parse(_text("log4j kafka", t, LOGGER[side], text, "", "none"))
    options = {"log_date": DAY} if TEXT_LAYOUTS[layout][2] else {}
    wrapped = _parse(_text(layout, t, LOGGER[side], text, suffix, prefix), **options)
    assert wrapped.quarantine == []
    assert _events(wrapped) == _events(reference)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.sampled_from(MESSAGES),
    st.integers(min_value=0, max_value=86_399_999),
    st.sampled_from(sorted(JSON_LAYOUTS)),
    st.sampled_from(["none", "docker -t", "cri", "compose", "kubectl", "nul"]),
)
def test_a_message_in_any_json_layout_and_prefix_gives_the_same_events(message, ms, layout, prefix):
    side, text = message
    t = _at(ms)
    reference = _parse(_text("log4j kafka", t, LOGGER[side], text, "", "none"))
    wrapped = _parse(_json(layout, t, LOGGER[side], text, prefix))
    assert wrapped.quarantine == []
    assert _events(wrapped) == _events(reference)
