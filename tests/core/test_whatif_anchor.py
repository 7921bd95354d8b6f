"""The what-if sanity anchor: simulate a group, treat its events as the actual input, extract its
timeline and replay it under the *same* settings (`Scenario("as-actual")`): the measures must come back.

- both sides logged (classic): exactly, and the simulation is the same event for event;
- coordinator log only: counts exactly, timed measures within 5 % + 100 ms (default latencies: the
  coordinator shows only the sum of the steps, see the test);
- KIP-848 consumer protocol: counts exactly, timed measures within 5 % + 100 ms + a heartbeat interval
  per rebalance (and partition).

Timelines are drawn in the extraction's canonical forms (what the events cannot tell apart is drawn one
way): a killed process is back within its session timeout (else it is a crash and a later join), a
rejoin after a leave or crash comes after the bounce window, pauses outlast the timeouts they are
meant to break (a shorter pause leaves no trace in any log), and a member acts again only once the
rebalance its last action caused is over (closing a consumer in the middle of its own rejoin looks like
other things).
"""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rebalance_core.consumer import ConsumerSimSettings, simulate_consumer_group
from rebalance_core.replay_common import ReplaySettings
from rebalance_core.simulate import SimulationSettings, simulate
from rebalance_core.timeline import Crash, Join, Leave, PartitionCount, Pause, Restart, Subscribe, Timeline
from rebalance_core.whatif import (
    Scenario,
    TimelineExtractor,
    plan,
    replay_events,
    run_scenario,
    simulate_plan,
)
from schemas.events import Side
from schemas.tables import COMPARED_MEASURES

MEASURES = [name for name, _kind in COMPARED_MEASURES]
SETTLE_MS = 20_000  # after the last action's rebalance (and removals) before the next action
BOUNCE_WINDOW_MS = 600_000  # ExtractionOptions default
AS_ACTUAL = Scenario("as-actual")


@st.composite
def timelines(draw, session_ms: int = 45_000, max_poll_ms: int = 300_000, kinds=None) -> Timeline:
    """One action at a time in a settled group (the rebalance of the last one, including a removal a
    session timeout later, is over): a member killed while it waits in a rebalance, or frozen while the
    group waits for another's slow poll, shows in no log."""
    kinds = kinds or ("leave", "crash", "restart", "gc", "poll", "subscribe", "partitions", "rejoin")
    names = [f"c{i}" for i in range(1, draw(st.integers(2, 4)) + 1)]
    count = draw(st.integers(2, 8))
    actions: list = [
        Join(draw(st.sampled_from([0, 0, draw(st.integers(0, 20_000))])), name) for name in names
    ]
    gone: dict[str, int] = {}  # member -> when it left or crashed
    now = quiet_at = 30_000
    for _ in range(draw(st.integers(1, 6))):
        now = max(now, quiet_at) + draw(st.integers(0, 180_000))
        kind = draw(st.sampled_from(kinds))
        done = now  # when the action is over
        running = [n for n in names if n not in gone]
        if kind == "partitions":
            count += draw(st.integers(1, 3))
            actions.append(PartitionCount(now, "t", count))
        elif kind == "rejoin":
            back = [n for n, at in gone.items() if at + BOUNCE_WINDOW_MS < now]
            if not back:
                continue
            name = draw(st.sampled_from(back))
            actions.append(Join(now, name))
            del gone[name]
        elif not running:
            continue
        else:
            name = draw(st.sampled_from(running))
            if kind in ("leave", "crash"):
                actions.append(Leave(now, name) if kind == "leave" else Crash(now, name))
                gone[name] = now
            elif kind == "restart":
                graceful = draw(st.booleans())
                down = draw(st.integers(0, 120_000)) if graceful else draw(st.integers(0, session_ms - 1_000))
                actions.append(Restart(now, name, down, graceful))
                done = now + down
            elif kind in ("gc", "poll"):
                timeout = session_ms if kind == "gc" else max_poll_ms
                duration = timeout + draw(st.integers(1_000, 60_000))
                actions.append(Pause(now, name, duration, kind))
                done = now + duration
            else:
                actions.append(Subscribe(now, name, draw(st.sampled_from([("t", "u"), ("t",)]))))
        quiet_at = done + session_ms + SETTLE_MS
    return Timeline(topics={"t": _initial_count(actions, count), "u": 2}, actions=tuple(actions))


def _initial_count(actions, final: int) -> int:
    grown = [a.count for a in actions if isinstance(a, PartitionCount)]
    return min(grown) - 1 if grown else final


def totals(daily: list[dict]) -> dict[str, int]:
    return {name: sum(row[name] for row in daily) for name in MEASURES}


def extract(events, timeline: Timeline):
    extractor = TimelineExtractor(timeline.cluster, timeline.group_id)
    extractor.feed(events)
    return extractor.finish()


def actual_and_as_actual(events, timeline: Timeline) -> tuple[dict, dict]:
    extracted = extract(events, timeline)
    actual = replay_events(timeline.cluster, timeline.group_id, events, ReplaySettings())
    scenario = run_scenario(extracted, AS_ACTUAL)
    return totals(actual["group_daily_summary"]), totals(scenario["group_daily_summary"])


