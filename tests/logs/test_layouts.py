"""Line framing: heads in any layout family, prefixes, suffixes, multi-line entries, JSON records, NUL starts,
and dates (file names, --log-date, midnight, syslog years), never invented."""

from __future__ import annotations

import datetime as dt
import json

import pytest

from rebalance_core.events import parse_ts
from rebalance_core.kafka_logs import parse_lines
from rebalance_core.kafka_logs.layouts import (
    LineDates,
    LogEntry,
    LooseLine,
    file_name_date,
    parse_timestamp,
    resolve_zone,
    split_entries,
)
from tests.logs.kafka_log_fixtures import EXCERPTS, at, compact, parse_fixture, tps


def entries(*lines: str) -> list:
    return list(split_entries(lines))


def test_log4j_head_and_tail_logger():
    [e] = entries(
        "[2024-11-08 10:02:05,229] INFO [GroupCoordinator 1]: Stabilized group g (x) (kafka.coordinator.group.GroupCoordinator)"
    )
    assert (e.ts_text, e.level, e.logger) == (
        "2024-11-08 10:02:05,229",
        "INFO",
        "kafka.coordinator.group.GroupCoordinator",
    )
    assert e.message == "[GroupCoordinator 1]: Stabilized group g (x)"


def test_connect_logger_has_a_line_number_and_mdc_stays_in_the_message():
    [e] = entries(
        "[2022-03-13 13:56:49,023] INFO [http-sink|task-0] [Consumer clientId=c, groupId=g] Revoke previously "
        "assigned partitions t-0 (org.apache.kafka.clients.consumer.internals.ConsumerCoordinator:310)"
    )
    assert e.logger == "org.apache.kafka.clients.consumer.internals.ConsumerCoordinator:310"
    assert e.message.startswith("[http-sink|task-0] [Consumer")


@pytest.mark.parametrize(
    "logger",
    ["org.apache.kafka.clients.consumer.internals.AbstractCoordinator", "AbstractCoordinator", None],
)
def test_a_tail_logger_with_or_without_its_package_or_none_ends_the_message(logger):
    """log4j `%c`, `%c{1}` (a Kafka class's name alone) or a layout without the logger: the same message."""
    message = "[Consumer clientId=c, groupId=g] Successfully joined group with generation 3"
    [e] = entries(f"[2024-01-01 00:00:00,000] INFO {message}" + (f" ({logger})" if logger else ""))
    assert (e.message, e.logger) == (message, logger)
    assert [x.event_type for x in parse_lines([e.raw], file="c.log", cluster="k").events] == ["join_response"]


def test_a_cut_off_logger_suffix_leaves_the_message_alone():
    [e] = entries(
        "[2024-11-11 09:37:25,723] INFO [GroupId g] Member m new assignment state: epoch=4, previousEpoch=4, "
        "state=STABLE, assignedPartitions=[] and revokedPartitions=[]. "
    )
    assert e.logger is None and e.message.endswith("revokedPartitions=[].")


@pytest.mark.parametrize(
    "text",
    [
        "Group g with generation 2 is now empty (__consumer_offsets-31)",
        "x (reason: removing member m on LeaveGroup)",
    ],
)
def test_parentheses_that_are_not_a_logger_stay(text):
    [e] = entries(f"[2024-01-01 00:00:00,000] INFO {text}")
    assert e.message == text and e.logger is None


def test_multiline_block_with_logger_on_its_own_line():
    [e, nxt] = entries(
        "[2021-11-23 09:20:52,837] INFO [Consumer clientId=c, groupId=g] Updating assignment with",
        "        Assigned partitions:                       []",
        "        Revoked partitions (owned - assigned):     []",
        " (org.apache.kafka.clients.consumer.internals.ConsumerCoordinator)",
        "[2021-11-23 09:20:52,839] INFO next (a.B)",
    )
    assert (e.first_line, e.last_line, e.line_count) == (1, 4, 4)
    assert e.logger == "org.apache.kafka.clients.consumer.internals.ConsumerCoordinator"
    assert e.message.splitlines()[-1].strip() == "Revoked partitions (owned - assigned):     []"
    assert nxt.first_line == 5


def test_stack_trace_after_the_logger_belongs_to_the_entry():
    [e] = entries(
        "[2024-01-01 00:00:00,000] ERROR [Consumer clientId=c, groupId=g] SyncGroup failed: x (o.a.k.C)",
        "org.apache.kafka.common.errors.RebalanceInProgressException: rebalancing",
        "\tat org.apache.kafka.A.b(A.java:1)",
    )
    assert (
        e.logger == "o.a.k.C"
        and e.line_count == 3
        and e.message.startswith("[Consumer clientId=c, groupId=g] SyncGroup")
    )


