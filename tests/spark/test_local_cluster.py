"""The job with its executors in their own JVMs and Python workers (`spark.master:
local-cluster[2,1,1024]`, as on a cluster), on the kafka-log and the canonical paths: it must write the
same tables as the suite's local[2] session, so code that only works inside the driver's process (files
written by executors, state carried across batches, the delta-rs commit of what executors wrote) fails
here rather than on the first cluster. Slow (three JVMs per run): marked `cluster`, run with
`pytest --cluster`."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tests.logs.kafka_log_fixtures import REAL
from tests.spark.helpers import run_job

pytestmark = [pytest.mark.spark, pytest.mark.cluster]

REPO = Path(__file__).resolve().parents[2]
SAMPLE_EVENTS = REPO / "jobs" / "sample_data" / "events.jsonl"
LOGS = ("05_broker_3.8_classic_join_leave.log", "09_client_classic_eager_two_members.log")
# Tables the replay writes from the executors' output, and the columns that identify their rows.
COMPARED = {
    "generations": ("cluster", "group_id", "generation_id", "member_count", "leader_member_id"),
    "assignments": ("cluster", "group_id", "generation_id", "member_id"),
    "partition_movements": ("cluster", "group_id", "generation_id", "topic", "partition"),
    "rebalance_episodes": ("cluster", "group_id", "episode_id"),
    "group_state": ("cluster", "group_id", "state_json"),
}


def inputs(tmp_path: Path, input_format: str) -> tuple[Path, dict]:
    if input_format == "json":
        return SAMPLE_EVENTS, {}
    folder = tmp_path / "logs"
    folder.mkdir()
    for name in LOGS:
        shutil.copy(REAL / name, folder / name)
    return folder, {"cluster": "prod"}


def rows(warehouse: Path, table: str) -> list[tuple]:
    from deltalake import DeltaTable

    frame = DeltaTable(str(warehouse / table)).to_pyarrow_table(columns=list(COMPARED[table]))
    return sorted(map(tuple, zip(*(frame[c].to_pylist() for c in COMPARED[table]), strict=True)), key=repr)


@pytest.mark.parametrize("input_format", ["kafka-log", "json"])
def test_executors_in_their_own_jvms_write_the_same_tables_as_local_mode(spark, tmp_path, input_format):
    input_path, options = inputs(tmp_path, input_format)
    settings = {"arrow_max_records_per_batch": 16, "shuffle_partitions": 2}  # as run_job: groups span batches
    conf = tmp_path / "cluster.yaml"
    conf.write_text(
        yaml.safe_dump(
            {
                "input": {"path": str(input_path), "format": input_format, "options": options},
                "warehouse": str(tmp_path / "cluster"),
                "spark": {"master": "local-cluster[2,1,1024]", **settings},
            }
        )
    )
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")])),
    }
    done = subprocess.run(
        [sys.executable, "-m", "jobs.cli", "run", "--conf", str(conf)],
        capture_output=True,
        text=True,
        cwd=REPO,
        env=env,
        timeout=1200,
    )
    assert done.returncode == 0, done.stderr[-3000:]

    run_job(spark, input_path, tmp_path / "local", input__format=input_format, input__options=options)
    for table in COMPARED:
        assert rows(tmp_path / "cluster", table) == rows(tmp_path / "local", table), table
    assert rows(tmp_path / "cluster", "generations")
