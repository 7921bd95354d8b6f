"""A simulated classic consumer logs its config at construction, as KafkaConsumer does (AbstractConfig.logAll,
"ConsumerConfig values:"), once per process: a log that shows it states each member's session.timeout.ms,
which dates a silent failure (the coordinator's removal minus it), so the broker's and the clients' logs
together replay a crashed member's stop exactly."""

from __future__ import annotations

import pytest

from rebalance_core.events import Event
from rebalance_core.kafka_logs import parse_lines
from rebalance_core.kafka_logs.writer import KafkaLogWriter
from rebalance_core.kafka_logs.writer_lines import BROKER, CLIENT
from rebalance_core.replay import replay
from rebalance_core.replay_common import ReplaySettings
from rebalance_core.simulate import SimulationSettings, simulate
from rebalance_core.timeline import Crash, Join, Restart, Timeline
from schemas.events import EventType

S = 1_000


def _crash_history(assignor: str):
    timeline = Timeline(
        topics={"t": 4},
        actions=(Join(0, "c1"), Join(0, "c2"), Restart(30 * S, "c1", down_ms=5 * S), Crash(60 * S, "c2")),
        group_id="g1",
        start_ms=1_704_067_200_000,
    )
    settings = SimulationSettings(assignor=assignor, session_timeout_ms=12_000, heartbeat_interval_ms=2_000)
    return simulate(timeline, settings)


def _parsed(events, streams, client_era="3.x"):
    lines = KafkaLogWriter(consumer_protocol=False, broker_era="3.x", client_era=client_era).write_all(events)
    text = [part for line in lines if line.stream in streams for part in line.text.split("\n")]
    result = parse_lines(text, file="all.log", cluster="sim")
    assert not result.quarantine, result.quarantine[:3]
    return result.events


@pytest.mark.parametrize("client_era", ["2.x", "3.x", "4.x"])
def test_each_consumer_process_logs_its_config_once_with_its_session_timeout(client_era):
    result = _crash_history("range")
    configs = [e for e in _parsed(result.events, {CLIENT}, client_era) if e.event_type == "client_config"]
    # c1 twice (its restart constructs a new consumer), c2 once
    assert sorted(e.client_id for e in configs) == ["c1", "c1", "c2"]
    assert {e.attributes["session_timeout_ms"] for e in configs} == {"12000"}
    assert {e.protocol_name for e in configs} == {"range"}
    assert {e.attributes["rebalance_protocol"] for e in configs} == {"eager"}


@pytest.mark.parametrize("assignor", ["range", "cooperative-sticky"])
def test_both_logs_date_a_crashed_members_stop_by_its_logged_session_timeout(assignor):
    """GroupCoordinator removes the member session.timeout.ms after its last heartbeat; the 3.x removal line
    does not print the timeout, the member's config dump does: the replay's stop is the truth's."""
    result = _crash_history(assignor)
    truth = {
        (m["from_member_id"], m["topic"], m["partition"]): m["revoked_at"]
        for m in result.truth["partition_movements"]
        if m["stop_cause"] == "member_failed"
    }
    assert truth
    out = replay(_parsed(result.events, {BROKER, CLIENT}), ReplaySettings())
    replayed = {
        (m["from_member_id"], m["topic"], m["partition"]): m["revoked_at"]
        for m in out["partition_movements"]
        if (m["from_member_id"], m["topic"], m["partition"]) in truth
    }
    assert replayed == truth


def test_the_config_event_is_a_member_event_before_its_first_join():
    events = _crash_history("range").events
    first = {}
    for e in events:
        if e.side == "member" and e.client_id not in first:
            first[e.client_id] = e.event_type
    assert first == {"c1": EventType.CLIENT_CONFIG.value, "c2": EventType.CLIENT_CONFIG.value}


@pytest.mark.parametrize(
    ("client_era", "logger"),
    [
        ("2.x", "org.apache.kafka.clients.consumer.ConsumerConfig"),
        ("3.x", "org.apache.kafka.clients.consumer.ConsumerConfig"),  # 3.9: getLogger(getClass())
        ("4.x", "org.apache.kafka.common.config.AbstractConfig"),  # KAFKA-17185: one static logger
    ],
)
def test_the_consumer_config_dump_is_logged_by_abstract_configs_logger_of_its_era(client_era, logger):
    """AbstractConfig.logAll logs through AbstractConfig's `log`: up to 3.9 an instance field made by
    getLogger(getClass()) (the ConsumerConfig logger), from 4.0 a static getLogger(AbstractConfig.class).
    The parser reads the dump under either."""
    lines = KafkaLogWriter(consumer_protocol=False, broker_era="3.x", client_era=client_era).write_all(
        _crash_history("range").events
    )
    dumps = [line.text for line in lines if line.stream == CLIENT and "ConsumerConfig values:" in line.text]
    assert dumps and all(text.endswith(f"({logger})") for text in dumps)
    text = [part for dump in dumps for part in dump.split("\n")]
    result = parse_lines(text, file="client.log", cluster="sim")
    assert [e.event_type for e in result.events] == [EventType.CLIENT_CONFIG.value] * len(dumps)


@pytest.mark.parametrize(
    ("client_era", "logger"),
    [
        ("3.x", "org.apache.kafka.clients.consumer.ConsumerConfig"),
        ("4.x", "org.apache.kafka.common.config.AbstractConfig"),  # KAFKA-17185
    ],
)
def test_a_kip848_consumers_config_dump_says_group_protocol_consumer_and_its_max_poll_interval(
    client_era, logger
):
    """The KIP-848 consumer (AsyncKafkaConsumer) logs the same ConsumerConfig dump, group.protocol = consumer:
    its max.poll.interval.ms is its poll timer and the rebalance timeout it sends
    (AbstractHeartbeatRequestManager / ConsumerHeartbeatRequestManager), which the KIP-848 replay reads."""
    dump = Event(
        "e0", 1_704_067_200_000, "sim", "g1", "member", EventType.CLIENT_CONFIG.value, client_id="c1",
        group_instance_id="i1", attributes={"max_poll_interval_ms": "60000"},
    )  # fmt: skip
    (line,) = KafkaLogWriter(consumer_protocol=True, broker_era="4.x", client_era=client_era).write_all(
        [dump]
    )
    assert line.text.endswith(f"({logger})")
    (event,) = parse_lines(line.text.split("\n"), file="client.log", cluster="sim").events
    assert (event.event_type, event.client_id, event.group_instance_id) == ("client_config", "c1", "i1")
    assert (event.attributes["group_protocol"], event.attributes["max_poll_interval_ms"]) == (
        "consumer",
        "60000",
    )
