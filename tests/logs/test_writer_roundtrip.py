"""Kafka log text written by rebalance_core.kafka_logs.writer, read back by rebalance_core.kafka_logs, gives
back the events the writer wrote (the fields `ROUNDTRIP_FIELDS` says the text carries)."""

from __future__ import annotations

import dataclasses
import re
from collections import Counter

import pytest

from rebalance_core.consumer import ConsumerSimSettings, simulate_consumer_group
from rebalance_core.events import Event, TopicPartition
from rebalance_core.kafka_logs import parse_lines
from rebalance_core.kafka_logs.writer import (
    BROKER_ERAS,
    CLIENT_ERAS,
    CONSUMER_PROTOCOL_ERAS,
    KafkaLogWriter,
    WriterError,
)
from rebalance_core.kafka_logs.writer_lines import BROKER, CLIENT, format_log_ts, partition_for
from rebalance_core.simulate import SimulationSettings, simulate
from rebalance_core.timeline import Crash, Join, Leave, PartitionCount, Pause, Restart, Timeline
from rebalance_core.workload.fleet import GROUP_KINDS, plan_fleet, topic_id
from rebalance_core.workload.segments import GroupStream, group_segments, simulate_segment
from schemas.events import EventType, RemovalReason
from tests.logs.kafka_log_fixtures import REAL

TOPIC_IDS = {"orders": "8iWjCLGESE6MUiR5ANkArg"}
S = 1_000


def classic_timeline() -> Timeline:
    return Timeline(
        topics={"orders": 6},
        actions=(
            Join(0, "c1"),
            Join(0, "c2"),
            Join(0, "c3"),
            Restart(60 * S, "c1", down_ms=10 * S),  # graceful: LeaveGroup, then a new member id
            Crash(120 * S, "c2"),  # session timeout
            Pause(200 * S, "c3", duration_ms=60 * S, kind="gc"),  # beyond session.timeout.ms
            Pause(400 * S, "c1", duration_ms=400 * S, kind="poll"),  # beyond max.poll.interval.ms
            PartitionCount(900 * S, "orders", 8),
            Join(1000 * S, "c4"),
            Restart(1100 * S, "c4", down_ms=10 * S, graceful=False),
            Leave(1300 * S, "c3"),
        ),
        group_id="orders-app",
        start_ms=1_731_060_000_000,
    )


def classic_events(assignor: str, static: bool = False) -> list[Event]:
    settings = SimulationSettings(assignor=assignor, static_membership=static, seed=3, coordinator="broker-2")
    return simulate(classic_timeline(), settings).events


def consumer_events(static: bool) -> list[Event]:
    timeline = Timeline(
        topics={"orders": 6},
        actions=(
            Join(0, "c1"),
            Join(0, "c2"),
            Join(5 * S, "c3"),
            Crash(60 * S, "c2"),
            Pause(200 * S, "c3", duration_ms=60 * S, kind="gc"),
            Pause(400 * S, "c1", duration_ms=400 * S, kind="poll"),
            PartitionCount(900 * S, "orders", 8),
            Restart(1000 * S, "c1", down_ms=10 * S),  # static: "temporarily left", then replaced
            Leave(1100 * S, "c3"),
        ),
        group_id="orders-next",
        start_ms=1_731_060_000_000,
    )
    settings = ConsumerSimSettings(coordinator="broker-1", topic_ids=TOPIC_IDS, static_membership=static)
    return simulate_consumer_group(timeline, settings).events


def connect_events(protocol: str, max_delay_ms: int | None = None) -> list[Event]:
    """A Kafka Connect worker group (KIP-415): workers join, one crashes and comes back within the
    scheduled rebalance delay, one restarts, one leaves."""
    timeline = Timeline(
        topics={"jdbc-source": 4, "s3-sink": 6},  # connectors and their task counts
        actions=(
            Join(0, "w1"),
            Join(0, "w2"),
            Join(20 * S, "w3"),
            Restart(60 * S, "w2", down_ms=30 * S, graceful=False),
            Restart(300 * S, "w1", down_ms=10 * S),
            Leave(600 * S, "w3"),
        ),
        group_id="connect-cluster",
        start_ms=1_731_060_000_000,
    )
    settings = SimulationSettings(
        assignor=protocol,
        session_timeout_ms=10 * S,
        heartbeat_interval_ms=3 * S,
        max_poll_interval_ms=60 * S,
        scheduled_rebalance_max_delay_ms=max_delay_ms,
        seed=3,
        coordinator="broker-2",
    )
    return simulate(timeline, settings).events


