"""`rebalance-replay report`: the summary of an existing warehouse, reprinted without rerunning the job
(and without Spark: the Delta tables are read with delta-rs); `--html DIR` also writes the HTML report.

    rebalance-replay report --warehouse ./warehouse --from 2024-11-01 --to 2024-11-08 --html report/
"""

from __future__ import annotations

import argparse
import datetime as dt
from pathlib import Path

from jobs.usage import UsageError

SCENARIO = "actual"


def configure(parser: argparse.ArgumentParser) -> None:
    from jobs.config import parse_date

    where = parser.add_mutually_exclusive_group()
    where.add_argument(
        "--warehouse", metavar="DIR", help="folder of Delta tables (default: the conf's, ./warehouse)"
    )
    where.add_argument("--conf", metavar="FILE", help="YAML settings whose `warehouse` to read")
    parser.add_argument("--date", type=parse_date, metavar="YYYY-MM-DD", help="this UTC date only")
    parser.add_argument(
        "--from", dest="date_from", type=parse_date, metavar="YYYY-MM-DD", help="first UTC date"
    )
    parser.add_argument("--to", dest="date_to", type=parse_date, metavar="YYYY-MM-DD", help="last UTC date")
    parser.add_argument("--group", metavar="G", help="only this group (group id, or cluster/group id)")
    parser.add_argument("--html", metavar="DIR", help="also write an HTML report (index.html) into DIR")


def main(args: argparse.Namespace) -> int:
    from rich.console import Console

    from jobs.run_state import find_unfinished_in_folder
    from jobs.summary import build_summary, print_summary

    if args.date and (args.date_from or args.date_to):
        raise UsageError("give --date or --from/--to, not both")
    date_from, date_to = (args.date, args.date) if args.date else (args.date_from, args.date_to)
    if date_from and date_to and date_from > date_to:
        raise UsageError(f"--from {date_from} is after --to {date_to}")
    reader = WarehouseReader(_location(args), date_from, date_to, args.group)
    daily = reader.rows("group_daily_summary")
    episodes = reader.rows("rebalance_episodes")
    assigned = {(r["cluster"], r["group_id"]) for r in reader.rows("assignments", ["cluster", "group_id"])}
    summary = build_summary(daily, episodes, assigned_groups=assigned)
    mid_run = [run.describe() for run in find_unfinished_in_folder(reader.location)]
    console = Console()
    console.print(f"{reader.location} ({reader.dates_text()}{f', group {args.group}' if args.group else ''})")
    for text in mid_run:  # tables ahead of the others: figures joining them mix two runs
        line = f"[red]warehouse mid-run:[/] the {text}; the other tables hold the previous run's rows"
        console.print(line, soft_wrap=True)  # one line, whatever the terminal's width
    print_summary(console, summary)
    if args.html:
        from jobs.report_html import ReportData, write_html

        data = ReportData(
            title=f"Rebalances {reader.dates_text()}",
            summary=summary,
            episodes=episodes,
            movements=reader.rows("partition_movements"),
            assignments=reader.rows("assignments"),
            incidents=reader.rows("rebalance_incidents") if reader.has("rebalance_incidents") else None,
            daily=daily,
            mid_run=mid_run,
        )
        page = write_html(args.html, data)
        console.print(f"wrote {page}")
    return 0


def _location(args: argparse.Namespace) -> str:
    from jobs.config import load_config
    from jobs.warehouse_location import is_metastore_schema

    location = args.warehouse or load_config(args.conf).warehouse
    if is_metastore_schema(location):
        raise UsageError(
            f"warehouse {location!r} is a metastore schema: report reads folders; open the notebook "
            "(notebooks/rebalance_report.py) on the cluster instead"
        )
    if "://" in location and not location.startswith("file://"):
        raise UsageError(f"warehouse {location!r}: report reads local folders only")
    return str(Path(location.removeprefix("file://")).expanduser().resolve())


class WarehouseReader:
    """The rows of a folder warehouse's tables (delta-rs, no Spark), of the `actual` scenario, the
    dates and the group asked for; timestamps as UTC epoch milliseconds."""

    def __init__(self, location: str, date_from: dt.date | None, date_to: dt.date | None, group: str | None):
        from deltalake import DeltaTable

        self.location, self.date_from, self.date_to, self.group = location, date_from, date_to, group
        if not Path(location).is_dir():
            raise UsageError(f"no warehouse at {location}: run `rebalance-replay run` first")
        if not DeltaTable.is_deltatable(str(Path(location) / "group_daily_summary")):
            raise UsageError(f"{location} has no group_daily_summary table: run `rebalance-replay run` first")

    def has(self, table: str) -> bool:
        from deltalake import DeltaTable

        return DeltaTable.is_deltatable(str(Path(self.location) / table))

    def dates_text(self) -> str:
        if self.date_from is None and self.date_to is None:
            return "all dates"
        if self.date_from == self.date_to:
            return str(self.date_from)
        return f"{self.date_from or '...'} .. {self.date_to or '...'}"

    def rows(self, table: str, columns: list[str] | None = None) -> list[dict]:
        """The table's rows as dicts ([] when the table does not exist: older or partial warehouses)."""
        import pyarrow.compute as pc
        import pyarrow.dataset as ds
        from deltalake import DeltaTable
        from deltalake.exceptions import DeltaError

        from rebalance_core.events import parse_ts

        if not self.has(table):
            return []
        try:
            dataset = DeltaTable(str(Path(self.location) / table)).to_pyarrow_dataset()
        except DeltaError as exc:  # e.g. deletion vectors (a Delta-Spark table delta-rs cannot read)
            raise UsageError(f"cannot read {table} with delta-rs: {str(exc).splitlines()[0]}") from None
        names = set(dataset.schema.names)
        condition = ds.field("scenario") == SCENARIO if "scenario" in names else None
        for bound, test in ((self.date_from, pc.greater_equal), (self.date_to, pc.less_equal)):
            if bound is not None and "event_date" in names:
                clause = test(ds.field("event_date"), pc.scalar(bound))
                condition = clause if condition is None else condition & clause
        if self.group and "group_id" in names:
            # a group id may itself contain '/': match it whole, or as cluster/group id
            clause = ds.field("group_id") == self.group
            cluster, slash, group_id = self.group.partition("/")
            if slash:
                clause = clause | ((ds.field("cluster") == cluster) & (ds.field("group_id") == group_id))
            condition = clause if condition is None else condition & clause
        wanted = [c for c in columns if c in names] if columns else None
        rows = dataset.to_table(columns=wanted, filter=condition).to_pylist()
        return [{k: parse_ts(v) if isinstance(v, dt.datetime) else v for k, v in r.items()} for r in rows]
