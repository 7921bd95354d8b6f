"""`simulate` runs the KIP-848 consumer protocol when the assignor is a broker-side one, and the
replayer reconstructs it exactly (the seeds' scenarios under `uniform` and `server-range`)."""

from __future__ import annotations

import pytest

from rebalance_core.simulate import SimulationError, SimulationSettings
from tests.core.sim_helpers import SCENARIOS, replay_events, run_scenario, table_differences

SEED_SCENARIOS = sorted(p.name for p in SCENARIOS.glob("0[1245]_*.yaml"))


@pytest.mark.parametrize("assignor", ["uniform", "server-range"])
@pytest.mark.parametrize("scenario", SEED_SCENARIOS)
def test_consumer_protocol_simulation_round_trips(scenario: str, assignor: str) -> None:
    result = run_scenario(scenario, assignor=assignor, protocol=None, scheduled_rebalance_max_delay_ms=0)
    assert {e.event_type for e in result.events} & {"target_assignment_computed", "member_epoch_updated"}
    assert all(g["group_protocol"] == "consumer" for g in result.truth["generations"])
    if result.unobservable:
        pytest.skip(f"unobservable: {result.unobservable}")
    assert table_differences(result.truth, replay_events(result.events)) == []


def test_consumer_protocol_needs_a_broker_side_assignor() -> None:
    with pytest.raises(SimulationError, match="broker-side assignor"):
        SimulationSettings(assignor="range", protocol="consumer")
    assert SimulationSettings(assignor="uniform").rebalance_protocol == "consumer"