def projection(event: Event, event_type: str, values: dict) -> tuple:
    """What the log text carries of an event (the writer's `carried`, or the same fields of a read one)."""
    key: tuple = (event.ts, event.side, event_type, event.group_id)
    if event.side == "member":
        key += (event.client_id, event.group_instance_id)
    for name, value in sorted(values.items()):
        if name == "partitions" and value is not None:
            value = tuple(sorted(value))
        if name == "assignment" and value is not None:
            value = tuple(sorted((m, tuple(sorted(tps))) for m, tps in value.items()))
        key += ((name, value),)
    if event_type == EventType.TOPIC_METADATA_CHANGED.value:
        key += (tuple(sorted((k, v) for k, v in event.attributes.items() if k.startswith("topic."))),)
    return key


def read_back(event: Event, writer: KafkaLogWriter) -> tuple:
    names = writer.fields_carried(event.event_type, event.side, event.protocol_type)
    return projection(event, event.event_type, {name: getattr(event, name) for name in names})


def roundtrip(
    events: list[Event], *, consumer_protocol: bool, topic_ids=None, broker_era="3.x", client_era="3.x"
):
    """(what the writer wrote, what the parser read back) as Counters of projections, and the written types."""
    writer = KafkaLogWriter(
        consumer_protocol=consumer_protocol,
        topic_ids=topic_ids,
        broker_era=broker_era,
        client_era=client_era,
        record_carried=True,
    )
    lines = writer.write_all(events)
    by_id = {e.event_id: e for e in events}
    written = [by_id[i] for line in lines for i in line.event_ids]
    read: list[Event] = []
    for stream in (BROKER, CLIENT):
        text = "\n".join(line.text for line in lines if line.stream == stream)
        result = parse_lines(text.split("\n"), file=f"{stream}.log", cluster="sim", topic_ids=topic_ids)
        assert result.quarantine == [], result.quarantine[:3]
        read.extend(result.events)
    return (
        Counter(projection(e, *writer.carried(e)) for e in written),
        Counter(read_back(e, writer) for e in read),
        {EventType(e.event_type) for e in written},
    )


def differences(expected: Counter, got: Counter) -> str:
    return f"written, not read: {sorted(expected - got)[:5]}\nread, not written: {sorted(got - expected)[:5]}"


# the events each era logs at INFO for a classic group (besides join_sent / join_response ...)
CLASSIC_BROKER_TYPES = {
    "0.10": {EventType.REBALANCE_PREPARED, EventType.JOIN_COMPLETED, EventType.ASSIGNMENT_RECEIVED},
    "2.x": {
        EventType.REBALANCE_PREPARED,
        EventType.JOIN_COMPLETED,
        EventType.ASSIGNMENT_RECEIVED,
        EventType.MEMBER_REMOVED,
    },
    "3.x": {
        EventType.JOIN_RECEIVED,
        EventType.REBALANCE_PREPARED,
        EventType.JOIN_COMPLETED,
        EventType.ASSIGNMENT_RECEIVED,
        EventType.MEMBER_REMOVED,
    },
}
CLASSIC_BROKER_TYPES["4.x"] = CLASSIC_BROKER_TYPES["3.x"]
CLASSIC_CLIENT_TYPES = {
    "2.x": {
        EventType.HEARTBEAT_REBALANCING,
        EventType.JOIN_SENT,
        EventType.JOIN_RESPONSE,
        EventType.ASSIGNMENT_COMPUTED,
        EventType.SYNC_RESPONSE,
        EventType.PARTITIONS_REVOKED,
        EventType.PARTITIONS_ASSIGNED,
        EventType.PARTITIONS_LOST,
    },
    "3.x": {
        EventType.JOIN_REQUESTED,
        EventType.JOIN_SENT,
        EventType.JOIN_RESPONSE,
        EventType.ASSIGNMENT_COMPUTED,
        EventType.SYNC_RESPONSE,
        EventType.PARTITIONS_REVOKED,
        EventType.PARTITIONS_ASSIGNED,
        EventType.PARTITIONS_LOST,
        EventType.POLL_TIMEOUT_EXPIRED,
    },
}
CLASSIC_CLIENT_TYPES["4.x"] = CLASSIC_CLIENT_TYPES["3.x"]
ERA_PAIRS = [(b, c) for b in BROKER_ERAS for c in CLIENT_ERAS if b == c or (b == "0.10" and c == "2.x")]


