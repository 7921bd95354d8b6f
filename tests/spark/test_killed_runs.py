"""Runs killed for real: `rebalance-replay run` as a subprocess (its own Spark), SIGKILLed with its JVM
and Python workers at a known step (jobs.pause_points.checkpoint), then run again. Whatever the step, the
rerun says what it found, and the warehouse ends with exactly the rows of one clean run, no staging
folder and no file that no commit references. Between the two, the report and the notebook say that
the warehouse is mid-run and which tables are ahead. Two runs at once on one warehouse: the second says why in
one line (exit 2) and the first's tables equal one clean run.

Each case starts one Spark in a subprocess (about 12 s): the cases are few on purpose."""

from __future__ import annotations

import contextlib
import datetime as dt
import io
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from types import SimpleNamespace
from urllib.parse import unquote

import pytest
from deltalake import DeltaTable

from jobs.config import load_config
from jobs.delta_io import STAGING_FOLDER, open_warehouse
from jobs.input import SAMPLE_DATA
from jobs.pause_points import PAUSE_AT, PAUSE_FILE
from jobs.report import collect_report
from jobs.run_state import TABLES_WRITTEN_BY_ANY_RUN, find_unfinished
from tests.spark.test_bad_bytes import run_cli

pytestmark = pytest.mark.spark

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOK = ROOT / "notebooks" / "rebalance_report.py"
DATES = ("--from", "2024-11-08", "--to", "2024-11-09")
VARYING = ("run_id", "started_at", "finished_at")  # differ from run to run by nature


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    return tmp_path_factory.mktemp("killed")


@pytest.fixture(scope="module")
def previous(spark, folder):
    """A warehouse holding an earlier run of the same dates on other input (the sample's first 200
    lines): a killed run leaves some tables at it."""
    partial = folder / "partial.jsonl"
    partial.write_bytes(b"".join(SAMPLE_DATA.read_bytes().splitlines(keepends=True)[:200]))
    status, _, err = run_cli("run", "--input", str(partial), "--warehouse", str(folder / "previous"), *DATES)
    assert status == 0, err
    return folder / "previous"


@pytest.fixture(scope="module")
def clean(spark, folder):
    """The tables of one clean run of the sample."""
    status, _, err = run_cli("run", "--warehouse", str(folder / "clean"), *DATES)
    assert status == 0, err
    return tables(folder / "clean")


def tables(warehouse: Path) -> dict[str, Counter]:
    """Every table's rows (as a multiset), without what varies from run to run by nature."""
    out = {}
    for table in TABLES_WRITTEN_BY_ANY_RUN:
        path = warehouse / table
        rows = DeltaTable(str(path)).to_pyarrow_table().to_pylist() if (path / "_delta_log").is_dir() else []
        out[table] = Counter(repr(sorted((k, v) for k, v in row.items() if k not in VARYING)) for row in rows)
    return out


def leftovers(warehouse: Path) -> list[str]:
    """Staging folders, and data files in a table folder that no commit of the table ever added."""
    found = []
    for table in TABLES_WRITTEN_BY_ANY_RUN:
        path = warehouse / table
        if (path / STAGING_FOLDER).exists():
            found.append(f"{table}/{STAGING_FOLDER}")
        if (path / "_delta_log").is_dir():
            on_disk = {
                os.path.normpath(os.path.relpath(p, path))
                for p in path.rglob("*.parquet")
                if "_delta_log" not in p.parts and STAGING_FOLDER not in p.parts
            }
            # files of older snapshots stay until VACUUM; a file that no commit ever added is a leftover
            found += [f"{table}/{f}" for f in sorted(on_disk - _ever_added(path))]
    if (warehouse / "_staging").exists() and any((warehouse / "_staging").iterdir()):
        found.append("_staging")
    return found


def _ever_added(table: Path) -> set[str]:
    paths = set()
    for log in sorted((table / "_delta_log").glob("*.json")):
        for line in log.read_text().splitlines():
            action = json.loads(line)
            if "add" in action:
                paths.add(os.path.normpath(unquote(action["add"]["path"])))
    return paths


def report_mid_run(spark, warehouse: Path) -> list[str]:
    """What the what-if report says first about the warehouse."""
    result = SimpleNamespace(run_id="report", date_from=dt.date(2024, 11, 8), date_to=dt.date(2024, 11, 9))
    config = load_config(None, {"warehouse": str(warehouse)})
    return collect_report(spark, config, result, ("actual",)).mid_run


def report_verb_mid_run(warehouse: Path) -> list[str]:
    """The lines `rebalance-replay report` prints about the warehouse being mid-run."""
    status, out, err = run_cli("report", "--warehouse", str(warehouse))
    assert status == 0, err
    return [line for line in out.splitlines() if line.startswith("warehouse mid-run:")]


