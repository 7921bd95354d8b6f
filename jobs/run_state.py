"""A run's life on its warehouse, so that nobody reads a half-written warehouse unknowingly.

Delta commits one table at a time: a run that stops (killed, crashed, out of memory) after some of its
commits leaves those tables ahead of the others. The job makes that visible and repairs it:

    lock               one run at a time on a folder warehouse: `<warehouse>/_lock`, an flock that the
                       OS releases when the process ends, even by SIGKILL; another run says who holds it
    record 'writing'   the run's run_accounting rows (status 'writing') are its first commit
    record 'finished'  the same rows (status 'finished', finished_at) are its last commit
    next run           finds runs whose record says 'writing', names the tables they committed (each
                       commit carries its run id in Delta's userMetadata), completes one whose dates and
                       scenarios it covers, refuses to build on one it would read group states from or
                       whose record it would overwrite, and removes what dead runs left behind: staging
                       folders and files moved into a table but never committed (jobs.delta_io)

The tests stop a run at a known step with `jobs.pause_points.checkpoint`.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import socket
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from jobs.usage import UsageError
from jobs.warehouse_location import local_folder
from rebalance_core.explain import EXPLAIN_TABLES
from schemas.tables import REPLAY_TABLES

LOCK_FILE = "_lock"
STATUS_WRITING = "writing"
STATUS_FINISHED = "finished"

# Every table a run writes (the core's, its state, and the job's own).
WRITTEN_TABLES = (
    "events",
    "quarantine",
    *REPLAY_TABLES,
    *EXPLAIN_TABLES,
    "coordinator_placement",
    "group_state",
    "run_accounting",
)
TABLES_WRITTEN_BY_ANY_RUN = (*WRITTEN_TABLES, "whatif_comparison")  # a what-if run adds its comparison


# --------------------------------------------------------------------------------------------- lock
_held: dict[str, tuple[int, int]] = {}  # lock path -> (file descriptor, holders in this process)


@contextmanager
def hold_warehouse(location: str, run_id: str) -> Iterator[None]:
    """One run at a time on a folder warehouse (re-entrant within a process). UsageError naming the
    holder when another process runs on it. Metastore and remote warehouses are not locked: there,
    Delta's own conflict detection fails one of two concurrent writers of a table."""
    folder = local_folder(location)
    try:
        import fcntl
    except ImportError:  # not a POSIX system: no lock
        folder = None
    if folder is None:
        yield
        return
    path = str(folder / LOCK_FILE)
    if path in _held:
        fd, holders = _held[path]
        _held[path] = (fd, holders + 1)
    else:
        try:
            folder.mkdir(parents=True, exist_ok=True)
            fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
        except OSError as exc:
            raise UsageError(f"cannot write the warehouse {folder}: {exc.strerror}") from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = _read_holder(path)
            os.close(fd)
            raise UsageError(
                f"another run is writing the warehouse {folder} ({holder}): wait until it ends, then run again"
            ) from None
        os.ftruncate(fd, 0)
        os.write(fd, json.dumps({"run_id": run_id, "pid": os.getpid(), "host": socket.gethostname(),
                                 "since": _now().isoformat(timespec="seconds")}).encode())  # fmt: skip
        _held[path] = (fd, 1)
    try:
        yield
    finally:
        fd, holders = _held[path]
        if holders == 1:
            del _held[path]
            os.close(fd)  # releases the flock
        else:
            _held[path] = (fd, holders - 1)


def _read_holder(path: str) -> str:
    try:
        doc = json.loads(Path(path).read_text() or "{}")
    except (OSError, ValueError):
        doc = {}
    if not doc:
        return "a run that has just started"
    return f"run {doc.get('run_id')}, pid {doc.get('pid')} on {doc.get('host')}, since {doc.get('since')}"


def _now() -> dt.datetime:
    return dt.datetime.now(dt.UTC)


# ----------------------------------------------------------------------------------- unfinished runs
@dataclass
class Unfinished:
    """A run whose run_accounting record still says 'writing': it stopped between its first and last
    commit. `ahead`: the tables holding its rows (the others hold the previous run's)."""

    run_id: str
    scenario: str
    dates: list[dt.date]
    scenarios: tuple[str, ...]  # every scenario it writes (a what-if run: 'actual' and its what-ifs)
    started_at: dt.datetime | None
    ahead: list[str] = field(default_factory=list)

    @property
    def date_text(self) -> str:
        first, last = min(self.dates), max(self.dates)
        return str(first) if first == last else f"{first} .. {last}"

    def describe(self) -> str:
        scenarios = f"scenario {self.scenario}" + (
            f" + what-if {', '.join(s for s in self.scenarios if s != self.scenario)}"
            if len(self.scenarios) > 1
            else ""
        )
        ahead = f"tables ahead: {', '.join(self.ahead)}" if self.ahead else "no table written yet"
        return f"run {self.run_id} on {self.date_text} ({scenarios}) did not finish; {ahead}"