@pytest.mark.parametrize(("broker_era", "client_era"), ERA_PAIRS)
@pytest.mark.parametrize(
    ("assignor", "static"), [("range", False), ("cooperative-sticky", False), ("sticky", True)]
)
def test_classic_group_logs_read_back_as_the_written_events(assignor, static, broker_era, client_era):
    expected, got, types = roundtrip(
        classic_events(assignor, static),
        consumer_protocol=False,
        broker_era=broker_era,
        client_era=client_era,
    )
    assert got == expected, differences(expected, got)
    assert CLASSIC_BROKER_TYPES[broker_era] | CLASSIC_CLIENT_TYPES[client_era] <= types
    if static:
        if broker_era != "0.10":  # 0.10 predates static membership
            assert EventType.STATIC_MEMBER_REPLACED in types
        # AbstractCoordinator.maybeLeaveGroup: a static member never sends LeaveGroup (KIP-345)
        assert EventType.LEAVE_SENT not in types
    else:
        assert EventType.LEAVE_SENT in types


@pytest.mark.parametrize("era", CONSUMER_PROTOCOL_ERAS)
@pytest.mark.parametrize("static", [False, True])
def test_consumer_group_logs_read_back_as_the_written_events(static, era):
    expected, got, types = roundtrip(
        consumer_events(static), consumer_protocol=True, topic_ids=TOPIC_IDS, broker_era=era, client_era=era
    )
    assert got == expected, differences(expected, got)
    must = {
        EventType.JOIN_RECEIVED,
        EventType.MEMBER_REMOVED,
        EventType.GROUP_EPOCH_BUMPED,
        EventType.TARGET_ASSIGNMENT_COMPUTED,
        EventType.TOPIC_METADATA_CHANGED,
        EventType.MEMBER_STATE_CHANGED,
        EventType.PARTITIONS_REVOKED,
        EventType.PARTITIONS_ASSIGNED,
        EventType.PARTITIONS_LOST,
        EventType.POLL_TIMEOUT_EXPIRED,
    }
    if era == "3.x":
        must.add(EventType.MEMBER_EPOCH_UPDATED)  # DEBUG in 4.0
    else:
        assert EventType.MEMBER_EPOCH_UPDATED not in types
    assert must <= types
    if static:
        assert EventType.STATIC_MEMBER_REPLACED in types


@pytest.mark.parametrize(("broker_era", "client_era"), ERA_PAIRS)
@pytest.mark.parametrize("kind", GROUP_KINDS)
def test_generated_fleet_histories_read_back(kind, broker_era, client_era):
    if kind == "consumer" and broker_era not in CONSUMER_PROTOCOL_ERAS:
        pytest.skip("KIP-848 groups exist from Kafka 3.6 on")
    plan = next(p for p in plan_fleet(100, 2) if p.kind == kind and p.members <= 10)
    stream = GroupStream()
    events = [e for s in group_segments(plan, 1_704_067_200_000, 2) for e in stream.join(simulate_segment(s))]
    topic_ids = {t: topic_id(plan.cluster, t) for t, _ in plan.topics}
    expected, got, _ = roundtrip(
        events,
        consumer_protocol=kind == "consumer",
        topic_ids=topic_ids,
        broker_era=broker_era,
        client_era=client_era,
    )
    assert got == expected, differences(expected, got)


# what a Connect worker logs at INFO (WorkerCoordinator / DistributedHerder / AbstractCoordinator)
CONNECT_CLIENT_TYPES = {
    EventType.JOIN_REQUESTED,  # "Rebalance started"
    EventType.JOIN_SENT,
    EventType.JOIN_RESPONSE,
    EventType.SYNC_RESPONSE,  # "Successfully synced", completed by "Joined group ... got assignment"
    EventType.PARTITIONS_REVOKED,  # its revokedTaskIds
    EventType.PARTITIONS_ASSIGNED,  # its taskIds
    EventType.LEAVE_SENT,
}


