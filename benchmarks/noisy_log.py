"""`rebalance-replay run --input-format kafka-log` on one busy broker's server.log (mostly lines that are
not about groups, < 0.2% about groups) against a bare `spark.read.text` + one `regexp_extract` over the
same file, in the same session and the same run (not a test: it prints figures). Goal (issue 16): the
job <= 1.5x the baseline, and every rebalance of the file found.

Input: `benchmarks.noisy_server_log` (made once per size and seed under $REBALANCE_BENCH_DATA, reused
while its truth file exists). The job is the one `rebalance-replay run` runs (`jobs.replay.run`, the
job's default settings, Spark's default driver memory unless --driver-memory) writing every table to
a scratch warehouse; its generations table is then compared with the generator's truth (per group,
the generations / group epochs the broker's lines complete).

A job that fails is reported as a failure in one line (the first line of the error that says why),
and the run goes on; so is a baseline that cannot run after it (a JVM killed by an out-of-memory).

With --reader, the job is the kafka-log reader alone (`jobs.log_source.read_kafka_logs`, its events and
quarantine frames written to Spark's noop sink): the part of the job that reads every line, under each of
its two plans for a plain file (a scan of its own, or the `_metadata` scan shared by small files),
alternating in the same session.
Beside wall seconds it prints the CPU seconds of the whole process tree (this driver, the JVM, the
Python workers: psutil), the figure to compare on a machine other sessions load.

    python -m benchmarks.noisy_log [--quick] [--size 2.2G] [--driver-memory 1g] [--reader [--rounds N]]
"""

from __future__ import annotations

import argparse
import logging
import shutil
import time
from pathlib import Path
from typing import Any

from benchmarks.bench_data import StepTimes, bench_spark, cpu_seconds, data_root
from benchmarks.noisy_server_log import parse_size, truth_path, write_log

GOAL = 1.5
# The group id of a coordinator line: "[GroupCoordinator 1]: ... group orders-0001 ..." (classic) or
# "[GroupId orders-0001]" (KIP-848); the same single regex as benchmarks/log_parsing.py's baseline plus
# the KIP-848 form.
GROUP_ID = r"(?:\[GroupId |groupId=|group )([^\s,\]]+)"
# Error lines that say why a Spark job failed, best first (a Py4JJavaError's message is a whole trace).
_WHY = ("exceeds the max length allowed", "OutOfMemoryError", "Exception:", "Error:")


def noisy_log(size: int, seed: int) -> tuple[Path, dict]:
    """The generated server.log of this size and seed, and its truth (made the first time)."""
    import json

    log = data_root() / f"noisy-server-log-{size}b-seed{seed}" / "cluster=bench/server.log"
    if not truth_path(log).exists():
        print(f"making the input (once): {log} ({size / 2**30:.2f} GiB)", flush=True)
        write_log(log, size, seed)
    return log, json.loads(truth_path(log).read_text())


def cpu_timed(action) -> tuple[float, float, Any]:
    """(wall seconds, CPU seconds of the process tree, result) of `action()`."""
    cpu, started = cpu_seconds(), time.monotonic()
    result = action()
    return time.monotonic() - started, cpu_seconds() - cpu, result


def reader(spark, path: str, options: dict) -> dict:
    """The kafka-log reader alone: both of its frames written to noop (as benchmarks/log_parsing.py)."""
    from jobs.log_source import read_kafka_logs

    events, quarantine, counts = read_kafka_logs(spark, [path], options)
    for frame in (events, quarantine):
        frame.write.format("noop").mode("overwrite").save()
    spark.catalog.clearCache()  # read_kafka_logs persists its parsed rows
    return counts


# The reader's two plans for plain files (jobs.log_source `large_file_bytes`): the file in a scan of its
# own (path a literal, block the partition index), or in the scan shared by small files (`_metadata`).
READER_PLANS = {"own scan": 0, "shared scan": 1 << 62}


