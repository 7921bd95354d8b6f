"""The what-if report of a run: per group, the actual night next to each scenario.

    terminal (rich)   a table per group: rebalances, stop-the-world, partition-unavailable time, partitions
                      moved, revocations wasted; actual and each scenario with its change
    HTML + PNG        <folder>/whatif-<run id>/index.html with, per group, the same table and a picture:
                      bars of stop-the-world and partition-unavailable time per scenario, and the ownership
                      timeline of every partition (who consumed it when, gaps = unavailable) for the actual
                      night and the best scenario (least partition-unavailable time)

`collect_report` reads what it needs back from the written tables (whatif_comparison, then
partition_movements / assignments of the groups shown, and the what-if notes in anomalies), and whether
the warehouse is mid-run (a run that did not finish: its tables are ahead of the others, jobs.run_state),
which the report says first; `build_report` is the pure part (lists of rows in, a Report out), shared
by tests.
"""

from __future__ import annotations

import datetime as dt
import html
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from jobs.summary import duration, member_label
from rebalance_core.measures import plus_known
from schemas.tables import COMPARED_MEASURES

ACTUAL = "actual"
MEASURES = tuple(name for name, _kind in COMPARED_MEASURES)
LABELS = {
    "rebalances": "rebalances",
    "stw_ms": "stop-the-world",
    "partition_unavailable_ms": "partition-unavailable",
    "partitions_moved": "partitions moved",
    "revocations_wasted": "revocations wasted",
}
MAX_GROUPS = 20  # groups in a report: the costliest by actual partition-unavailable time
MAX_PARTITIONS = 48  # partitions drawn in an ownership timeline
NOTE_RULES = ("whatif_assumption", "whatif_not_applicable")


@dataclass
class Segment:
    """A partition consumed by `owner` (None: by nobody, unavailable) from `start` to `end` (epoch ms)."""

    partition: str
    owner: str | None
    start: int
    end: int


@dataclass
class GroupReport:
    cluster: str
    group_id: str
    totals: dict[str, dict[str, int | None]]  # scenario ('actual' first) -> measure -> total over the dates
    best: str | None = None  # the scenario with the least partition-unavailable time
    model_check_failed: str | None = None  # why as-actual does not reproduce the night: nothing ranked
    # the model check's line: "passed", "failed: ...", "not comparable: ..." (nothing ranked), "not run: ..."
    model_check: str | None = None
    ownership: dict[str, list[Segment]] = field(default_factory=dict)  # actual and best
    notes: list[str] = field(default_factory=list)

    @property
    def name(self) -> str:
        return f"{self.cluster}/{self.group_id}"


@dataclass
class Report:
    run_id: str
    date_from: dt.date
    date_to: dt.date
    scenarios: tuple[str, ...]
    groups: list[GroupReport]
    mid_run: list[str] = field(
        default_factory=list
    )  # runs that did not finish (run_state.Unfinished.describe)


