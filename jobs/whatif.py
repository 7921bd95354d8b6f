"""`rebalance-replay whatif` / `spark-submit jobs/whatif.py`: the actual replay and what-if scenarios in
one pass (rebalance_core.whatif).

    rebalance-replay whatif                                   # every scenario of conf/whatif.yaml
    rebalance-replay whatif --scenario cooperative-sticky --scenario static-membership --date 2024-11-08
    rebalance-replay whatif --scenarios my-whatif.yaml --conf conf/nightly.yaml --report ./reports

It is `rebalance-replay run` (same options, same reading, validation and writing: jobs.replay) whose
mapInPandas pass also gives each group a `GroupWhatIf`: the group's events feed the actual replayer and
the timeline extraction side by side; when the group ends, every scenario is simulated and replayed, and
its rows (scenario = its name) and the whatif_comparison rows join the actual ones. Each scenario's rows
replace that scenario's rows of the run's dates. Then a report per run: the comparison as a terminal
table and an HTML page with pictures next to the tables (jobs.report).
"""

from __future__ import annotations

import argparse
import datetime as dt
import functools
import os
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, replace
from pathlib import Path

if __name__ == "__main__" and not __package__:  # spark-submit jobs/whatif.py from a checkout
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from jobs import replay as replay_job
from jobs.report import Report, collect_report, print_comparison, write_report
from jobs.usage import UsageError
from rebalance_core.whatif import ACTUAL, WhatIfConfig, WhatIfError, load_whatif

DEFAULT_SCENARIOS = Path(__file__).resolve().parents[1] / "conf" / "whatif.yaml"
COMPARISON = "whatif_comparison"
REPORT_FOLDER = "_reports"  # next to the tables of a folder warehouse


def configure(parser: argparse.ArgumentParser) -> None:
    replay_job.configure(parser, scenario_option=False)  # the replay of what happened is 'actual'
    parser.add_argument(
        "--scenario",
        dest="scenario_names",
        action="append",
        metavar="NAME",
        help="a scenario of the what-if file to run (repeatable; default: all of them)",
    )
    parser.set_defaults(scenario=None)
    parser.add_argument(
        "--scenarios",
        dest="scenarios_file",
        metavar="FILE",
        help=f"what-if scenarios (YAML, default: {DEFAULT_SCENARIOS.relative_to(DEFAULT_SCENARIOS.parents[1])})",
    )
    parser.add_argument(
        "--report",
        metavar="DIR",
        help=f"where the HTML report goes (default: <warehouse>/{REPORT_FOLDER}, or ./reports for a metastore)",
    )


