"""What-if replays, one behaviour at a time: the configuration, what extraction reads from events, how a
scenario changes the settings, the comparison rows, and the answers to the questions users bring
("what would last night's restarts have cost with cooperative-sticky / static membership / ...")."""

from __future__ import annotations

import dataclasses
import datetime as dt
from pathlib import Path

import pytest
import yaml

from rebalance_core.consumer import ConsumerSimSettings, simulate_consumer_group
from rebalance_core.explain import replayer_columns
from rebalance_core.latency import LatencyFit, LatencyModel
from rebalance_core.simulate import SimulationSettings, simulate
from rebalance_core.timeline import (
    Crash,
    Heartbeat,
    Join,
    Leave,
    PartitionCount,
    Pause,
    Restart,
    Subscribe,
    Timeline,
)
from rebalance_core.whatif import (
    ExtractionOptions,
    GroupWhatIf,
    NotApplicable,
    Scenario,
    TimelineExtractor,
    WhatIfConfig,
    WhatIfError,
    compare_daily,
    load_whatif,
    plan,
    whatif,
)
from schemas.events import EventType, Side
from schemas.tables import TABLES

CONF = Path(__file__).resolve().parents[2] / "conf" / "whatif.yaml"
S = 1_000


def group(*actions, topics=None) -> Timeline:
    return Timeline(topics=topics or {"t": 6}, actions=actions, cluster="k", group_id="g")


def extract(events, **options):
    extractor = TimelineExtractor("k", "g", ExtractionOptions(**options))
    extractor.feed(events)
    return extractor.finish()


def coordinator_only(events):
    return [e for e in events if e.side == Side.COORDINATOR.value]


def actions_of(extracted):
    """The timeline's actions but the joins and the heartbeat instants."""
    return [a for a in extracted.timeline.actions if not isinstance(a, (Join, Heartbeat))]


def absolute(extracted, action):
    return extracted.timeline.start_ms + action.at


def compared(events, *scenarios) -> dict[str, dict]:
    """Scenario name -> that scenario's whatif_comparison totals over all dates."""
    out = whatif(events, WhatIfConfig(tuple(scenarios)))
    totals: dict[str, dict] = {}
    for row in out["whatif_comparison"]:
        into = totals.setdefault(row["scenario"], {})
        for key, value in row.items():
            if key.endswith(("_actual", "_scenario", "_delta")) and value is not None:
                into[key] = into.get(key, 0) + value
    return totals


# ------------------------------------------------------------------------------------ configuration
def test_the_shipped_scenarios_load():
    config = load_whatif(yaml.safe_load(CONF.read_text()))
    names = [s.name for s in config.scenarios]
    assert names[0] == "as-actual" and {
        "cooperative-sticky",
        "static-membership",
        "long-session-timeout",
        "consumer-protocol",
    } <= set(names)
    long = config.select(["long-session-timeout"]).scenarios[0]
    assert long.session_timeout_ms == 120_000 and long.assignor is None
    assert config.extraction.bounce_window_ms == 600_000


@pytest.mark.parametrize(
    "doc, message",
    [
        ({"scenarios": [{"name": "x", "assignor": "fancy"}]}, "assignor must be one of"),
        ({"scenarios": [{"name": "x", "colour": "red"}]}, r"unknown field\(s\) colour"),
        ({"scenarios": [{"name": "actual"}]}, "'actual' names the replay"),
        ({"scenarios": [{"name": "a"}, {"name": "a"}]}, "used twice: a"),
        (
            {"scenarios": [{"name": "x", "protocol": "eager", "assignor": "uniform"}]},
            "KIP-848 server assignor",
        ),
        ({"scenarios": [{"name": "x", "session_timeout_ms": "soon"}]}, "session_timeout_ms"),
        ({"scenarios": []}, "non-empty list"),
        ({"scenarios": [{"name": "x"}], "extraction": {"expired_rejoin": "maybe"}}, "restart or pause"),
    ],
)
def test_bad_what_if_files_are_clear_errors(doc, message):
    with pytest.raises(WhatIfError, match=message):
        load_whatif(doc)


def test_selecting_scenarios_keeps_the_order_given_and_names_unknown_ones():
    config = WhatIfConfig((Scenario("a"), Scenario("b"), Scenario("c")))
    assert [s.name for s in config.select(["c", "a"]).scenarios] == ["c", "a"]
    with pytest.raises(WhatIfError, match="unknown scenario.*zz.*known: a, b, c"):
        config.select(["zz"])


# --------------------------------------------------------------------------------------- extraction
def test_a_crash_is_replayed_at_its_last_heartbeat_from_the_coordinator_log():
    events = simulate(
        group(Join(0, "c1"), Join(0, "c2"), Crash(60 * S, "c2")),
        SimulationSettings(session_timeout_ms=20 * S),
    ).events
    extracted = extract(coordinator_only(events))
    (crash,) = actions_of(extracted)
    assert isinstance(crash, Crash) and crash.member == "c2"
    assert absolute(extracted, crash) == events[0].ts + 60 * S
    assert extracted.actual.session_timeout_ms == 20 * S and "session_timeout_ms" in extracted.actual.observed


