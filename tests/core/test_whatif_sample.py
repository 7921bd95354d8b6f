"""The what-if of the bundled sample's prod-eu/inventory (jobs/sample_data: static members; i1 killed and
replaced by a new process at once, i2 crashed and back 90 s later) under the shipped scenarios."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from jobs.sample_data.generate import simulated_events
from rebalance_core.whatif import load_whatif, whatif

CONF = Path(__file__).resolve().parents[2] / "conf" / "whatif.yaml"


@pytest.fixture(scope="module")
def inventory() -> dict[str, dict]:
    events = [e for e in simulated_events() if (e.cluster, e.group_id) == ("prod-eu", "inventory")]
    out = whatif(events, load_whatif(yaml.safe_load(CONF.read_text())))
    rows = {row["scenario"]: row for row in out["whatif_comparison"]}
    assert len(rows) == len(out["whatif_comparison"])  # one day
    return rows


def test_as_actual_reproduces_the_inventory_group(inventory):
    row = inventory["as-actual"]
    assert row["model_check"] == "passed", row["model_check_detail"]


def test_kip848_has_no_group_wide_barrier(inventory):
    # 45 s of stop-the-world would need every member down at once. A static member killed and restarted
    # at once is refused (UNRELEASED_INSTANCE_ID) until its old member's session expires: it is back
    # before i2 crashes, so someone always consumes
    row = inventory["consumer-protocol"]
    assert row["rebalances_scenario"] > 0
    assert row["stw_ms_scenario"] == 0


def test_static_membership_counts_a_down_static_members_partitions_as_unavailable(inventory):
    # i2 is down 90 s (crash at 08:06:00, back 08:07:30) within the 2-minute session: no rebalance, and
    # its 2 partitions are consumed by no one meanwhile
    row = inventory["static-membership"]
    assert row["rebalances_scenario"] < row["rebalances_actual"]
    assert row["partition_unavailable_ms_scenario"] >= 2 * 90_000
    assert row["partition_unavailable_ms_scenario"] > row["partition_unavailable_ms_actual"]
    costliest = row["scenario_moments"][0]
    assert "i2 crashes" in costliest and "no rebalance" in costliest
