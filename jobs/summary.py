"""The summary of a warehouse's rebalances, from the output tables' rows: what `run` prints at its end
and `rebalance-replay report` reprints.

    one table, sorted by partition-unavailable time (the cost consumers felt): per group, rebalances
        completed / open, the longest rebalance, stop-the-world, partition-unavailable time, partitions
        moved, the top cause (when the rows carry causes); names shortened in the middle to fit the width
    the five worst episodes (by partition-unavailable time): group, start, duration, cause, trigger
    one line when broker-only input had no partition counts (those groups' partition measures unknown)

`build_summary` is the pure part (rows in, a RunSummary out; timestamps as epoch ms or datetimes);
`summary_renderables` turns it into rich renderables. Rows without causes (tables written before the
episode causes existed: no `cause` / `causes` columns, or null ones) give a summary without the cause
column, showing the reason Kafka logged instead.
"""

from __future__ import annotations

import datetime as dt
import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field

from rebalance_core.events import parse_ts
from rebalance_core.measures import plus_known

WIDTH = 100  # terminal columns the tables are made to fit
MAX_GROUPS = 25
WORST_EPISODES = 5
MIN_FLEXIBLE = 8  # a shortened column keeps at least this many characters (and its header's)
# The setting that gives the replay topic partition counts (jobs.config ReplayOptions.topics ->
# rebalance_core.replay_common.ReplaySettings.topics): without it a broker-only log has no assignment to infer.
TOPICS_SETTING = "replay.topics"


@dataclass
class GroupLine:
    """One group's totals over the summary's dates. None: not known from the logs."""

    cluster: str | None
    group_id: str
    rebalances: int = 0  # completed episodes
    rebalances_open: int = 0
    started_before_input: int = 0
    longest_rebalance_ms: int | None = None
    stw_ms: int | None = 0
    partition_unavailable_ms: int | None = 0
    partitions_moved: int | None = 0
    causes: Counter = field(default_factory=Counter)
    coordinator_timed: bool = False  # some day's episodes were timed by the coordinator (broker log)
    members_logged: bool = False  # some day's episodes were timed by a member's own log

    @property
    def name(self) -> str:
        return f"{self.cluster}/{self.group_id}" if self.cluster else self.group_id

    @property
    def top_cause(self) -> str | None:
        if not self.causes:
            return None
        return min(self.causes.items(), key=lambda item: (-item[1], item[0]))[0]


@dataclass
class EpisodeLine:
    group: str
    episode_id: str
    started_at: int | None  # epoch ms; None: began before the input
    stabilized_at: int | None  # None: still open at the end of the input
    rebalance_ms: int | None
    stw_ms: int | None
    partition_unavailable_ms: int | None
    cause: str | None
    reason: str | None  # as Kafka logged it
    trigger: str | None


@dataclass
class RunSummary:
    groups: list[GroupLine]  # all, worst first
    worst: list[EpisodeLine]
    with_causes: bool  # some row carries a cause (rebalance_core's explained replay)
    no_partition_counts: list[str] = field(default_factory=list)  # broker-only groups, nothing assigned