def test_a_rolling_restart_is_a_restart_of_each_process():
    timeline = group(
        Join(0, "c1"), Join(0, "c2"), Restart(60 * S, "c1", 8 * S), Restart(120 * S, "c2", 8 * S)
    )
    extracted = extract(simulate(timeline, SimulationSettings()).events)
    assert actions_of(extracted) == [Restart(60 * S, "c1", 8 * S, True), Restart(120 * S, "c2", 8 * S, True)]


def test_a_process_back_after_the_bounce_window_left_and_joined_again():
    timeline = group(Join(0, "c1"), Join(0, "c2"), Leave(60 * S, "c1"), Join(700 * S, "c1"))
    extracted = extract(simulate(timeline, SimulationSettings()).events, bounce_window_ms=300 * S)
    assert actions_of(extracted) == [Leave(60 * S, "c1")]
    assert [a.at for a in extracted.timeline.actions if isinstance(a, Join) and a.member == "c1"] == [
        0,
        700 * S,
    ]


def test_a_member_the_group_dropped_while_it_ran_was_paused_not_crashed():
    timeline = group(Join(0, "c1"), Join(0, "c2"), Pause(60 * S, "c2", 50 * S, "gc"))
    events = simulate(timeline, SimulationSettings()).events
    assert actions_of(extract(events)) == [Pause(60 * S, "c2", 50 * S, "gc")]
    # the coordinator alone sees it too: the rejoin's client reason is the fenced member's; the pause's
    # end is dated from the rejoin, which follows the heartbeat thread's own wake-up lines (the
    # simulator's next millisecond): within a millisecond
    (paused,) = actions_of(extract(coordinator_only(events)))
    assert (paused.at, paused.member, paused.kind) == (60 * S, "c2", "gc")
    assert 50 * S <= paused.duration_ms <= 50 * S + 1


def test_a_poll_timeout_is_a_slow_poll_from_max_poll_interval_before_it():
    timeline = group(Join(0, "c1"), Join(0, "c2"), Pause(60 * S, "c1", 320 * S, "poll"))
    extracted = extract(simulate(timeline, SimulationSettings()).events)
    assert actions_of(extracted) == [Pause(60 * S, "c1", 320 * S, "poll")]


def test_a_static_member_killed_and_replaced_is_a_restart_from_the_rebalance_it_missed():
    timeline = group(
        Join(0, "c1"),
        Join(0, "c2"),
        Join(0, "c3"),
        Crash(50 * S, "c1"),
        Restart(70 * S, "c2", 26 * S, graceful=False),
    )
    extracted = extract(
        coordinator_only(simulate(timeline, SimulationSettings(static_membership=True)).events)
    )
    crash, restart = actions_of(extracted)
    assert crash == Crash(50 * S, "c1")
    # the crash instant is in no log; c2 did not rejoin the rebalance c1's expiry started at 95 s
    assert restart == Restart(95 * S, "c2", 1 * S, graceful=False)
    assert {a.member: a.instance_id for a in extracted.timeline.actions if isinstance(a, Join)} == {
        "c1": "c1",
        "c2": "c2",
        "c3": "c3",
    }


def test_subscription_and_partition_count_changes():
    timeline = group(
        Join(0, "c1", topics=("t",)),
        Join(0, "c2", topics=("t",)),
        Subscribe(60 * S, "c1", ("t", "u")),
        PartitionCount(120 * S, "t", 8),
        topics={"t": 6, "u": 2},
    )
    extracted = extract(simulate(timeline, SimulationSettings()).events)
    assert actions_of(extracted) == [Subscribe(60 * S, "c1", ("t", "u")), PartitionCount(120 * S, "t", 8)]
    assert extracted.timeline.topics == {"t": 6, "u": 2}


def test_members_already_there_when_the_input_starts_join_in_an_unmeasured_warm_up():
    events = simulate(group(Join(0, "c1"), Join(0, "c2"), Crash(120 * S, "c2")), SimulationSettings()).events
    later = [e for e in events if e.ts >= events[0].ts + 100 * S]
    extracted = extract(later)
    assert extracted.observed_from == later[0].ts
    assert extracted.timeline.start_ms < later[0].ts and any("warm-up" in note for note in extracted.notes)
    joins = [a for a in extracted.timeline.actions if isinstance(a, Join)]
    assert [a.at for a in joins] == [0, 0]


def test_joins_and_leaves_only_target_assignments_show_are_replayed():
    """KIP-848 coordinator lines without join or leave lines: the membership change between two target
    assignments is the evidence."""
    timeline = group(Join(0, "c1"), Join(0, "c2"), Join(60 * S, "c3"), Leave(120 * S, "c1"))
    kept = ("group_epoch_bumped", "target_assignment_computed", "member_epoch_updated")
    events = [
        e for e in simulate_consumer_group(timeline, ConsumerSimSettings()).events if e.event_type in kept
    ]
    extracted = extract(events)
    moments = {
        (type(a).__name__, a.member): absolute(extracted, a) - timeline.start_ms
        for a in extracted.timeline.actions
    }
    assert (
        moments[("Join", "c3")] == 60 * S + 1 and moments[("Leave", "c1")] == 120 * S + 6
    )  # + network, callback
    assert moments[("Join", "c2")] == 2  # the first target without it: c2 joined in that rebalance


