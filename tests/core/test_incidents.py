"""Patterns across a group's rebalances (`rebalance_incidents`): storms, stuck rebalances, rolling
restarts, flapping members, unowned partitions."""

from __future__ import annotations

import json

import pytest

from rebalance_core.explain import new_explained_replayer, replay_explained
from rebalance_core.incidents import IncidentSettings
from rebalance_core.measure_records import utc_date
from rebalance_core.replay import event_order_key
from rebalance_core.replay_common import ReplaySettings
from rebalance_core.simulate import load_scenario, simulate
from tests.core.replay_helpers import T0, ev, tps


def _explain(events, incident_settings=None, **settings):
    return replay_explained(
        sorted(events, key=event_order_key), ReplaySettings(**settings), incident_settings
    )


def _kinds(out, kind):
    return [r for r in out["rebalance_incidents"] if r["kind"] == kind]


def _rebalance(t, gen, reason, members="m1"):
    """One broker-logged rebalance: Preparing (old generation gen) -> Stabilized -> assignment."""
    return [
        ev(t, "rebalance_prepared", generation_id=gen, reason=reason),
        ev(t + 10, "join_completed", generation_id=gen + 1, leader_id="m1", members=members),
        ev(t + 20, "assignment_received", generation_id=gen + 1),
    ]


def test_n_rebalances_within_m_minutes_are_one_storm():
    events = []
    for k in range(6):  # one every minute
        events += _rebalance(k * 60_000, k, f"Updating metadata for member m1 during Stable #{k}")
    events += _rebalance(3_600_000, 6, "Updating metadata for member m1 during Stable")  # an hour later
    out = _explain(events, IncidentSettings(storm_rebalances=5, storm_window_ms=10 * 60_000))
    (storm,) = _kinds(out, "rebalance_storm")
    assert storm["episodes"] == 6
    assert storm["started_at"] == events[0].ts
    assert storm["ended_at"] == events[15].ts  # the sixth rebalance's start


def test_fewer_rebalances_than_the_threshold_are_no_storm():
    events = []
    for k in range(4):
        events += _rebalance(k * 60_000, k, "Updating metadata for member m1 during Stable")
    out = _explain(events, IncidentSettings(storm_rebalances=5))
    assert _kinds(out, "rebalance_storm") == []


def test_a_rebalance_open_longer_than_the_members_rebalance_timeout_is_stuck():
    events = [
        ev(0, "join_received", member_id="m1", attributes={"rebalance_timeout_ms": 60_000}),
        ev(
            1,
            "rebalance_prepared",
            generation_id=0,
            reason="Adding new member m1 with group instance id None",
        ),
        ev(90_000, "join_completed", generation_id=1, leader_id="m1", members="m1"),
        ev(90_010, "assignment_received", generation_id=1),
        *_rebalance(200_000, 1, "Updating metadata for member m1 during Stable"),  # 20 ms: not stuck
    ]
    out = _explain(events)
    (stuck,) = _kinds(out, "stuck_rebalance")
    assert stuck["duration_ms"] == 90_009
    assert "60000" in stuck["detail"]


def test_members_leaving_and_rejoining_one_after_another_are_a_rolling_restart():
    events = []
    t, gen = 0, 0
    for pod in ("pod-a", "pod-b", "pod-c"):
        old, new = f"{pod}-old", f"{pod}-new"
        events += [ev(t, "member_removed", member_id=old, reason="leave_group", client_id=pod)]
        events += _rebalance(
            t, gen, f"Removing member {old} on LeaveGroup; client reason: the consumer is being closed"
        )
        events += [ev(t + 30_000, "join_received", member_id=new, client_id=pod)]
        events += _rebalance(t + 30_000, gen + 1, f"Adding new member {new} with group instance id None")
        t, gen = t + 60_000, gen + 2
    out = _explain(events)
    (rolling,) = _kinds(out, "rolling_restart")
    assert rolling["members"] == ["pod-a", "pod-b", "pod-c"]
    assert rolling["episodes"] == 6
    assert _kinds(out, "flapping_member") == []


