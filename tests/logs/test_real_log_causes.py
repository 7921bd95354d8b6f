"""Causes, incidents and coordinators of real broker logs (/work/shared/kafka-logs/real, EXPECTED.md) and
of the hand-written excerpts of other versions."""

from __future__ import annotations

from rebalance_core.explain import replay_explained
from tests.logs.kafka_log_fixtures import EXCERPTS, REAL, parse_fixture


def _explained(path):
    return replay_explained(parse_fixture(path).events)


def _causes(out):
    rows = sorted(out["rebalance_episodes"], key=lambda r: r["started_at"] or 0)
    return [(r["cause"], r["trigger_member_id"], r["trigger_client_id"], r["trigger_host"]) for r in rows]


def test_real_3_0_broker_log_a_heartbeat_expiry_then_a_new_member_after_the_group_was_deleted():
    out = _explained(REAL / "04_broker_3.0_expiry_dead_recreate.log")
    assert _causes(out) == [
        (
            "session_timeout",
            "my-java-consumer-0f9eb754-e6b4-47b5-954d-3cfa09d53bcd",
            "my-java-consumer",
            None,
        ),
        ("member_joined", "my-java-consumer-7dfd6962-b848-4383-a596-82f349150d56", "my-java-consumer", None),
    ]
    (tenure,) = out["group_coordinators"]
    assert (tenure["broker"], tenure["offsets_partition"], tenure["from_ts"]) == ("1", 31, None)


def test_real_3_8_broker_log_two_joins_then_a_graceful_leave_with_the_members_host():
    out = _explained(REAL / "05_broker_3.8_classic_join_leave.log")
    leaver = "avro-producer-4be6fc59-a8a4-4882-b22f-f8693a0b1536"
    assert _causes(out) == [
        ("member_joined", "avro-producer-0eec4c23-8ca2-4a89-becc-9a2b139de9f9", "avro-producer", None),
        ("member_joined", leaver, "avro-producer", "172.23.0.7"),
        ("member_left", leaver, "avro-producer", "172.23.0.7"),
    ]
    (left,) = [r for r in out["rebalance_episodes"] if r["cause"] == "member_left"]
    assert left["cause_raw_reason"].endswith("client reason: the consumer is being closed")
    (summary,) = out["group_daily_summary"]
    assert summary["causes"] == {"member_joined": 2, "member_left": 1}


def test_java_4_0_coordinator_wordings():
    out = _explained(EXCERPTS / "broker_4.0_java_classic.log")
    assert [c for c, *_ in _causes(out)] == ["member_joined", "member_left", "session_timeout"]


def test_a_2_8_static_member_fenced_rebalance_waits_out_the_rebalance_timeout():
    out = _explained(EXCERPTS / "broker_2.8_static_fencing.log")
    assert [c for c, *_ in _causes(out)] == ["member_joined", "leader_rejoined"]
    (stuck,) = [r for r in out["rebalance_incidents"] if r["kind"] == "stuck_rebalance"]
    assert stuck["duration_ms"] > 300_000


def test_a_pre_2_1_broker_names_the_failed_member_in_its_removal_line():
    out = _explained(EXCERPTS / "broker_1.1_session_timeout.log")
    assert _causes(out) == [
        ("session_timeout", "consumer-3-5f0c2c55-5d6a-4c47-8e11-2b7c6a1a3f10", "consumer-3", None)
    ]
    (tenure,) = out["group_coordinators"]
    assert (tenure["started_by"], tenure["ended_by"]) == ("group_loaded", "group_unloaded")
