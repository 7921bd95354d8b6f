"""Core replay without Spark: events per second per core (goal >= 300k, issue 16), against a bare loop
over the same events measured in the same run (not a test: it prints figures).

Input: a fleet made by `rebalance-replay generate` (the same generator and format as the Spark
benchmarks, made once under $REBALANCE_BENCH_DATA; see bench_data), loaded into memory as Event
objects, each group's events sorted in the core's order (rebalance_core.replay.event_order_key), as
the Spark job hands them over. Every figure is CPU seconds of this single-threaded process (= one core;
less sensitive than wall time to the machine's other load), best of --repeat runs, wall seconds
alongside; measured on chunks of whole groups of about 50k events (the Spark rows of a whole fleet do
not fit in memory).

  bare loop        reads ts and event_type of every Event (the pace of the machine: the baseline)
  core replay      per group: new_replayer + feed + finish                      goal >= 300k events/s/core
  row -> Event     the Spark worker's rows (an Arrow batch as pandas) made into Events, column by column
                   (jobs.replay_batches.batch_events: Event.from_columns, ts from _ts_ms)
  worker path      jobs.replay_batches.replay_partition on pandas batches of 2,000 rows built by Arrow
                   as Spark builds them (nullable Int32, maps as dicts): the Spark job's Python work per
                   event, without the Arrow transfer; includes the Events from columns, replay and the output
                   frames

--profile adds cProfile's top functions (own time) of the core replay and of the worker path.

    python -m benchmarks.core_replay [--quick] [--events N] [--repeat 3] [--profile]
"""

from __future__ import annotations

import argparse
import cProfile
import datetime as dt
import gc
import io
import json
import pstats
import time
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path

from benchmarks.bench_data import dataset, manifest
from rebalance_core.events import Event
from rebalance_core.replay import event_order_key, new_replayer
from rebalance_core.replay_common import ReplaySettings

ARROW_BATCH_ROWS = 2_000  # the job's spark.arrow_max_records_per_batch (conf/local.yaml)
GOAL_EVENTS_PER_S = 300_000  # issue 16's target for the core replay, per core
CHUNK_EVENTS = 50_000  # groups are measured in chunks of about this many events (see `chunks`)


def load_groups(folder: Path) -> dict[tuple[str, str], list[Event]]:
    """The generator's events (JSON lines under folder/events), per group in replay order."""
    groups: dict[tuple[str, str], list[Event]] = {}
    for path in sorted((folder / "events").rglob("*.jsonl")):
        with path.open(encoding="utf-8") as lines:
            for line in lines:
                e = Event.from_row(json.loads(line))
                groups.setdefault((e.cluster, e.group_id), []).append(e)
    for events in groups.values():
        events.sort(key=event_order_key)
    return dict(sorted(groups.items()))


# ----------------------------------------------------------------------------------------- measures
def bare_loop(groups) -> None:
    seen: Counter = Counter()
    for events in groups.values():
        for e in events:
            seen[e.event_type] += e.ts & 1


def core_replay(groups) -> None:
    settings = ReplaySettings()
    for (cluster, group_id), events in groups.items():
        # the worker tells a KIP-848 group from a classic one by its first batch
        replayer = new_replayer(cluster, group_id, settings, None, events[:ARROW_BATCH_ROWS])
        replayer.feed(events)
        replayer.finish()


def pandas_batches(groups) -> list:
    """The Spark job's sorted stream of these groups (jobs.replay._replay's columns:
    jobs.replay_batches.wire_row) as pandas batches the way Spark's Arrow serializer hands them to
    mapInPandas: ARROW_BATCH_ROWS rows each, nullable integers (Int32/Int64), maps as dicts, arrays as
    numpy arrays. Made batch by batch: the rows of a big group as dicts would not fit in memory. (Spark
    runs its own per-element conversion of the nested columns besides: not measured here.)"""
    import pandas as pd
    import pyarrow as pa

    from jobs.replay_batches import wire_row
    from schemas.events import event_arrow_schema

    schema = (
        event_arrow_schema()
        .append(pa.field("_kind", pa.int32()))
        .append(pa.field("_state_json", pa.string()))
        .append(pa.field("_ts_ms", pa.int64()))
    )
    types = {pa.int32(): pd.Int32Dtype(), pa.int64(): pd.Int64Dtype()}.get
    stream = [e for events in groups.values() for e in events]
    return [
        pa.RecordBatch.from_pylist(
            [wire_row(e) for e in stream[start : start + ARROW_BATCH_ROWS]], schema
        ).to_pandas(maps_as_pydicts="lossy", types_mapper=types)
        for start in range(0, len(stream), ARROW_BATCH_ROWS)
    ]


def rows_to_events(frames) -> None:
    from jobs.replay_batches import batch_events

    for frame in frames:
        batch_events(frame)


def worker_path(frames, dates: tuple[dt.date, dt.date]) -> None:
    from jobs.replay_batches import replay_partition

    for _ in replay_partition(iter(frames), ReplaySettings(), *dates):
        pass