def test_latency_is_fitted_from_both_sides_and_the_rest_are_the_simulator_defaults():
    settings = SimulationSettings(
        join_round_trip_ms=40, sync_round_trip_ms=16, revoke_callback_ms=9, assignment_ms=3
    )
    fit = LatencyFit()
    fit.feed(simulate(group(Join(0, "c1"), Join(0, "c2"), Leave(60 * S, "c1")), settings).events)
    model = fit.model()
    assert (
        model.join_round_trip_ms,
        model.sync_round_trip_ms,
        model.revoke_callback_ms,
        model.assignment_ms,
    ) == (40, 16, 9, 3)
    assert model.group_initial_rebalance_delay_ms == 3_000  # the initial delay, not its extension
    assert LatencyFit().model() == LatencyModel()  # nothing seen: defaults, nothing fitted


def test_a_group_without_events_has_no_timeline():
    with pytest.raises(WhatIfError, match="no events"):
        TimelineExtractor("k", "g").finish()


# -------------------------------------------------------------------------------------- scenarios
def extracted_group(**settings):
    return extract(simulate(group(Join(0, "c1"), Join(0, "c2")), SimulationSettings(**settings)).events)


def test_a_scenario_changes_only_what_it_names():
    extracted = extracted_group(session_timeout_ms=30 * S)
    scenario_plan = plan(extracted, Scenario("x", session_timeout_ms=90 * S))
    assert scenario_plan.settings.session_timeout_ms == 90 * S
    assert (scenario_plan.settings.assignor, scenario_plan.settings.rebalance_protocol) == ("range", "eager")
    # another assignor brings its own protocol (KIP-429: cooperative-sticky is cooperative)
    assert (
        plan(extracted, Scenario("x", assignor="cooperative-sticky")).settings.rebalance_protocol
        == "cooperative"
    )


def test_static_membership_on_and_off():
    extracted = extracted_group(static_membership=True)
    assert {
        a.instance_id for a in plan(extracted, Scenario("x")).timeline.actions if isinstance(a, Join)
    } == {"c1", "c2"}
    off = plan(extracted, Scenario("x", static_membership=False))
    assert {a.instance_id for a in off.timeline.actions if isinstance(a, Join)} == {None}
    assert plan(extracted_group(), Scenario("x", static_membership=True)).settings.static_membership


def test_the_consumer_protocol_runs_the_kip848_simulator_with_a_server_assignor():
    extracted = extracted_group()
    scenario_plan = plan(extracted, Scenario("x", protocol="consumer", assignor="range"))
    assert (
        isinstance(scenario_plan.settings, ConsumerSimSettings)
        and scenario_plan.settings.assignor == "server-range"
    )
    with pytest.raises(NotApplicable, match="uniform and range"):
        plan(extracted, Scenario("x", protocol="consumer", assignor="sticky"))


def test_a_kip848_scenario_of_a_classic_group_takes_the_brokers_session_timeout():
    # KIP-848: the coordinator expires a consumer-protocol member after group.consumer.session.timeout.ms
    # (broker, 45 s default); the classic client's session.timeout.ms is not part of that protocol
    extracted = extracted_group(session_timeout_ms=10 * S)
    assert plan(extracted, Scenario("x", protocol="consumer")).settings.session_timeout_ms == 45 * S
    stated = plan(extracted, Scenario("x", protocol="consumer", session_timeout_ms=60 * S))
    assert stated.settings.session_timeout_ms == 60 * S


def test_under_kip848_a_killed_static_member_is_back_only_once_its_old_session_expired():
    # GroupMetadataManager.throwIfInstanceIdIsUnreleased: UNRELEASED_INSTANCE_ID, fatal for the new process
    timeline = group(Join(0, "c1"), Join(0, "c2"), Restart(60 * S, "c1", 2 * S, graceful=False))
    events = simulate(timeline, SimulationSettings(static_membership=True, session_timeout_ms=20 * S)).events
    extracted = extract(events)
    (killed,) = actions_of(extracted)  # the kill instant is in no log: down 0 at the replacement
    assert isinstance(killed, Restart) and killed.member == "c1" and not killed.graceful
    kip848 = plan(extracted, Scenario("x", protocol="consumer", assignor="uniform"))
    (restart,) = [a for a in kip848.timeline.actions if isinstance(a, Restart)]
    # the old member is fenced after the broker's group.consumer.session.timeout.ms (45 s by default),
    # not the classic group's session.timeout.ms (20 s here)
    assert kip848.settings.session_timeout_ms == 45 * S
    assert restart == dataclasses.replace(killed, down_ms=45 * S + kip848.settings.heartbeat_interval_ms)
    classic = plan(extracted, Scenario("y", assignor="cooperative-sticky"))
    assert killed in classic.timeline.actions


