"""The report notebook runs, headless, against the tables the Spark job writes from its packaged sample
data; and the Jupyter copy (.ipynb) is the Databricks source (.py) rebuilt."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from jobs.config import load_config
from jobs.replay import run

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOK = ROOT / "notebooks" / "rebalance_report.ipynb"


def test_the_ipynb_is_built_from_the_databricks_source():
    result = subprocess.run(
        [sys.executable, str(ROOT / "notebooks" / "build_local_notebook.py"), "--check"],
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stderr


@pytest.mark.spark
def test_the_notebook_runs_against_the_jobs_tables(spark, tmp_path, monkeypatch):
    import nbformat
    from nbclient import NotebookClient

    warehouse = tmp_path / "warehouse"
    result = run(spark, load_config(None, {"warehouse": str(warehouse)}))  # the packaged sample
    assert result.table_rows["generations"] > 0

    # The kernel inherits this process's environment: the notebook's parameter and the project on the
    # path (its matplotlib backend is Jupyter's inline one: figures become image outputs).
    monkeypatch.setenv("REBALANCE_WAREHOUSE", str(warehouse))
    monkeypatch.delenv("MPLBACKEND", raising=False)
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]))
    notebook = nbformat.read(NOTEBOOK, as_version=4)
    NotebookClient(
        notebook, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}
    ).execute()

    outputs = [o for cell in notebook.cells if cell.cell_type == "code" for o in cell.get("outputs", [])]
    assert not [o for o in outputs if o.output_type == "error"]
    printed = "".join(o.get("text", "") for o in outputs if o.output_type == "stream")
    generations = result.table_rows["generations"]
    assert f"{generations} generations" in printed  # the first cell read the job's tables
    assert "warehouse: every run finished" in printed  # the status cell; mid-run: test_killed_runs.py
    images = [o for o in outputs if "image/png" in o.get("data", {})]
    assert len(images) >= 4  # per day, churn, causes, ownership timeline (what-if: no comparison table here)
    assert "the 10 rebalances with the most partition-unavailable time" in printed  # with their causes
    assert "incidents" in printed


def _local_warehouse():
    """The notebook's `local_warehouse` function, taken from its source."""
    import ast

    source = (ROOT / "notebooks" / "rebalance_report.py").read_text()
    (function,) = [n for n in ast.parse(source).body if getattr(n, "name", None) == "local_warehouse"]
    namespace = {"os": os}
    exec(compile(ast.Module([function], []), "rebalance_report.py", "exec"), namespace)
    return namespace["local_warehouse"]


def test_the_local_notebook_finds_the_warehouse_of_the_conf_from_the_project_root(tmp_path, monkeypatch):
    (tmp_path / "conf").mkdir()
    (tmp_path / "notebooks").mkdir()
    monkeypatch.delenv("REBALANCE_WAREHOUSE", raising=False)
    monkeypatch.delenv("REBALANCE_CONF", raising=False)
    monkeypatch.chdir(tmp_path / "notebooks")  # where Jupyter starts the notebook
    (tmp_path / "conf" / "local.yaml").write_text("warehouse: ./warehouse\n")
    assert _local_warehouse()() == str(tmp_path / "warehouse")
    (tmp_path / "conf" / "local.yaml").write_text("warehouse: data/wh\n")
    assert _local_warehouse()() == str(tmp_path / "data" / "wh")
    monkeypatch.setenv("REBALANCE_WAREHOUSE", "/elsewhere")
    assert _local_warehouse()() == "/elsewhere"
