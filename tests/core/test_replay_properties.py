"""Properties of the replayer: random or truncated event streams never raise and every anomaly is
counted; rows have exactly the schema's columns; snapshot/resume at any position gives the same
output as one uninterrupted replay."""

from __future__ import annotations

import datetime as dt
import json
import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rebalance_core.classic.replayer import GroupReplayer
from rebalance_core.events import Event, TopicPartition
from rebalance_core.explain import ExplainedReplayer, replayer_columns
from rebalance_core.replay import event_order_key
from rebalance_core.replay_common import ReplaySettings
from schemas.events import EventType, RemovalReason
from schemas.tables import TABLES
from tests.core import replay_scenarios as sc
from tests.core.replay_helpers import CLUSTER, GROUP, T0, run, run_split

MEMBERS = ["a", "b", "c", "s-1", "s-2"]
PARTS = [TopicPartition("t", i) for i in range(4)] + [TopicPartition("u", 0)]
SETTINGS = ReplaySettings(topics={"t": 4, "u": 1}, session_timeout_ms=3000)
COORDINATOR_TYPES = {
    "join_received", "rebalance_prepared", "join_completed", "assignment_received", "group_stable",
    "member_removed", "static_member_replaced", "group_empty", "group_dead", "group_loaded",
    "group_unloaded", "topic_metadata_changed", "group_epoch_bumped", "target_assignment_computed",
    "member_epoch_updated",
}  # fmt: skip

REASONS = [r.value for r in RemovalReason] + ["need to revoke", "Removing member a on LeaveGroup"]
ATTRIBUTE_KEYS = ["state", "session_timeout_ms", "old_member_id", "delay_ms", "revoked", "topic.t"]
ATTRIBUTE_VALUES = ["Stable", "Empty", "AwaitingSync", "5", "0", "a", "", "-3"]


def random_events(rnd: random.Random, n: int, sort: bool) -> list[Event]:
    """n random events: mostly this group's, any type (and a bogus one), fields often missing. Drawn
    from a seeded Random (hypothesis drives the seed): fast, and still reproducible."""

    def maybe(make):
        return make() if rnd.random() < 0.6 else None

    def parts():
        return tuple(rnd.sample(PARTS, rnd.randint(0, 4)))

    events = []
    for i in range(n):
        event_type = rnd.choice([t.value for t in EventType] + ["bogus"])
        members = tuple(rnd.sample(MEMBERS, rnd.randint(0, 3)))
        events.append(
            Event(
                event_id=f"r{i}",
                ts=T0 + rnd.randint(0, 60_000),
                cluster=CLUSTER,
                group_id=GROUP if rnd.random() < 0.9 else "other",
                side="coordinator" if event_type in COORDINATOR_TYPES else "member",
                event_type=event_type,
                member_id=maybe(lambda: rnd.choice(MEMBERS)),
                group_instance_id=maybe(lambda: rnd.choice(["i1", "i2"])),
                generation_id=maybe(lambda: rnd.randint(0, 5)),
                protocol_name=maybe(lambda: rnd.choice(["range", "cooperative-sticky", "sessioned", "x"])),
                leader_id=maybe(lambda: rnd.choice(MEMBERS)),
                reason=maybe(lambda: rnd.choice(REASONS)),
                partitions=maybe(parts),
                members=members if rnd.random() < 0.6 else None,
                member_count=maybe(lambda: rnd.randint(0, 4)),
                assignment={m: parts() for m in members} if rnd.random() < 0.6 else None,
                attributes={
                    rnd.choice(ATTRIBUTE_KEYS): rnd.choice(ATTRIBUTE_VALUES) for _ in range(rnd.randint(0, 3))
                },
            )
        )
    return sorted(events, key=event_order_key) if sort else events


def event_streams(sort: bool = True):
    seeds = st.integers(0, 2**32).map(random.Random)
    return st.builds(random_events, seeds, st.integers(0, 60), st.just(sort))


def check_rows(out: dict[str, list[dict]], explained: bool = False) -> None:
    """Every row has its table's columns (a bare replayer's: without those rebalance_core.explain adds)."""
    for table, rows in out.items():
        names = [c.name for c in TABLES[table]] if explained else replayer_columns(table)
        for row in rows:
            assert sorted(row) == sorted(names), table
            assert isinstance(row["event_date"], dt.date)
            for column in TABLES[table]:
                if column.required:
                    assert row[column.name] is not None, (table, column.name)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(event_streams(sort=False))
def test_random_streams_never_raise_and_count_everything(events):
    replayer = GroupReplayer(CLUSTER, GROUP, SETTINGS)
    replayer.feed(events)
    json.dumps(replayer.snapshot())
    out = replayer.finish()
    check_rows(out)
    days = out["group_daily_summary"]
    assert sum(d["anomalies"] for d in days) == len(out["anomalies"])
    assert sum(d["events"] for d in days) == sum(e.group_id == GROUP for e in events)
    assert len(out["anomalies"]) >= sum(e.group_id != GROUP or e.event_type == "bogus" for e in events)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(event_streams(sort=False))
def test_random_streams_explained_never_raise_and_have_every_column(events):
    replayer = ExplainedReplayer(GroupReplayer(CLUSTER, GROUP, SETTINGS), SETTINGS)
    replayer.feed(events)
    json.dumps(replayer.snapshot())
    out = replayer.finish()
    check_rows(out, explained=True)
    for day in out["group_daily_summary"]:  # every episode has a cause, completed or not
        episodes = day["rebalances"] + day["rebalances_open"] + day["rebalances_started_before_input"]
        assert sum(day["causes"].values()) == episodes


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(event_streams(), st.lists(st.integers(0, 60), max_size=4))
def test_random_streams_split_and_resume(events, cuts):
    cuts = [min(c, len(events)) for c in cuts]
    assert run_split(events, cuts, SETTINGS) == run(events, SETTINGS)


@pytest.mark.parametrize("name", sorted(sc.ALL))
def test_scenarios_split_anywhere(name):
    events = sc.ALL[name]()
    whole = run(events, SETTINGS)
    check_rows(whole)
    for cut in range(len(events) + 1):
        assert run_split(events, [cut], SETTINGS) == whole, cut


@pytest.mark.parametrize("name", sorted(sc.ALL))
def test_truncated_scenarios_never_raise(name):
    events = sorted(sc.ALL[name](), key=event_order_key)
    for i in range(len(events) + 1):
        for part in (events[:i], events[i:]):
            out = run(part, SETTINGS)
            check_rows(out)
            assert sum(d["anomalies"] for d in out["group_daily_summary"]) == len(out["anomalies"])


@pytest.mark.parametrize("name", sorted(sc.ALL))
def test_scenarios_are_anomaly_free(name):
    assert run(sc.ALL[name]())["anomalies"] == []