def test_comments_and_text_before_the_first_head_are_loose_lines():
    items = entries(
        "# source: x", "orphan text", "[2024-01-01 00:00:00,000] INFO m (a.B)", "# between", "continued"
    )
    assert [type(i).__name__ for i in items] == ["LooseLine", "LooseLine", "LooseLine", "LogEntry"]
    assert [i.comment for i in items if isinstance(i, LooseLine)] == [True, False, True]
    assert items[-1].message == "m\ncontinued" and items[-1].logger == "a.B"


def test_logback_and_spring_boot_heads():
    [logback] = entries(
        "2026-03-16 16:52:03.531 INFO  [main] o.a.k.c.c.i.ConsumerCoordinator - [Consumer clientId=c, groupId=g] (Re-)joining group"
    )
    assert (logback.thread, logback.logger, logback.message) == (
        "main",
        "o.a.k.c.c.i.ConsumerCoordinator",
        "[Consumer clientId=c, groupId=g] (Re-)joining group",
    )
    [spring] = entries(
        "2022-10-05 18:35:04.693  INFO 3618015 --- [ntainer#0-0-C-1] o.a.k.c.c.internals.ConsumerCoordinator  : [Consumer clientId=c, groupId=g] msg"
    )
    assert (spring.thread, spring.logger, spring.message) == (
        "ntainer#0-0-C-1",
        "o.a.k.c.c.internals.ConsumerCoordinator",
        "[Consumer clientId=c, groupId=g] msg",
    )
    [spring3] = entries(
        "2024-01-01T12:00:00.123+01:00  INFO 12 --- [app] [           main] o.a.k.c.c.i.ConsumerCoordinator          : msg"
    )
    assert (spring3.thread, spring3.message, spring3.ts_text) == (
        "main",
        "msg",
        "2024-01-01T12:00:00.123+01:00",
    )


def test_iso_head_with_tail_logger():
    [e] = entries(
        "2024-01-01T12:00:00.123Z INFO [GroupCoordinator 1]: Stabilized group g generation 1 (kafka.coordinator.group.GroupCoordinator)"
    )
    assert e.logger == "kafka.coordinator.group.GroupCoordinator" and e.ts_text == "2024-01-01T12:00:00.123Z"


def test_json_lines_structured_and_docker():
    ecs = json.dumps(
        {
            "@timestamp": "2024-02-10T08:30:00.123Z",
            "log.level": "INFO",
            "message": "[Consumer clientId=c, groupId=g] (Re-)joining group",
            "log.logger": "o.a.k.X",
        }
    )
    nested = json.dumps(
        {"time": 1707553800123, "log": {"level": "INFO", "logger": "o.a.k.Y"}, "msg": "hello"}
    )
    docker_head = json.dumps(
        {
            "log": "[2024-02-10 08:40:00,000] INFO [Consumer clientId=c, groupId=g] Updating assignment with\n",
            "stream": "stdout",
            "time": "2024-02-10T08:40:00.0001Z",
        }
    )
    docker_next = json.dumps(
        {
            "log": "\tAssigned partitions:                       [t-0]\n",
            "stream": "stdout",
            "time": "2024-02-10T08:40:00.0002Z",
        }
    )
    first, second, third = entries(ecs, nested, docker_head, docker_next)
    assert (first.ts_text, first.level, first.logger, first.message) == (
        "2024-02-10T08:30:00.123Z",
        "INFO",
        "o.a.k.X",
        "[Consumer clientId=c, groupId=g] (Re-)joining group",
    )
    assert (second.ts_text, second.logger, second.message) == ("1707553800123", "o.a.k.Y", "hello")
    assert third.ts_text == "2024-02-10 08:40:00,000" and third.line_count == 2
    assert third.message.splitlines()[1].strip() == "Assigned partitions:                       [t-0]"


def test_broken_json_is_text():
    items = entries("[2024-01-01 00:00:00,000] INFO a (a.B)", '{"message": "x"', "[1, 2]")
    assert (
        len(items) == 1
        and isinstance(items[0], LogEntry)
        and items[0].message == 'a\n{"message": "x"\n[1, 2]'
    )