def test_a_protocol_the_assignor_does_not_support_is_not_applicable_and_stays_visible():
    events = simulate(group(Join(0, "c1"), Join(0, "c2")), SimulationSettings()).events
    side = GroupWhatIf("k", "g", WhatIfConfig((Scenario("coop-range", protocol="cooperative"),)))
    side.feed(events)
    actual_daily = [{"cluster": "k", "group_id": "g", "event_date": dt.date(2024, 11, 5), "rebalances": 1, "stw_ms": 5,
                     "partition_unavailable_ms": 0, "partitions_moved": 0, "revocations_wasted": 0}]  # fmt: skip
    out = side.finish(actual_daily)
    (row,) = out["whatif_comparison"]
    assert (
        row["rebalances_actual"] == 1 and row["rebalances_scenario"] is None and row["stw_ms_delta"] is None
    )
    assert "supports eager" in side.outcomes[0].not_applicable
    assert out["generations"] == []
    (note,) = [a for a in out["anomalies"] if a["rule"] == "whatif_not_applicable"]
    assert (note["scenario"], note["rule"]) == (
        "coop-range",
        "whatif_not_applicable",
    ) and "supports eager" in note["detail"]


KIP415 = Scenario("kip415", protocol="cooperative", assignor="cooperative-sticky",
                  scheduled_rebalance_max_delay_ms=30 * S)  # fmt: skip


@pytest.mark.parametrize("protocol_type", ["consumer", None])
def test_kip415_for_a_consumer_group_is_not_applicable_never_numbers(protocol_type):
    # scheduled.rebalance.max.delay.ms is Kafka Connect's (IncrementalCooperativeAssignor); a consumer
    # group, or one whose events do not show it is Connect, gets no numbers for it
    events = simulate(
        group(Join(0, "c1"), Join(0, "c2"), Restart(60 * S, "c2", 5 * S)), SimulationSettings()
    ).events
    events = [dataclasses.replace(e, protocol_type=protocol_type) for e in events]
    out = whatif(events, WhatIfConfig((KIP415,)))
    assert out["whatif_comparison"]
    for row in out["whatif_comparison"]:
        assert row["rebalances_scenario"] is None and row["partition_unavailable_ms_scenario"] is None
    (note,) = [a for a in out["anomalies"] if a["rule"] == "whatif_not_applicable"]
    assert "Kafka Connect" in note["detail"]
    assert not [r for r in out["generations"] if r["scenario"] == "kip415"]


def test_kip415_for_a_connect_group_still_runs():
    # a Connect worker group (rebalance_core.classic.connect), whose workers do have the delay
    events = simulate(
        group(Join(0, "c1"), Join(0, "c2"), Restart(60 * S, "c2", 5 * S)),
        SimulationSettings(assignor="sessioned", scheduled_rebalance_max_delay_ms=0),
    ).events
    out = whatif(events, WhatIfConfig((Scenario("kip415", scheduled_rebalance_max_delay_ms=30 * S),)))
    assert not [a for a in out["anomalies"] if a["rule"] == "whatif_not_applicable"]
    assert all(row["rebalances_scenario"] is not None for row in out["whatif_comparison"])


def connect_group_events(max_delay_ms):
    return simulate(
        group(Join(0, "c1"), Join(0, "c2"), Restart(60 * S, "c2", 5 * S)),
        SimulationSettings(assignor="sessioned", scheduled_rebalance_max_delay_ms=max_delay_ms),
    ).events


@pytest.mark.parametrize("max_delay_ms", [0, 30 * S, None])  # None: Connect's default, 5 min
def test_a_connect_group_s_as_actual_runs_connect_s_assignor_and_reproduces_it(max_delay_ms):
    # WorkerCoordinator's protocols (compatible / sessioned) are assigned by the leader's
    # IncrementalCooperativeAssignor: a consumer's cooperative-sticky revoked 6 tasks where the workers
    # revoked 3; the delay is the one the first assignment after the lost work carried
    events = connect_group_events(max_delay_ms)
    extracted = extract(events)
    assert (extracted.actual.assignor, extracted.actual.protocol) == ("sessioned", "cooperative")
    assert extracted.actual.scheduled_rebalance_max_delay_ms == (
        300 * S if max_delay_ms is None else max_delay_ms
    )
    rows = whatif(events, WhatIfConfig((Scenario("as-actual"),)))["whatif_comparison"]
    assert rows and all(row["model_check"] == "passed" for row in rows), rows[0]["model_check_detail"]


@pytest.mark.parametrize(
    "scenario",
    [Scenario("coop", assignor="cooperative-sticky"), Scenario("eager", protocol="eager"),
     Scenario("static", static_membership=True)],
)  # fmt: skip
def test_a_connect_group_gets_no_numbers_for_what_its_workers_cannot_use(scenario):
    # Connect workers have neither consumer assignors, nor the eager protocol here, nor KIP-345
    out = whatif(connect_group_events(0), WhatIfConfig((scenario,)))
    assert all(row["rebalances_scenario"] is None for row in out["whatif_comparison"])
    (note,) = [a for a in out["anomalies"] if a["rule"] == "whatif_not_applicable"]
    assert "Connect" in note["detail"]