def test_the_same_member_leaving_and_rejoining_repeatedly_is_flapping():
    events = []
    for k in range(4):
        t = k * 120_000
        events += [
            ev(
                t,
                "member_removed",
                member_id=f"m2-{k}",
                reason="session_timeout",
                client_id="c2",
                attributes={"client_host": "/10.0.0.9"},
            )
        ]
        events += _rebalance(t, 2 * k, f"removing member m2-{k} on heartbeat expiration")
        events += [
            ev(
                t + 60_000,
                "join_received",
                member_id=f"m2-{k + 1}",
                client_id="c2",
                attributes={"client_host": "/10.0.0.9"},
            )
        ]
        events += _rebalance(
            t + 60_000, 2 * k + 1, f"Adding new member m2-{k + 1} with group instance id None"
        )
    out = _explain(events, IncidentSettings(flap_count=3, flap_window_ms=30 * 60_000))
    (flap,) = _kinds(out, "flapping_member")
    assert flap["members"] == ["c2@10.0.0.9"]
    assert "4 times" in flap["detail"]


def test_partitions_no_member_owns_in_a_stable_generation_are_unavailable_until_the_next_rebalance():
    # m1 subscribes to a and b, m2 to b only; the leader's assignment forgets a-1
    events = [
        ev(0, "join_received", member_id="m1", subscription="a b"),
        ev(0, "join_received", member_id="m2", subscription="b"),
        ev(
            1,
            "rebalance_prepared",
            generation_id=0,
            reason="Adding new member m1 with group instance id None",
        ),
        ev(10, "join_completed", generation_id=1, leader_id="m1", members="m1 m2"),
        ev(20, "assignment_received", generation_id=1, assignment={"m1": tps("a-0 b-0"), "m2": tps("b-1")}),
        ev(
            60_020,
            "rebalance_prepared",
            generation_id=1,
            reason="Updating metadata for member m2 during Stable",
        ),
        ev(60_030, "join_completed", generation_id=2, leader_id="m1", members="m1 m2"),
        ev(
            60_040,
            "assignment_received",
            generation_id=2,
            assignment={"m1": tps("a-0 a-1"), "m2": tps("b-0 b-1")},
        ),
    ]
    out = _explain(events, topics={"a": 2, "b": 2})
    (unowned,) = _kinds(out, "unowned_partitions")
    assert unowned["partitions"] == ["a-1"]
    assert unowned["started_at"] == events[4].ts
    assert unowned["ended_at"] == events[5].ts
    assert unowned["partition_unavailable_ms"] == 60_000
    assert unowned["uncounted_unavailable_ms"] == 60_000  # a-1 had no owner before: no movement row
    (summary,) = out["group_daily_summary"]
    assert summary["unowned_partition_ms"] == 60_000
    # the unowned time is part of the group's unavailability
    movements = sum(r["unavailable_ms"] or 0 for r in out["partition_movements"])
    assert summary["partition_unavailable_ms"] == movements + 60_000


def test_a_fully_assigned_group_has_no_unowned_partitions():
    doc = {
        "group_id": "g",
        "start": "2024-11-08T10:00:00Z",
        "topics": {"t": 6},
        "settings": {"assignor": "range"},
        "actions": [
            {"at": "0s", "action": "join", "member": "c1"},
            {"at": "0s", "action": "join", "member": "c2"},
            {"at": "60s", "action": "join", "member": "c3"},
        ],
    }
    events = simulate(*load_scenario(doc)).events
    out = replay_explained(events, ReplaySettings(topics={"t": 6}))
    assert _kinds(out, "unowned_partitions") == []
    assert all(r["unowned_partition_ms"] == 0 for r in out["group_daily_summary"])


def test_partitions_a_cooperative_round_withholds_for_revocation_are_not_unowned():
    doc = {
        "group_id": "g",
        "start": "2024-11-08T10:00:00Z",
        "topics": {"t": 8},
        "settings": {"assignor": "cooperative-sticky"},
        "actions": [
            {"at": "0s", "action": "join", "member": "c1"},
            {"at": "0s", "action": "join", "member": "c2"},
            {"at": "60s", "action": "join", "member": "c3"},
        ],
    }
    events = simulate(*load_scenario(doc)).events
    out = replay_explained(events, ReplaySettings(topics={"t": 8}))
    assert any(r["rounds"] == 2 for r in out["rebalance_episodes"])  # KIP-429: revoke, then hand out
    assert _kinds(out, "unowned_partitions") == []