def test_docker_compose_prefixes_also_on_continuation_lines():
    head, nxt = entries(
        "kafka-1  | [2024-05-06 10:00:00,000] ERROR x (a.B)",
        "kafka-1  | \tat a.B.c(B.java:1)",
        "web-1    | 2024-05-06T12:00:03.010+02:00 INFO  [main] o.a.k.C - y",
    )
    assert (head.container, head.lines) == ("kafka-1", ["x (a.B)", "\tat a.B.c(B.java:1)"])
    assert (nxt.container, nxt.message) == ("web-1", "y")


def test_crlf_line_ends():
    [e] = entries("[2024-01-01 00:00:00,000] INFO a (a.B)\r\n", "b\r\n")
    assert e.lines == ["a (a.B)", "b"] and (e.message, e.logger) == ("a\nb", "a.B")


@pytest.mark.parametrize(
    ("text", "zone", "expected"),
    [
        ("2024-11-08 10:02:05,229", "UTC", "2024-11-08T10:02:05.229Z"),
        ("2024-11-08 10:02:05.229", "Europe/Paris", "2024-11-08T09:02:05.229Z"),
        ("2024-07-08 10:02:05,229", "Europe/Paris", "2024-07-08T08:02:05.229Z"),  # summer time
        ("2024-11-08 10:02:05", "-05:00", "2024-11-08T15:02:05.000Z"),
        ("2024-11-08T10:02:05.229+02:00", "UTC", "2024-11-08T08:02:05.229Z"),  # an offset wins over the zone
        ("2024-11-08T10:02:05.229123456Z", "Asia/Tokyo", "2024-11-08T10:02:05.229Z"),
        ("1731060125229", "UTC", "2024-11-08T10:02:05.229Z"),
        ("1731060125.229", "UTC", "2024-11-08T10:02:05.229Z"),
    ],
)
def test_timestamps(text, zone, expected):
    assert parse_timestamp(text, resolve_zone(zone)) == parse_ts(expected)


def test_bad_timestamp_and_zone():
    with pytest.raises(ValueError):
        parse_timestamp("2024-13-01 00:00:00,000", resolve_zone("UTC"))
    with pytest.raises(ValueError):
        resolve_zone("Mars/Olympus")


# ------------------------------------------------------------------------------------- layout families
# Each fixture renders the same scenario (a broker's or a consumer's, across midnight) in one layout family,
# as that layout's documentation defines it; all must give the events of Kafka's own log4j rendering.
# (fixture, scenario, kwargs of parse_fixture, timestamp precision of the layout)
FAMILIES = [
    ("layout_strimzi_cri_broker.log", "broker", {}, "ms"),
    ("layout_strimzi_log4j2_kubectl_broker.log", "broker", {}, "s"),
    ("layout_journald_broker.log", "broker", {}, "ms"),
    ("layout_strimzi_json_broker.jsonl", "broker", {}, "ms"),
    ("layout_copytruncate_nul_broker.log", "broker", {}, "ms"),
    ("layout_caret_nul_broker.log", "broker", {}, "ms"),
    ("layout_logback_default_client.2024-05-06.log", "client", {}, "ms"),
    ("layout_logback_default_client_undated.log", "client", {"log_date": dt.date(2024, 5, 6)}, "ms"),
    ("layout_docker_timestamps_logback_client.log", "client", {}, "ms"),
    ("layout_journald_client.2024-05-07.log", "client", {}, "ms"),
    ("layout_spring_boot3_client.log", "client", {}, "ms"),
    ("layout_log4j2_pattern_client.log", "client", {}, "ms"),
    ("layout_ecs_template_client.jsonl", "client", {}, "ms"),
    ("layout_logstash_encoder_client.jsonl", "client", {}, "ms"),
    ("layout_gelf_template_client.jsonl", "client", {}, "ms"),
    ("layout_jsonlayout_template_client.jsonl", "client", {}, "ms"),
    ("layout_jsonlayout_pretty_client.json", "client", {}, "ms"),
]


def scenario_events(result, precision: str = "ms") -> list[dict]:
    """Events without what depends on the file's physical lines (line numbers, merged line numbers)."""
    out = []
    for event in result.events:
        row = compact(event)
        row.pop("line")
        row["attributes"].pop("merged_lines", None)
        if precision == "s":
            row["ts"] = row["ts"][:19]
        out.append(row)
    return out


@pytest.mark.parametrize(("name", "scenario", "options", "precision"), FAMILIES, ids=[f[0] for f in FAMILIES])
def test_every_layout_family_gives_the_events_of_kafkas_own_layout(name, scenario, options, precision):
    reference = parse_fixture(EXCERPTS / f"layout_log4j_kafka_{scenario}.log")
    result = parse_fixture(EXCERPTS / name, **options)
    assert result.quarantine == []
    assert scenario_events(result, precision) == scenario_events(reference, precision)
    assert result.counts.events == reference.counts.events