# ------------------------------------------------------------------------------------- comparison
def test_comparison_rows_per_date_with_deltas_scenario_minus_actual():
    day1, day2 = dt.date(2024, 11, 8), dt.date(2024, 11, 9)
    key = {"cluster": "k", "group_id": "g"}
    zero = {
        "rebalances": 0,
        "stw_ms": 0,
        "partition_unavailable_ms": 0,
        "partitions_moved": 0,
        "revocations_wasted": 0,
    }
    actual = [{**key, **zero, "event_date": day1, "rebalances": 2, "stw_ms": 300}]
    scenario = [
        {**key, **zero, "event_date": day1, "rebalances": 1},
        {**key, **zero, "event_date": day2, "stw_ms": 40},
    ]
    rows = compare_daily("k", "g", "s", actual, scenario)
    assert [
        (r["event_date"], r["rebalances_delta"], r["stw_ms_actual"], r["stw_ms_scenario"], r["stw_ms_delta"])
        for r in rows
    ] == [
        (day1, -1, 300, 0, -300),
        (day2, 0, 0, 40, 40),
    ]
    assert all(sorted(r) == sorted(c.name for c in TABLES["whatif_comparison"]) for r in rows)


def test_scenario_rows_carry_the_scenario_name_and_the_table_columns():
    events = simulate(group(Join(0, "c1"), Join(0, "c2"), Crash(60 * S, "c2")), SimulationSettings()).events
    out = whatif(events, WhatIfConfig((Scenario("coop", assignor="cooperative-sticky"),)))
    assert {r["scenario"] for r in out["generations"]} == {"actual", "coop"}
    for table, rows in out.items():
        names = sorted(replayer_columns(table))  # the replayer's columns (not rebalance_core.explain's)
        assert all(sorted(row) == names for row in rows), table


# --------------------------------------------------------------------------- the questions users ask
def test_cooperative_sticky_removes_the_stop_the_world_of_an_eager_group():
    timeline = group(
        Join(0, "c1"), Join(0, "c2"), Join(0, "c3"), Restart(60 * S, "c1", 10 * S), Crash(200 * S, "c2")
    )
    totals = compared(
        simulate(timeline, SimulationSettings()).events, Scenario("coop", assignor="cooperative-sticky")
    )["coop"]
    assert totals["stw_ms_actual"] > 0 and totals["stw_ms_scenario"] == 0
    assert totals["revocations_wasted_actual"] > 0 and totals["revocations_wasted_scenario"] == 0


def test_static_membership_turns_a_rolling_deploy_into_no_rebalance():
    deploy = [Restart((60 + 30 * i) * S, f"c{i}", 10 * S) for i in range(1, 4)]
    timeline = group(Join(0, "c1"), Join(0, "c2"), Join(0, "c3"), *deploy)
    totals = compared(
        simulate(timeline, SimulationSettings()).events, Scenario("static", static_membership=True)
    )["static"]
    assert totals["rebalances_actual"] == 1 + 2 * 3  # the first join, then a leave and a join per restart
    assert totals["rebalances_scenario"] == 1
    assert totals["partitions_moved_scenario"] == 0


def test_a_longer_session_timeout_rides_out_a_gc_pause_but_notices_a_crash_later():
    pause = group(Join(0, "c1"), Join(0, "c2"), Pause(60 * S, "c2", 50 * S, "gc"))
    totals = compared(
        simulate(pause, SimulationSettings()).events, Scenario("long", session_timeout_ms=120 * S)
    )["long"]
    assert totals["rebalances_delta"] < 0
    crash = group(Join(0, "c1"), Join(0, "c2"), Crash(60 * S, "c2"))
    totals = compared(
        simulate(crash, SimulationSettings()).events, Scenario("long", session_timeout_ms=120 * S)
    )["long"]
    assert totals["partition_unavailable_ms_delta"] > 0


def test_the_consumer_protocol_has_no_stop_the_world():
    timeline = group(Join(0, "c1"), Join(0, "c2"), Join(60 * S, "c3"), Leave(120 * S, "c1"))
    totals = compared(
        simulate(timeline, SimulationSettings()).events, Scenario("kip848", protocol="consumer")
    )["kip848"]
    assert totals["stw_ms_actual"] > 0 and totals["stw_ms_scenario"] == 0


def test_the_as_actual_scenario_of_a_simulated_group_changes_nothing():
    timeline = group(
        Join(0, "c1"), Join(0, "c2"), Restart(60 * S, "c1", 5 * S), Pause(200 * S, "c2", 50 * S, "gc")
    )
    totals = compared(simulate(timeline, SimulationSettings()).events, Scenario("as-actual"))["as-actual"]
    assert all(value == 0 for key, value in totals.items() if key.endswith("_delta"))
    assert dataclasses.replace(Scenario("x")).assignor is None


def test_a_static_member_whose_log_ends_with_its_close_revocation_left_at_the_revocation():
    # KIP-345: a static consumer's close() revokes (onLeavePrepare) and sends no LeaveGroup
    # (AbstractCoordinator.maybeLeaveGroup); the coordinator removes it a session timeout later
    timeline = group(Join(0, "c1"), Join(0, "c2"), Crash(60 * S, "c2"))
    events = simulate(timeline, SimulationSettings(static_membership=True, session_timeout_ms=20 * S)).events
    names = {e.member_id: e.client_id for e in events if e.member_id and e.client_id}
    last_own = max(
        (e for e in events if e.side == Side.MEMBER.value and names.get(e.member_id) == "c2"),
        key=lambda e: e.ts,
    )
    close_revocation = dataclasses.replace(
        last_own,
        event_id="close-revocation",
        ts=events[0].ts + 60 * S,
        event_type=EventType.PARTITIONS_REVOKED.value,
        partitions=(),
    )
    extracted = extract(sorted([*events, close_revocation], key=lambda e: e.ts))
    (leave,) = actions_of(extracted)
    assert leave == Leave(60 * S, "c2")