@pytest.mark.parametrize(("broker_era", "client_era"), ERA_PAIRS)
@pytest.mark.parametrize(("protocol", "max_delay_ms"), [("sessioned", 60 * S), ("compatible", 0)])
def test_connect_worker_logs_read_back_as_the_written_events(protocol, max_delay_ms, broker_era, client_era):
    events = connect_events(protocol, max_delay_ms)
    expected, got, types = roundtrip(
        events, consumer_protocol=False, broker_era=broker_era, client_era=client_era
    )
    assert got == expected, differences(expected, got)
    assert types >= CONNECT_CLIENT_TYPES
    # the heartbeat's rebalance signal: INFO in 2.x, WorkerCoordinator.requestRejoin's DEBUG from 3.0
    assert (EventType.HEARTBEAT_REBALANCING in types) == (client_era == "2.x")


def test_a_connect_worker_logs_its_assignment_once_its_revoked_tasks_are_stopped():
    """WorkerCoordinator.onJoinComplete calls onRevoked (the herder stops the tasks) before onAssigned logs
    "Joined group": the line comes at the stop, after "Finished stopping tasks in preparation for
    rebalance", and names the leader, the tasks added and revoked, and the KIP-415 delay."""
    events = connect_events("sessioned", 60 * S)
    lines = KafkaLogWriter(client_era="3.x").write_all(events)
    revoked = next(e for e in events if e.event_type == EventType.PARTITIONS_REVOKED.value)
    texts = [line.text for line in lines if line.stream == CLIENT and line.ts == revoked.ts]
    joined = next(i for i, t in enumerate(texts) if "Joined group at generation" in t)
    assert "Finished stopping tasks in preparation for rebalance" in texts[joined - 2]
    assert (
        "[Worker clientId=" in texts[joined]
        and "(org.apache.kafka.connect.runtime.distributed.DistributedHerder:" in texts[joined]
    )
    tasks = ", ".join(str(tp) for tp in revoked.partitions)
    assert f"revokedTaskIds=[{tasks}]" in texts[joined] and "with rebalance delay: " in texts[joined]
    assert "Starting connectors and tasks using config offset" in texts[joined + 1]
    assert not any("Request joining group" in line.text for line in lines if line.stream == CLIENT)


def _worker_templates(texts) -> set[tuple[str, str]]:
    """(message, logger) of `[Worker …]` entries with ids, numbers and lists blanked, no source line."""
    out = set()
    for text in texts:
        m = re.match(r"\[[^\]]+\] \w+ \[Worker [^\]]*\] (?P<message>.*) \((?P<logger>[\w.$]+):\d+\)$", text)
        if m:
            message = re.sub(r"\d+", "N", re.sub(r"'[^']*'", "''", re.sub(r"\[[^\]]*\]", "[]", m["message"])))
            out.add((message, m["logger"]))
    return out


def test_a_connect_worker_writes_what_a_real_3_x_worker_logs():
    """Every worker line written in the 3.x wording has the shape (message, logger) of a line a real
    Connect worker of 3.0-3.1 logged (tests/fixtures/kafka_logs/real/12_client_connect_…)."""
    real = _worker_templates(
        (REAL / "12_client_connect_incremental_cooperative.log").read_text().splitlines()
    )
    lines = KafkaLogWriter(client_era="3.x").write_all(connect_events("sessioned", 60 * S))
    written = _worker_templates(t for line in lines if line.stream == CLIENT for t in line.text.split("\n"))
    leave = {m for m in written if "LeaveGroup" in m[0] or "Resetting generation" in m[0]}  # not in that log
    assert written - leave <= real, sorted(written - leave - real)
    assert len(written - leave) >= 9


def test_kafka_has_no_kip848_group_before_3_6():
    with pytest.raises(WriterError):
        KafkaLogWriter(consumer_protocol=True, broker_era="2.x")


# ------------------------------------------------------------------------------------------ details
def event(n: int, event_type: EventType, **fields) -> Event:
    side = "member" if event_type in (EventType.LEAVE_SENT,) else "coordinator"
    return Event(
        event_id=f"e{n}",
        ts=1_731_060_000_000,
        cluster="sim",
        group_id="g1",
        side=side,
        event_type=event_type.value,
        source="broker-1" if side == "coordinator" else "c1",
        client_id=None if side == "coordinator" else "c1",
        **fields,
    )


def test_log4j_timestamp_and_offsets_partition_match_kafka():
    assert format_log_ts(1_731_060_125_229) == "2024-11-08 10:02:05,229"
    # the real 3.8 broker log (/work/shared/kafka-logs/real/05_...) names __consumer_offsets-33 for this group
    assert partition_for("avro-consumer2") == 33
    # a negative hashCode: Utils.abs, as the real 3.0 broker log (04_...) shows for this group
    assert partition_for("testtopic-app") == 31


