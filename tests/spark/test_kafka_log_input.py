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