def test_strimzi_line_from_the_issue():
    [e] = entries(
        "2021-05-04 16:41:31,006 INFO [GroupCoordinator 0]: Member m in group g has failed, removing it from the group "
        "(kafka.coordinator.group.GroupCoordinator) [executor-Heartbeat]"
    )
    assert (e.ts_text, e.ts_kind, e.level, e.logger) == (
        "2021-05-04 16:41:31,006",
        "datetime",
        "INFO",
        "kafka.coordinator.group.GroupCoordinator",
    )
    assert e.message == "[GroupCoordinator 0]: Member m in group g has failed, removing it from the group"


# (prefix of the head line, prefix of its continuation line)
PREFIXES = [
    ("2021-05-04T16:41:31.006683114Z ", "2021-05-04T16:41:31.006683115Z "),  # docker logs -t
    ("2021-05-04T16:41:31.006683114Z stdout F ", "2021-05-04T16:41:31.006683115Z stdout F "),  # CRI
    ("2021-05-04T16:41:31.006683114+00:00 stderr F ", "2021-05-04T16:41:31.006683115+00:00 stderr F "),
    ("kafka-1  | ", "kafka-1  | "),  # docker compose logs
    ("[pod/my-cluster-kafka-0/kafka] ", "[pod/my-cluster-kafka-0/kafka] "),  # kubectl logs --prefix
    (
        "May  4 16:41:31 kafka-0 kafka-server-start.sh[1234]: ",
        "May  4 16:41:31 kafka-0 kafka-server-start.sh[1234]: ",
    ),
    (
        "May 04 16:41:31.006683 kafka-0 kafka[1234]: ",
        "May 04 16:41:31.006690 kafka-0 kafka[1234]: ",
    ),  # short-precise
    (
        "2021-05-04T16:41:31+0000 kafka-0 kafka[1234]: ",
        "2021-05-04T16:41:31+0000 kafka-0 kafka[1234]: ",
    ),  # short-iso
    (
        "Tue 2021-05-04 16:41:31 UTC kafka-0 kafka[1234]: ",
        "Tue 2021-05-04 16:41:31 UTC kafka-0 kafka[1234]: ",
    ),
    (
        "<13>May  4 16:41:31 kafka-0 kafka: ",
        "<13>May  4 16:41:31 kafka-0 kafka: ",
    ),  # RFC 3164 with a priority
    (
        "<165>1 2021-05-04T16:41:31.006Z kafka-0 kafka 1234 - - ",
        "<165>1 2021-05-04T16:41:31.007Z kafka-0 kafka 1234 - - ",
    ),
    ("\x00\x00\x00", ""),  # copytruncate hole before the first line written after the rotation
    ("^@^@^@^@", ""),  # its caret rendering in a paste
    ("> ", "> "),  # a quoted paste (an unknown prefix)
    ("    ", ""),  # indented paste
]


@pytest.mark.parametrize(("prefix", "continued"), PREFIXES)
def test_prefixes_are_peeled_and_the_applications_time_wins(prefix, continued):
    head = "[2021-05-04 16:41:31,006] INFO [GroupCoordinator 0]: Stabilized group g generation 1 (k.G)"
    [e] = entries(prefix + head, continued + "\tat a.B.c(B.java:1)")
    assert (e.ts_text, e.logger, e.line_count) == ("2021-05-04 16:41:31,006", "k.G", 2)
    assert e.message == "[GroupCoordinator 0]: Stabilized group g generation 1\n\tat a.B.c(B.java:1)"


def test_logback_default_line_from_the_issue_is_time_only():
    [e] = entries(
        "20:06:22.567 [consumer-thread-1] INFO  o.a.k.c.c.i.ConsumerCoordinator - [Consumer clientId=c-1, groupId=g] (Re-)joining group"
    )
    assert (e.ts_text, e.ts_kind, e.date, e.thread, e.logger) == (
        "20:06:22.567",
        "time",
        None,
        "consumer-thread-1",
        "o.a.k.c.c.i.ConsumerCoordinator",
    )
    assert e.message == "[Consumer clientId=c-1, groupId=g] (Re-)joining group"