# ------------------------------------------------------------------------- across nightly runs
_MIDNIGHT = T0 + 6_400_000  # 2023-11-15T00:00:00Z
_DAY = 86_400_000


def _rolling_restart_and_storm_across_midnight():
    """Three pods restarted one after another at 23:54, 23:59 and 00:04, each leaving and rejoining (six
    rebalances in ten minutes: also a storm), and a second storm whose last rebalance is at 23:57 on the
    next day: over only at 00:07 of the day after."""
    events, gen = [], 0
    for k, pod in enumerate(("pod-a", "pod-b", "pod-c")):
        t = _MIDNIGHT - T0 - 6 * 60_000 + k * 5 * 60_000
        old, new = f"{pod}-old", f"{pod}-new"
        events += [ev(t, "member_removed", member_id=old, reason="leave_group", client_id=pod)]
        events += _rebalance(t, gen, f"Removing member {old} on LeaveGroup; client reason: closing")
        events += [ev(t + 30_000, "join_received", member_id=new, client_id=pod)]
        events += _rebalance(t + 30_000, gen + 1, f"Adding new member {new} with group instance id None")
        gen += 2
    for k in range(5):
        t = _MIDNIGHT - T0 + _DAY - 7 * 60_000 + k * 60_000
        events += _rebalance(t, gen, "Updating metadata for member m1 during Stable")
        gen += 1
    return sorted(events, key=event_order_key)


def _run(events, run_end_ms, final, state=None):
    settings = ReplaySettings(final=final, run_end_ms=run_end_ms)
    replayer = new_explained_replayer("k", "g", settings, state, events)
    replayer.feed(events)
    out = replayer.finish()
    return out["rebalance_incidents"], json.loads(json.dumps(replayer.snapshot()))  # as group_state keeps it


@pytest.mark.parametrize("last_run_final", [True, False])
def test_incidents_across_midnight_are_the_same_run_night_by_night_or_at_once(last_run_final):
    events = _rolling_restart_and_storm_across_midnight()
    days = [_MIDNIGHT - _DAY, _MIDNIGHT, _MIDNIGHT + _DAY]  # the three dates' starts
    at_once, _ = _run(events, days[2] + _DAY - 1, last_run_final)
    nightly, state = [], None
    for i, start in enumerate(days):
        night = [e for e in events if start <= e.ts < start + _DAY]
        rows, state = _run(night, start + _DAY - 1, last_run_final if i == 2 else False, state)
        nightly += rows
    key = lambda r: (r["kind"], r["started_at"])  # noqa: E731
    assert sorted(nightly, key=key) == sorted(at_once, key=key)
    storms = [r for r in at_once if r["kind"] == "rebalance_storm"]
    (rolling,) = [r for r in at_once if r["kind"] == "rolling_restart"]
    # not cut at midnight: one storm and one rolling restart from 23:5x to 00:0x
    assert storms[0]["started_at"] < _MIDNIGHT < storms[0]["ended_at"]
    assert rolling["started_at"] < _MIDNIGHT < rolling["ended_at"]
    assert rolling["members"] == ["pod-a", "pod-b", "pod-c"]
    # dated when it was over: the second storm's last rebalance is at 23:57, its 10 min window ends
    # on the next day (the last run's last date when final: nothing after the input is known)
    late = storms[1]
    assert late["ended_at"] < _MIDNIGHT + _DAY and late["event_date"] == utc_date(_MIDNIGHT + _DAY)
    assert len(storms) == 2


def test_a_night_carries_what_may_go_on_and_a_rerun_of_the_next_night_writes_the_same():
    events = _rolling_restart_and_storm_across_midnight()
    first = [e for e in events if e.ts < _MIDNIGHT]
    rows, state = _run(first, _MIDNIGHT - 1, final=False)
    assert rows == []  # the rolling restart may go on, the four rebalances may become a storm: carried
    carried = state["explain"]["incidents"]
    assert carried["rolling_departed"] == ["pod-a", "pod-b"] and len(carried["recent_starts"]) == 4
    # a rerun of the second night from the same state writes the same rows (idempotent)
    second = [e for e in events if _MIDNIGHT <= e.ts < _MIDNIGHT + _DAY]
    assert _run(second, _MIDNIGHT + _DAY - 1, False, state) == _run(
        second, _MIDNIGHT + _DAY - 1, False, state
    )
