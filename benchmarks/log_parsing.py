"""Spark parsing of Kafka log files (jobs.log_source.read_kafka_logs) against a bare spark.read.text with
one regex extract, on the same files, in the same session and the same run (not a test: it prints
figures). Goal (issue 16): parsing <= 3x the baseline.

Input: the Kafka logs of a fleet made by `rebalance-replay generate --format kafka-log|both` (broker
server.log and consumer logs as Kafka 3.9 prints them; made once under $REBALANCE_BENCH_DATA, see
bench_data), read with the options of its manifest (path_pattern, topic_ids).

  baseline   spark.read.text (recursive) -> regexp_extract(value, <group id of a GroupCoordinator or
             ConsumerCoordinator line>) -> noop write
  parsing    read_kafka_logs (files below `whole_file_bytes` read whole by binaryFile; larger ones by the text
             source, lines numbered and counted in the JVM; mapInPandas through rebalance_core.kafka_logs,
             its counts action) -> events and quarantine frames written to noop

Runs an unmeasured baseline (warm page cache and JVM), then baseline, parsing, baseline; the ratio is
parsing over the mean of the two measured baselines, in wall seconds and in CPU seconds of the process tree
(driver, JVM, Python workers; psutil), the figure to compare on a machine other sessions load.

    python -m benchmarks.log_parsing [--quick] [--events 1000000] [--master local[2]]
"""

from __future__ import annotations

import argparse
import time

from benchmarks.bench_data import bench_spark, dataset, manifest
from benchmarks.noisy_log import cpu_timed

GOAL = 3.0  # issue 16
# The group id of a coordinator line: "[GroupCoordinator 1]: ... group orders-0001 ..." (broker) or
# "[Consumer clientId=..., groupId=orders-0001] ..." (client).
GROUP_ID = r"(?:groupId=|group )([^\s,\]]+)"


def baseline(spark, path: str) -> tuple[float, int]:
    """(seconds, lines) of the bare read + one regex extract."""
    from pyspark.sql import functions as F

    started = time.monotonic()
    lines = spark.read.option("recursiveFileLookup", "true").text(path)
    lines.select(F.regexp_extract("value", GROUP_ID, 1).alias("group_id")).write.format("noop").mode(
        "overwrite"
    ).save()
    seconds = time.monotonic() - started
    return seconds, lines.count()


def parsing(spark, path: str, options: dict) -> tuple[float, dict]:
    """(seconds, counts) of read_kafka_logs with both of its frames materialised."""
    from jobs.log_source import read_kafka_logs

    started = time.monotonic()
    events, quarantine, counts = read_kafka_logs(spark, [path], options)
    for frame in (events, quarantine):
        frame.write.format("noop").mode("overwrite").save()
    seconds = time.monotonic() - started
    spark.catalog.clearCache()  # read_kafka_logs persists its parsed rows
    return seconds, counts


def bench_size(spark, events_target: int) -> dict:
    folder = dataset(events_target=events_target, fmt="kafka-log")
    info = manifest(folder)
    path = str(folder / "kafka-logs")
    files = sum(1 for p in (folder / "kafka-logs").rglob("*.log"))
    options = {key: info["kafka_log_options"][key] for key in ("path_pattern", "topic_ids")}
    print(
        f"\n{info['kafka_log_lines']:,} log entries of {info['events']:,} events, {files:,} files, "
        f"{info['kafka_log_bytes'] / 2**20:,.0f} MiB: {folder}",
        flush=True,
    )
    baseline(spark, path)  # unmeasured: warms the OS page cache and the JVM
    first, first_cpu, (_, lines) = cpu_timed(lambda: baseline(spark, path))
    print(f"  baseline  {first:8.1f} s  {lines / first:>10,.0f} lines/s  {first_cpu:8.1f} CPU s", flush=True)
    seconds, cpu, (_, counts) = cpu_timed(lambda: parsing(spark, path, options))
    print(
        f"  parsing   {seconds:8.1f} s  {counts['read'] / seconds:>10,.0f} lines/s  {cpu:8.1f} CPU s   "
        f"{counts['events']:,} events, {counts['quarantined']:,} quarantined, {counts['skipped']:,} skipped",
        flush=True,
    )
    second, second_cpu, _ = cpu_timed(lambda: baseline(spark, path))
    print(
        f"  baseline  {second:8.1f} s  {lines / second:>10,.0f} lines/s  {second_cpu:8.1f} CPU s", flush=True
    )
    ratio = seconds / ((first + second) / 2)
    cpu_ratio = cpu / ((first_cpu + second_cpu) / 2)
    print(
        f"  parsing / baseline = {ratio:.2f}x wall, {cpu_ratio:.2f}x CPU "
        f"(goal <= {GOAL}x: {'met' if ratio <= GOAL else 'NOT met'})"
    )
    if lines != counts["read"]:
        print(f"  note: Spark's text reader counted {lines:,} lines, the parser {counts['read']:,}")
    return {"lines": counts["read"], "seconds": seconds, "baseline_s": (first + second) / 2, "ratio": ratio}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--quick", action="store_true", help="the logs of a 50k-event fleet (smoke run)")
    parser.add_argument(
        "--events", help="comma-separated fleet sizes in events (default 1000000; quick 50000)"
    )
    parser.add_argument("--master", default="local[2]", help="Spark master (default local[2])")
    parser.add_argument("--driver-memory", default="4g", help="spark.driver.memory (default 4g)")
    args = parser.parse_args(argv)
    sizes = [int(n) for n in (args.events or ("50000" if args.quick else "1000000")).split(",")]

    started = time.monotonic()
    spark = bench_spark(args.master, args.driver_memory)
    print(f"Spark {spark.version} {args.master}: started in {time.monotonic() - started:.0f} s")
    results = [bench_size(spark, n) for n in sizes]
    print(f"\n{'lines':>12}{'parsing s':>11}{'baseline s':>12}{'lines/s':>10}{'ratio':>8}  goal <= {GOAL}x")
    for r in results:
        print(
            f"{r['lines']:>12,}{r['seconds']:>11.1f}{r['baseline_s']:>12.1f}{r['lines'] / r['seconds']:>10,.0f}"
            f"{r['ratio']:>7.2f}x  {'met' if r['ratio'] <= GOAL else 'NOT met'}"
        )
    spark.stop()


if __name__ == "__main__":
    main()