def find_unfinished(spark, warehouse) -> list[Unfinished]:
    """Runs whose record in run_accounting says 'writing', with the tables they committed."""
    from pyspark.sql import functions as F

    from jobs.delta_io import commit_run_ids, read_table

    rows = (
        read_table(spark, warehouse, "run_accounting")
        .where(F.col("status") == STATUS_WRITING)
        .select("run_id", "scenario", "event_date", "started_at", "details")
        .collect()
    )
    return unfinished_runs(
        [row.asDict() for row in rows], lambda table: commit_run_ids(spark, warehouse, table)
    )


def find_unfinished_in_folder(location: str) -> list[Unfinished]:
    """find_unfinished for a folder warehouse read with delta-rs, without Spark (the `report` verb)."""
    from deltalake import DeltaTable

    from jobs.delta_io import Warehouse, commit_run_ids

    warehouse = Warehouse(location, metastore=False, writer="delta-rs")
    if not DeltaTable.is_deltatable(warehouse.path("run_accounting")):
        return []
    records = DeltaTable(warehouse.path("run_accounting")).to_pyarrow_table(
        columns=["run_id", "scenario", "event_date", "started_at", "details", "status"]
    )
    rows = [row for row in records.to_pylist() if row["status"] == STATUS_WRITING]
    return unfinished_runs(rows, lambda table: commit_run_ids(None, warehouse, table))


def unfinished_runs(rows: list[dict], committed) -> list[Unfinished]:
    """The runs of run_accounting `rows` saying 'writing' (run_id, scenario, event_date, started_at,
    details), each with the tables whose commits name it (`committed(table)`: the run ids of a table's
    commits)."""
    runs: dict[str, Unfinished] = {}
    for row in rows:
        run = runs.get(row["run_id"])
        if run is None:
            details = dict(row["details"] or {})  # Arrow reads a map as (key, value) pairs
            named = details.get("scenarios") or row["scenario"]
            scenarios = tuple(filter(None, named.split(",")))
            run = Unfinished(row["run_id"], row["scenario"], [], scenarios, row["started_at"])
            runs[row["run_id"]] = run
        run.dates.append(row["event_date"])
    if runs:
        tables = [t for t in TABLES_WRITTEN_BY_ANY_RUN if t != "run_accounting"]
        ids = {table: committed(table) for table in tables}
        for run in runs.values():
            run.ahead = [table for table in tables if run.run_id in ids[table]]
    return sorted(runs.values(), key=lambda r: (min(r.dates), r.run_id))


@dataclass
class Verdict:
    completing: list[Unfinished]  # this run rewrites all they wrote: it completes them
    blocking: list[Unfinished]  # this run would read their group states, or hide them
    elsewhere: list[Unfinished]  # other dates or scenarios: they stay unfinished


def judge(
    unfinished: list[Unfinished],
    scenario: str,
    scenarios: tuple[str, ...],
    date_from: dt.date,
    date_to: dt.date,
) -> Verdict:
    """What a run of `scenario` (writing `scenarios`) on date_from..date_to does about unfinished runs.
    Group states are per scenario and carried from the day before a run: a run of the same scenario
    on later dates would start from states the unfinished run may not have written; one on some of its
    dates would replace its record without rewriting all it wrote."""
    verdict = Verdict([], [], [])
    for run in unfinished:
        covered = all(date_from <= d <= date_to for d in run.dates) and set(run.scenarios) <= set(scenarios)
        if run.scenario == scenario and covered:
            verdict.completing.append(run)
        elif run.scenario == scenario and min(run.dates) <= date_to:
            verdict.blocking.append(run)
        else:
            verdict.elsewhere.append(run)
    return verdict


def blocking_message(run: Unfinished) -> str:
    verb = "whatif" if len(run.scenarios) > 1 else "run"
    first, last = min(run.dates), max(run.dates)
    dates = f"--date {first}" if first == last else f"--from {first} --to {last}"
    return (
        f"the {run.describe()}: complete it first (rebalance-replay {verb} {dates}, same input), "
        "this run would start from or overwrite what it left half-written"
    )