def test_a_member_only_the_rebalance_reason_names_joined_at_that_rebalance():
    # 2.x brokers log no JoinGroup line: "Adding new member M with group instance id None" is the join
    timeline = group(Join(0, "c1"), Join(0, "c2"), Join(60 * S, "c3"))
    events = coordinator_only(simulate(timeline, SimulationSettings()).events)
    without_join_lines = [e for e in events if e.event_type != EventType.JOIN_RECEIVED.value]
    extracted = extract(without_join_lines)
    joins = sorted(absolute(extracted, a) for a in extracted.timeline.actions if isinstance(a, Join))
    # KIP-394: the reason's member was added by its second JoinGroup; its first left 1.5 round trips earlier
    assert len(joins) == 3 and joins[-1] == timeline.start_ms + 60 * S


def test_a_member_first_listed_in_the_group_s_first_generation_joined_during_its_rebalance():
    # c2's JoinGroup reached a group already PreparingRebalance: no line names it before generation 1's
    # member list; generation 1 is the group's first, so nobody was a member before the input
    timeline = group(Join(0, "c1"), Join(0, "c2"), Join(60 * S, "c3"))
    events = coordinator_only(simulate(timeline, SimulationSettings()).events)
    extracted = extract([e for e in events if e.event_type != EventType.JOIN_RECEIVED.value])
    joins = sorted(absolute(extracted, a) for a in extracted.timeline.actions if isinstance(a, Join))
    assert joins == [timeline.start_ms, timeline.start_ms, timeline.start_ms + 60 * S]
    assert not any("before the input" in note for note in extracted.notes)


def test_a_member_first_listed_after_an_unseen_generation_was_in_the_group_before_the_input():
    # the input starts at c3's rebalance of a group at generation 1: c1 and c2 may have been members of
    # generation 1 (nothing lists it), so they stay members from before the input
    timeline = group(Join(0, "c1"), Join(0, "c2"), Join(60 * S, "c3"))
    events = coordinator_only(simulate(timeline, SimulationSettings()).events)
    later = [
        e
        for e in events
        if e.ts >= timeline.start_ms + 60 * S and e.event_type != EventType.JOIN_RECEIVED.value
    ]
    extracted = extract(later)
    joins = {
        a.member.split("-")[0]: absolute(extracted, a)
        for a in extracted.timeline.actions
        if isinstance(a, Join)
    }
    assert joins["c3"] == timeline.start_ms + 60 * S and joins["c1"] < extracted.observed_from
    assert any("before the input" in note for note in extracted.notes)


def test_a_pending_member_that_never_joined_is_no_member():
    # KIP-394: a JoinGroup without member id creates a pending member only (MEMBER_ID_REQUIRED); one that
    # leaves before joining with its id was never in the group
    events = coordinator_only(simulate(group(Join(0, "c1"), Join(0, "c2")), SimulationSettings()).events)
    join = next(e for e in events if e.event_type == EventType.JOIN_RECEIVED.value)
    pending = {"member_id": "c9-pending", "client_id": "c9", "attributes": {"pending": "true"}}
    events += [
        dataclasses.replace(join, event_id="p1", ts=join.ts + 60 * S, **pending),
        dataclasses.replace(
            join, event_id="p2", ts=join.ts + 60 * S + 10, event_type=EventType.MEMBER_REMOVED.value,
            reason="leave_group", **pending,
        ),
    ]  # fmt: skip
    assert {a.member for a in extract(events).timeline.actions if isinstance(a, Join)} == {"c1", "c2"}
    assert actions_of(extract(events)) == []


def test_a_member_removed_on_pending_sync_expiry_stopped_when_its_join_completed():
    # GroupCoordinator.removePendingSyncMembers: c2 rejoined c3's rebalance, then sent no SyncGroup within
    # the rebalance timeout (max.poll.interval.ms, 30 s here), its session not yet out: it stopped right
    # after its JoinGroup. The removal dates the stop and shows the rebalance timeout.
    settings = SimulationSettings(max_poll_interval_ms=30 * S, group_initial_rebalance_delay_ms=0)
    joins = (Join(0, "c1"), Join(0, "c2"), Join(60 * S, "c3"))
    start = group(*joins).start_ms
    completed = next(
        e.ts
        for e in simulate(group(*joins), settings).events
        if e.event_type == EventType.JOIN_COMPLETED.value and e.ts > start + 60 * S
    )
    events = coordinator_only(simulate(group(*joins, Crash(completed - start + 1, "c2")), settings).events)
    assert any(e.reason == "pending_sync_timeout" for e in events)
    extracted = extract(events)
    (crash,) = actions_of(extracted)
    assert isinstance(crash, Crash) and crash.member == "c2" and absolute(extracted, crash) == completed
    assert extracted.actual.max_poll_interval_ms == 30 * S
    rows = whatif(events, WhatIfConfig((Scenario("as-actual"),)))["whatif_comparison"]
    assert {row["model_check"] for row in rows} == {"passed"}, rows[0]["model_check_detail"]