def bench_reader(spark, size: int, seed: int, rounds: int = 2) -> dict:
    """Baseline, then each reader plan (in turn first), per round, and a last baseline: wall and CPU
    seconds, and each plan's CPU ratio against the baselines of the same run. One unmeasured run of each
    first (page cache, JVM, Python workers)."""
    log, truth = noisy_log(size, seed)
    path = str(log)
    print(f"\n{truth['bytes'] / 2**30:.2f} GiB, {truth['lines']:,} lines: {log}", flush=True)
    baseline(spark, path)  # unmeasured: warms the page cache and the JVM
    reader(spark, path, truth["kafka_log_options"])  # unmeasured: starts the Python workers
    base: list[float] = []
    read: dict[str, list[float]] = {plan: [] for plan in READER_PLANS}
    for round_ in range(rounds):
        wall, cpu, _ = cpu_timed(lambda: baseline(spark, path))
        base.append(cpu)
        print(f"  baseline      {wall:8.1f} s  {cpu:8.1f} CPU s", flush=True)
        plans = list(READER_PLANS.items())
        for plan, large in plans if round_ % 2 == 0 else plans[::-1]:  # each plan first every other round
            options = {**truth["kafka_log_options"], "large_file_bytes": large}
            wall, cpu, counts = cpu_timed(lambda options=options: reader(spark, path, options))
            read[plan].append(cpu)
            print(
                f"  {plan:<12}  {wall:8.1f} s  {cpu:8.1f} CPU s   {counts['read']:,} lines read, "
                f"{counts['events']:,} events, {counts['skipped']:,} skipped, {counts['quarantined']:,} "
                "quarantined",
                flush=True,
            )
    wall, cpu, _ = cpu_timed(lambda: baseline(spark, path))
    base.append(cpu)
    print(f"  baseline      {wall:8.1f} s  {cpu:8.1f} CPU s", flush=True)
    mean_base = sum(base) / len(base)
    ratios = {}
    for plan, cpus in read.items():
        ratios[plan] = (sum(cpus) / len(cpus)) / mean_base
        print(
            f"  reader ({plan}) / baseline = {ratios[plan]:.2f}x in CPU seconds (means of {len(cpus)} and "
            f"{len(base)} runs; reader {min(cpus):.1f}-{max(cpus):.1f}, baseline {min(base):.1f}-{max(base):.1f})"
        )
    return {"bytes": truth["bytes"], "ratios": ratios}


def baseline(spark, path: str) -> float:
    from pyspark.sql import functions as F

    started = time.monotonic()
    spark.read.text(path).select(F.regexp_extract("value", GROUP_ID, 1).alias("group_id")).write.format(
        "noop"
    ).mode("overwrite").save()
    return time.monotonic() - started


def job(spark, path: str, options: dict, warehouse: Path):
    """(seconds, RunResult, step times) of the job on the kafka-log input."""
    from jobs.config import load_config
    from jobs.replay import run

    config = load_config(
        None,
        {
            "input.path": path,
            "input.format": "kafka-log",
            "input.options": options,
            "warehouse": str(warehouse),
        },
    )
    steps = StepTimes()
    started = time.monotonic()
    result = run(spark, config, progress=steps)
    return time.monotonic() - started, result, steps


def found_rebalances(warehouse: Path, truth: dict) -> tuple[int, list[tuple[str, int]], int]:
    """(found, missing (group, generation), extra rows) of the generations table against the truth."""
    from deltalake import DeltaTable

    table = DeltaTable(str(warehouse / "generations")).to_pyarrow_table(columns=["group_id", "generation_id"])
    written = set(zip(table["group_id"].to_pylist(), table["generation_id"].to_pylist(), strict=True))
    expected = {(g, n) for g, gens in truth["rebalances_by_group"].items() for n in gens}
    missing = sorted(expected - written)
    return len(expected) - len(missing), missing, len(written - expected)


def one_line(exc: BaseException) -> str:
    """The line of an error that says why (Spark's errors carry whole Java stack traces)."""
    lines = [line.strip() for line in str(exc).splitlines() if line.strip()] or [type(exc).__name__]
    for marker in _WHY:
        for line in lines:
            if marker in line:
                return line.removeprefix("Caused by: ")[:300]
    return f"{type(exc).__name__}: {lines[0][:300]}"


def timed(label: str, action):
    """`action()`, or None when it fails (the failure printed as one line)."""
    started = time.monotonic()
    try:
        return action()
    except Exception as exc:  # the benchmark reports any failure and goes on
        print(f"  {label:<9} FAILED after {time.monotonic() - started:.1f} s: {one_line(exc)}", flush=True)
        return None


