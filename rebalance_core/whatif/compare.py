"""Comparison rows (whatif_comparison): per group and date, actual vs scenario, and the model check
that says whether the group's what-if numbers can be trusted at all.

The model check replays the group's own timeline under its actual settings (the `as-actual` scenario)
and compares the result with the replay of what happened, over the whole input: the counts must be
equal (rebalances, rounds = generations, partitions moved, revoked, wasted revocations) and the times
within max(50 ms, 5 %) (stop-the-world, partition-unavailable time); a rebalance the input leaves open
(not seen to complete) is compared as open in the as-actual too, which completes it after the input's
last line (see model_check). A group that fails it gets no
ranking of its scenarios (the report says why); its rows carry `model_check = failed` and the measures
that differ. A group whose input view cannot support the check (the coordinator counts members no line
names, so no timeline holds what they did) is `not_comparable` with the reason, also unranked: neither a
failure of the what-if nor a pass that would hide the gap."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from rebalance_core.measures import plus_known
from schemas.tables import COMPARED_MEASURES

PASSED, FAILED, NOT_RUN, NOT_COMPARABLE = "passed", "failed", "not_run", "not_comparable"
UNRANKED = frozenset({FAILED, NOT_COMPARABLE})  # model checks whose group's scenarios no report ranks
MODEL_CHECK_COUNTS = (
    "rebalances",
    "generations",
    "partitions_moved",
    "partitions_revoked",
    "revocations_wasted",
)
MODEL_CHECK_TIMES = ("stw_ms", "partition_unavailable_ms")
TIME_TOLERANCE_MS = 50
TIME_TOLERANCE_SHARE = 0.05


@dataclass(frozen=True)
class ModelCheck:
    status: str  # passed | failed | not_run | not_comparable
    detail: str = ""  # the measures that differ (actual vs as-actual), or why not run / not comparable


def within_tolerance(name: str, actual: int, replayed: int) -> bool:
    """Counts exactly; times within max(50 ms, 5 % of the actual)."""
    if name in MODEL_CHECK_TIMES:
        return abs(replayed - actual) <= max(TIME_TOLERANCE_MS, TIME_TOLERANCE_SHARE * abs(actual))
    return replayed == actual


def model_check(
    actual_daily: Iterable[dict],
    as_actual_daily: Iterable[dict] | None,
    why_not: str = "",
    not_comparable: str | None = None,
    completed_after_input: Sequence[dict] = (),
    incomparable: Iterable[tuple[str, str]] = (),
) -> ModelCheck:
    """The as-actual replay against the actual one, over all dates (a rebalance across midnight may be
    dated differently by a few milliseconds). `not_comparable`: why the input's view cannot support the
    check (ExtractedGroup.not_comparable). `completed_after_input`: the as-actual's episodes (rebalance_episodes
    rows) begun in the input that completed after its last event (a scenario runs until its group
    settles): the latest of them, as many as the actual replay left open (begun in the input, not seen to
    complete), are compared as open, their measures left out as the actual's open ones are, since the
    input ends before it could show them complete (e.g. it stops between "Stabilized" and the leader's
    SyncGroup). One the as-actual completed within the input still counts. `incomparable`: (measure, why
    the actual's value cannot check the model: a bound, a rebalance whose cause is in no line;
    ExtractedGroup.incomparable): left out; the rest must agree (else the check fails), and then the
    group is `not_comparable`, naming what it left out and why."""
    if as_actual_daily is None:
        return ModelCheck(NOT_RUN, why_not or "the actual settings could not be replayed")
    if not_comparable:
        return ModelCheck(NOT_COMPARABLE, not_comparable)
    actual_daily = list(actual_daily)
    actual, replayed = _totals(actual_daily), _totals(as_actual_daily)
    left_open = sum(row.get("rebalances_open") or 0 for row in actual_daily)
    latest = sorted(completed_after_input, key=lambda row: row["started_at"])[::-1][:left_open]
    for episode in latest:
        replayed["rebalances"] -= 1
        for name in (*MODEL_CHECK_COUNTS, *MODEL_CHECK_TIMES):
            if name in episode and replayed[name] is not None and episode[name] is not None:
                replayed[name] -= episode[name]
    reasons = dict(incomparable)
    measures = tuple(name for name in (*MODEL_CHECK_COUNTS, *MODEL_CHECK_TIMES) if name not in reasons)
    # a measure the actual replay does not know (null: no line shows who owned what) cannot check the
    # model: it is left out, never read as 0, and a check that passes on the rest names what it left out
    unknown = [name for name in measures if actual[name] is None or replayed[name] is None]
    differing = [
        f"{name} {actual[name]} actual vs {replayed[name]} as-actual"
        for name in measures
        if name not in unknown and not within_tolerance(name, actual[name], replayed[name])
    ]
    if differing:
        return ModelCheck(FAILED, "; ".join(differing))
    if reasons:
        by_reason: dict[str, list[str]] = {}
        for name, why in reasons.items():
            by_reason.setdefault(why, []).append(name)
        left_out = "; ".join(f"{', '.join(names)}: {why}" for why, names in by_reason.items())
        return ModelCheck(NOT_COMPARABLE, f"not comparable: {left_out}")
    if unknown:
        return ModelCheck(
            PASSED,
            f"not checked: {', '.join(unknown)} (unknown in the actual replay: no line shows who owned what)",
        )
    return ModelCheck(PASSED)


def _totals(daily: Iterable[dict]) -> dict[str, int | None]:
    """Sums over the days; a measure is None (unknown) once one day's is."""
    out: dict[str, int | None] = dict.fromkeys((*MODEL_CHECK_COUNTS, *MODEL_CHECK_TIMES), 0)
    for row in daily:
        for name, total in out.items():
            out[name] = plus_known(total, row.get(name))
    return out


