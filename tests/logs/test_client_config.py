"""A client's config dump (AbstractConfig.logAll: `ConsumerConfig values: ` / Connect's `DistributedConfig
values: ` then one `\\tkey = value` line per setting, keys sorted, the same from 0.10 to 4.x) is one
`client_config` event per client in a group; a dump without a group.id is no group's; the Spark reader's
line prefilter keeps the dump although its lines carry no group word."""

from __future__ import annotations

import pytest

from jobs.log_source import kept_lines, line_kind
from rebalance_core.kafka_logs import parse_lines
from tests.builders import CONSUMER_CONFIG, config_dump, consumer_2x, consumer_3x


def parse(lines: list[str]):
    result = parse_lines(lines, file="app.log", cluster="k")
    assert not result.quarantine, result.quarantine
    assert result.counts.read == len(lines)
    return result


def only_config(lines: list[str]):
    (event,) = [e for e in parse(lines).events if e.event_type == "client_config"]
    return event


def test_a_2x_consumer_dump_gives_its_group_settings():
    e = only_config(config_dump("2020-01-01 10:00:00,000", "ConsumerConfig", consumer_2x()))
    assert (e.group_id, e.client_id, e.group_instance_id, e.side) == ("g1", "c-1", None, "member")
    assert (e.protocol_type, e.protocol_name) == ("consumer", "roundrobin")
    attrs = e.attributes
    assert (attrs["session_timeout_ms"], attrs["heartbeat_interval_ms"]) == ("10000", "3000")
    # ConsumerCoordinator sends max.poll.interval.ms as the JoinGroup's rebalance timeout
    assert attrs["rebalance_timeout_ms"] == attrs["max_poll_interval_ms"] == "300000"
    assert (attrs["assignors"], attrs["rebalance_protocol"]) == ("roundrobin", "eager")
    assert "group_protocol" not in attrs  # before 3.7 there is no such setting: classic


def test_a_3x_consumer_dump_gives_static_id_group_protocol_and_every_offered_assignor():
    e = only_config(config_dump("2024-06-01 10:00:00,000", "ConsumerConfig", consumer_3x()))
    assert (e.group_instance_id, e.protocol_name) == ("i-1", "range")
    # the default list: range first; eager, since RangeAssignor supports no COOPERATIVE (ConsumerCoordinator)
    attrs = e.attributes
    assert (attrs["assignors"], attrs["rebalance_protocol"]) == ("range,cooperative-sticky", "eager")
    assert attrs["group_protocol"] == "classic" and "remote_assignor" not in attrs


def test_a_consumer_protocol_dump_marks_the_group_kip848():
    e = only_config(
        config_dump(
            "2024-06-01 10:00:00,000", "ConsumerConfig", consumer_3x(**{"group.protocol": "CONSUMER"})
        )
    )
    assert e.attributes["group_protocol"] == "consumer"


def test_a_connect_worker_dump_gives_its_protocols_and_scheduled_delay():
    settings = {
        "client.id": "",
        "connect.protocol": "sessioned",
        "group.id": "connect-cluster",
        "heartbeat.interval.ms": "3000",
        "rebalance.timeout.ms": "60000",
        "scheduled.rebalance.max.delay.ms": "300000",
        "session.timeout.ms": "10000",
    }
    lines = config_dump(
        "2024-06-01 10:00:00,000",
        "DistributedConfig",
        settings,
        logger="org.apache.kafka.connect.runtime.distributed.DistributedConfig",
    )
    e = only_config(lines)
    assert (e.group_id, e.protocol_type, e.protocol_name) == ("connect-cluster", "connect", "sessioned")
    attrs = e.attributes
    assert attrs["assignors"] == "sessioned,compatible,default"  # WorkerCoordinator.metadata's order
    assert (attrs["rebalance_timeout_ms"], attrs["scheduled_rebalance_max_delay_ms"]) == ("60000", "300000")


CONNECT_WORKER = {
    "client.id": "",
    "connect.protocol": "sessioned",
    "group.id": "connect-cluster",
    "rebalance.timeout.ms": "60000",
    "session.timeout.ms": "12000",
}


@pytest.mark.parametrize(
    ("config_class", "settings", "logger"),
    [
        ("ConsumerConfig", consumer_3x(**{"session.timeout.ms": "12000"}), logger)
        for logger in (
            CONSUMER_CONFIG,  # log4j `%c`, up to 3.9
            "ConsumerConfig",  # `%c{1}`
            "org.apache.kafka.common.config.AbstractConfig",  # 4.0+ (KAFKA-17185)
            "AbstractConfig",
            None,  # a layout without the logger
        )
    ]
    + [
        ("DistributedConfig", CONNECT_WORKER, logger)
        for logger in (
            "org.apache.kafka.connect.runtime.distributed.DistributedConfig:376",  # Connect's `%c:%L`
            "DistributedConfig:376",
            "DistributedConfig",
            "AbstractConfig",
            None,
        )
    ],
)
def test_a_dump_reads_its_last_setting_whatever_form_of_logger_follows_it(config_class, settings, logger):
    """The logger ends the dump's last `key = value` line; with or without its package it is no part of
    the value."""
    e = only_config(config_dump("2024-06-01 10:00:00,000", config_class, settings, logger=logger))
    assert (e.group_id, e.attributes["session_timeout_ms"]) == (settings["group.id"], "12000")


