"""The workload generator's fleet, timelines and history stitching (rebalance_core.workload)."""

from __future__ import annotations

from collections import Counter
from dataclasses import replace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rebalance_core.events import Event
from rebalance_core.replay import replay
from rebalance_core.timeline import Join, Leave, Restart
from rebalance_core.workload.fleet import (
    CONSUMER,
    COOPERATIVE,
    EAGER,
    GROUP_KINDS,
    KIP848_MAX_MEMBERS,
    MAX_PARTITIONS,
    RECREATE_DEPLOY,
    ROLLING_DEPLOY,
    STATIC,
    GroupPlan,
    plan_fleet,
    plan_group,
    single_group_plan,
)
from rebalance_core.workload.segments import (
    GroupStream,
    estimated_events,
    group_segments,
    simulate_segment,
    stretch,
)

START = 1_704_067_200_000  # 2024-01-01T00:00:00Z
DAY = 86_400_000


def small_plan(kind: str, **changes) -> GroupPlan:
    """A 3-member group of `kind` (the first of the seed-0 fleet of that kind, made small and busy)."""
    plan = next(p for p in plan_fleet(200, 0) if p.kind == kind)
    topics = ((plan.topics[0][0], 6),)
    return replace(plan, members=3, topics=topics, deploys_per_day=1.0, autoscaled=True, **changes)


def history(plan: GroupPlan, days: int = 2) -> list[Event]:
    stream = GroupStream()
    return [e for s in group_segments(plan, START, days) for e in stream.join(simulate_segment(s))]


# ------------------------------------------------------------------------------------------ the fleet
def test_plans_are_deterministic_and_independent_of_the_fleet_size():
    assert plan_group(7, 3) == plan_group(7, 3)
    assert plan_fleet(10, 3) == plan_fleet(20, 3)[:10]
    assert plan_group(7, 3) != plan_group(7, 4)


