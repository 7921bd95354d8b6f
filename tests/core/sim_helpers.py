"""Shared by the simulator tests: load a scenario, replay a simulation's events, and compare replay
tables with the simulator's truth, with a readable difference (like chispa: rows side by side)."""

from __future__ import annotations

from pathlib import Path

import yaml

from rebalance_core.events import Event, TopicPartition
from rebalance_core.replay import replay
from rebalance_core.replay_common import ReplaySettings
from rebalance_core.simulate import SimulationResult, load_scenario, simulate
from schemas.events import COORDINATOR_EVENTS, EventType

SCENARIOS = Path(__file__).resolve().parents[2] / "conf" / "simulations"

# How rows are matched between truth and replay, per table.
ROW_KEYS = {
    "generations": ("generation_id", "rebalance_started_at"),
    "assignments": ("generation_id", "member_id", "topic", "partition"),
    "partition_movements": ("topic", "partition", "revoked_at"),
    "rebalance_episodes": ("episode_id",),
    "group_daily_summary": ("event_date",),
    "anomalies": ("ts", "event_id", "rule"),
}


def run_scenario(name: str, **overrides) -> SimulationResult:
    doc = yaml.safe_load((SCENARIOS / name).read_text())
    timeline, settings = load_scenario(doc)
    if overrides:
        from dataclasses import replace

        settings = replace(settings, **overrides)
    return simulate(timeline, settings)


def replay_events(events: list[Event], **settings) -> dict[str, list[dict]]:
    return replay(list(events), ReplaySettings(**settings))


def coordinator_only(events: list[Event]) -> list[Event]:
    coordinator_types = {t.value for t in COORDINATOR_EVENTS}
    return [e for e in events if e.event_type in coordinator_types]


def table_differences(
    expected: dict[str, list[dict]], actual: dict[str, list[dict]], tables=None
) -> list[str]:
    """Human-readable differences between two sets of replay tables (empty: equal)."""
    out = []
    for table in tables or ROW_KEYS:
        key_names = ROW_KEYS[table]
        exp = _index(expected.get(table, []), key_names)
        act = _index(actual.get(table, []), key_names)
        for key in sorted(set(exp) | set(act), key=repr):
            e, a = exp.get(key), act.get(key)
            if e == a:
                continue
            if e is None or a is None:
                side, row = ("only in replay", a) if e is None else ("only in truth", e)
                out.append(f"{table} {dict(zip(key_names, key))}: {side}: {_short(row)}")
                continue
            fields = sorted(k for k in set(e) | set(a) if e.get(k) != a.get(k))
            detail = ", ".join(f"{f}: truth={e.get(f)!r} replay={a.get(f)!r}" for f in fields)
            out.append(f"{table} {dict(zip(key_names, key))}: {detail}")
    return out


def _index(rows: list[dict], key_names: tuple[str, ...]) -> dict[tuple, dict]:
    index: dict[tuple, dict] = {}
    for row in rows:
        key = tuple(row.get(k) for k in key_names)
        while key in index:  # duplicate keys stay visible as separate rows
            key = (*key, "dup")
        index[key] = row
    return index


def _short(row: dict) -> dict:
    return {k: v for k, v in row.items() if k not in ("cluster", "group_id", "scenario") and v is not None}


def member_names(events: list[Event]) -> dict[str, str]:
    """member id -> client id (the timeline's member name)."""
    return {e.member_id: e.client_id for e in events if e.member_id and e.client_id}


def partitions(*numbers: int, topic: str = "t") -> set[TopicPartition]:
    return {TopicPartition(topic, n) for n in numbers}


def events_of(events: list[Event], event_type: EventType, **fields) -> list[Event]:
    return [
        e
        for e in events
        if e.event_type == event_type.value and all(getattr(e, k) == v for k, v in fields.items())
    ]