# -------------------------------------------------------------------------------------------- building
def build_summary(
    daily: Iterable[dict],
    episodes: Iterable[dict],
    assigned_groups: Iterable[tuple] | None = None,
    worst: int = WORST_EPISODES,
) -> RunSummary:
    """A RunSummary from group_daily_summary and rebalance_episodes rows (any dates, one scenario).
    `assigned_groups`: the (cluster, group_id) that have assignments rows; with it, a group whose
    rebalances were timed by the coordinator only (broker-only logs) and that has no assignment is named
    as lacking partition counts, and its partition measures are unknown (None) instead of 0."""
    groups: dict[tuple, GroupLine] = {}
    with_causes = False
    for row in daily:
        line = _line(groups, row)
        line.rebalances += row.get("rebalances") or 0
        line.rebalances_open += row.get("rebalances_open") or 0
        line.started_before_input += row.get("rebalances_started_before_input") or 0
        # a day whose owners were unknown has null partition measures: the group's total is unknown too
        line.stw_ms = plus_known(line.stw_ms, row.get("stw_ms"))
        line.partition_unavailable_ms = plus_known(
            line.partition_unavailable_ms, row.get("partition_unavailable_ms")
        )
        line.partitions_moved = plus_known(line.partitions_moved, row.get("partitions_moved"))
        if row.get("causes") is not None:  # rows written before causes existed have none
            with_causes = True
            line.causes.update(_counts(row["causes"]))
        timing = row.get("timing_source")
        line.coordinator_timed |= timing == "coordinator"
        line.members_logged |= timing not in (None, "coordinator")
    episode_lines = []
    daily_causes = with_causes
    for row in episodes:
        line = _line(groups, row)
        if row.get("rebalance_ms") is not None:
            line.longest_rebalance_ms = max(line.longest_rebalance_ms or 0, row["rebalance_ms"])
        cause = row.get("cause")
        if cause is not None:
            with_causes = True
            if not daily_causes:
                line.causes[cause] += 1
        episode_lines.append(
            EpisodeLine(
                group=line.name,
                episode_id=row["episode_id"],
                started_at=_ms(row.get("started_at")),
                stabilized_at=_ms(row.get("stabilized_at")),
                rebalance_ms=row.get("rebalance_ms"),
                stw_ms=row.get("stw_ms"),
                partition_unavailable_ms=row.get("partition_unavailable_ms"),
                cause=cause,
                reason=row.get("cause_raw_reason") or row.get("reason"),
                trigger=_trigger(row),
            )
        )
    unknown = []
    if assigned_groups is not None:
        assigned = set(assigned_groups)
        for key, line in groups.items():
            if line.coordinator_timed and not line.members_logged and key not in assigned:
                # stop-the-world too: it needs partitions consumed (docs/metrics.md), none are known
                line.partition_unavailable_ms = line.partitions_moved = line.stw_ms = None
                unknown.append(line.name)
        unknown_names = set(unknown)
        for episode in episode_lines:
            if episode.group in unknown_names:
                episode.partition_unavailable_ms = episode.stw_ms = None
    ordered = sorted(groups.values(), key=_group_cost)
    episode_lines.sort(key=_episode_cost)
    return RunSummary(ordered, episode_lines[:worst], with_causes, sorted(unknown))


def _line(groups: dict[tuple, GroupLine], row: dict) -> GroupLine:
    key = (row.get("cluster"), row["group_id"])
    if key not in groups:
        groups[key] = GroupLine(*key)
    return groups[key]


def _counts(value) -> dict:
    """A map column as read back: a dict (Spark Row.asDict) or a list of (key, value) pairs (Arrow)."""
    if not value:
        return {}
    return dict(value) if not isinstance(value, dict) else value


def _ms(value) -> int | None:
    return None if value is None else parse_ts(value)


def _trigger(row: dict) -> str | None:
    """Who triggered the episode: its client id (at its host) where logged, else its member id."""
    client, host = row.get("trigger_client_id"), row.get("trigger_host")
    if client:
        return f"{client}@{host}" if host else client
    member = row.get("trigger_member_id")
    if not member:
        return None
    return member_label(member)


def _group_cost(g: GroupLine) -> tuple:
    unknown = g.partition_unavailable_ms is None
    return (
        unknown,
        -(g.partition_unavailable_ms or 0),
        -(g.stw_ms or 0),
        -(g.longest_rebalance_ms or 0),
        g.name,
    )


def _episode_cost(e: EpisodeLine) -> tuple:
    return (
        -(e.partition_unavailable_ms or 0),
        -(e.stw_ms or 0),
        -(e.rebalance_ms or 0),
        e.group,
        e.episode_id,
    )


# ------------------------------------------------------------------------------------------- rendering
def duration(ms: int | None) -> str:
    """'740ms', '1.5s', '2.0m', '1.2h'; '-' for unknown. The one duration format of the summary, the
    HTML report and the what-if report (jobs.report)."""
    if ms is None:
        return "-"
    for unit, size in (("h", 3_600_000), ("m", 60_000), ("s", 1000)):
        if ms >= size:
            return f"{ms / size:.1f}{unit}"
    return f"{ms}ms"


_UUID = re.compile(r"-[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$")


def member_label(member_id: str | None) -> str:
    """A member id without Kafka's random UUID suffix (clientId-UUID): the consumer it is."""
    return _UUID.sub("", member_id) if member_id else "?"


def shorten_middle(text: str, width: int) -> str:
    """`text` in at most `width` characters, its middle replaced by '…' (a group's cluster and the end
    of its name are what tell groups apart)."""
    if len(text) <= width:
        return text
    if width <= 1:
        return text[:width]
    head = width // 2
    tail = width - 1 - head
    return text[:head] + "…" + (text[-tail:] if tail else "")


def utc_text(ms: int | None) -> str:
    if ms is None:
        return "before input"
    return dt.datetime.fromtimestamp(ms / 1000, dt.UTC).strftime("%Y-%m-%d %H:%M:%S")


def episode_duration(e: EpisodeLine) -> str:
    if e.stabilized_at is None:
        return "open"
    return duration(e.rebalance_ms)  # '-' when it began before the input