def test_a_time_only_stamp_under_a_dated_runtime_stamp_takes_the_dated_one():
    [e] = entries("2021-05-04T16:41:31.006683114Z stdout F 16:41:31.006 [main] INFO o.a.k.X - m")
    assert (e.ts_text, e.ts_kind) == ("2021-05-04T16:41:31.006683114Z", "datetime")


@pytest.mark.parametrize(
    "head",
    [
        "INFO  [2024-01-01 12:00:00,000] m (a.B)",  # level before the stamp
        "[INFO] 2024-01-01 12:00:00.000 [main] a.B - m",
        "2024-01-01 12:00:00,000 [main] INFO  a.B - m",  # log4j2 `%d [%t] %-5level %logger{36} - %msg`
        "2024-01-01 12:00:00 INFO  [main] B:42 - m",  # log4j2 `%c{1}:%L - ` (Strimzi 4.x)
        "2024-01-01 12:00:00,000 INFO  [main] internals.B (B.java:12) - m",  # `%C{2} (%F:%L) - `
        "02 Jan 2024 12:00:00,000 INFO m (a.B)",  # log4j %d{DATE}
        "2024/01/01 12:00:00 INFO m (a.B)",
        "2024-01-01T12:00:00,000+0100 INFO m (a.B) traceId=abc spanId=def",  # MDC after the logger
        "2024-01-01T12:00:00.000Z INFO m (a.B) {traceId=abc, spanId=def}",  # log4j2 %X
        "2024-01-01 12:00:00,000 INFO m (a.B:12) [pool-1-thread-1]",
    ],
)
def test_envelope_tokens_in_any_order(head):
    [e] = entries(head)
    assert e.message == "m" and e.level == "INFO" and e.ts_text is not None
    assert e.logger in ("a.B", "a.B:12", "B", "internals.B")


def test_nul_started_line_is_its_own_entry_not_the_tail_of_the_one_above():
    first, second = entries(
        "[2024-01-01 00:00:00,000] INFO a (a.B)", "\x00" * 500 + "[2024-01-01 00:00:01,000] INFO b (a.B)"
    )
    assert (first.message, second.message, second.raw) == ("a", "b", "[2024-01-01 00:00:01,000] INFO b (a.B)")
    first, second = entries(
        "[2024-01-01 00:00:00,000] INFO a (a.B)", "^@^@^@[2024-01-01 00:00:01,000] INFO b (a.B)"
    )
    assert second.message == "b" and second.first_line == 2


def test_cri_partial_records_are_joined():
    [e] = entries(
        "2024-01-01T00:00:00.000000001Z stdout P [2024-01-01 00:00:00,000] INFO [Consumer clientId=c, group",
        "2024-01-01T00:00:00.000000002Z stdout F Id=g] (Re-)joining group (o.a.k.C)",
    )
    assert (e.first_line, e.last_line, e.line_count) == (1, 2, 2)
    assert (e.message, e.logger) == ("[Consumer clientId=c, groupId=g] (Re-)joining group", "o.a.k.C")


def test_docker_json_partial_records_are_joined():
    part = json.dumps(
        {
            "log": "[2024-01-01 00:00:00,000] INFO [Consumer clientId=c, gro",
            "stream": "stdout",
            "time": "2024-01-01T00:00:00.1Z",
        }
    )
    rest = json.dumps(
        {
            "log": "upId=g] (Re-)joining group (o.a.k.C)\n",
            "stream": "stdout",
            "time": "2024-01-01T00:00:00.1Z",
        }
    )
    [e] = entries(part, rest)
    assert e.message == "[Consumer clientId=c, groupId=g] (Re-)joining group" and e.line_count == 2


def test_an_unknown_prefix_is_found_and_removed_from_continuation_lines():
    first, second = entries(
        "12| [2024-01-01 00:00:00,000] INFO [Consumer clientId=c, groupId=g] Updating assignment with",
        "12| \tAssigned partitions: []",
        "12|  (o.a.k.C)",
        "13| [2024-01-01 00:00:01,000] INFO next (a.B)",
    )
    assert first.lines == [
        "[Consumer clientId=c, groupId=g] Updating assignment with",
        "\tAssigned partitions: []",
        " (o.a.k.C)",
    ]
    assert (first.logger, second.message, second.first_line) == ("o.a.k.C", "next", 4)


def test_a_kafka_prefixed_line_without_timestamp_is_an_entry_without_one():
    first, second = entries(
        "[2024-01-01 00:00:00,000] INFO a (a.B)", "[Consumer clientId=c, groupId=g] (Re-)joining group"
    )
    assert (second.ts_text, second.message) == (None, "[Consumer clientId=c, groupId=g] (Re-)joining group")


