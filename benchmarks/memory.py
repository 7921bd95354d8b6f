"""One consumer group with 10M events through the Spark job in bounded memory: the peak RSS of the
Python workers (not a test: it prints figures).

A group's events all go to one Spark partition and one Python worker (jobs.replay: repartition by
group, mapInPandas); the worker holds one Arrow batch (spark.arrow_max_records_per_batch rows) plus the
replayer's current state, never the group's history (CORE_API "Memory"). So the workers' peak RSS
should not grow with the size of the group: this benchmark samples it (psutil, every 0.2 s, every
pyspark.daemon process under this one) and prints it over the run's time, tenth by tenth, next to the
JVM's RSS.

Bounds: spark.driver.memory (the JVM heap; local mode: the driver is the executor) and
spark.executor.pyspark.memory (each Python worker's address-space limit, RLIMIT_AS).

Input: `rebalance-replay generate --single-group-events N` (one 150-member eager group rebalancing
around the clock; made once under $REBALANCE_BENCH_DATA, see bench_data).

    python -m benchmarks.memory [--quick] [--events 10000000] [--driver-memory 2g]
        [--python-memory 2g]
"""

from __future__ import annotations

import argparse
import shutil
import tempfile
import threading
import time
from pathlib import Path

from benchmarks.bench_data import StepTimes, bench_spark, data_root, dataset, manifest


class WorkerMemory:
    """Samples, every `interval` seconds, the RSS of the processes under this one: the PySpark Python
    workers (pyspark.daemon and its forks, one per running task) and the JVM (a child of the driver).
    Keeps each worker's peak and (seconds since start, workers' total, JVM) samples."""

    def __init__(self, interval: float = 0.2) -> None:
        import psutil

        self._psutil = psutil
        self.interval = interval
        self.peak_per_worker: dict[int, int] = {}
        self.samples: list[tuple[float, int, int]] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._started = time.monotonic()

    def __enter__(self) -> WorkerMemory:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()

    def _run(self) -> None:
        while not self._stop.wait(self.interval):
            workers, jvm = 0, 0
            for process in self._psutil.Process().children(recursive=True):
                try:
                    command = " ".join(process.cmdline())
                    rss = process.memory_info().rss
                except (self._psutil.NoSuchProcess, self._psutil.AccessDenied):
                    continue
                if "pyspark.daemon" in command:  # forked workers keep the daemon's command line
                    workers += rss
                    self.peak_per_worker[process.pid] = max(rss, self.peak_per_worker.get(process.pid, 0))
                elif process.name() == "java":
                    jvm = max(jvm, rss)
            self.samples.append((time.monotonic() - self._started, workers, jvm))


def mib(n: float) -> str:
    return f"{n / 2**20:,.0f} MiB"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--quick", action="store_true", help="a 100k-event group (smoke run)")
    parser.add_argument("--events", type=int, help="events of the group (default 10,000,000; quick 100,000)")
    parser.add_argument("--driver-memory", default="2g", help="spark.driver.memory (default 2g)")
    parser.add_argument(
        "--python-memory", default="2g", help="spark.executor.pyspark.memory per worker (default 2g)"
    )
    args = parser.parse_args(argv)
    events_target = args.events or (100_000 if args.quick else 10_000_000)

    from jobs.config import load_config
    from jobs.replay import run

    folder = dataset(single_group_events=events_target, fmt="events")
    info = manifest(folder)
    print(
        f"one group, {info['events']:,} events ({info['events_bytes'] / 2**20:,.0f} MiB of JSON lines), "
        f"{info['members']} members: {folder}"
    )
    spark = bench_spark("local[2]", args.driver_memory, {"spark.executor.pyspark.memory": args.python_memory})
    config = load_config(None, {"input.path": str(folder / "events"), "input.format": "json"})
    print(
        f"local[2], spark.driver.memory {args.driver_memory}, spark.executor.pyspark.memory "
        f"{args.python_memory}, {config.spark.arrow_max_records_per_batch:,} rows per Arrow batch",
        flush=True,
    )
    scratch = Path(tempfile.mkdtemp(prefix="memory-bench-", dir=data_root()))
    config.warehouse = str(scratch / "warehouse")
    steps = StepTimes()
    try:
        with WorkerMemory() as memory:
            started = time.monotonic()
            result = run(spark, config, progress=steps)
            seconds = time.monotonic() - started
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
        spark.stop()

    print(
        f"\njob: {result.total.read:,} events in {seconds:.0f} s ({result.total.read / seconds:,.0f} events/s)"
    )
    for title, step_seconds in steps.seconds.items():
        print(f"  {step_seconds:8.1f} s  {title}")
    samples = memory.samples
    peak_worker = max(memory.peak_per_worker.values(), default=0)
    print(
        f"\nPython workers: peak RSS of one worker {mib(peak_worker)}, of all together "
        f"{mib(max((s[1] for s in samples), default=0))}; JVM {mib(max((s[2] for s in samples), default=0))} "
        f"({len(memory.peak_per_worker)} worker processes, {len(samples):,} samples)"
    )
    if samples:
        end = samples[-1][0]
        print(f"\n{'run time':>12}{'workers (sum)':>15}{'JVM peak':>12}")
        for tenth in range(10):
            window = [s for s in samples if tenth * end / 10 <= s[0] <= (tenth + 1) * end / 10]
            if window:
                print(
                    f"{f'{tenth * 10}-{tenth * 10 + 10}%':>12}{mib(max(s[1] for s in window)):>15}"
                    f"{mib(max(s[2] for s in window)):>12}"
                )


if __name__ == "__main__":
    main()
