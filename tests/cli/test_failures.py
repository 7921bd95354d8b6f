"""A failure that is not the user's input is one line on stderr naming the step and the log file that
holds the whole story (exit 1); a driver out of memory, which py4j reports as a refused connection, is
the user's to fix (exit 2, says which setting). Without Spark: the job's main is replaced by one that
fails as Spark does."""

from __future__ import annotations

import pytest

import jobs.replay
from jobs import failures
from jobs.cli import main as cli_main


@pytest.fixture
def log(tmp_path, monkeypatch):
    path = tmp_path / "job.log"
    path.touch()
    monkeypatch.setattr(failures, "log_path", path)
    monkeypatch.setattr(failures, "current_step", "replaying groups")
    monkeypatch.setattr(failures, "driver_memory", "1g")
    return path


def fails_with(monkeypatch, exc: BaseException) -> None:
    def main(args):
        raise exc

    monkeypatch.setattr(jobs.replay, "main", main)


class Py4JNetworkError(Exception):
    """py4j's error when the JVM's socket is gone (same name, as failures matches it by name)."""


def test_an_unexpected_error_is_one_line_naming_the_step_and_the_log(monkeypatch, capsys, log):
    fails_with(monkeypatch, RuntimeError("[INTERNAL_ERROR] boom\n\tat org.apache.spark.Foo(Foo.java:1)"))

    assert cli_main(["run"]) == 1

    err = capsys.readouterr().err
    assert (
        err
        == f"rebalance-replay run: failed while replaying groups: RuntimeError: [INTERNAL_ERROR] boom; log: {log}\n"
    )
    assert "Traceback" in log.read_text() and "Foo.java" in log.read_text()


def test_a_jvm_that_died_of_memory_is_the_users_to_fix(monkeypatch, capsys, log):
    log.write_text("java.lang.OutOfMemoryError: Java heap space\n\tat java.util.Arrays.copyOf\n")
    fails_with(monkeypatch, ConnectionRefusedError(111, "Connection refused"))

    assert cli_main(["run"]) == 2

    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err
    assert "Spark's driver ran out of memory while replaying groups (now 1g)" in err
    assert "spark.driver_memory" in err and "--driver-memory" in err and str(log) in err


def test_a_jvm_that_stopped_otherwise_is_one_line_and_exit_1(monkeypatch, capsys, log):
    fails_with(monkeypatch, Py4JNetworkError("Answer from Java side is empty"))

    assert cli_main(["run"]) == 1

    err = capsys.readouterr().err
    assert (
        err
        == f"rebalance-replay run: failed while replaying groups: Spark's JVM stopped unexpectedly; log: {log}\n"
    )


@pytest.mark.parametrize("below", ["a-file/warehouse", "a-file"])
def test_a_warehouse_that_cannot_be_written_is_one_line_and_exit_2_before_spark(tmp_path, capsys, below):
    (tmp_path / "a-file").write_text("not a folder")
    warehouse = tmp_path / below

    assert cli_main(["run", "--warehouse", str(warehouse)]) == 2

    err = capsys.readouterr().err
    assert err.startswith(f"rebalance-replay run: error: cannot write the warehouse {warehouse}: ")
    assert err.count("\n") == 1


def test_pysparks_analysis_error_logs_go_to_the_log_file_not_the_console(capsys, log):
    """pyspark logs an analysis error as a JSON line on stderr when the exception is created, even one
    the job catches and words itself (jobs.failures.route_pyspark_error_logs)."""
    from pyspark.logger import PySparkLogger

    failures.route_pyspark_error_logs()
    failures.route_pyspark_error_logs()  # idempotent: one handler
    logger = PySparkLogger.getLogger("DataFrameQueryContextLogger")
    logger.exception(
        "[UNRESOLVED_COLUMN] boom", file="jobs/input.py", line="1", fragment="col", errorClass="X"
    )

    assert capsys.readouterr().err == ""
    assert log.read_text().count("[UNRESOLVED_COLUMN] boom") == 1