def test_json_records_of_each_family():
    gelf, instant, millis, logstash, journald = entries(
        json.dumps(
            {
                "version": "1.1",
                "short_message": "m1",
                "timestamp": 1704067200.123,
                "level": 6,
                "_logger": "a.B",
            }
        ),
        json.dumps(
            {
                "instant": {"epochSecond": 1704067200, "nanoOfSecond": 123456789},
                "level": "INFO",
                "loggerName": "a.B",
                "message": "m2",
            }
        ),
        json.dumps(
            {
                "timeMillis": 1704067200123,
                "thread": "main",
                "level": "INFO",
                "loggerName": "a.B",
                "message": "m3",
            }
        ),
        json.dumps(
            {
                "@timestamp": "2024-01-01T01:00:00.123+01:00",
                "@version": "1",
                "message": "m4",
                "logger_name": "a.B",
                "level": "INFO",
            }
        ),
        json.dumps(
            {
                "__REALTIME_TIMESTAMP": "1704067200123456",
                "PRIORITY": "6",
                "MESSAGE": "[2024-01-01 00:00:00,123] INFO m5 (a.B)",
            }
        ),
    )
    utc = resolve_zone("UTC")
    for entry, message in ((gelf, "m1"), (instant, "m2"), (millis, "m3"), (logstash, "m4"), (journald, "m5")):
        assert entry.message == message and entry.logger == "a.B"
        assert parse_timestamp(entry.ts_text, utc) == parse_ts("2024-01-01T00:00:00.123Z")


# ----------------------------------------------------------------------------------------------- dates
@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("app.2024-05-06.log", "2024-05-06"),  # logback TimeBasedRollingPolicy
        ("app-2024-05-06.0.log.gz", "2024-05-06"),  # log4j2 `%d{yyyy-MM-dd}-%i.log.gz`
        ("/var/log/kafka/server.log.2024-05-06-13", "2024-05-06"),  # log4j 1 DailyRollingFileAppender, hourly
        ("server.log.2024-05-06", "2024-05-06"),
        ("messages-20240506", "2024-05-06"),  # logrotate dateext
        ("0.log.20240506-134501", "2024-05-06"),  # kubelet's rotated container log
        ("logs/2024-01-01/server.log", None),  # only the file's own name counts
        ("server.log", None),
        ("app.2024-13-45.log", None),
    ],
)
def test_date_in_the_file_name(name, expected):
    assert file_name_date(name) == (dt.date.fromisoformat(expected) if expected else None)


def test_time_only_lines_roll_past_midnight_and_a_late_line_stays_on_its_day():
    dates = LineDates(dt.date(2024, 5, 6))
    days = [
        dates.date_of_time(t)
        for t in ("23:59:58.000", "23:59:59.990", "00:00:00.100", "23:59:59.995", "00:00:01.000")
    ]
    assert [d.day for d in days] == [6, 6, 7, 6, 7]
    assert LineDates(None).date_of_time("12:00:00.000") is None


def parse_text(lines, **options):
    return parse_lines(lines, file=options.pop("file", "app.log"), cluster="c", **options)


JOINING = "[Consumer clientId=c, groupId=g] (Re-)joining group"


def test_time_only_group_line_without_a_date_is_quarantined_with_the_reason():
    result = parse_text([f"20:06:22.567 [main] INFO  o.a.k.c.c.i.ConsumerCoordinator - {JOINING}"])
    [row] = result.quarantine
    assert result.events == [] and row.ts is None
    assert "without a date" in row.reason and "--log-date" in row.reason and "file name" in row.reason


@pytest.mark.parametrize(
    ("options", "expected"),
    [
        ({"file": "app.2024-05-06.log"}, "2024-05-06T20:06:22.567Z"),
        ({"log_date": dt.date(2024, 5, 7)}, "2024-05-07T20:06:22.567Z"),
        (
            {"file": "app.2024-05-06.log", "log_date": dt.date(2024, 5, 7)},
            "2024-05-06T20:06:22.567Z",
        ),  # name wins
        ({"log_date": "2024-05-07", "tz": "Europe/Paris"}, "2024-05-07T18:06:22.567Z"),
    ],
)
def test_time_only_lines_take_the_file_name_date_else_the_given_one(options, expected):
    [event] = parse_text(
        [f"20:06:22.567 [main] INFO  o.a.k.c.c.i.ConsumerCoordinator - {JOINING}"], **options
    ).events
    assert at(event.ts) == expected


