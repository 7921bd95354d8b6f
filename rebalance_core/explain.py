"""A group's replay with the "why" beside the "how long": wraps a group replayer (classic or KIP-848,
`replay.new_replayer`) with the cause of every episode (`causes`), the group's incidents (`incidents`)
and its coordinators (`coordinator_moves`). Same interface as the replayer it wraps; what it adds:

  rebalance_episodes   + cause, cause_raw_reason, trigger_member_id, trigger_client_id, trigger_host
  group_daily_summary  + causes (cause -> episodes), unowned_partition_ms (also added to
                         partition_unavailable_ms: partitions no member ever owned, left unassigned by a
                         Stable generation, which the ownership timeline cannot see)
  rebalance_incidents  (new) one row per incident of the group
  group_coordinators   (new) one row per broker tenure as the group's coordinator

The replayer's own rows are otherwise untouched (the simulator's truth stays comparable with them).
Pure: no I/O, no clock.
"""

from __future__ import annotations

from rebalance_core.causes import EPISODE_CAUSE_COLUMNS, CauseSettings, CauseTracker
from rebalance_core.coordinator_moves import CoordinatorTracker
from rebalance_core.incidents import IncidentSettings, IncidentTracker
from rebalance_core.replay import events_by_group, new_replayer
from rebalance_core.replay_common import ReplaySettings

# The tables the wrapper adds (columns in schemas.tables); its other rows are the replayer's tables...
EXPLAIN_TABLES = ("rebalance_incidents", "group_coordinators")
# ... and the columns it adds to the replayer's rows (a bare replayer's rows have the others)
ADDED_COLUMNS = {
    "rebalance_episodes": EPISODE_CAUSE_COLUMNS,
    "group_daily_summary": ("causes", "unowned_partition_ms"),
}


def replayer_columns(table: str) -> list[str]:
    """The columns of `table` a bare group replayer (replay.new_replayer) emits."""
    from schemas.tables import TABLES

    added = ADDED_COLUMNS.get(table, ())
    return [c.name for c in TABLES[table] if c.name not in added]


STATE_KEY = "explain"


class ExplainedReplayer:
    def __init__(
        self,
        replayer,
        settings: ReplaySettings | None = None,
        state: dict | None = None,
        cause_settings: CauseSettings | None = None,
        incident_settings: IncidentSettings | None = None,
    ):
        self.replayer = replayer
        self.settings = settings or ReplaySettings()
        self.cluster, self.group_id = replayer.cluster, replayer.group_id
        key = {"cluster": self.cluster, "group_id": self.group_id, "scenario": self.settings.scenario}
        state = state or {}
        self.causes = CauseTracker(cause_settings, state.get("causes"))
        incident_settings = incident_settings or self.settings.incidents
        self.incidents = IncidentTracker(
            key, incident_settings, self.settings.topics, state.get("incidents"), self.settings.run_end_ms
        )
        self.coordinators = CoordinatorTracker(key, state.get("coordinators"))
        self.uncounted_ms: dict = {}  # date -> unowned partition-ms the timeline cannot see

    @property
    def last_ts(self):
        return self.replayer.last_ts

    def feed(self, events) -> None:
        events = list(events)
        for e in events:
            self.causes.observe(e)
            self.incidents.observe(e)
            self.coordinators.observe(e)
        self.replayer.feed(events)

    def drain(self) -> dict[str, list[dict]]:
        return self._explained(self.replayer.drain())

    def finish(self) -> dict[str, list[dict]]:
        out = self._explained(self.replayer.finish())
        incidents = self.incidents.finish(self.settings.final)
        self._count_uncounted(incidents)
        out["rebalance_incidents"].extend(incidents)
        out["group_coordinators"].extend(self.coordinators.finish(self.settings.final))
        summary = self.causes.add_to_summary(out.get("group_daily_summary", []))
        for row in summary:
            extra = self.uncounted_ms.pop(row["event_date"], 0)
            row["unowned_partition_ms"] = extra
            row["partition_unavailable_ms"] = (row.get("partition_unavailable_ms") or 0) + extra
        return out

    def snapshot(self) -> dict:
        return {
            **self.replayer.snapshot(),
            STATE_KEY: {
                "causes": self.causes.snapshot(),
                "coordinators": self.coordinators.snapshot(),
                # a final run closed every incident: nothing goes on (nightly runs carry the open ones)
                "incidents": None if self.settings.final else self.incidents.snapshot(),
            },
        }

    def _explained(self, out: dict[str, list[dict]]) -> dict[str, list[dict]]:
        episodes = out.get("rebalance_episodes", [])
        self.causes.annotate(episodes)
        self.incidents.episodes(episodes)
        incidents = self.incidents.drain()
        self._count_uncounted(incidents)
        out["rebalance_incidents"] = incidents
        out["group_coordinators"] = self.coordinators.drain()
        return out  # the replayer's tables + EXPLAIN_TABLES

    def _count_uncounted(self, incidents: list[dict]) -> None:
        for row in incidents:
            if row.get("uncounted_unavailable_ms"):
                date = row["event_date"]
                self.uncounted_ms[date] = self.uncounted_ms.get(date, 0) + row["uncounted_unavailable_ms"]


def new_explained_replayer(
    cluster: str,
    group_id: str,
    settings: ReplaySettings | None = None,
    state: dict | None = None,
    events=(),
    incident_settings: IncidentSettings | None = None,
) -> ExplainedReplayer:
    """`replay.new_replayer` wrapped; `state` is a snapshot of an ExplainedReplayer (or of a bare
    replayer: the explanation starts afresh)."""
    inner_state = None
    explain_state = None
    if state is not None:
        inner_state = {k: v for k, v in state.items() if k != STATE_KEY}
        explain_state = state.get(STATE_KEY)
    inner = new_replayer(cluster, group_id, settings, inner_state, events)
    return ExplainedReplayer(inner, settings, explain_state, incident_settings=incident_settings)


def replay_explained(
    events, settings: ReplaySettings | None = None, incident_settings: IncidentSettings | None = None
) -> dict[str, list[dict]]:
    """`replay.replay` with the explanation: every group's events, sorted, through an ExplainedReplayer."""
    out: dict[str, list[dict]] = {}
    skew = (settings or ReplaySettings()).clock_skew_ms  # the allowance the clocks are aligned within
    for key, group_events in events_by_group(events, skew).items():
        replayer = new_explained_replayer(key[0], key[1], settings, None, group_events, incident_settings)
        replayer.feed(group_events)
        for name, rows in replayer.finish().items():
            out.setdefault(name, []).extend(rows)
    return out