# ------------------------------------------------------------------------------------ comparison
def compare_daily(
    cluster: str,
    group_id: str,
    scenario: str,
    actual_daily: Iterable[dict],
    scenario_daily: Iterable[dict] | None,
    check: ModelCheck | None = None,
    actual_moments: Mapping[Any, Sequence[str]] | None = None,
    scenario_moments: Mapping[Any, Sequence[str]] | None = None,
) -> list[dict]:
    """WHATIF_COMPARISON rows: per date either side has, actual vs scenario and scenario - actual.
    `scenario_daily` None (the scenario could not run): scenario and delta columns are null. `check`: the
    group's model check (on every row); `*_moments`: date -> the costliest timeline moments (texts)."""
    actual_by_date = _sum_by_date(actual_daily, cluster, group_id)
    scenario_by_date = _sum_by_date(scenario_daily or (), cluster, group_id)
    check = check or ModelCheck(NOT_RUN)
    rows = []
    for date in sorted(set(actual_by_date) | set(scenario_by_date)):
        row: dict[str, Any] = {
            "cluster": cluster,
            "group_id": group_id,
            "scenario": scenario,
            "event_date": date,
        }
        for name, _kind in COMPARED_MEASURES:
            was = actual_by_date.get(date, {}).get(name, 0)
            row[f"{name}_actual"] = was
            if scenario_daily is None:
                row[f"{name}_scenario"] = row[f"{name}_delta"] = None
            else:
                would = scenario_by_date.get(date, {}).get(name, 0)
                row[f"{name}_scenario"] = would
                row[f"{name}_delta"] = None if would is None or was is None else would - was
        row["model_check"] = check.status
        row["model_check_detail"] = check.detail or None
        row["actual_moments"] = list((actual_moments or {}).get(date, ())) or None
        row["scenario_moments"] = list((scenario_moments or {}).get(date, ())) or None
        rows.append(row)
    return rows


def _sum_by_date(rows: Iterable[dict], cluster: str, group_id: str) -> dict:
    out: dict = {}
    for row in rows:
        if row["cluster"] != cluster or row["group_id"] != group_id:
            continue
        day = out.setdefault(row["event_date"], {})
        for name, _kind in COMPARED_MEASURES:
            day[name] = plus_known(day.get(name, 0), row.get(name))
    return out