def test_a_time_only_file_past_midnight_dates_its_events_on_the_next_day():
    lines = [
        f"23:59:59.900 [main] INFO  o.a.k.c.c.i.ConsumerCoordinator - {JOINING}",
        f"00:00:00.100 [main] INFO  o.a.k.c.c.i.ConsumerCoordinator - {JOINING}",
    ]
    events = parse_text(lines, file="app.2024-12-31.log").events
    assert [at(e.ts) for e in events] == ["2024-12-31T23:59:59.900Z", "2025-01-01T00:00:00.100Z"]


def test_syslog_year_comes_from_the_file_date_else_the_line_is_quarantined():
    line = f"Dec 31 23:59:59.900123 host java[1]: INFO  o.a.k.c.c.i.ConsumerCoordinator - {JOINING}"
    [event] = parse_text([line], file="payments.2025-01-01.log").events
    assert at(event.ts) == "2024-12-31T23:59:59.900Z"  # the year nearest the file's date
    [row] = parse_text([line]).quarantine
    assert "without a year" in row.reason


def test_a_group_line_without_any_timestamp_is_quarantined_as_such():
    result = parse_text(
        ["[2024-01-01 00:00:00,000] INFO a (a.B)", JOINING, "Successfully joined group g1 with generation 3"]
    )
    assert [(q.line, q.reason) for q in result.quarantine] == [(2, "no timestamp")]
    result = parse_text(["Successfully joined group g1 with generation 3", JOINING])
    assert [(q.line, q.reason) for q in result.quarantine] == [(1, "no timestamp"), (2, "no timestamp")]


@pytest.mark.parametrize(
    "suffix", [" [main]", " traceId=4bf92f35 spanId=00f067aa", " {traceId=4bf92f35}", " [main] tenant=a"]
)
def test_a_layout_suffix_after_a_logger_first_message_is_not_part_of_it(suffix):
    lines = [
        f"2024-01-01 00:00:00.000 INFO  [main] o.a.k.c.c.i.ConsumerRebalanceListenerInvoker - "
        f"[Consumer clientId=c, groupId=g] Adding newly assigned partitions: t-0, t-1{suffix}",
        f"2024-01-01 00:00:00.001 INFO  [main] o.a.k.c.c.i.ConsumerCoordinator - [Consumer clientId=c, groupId=g] "
        f"Successfully joined group with generation Generation{{generationId=3, memberId='c-1', protocol='range'}}{suffix}",
    ]
    assigned, joined = parse_text(lines).events
    assert tps(assigned) == ["t-0", "t-1"] and joined.generation_id == 3 and joined.protocol_name == "range"


@pytest.mark.parametrize("esc", ["\x1b", "^[", ""], ids=["esc", "caret", "pasted without esc"])
def test_ansi_colour_codes_around_the_envelope_are_not_part_of_it(esc):
    line = (
        f"{esc}[2m2024-03-10 23:59:58.203{esc}[0;39m {esc}[32m INFO{esc}[0;39m {esc}[35m48213{esc}[0;39m {esc}[2m---{esc}[0;39m "
        f"{esc}[2m[ntainer#0-0-C-1]{esc}[0;39m {esc}[36mo.a.k.c.c.internals.ConsumerCoordinator {esc}[0;39m {esc}[2m:{esc}[0;39m "
        "[Consumer clientId=c, groupId=g] (Re-)joining group"
    )
    [entry] = entries(line)
    assert (entry.ts_text, entry.level, entry.logger) == (
        "2024-03-10 23:59:58.203",
        "INFO",
        "o.a.k.c.c.internals.ConsumerCoordinator",
    )
    assert (
        entry.thread == "ntainer#0-0-C-1"
        and entry.message == "[Consumer clientId=c, groupId=g] (Re-)joining group"
    )


@pytest.mark.parametrize(
    "message",
    ["[Consumer clientId=c, groupId=g] (Re-)joining group", "(Re-)joining group g"],
)
def test_a_tab_ends_the_logger_of_a_tab_separated_layout(message):
    logger = "org.apache.kafka.clients.consumer.internals.AbstractCoordinator"
    [entry] = entries(f"2024-03-10 23:59:58.000\tINFO\t[main]\t{logger}\t{message}")
    assert (entry.level, entry.thread, entry.logger, entry.message) == ("INFO", "main", logger, message)


