"""`rebalance-replay report --html DIR`: a self-contained HTML report of a warehouse (pictures are inline
SVG data URIs: the folder opens anywhere, offline).

    index.html        the summary table, rebalances per group per hour (heatmap), incidents on a time
                      line (when the warehouse has rebalance_incidents), the worst rebalances, links
    group-NN.html     per group: who consumed each partition when (gaps = unavailable), stop-the-world
                      of each rebalance over time, causes (else the reasons Kafka logged)

`write_html` is pure apart from writing files: rows in (epoch ms or datetimes), pages out.
"""

from __future__ import annotations

import datetime as dt
import html
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from jobs import svg
from jobs.summary import RunSummary, duration, episode_duration, shorten_middle, utc_text
from rebalance_core.events import parse_ts

MAX_HEATMAP_GROUPS = 40
MAX_BUCKETS = 240  # heatmap columns: hours, or longer buckets over long ranges
HOUR_MS = 3_600_000
MAX_GROUP_PAGES = 200  # group pages written (the worst groups); the index lists every group
SCENARIO = "actual"  # the report's rows are the actual replay's (ownership_segments keys by scenario)
NAME_WIDTH = 48  # characters of a group name in tables and pictures (shortened in the middle)


@dataclass
class ReportData:
    """What the pages show: the summary and the rows of the dates and groups reported (one scenario)."""

    title: str
    summary: RunSummary
    episodes: list[dict]
    movements: list[dict] = field(default_factory=list)
    assignments: list[dict] = field(default_factory=list)
    incidents: list[dict] | None = None  # None: the warehouse has no rebalance_incidents table
    daily: list[dict] = field(default_factory=list)
    mid_run: list[str] = field(default_factory=list)  # unfinished runs (jobs.run_state.Unfinished.describe)


def write_html(folder: str | Path, data: ReportData) -> Path:
    """index.html and one page per group in `folder`; returns index.html's path."""
    from jobs.report import ownership_segments

    out = Path(folder)
    out.mkdir(parents=True, exist_ok=True)
    episodes = [_epoch_ms(r) for r in data.episodes]
    paged = data.summary.groups[:MAX_GROUP_PAGES]  # the worst first
    pages = {g.name: f"group-{index + 1:03d}.html" for index, g in enumerate(paged)}

    def by_group(rows: Iterable[dict]) -> dict[str, list[dict]]:
        grouped: dict[str, list[dict]] = {}
        for row in rows:
            name = _name(row.get("cluster"), row["group_id"])
            if name in pages:
                grouped.setdefault(name, []).append(row)
        return grouped

    movements, assignments = by_group(data.movements), by_group(data.assignments)
    segments = ownership_segments(
        [{**_epoch_ms(r), "scenario": SCENARIO} for rows in movements.values() for r in rows],
        [{**r, "scenario": SCENARIO} for rows in assignments.values() for r in rows],
    )
    ownership = {_name(cluster, gid): parts for (cluster, gid, _scenario), parts in segments.items()}
    group_episodes, group_days = by_group(episodes), by_group(data.daily)
    for group in paged:
        reasons = Counter()
        for row in group_days.get(group.name, []):
            reasons.update(dict(row.get("reasons") or {}))
        page = _group_page(
            data, group, ownership.get(group.name, []), group_episodes.get(group.name, []), reasons
        )
        (out / pages[group.name]).write_text(page, encoding="utf-8")
    index_page = out / "index.html"
    index_page.write_text(_index_page(data, episodes, pages), encoding="utf-8")
    return index_page


def _name(cluster, group_id) -> str:
    return f"{cluster}/{group_id}" if cluster else group_id


def _epoch_ms(row: dict) -> dict:
    return {k: parse_ts(v) if isinstance(v, dt.datetime) else v for k, v in row.items()}


def _episode_instant(row: dict) -> int | None:
    return row.get("started_at") if row.get("started_at") is not None else row.get("stabilized_at")


# ------------------------------------------------------------------------------------------------ pages
_STYLE = """
body { font-family: system-ui, sans-serif; margin: 2em; color: #222; max-width: 1300px; }
table { border-collapse: collapse; margin: 0.5em 0 1.5em; }
th, td { padding: 0.2em 0.8em; text-align: right; border-bottom: 1px solid #ddd; }
td { white-space: nowrap; }
th:first-child, td:first-child { text-align: left; }
td.text { text-align: left; }
img { display: block; margin: 0.5em 0 1.5em; max-width: 100%; }
.note { color: #666; }
"""
# Marks each page once its pictures are loaded (what the browser test reads from the DOM).
_LOADED = """<script>
window.addEventListener("load", function () {
  var images = Array.prototype.slice.call(document.images);
  var ok = images.filter(function (i) { return i.complete && i.naturalWidth > 0; });
  document.body.setAttribute("data-images", ok.length + "/" + images.length);
});
</script>"""


