"""A driver heap Spark refuses (below 450 MB: INVALID_DRIVER_MEMORY) is the user's to fix: one line on
stderr naming the setting as the user gave it, exit 2, no stack trace. Run as a subprocess: the suite's
own SparkSession is already up, and only a new driver can be refused."""

from __future__ import annotations

import subprocess
import sys

import pytest

pytestmark = pytest.mark.spark


@pytest.mark.parametrize(
    "given, named",
    [
        (["--driver-memory", "64m"], "spark.driver_memory 64m"),
        (["--conf", "CONF"], "spark.conf: spark.driver.memory 64m"),
    ],
)
def test_a_driver_heap_spark_refuses_is_one_line_naming_the_setting_given(tmp_path, given, named):
    conf = tmp_path / "conf.yaml"
    conf.write_text("spark:\n  conf:\n    spark.driver.memory: 64m\n")
    args = [str(conf) if arg == "CONF" else arg for arg in given]
    done = subprocess.run(
        [sys.executable, "-m", "jobs.cli", "run", "--warehouse", str(tmp_path / "wh"), *args],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 2
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and named in lines[0] and "450m" in lines[0], done.stderr