def test_a_leave_logs_the_preparing_line_first_like_the_scala_coordinator():
    events = [
        event(1, EventType.MEMBER_REMOVED, member_id="c1-a", reason=RemovalReason.LEAVE_GROUP.value),
        event(2, EventType.REBALANCE_PREPARED, generation_id=4, reason="Removing member c1-a on LeaveGroup"),
    ]
    lines = KafkaLogWriter().write_all(events)
    assert [line.event_ids for line in lines] == [("e2",), ("e1",)]
    assert "has left group g1 through explicit `LeaveGroup`; client reason: not provided" in lines[1].text


def test_members_dropped_at_the_rebalance_timeout_share_one_line():
    timeout = RemovalReason.REBALANCE_TIMEOUT.value
    events = [
        event(1, EventType.MEMBER_REMOVED, member_id="c1-a", reason=timeout),
        event(2, EventType.MEMBER_REMOVED, member_id="c2-b", reason=timeout),
        event(3, EventType.JOIN_COMPLETED, generation_id=5, member_count=1),
    ]
    lines = KafkaLogWriter().write_all(events)
    assert "removed dynamic members who haven't joined: Set(c1-a, c2-b)" in lines[0].text
    assert lines[0].event_ids == ("e1", "e2")
    expected, got, _ = roundtrip(events, consumer_protocol=False)
    assert got == expected


def test_an_expired_pending_member_is_written_as_the_scala_coordinator_logs_it():
    """GroupCoordinator.onExpireHeartbeat (3.x): a KIP-394 pending member that never rejoined with its id
    is "removed after session timeout expiration", not a member that "has failed"."""
    events = [
        event(
            1,
            EventType.MEMBER_REMOVED,
            member_id="c1-a",
            reason=RemovalReason.SESSION_TIMEOUT.value,
            attributes={"pending": "true"},
        ),
    ]
    (line,) = KafkaLogWriter().write_all(events)
    assert "Pending member c1-a in group g1 has been removed after session timeout expiration." in line.text
    (read,) = parse_lines([line.text], file="server.log", cluster="sim").events
    assert (read.member_id, read.reason, read.attributes.get("pending")) == (
        "c1-a",
        "session_timeout",
        "true",
    )


def test_group_lifecycle_lines_read_back():
    events = [
        event(1, EventType.GROUP_LOADED, generation_id=7),
        event(2, EventType.GROUP_EMPTY, generation_id=8),
        event(3, EventType.GROUP_DEAD, generation_id=8),
        event(4, EventType.GROUP_UNLOADED, generation_id=8),
    ]
    expected, got, types = roundtrip(events, consumer_protocol=False)
    assert got == expected and len(types) == 4


def test_a_cooperative_assignment_block_is_one_multi_line_entry():
    events = classic_events("cooperative-sticky")
    lines = KafkaLogWriter().write_all(events)
    blocks = [line.text for line in lines if "Updating assignment with" in line.text]
    assert blocks
    assert all(
        b.count("\n") == 5
        and b.endswith(" (org.apache.kafka.clients.consumer.internals.ConsumerCoordinator)")
        for b in blocks
    )
    owned = TopicPartition("orders", 0)
    assert any(f"Current owned partitions:                  [{owned}" in b for b in blocks)


def test_a_leave_resets_the_generation_like_kafka_3():
    """AbstractCoordinator.maybeLeaveGroup -> resetGenerationOnLeaveGroup: two context lines after the
    LeaveGroup (and after a static member's poll timeout, which sends none); they read back as no event."""
    leave = event(1, EventType.LEAVE_SENT, member_id="c1-a", reason="the consumer is being closed")
    timeout = dataclasses.replace(
        event(2, EventType.POLL_TIMEOUT_EXPIRED, member_id="i1-b"),
        side="member",
        source="c2",
        client_id="c2",
        group_instance_id="i1",
    )
    lines = KafkaLogWriter().write_all([leave, timeout])
    resets = [
        "Resetting generation and member id due to: consumer pro-actively leaving the group",
        "Request joining group due to: consumer pro-actively leaving the group",
    ]
    assert [(line.event_ids, next((r for r in resets if r in line.text), None)) for line in lines] == [
        (("e1",), None),
        ((), resets[0]),
        ((), resets[1]),
        (("e2",), None),
        ((), resets[0]),
        ((), resets[1]),
    ]
    expected, got, _ = roundtrip([leave], consumer_protocol=False)
    assert got == expected