@pytest.mark.parametrize("group_id", ["null", ""])
def test_a_dump_of_a_client_in_no_group_is_skipped_as_not_about_groups(group_id):
    lines = config_dump("2024-06-01 10:00:00,000", "ConsumerConfig", consumer_3x(group_id=group_id))
    result = parse(lines)
    assert not result.events and result.counts.skipped_by_reason == {"not_group": len(lines)}


def test_a_producer_dump_is_not_about_groups():
    lines = config_dump("2024-06-01 10:00:00,000", "ProducerConfig", {"acks": "all", "client.id": "p-1"})
    result = parse(lines)
    assert not result.events and result.counts.skipped == len(lines)


def test_a_dump_without_client_id_belongs_to_the_next_client_the_file_shows_first():
    """1.x-3.x generate `consumer-{group}-{n}` after the config was logged: the dump's client is the next
    new client id of its group in the file (client_id_from = next_client)."""
    prefix = "[Consumer clientId=consumer-g1-1, groupId=g1]"
    lines = [
        *config_dump("2020-01-01 10:00:00,000", "ConsumerConfig", consumer_2x(client_id="")),
        f"[2020-01-01 10:00:00,100] INFO {prefix} (Re-)joining group "
        "(org.apache.kafka.clients.consumer.internals.AbstractCoordinator)",
    ]
    e = only_config(lines)
    assert (e.client_id, e.attributes["client_id_from"]) == ("consumer-g1-1", "next_client")


def test_a_logback_dump_with_the_short_logger_parses():
    lines = [
        "10:00:00.000 [main] INFO  ConsumerConfig - ConsumerConfig values: ",
        *[f"\t{k} = {v}" for k, v in sorted(consumer_2x().items())],
    ]
    result = parse_lines(lines, file="app.2020-01-01.log", cluster="k")
    assert not result.quarantine
    assert [e.event_type for e in result.events] == ["client_config"]


def test_the_line_prefilter_keeps_the_whole_dump():
    """Spark's reader drops an entry whose head has no group word; a dump's head has none, and its
    `\\tkey = value` lines are continuations that follow their head's fate."""
    lines = [
        "[2024-06-01 09:59:59,000] INFO Kafka version: 3.7.0 (org.apache.kafka.common.utils.AppInfoParser)",
        *config_dump("2024-06-01 10:00:00,000", "ConsumerConfig", consumer_3x()),
    ]
    assert list(kept_lines(line_kind(line) for line in lines)) == [False] + [True] * (len(lines) - 1)


def test_an_unsorted_0_10_0_dump_behind_a_compose_prefix_with_spaces_for_tabs_parses():
    """0.10.0 printed the settings unsorted (AbstractConfig.logAll over a HashMap; TreeMap from 0.10.1);
    docker compose prefixes every line; a log shipper may turn the tab into spaces."""
    lines = [
        "connect_1  | [2017-04-14 15:23:36,987] INFO ConsumerConfig values: ",
        "connect_1  |         session.timeout.ms = 30000",
        "connect_1  |         group.id = connect-sink (org.apache.kafka.clients.consumer.ConsumerConfig:178)",
    ]
    e = only_config(lines)
    assert (e.group_id, e.attributes["session_timeout_ms"]) == ("connect-sink", "30000")


def test_a_new_dump_is_a_new_process_whose_lines_get_no_member_id_of_the_one_before():
    """1.0-2.6 print no member id in "Successfully joined group with generation N": the parser carries the
    client's id from its earlier lines, never across a restart, which the config dump shows."""
    prefix = "[Consumer clientId=c-1, groupId=g1]"
    logger = "(org.apache.kafka.clients.consumer.internals.AbstractCoordinator)"
    old = "c-1-0eec4c23-8ca2-4a89-becc-9a2b139de9f9"
    lines = [
        f"[2020-01-01 10:00:00,000] INFO {prefix} Successfully joined group with generation 4 {logger}",
        f"[2020-01-01 10:00:00,010] INFO {prefix} Finished assignment for group at generation 4: "
        f"{{{old}=Assignment(partitions=[t1-0])}} {logger}",
        # the process dies without a LeaveGroup; a new one starts
        *config_dump("2020-01-01 10:05:00,000", "ConsumerConfig", consumer_2x()),
        f"[2020-01-01 10:05:01,000] INFO {prefix} (Re-)joining group {logger}",
        f"[2020-01-01 10:05:02,000] INFO {prefix} Successfully joined group with generation 5 {logger}",
    ]
    joined = [e for e in parse(lines).events if e.event_type == "join_response"]
    assert [(e.generation_id, e.member_id) for e in joined] == [(4, old), (5, None)]
