"""Line envelopes: heads, multi-line entries, loggers, comments, JSON lines, compose prefixes, time zones."""

from __future__ import annotations

import json

import pytest

from rebalance_core.events import parse_ts
from rebalance_core.kafka_logs.layouts import (
    LogEntry,
    LooseLine,
    parse_timestamp,
    resolve_zone,
    split_entries,
)


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
