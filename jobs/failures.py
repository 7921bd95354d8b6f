"""What a failed job tells its user: one line on stderr, never a Java, py4j or Python stack trace.

    an error the user can fix        input, configuration, paths (UsageError), memory: exit status 2
    anything else                    the step that failed and the log file with the whole story: exit 1

The log file (`job_log`) receives the output of a JVM that the job launches itself (jobs.spark_session:
Spark's warnings and errors, Java stack traces) and, on failure, the Python traceback. `current_step`
is the title of the step running (jobs.replay.Progress sets it), so a failure names it.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import logging
import os
import sys
import tempfile
import traceback
from pathlib import Path

current_step: str | None = None
log_path: Path | None = None  # the job's log file, once chosen
driver_memory: str | None = None  # of a Spark driver launched here (jobs.spark_session)

LOG_FOLDER = "_logs"
# What a JVM that died of memory leaves in its output (Spark's handler halts the JVM on an OutOfMemoryError).
_OUT_OF_MEMORY = ("java.lang.OutOfMemoryError", "Java heap space", "GC overhead limit exceeded")


def job_log(warehouse: str | None) -> Path:
    """A new log file for this job: `<warehouse>/_logs/` for a folder warehouse, else the temp folder."""
    global log_path
    from jobs.warehouse_location import local_folder

    folder = local_folder(warehouse) if warehouse else None
    folder = folder / LOG_FOLDER if folder is not None else Path(tempfile.gettempdir()) / "rebalance-replay"
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError:
        folder = Path(tempfile.gettempdir())
    stamp = dt.datetime.now(dt.UTC).strftime("%Y%m%dT%H%M%SZ")
    log_path = folder / f"{stamp}-{os.getpid()}.log"
    log_path.touch()
    return log_path


# pyspark's loggers that print an analysis error as a JSON line on stderr the moment the exception is
# created (pyspark.errors.exceptions.base.PySparkException._log_exception), even when the job catches it
_PYSPARK_ERROR_LOGGERS = ("DataFrameQueryContextLogger", "SQLQueryContextLogger")


class _ToJobLog(logging.Handler):
    """Appends records to the job's current log file (stderr when the job chose none)."""

    def emit(self, record: logging.LogRecord) -> None:
        try:
            text = self.format(record) + "\n"
            if log_path is None:
                sys.stderr.write(text)
                return
            with open(log_path, "a", encoding="utf-8", errors="replace") as out:
                out.write(text)
        except Exception:  # a log record must never fail the job
            self.handleError(record)


def route_pyspark_error_logs() -> None:
    """Send pyspark's error loggers to the job's log file instead of the console (idempotent)."""
    from pyspark.logger import PySparkLogger

    for name in _PYSPARK_ERROR_LOGGERS:
        logger = PySparkLogger.getLogger(name)
        for handler in list(logger.handlers):
            logger.removeHandler(handler)
        logger.addHandler(_ToJobLog())  # PySparkLogger.addHandler gives it pyspark's JSON format
        logger.propagate = False


def discard_log() -> None:
    """Remove the job's log after a success (and its folder when empty): it is kept for failures."""
    global log_path
    if log_path is None:
        return
    log_path.unlink(missing_ok=True)
    with contextlib.suppress(OSError):  # other logs in it
        log_path.parent.rmdir()
    log_path = None


def explain(verb: str, exc: BaseException) -> tuple[int, str]:
    """(exit status, the one line to print) for a failure that is not a UsageError; the traceback goes
    to the job's log file (a new one in the temp folder when the job chose none)."""
    log = log_path or job_log(None)
    with open(log, "a", encoding="utf-8", errors="replace") as out:
        out.write(f"\n---- rebalance-replay {verb} failed")
        out.write(f" while {current_step}\n" if current_step else "\n")
        out.write("".join(traceback.format_exception(exc)))
    step = f" while {current_step}" if current_step else ""
    if _out_of_memory(exc, log):
        memory = f" (now {driver_memory})" if driver_memory else ""
        return 2, (
            f"rebalance-replay {verb}: error: Spark's driver ran out of memory{step}{memory}: raise "
            f"spark.driver_memory in the conf or --driver-memory (e.g. 4g); log: {log}"
        )
    if _jvm_gone(exc):
        return 1, f"rebalance-replay {verb}: failed{step}: Spark's JVM stopped unexpectedly; log: {log}"
    return 1, f"rebalance-replay {verb}: failed{step}: {_summary(exc)}; log: {log}"


def _chain(exc: BaseException):
    seen = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        yield exc
        exc = exc.__cause__ or exc.__context__


def _jvm_gone(exc: BaseException) -> bool:
    """The py4j connection to the JVM broke: the JVM died (or was killed)."""
    for link in _chain(exc):
        if isinstance(link, ConnectionError):
            return True
        if type(link).__name__ == "Py4JNetworkError":
            return True
    return False


def _out_of_memory(exc: BaseException, log: Path) -> bool:
    if any(marker in _safe_str(link) for link in _chain(exc) for marker in _OUT_OF_MEMORY):
        return True
    if not _jvm_gone(exc):
        return False
    try:
        with open(log, encoding="utf-8", errors="replace") as text:
            return any(marker in line for line in text for marker in _OUT_OF_MEMORY)
    except OSError:
        return False


def _summary(exc: BaseException) -> str:
    """The exception's type and first line, without Java's stack (pyspark's errors carry it after
    the first line)."""
    text = _safe_str(exc).strip().splitlines()
    first = text[0] if text else ""
    if len(first) > 300:
        first = first[:300] + "..."
    return f"{type(exc).__name__}: {first}" if first else type(exc).__name__


def _safe_str(exc: BaseException) -> str:
    try:
        return str(exc)
    except Exception:  # py4j's Java errors may fail to render once the JVM is gone
        return ""
