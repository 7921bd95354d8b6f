"""A simulated Connect worker logs its DistributedConfig at start, as Kafka's does (ConnectDistributed builds
it, AbstractConfig.logAll: "DistributedConfig values:"), once per process: a worker's log then states its
session.timeout.ms (what dates a silent failure), rebalance.timeout.ms, connect.protocol and
IncrementalCooperativeAssignor's scheduled.rebalance.max.delay.ms (KIP-415)."""

from __future__ import annotations

import pytest

from rebalance_core.kafka_logs import parse_lines
from rebalance_core.kafka_logs.writer import KafkaLogWriter
from rebalance_core.kafka_logs.writer_lines import CLIENT
from rebalance_core.simulate import SimulationSettings, simulate
from rebalance_core.timeline import Crash, Join, Restart, Timeline
from schemas.events import EventType

S = 1_000


def _worker_history():
    timeline = Timeline(
        topics={"src": 4},
        actions=(Join(0, "w1"), Join(0, "w2"), Restart(30 * S, "w1", down_ms=5 * S), Crash(60 * S, "w2")),
        group_id="connect-cluster",
        start_ms=1_704_067_200_000,
    )
    settings = SimulationSettings(
        assignor="sessioned",
        session_timeout_ms=10_000,
        heartbeat_interval_ms=3_000,
        max_poll_interval_ms=60_000,
        scheduled_rebalance_max_delay_ms=20_000,
    )
    return simulate(timeline, settings)


def _worker_lines(events, client_era):
    lines = KafkaLogWriter(consumer_protocol=False, broker_era="3.x", client_era=client_era).write_all(events)
    return [part for line in lines if line.stream == CLIENT for part in line.text.split("\n")]


@pytest.mark.parametrize("client_era", ["2.x", "3.x", "4.x"])
def test_each_worker_process_logs_its_distributed_config_once(client_era):
    result = parse_lines(
        _worker_lines(_worker_history().events, client_era), file="connect.log", cluster="sim"
    )
    assert not result.quarantine, result.quarantine[:3]
    configs = [e for e in result.events if e.event_type == "client_config"]
    assert sorted(e.client_id for e in configs) == ["w1", "w1", "w2"]  # w1's restart is a new worker
    assert {e.protocol_type for e in configs} == {"connect"}
    assert {e.protocol_name for e in configs} == {"sessioned"}
    assert {
        (
            e.attributes["session_timeout_ms"],
            e.attributes["rebalance_timeout_ms"],
            e.attributes["scheduled_rebalance_max_delay_ms"],
        )
        for e in configs
    } == {("10000", "60000", "20000")}


@pytest.mark.parametrize(
    ("client_era", "logger"),
    [
        ("3.x", "org.apache.kafka.connect.runtime.distributed.DistributedConfig:372"),
        ("4.x", "org.apache.kafka.common.config.AbstractConfig:371"),  # KAFKA-17185: one static logger
    ],
)
def test_the_dump_is_sorted_and_logged_by_the_config_logger_of_its_era(client_era, logger):
    lines = _worker_lines(_worker_history().events, client_era)
    head = next(i for i, line in enumerate(lines) if line.endswith("INFO DistributedConfig values: "))
    body = []
    for line in lines[head + 1 :]:
        body.append(line)
        if not line.startswith("\t") or line.endswith(")"):
            break
    keys = [line.split(" = ")[0].strip() for line in body]
    assert keys == sorted(keys)
    assert body[-1].endswith(f"({logger})")


def test_the_config_event_comes_before_the_workers_first_rebalance():
    first = {}
    for e in _worker_history().events:
        if e.side == "member" and e.client_id not in first:
            first[e.client_id] = e.event_type
    assert first == {"w1": EventType.CLIENT_CONFIG.value, "w2": EventType.CLIENT_CONFIG.value}