# ----------------------------------------------------------------------------------- building
def build_report(
    run_id: str,
    date_from: dt.date,
    date_to: dt.date,
    scenarios: Iterable[str],
    comparison: Iterable[dict],
    movements: Iterable[dict] = (),
    assignments: Iterable[dict] = (),
    notes: Iterable[dict] = (),
    max_groups: int = MAX_GROUPS,
    baselines: Iterable[str] = (),
) -> Report:
    """A Report from whatif_comparison rows (and, for the groups shown, partition_movements, assignments
    and what-if anomaly rows; timestamps as epoch ms). `baselines`: scenarios that change nothing (model
    checks such as as-actual), never the best."""
    baselines = set(baselines)
    scenarios = tuple(scenarios)
    groups: dict[tuple[str, str], GroupReport] = {}
    dated: set[tuple] = set()  # (group, date) whose actual values are counted (every scenario repeats them)
    for row in comparison:
        key = (row["cluster"], row["group_id"])
        group = groups.get(key)
        if group is None:
            group = groups[key] = GroupReport(*key, totals={ACTUAL: {}, **{s: {} for s in scenarios}})
        status, detail = row.get("model_check"), row.get("model_check_detail")
        if status == "failed":
            group.model_check_failed = detail or "as-actual differs from the actual"
        elif status == "not_comparable":
            group.model_check_failed = f"not comparable: {detail}"
        if status:
            group.model_check = status.replace("_", " ") + (f": {detail}" if detail else "")
        scenario = group.totals.setdefault(row["scenario"], {})
        for name in MEASURES:
            value, so_far = row[f"{name}_scenario"], scenario.get(name, 0)
            scenario[name] = None if value is None or so_far is None else so_far + value
        if (key, row["event_date"]) not in dated:
            dated.add((key, row["event_date"]))
            for name in MEASURES:
                group.totals[ACTUAL][name] = plus_known(
                    group.totals[ACTUAL].get(name, 0), row[f"{name}_actual"]
                )
    shown = sorted(
        groups.values(), key=lambda g: (-(g.totals[ACTUAL].get("partition_unavailable_ms") or 0), g.name)
    )
    shown = shown[:max_groups]
    for group in shown:
        if group.model_check_failed is not None:
            # the what-if does not reproduce this group's night, or its view cannot show whether it does:
            # its scenarios' numbers are not ranked
            failed = group.model_check_failed
            if failed.startswith("not comparable: "):
                group.notes.append(f"model check {failed}; scenarios not ranked")
            else:
                group.notes.append(f"model check failed, scenarios not ranked: {failed}")
            continue
        group.best = best_scenario({s: t for s, t in group.totals.items() if s not in baselines})
    by_group = {(g.cluster, g.group_id): g for g in shown}
    wanted = {(g.cluster, g.group_id, s) for g in shown for s in (ACTUAL, g.best) if s}
    segments = ownership_segments(
        [r for r in movements if (r["cluster"], r["group_id"], r["scenario"]) in wanted],
        [r for r in assignments if (r["cluster"], r["group_id"], r["scenario"]) in wanted],
    )
    for (cluster, group_id, scenario), parts in segments.items():
        by_group[(cluster, group_id)].ownership[scenario] = parts
    for row in notes:
        group = by_group.get((row["cluster"], row["group_id"]))
        # an assumption holds for every scenario (shown once); a scenario that could not run is named
        if row["rule"] == "whatif_model_check_failed":
            continue  # said once per group above
        text = row["detail"] if row["rule"] == "whatif_assumption" else f"{row['scenario']}: {row['detail']}"
        if group is not None and text not in group.notes:
            group.notes.append(text)
    return Report(run_id, date_from, date_to, scenarios, shown)


def best_scenario(totals: dict[str, dict[str, int | None]]) -> str | None:
    """The scenario with the least partition-unavailable time, then stop-the-world, then rebalances;
    None when none does better than the actual night, none could run, or the actual night's measures are
    unknown (no line shows who owned what: nothing to be better than)."""
    order = ("partition_unavailable_ms", "stw_ms", "rebalances")

    def cost(measures: dict) -> tuple:
        return tuple(measures.get(name, 0) for name in order)

    actual = cost(totals.get(ACTUAL, {}))
    if None in actual:
        return None
    ran = [(s, t) for s, t in totals.items() if s != ACTUAL and t and None not in t.values()]
    best = min(ran, key=lambda item: cost(item[1]), default=None)
    return best[0] if best is not None and cost(best[1]) < actual else None