def notebook_status(warehouse: Path, monkeypatch) -> str:
    """What the notebook's warehouse status cell prints (its loading cell and that one, run here)."""
    monkeypatch.setenv("REBALANCE_WAREHOUSE", str(warehouse))
    cells = NOTEBOOK.read_text().split("# COMMAND ----------")
    namespace: dict = {}
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(cells[1], namespace)  # parameters and load()
        out.seek(0)
        out.truncate()
        exec(next(c for c in cells if "def commit_run_ids" in c), namespace)
    return out.getvalue()


def start_paused(warehouse: Path, step: str, marker: Path) -> subprocess.Popen:
    """`rebalance-replay run` in a new process group, paused at `step` once `marker` exists."""
    env = {**os.environ, PAUSE_AT: step, PAUSE_FILE: str(marker), "PYTHONPATH": str(ROOT)}
    job = subprocess.Popen(
        [sys.executable, "-m", "jobs.cli", "run", "--warehouse", str(warehouse), *DATES],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )
    deadline = time.monotonic() + 300
    while not marker.exists():
        if job.poll() is not None or time.monotonic() > deadline:
            job.kill()
            out, err = job.communicate()
            pytest.fail(
                f"the job never reached {step}: status {job.returncode}\n{err.decode(errors='replace')}"
            )
        time.sleep(0.1)
    return job


def kill(job: subprocess.Popen) -> None:
    """SIGKILL the job, its JVM and its Python workers (one process group)."""
    os.killpg(job.pid, signal.SIGKILL)
    job.communicate()
    time.sleep(0.5)  # the JVM's children see their parent gone


@pytest.mark.parametrize(
    "step, ahead",
    [
        ("reading", []),  # input being read and validated
        ("replaying", []),  # inside a Python worker, replaying groups
        ("after-commit:run_accounting", []),  # the record saying 'writing' committed, nothing else
        # between two commits (events and quarantine committed), generations' files moved, not committed
        ("before-commit:generations", ["events", "quarantine"]),
    ],
)
def test_a_killed_run_is_completed_by_the_next_to_the_rows_of_a_clean_run(
    spark, folder, previous, clean, step, ahead, monkeypatch
):
    warehouse = folder / f"killed-{step.replace(':', '-')}"
    shutil.copytree(previous, warehouse)
    before = tables(warehouse)

    kill(start_paused(warehouse, step, folder / f"{warehouse.name}.paused"))

    found = find_unfinished(spark, open_warehouse(spark, str(warehouse)))
    if step in ("reading", "replaying"):
        assert found == [] and tables(warehouse) == before  # nothing committed: as it was
    else:
        assert [run.ahead for run in found] == [ahead]
        said = f"run {found[0].run_id} on 2024-11-08 .. 2024-11-09"
        assert [said in line for line in report_mid_run(spark, warehouse)] == [True]
        assert [said in line for line in report_verb_mid_run(warehouse)] == [True]
        (status_line,) = notebook_status(warehouse, monkeypatch).splitlines()
        assert status_line.startswith(f"WAREHOUSE MID-RUN: run {found[0].run_id} on 2024-11-08..2024-11-09")
        assert f"tables ahead: {', '.join(ahead) or 'none yet'};" in status_line
    status, _, err = run_cli("run", "--warehouse", str(warehouse), *DATES)
    assert status == 0, err
    if found:
        assert f"the previous run {found[0].run_id} on 2024-11-08 .. 2024-11-09" in err
        assert "did not finish" in err and "this run completes it" in err
    assert tables(warehouse) == clean
    assert find_unfinished(spark, open_warehouse(spark, str(warehouse))) == []
    assert notebook_status(warehouse, monkeypatch) == "warehouse: every run finished\n"
    assert leftovers(warehouse) == []


def test_a_second_run_at_once_says_why_in_one_line_and_the_first_ends_as_a_clean_run(
    spark, folder, previous, clean
):
    warehouse = folder / "concurrent"
    shutil.copytree(previous, warehouse)
    marker = folder / "concurrent.paused"
    first = start_paused(warehouse, "after-commit:run_accounting", marker)
    try:
        status, _, err = run_cli("run", "--warehouse", str(warehouse), *DATES)
    finally:
        marker.unlink()  # the first goes on
    out, first_err = first.communicate(timeout=600)

    assert status == 2
    assert err.count("\n") == 1 and "another run is writing the warehouse" in err and "pid" in err
    assert first.returncode == 0, first_err.decode(errors="replace")
    assert tables(warehouse) == clean
    assert leftovers(warehouse) == []