def chunks(groups: dict, events_per_chunk: int) -> Iterator[dict]:
    """Consecutive groups, about `events_per_chunk` events each (a group is never split): the Spark
    rows of a whole fleet do not fit in memory at once."""
    chunk, size = {}, 0
    for key, events in groups.items():
        chunk[key] = events
        size += len(events)
        if size >= events_per_chunk:
            yield chunk
            chunk, size = {}, 0
    if chunk:
        yield chunk


MEASURES: dict[str, Callable] = {
    "bare loop": lambda groups, frames, dates: bare_loop(groups),
    "core replay": lambda groups, frames, dates: core_replay(groups),
    "row -> Event": lambda groups, frames, dates: rows_to_events(frames),
    "worker path": lambda groups, frames, dates: worker_path(frames, dates),
}


def run_measures(groups: dict, dates, repeat: int, profilers: dict[str, cProfile.Profile] | None) -> dict:
    """name -> (CPU seconds, wall seconds): per chunk of groups, the fastest of `repeat` runs by CPU,
    summed over the chunks. With `profilers`, one more run of each profiled measure under cProfile."""
    totals = dict.fromkeys(MEASURES, (0.0, 0.0))
    for chunk in chunks(groups, CHUNK_EVENTS):
        frames = pandas_batches(chunk)
        for name, work in MEASURES.items():
            best = (float("inf"), float("inf"))
            for _ in range(repeat):
                gc.collect()
                wall, cpu = time.perf_counter(), time.process_time()
                work(chunk, frames, dates)
                best = min(best, (time.process_time() - cpu, time.perf_counter() - wall))
            totals[name] = (totals[name][0] + best[0], totals[name][1] + best[1])
            if profilers and name in profilers:
                profilers[name].enable()
                work(chunk, frames, dates)
                profilers[name].disable()
        del frames
    return totals


def print_profile(title: str, profiler: cProfile.Profile, top: int) -> None:
    out = io.StringIO()
    pstats.Stats(profiler, stream=out).sort_stats("tottime").print_stats(top)
    print(f"\n--- profile: {title} (own time, top {top}; cProfile slows the run ~2x) ---")
    print("\n".join(line for line in out.getvalue().splitlines() if line.strip()))


# ---------------------------------------------------------------------------------------------- main
def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--quick", action="store_true", help="a 50k-event fleet, one run each (smoke run)")
    parser.add_argument("--events", type=int, help="fleet size in events (default 1,000,000; quick 50,000)")
    parser.add_argument("--days", type=int, default=7, help="days of the fleet's history (default 7)")
    parser.add_argument(
        "--repeat", type=int, help="runs per measure, the fastest counts (default 3; quick 1)"
    )
    parser.add_argument("--profile", action="store_true", help="print cProfile's top functions")
    parser.add_argument("--top", type=int, default=25, help="functions per profile (default 25)")
    args = parser.parse_args(argv)
    events_target = args.events or (50_000 if args.quick else 1_000_000)
    repeat = args.repeat or (1 if args.quick else 3)

    folder = dataset(events_target=events_target, days=args.days, fmt="events")
    loaded = time.perf_counter()
    groups = load_groups(folder)
    n = sum(len(events) for events in groups.values())
    types = Counter(e.event_type for events in groups.values() for e in events)
    kinds = manifest(folder).get("group_kinds", {})
    print(
        f"input: {folder} — {n:,} events, {len(groups)} groups {kinds}, loaded in "
        f"{time.perf_counter() - loaded:.0f} s\n  most frequent: "
        + ", ".join(f"{t} {c / n:.0%}" for t, c in types.most_common(6))
    )
    days = sorted(
        {
            dt.datetime.fromtimestamp(e.ts / 1000, dt.UTC).date()
            for g in groups.values()
            for e in (g[0], g[-1])
        }
    )
    profiled = ("core replay", "worker path")
    profilers = {name: cProfile.Profile() for name in profiled} if args.profile else None
    measured = run_measures(groups, (days[0], days[-1]), repeat, profilers)

    print(f"\n{'measure':<14}{'events/s/core':>16}{'us/event':>10}{'x bare loop':>13}{'wall events/s':>16}")
    results = {name: cpu for name, (cpu, _) in measured.items()}
    for name, (cpu, wall) in measured.items():
        print(
            f"{name:<14}{n / cpu:>16,.0f}{cpu / n * 1e6:>10.2f}{cpu / results['bare loop']:>13.1f}"
            f"{n / wall:>16,.0f}"
        )
    rate = n / results["core replay"]
    verdict = "met" if rate >= GOAL_EVENTS_PER_S else "NOT met"
    print(
        f"\ncore replay: {rate:,.0f} events/s/core; goal >= {GOAL_EVENTS_PER_S:,}: {verdict} "
        f"({rate / GOAL_EVENTS_PER_S:.2f}x the goal)"
    )
    share = results["worker path"] - results["core replay"]
    print(
        f"worker path: {n / results['worker path']:,.0f} events/s/core; the core replay is "
        f"{results['core replay'] / results['worker path']:.0%} of it, rows -> Events "
        f"{results['row -> Event'] / results['worker path']:.0%}, the rest (output frames) "
        f"{max(0.0, share - results['row -> Event']) / results['worker path']:.0%}"
    )
    for name, profiler in (profilers or {}).items():
        print_profile(name, profiler, args.top)


if __name__ == "__main__":
    main()