def ownership_segments(movements: Iterable[dict], assignments: Iterable[dict]) -> dict[tuple, list[Segment]]:
    """(cluster, group_id, scenario) -> who consumed each partition when: owners between movements, gaps
    from revoked_at to assigned_at; a partition that never moved belongs to its last assigned member."""
    moves: dict[tuple, dict[str, list[dict]]] = {}
    for row in movements:
        key = (row["cluster"], row["group_id"], row["scenario"])
        moves.setdefault(key, {}).setdefault(f"{row['topic']}-{row['partition']}", []).append(row)
    owners: dict[tuple, dict[str, tuple]] = {}
    for row in assignments:
        key = (row["cluster"], row["group_id"], row["scenario"])
        tp = f"{row['topic']}-{row['partition']}"
        seen = owners.setdefault(key, {}).get(tp)
        if seen is None or (row["generation_id"] or 0) >= seen[0]:
            owners[key][tp] = (row["generation_id"] or 0, row["member_id"])
    windows: dict[tuple, list[int]] = {}  # per group, over its scenarios: one time axis to compare on
    for key, parts in moves.items():
        instants = [
            r[name] for rows in parts.values() for r in rows for name in ("revoked_at", "assigned_at")
        ]
        windows.setdefault(key[:2], []).extend(t for t in instants if t is not None)
    out: dict[tuple, list[Segment]] = {}
    for key in set(moves) | set(owners):
        instants = windows.get(key[:2])
        if not instants:
            continue
        start, end = min(instants), max(instants)
        margin = max((end - start) // 20, 1000)
        start, end = start - margin, end + margin
        segments = []
        partitions = sorted(set(moves.get(key, {})) | set(owners.get(key, {})), key=_partition_order)
        for tp in partitions[:MAX_PARTITIONS]:
            segments.extend(
                _partition_segments(
                    tp, moves.get(key, {}).get(tp, []), owners.get(key, {}).get(tp), start, end
                )
            )
        out[key] = segments
    return out


def _partition_segments(
    tp: str, rows: list[dict], last_owner: tuple | None, start: int, end: int
) -> list[Segment]:
    rows = sorted(rows, key=lambda r: r["revoked_at"])
    if not rows:
        return [Segment(tp, member_label(last_owner[1]), start, end)] if last_owner else []
    out, since = [], start
    for row in rows:
        out.append(Segment(tp, member_label(row["from_member_id"]), since, row["revoked_at"]))
        back = row["assigned_at"] if row["assigned_at"] is not None else end
        out.append(Segment(tp, None, row["revoked_at"], back))
        since = back
    last = rows[-1]
    if last["assigned_at"] is not None:
        out.append(Segment(tp, member_label(last["to_member_id"]), since, end))
    return [s for s in out if s.end > s.start]


def _partition_order(tp: str) -> tuple:
    topic, _, number = tp.rpartition("-")
    return (topic, int(number) if number.isdigit() else 0)


# ----------------------------------------------------------------------------------- collecting
def collect_report(
    spark,
    config,
    result,
    scenarios: tuple[str, ...],
    baselines: Iterable[str] = (),
    max_groups: int = MAX_GROUPS,
) -> Report:
    """The report of a what-if run, read back from its warehouse (`result`: jobs.replay.RunResult)."""
    from pyspark.sql import functions as F

    from jobs.delta_io import open_warehouse, read_table
    from jobs.run_state import find_unfinished

    warehouse = open_warehouse(spark, config.warehouse, config.delta_writer)
    mid_run = [run.describe() for run in find_unfinished(spark, warehouse)]
    dates = (F.col("event_date") >= F.lit(result.date_from)) & (F.col("event_date") <= F.lit(result.date_to))
    chosen = F.col("scenario").isin(list(scenarios))
    comparison = [
        r.asDict() for r in read_table(spark, warehouse, "whatif_comparison").where(dates & chosen).collect()
    ]
    report = build_report(
        result.run_id,
        result.date_from,
        result.date_to,
        scenarios,
        comparison,
        max_groups=max_groups,
        baselines=baselines,
    )
    report.mid_run = mid_run
    if not report.groups:
        return report
    shown = F.lit(False)
    for g in report.groups:
        shown = shown | ((F.col("cluster") == g.cluster) & (F.col("group_id") == g.group_id))
    wanted = F.col("scenario").isin([ACTUAL, *{g.best for g in report.groups if g.best}])

    def rows(table: str, where) -> list[dict]:
        frame = read_table(spark, warehouse, table).where(dates & shown & where)
        return [_epoch_ms(r.asDict()) for r in frame.collect()]

    report = build_report(
        result.run_id,
        result.date_from,
        result.date_to,
        scenarios,
        comparison,
        movements=rows("partition_movements", wanted),
        assignments=rows("assignments", wanted),
        notes=rows("anomalies", F.col("rule").isin(list(NOTE_RULES))),
        max_groups=max_groups,
        baselines=baselines,
    )
    report.mid_run = mid_run
    return report


def _epoch_ms(row: dict) -> dict:
    from rebalance_core.events import parse_ts

    return {k: parse_ts(v) if isinstance(v, dt.datetime) else v for k, v in row.items()}


# ------------------------------------------------------------------------------------ terminal
def print_comparison(console, report: Report) -> None:
    """Per group: actual, then each scenario with its change (green: less, red: more)."""
    from rich import box
    from rich.table import Table

    for text in report.mid_run:
        console.print(f"[red]warehouse mid-run:[/] the {text}; the other tables hold the previous run's rows")
    if not report.groups:
        console.print("what-if: no group to compare")
        return
    for g in report.groups:
        table = Table(title=f"what-if {g.name}", box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False)
        table.add_column("scenario", no_wrap=True)
        for name in MEASURES:
            table.add_column(SHORT[name], justify="right", no_wrap=True)
        actual = g.totals[ACTUAL]
        table.add_row(ACTUAL, *[_value(name, actual.get(name)) for name in MEASURES])
        for scenario in report.scenarios:
            totals = g.totals.get(scenario, {})
            label = f"{scenario} *" if scenario == g.best else scenario
            table.add_row(
                label, *[_changed(name, actual.get(name), totals.get(name), rich=True) for name in MEASURES]
            )
        console.print(table)
        if g.model_check is not None and g.model_check_failed is None:
            console.print(f"  [dim]model check (as-actual vs actual): {g.model_check}[/]")
        for note in g.notes:
            console.print(f"  [dim]{note}[/]")
    console.print("[dim]* best: least partition-unavailable time. Changes: scenario - actual.[/]")


SHORT = {
    "rebalances": "rebal.",
    "stw_ms": "stop-the-world",
    "partition_unavailable_ms": "unavailable",
    "partitions_moved": "moved",
    "revocations_wasted": "wasted",
}


def _value(name: str, value) -> str:
    if value is None:
        return "n/a"
    return duration(value) if name.endswith("_ms") else str(value)


def _changed(name: str, actual, value, rich: bool = False) -> str:
    """'0 ms -74 ms': the scenario's value and its change (none shown when equal)."""
    if value is None:
        return "n/a"
    if actual is None:  # the actual replay does not know it: no change to show
        return _value(name, value)
    delta = value - actual
    if delta == 0:
        return _value(name, value)
    amount = duration(abs(delta)) if name.endswith("_ms") else str(abs(delta))
    change = f"{'+' if delta > 0 else '-'}{amount}"
    if rich:
        change = f"[{'red' if delta > 0 else 'green'}]{change}[/]"
    return f"{_value(name, value)} {change}"


# ---------------------------------------------------------------------------------------- HTML
def write_report(folder: str | Path, report: Report) -> Path:
    """<folder>/whatif-<run id>/index.html and one PNG per group; returns the page's path."""
    out = Path(folder) / f"whatif-{report.run_id}"
    out.mkdir(parents=True, exist_ok=True)
    sections = []
    for index, g in enumerate(report.groups):
        picture = f"group-{index + 1:02d}.png"
        draw_group(g, report.scenarios, out / picture)
        sections.append(_group_html(g, report.scenarios, picture))
    dates = str(report.date_from) + (f" .. {report.date_to}" if report.date_to != report.date_from else "")
    body = "\n".join(sections) or "<p>No group had events in the run's dates.</p>"
    warnings = "".join(
        f'<p class="worse"><b>Warehouse mid-run:</b> the {html.escape(text)}; the other tables hold the '
        "previous run's rows.</p>\n"
        for text in report.mid_run
    )
    page = out / "index.html"
    page.write_text(
        f"""<!doctype html>
<html><head><meta charset="utf-8"><title>What-if {html.escape(report.run_id)}</title>
<style>
body {{ font-family: system-ui, sans-serif; margin: 2em; color: #222; }}
table {{ border-collapse: collapse; margin: 0.5em 0 1em; }}
th, td {{ padding: 0.2em 0.8em; text-align: right; border-bottom: 1px solid #ddd; }}
th:first-child, td:first-child {{ text-align: left; }}
.better {{ color: #1a7f37; }} .worse {{ color: #cf222e; }} .note {{ color: #666; font-size: 0.9em; }}
img {{ max-width: 100%; }}
</style></head><body>
<h1>What-if: {html.escape(dates)}</h1>
<p>Run {html.escape(report.run_id)}. Each scenario replays the group's own membership timeline (joins, leaves,
crashes, restarts, pauses, extracted from its events) under other settings; changes are scenario - actual.
Scenario <code>as-actual</code>, when present, shows the replay's own error.</p>
{warnings}{body}
</body></html>
""",
        encoding="utf-8",
    )
    return page


def _group_html(g: GroupReport, scenarios: tuple[str, ...], picture: str) -> str:
    head = "".join(f"<th>{html.escape(LABELS[name])}</th>" for name in MEASURES)
    actual = g.totals[ACTUAL]
    rows = [
        f"<tr><td>{ACTUAL}</td>" + "".join(f"<td>{_value(n, actual.get(n))}</td>" for n in MEASURES) + "</tr>"
    ]
    for scenario in scenarios:
        totals = g.totals.get(scenario, {})
        cells = []
        for name in MEASURES:
            value, was = totals.get(name), actual.get(name)
            css = (
                "" if value is None or was is None or value == was else ("better" if value < was else "worse")
            )
            cells.append(f'<td class="{css}">{html.escape(_changed(name, was, value))}</td>')
        label = html.escape(scenario) + (" (best)" if scenario == g.best else "")
        rows.append(f"<tr><td>{label}</td>{''.join(cells)}</tr>")
    notes = "".join(f'<li class="note">{html.escape(n)}</li>' for n in g.notes)
    return (
        f"<h2>{html.escape(g.name)}</h2>\n<table><tr><th>scenario</th>{head}</tr>{''.join(rows)}</table>\n"
        f'<img src="{picture}" alt="stop-the-world, partition-unavailable time and ownership of {html.escape(g.name)}">'
        + (f"<ul>{notes}</ul>" if notes else "")
    )


def draw_group(g: GroupReport, scenarios: tuple[str, ...], path: Path) -> None:
    """Bars of stop-the-world and partition-unavailable time per scenario; ownership timelines of the
    actual night and the best scenario."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    timelines = [s for s in (ACTUAL, g.best) if s and g.ownership.get(s)]
    fig = plt.figure(figsize=(12, 3.2 + 2.6 * len(timelines)), layout="constrained")
    grid = fig.add_gridspec(1 + len(timelines), 2, height_ratios=[1.0] + [1.3] * len(timelines))
    names = [ACTUAL, *scenarios]
    for column, measure in enumerate(("stw_ms", "partition_unavailable_ms")):
        ax = fig.add_subplot(grid[0, column])
        known = [g.totals.get(s, {}).get(measure) for s in names]
        values = [0 if v is None else v / 1000 for v in known]
        colours = ["#57606a"] + ["#1a7f37" if s == g.best else "#0969da" for s in scenarios]
        ax.barh(names[::-1], values[::-1], color=colours[::-1])
        ax.set_xlim(0, max(values) * 1.05 or 1)
        for y, v in enumerate(known[::-1]):
            if v is None:  # the replay does not know it (no line shows who owned what): no bar, said so
                ax.text(0, y, " unknown", va="center", fontsize=8, color="#57606a")
        ax.set_title(f"{LABELS[measure]} (s)", fontsize=10)
        ax.tick_params(labelsize=8)
    owners = sorted({s.owner for name in timelines for s in g.ownership[name] if s.owner})
    palette = plt.get_cmap("tab20")
    colour = {owner: palette(i % 20) for i, owner in enumerate(owners)}
    for row, scenario in enumerate(timelines, start=1):
        ax = fig.add_subplot(grid[row, :])
        segments = g.ownership[scenario]
        partitions = sorted({s.partition for s in segments}, key=_partition_order)
        origin = min(s.start for s in segments)
        for y, tp in enumerate(partitions):
            for s in (s for s in segments if s.partition == tp):
                ax.broken_barh(
                    [((s.start - origin) / 1000, (s.end - s.start) / 1000)],
                    (y - 0.4, 0.8),
                    facecolors=colour[s.owner] if s.owner else "white",
                    edgecolors="#cf222e" if s.owner is None else "none",
                )
        ax.set_yticks(range(len(partitions)), partitions, fontsize=7)
        ax.invert_yaxis()
        ax.set_xlabel(
            f"seconds after {dt.datetime.fromtimestamp(origin / 1000, dt.UTC):%Y-%m-%d %H:%M:%S} UTC",
            fontsize=8,
        )
        ax.set_title(f"ownership, {scenario} (white with red edge: unavailable)", fontsize=10)
    if owners and timelines:
        handles = [plt.Rectangle((0, 0), 1, 1, color=colour[o]) for o in owners[:20]]
        fig.legend(handles, owners[:20], loc="outside lower center", ncols=min(len(owners), 6), fontsize=7)
    fig.suptitle(g.name, fontsize=12)
    fig.savefig(path, dpi=110)
    plt.close(fig)
