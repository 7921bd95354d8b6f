"""`--input-format kafka-log`: Kafka's own log files go through jobs.log_source into the same replay;
the accounting counts log lines that are not about groups as skipped."""

from __future__ import annotations

import shutil

import pytest

from jobs.delta_io import open_warehouse, read_table
from tests.logs.kafka_log_fixtures import REAL, parse_fixture
from tests.spark.helpers import run_job

pytestmark = pytest.mark.spark

LOGS = ("05_broker_3.8_classic_join_leave.log", "09_client_classic_eager_two_members.log")


def test_kafka_logs_replay_with_line_accounting(spark, tmp_path):
    for name in LOGS:
        shutil.copy(REAL / name, tmp_path / name)
    parsed = [parse_fixture(REAL / name) for name in LOGS]
    result = run_job(
        spark, tmp_path, tmp_path / "warehouse", input__format="kafka-log", input__options={"cluster": "prod"}
    )
    total = result.total
    assert total.replayed == sum(len(p.events) for p in parsed)
    assert total.quarantined == sum(len(p.quarantine) for p in parsed)
    assert total.skipped == sum(p.counts.skipped for p in parsed)
    assert total.read == total.replayed + total.quarantined + total.duplicates + total.skipped
    warehouse = open_warehouse(spark, str(tmp_path / "warehouse"))
    generations = read_table(spark, warehouse, "generations").collect()
    assert generations and {g.cluster for g in generations} == {"prod"}
    details = read_table(spark, warehouse, "run_accounting").collect()[-1].details
    assert (details["input_format"], details["input_files"]) == ("kafka-log", "2")


def test_a_broker_restart_in_kafka_logs_moves_every_group_of_its_partitions(spark, tmp_path):
    from tests.core.test_coordinator_side import AUDIT_CLIENT_LOG, RESTART_LOG

    (tmp_path / "logs").mkdir()
    (tmp_path / "logs" / "server.log").write_text(RESTART_LOG)
    (tmp_path / "logs" / "audit.log").write_text(AUDIT_CLIENT_LOG)
    run_job(
        spark,
        tmp_path / "logs",
        tmp_path / "warehouse",
        input__format="kafka-log",
        input__options={"cluster": "k"},
        replay__offsets_topic_partitions=50,
    )
    warehouse = open_warehouse(spark, str(tmp_path / "warehouse"))
    tenures = read_table(spark, warehouse, "group_coordinators").collect()
    assert sorted((t.group_id, t.broker, t.started_by, t.ended_by, t.seen_by) for t in tenures) == [
        ("audit", "1", "elected", None, "partition"),
        ("audit", "2", "first_seen", "resigned", "partition"),
        ("orders", "1", "elected", None, "coordinator"),
        ("orders", "2", "first_seen", "group_unloaded", "coordinator"),
        ("payments", "1", "elected", None, "coordinator"),
        ("payments", "2", "first_seen", "resigned", "coordinator"),
    ]
    moves = [
        i
        for i in read_table(spark, warehouse, "rebalance_incidents").collect()
        if i.kind == "coordinator_move"
    ]
    assert [m.groups for m in moves] == [["audit", "orders", "payments"]]
    # the hand-overs are no group of their own
    summary = read_table(spark, warehouse, "group_daily_summary").collect()
    assert {r.group_id for r in summary} == {"audit", "orders", "payments"}
