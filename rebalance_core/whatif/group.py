"""One group's what-if in a replay pass (GroupWhatIf), and the pure-Python what-if of any number of
groups (whatif)."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from dataclasses import dataclass

from rebalance_core.events import Event
from rebalance_core.measures import utc_date
from rebalance_core.replay import ReplaySettings, event_order_key
from rebalance_core.whatif.compare import compare_daily
from rebalance_core.whatif.config import ACTUAL, Scenario, WhatIfConfig
from rebalance_core.whatif.extract import ExtractedGroup, TimelineExtractor
from rebalance_core.whatif.plan import ASSUMPTION, NOT_APPLICABLE, replay_events, run_scenario
from schemas.tables import REPLAY_TABLES


# ------------------------------------------------------------------------------------ one group
@dataclass
class ScenarioOutcome:
    """One scenario's result for one group: its tables, or why it could not run."""

    scenario: Scenario
    tables: dict[str, list[dict]] | None
    not_applicable: str | None = None


class GroupWhatIf:
    """The what-if side of one group in a replay pass: `feed` the group's events (the same batches, in
    the same order, as the actual GroupReplayer), then `finish(actual_daily)` with the actual replay's
    group_daily_summary rows. Returns the scenario rows of every REPLAY_TABLES table plus
    `whatif_comparison`."""

    def __init__(
        self,
        cluster: str,
        group_id: str,
        config: WhatIfConfig,
        replay_settings: ReplaySettings | None = None,
    ):
        self.cluster = cluster
        self.group_id = group_id
        self.config = config
        self.replay_settings = replay_settings or ReplaySettings()
        self.extractor = TimelineExtractor(cluster, group_id, config.extraction, self.replay_settings)
        self.extracted: ExtractedGroup | None = None
        self.outcomes: list[ScenarioOutcome] = []

    def feed(self, events: Iterable[Event]) -> None:
        self.extractor.feed(events)

    def finish(self, actual_daily: Iterable[dict]) -> dict[str, list[dict]]:
        actual_daily = list(actual_daily)
        out: dict[str, list[dict]] = {name: [] for name in (*REPLAY_TABLES, "whatif_comparison")}
        if self.extractor.first_ts is None:
            return out
        try:
            self.extracted = self.extractor.finish()
        except ValueError as exc:  # TimelineError, WhatIfError: a timeline the events cannot give
            reason = f"no timeline could be extracted: {exc}"
            self.outcomes = [ScenarioOutcome(s, None, reason) for s in self.config.scenarios]
        else:
            self.outcomes = [self._run(scenario) for scenario in self.config.scenarios]
        day = utc_date(self.extractor.first_ts)
        for outcome in self.outcomes:
            name = outcome.scenario.name
            daily = outcome.tables["group_daily_summary"] if outcome.tables is not None else None
            out["whatif_comparison"].extend(
                compare_daily(self.cluster, self.group_id, name, actual_daily, daily)
            )
            for table, rows in (outcome.tables or {}).items():
                out[table].extend(rows)
            if outcome.not_applicable is not None:
                out["anomalies"].append(self._note(name, day, NOT_APPLICABLE, outcome.not_applicable))
            for note in self.extracted.notes if self.extracted is not None else ():
                out["anomalies"].append(self._note(name, day, ASSUMPTION, note))
        return out

    def _run(self, scenario: Scenario) -> ScenarioOutcome:
        try:
            return ScenarioOutcome(scenario, run_scenario(self.extracted, scenario, self.replay_settings))
        except ValueError as exc:  # NotApplicable, or settings the simulators refuse
            return ScenarioOutcome(scenario, None, str(exc))

    def _note(self, scenario: str, day, rule: str, detail: str) -> dict:
        """An anomalies row (scenario = the what-if's) saying what the what-if assumed or could not do."""
        return {
            "cluster": self.cluster,
            "group_id": self.group_id,
            "scenario": scenario,
            "event_date": day,
            "ts": None,
            "event_id": None,
            "event_type": None,
            "group_state": None,
            "rule": rule,
            "detail": detail,
        }


def whatif(
    events: Iterable[Event],
    config: WhatIfConfig,
    replay_settings: ReplaySettings | None = None,
) -> dict[str, list[dict]]:
    """Actual replay and every scenario of `config` for any number of groups (the pure-Python form of
    `rebalance-replay whatif`): REPLAY_TABLES rows of scenario 'actual' and of each scenario, plus
    whatif_comparison rows."""
    settings = replay_settings or ReplaySettings()
    by_group: dict[tuple[str, str], list[Event]] = {}
    for e in events:
        by_group.setdefault((e.cluster, e.group_id), []).append(e)
    out: dict[str, list[dict]] = {name: [] for name in (*REPLAY_TABLES, "whatif_comparison")}
    for cluster, group_id in sorted(by_group):
        group_events = sorted(by_group[(cluster, group_id)], key=event_order_key)
        actual = replay_events(
            cluster, group_id, group_events, dataclasses.replace(settings, scenario=ACTUAL)
        )
        side = GroupWhatIf(cluster, group_id, config, settings)
        side.feed(group_events)
        for tables in (actual, side.finish(actual["group_daily_summary"])):
            for name, rows in tables.items():
                out[name].extend(rows)
    return out
