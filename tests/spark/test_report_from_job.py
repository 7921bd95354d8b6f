"""The report verb on warehouses the job wrote (one run each, shared by the module): the packaged sample,
and a real broker-only log without partition counts."""

from __future__ import annotations

import re

import pytest

from jobs.cli import main as cli_main
from tests.logs.kafka_log_fixtures import REAL
from tests.spark.helpers import run_job


@pytest.fixture(scope="module")
def sample_warehouse(spark, tmp_path_factory):
    from jobs.config import load_config
    from jobs.input import resolve_input

    warehouse = tmp_path_factory.mktemp("report-job") / "warehouse"
    sample, _fmt = resolve_input(load_config(None).input_path, "auto")
    result = run_job(spark, sample, warehouse)
    return warehouse, result


@pytest.fixture(scope="module")
def broker_only_warehouse(spark, tmp_path_factory):
    warehouse = tmp_path_factory.mktemp("report-broker") / "warehouse"
    run_job(spark, REAL / "05_broker_3.8_classic_join_leave.log", warehouse, input__format="kafka-log")
    return warehouse


@pytest.fixture(autouse=True)
def terminal_100_columns(monkeypatch):
    monkeypatch.setenv("COLUMNS", "100")


def _rows(warehouse, table: str) -> list[dict]:
    from deltalake import DeltaTable

    return DeltaTable(str(warehouse / table)).to_pyarrow_table().to_pylist()


def _group_totals(warehouse) -> dict[str, dict[str, int]]:
    """Per group, over the run's dates: the job's own daily rows summed (independent of jobs.summary)."""
    totals: dict[str, dict[str, int]] = {}
    for row in _rows(warehouse, "group_daily_summary"):
        total = totals.setdefault(f"{row['cluster']}/{row['group_id']}", {})
        for measure in ("rebalances", "partition_unavailable_ms", "stw_ms"):
            total[measure] = total.get(measure, 0) + (row[measure] or 0)
    return totals


def test_report_lists_the_runs_groups_by_partition_unavailable_time(sample_warehouse, capsys):
    warehouse, _result = sample_warehouse
    assert cli_main(["report", "--warehouse", str(warehouse)]) == 0
    text = capsys.readouterr().out.split("worst rebalances")[0]
    shown = re.findall(r"^(\S+/\S+)\s+(\d+)/(\d+)", text, flags=re.M)
    totals = _group_totals(warehouse)
    worst_first = sorted(totals, key=lambda g: (-totals[g]["partition_unavailable_ms"], -totals[g]["stw_ms"]))
    assert [name for name, _done, _open in shown] == worst_first
    assert {name: int(done) for name, done, _open in shown} == {g: t["rebalances"] for g, t in totals.items()}


def test_html_report_of_the_run_draws_every_groups_ownership(sample_warehouse, tmp_path, capsys):
    warehouse, _result = sample_warehouse
    assert cli_main(["report", "--warehouse", str(warehouse), "--html", str(tmp_path)]) == 0
    pages = sorted(tmp_path.glob("group-*.html"))
    assert len(pages) == len(_group_totals(warehouse))
    moved = [p for p in pages if "ownership (white, red edge: unavailable)" in _decoded(p.read_text())]
    assert len(moved) == len({(r["cluster"], r["group_id"]) for r in _rows(warehouse, "partition_movements")})


def test_broker_only_log_without_partition_counts_names_the_setting(broker_only_warehouse, capsys):
    assert cli_main(["report", "--warehouse", str(broker_only_warehouse)]) == 0
    lines = capsys.readouterr().out.splitlines()
    said = [line for line in lines if "replay.topics" in line]
    assert len(said) == 1 and "without partition counts" in said[0]


def _decoded(page: str) -> str:
    import base64

    return "".join(
        base64.b64decode(data).decode()
        for data in re.findall(r'src="data:image/svg\+xml;base64,([^"]+)"', page)
    )
