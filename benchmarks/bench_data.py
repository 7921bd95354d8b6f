"""Shared by the benchmarks: their inputs (made once by `rebalance-replay generate`, reused while the
arguments match), the Spark session they measure in, and step timings of the job. Not a benchmark
itself.

Inputs live under $REBALANCE_BENCH_DATA (default: <tmp>/rebalance-bench-data), never in the checkout.
"""

from __future__ import annotations

import json
import math
import multiprocessing
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def data_root() -> Path:
    return Path(
        os.environ.get("REBALANCE_BENCH_DATA") or Path(tempfile.gettempdir()) / "rebalance-bench-data"
    )


def dataset(
    *,
    events_target: int | None = None,
    single_group_events: int | None = None,
    days: int = 7,
    fmt: str = "events",
    seed: int = 0,
) -> Path:
    """A generator output directory with these arguments: reused when it exists (its manifest.json is
    written last, so a folder without one is an interrupted run and is made again)."""
    if single_group_events:
        stem, size = (
            f"single-{single_group_events}ev-seed{seed}",
            ["--single-group-events", str(single_group_events)],
        )
    else:
        stem, size = f"fleet-{events_target}ev-{days}d-seed{seed}", ["--events-target", str(events_target)]
    for made in (fmt, "both"):  # a folder with both formats serves either
        if (data_root() / f"{stem}-{made}" / "manifest.json").exists():
            return data_root() / f"{stem}-{made}"
    out = data_root() / f"{stem}-{fmt}"
    if out.exists():
        shutil.rmtree(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    command = [
        sys.executable, "-m", "jobs.cli", "generate", *size, "--days", str(days), "--seed", str(seed),
        "--format", fmt, "--out", str(out),
    ]  # fmt: skip
    print(f"making the input (once): {' '.join(command[1:])}", flush=True)
    started = time.monotonic()
    subprocess.run(command, check=True, cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)})
    print(f"  made in {time.monotonic() - started:.0f} s", flush=True)
    return out


BASE_FLEET_EVENTS = 1_000_000  # fleets larger than this are copies of this one (see tiled_fleet)


def fleet(events_target: int, days: int = 7, seed: int = 0) -> Path:
    """A fleet of canonical events of about `events_target` events (at least): generated up to
    BASE_FLEET_EVENTS, beyond that made of copies of that fleet (see tiled_fleet)."""
    if events_target <= BASE_FLEET_EVENTS:
        return dataset(events_target=events_target, days=days, fmt="events", seed=seed)
    base = dataset(events_target=BASE_FLEET_EVENTS, days=days, fmt="events", seed=seed)
    return tiled_fleet(base, math.ceil(events_target / manifest(base)["events"]))


def tiled_fleet(base: Path, copies: int) -> Path:
    """`copies` copies of the fleet in `base` as one input: copy k > 0 renames every cluster to
    "copy<k>-<cluster>" and every event id to "copy<k>-<event id>", so the copies are distinct groups
    with the same histories (same sizes, protocols and rebalances as the generated fleet) and no event
    is a duplicate of another. The generator makes a few thousand events per second per core (10M
    events: about an hour on this machine's 2 cores); copying takes minutes. Copy 0 is the base
    files, hard-linked."""
    out = data_root() / f"{base.name}-x{copies}"
    if (out / "manifest.json").exists():
        return out
    if out.exists():
        shutil.rmtree(out)
    files = sorted((base / "events").rglob("*.jsonl"))
    print(f"copying {base.name} {copies} times into {out} (once)", flush=True)
    started = time.monotonic()
    jobs = [(source, out / source.relative_to(base), k) for k in range(copies) for source in files]
    for _, target, _ in jobs:
        target.parent.mkdir(parents=True, exist_ok=True)
    with multiprocessing.Pool(os.cpu_count() or 1) as pool:
        pool.starmap(_copy_renamed, jobs, chunksize=4)
    info = manifest(base)
    info.update(
        tiled_from=str(base),
        copies=copies,
        groups=info["groups"] * copies,
        members=info["members"] * copies,
        events=info["events"] * copies,
        events_bytes=sum(p.stat().st_size for p in (out / "events").rglob("*.jsonl")),
        group_kinds={kind: n * copies for kind, n in info.get("group_kinds", {}).items()},
    )
    (out / "manifest.json").write_text(json.dumps(info, indent=1))
    print(f"  copied in {time.monotonic() - started:.0f} s", flush=True)
    return out


def _copy_renamed(source: Path, target: Path, copy: int) -> None:
    target = target.with_name(f"{target.stem}-copy{copy}{target.suffix}")
    if copy == 0:
        os.link(source, target)
        return
    prefix = f"copy{copy}-"
    with source.open(encoding="utf-8") as lines, target.open("w", encoding="utf-8") as out:
        for line in lines:  # the generator writes compact JSON: one "event_id" and one "cluster" key
            out.write(
                line.replace('"event_id":"', '"event_id":"' + prefix, 1).replace(
                    '"cluster":"', '"cluster":"' + prefix, 1
                )
            )


def manifest(folder: Path) -> dict:
    return json.loads((folder / "manifest.json").read_text())


# -------------------------------------------------------------------------------------------- Spark
def bench_spark(master: str = "local[2]", driver_memory: str = "4g", conf: dict[str, str] | None = None):
    """A fresh local session built by the job's own builder (jobs.spark_session.get_spark), with the
    job's defaults (shuffle partitions, Arrow batch size) and `driver_memory` (in local mode the driver
    is the executor)."""
    from jobs.config import SparkOptions
    from jobs.spark_session import get_spark

    options = SparkOptions(master=master, conf={"spark.driver.memory": driver_memory, **(conf or {})})
    return get_spark(options, app_name="rebalance-replay-benchmark")


def cpu_seconds() -> float:
    """CPU seconds (user + system) of this process and everything under it: the local JVM, its Python
    workers (live ones, and those it has reaped). On a shared machine these compare across runs where
    wall seconds do not."""
    import psutil

    total = 0.0
    own = psutil.Process()
    for process in (own, *own.children(recursive=True)):
        try:
            times = process.cpu_times()
        except psutil.NoSuchProcess:  # ended while listed: its time is in its parent's children_*
            continue
        total += times.user + times.system + times.children_user + times.children_system
    return total


class StepTimes:
    """A `progress` for jobs.replay.run that records how long each step took (same interface as the
    job's console progress: `with step(title):`, `note(title)`, `close()`)."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = {}
        self._open: tuple[str, float] | None = None

    @contextmanager
    def __call__(self, title: str) -> Iterator[None]:
        self.close()
        started = time.monotonic()
        try:
            yield
        finally:
            self._add(title, time.monotonic() - started)

    def note(self, title: str) -> None:
        self.close()
        self._open = (title, time.monotonic())

    def close(self) -> None:
        if self._open is not None:
            title, started = self._open
            self._open = None
            self._add(title, time.monotonic() - started)

    def _add(self, title: str, seconds: float) -> None:
        self.seconds[title] = self.seconds.get(title, 0.0) + seconds
