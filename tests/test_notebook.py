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
    assert len(images) >= 3  # per day, churn, ownership timeline (what-if: no comparison table here)
