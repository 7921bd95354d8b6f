"""A broker's "Elected as / Resigned as the group coordinator for partition P" and "Scheduling (un)loading
of … __consumer_offsets-P" lines name no group: their events (`coordinator_elected` / `_resigned`) carry the
partition's name as group id for the coordinator moves (coordinator_moves.across_groups). No replay,
what-if or summary row may present `__consumer_offsets-P` as a consumer group."""

from __future__ import annotations

import pytest

from jobs.summary import build_summary
from rebalance_core.coordinator_moves import handover_of
from rebalance_core.explain import replay_explained
from rebalance_core.replay import replay
from rebalance_core.whatif import Scenario, WhatIfConfig, whatif
from tests.logs.kafka_log_fixtures import EXCERPT_LOGS, parse_fixture

WITH_HANDOVERS = [
    p
    for p in EXCERPT_LOGS
    if p.name in ("broker_1.1_session_timeout.log", "broker_3.5_static_pending_sync.log")
]


def pseudo_group_rows(tables: dict[str, list[dict]]) -> list[tuple[str, dict]]:
    return [
        (table, row)
        for table, rows in tables.items()
        for row in rows
        if str(row.get("group_id") or "").startswith("__consumer_offsets")
    ]


@pytest.mark.parametrize("path", WITH_HANDOVERS, ids=lambda p: p.name)
def test_no_row_presents_an_offsets_partition_as_a_group(path):
    events = parse_fixture(path).events
    handovers = [h for h in map(handover_of, events) if h is not None]
    assert handovers  # the coordinator moves still get them
    for tables in (
        replay(events),
        replay_explained(events),
        whatif(
            events,
            WhatIfConfig(
                (Scenario("as-actual"), Scenario("cooperative-sticky", assignor="cooperative-sticky"))
            ),
        ),
    ):
        assert not pseudo_group_rows(tables)
        summary = build_summary(tables["group_daily_summary"], tables["rebalance_episodes"])
        assert summary.groups and not [
            g for g in summary.groups if g.group_id.startswith("__consumer_offsets")
        ]


def test_the_fixtures_carry_handovers():
    assert len(WITH_HANDOVERS) == 2