def test_a_group_whose_coordinator_counts_members_no_line_names_is_not_comparable():
    # a broker log names a member only at some transitions: c2 here never; "Stabilized group g generation
    # N with 3 members" shows someone the timeline cannot hold, so the as-actual replay cannot be judged
    # (neither failed nor passed), and says why
    timeline = group(Join(0, "c1"), Join(0, "c2"), Join(60 * S, "c3"), Crash(120 * S, "c3"))
    events = coordinator_only(simulate(timeline, SimulationSettings()).events)
    c2 = next(e.member_id for e in events if (e.member_id or "").startswith("c2"))
    unnamed = [
        dataclasses.replace(e, assignment=None, members=None, leader_id=None)
        for e in events
        if e.member_id != c2 and e.ts > timeline.start_ms + 30 * S
    ]
    out = whatif(unnamed, WhatIfConfig((Scenario("as-actual"),)))
    rows = out["whatif_comparison"]
    assert {row["model_check"] for row in rows} == {"not_comparable"}
    assert "counts 3 members" in rows[0]["model_check_detail"] and "names 2" in rows[0]["model_check_detail"]
    assert not [row for row in out["anomalies"] if row["rule"] == "whatif_model_check_failed"]


def test_the_leader_a_broker_line_names_is_a_member_and_generation_1_s_joined_in_the_initial_delay():
    # "Assignment received from leader L for group g for generation 1" (3.x): the group was Empty, so L
    # joined in the join phase that just ended, which GroupCoordinator's InitialDelayedJoin held open for
    # group.initial.rebalance.delay.ms
    timeline = group(Join(0, "c1"))
    events = coordinator_only(simulate(timeline, SimulationSettings()).events)
    completed = next(e for e in events if e.event_type == EventType.JOIN_COMPLETED.value)
    leader_only = [
        dataclasses.replace(e, assignment=None, members=None)
        for e in events
        if e.ts >= completed.ts and e.event_type != EventType.JOIN_RECEIVED.value
    ]
    assert any(e.leader_id for e in leader_only)
    extracted = extract(leader_only)
    (join,) = [a for a in extracted.timeline.actions if isinstance(a, Join)]
    assert (
        absolute(extracted, join) < completed.ts - extracted.actual.latency.group_initial_rebalance_delay_ms
    )
    rows = whatif(leader_only, WhatIfConfig((Scenario("as-actual"),)))["whatif_comparison"]
    assert {row["model_check"] for row in rows} == {"passed"}, rows[0]["model_check_detail"]


def test_one_member_s_log_of_rebalances_others_started_is_not_comparable():
    # c1's own log, no leader's assignment map: c2's join shows only as c1's heartbeat learning of the
    # rebalance (REBALANCE_IN_PROGRESS); no timeline can hold what c2 did
    timeline = group(Join(0, "c1"), Join(0, "c2"), Join(60 * S, "c3"))
    events = simulate(timeline, SimulationSettings()).events
    c1_only = [
        e
        for e in events
        if e.side == Side.MEMBER.value
        and e.client_id == "c1"
        and e.ts > timeline.start_ms + 30 * S
        and e.event_type != EventType.ASSIGNMENT_COMPUTED.value
    ]
    assert any(e.event_type == EventType.HEARTBEAT_REBALANCING.value for e in c1_only)
    rows = whatif(c1_only, WhatIfConfig((Scenario("as-actual"),)))["whatif_comparison"]
    assert {row["model_check"] for row in rows} == {"not_comparable"}
    assert "no logged member started" in rows[0]["model_check_detail"]


def test_a_cooperative_group_with_no_partition_count_known_is_not_comparable():
    # broker lines without assignments, no topics configured: nothing to consume, so none of KIP-429's
    # revocations and follow-up rounds can be simulated
    timeline = group(Join(0, "c1"), Join(0, "c2"), Join(60 * S, "c3"))
    events = simulate(timeline, SimulationSettings(assignor="cooperative-sticky")).events
    broker = [dataclasses.replace(e, assignment=None) for e in coordinator_only(events)]
    rows = whatif(broker, WhatIfConfig((Scenario("as-actual"),)))["whatif_comparison"]
    assert {row["model_check"] for row in rows} == {"not_comparable"}
    assert "no partition counts known" in rows[0]["model_check_detail"]


def test_a_kip848_topic_named_by_id_and_by_name_is_one_topic_and_revocation_acks_time_the_callback():
    # 4.0 broker lines: assignments name the topic by id, the subscription metadata by name and id
    # (GroupMetadataManager); a member told to revoke (UNREVOKED_PARTITIONS) acknowledges with a heartbeat
    # as soon as its callbacks ran (ConsumerMembershipManager): that gap is the callback plus a round trip
    from rebalance_core.events import Event, TopicPartition

    def line(ts, kind, **fields):
        return Event(f"e{ts}", ts, "k", "g", Side.COORDINATOR.value, kind, **fields)

    def state(ts, member, epoch, parts, state, revoked=""):
        attrs = {"state": state, "revoked": revoked, "group_protocol": "consumer"}
        tps = tuple(TopicPartition("T1d", p) for p in parts)
        return line(ts, EventType.MEMBER_EPOCH_UPDATED.value, member_id=member, member_epoch=epoch, partitions=tps,
                    attributes=attrs)  # fmt: skip

    t0 = 1_700_000_000_000
    events = [
        line(t0, EventType.TOPIC_METADATA_CHANGED.value, attributes={"topic.orders": "4", "topic_id.orders": "T1d"}),
        state(t0 + 5, "m1", 1, (0, 1, 2, 3), "STABLE"),
        state(t0 + 60 * S, "m1", 1, (0, 1), "UNREVOKED_PARTITIONS", revoked="T1d-2,T1d-3"),
        state(t0 + 63 * S, "m1", 2, (0, 1), "STABLE"),
    ]  # fmt: skip
    extracted = extract(events)
    assert extracted.timeline.topics == {"T1d": 4}
    latency = extracted.actual.latency
    assert latency.revoke_callback_ms == 3 * S - latency.join_round_trip_ms
    assert "revoke_callback_ms" in latency.fitted