def test_fleet_sizes_are_skewed_and_kinds_mixed():
    plans = plan_fleet(1000, 1)
    members = sorted(p.members for p in plans)
    assert members[0] >= 2 and members[-1] <= 500
    assert members[len(members) // 2] <= 6  # most groups are small ...
    assert members[-1] > 100  # ... a few are big
    partitions = [sum(count for _, count in p.topics) for p in plans]
    assert min(partitions) >= 1 and max(partitions) <= MAX_PARTITIONS
    kinds = Counter(p.kind for p in plans)
    assert set(kinds) == set(GROUP_KINDS) and min(kinds.values()) > 50
    assert all(p.members <= KIP848_MAX_MEMBERS for p in plans if p.kind == CONSUMER)
    assert len({p.group_id for p in plans}) == len(plans)


# ------------------------------------------------------------------------------------------ segments
def test_a_rolling_deploy_bounces_every_member_once():
    plan = replace(small_plan(EAGER), autoscaled=False)
    segments = group_segments(plan, START, 3)
    deploys = [s for s in segments if ROLLING_DEPLOY in s.incidents]
    assert deploys
    restarts = Counter(a.member for a in deploys[0].timeline.actions if isinstance(a, Restart))
    assert set(restarts.values()) == {restarts.most_common(1)[0][1]}
    assert len(restarts) >= plan.members


def test_incidents_happen_at_their_real_times_in_order():
    plan = small_plan(COOPERATIVE)
    for segment in group_segments(plan, START, 3):
        reals = [real for _, real in segment.stretch_points]
        compressed = [c for c, _ in segment.stretch_points]
        assert reals == sorted(reals) and compressed == sorted(compressed)
        assert all(r - c >= 0 for c, r in segment.stretch_points)


def test_recreate_deploys_cut_the_history_into_segments():
    plan = replace(small_plan(EAGER), recreate=True, autoscaled=False)
    segments = group_segments(plan, START, 3)
    assert len(segments) >= 2
    for segment in segments[:-1]:
        assert segment.incidents[-1] == RECREATE_DEPLOY
        leaves = {a.member for a in segment.timeline.actions if isinstance(a, Leave)}
        joined = {a.member for a in segment.timeline.actions if isinstance(a, Join)}
        assert leaves == joined  # everybody who runs at the end leaves: the group ends Empty


def test_an_events_target_keeps_a_group_rebalancing_until_about_that_many_events():
    plan = replace(single_group_plan(0), members=6, topics=(("clicks.events", 24),))
    segments = group_segments(plan, START, 1, events_target=4_000)
    assert estimated_events(segments) >= 4_000
    stream = GroupStream()
    events = [e for s in segments for e in stream.join(simulate_segment(s))]
    assert 2_000 <= len(events) <= 8_000


# ------------------------------------------------------------------------------------------ histories
@pytest.mark.parametrize("kind", GROUP_KINDS)
def test_a_generated_history_replays_without_anomalies(kind):
    events = history(small_plan(kind))
    assert [e.ts for e in events] == sorted(e.ts for e in events)
    assert len({e.event_id for e in events}) == len(events)
    assert [e.line for e in events] == list(range(1, len(events) + 1))
    tables = replay(events)
    assert tables["anomalies"] == []
    assert len(tables["generations"]) >= 2


def test_the_same_seed_gives_the_same_events():
    plan = small_plan(STATIC)
    assert [e.to_json_dict() for e in history(plan)] == [e.to_json_dict() for e in history(plan)]


def test_generations_continue_across_a_recreate_deploy():
    plan = replace(small_plan(EAGER), recreate=True, autoscaled=False)
    stream = GroupStream()
    segments = group_segments(plan, START, 3)
    first = stream.join(simulate_segment(segments[0]))
    second = stream.join(simulate_segment(segments[1]))
    empty = [e for e in first if e.event_type == "group_empty"][-1]
    prepared = next(e for e in second if e.event_type == "rebalance_prepared")
    completed = next(e for e in second if e.event_type == "join_completed")
    assert prepared.generation_id == empty.generation_id  # an Empty group keeps its generation
    assert completed.generation_id == empty.generation_id + 1
    assert second[0].ts > first[-1].ts


def test_epochs_continue_across_segments_of_a_consumer_group():
    plan = replace(small_plan(CONSUMER), recreate=True, autoscaled=False)
    stream = GroupStream()
    segments = group_segments(plan, START, 3)
    first = stream.join(simulate_segment(segments[0]))
    second = stream.join(simulate_segment(segments[1]))
    last_epoch = max(e.group_epoch for e in first if e.group_epoch is not None)
    bumps = [e.group_epoch for e in second if e.event_type == "group_epoch_bumped"]
    assert bumps[0] == last_epoch + 1 and bumps == sorted(bumps)
    member_epochs = [e.member_epoch for e in second if e.member_epoch is not None and e.member_epoch > 0]
    assert min(member_epochs) > last_epoch


# ------------------------------------------------------------------------------------------ stretch
def event_at(ts: int, n: int) -> Event:
    return Event(event_id=str(n), ts=ts, cluster="c", group_id="g", side="member", event_type="join_sent")


def test_stretch_moves_an_incident_only_after_a_quiet_gap():
    quiet_ms = 1_000
    events = [event_at(t, i) for i, t in enumerate([0, 10, 5_000, 5_010, 5_900, 6_000, 6_005])]
    # incident 1 at compressed 5000 -> real 100000 (quiet before: last event at 10)
    # incident 2 at compressed 6000 -> real 200000 (NOT quiet: an event at 5900)
    stretch(events, [(0, 0), (5_000, 100_000), (6_000, 200_000)], quiet_ms)
    assert [e.ts for e in events] == [0, 10, 100_000, 100_010, 100_900, 101_000, 101_005]


@settings(max_examples=60, deadline=None)
@given(
    times=st.lists(st.integers(0, 100_000), min_size=1, max_size=40).map(sorted),
    gaps=st.lists(st.tuples(st.integers(1, 20_000), st.integers(0, 50_000)), max_size=5),
)
def test_stretch_keeps_the_order_of_events(times, gaps):
    points, compressed, real = [], 0, 0
    for step, extra in gaps:
        compressed += step
        real += step + extra  # real gaps are never shorter than the compressed ones
        points.append((compressed, real))
    events = [event_at(t, i) for i, t in enumerate(times)]
    stretch(events, points, quiet_ms=500)
    moved = [e.ts for e in events]
    assert moved == sorted(moved)
    assert all(after >= before for after, before in zip(moved, times, strict=True))
