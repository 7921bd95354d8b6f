"""One group's what-if in a replay pass (GroupWhatIf), and the pure-Python what-if of any number of
groups (whatif)."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from dataclasses import dataclass, field

from rebalance_core.events import Event
from rebalance_core.measure_records import DAY_MS, utc_date
from rebalance_core.replay import events_by_group
from rebalance_core.replay_common import ReplaySettings
from rebalance_core.whatif.compare import FAILED, NOT_RUN, ModelCheck, compare_daily, model_check
from rebalance_core.whatif.config import ACTUAL, Scenario, WhatIfConfig, WhatIfError
from rebalance_core.whatif.extract import ExtractedGroup, TimelineExtractor
from rebalance_core.whatif.moments import costliest_moments
from rebalance_core.whatif.plan import (
    ASSUMPTION,
    MODEL_CHECK_FAILED,
    NOT_APPLICABLE,
    plan,
    replay_events,
    run_plan,
)
from schemas.tables import REPLAY_TABLES

# ------------------------------------------------------------------------------------ one group
MODEL_CHECK_SCENARIO = "as-actual"  # run for the model check when no scenario of the file changes nothing


@dataclass
class ScenarioOutcome:
    """One scenario's result for one group: its tables, or why it could not run."""

    scenario: Scenario
    tables: dict[str, list[dict]] | None
    not_applicable: str | None = None
    moments: dict = field(default_factory=dict)  # event_date -> the costliest timeline moments


class GroupWhatIf:
    """The what-if side of one group in a replay pass: `feed` the group's events (the same batches, in
    the same order, as the actual GroupReplayer), then `finish(actual_daily)` with the actual replay's
    group_daily_summary rows. Returns the scenario rows of every REPLAY_TABLES table plus
    `whatif_comparison`. The model check (the group's timeline replayed under its actual settings
    against what happened, see rebalance_core.whatif.compare) runs for every group, as the file's first
    scenario that changes nothing or as an unlisted `as-actual`; its result is on every comparison row."""

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
        self.check: ModelCheck | None = None

    def feed(self, events: Iterable[Event]) -> None:
        self.extractor.feed(events)

    def finish(self, actual_daily: Iterable[dict]) -> dict[str, list[dict]]:
        actual_daily = list(actual_daily)
        out: dict[str, list[dict]] = {name: [] for name in (*REPLAY_TABLES, "whatif_comparison")}
        if self.extractor.first_ts is None:
            return out
        baseline = next((s for s in self.config.scenarios if s.changes_nothing), None)
        span_ms, max_span_ms = (
            self.extractor.last_ts - self.extractor.first_ts,
            self.config.extraction.max_span_ms,
        )
        try:
            if span_ms > max_span_ms:
                raise WhatIfError(
                    f"the input spans {span_ms / DAY_MS:.1f} days, more than extraction.max_span_ms "
                    f"({max_span_ms / DAY_MS:.1f} days): run the what-if over fewer dates"
                )
            self.extracted = self.extractor.finish()
        except ValueError as exc:  # TimelineError, WhatIfError: a timeline the events cannot give
            reason = f"no timeline could be extracted: {exc}"
            self.outcomes = [ScenarioOutcome(s, None, reason) for s in self.config.scenarios]
            self.check = ModelCheck(NOT_RUN, reason)
        else:
            self.outcomes = [self._run(scenario) for scenario in self.config.scenarios]
            reference = next(
                (o for o in self.outcomes if o.scenario is baseline),
                None,
            ) or self._run(Scenario(MODEL_CHECK_SCENARIO))
            daily = reference.tables["group_daily_summary"] if reference.tables is not None else None
            completed_after_input = [
                row
                for row in (reference.tables or {}).get("rebalance_episodes", ())
                if row.get("started_at") is not None
                and row.get("stabilized_at") is not None
                and row["stabilized_at"] > self.extractor.last_ts
            ]
            self.check = model_check(
                actual_daily,
                daily,
                reference.not_applicable or "",
                self.extracted.not_comparable,
                completed_after_input,
                self.extracted.incomparable,
            )
        # the as-actual replay's moments explain the actual night (it reproduces it when the check passed)
        actual_moments = reference.moments if self.extracted is not None else {}
        day = utc_date(self.extractor.first_ts)
        for outcome in self.outcomes:
            name = outcome.scenario.name
            daily = outcome.tables["group_daily_summary"] if outcome.tables is not None else None
            out["whatif_comparison"].extend(
                compare_daily(
                    self.cluster,
                    self.group_id,
                    name,
                    actual_daily,
                    daily,
                    self.check,
                    actual_moments,
                    outcome.moments,
                )
            )
            for table, rows in (outcome.tables or {}).items():
                out[table].extend(rows)
            if outcome.not_applicable is not None:
                out["anomalies"].append(self._note(name, day, NOT_APPLICABLE, outcome.not_applicable))
            if self.check.status == FAILED:
                out["anomalies"].append(
                    self._note(name, day, MODEL_CHECK_FAILED, f"model check failed: {self.check.detail}")
                )
            for note in self.extracted.notes if self.extracted is not None else ():
                out["anomalies"].append(self._note(name, day, ASSUMPTION, note))
        return out

    def _run(self, scenario: Scenario) -> ScenarioOutcome:
        try:
            scenario_plan = plan(self.extracted, scenario)
            tables = run_plan(self.extracted, scenario_plan, self.replay_settings)
        except ValueError as exc:  # NotApplicable, or settings the simulators refuse
            return ScenarioOutcome(scenario, None, str(exc))
        settings = scenario_plan.settings
        moments = costliest_moments(
            scenario_plan.timeline, tables, settings.session_timeout_ms, settings.max_poll_interval_ms
        )
        return ScenarioOutcome(scenario, tables, moments=moments)

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
    out: dict[str, list[dict]] = {name: [] for name in (*REPLAY_TABLES, "whatif_comparison")}
    for (cluster, group_id), group_events in events_by_group(events, settings.clock_skew_ms).items():
        actual = replay_events(
            cluster, group_id, group_events, dataclasses.replace(settings, scenario=ACTUAL)
        )
        side = GroupWhatIf(cluster, group_id, config, settings)
        side.feed(group_events)
        for tables in (actual, side.finish(actual["group_daily_summary"])):
            for name, rows in tables.items():
                out[name].extend(rows)
    return out