def _page(title: str, body: str) -> str:
    return (
        f'<!doctype html>\n<html><head><meta charset="utf-8"><title>{html.escape(title)}</title>'
        f"<style>{_STYLE}</style></head><body>\n{body}\n{_LOADED}\n</body></html>\n"
    )


def _img(picture: svg.Svg) -> str:
    return f'<img src="{picture.data_uri()}" alt="{html.escape(picture.title)}" width="{picture.width}">'


def _index_page(data: ReportData, episodes: list[dict], pages: dict[str, str]) -> str:
    s = data.summary
    parts = [f"<h1>{html.escape(data.title)}</h1>"]
    parts += [
        f"<p><b>Warehouse mid-run:</b> the {html.escape(text)}; the other tables hold the previous run's "
        "rows, so figures joining them mix two runs.</p>"
        for text in data.mid_run
    ]
    if not s.groups:
        parts.append("<p>No rebalance recorded for these dates.</p>")
        return _page(data.title, "\n".join(parts))
    head = [
        "group",
        "rebalances done/open",
        "longest rebalance",
        "stop-the-world",
        "partition-unavailable",
        "moved",
    ]
    head += ["top cause"] if s.with_causes else []
    rows = []
    for g in s.groups:
        cells = [
            f"<td>{_group_link(g.name, pages)}</td>",
            f"<td>{g.rebalances}/{g.rebalances_open}</td>",
            f"<td>{duration(g.longest_rebalance_ms)}</td>",
            f"<td>{duration(g.stw_ms)}</td>",
            f"<td>{duration(g.partition_unavailable_ms)}</td>",
            f"<td>{'-' if g.partitions_moved is None else g.partitions_moved}</td>",
        ]
        if s.with_causes:
            cells.append(f'<td class="text">{html.escape(g.top_cause or "-")}</td>')
        rows.append(f"<tr>{''.join(cells)}</tr>")
    parts.append("<h2>Groups, by partition-unavailable time</h2>")
    parts.append(_table(head, rows))
    if s.no_partition_counts:
        parts.append(
            f'<p class="note">{len(s.no_partition_counts)} groups come from broker-only logs without partition '
            "counts: their stop-the-world, partition-unavailable time and moves are unknown (-). Set "
            "<code>replay.topics</code> "
            "(topic: partition count) in the conf file and rerun.</p>"
        )
    heat = _heatmap(s, episodes)
    if heat is not None:
        parts.append("<h2>Rebalances per group over time</h2>" + _img(heat))
    if data.incidents is not None:
        parts.append("<h2>Incidents</h2>")
        timeline = _incident_timeline(data.incidents)
        parts.append(_img(timeline) if timeline else "<p>No incident in these dates.</p>")
    if s.worst:
        parts.append("<h2>Worst rebalances</h2>" + _worst_table(s, pages))
    return _page(data.title, "\n".join(parts))


def _worst_table(s: RunSummary, pages: dict[str, str]) -> str:
    """As in the terminal: the cause where the rows carry causes, else the reason Kafka logged."""
    triggers = any(e.trigger for e in s.worst)
    rows = []
    for e in s.worst:
        why = (e.cause if s.with_causes else e.reason) or "-"
        rows.append(
            f"<tr><td>{_group_link(e.group, pages)}</td>"
            f"<td>{utc_text(e.started_at)}</td><td>{episode_duration(e)}</td>"
            f"<td>{duration(e.partition_unavailable_ms)}</td><td>{duration(e.stw_ms)}</td>"
            f'<td class="text">{html.escape(why)}</td>'
            + (f'<td class="text">{html.escape(e.trigger or "-")}</td>' if triggers else "")
            + "</tr>"
        )
    head = ["group", "start (UTC)", "duration", "partition-unavailable", "stop-the-world"]
    head += ["cause" if s.with_causes else "reason logged"] + (["trigger"] if triggers else [])
    return _table(head, rows)


