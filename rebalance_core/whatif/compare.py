"""Comparison rows (whatif_comparison): per group and date, actual vs scenario."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from schemas.tables import COMPARED_MEASURES


# ------------------------------------------------------------------------------------ comparison
def compare_daily(
    cluster: str,
    group_id: str,
    scenario: str,
    actual_daily: Iterable[dict],
    scenario_daily: Iterable[dict] | None,
) -> list[dict]:
    """WHATIF_COMPARISON rows: per date either side has, actual vs scenario and scenario - actual.
    `scenario_daily` None (the scenario could not run): scenario and delta columns are null."""
    actual_by_date = _sum_by_date(actual_daily, cluster, group_id)
    scenario_by_date = _sum_by_date(scenario_daily or (), cluster, group_id)
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
                row[f"{name}_delta"] = would - was
        rows.append(row)
    return rows


def _sum_by_date(rows: Iterable[dict], cluster: str, group_id: str) -> dict:
    out: dict = {}
    for row in rows:
        if row["cluster"] != cluster or row["group_id"] != group_id:
            continue
        day = out.setdefault(row["event_date"], {})
        for name, _kind in COMPARED_MEASURES:
            day[name] = day.get(name, 0) + (row.get(name) or 0)
    return out