def test_a_logger_followed_by_kafkas_prefix_without_a_separator_ends_the_envelope():
    [entry] = entries(
        "2024-03-10 23:59:58,000 INFO ConsumerCoordinator [Consumer clientId=c, groupId=g] (Re-)joining group"
    )
    assert entry.logger == "ConsumerCoordinator" and entry.message.startswith("[Consumer clientId=c")


def test_connects_context_in_the_layouts_own_brackets_is_the_message():
    # connect-log4j `[%d] %p [%X{connector.context}]%m (%c:%L)%n`: `[]` without a context
    worker, task = parse_text(
        [
            "[2024-03-10 23:59:59,101] INFO [][Worker clientId=connect-1, groupId=cc] (Re-)joining group "
            "(org.apache.kafka.connect.runtime.distributed.WorkerCoordinator:237)",
            "[2024-03-11 00:00:00,300] INFO [[s3-sink|task-0] ][Consumer clientId=connector-consumer-s3-sink-0, "
            "groupId=connect-s3-sink] (Re-)joining group (org.apache.kafka.clients.consumer.internals.ConsumerCoordinator:566)",
        ]
    ).events
    assert (worker.group_id, worker.event_type, task.group_id, task.event_type) == (
        "cc",
        "join_sent",
        "connect-s3-sink",
        "join_sent",
    )


def test_an_mdc_map_after_a_logger_first_message_is_neither_the_group_nor_part_of_the_reason():
    prefix = "2024-01-01 00:00:00.000 [main] INFO  o.a.k.c.c.i.ConsumerCoordinator - [Consumer clientId=c, groupId=g] "
    requested, joining = parse_text(
        [
            prefix + "Request joining group due to: group is already rebalancing {app=wc, env=prod}",
            prefix + "(Re-)joining group {app=wc, env=prod}",
        ]
    ).events
    assert requested.reason == "group is already rebalancing"
    assert (joining.group_id, joining.event_type) == ("g", "join_sent")


def test_a_leaders_assignment_map_at_the_end_of_the_message_is_kept():
    [computed] = parse_text(
        [
            "2024-01-01 00:00:00.000 [main] INFO  o.a.k.c.c.i.ConsumerCoordinator - [Consumer clientId=c, groupId=g] "
            "Finished assignment for group at generation 3: {c-1=Assignment(partitions=[t-0, t-1])}"
        ]
    ).events
    assert {m: [f"{p.topic}-{p.partition}" for p in ps] for m, ps in computed.assignment.items()} == {
        "c-1": ["t-0", "t-1"]
    }


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        (  # journald short-iso around logback's default: the same second, the application's milliseconds
            "2024-03-10T23:59:59+0100 app01 java[991]: 23:59:59.100 [main] INFO  o.a.k.X - m",
            "2024-03-10T23:59:59.100+0100",
        ),
        ("Mar 10 23:59:59 app01 java[991]: 23:59:59.100 [main] INFO  o.a.k.X - m", "Mar 10 23:59:59.100"),
        (  # another second (another zone, or a slow logger): the dated stamp alone
            "2024-03-10T23:59:59+0100 app01 java[991]: 22:59:59.100 [main] INFO  o.a.k.X - m",
            "2024-03-10T23:59:59+0100",
        ),
    ],
)
def test_a_dated_stamp_to_the_second_takes_the_milliseconds_of_the_same_time_inside_it(line, expected):
    [e] = entries(line)
    assert e.ts_text == expected


def test_quarkus_logger_in_brackets_and_thread_in_parentheses():
    [e] = entries(
        "2024-03-10 23:59:59,101 INFO  [org.apa.kaf.cli.con.int.ConsumerCoordinator] (vert.x-kafka-consumer-thread-0) "
        "[Consumer clientId=c, groupId=g] (Re-)joining group"
    )
    assert (e.logger, e.thread, e.message) == (
        "org.apa.kaf.cli.con.int.ConsumerCoordinator",
        "vert.x-kafka-consumer-thread-0",
        "[Consumer clientId=c, groupId=g] (Re-)joining group",
    )


def test_journald_short_full_with_a_zone_abbreviation_is_peeled_and_the_applications_stamp_wins():
    [e] = entries(
        "Sun 2024-03-10 23:59:59 CET kafka01 kafka-server-start.sh[1500]: [2024-03-10 23:59:59,999] INFO "
        "[GroupCoordinator 3]: Stabilized group z generation 1 (__consumer_offsets-1) with 1 members "
        "(kafka.coordinator.group.GroupCoordinator)"
    )
    assert (e.ts_text, e.logger) == ("2024-03-10 23:59:59,999", "kafka.coordinator.group.GroupCoordinator")
