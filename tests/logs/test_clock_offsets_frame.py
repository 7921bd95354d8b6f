"""jobs.replay_batches.clock_offsets, the Spark job's per-group clock pre-pass, on a pandas frame alone (no
Spark): a row per member log the core's rule (rebalance_core.clock_alignment) shifts, typed as
CLOCK_OFFSET_COLUMNS, and none for synchronized logs."""

from __future__ import annotations

import pandas as pd
import pytest

from jobs.replay_batches import CLOCK_OFFSET_COLUMNS, clock_offsets
from rebalance_core.clock_alignment import FIELDS_READ, member_log_offsets
from tests.core.test_replay_clock_skew import _ahead, _logs, _replay


def _frame(events) -> pd.DataFrame:
    """The columns the job hands the pre-pass: the fields the rule reads, `ts` as `_ts_ms`."""
    names = [name for name in (*FIELDS_READ, "cluster", "group_id") if name != "ts"]
    frame = pd.DataFrame({name: [getattr(e, name) for e in events] for name in names})
    frame["_ts_ms"] = [e.ts for e in events]
    return frame


@pytest.mark.parametrize("ms", [-2_000, -150, 80, 2_000])
def test_clock_offsets_gives_the_cores_shift_per_member_log(ms):
    files = _logs()
    events, _ = _replay({**files, "c2.log": _ahead(files["c2.log"], ms)})
    out = clock_offsets(_frame(events), 100)
    assert list(out.columns) == [c.name for c in CLOCK_OFFSET_COLUMNS]
    assert out.to_dict("records") == [
        {"cluster": "k", "group_id": "g", "_log": log, "_clock_offset_ms": offset}
        for log, offset in member_log_offsets(events, 100).items()
    ]
    assert set(out["_log"]) == {"c2.log"}


def test_clock_offsets_of_synchronized_logs_is_an_empty_typed_frame():
    events, _ = _replay(_logs())
    out = clock_offsets(_frame(events), 100)
    assert out.empty and list(out.columns) == [c.name for c in CLOCK_OFFSET_COLUMNS]
    assert out["_clock_offset_ms"].dtype == "int64"


def test_the_fields_the_job_selects_give_the_cores_shifts_for_a_static_members_restart():
    """The job hands the pre-pass only FIELDS_READ: a static member's rejoin, answered long after its join phase
    with no new one (GroupCoordinator.updateStaticMemberAndRebalance), must stay unshifted there as in the core,
    which reads its group.instance.id (left out of FIELDS_READ, the job shifted it and its stops lost 4 ms)."""
    from tests.core import replay_scenarios as scenarios

    events = scenarios.static_restart()
    for e in events:
        e.cluster, e.group_id = e.cluster or "k", e.group_id or "g"
    core = member_log_offsets(events, 100)
    out = clock_offsets(_frame(events), 100)
    assert {row["_log"]: row["_clock_offset_ms"] for row in out.to_dict("records")} == core