def bench(spark, size: int, seed: int) -> dict:
    log, truth = noisy_log(size, seed)  # made before Spark started (see main)
    path = str(log)
    print(
        f"\n{truth['bytes'] / 2**30:.2f} GiB, {truth['lines']:,} lines, {truth['group_lines']:,} about groups "
        f"({truth['group_share']:.3%}), {truth['rebalances']:,} rebalances of {truth['groups']} groups: {log}",
        flush=True,
    )
    timed("baseline", lambda: baseline(spark, path))  # unmeasured: warms the page cache and the JVM
    first = timed("baseline", lambda: baseline(spark, path))
    if first is not None:
        print(f"  baseline  {first:8.1f} s  {truth['lines'] / first:>12,.0f} lines/s", flush=True)
    warehouse = data_root() / f"noisy-warehouse-{size}b-seed{seed}"
    shutil.rmtree(warehouse, ignore_errors=True)
    cpu = cpu_seconds()
    outcome = timed("job", lambda: job(spark, path, truth["kafka_log_options"], warehouse))
    outcome = outcome and (*outcome, cpu_seconds() - cpu)
    seconds = found = None
    if outcome is not None:
        print(f"  job CPU   {outcome[3]:8.1f} CPU s (process tree)", flush=True)
        seconds, result, steps, _ = outcome
        print(f"  job       {seconds:8.1f} s  {truth['lines'] / seconds:>12,.0f} lines/s", flush=True)
        for title, step_seconds in steps.seconds.items():
            print(f"      {step_seconds:8.1f} s  {title}")
        found, missing, extra = found_rebalances(warehouse, truth)
        every = "every rebalance found" if not missing else f"{len(missing):,} NOT found, e.g. {missing[:3]}"
        print(f"  rebalances: {found:,} of {truth['rebalances']:,} found ({every}); {extra:,} generations "
              "written that the truth does not list")  # fmt: skip
    shutil.rmtree(warehouse, ignore_errors=True)
    second = timed("baseline", lambda: baseline(spark, path))
    if second is not None:
        print(f"  baseline  {second:8.1f} s  {truth['lines'] / second:>12,.0f} lines/s", flush=True)
    baselines = [b for b in (first, second) if b is not None]
    ratio = seconds / (sum(baselines) / len(baselines)) if seconds is not None and baselines else None
    if ratio is not None:
        verdict = "met" if ratio <= GOAL and found == truth["rebalances"] else "NOT met"
        print(f"  job / baseline = {ratio:.2f}x (goal <= {GOAL}x, every rebalance found: {verdict})")
    else:
        print(f"  job / baseline: no ratio (goal <= {GOAL}x: NOT met)")
    return {"bytes": truth["bytes"], "ratio": ratio, "found": found, "rebalances": truth["rebalances"]}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--quick", action="store_true", help="a 100 MiB file (smoke run)")
    parser.add_argument(
        "--size", help="comma-separated file sizes, e.g. 2.2G,500M (default 2.2G; quick 100M)"
    )
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--master", default="local[2]", help="Spark master (default local[2])")
    parser.add_argument(
        "--driver-memory", default="1g", help="spark.driver.memory (default 1g, Spark's own default)"
    )
    parser.add_argument("--reader", action="store_true", help="the kafka-log reader alone, CPU seconds")
    parser.add_argument("--rounds", type=int, default=2, help="rounds of --reader (default 2)")
    args = parser.parse_args(argv)
    sizes = [parse_size(s) for s in (args.size or ("100M" if args.quick else "2.2G")).split(",")]
    logging.getLogger("py4j").setLevel(logging.CRITICAL)  # a dead JVM: our one line, not py4j's trace

    for size in sizes:  # inputs first, so that no idle session waits on the generator
        noisy_log(size, args.seed)
    started = time.monotonic()
    spark = bench_spark(args.master, args.driver_memory)
    print(f"Spark {spark.version} {args.master}: started in {time.monotonic() - started:.0f} s")
    if args.reader:
        for size in sizes:
            bench_reader(spark, size, args.seed, args.rounds)
        spark.stop()
        return
    results = [bench(spark, size, args.seed) for size in sizes]
    print(f"\n{'GiB':>8}{'ratio':>8}{'found':>14}  goal <= {GOAL}x, every rebalance found")
    for r in results:
        ratio = f"{r['ratio']:.2f}x" if r["ratio"] is not None else "failed"
        found = f"{r['found'] if r['found'] is not None else '-'}/{r['rebalances']}"
        met = r["ratio"] is not None and r["ratio"] <= GOAL and r["found"] == r["rebalances"]
        print(f"{r['bytes'] / 2**30:>8.2f}{ratio:>8}{found:>14}  {'met' if met else 'NOT met'}")
    try:
        spark.stop()
    except Exception as exc:  # a JVM already gone
        print(f"stopping Spark: {one_line(exc)}")


if __name__ == "__main__":
    main()
