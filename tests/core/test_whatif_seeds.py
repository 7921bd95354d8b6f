"""The seed articles' worked example (/work/shared/seeds: c3 joins c1 {P1-P3} and c2 {P4-P6}) written as
Kafka 3.x broker + client logs (tests/fixtures/kafka_logs/seeds/, topic orders-0..5 for P1..P6), eager
range and cooperative-sticky. The what-if first reproduces what happened (the model check), then
predicts the other protocols, from both sides' logs and from the broker's `server.log` alone."""

from __future__ import annotations

import pytest

from rebalance_core.replay_common import ReplaySettings
from rebalance_core.whatif import Scenario, WhatIfConfig, whatif
from tests.logs.kafka_log_fixtures import FIXTURES, parse_fixture

SEEDS = FIXTURES / "seeds"
AS_ACTUAL = Scenario("as-actual")
COOPERATIVE_STICKY = Scenario("cooperative-sticky", assignor="cooperative-sticky")
EAGER_RANGE = Scenario("eager-range", assignor="range")
KIP848_UNIFORM = Scenario("kip848-uniform", protocol="consumer", assignor="uniform")
KIP415 = Scenario("kip415", scheduled_rebalance_max_delay_ms=10_000)
SCENARIOS = WhatIfConfig((AS_ACTUAL, COOPERATIVE_STICKY, EAGER_RANGE, KIP848_UNIFORM, KIP415))
# the broker's lines name no partition and no assignor: the topic's partition count and the consumers'
# assignor are configured, as a platform team knows them
CONFIGURED_ASSIGNOR = {"eager_join": "range", "cooperative_join": "cooperative-sticky"}
VIEWS = ("broker+clients", "broker-only")


def seed_whatif(story: str, view: str, settings: ReplaySettings | None = None) -> dict[str, dict]:
    """Scenario name -> its whatif_comparison row (the example fits in one day)."""
    files = (
        sorted((SEEDS / story).glob("*.log")) if view == "broker+clients" else [SEEDS / story / "server.log"]
    )
    events = [e for path in files for e in parse_fixture(path).events]
    if settings is None and view == "broker-only":
        settings = ReplaySettings(topics={"orders": 6}, default_assignor=CONFIGURED_ASSIGNOR[story])
    rows = whatif(events, SCENARIOS, settings)["whatif_comparison"]
    by_scenario = {row["scenario"]: row for row in rows}
    assert len(by_scenario) == len(rows) == len(SCENARIOS.scenarios)
    return by_scenario


@pytest.fixture(scope="module", params=VIEWS)
def eager_join(request):
    return seed_whatif("eager_join", request.param)


@pytest.fixture(scope="module", params=VIEWS)
def cooperative_join(request):
    return seed_whatif("cooperative_join", request.param)


def measures(row: dict, side: str) -> dict:
    names = ("rebalances", "partitions_moved", "revocations_wasted", "stw_ms", "partition_unavailable_ms")
    return {name: row[f"{name}_{side}"] for name in names}


# --------------------------------------------------------------------------- what happened first
def test_as_actual_reproduces_the_eager_join(eager_join):
    row = eager_join["as-actual"]
    assert row["model_check"] == "passed", row["model_check_detail"]
    actual = measures(row, "actual")
    # range: c1 {P1,P2}, c2 {P3,P4}, c3 {P5,P6}; everyone revoked everything behind one barrier
    assert actual["rebalances"] == 2 and actual["partitions_moved"] == 3 and actual["revocations_wasted"] == 3
    assert actual["stw_ms"] > 0
    assert row["actual_moments"], "the report explains the night with its costliest moments"


def test_as_actual_reproduces_the_cooperative_join_from_both_sides():
    row = seed_whatif("cooperative_join", "broker+clients")["as-actual"]
    assert row["model_check"] == "passed", row["model_check_detail"]
    actual = measures(row, "actual")
    # c1 gives up P3, c2 gives up P6 on their sync, then both go to c3 in the follow-up round
    assert actual["rebalances"] == 2 and actual["partitions_moved"] == 2 and actual["revocations_wasted"] == 0
    assert actual["stw_ms"] == 0


def test_broker_only_cooperative_join_replays_as_one_rebalance_of_two_rounds():
    # the broker alone knows the group is cooperative from the follow-up JoinGroup's client reason
    # ("need to revoke partitions and re-join", ConsumerCoordinator.onJoinComplete, KIP-429)
    no_assignor_configured = ReplaySettings(topics={"orders": 6})
    row = seed_whatif("cooperative_join", "broker-only", no_assignor_configured)["as-actual"]
    replayed = measures(row, "scenario")
    assert replayed["rebalances"] == 2 and replayed["partitions_moved"] == 2
    assert replayed["revocations_wasted"] == 0 and replayed["stw_ms"] == 0


def test_broker_only_cooperative_join_passes_the_model_check():
    row = seed_whatif("cooperative_join", "broker-only")["as-actual"]
    assert row["model_check"] == "passed", row["model_check_detail"]


# ------------------------------------------------------------------------------------- predictions
def test_eager_to_cooperative_sticky_has_no_barrier_moves_two_and_wastes_nothing(eager_join):
    row = eager_join["cooperative-sticky"]
    would = measures(row, "scenario")
    assert would["stw_ms"] == 0 and would["partitions_moved"] == 2 and would["revocations_wasted"] == 0
    assert would["partition_unavailable_ms"] < row["partition_unavailable_ms_actual"]


def test_cooperative_to_eager_range_moves_three_wastes_three_and_stops_the_world(cooperative_join):
    row = cooperative_join["eager-range"]
    would = measures(row, "scenario")
    assert would["partitions_moved"] == 3 and would["revocations_wasted"] == 3 and would["stw_ms"] > 0
    assert would["partition_unavailable_ms"] > row["partition_unavailable_ms_actual"]


@pytest.mark.parametrize("story", ["eager_join", "cooperative_join"])
@pytest.mark.parametrize("view", VIEWS)
def test_either_protocol_to_kip848_uniform_has_no_stop_the_world(story, view):
    # KIP-848 has no group-wide barrier: members reconcile one at a time
    row = seed_whatif(story, view)["kip848-uniform"]
    assert row["rebalances_scenario"] > 0 and row["stw_ms_scenario"] == 0


@pytest.mark.parametrize("story", ["eager_join", "cooperative_join"])
def test_kip415_for_the_consumer_group_is_not_applicable(story):
    row = seed_whatif(story, "broker+clients")["kip415"]
    assert row["rebalances_scenario"] is None and row["partition_unavailable_ms_scenario"] is None