def _fit(rows: list[list[str]], headers: list[str], flexible: list[int], width: int) -> list[list[str]]:
    """Shorten the cells of the `flexible` columns (in the middle, the widest first, none below
    MIN_FLEXIBLE) until the table fits `width` columns (rich's SIMPLE_HEAD box without edge padding
    puts 3 characters between columns: padding, divider, padding)."""
    widths = [
        max([len(line) for line in header.splitlines()] + [len(r[index]) for r in rows])
        for index, header in enumerate(headers)
    ]
    floors = {i: max([MIN_FLEXIBLE] + [len(line) for line in headers[i].splitlines()]) for i in flexible}
    excess = sum(widths) + 3 * (len(headers) - 1) - width
    while excess > 0:
        widest = max(flexible, key=lambda i: widths[i] - floors[i])
        if widths[widest] <= floors[widest]:
            break
        widths[widest] -= 1
        excess -= 1
    return [[shorten_middle(c, widths[i]) if i in flexible else c for i, c in enumerate(r)] for r in rows]


def summary_renderables(summary: RunSummary, width: int = WIDTH, max_groups: int = MAX_GROUPS) -> list:
    """The summary as rich renderables (tables and lines) fitting `width` columns."""
    from rich import box
    from rich.table import Table

    out: list = []
    if not summary.groups:
        return ["No rebalance recorded for these dates."]
    headers = [
        "group",
        "rebalances\ndone/open",
        "longest\nrebalance",
        "stop-the-\nworld",
        "partition-\nunavail.",
        "moved",
    ]
    if summary.with_causes:
        headers.append("top cause")
    rows = []
    for g in summary.groups[:max_groups]:
        row = [
            g.name,
            f"{g.rebalances}/{g.rebalances_open}",
            duration(g.longest_rebalance_ms),
            duration(g.stw_ms),
            duration(g.partition_unavailable_ms),
            "-" if g.partitions_moved is None else str(g.partitions_moved),
        ]
        if summary.with_causes:
            row.append(g.top_cause or "-")
        rows.append(row)
    flexible = [0, 6] if summary.with_causes else [0]
    table = Table(
        title="Rebalances by partition-unavailable time", box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False
    )
    for index, header in enumerate(headers):
        table.add_column(header, justify="left" if index in (0, 6) else "right", no_wrap=True)
    for row in _fit(rows, headers, flexible, width):
        table.add_row(*row)
    out.append(table)
    if len(summary.groups) > max_groups:
        out.append(f"... and {len(summary.groups) - max_groups} more groups")
    before = sum(g.started_before_input for g in summary.groups)
    if before:
        out.append(f"{before} rebalances had begun before the input (not counted as done or open)")
    if summary.no_partition_counts:  # one line: the groups are the ones showing '-'
        out.append(
            f"{len(summary.no_partition_counts)} broker-only group(s) without partition counts (their"
            f" unknowns shown -): set {TOPICS_SETTING} in --conf"
        )
    if summary.worst:
        out.append(_worst_table(summary, width))
    return out


def _worst_table(summary: RunSummary, width: int):
    """The worst episodes: their cause where the rows carry causes, else the reason Kafka logged; the
    member that triggered each where known."""
    from rich import box
    from rich.table import Table

    triggers = any(e.trigger for e in summary.worst)
    why = "cause" if summary.with_causes else "reason logged"
    headers = ["group", "start (UTC)", "duration", "partition-\nunavail.", why] + (
        ["trigger"] if triggers else []
    )
    rows = []
    for e in summary.worst:
        row = [
            e.group,
            utc_text(e.started_at),
            episode_duration(e),
            duration(e.partition_unavailable_ms),
            (e.cause if summary.with_causes else e.reason) or "-",
        ]
        rows.append(row + ([e.trigger or "-"] if triggers else []))
    table = Table(title=f"{len(rows)} worst rebalances", box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False)
    for index, header in enumerate(headers):
        table.add_column(header, justify="right" if index in (2, 3) else "left", no_wrap=True)
    for row in _fit(rows, headers, [0, 4, 5] if triggers else [0, 4], width):
        table.add_row(*row)
    return table


def print_summary(console, summary: RunSummary, width: int = WIDTH) -> None:
    """At most `width` columns, fewer on a narrower console (jobs.cli gives a log or a pipe 100)."""
    width = min(width, console.width or width)
    for renderable in summary_renderables(summary, width):
        console.print(renderable, soft_wrap=isinstance(renderable, str))  # a line stays one line


__all__ = [
    "RunSummary",
    "build_summary",
    "summary_renderables",
    "print_summary",
    "shorten_middle",
    "duration",
]