def load_scenarios(path: str | Path | None, names: list[str] | None) -> WhatIfConfig:
    """The what-if file (default conf/whatif.yaml), narrowed to `names`; UsageError if unusable."""
    import yaml

    file = Path(path) if path else DEFAULT_SCENARIOS
    try:
        doc = yaml.safe_load(file.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise UsageError(f"what-if file not found: {file} (give one with --scenarios)") from None
    except OSError as exc:
        raise UsageError(f"cannot read what-if file {file}: {exc.strerror or exc}") from None
    except yaml.YAMLError as exc:
        raise UsageError(f"what-if file {file} is not valid YAML: {' '.join(str(exc).split())}") from None
    try:
        return load_whatif(doc).select(names)
    except WhatIfError as exc:
        raise UsageError(f"{file}: {exc}") from None


def main(args: argparse.Namespace) -> int:
    from rich.console import Console

    from jobs.failures import discard_log, job_log
    from jobs.input import resolve_input
    from jobs.spark_session import get_spark

    config = replay_job.config_from_args(args)
    whatif_config = load_scenarios(args.scenarios_file, args.scenario_names)
    resolve_input(config.input_path, config.input_format)  # a wrong path fails before Spark starts
    console = Console()
    started = time.monotonic()
    job_log(config.warehouse)  # the JVM's output, and the details of a failure (jobs.failures)
    with console.status("starting Spark"):
        spark = get_spark(config.spark)
    result = run(spark, config, whatif_config, progress=replay_job.Progress(console))
    replay_job.print_summary(console, result.run, time.monotonic() - started)
    print_comparison(console, result.report)
    folder = Path(args.report) if args.report else _report_folder(config)
    page = write_report(folder, result.report)
    console.print(f"report: {page}")
    discard_log()  # kept for failures only
    return 0


# ------------------------------------------------------------------------------------------ the run
@dataclass
class WhatIfResult:
    run: replay_job.RunResult
    report: Report


def run(spark, config, whatif_config: WhatIfConfig, progress=None) -> WhatIfResult:
    """`jobs.replay.run` with the what-if pass; the report's data is read back from the written tables."""
    if config.scenario != ACTUAL:
        raise UsageError("the actual rows of a what-if run are scenario 'actual'; --scenario picks what-ifs")
    group_pass = WhatIfPass(whatif_config)
    result = replay_job.run(spark, config, progress=progress, group_pass=group_pass)
    baselines = [s.name for s in whatif_config.scenarios if s.changes_nothing]
    report = collect_report(spark, config, result, group_pass.scenarios, baselines)
    return WhatIfResult(result, report)


@dataclass(frozen=True)
class WhatIfPass:
    """What jobs.replay.run needs to run the what-if in its replay pass: the mapInPandas function and its
    schema, and the extra scenarios and tables to write."""

    config: WhatIfConfig

    @property
    def scenarios(self) -> tuple[str, ...]:
        return tuple(s.name for s in self.config.scenarios)

    tables = (
        "generations",
        "assignments",
        "partition_movements",
        "rebalance_episodes",
        "group_daily_summary",
        "anomalies",
        COMPARISON,
    )

    def partition(self, settings, date_from: dt.date, date_to: dt.date):
        return functools.partial(
            whatif_partition, settings=settings, config=self.config, date_from=date_from, date_to=date_to
        )

    def schema(self):
        from jobs.replay_batches import wire_columns
        from schemas.fields import spark_schema

        return spark_schema(wire_columns(WHATIF_OUTPUT_COLUMNS))


def _whatif_output_columns():
    from jobs.replay_batches import OUTPUT_COLUMNS
    from schemas.tables import TABLES

    known = {c.name for c in OUTPUT_COLUMNS}
    return (*OUTPUT_COLUMNS, *(c for c in TABLES[COMPARISON] if c.name not in known))


WHATIF_OUTPUT_COLUMNS = _whatif_output_columns()
WHATIF_OUTPUT_NAMES = [c.name for c in WHATIF_OUTPUT_COLUMNS]


def whatif_partition(batches: Iterator, settings, config: WhatIfConfig, date_from: dt.date, date_to: dt.date):
    """mapInPandas function: `jobs.replay_batches.replay_partition` (the actual replay) with each group's
    events also fed to a GroupWhatIf. A group's `group_state` row is the last the actual replay emits for
    it: then its scenarios run, given its actual daily rows."""
    import pandas as pd

    from jobs.replay_batches import RowSink, batch_events, replay_partition
    from rebalance_core.whatif import GroupWhatIf

    sides: dict[tuple[str, str], GroupWhatIf] = {}
    actual_daily: dict[tuple[str, str], list[dict]] = {}

    def teed() -> Iterator[pd.DataFrame]:
        for batch in batches:
            for event in batch_events(batch):
                if event is None:  # a group's previous state
                    continue
                key = (event.cluster, event.group_id)
                side = sides.get(key)
                if side is None:
                    side = sides[key] = GroupWhatIf(key[0], key[1], config, settings)
                side.feed([event])
            yield batch

    for frame in replay_partition(teed(), settings, date_from, date_to):
        daily = frame[frame["_table"] == "group_daily_summary"]
        for row in daily.to_dict("records"):
            actual_daily.setdefault((row["cluster"], row["group_id"]), []).append(row)
        yield _output_frame(frame)
        finished = frame.loc[frame["_table"] == "group_state", ["cluster", "group_id"]]
        for key in map(tuple, finished.to_numpy().tolist()):
            side = sides.pop(key, None)
            if side is None:  # a group with a previous state and no event in the run
                continue
            tables = side.finish(actual_daily.pop(key, []))
            comparison = [r for r in tables.pop(COMPARISON) if date_from <= r["event_date"] <= date_to]
            for scenario in config.scenarios:
                sink = RowSink(replace(settings, scenario=scenario.name), date_from, date_to)
                sink.add(
                    {
                        name: [r for r in rows if r["scenario"] == scenario.name]
                        for name, rows in tables.items()
                    }
                )
                scenario_frame = sink.flush()
                if scenario_frame is not None:
                    yield _output_frame(scenario_frame)
            if comparison:
                # None, not NaN, in the other tables' columns: Arrow turns no NaN into a string or list
                rows = [
                    {name: r.get(name) for name in WHATIF_OUTPUT_NAMES} | {"_table": COMPARISON}
                    for r in comparison
                ]
                yield pd.DataFrame.from_records(rows, columns=WHATIF_OUTPUT_NAMES)


def _output_frame(frame):
    """The frame with every output column: the comparison's own columns (model check, moments: strings
    and lists) as None objects in the replay tables' rows, not reindex's NaN, which Arrow turns into no
    string or list."""
    import pandas as pd

    out = frame.reindex(columns=WHATIF_OUTPUT_NAMES)
    for column in WHATIF_OUTPUT_COLUMNS:
        if column.name not in frame.columns and column.type in ("string", "array<string>"):
            out[column.name] = pd.Series([None] * len(out), index=out.index, dtype=object)
    return out


def _report_folder(config) -> Path:
    from jobs.warehouse_location import is_metastore_schema

    if is_metastore_schema(config.warehouse):
        return Path("reports")
    return Path(config.warehouse.removeprefix("file://")).expanduser() / REPORT_FOLDER


if __name__ == "__main__":
    from jobs.cli import main as cli_main

    sys.exit(cli_main(["whatif", *sys.argv[1:]]))