def assert_close(actual: dict, scenario: dict, timeline: Timeline, heartbeat_ms: int = 0) -> None:
    """Counts equal; times within 5 % + 100 ms, plus `heartbeat_ms` per rebalance (and per partition for
    partition-milliseconds): an instant off by a few milliseconds can move a member's noticing of a
    rebalance to its next heartbeat."""
    partitions = max(
        [c for c in timeline.topics.values()]
        + [a.count for a in timeline.actions if isinstance(a, PartitionCount)]
    )
    for name in MEASURES:
        if name.endswith("_ms"):
            flips = (
                actual["rebalances"]
                * heartbeat_ms
                * (2 * partitions if name == "partition_unavailable_ms" else 1)
            )
            assert abs(scenario[name] - actual[name]) <= 0.05 * actual[name] + 100 + flips, (
                name,
                actual,
                scenario,
            )
        else:
            assert scenario[name] == actual[name], (name, actual, scenario)


SIM_SETTINGS = st.sampled_from(
    [
        SimulationSettings(),
        SimulationSettings(assignor="cooperative-sticky"),
        SimulationSettings(static_membership=True),
        SimulationSettings(assignor="sticky", static_membership=True),
        SimulationSettings(
            join_round_trip_ms=40, sync_round_trip_ms=16, revoke_callback_ms=9, session_timeout_ms=20_000
        ),
        SimulationSettings(
            assignor="cooperative-sticky", join_round_trip_ms=60, sync_round_trip_ms=30, revoke_callback_ms=20
        ),
    ]
)
DEFAULT_LATENCY = [
    SimulationSettings(),
    SimulationSettings(assignor="cooperative-sticky"),
    SimulationSettings(static_membership=True),
    SimulationSettings(assignor="sticky", static_membership=True, session_timeout_ms=20_000),
]
QUICK = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@QUICK
@given(data=st.data(), sim_settings=SIM_SETTINGS)
def test_both_sides_logged_the_same_settings_replay_the_same_events(data, sim_settings):
    timeline = data.draw(timelines(session_ms=sim_settings.session_timeout_ms))
    events = simulate(timeline, sim_settings).events
    extracted = extract(events, timeline)
    again = simulate_plan(plan(extracted, AS_ACTUAL))
    assert [(e.ts, e.event_type, e.client_id) for e in again] == [
        (e.ts, e.event_type, e.client_id) for e in events
    ]
    actual, scenario = actual_and_as_actual(events, timeline)
    assert scenario == actual


@QUICK
@given(data=st.data(), sim_settings=st.sampled_from(DEFAULT_LATENCY))
def test_coordinator_log_only_reproduces_the_measures_within_the_latency_fit(data, sim_settings):
    # the coordinator shows only the sum of the round trips and the assignment (join_completed ->
    # assignment_received): with other than the default latencies, an instant off by a few ms can move a
    # member's noticing of a rebalance to its next heartbeat, merging or splitting rebalances
    # a poll pause leaves no trace on the coordinator's side until it times out: not drawn here
    kinds = ("leave", "crash", "restart", "gc", "subscribe", "partitions", "rejoin")
    timeline = data.draw(timelines(session_ms=sim_settings.session_timeout_ms, kinds=kinds))
    events = [e for e in simulate(timeline, sim_settings).events if e.side == Side.COORDINATOR.value]
    assert_close(*actual_and_as_actual(events, timeline), timeline)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), static=st.booleans())
def test_consumer_protocol_group_reproduces_its_measures(data, static):
    # KIP-848 logs do not say whose subscription changed: no subscribe drawn; the KIP-848 simulator logs
    # only the first partition count change of a topic (reported): no partitions drawn
    kinds = ("leave", "crash", "restart", "gc", "poll", "rejoin")
    timeline = data.draw(timelines(kinds=kinds))
    sim_settings = ConsumerSimSettings(static_membership=static)
    events = simulate_consumer_group(timeline, sim_settings).events
    # a KIP-848 crash takes effect after the member's next heartbeat, which no log dates
    assert_close(*actual_and_as_actual(events, timeline), timeline, sim_settings.heartbeat_interval_ms)


def test_a_kip848_member_back_from_a_pause_resumed_a_heartbeat_round_trip_before_its_fenced_line():
    """c1 sleeps (GC) past its session and is removed; on waking it heartbeats, and its FENCED transition is
    logged on the answer (AbstractHeartbeatRequestManager.onErrorResponse -> transitionToFenced), a round
    trip after it woke. Taking the line for the waking shifts every later heartbeat of c1, and at its
    graceful restart the old member's leave then reaches the coordinator before the new incarnation's
    join instead of after it: another target assignment, another count of moved partitions."""
    timeline = Timeline(
        topics={"t": 2, "u": 2},
        actions=(
            Join(at=0, member="c1"),
            Join(at=0, member="c2"),
            Pause(at=30_000, member="c1", duration_ms=46_000, kind="gc"),
            Restart(at=141_031, member="c1", down_ms=6, graceful=True),
        ),
        group_id="group",
    )
    events = simulate_consumer_group(timeline, ConsumerSimSettings()).events
    (pause,) = [a for a in extract(events, timeline).timeline.actions if isinstance(a, Pause)]
    assert pause.at + pause.duration_ms == 76_000
    actual, scenario = actual_and_as_actual(events, timeline)
    assert scenario["partitions_moved"] == actual["partitions_moved"]