def test_the_group_s_rebalance_timeout_is_the_largest_its_members_asked_for():
    # GroupMetadata.rebalanceTimeoutMs / ClassicGroup.rebalanceTimeoutMs: the join phase waits for the
    # slowest member's max.poll.interval.ms, not the most common one
    events = simulate(group(Join(0, "c1"), Join(0, "c2"), Join(0, "c3")), SimulationSettings()).events
    slow = [
        dataclasses.replace(e, attributes={**e.attributes, "rebalance_timeout_ms": "900000"})
        if e.event_type == EventType.JOIN_RECEIVED.value and e.member_id.startswith("c3")
        else e
        for e in events
    ]
    assert extract(events).actual.max_poll_interval_ms == 300_000
    assert extract(slow).actual.max_poll_interval_ms == 900_000


@pytest.mark.parametrize(
    ("remote_assignor", "server_assignor"), [("range", "server-range"), (None, "uniform")]
)
def test_a_kip848_group_s_members_config_names_the_server_assignor_they_asked_for(
    remote_assignor, server_assignor
):
    # group.remote.assignor travels in the ConsumerGroupHeartbeat (ServerAssignor); the broker runs the one
    # most members ask for (ConsumerGroup.computePreferredServerAssignor), else its default (uniform)
    simulated = simulate_consumer_group(
        group(Join(0, "c1"), Join(0, "c2")), ConsumerSimSettings(assignor=server_assignor)
    ).events
    members = [e for e in simulated if e.side == Side.MEMBER.value]
    config = {"group_protocol": "consumer"} | (
        {"remote_assignor": remote_assignor} if remote_assignor else {}
    )
    dumps = [
        dataclasses.replace(
            members[0],
            event_id=f"config-{client}",
            event_type=EventType.CLIENT_CONFIG.value,
            ts=members[0].ts - 1,
            client_id=client,
            member_id=None,
            partitions=(),
            attributes=dict(config),
        )
        for client in ("c1", "c2")
    ]
    extracted = extract(dumps + members)
    assert extracted.actual.group_protocol == "consumer"
    assert plan(extracted, Scenario("as-actual")).settings.assignor == server_assignor


@pytest.mark.parametrize(
    ("wordings", "release"),
    [
        # 2.4-2.5's "Updating assignment with / now assigned partitions" block and 2.4+'s "Adding newly assigned"
        (("client.updating_assignment.2_4", "client.adding.2_4"), "2.5"),
        (("client.adding.2_4",), None),  # 2.4 or any later release: today's algorithm
        (("client.synced.2_7",), None),  # 2.7+
        (("client.updating_assignment.2_4", "client.synced.2_7"), None),  # no release prints both
    ],
)
def test_the_members_log_wording_bounds_their_release_and_so_the_sticky_algorithm(wordings, release):
    events = simulate(
        group(Join(0, "c1"), Join(0, "c2")), SimulationSettings(assignor="cooperative-sticky")
    ).events
    members = [e for e in events if e.side == Side.MEMBER.value]
    worded = [
        dataclasses.replace(
            e, attributes={**(e.attributes or {}), "log_pattern": wordings[i % len(wordings)]}
        )
        for i, e in enumerate(members)
    ]
    extracted = extract(worded)
    assert extracted.actual.client_version == release
    assert plan(extracted, Scenario("x")).settings.client_version == release


def test_kip848_callbacks_waiting_for_the_application_s_next_poll_are_fitted_and_replayed():
    # AsyncKafkaConsumer runs the rebalance listener on the application thread inside poll()
    # (ConsumerRebalanceListenerInvoker, queued by ConsumerMembershipManager): a member reconciles, and
    # acknowledges, only once its poll loop comes round, up to a second later in a slow loop
    timeline = group(Join(0, "c1"), Join(20 * S, "c2"))
    events = simulate_consumer_group(
        timeline, ConsumerSimSettings(revoke_callback_ms=4, assign_callback_ms=900)
    ).events
    fit = LatencyFit()
    fit.feed(e for e in events if e.side == Side.MEMBER.value)
    model = fit.model()
    assert (model.revoke_callback_ms, model.assign_callback_ms) == (4, 900)
    assert "assign_callback_ms" in model.fitted
    extracted = extract(events)
    assert plan(extracted, Scenario("as-actual")).settings.assign_callback_ms == 900