def _group_page(data, group, segments, episodes: list[dict], reasons: Counter) -> str:
    parts = [f'<p><a href="index.html">all groups</a></p><h1>{html.escape(group.name)}</h1>']
    parts.append(
        f"<p>{group.rebalances} rebalances done, {group.rebalances_open} open; longest "
        f"{duration(group.longest_rebalance_ms)}; stop-the-world {duration(group.stw_ms)}; "
        f"partition-unavailable {duration(group.partition_unavailable_ms)}; "
        f"moved {'-' if group.partitions_moved is None else group.partitions_moved}.</p>"
    )
    parts.append("<h2>Who consumed each partition when</h2>")
    if segments:
        owners = svg.colours({s.owner for s in segments if s.owner})
        bars = [
            (
                s.partition,
                s.start,
                s.end,
                owners[s.owner] if s.owner else None,
                f"{s.partition}: {s.owner or 'unavailable'}",
            )
            for s in segments
        ]
        parts.append(_img(svg.lanes(bars, "ownership (white, red edge: unavailable)", legend=owners)))
    else:
        parts.append(
            '<p class="note">No assignment known for this group (broker-only log without partition counts?).</p>'
        )
    timed = [(e, _episode_instant(e)) for e in episodes]
    points = [
        (ts, (e.get("stw_ms") or 0) / 1000, f"{e['episode_id']}: {duration(e.get('stw_ms') or 0)}")
        for e, ts in timed
        if ts is not None
    ]
    parts.append("<h2>Stop-the-world per rebalance</h2>")
    if group.stw_ms is None:
        parts.append(
            '<p class="note">Unknown: no partition is known to be consumed (no partition counts).</p>'
        )
    elif points:
        parts.append(_img(svg.columns_over_time(sorted(points), "stop-the-world per rebalance (seconds)")))
    else:
        parts.append('<p class="note">No rebalance in these dates.</p>')
    causes = Counter(e.get("cause") for e in episodes if e.get("cause"))
    if causes:
        parts.append("<h2>Causes</h2>" + _img(svg.bars(causes.most_common(12), "rebalances by cause")))
    elif reasons:
        items = [(shorten_middle(r, 36), n) for r, n in reasons.most_common(12)]
        parts.append(
            "<h2>Reasons logged</h2>" + _img(svg.bars(items, "rebalances by the reason Kafka logged"))
        )
    return _page(f"{data.title}: {group.name}", "\n".join(parts))


def _group_link(name: str, pages: dict[str, str]) -> str:
    """A link to the group's page, its name shortened in the middle (in full on hover)."""
    if name not in pages:  # beyond MAX_GROUP_PAGES
        return f'<span title="{html.escape(name)}">{html.escape(shorten_middle(name, NAME_WIDTH))}</span>'
    return (
        f'<a href="{pages[name]}" title="{html.escape(name)}">'
        f"{html.escape(shorten_middle(name, NAME_WIDTH))}</a>"
    )


def _table(head: list[str], rows: Iterable[str]) -> str:
    return (
        "<table><tr>"
        + "".join(f"<th>{html.escape(h)}</th>" for h in head)
        + "</tr>"
        + "".join(rows)
        + "</table>"
    )


# --------------------------------------------------------------------------------------------- pictures
def _heatmap(summary: RunSummary, episodes: list[dict]) -> svg.Svg | None:
    instants = [(_name(e.get("cluster"), e["group_id"]), _episode_instant(e)) for e in episodes]
    instants = [(g, t) for g, t in instants if t is not None]
    if not instants:
        return None
    first = min(t for _, t in instants) // HOUR_MS * HOUR_MS
    last = max(t for _, t in instants)
    hours = (last - first) // HOUR_MS + 1
    bucket = HOUR_MS * -(-hours // MAX_BUCKETS)
    columns = list(range(first, last + 1, bucket))
    counts = Counter((g, first + (t - first) // bucket * bucket) for g, t in instants)
    names = [g.name for g in summary.groups[:MAX_HEATMAP_GROUPS]]
    per = "hour" if bucket == HOUR_MS else f"{bucket // HOUR_MS} hours"
    return svg.heatmap(
        [shorten_middle(n, NAME_WIDTH - 14) for n in names],
        columns,
        {(shorten_middle(g, NAME_WIDTH - 14), b): n for (g, b), n in counts.items() if g in names},
        bucket,
        f"rebalances per group per {per}",
    )


def _incident_timeline(incidents: list[dict]) -> svg.Svg | None:
    bars = []
    rows = [_epoch_ms(r) for r in incidents]
    kinds = svg.colours({r["kind"] for r in rows})
    for r in sorted(rows, key=lambda r: (r["kind"], r.get("started_at") or 0)):
        start = r.get("started_at") if r.get("started_at") is not None else r.get("ended_at")
        if start is None:
            continue
        end = r.get("ended_at") if r.get("ended_at") is not None else start
        who = r.get("group_id") or ", ".join((r.get("groups") or [])[:3]) or "?"
        bars.append(
            (
                r["kind"],
                start,
                max(end, start),
                kinds[r["kind"]],
                f"{r['kind']}: {who} {r.get('detail') or ''}",
            )
        )
    if not bars:
        return None
    return svg.lanes(bars, "incidents", legend=kinds)
