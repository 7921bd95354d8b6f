"""Failures, leaves, static members, group deletion, logs that start mid-rebalance, anomalies."""

from __future__ import annotations

import dataclasses

import pytest

from rebalance_core.classic.replayer import GroupReplayer
from rebalance_core.replay import event_order_key, replay
from rebalance_core.replay_common import ReplaySettings
from tests.core import replay_scenarios as sc
from tests.core.replay_helpers import CLUSTER, GROUP, T0, ev, rel, run


def test_session_timeout_stops_at_last_heartbeat():
    out = run(sc.session_timeout_crash())
    crashed = next(m for m in out["partition_movements"] if m["from_member_id"] == "c2")
    # removed at 20000 with session.timeout.ms 10000: it stopped consuming at 10000
    assert rel(crashed, "stop_cause", "revoked_at", "assigned_at", "unavailable_ms") == (
        "member_failed",
        10000,
        20501,
        10501,
    )
    last = out["rebalance_episodes"][-1]
    assert last["stw_ms"] == 500  # c1 kept consuming t-0 until the Preparing at 20001


def test_session_timeout_from_settings_when_the_log_does_not_say():
    events = sc.session_timeout_crash()
    for e in events:
        e.attributes.pop("session_timeout_ms", None)
    out = run(events, ReplaySettings(session_timeout_ms=45000))
    crashed = next(m for m in out["partition_movements"] if m["from_member_id"] == "c2")
    assert rel(crashed, "revoked_at") == (20000 - 45000,)


def test_static_restart_without_rebalance():
    out = run(sc.static_restart())
    assert [g["generation_id"] for g in out["generations"]] == [1]  # no new generation
    (move,) = out["partition_movements"]
    assert rel(move, "from_member_id", "to_member_id", "stop_cause", "revoked_at", "assigned_at") == (
        "i1-A",
        "i1-B",
        "member_failed",
        5000,  # the new process's JoinGroup: the crash instant is in no log (a lower bound)
        5004,
    )
    assert move["moved"] is False and move["episode_id"] is None  # same instance, outside any rebalance
    (day,) = out["group_daily_summary"]
    assert (day["partition_unavailable_ms"], day["rebalances"]) == (4, 1)


def test_static_restart_broker_only_gives_the_old_assignment_back():
    """The broker sees the new process (its JoinGroup), not when the old one stopped: the partitions are
    back at the replacement, the stop instant and the unavailable time are null (docs/metrics.md)."""
    events = [e for e in sc.static_restart() if e.is_coordinator]
    out = run(events)
    (move,) = out["partition_movements"]
    assert rel(move, "from_member_id", "to_member_id", "stop_cause", "revoked_at", "assigned_at") == (
        "i1-A",
        "i1-B",
        "member_failed",
        None,
        5001,
    )
    assert (move["unavailable_ms"], move["moved"], move["source"]) == (None, False, "inferred")


def test_a_static_member_replaced_while_stable_held_what_its_replacement_synced_inferred():
    """KIP-345 with the broker's log and only the new process's own log: no line prints what the old
    member id held (the broker's "Assignment received from leader" carries no assignment). Replacing a
    static member while Stable moves its metadata, assignment included, to the new id
    (GroupMetadata.replaceStaticMember / ClassicGroup.replaceStaticMember) and the new id's SyncGroup
    answers with it (GroupCoordinator.doSyncGroup, Stable): the old id's rows in that generation are the
    new id's, `inferred`; the members with no log at all have none (not claimed empty)."""
    events = []
    for e in sc.static_restart():
        if e.event_type == "assignment_received":  # as the broker logs it: no assignment
            e = dataclasses.replace(e, assignment=None)
        events.append(e)
    out = run(events)
    rows = sorted(
        (r["generation_id"], r["member_id"], r["partition"], r["source"]) for r in out["assignments"]
    )
    assert rows == [(1, "i1-A", 0, "inferred"), (1, "i1-B", 0, "observed")]


def test_dead_group_restarts_generations_expected_04():
    out = run(sc.log_04_dead_then_generation_zero())
    gens = [(g["generation_id"], g["ended_empty"], g["rebalance_ms"]) for g in out["generations"]]
    assert gens == [(2, True, 1), (1, False, 3016)]
    assert out["generations"][1]["leader_member_id"] == "m-7dfd"
    assert rel(out["generations"][1], "join_completed_at") == (286_427,)  # Preparing -> Stabilized = 3002 ms
    assert len(out["rebalance_episodes"]) == 2
    assert not out["anomalies"]  # generation 0 after 2 is not an error


def test_join_and_leave_expected_05():
    out = run(sc.log_05_join_leave())
    gens = out["generations"]
    assert [(g["generation_id"], g["member_count"], g["leader_member_id"]) for g in gens] == [
        (1, 1, "p-0eec"),
        (2, 2, "p-0eec"),
        (3, 1, "p-0eec"),
    ]
    assert [g["members"] for g in gens] == [["p-0eec"], ["p-0eec", "p-4be6"], ["p-0eec"]]
    assert [rel(g, "rebalance_started_at", "join_completed_at") for g in gens] == [
        (18, 21),
        (24_995, 27_075),
        (2_400_884, 2_402_591),
    ]
    assert not out["anomalies"]


def test_log_starting_mid_rebalance():
    out = run(sc.starts_mid_rebalance())
    first, second = out["generations"]
    assert first["rebalance_started_at"] is None and first["rebalance_ms"] is None
    assert rel(first, "join_completed_at", "stabilized_at") == (0, 2)
    left = next(m for m in out["partition_movements"] if m["from_member_id"] == "y")
    assert rel(left, "stop_cause", "revoked_at", "to_member_id") == ("member_left", 5000, "x")
    assert second["episode_round"] == 1 and not out["anomalies"]


def test_member_only_log_starting_with_a_sync():
    events = [
        ev(0, "sync_response", generation_id=4, member_id="m", partitions="t-0"),
        ev(1, "partitions_assigned", member_id="m", partitions="t-0"),
    ]
    out = run(events)
    (gen,) = out["generations"]
    assert gen["generation_id"] == 4 and gen["rebalance_started_at"] is None
    assert not out["partition_movements"] and not out["anomalies"]


def test_anomalies_are_rows_not_exceptions():
    events = [
        ev(0, "join_completed", generation_id=3, leader_id="a", members="a b"),
        ev(1, "assignment_received", generation_id=3, leader_id="a", assignment={"a": "t-0", "b": "t-0"}),
        ev(2, "join_completed", generation_id=9, leader_id="a", members="a b"),
        ev(3, "rebalance_prepared", generation_id=9),
        ev(4, "join_completed", generation_id=10, leader_id="a"),
        dataclasses.replace(ev(5, "group_stable"), event_type="no_such_type"),
        dataclasses.replace(ev(6, "group_stable"), group_id="other"),
    ]
    replayer = GroupReplayer(CLUSTER, GROUP)
    replayer.feed(events)
    replayer.feed([ev(1, "group_stable")])  # older than what was replayed
    out = replayer.finish()
    rules = [a["rule"] for a in out["anomalies"]]
    assert rules == [
        "assignment_conflict",
        "double_ownership",
        "invalid_transition",
        "generation_mismatch",
        "unknown_event_type",
        "wrong_group",
        "out_of_order",
    ]
    assert out["anomalies"][2]["group_state"] == "Stable"
    assert sum(d["anomalies"] for d in out["group_daily_summary"]) == len(rules)


def test_not_final_keeps_open_rows_in_the_state():
    events = sorted(sc.cooperative_two_rounds(), key=event_order_key)[:12]  # mid-episode
    replayer = GroupReplayer(CLUSTER, GROUP, ReplaySettings(final=False))
    replayer.feed(events)
    out = replayer.finish()
    assert not out["rebalance_episodes"] and not out["partition_movements"]
    assert [g["generation_id"] for g in out["generations"]] == []  # round 1 is still open
    assert out["group_daily_summary"][0]["events"] == 12
    state = replayer.snapshot()
    assert state["round"] is not None


def test_replay_many_groups():
    events = sc.eager_broker_only() + [
        dataclasses.replace(e, group_id="g2", event_id=e.event_id + "b") for e in sc.log_05_join_leave()
    ]
    out = replay(reversed(events))
    assert {(g["group_id"], g["generation_id"]) for g in out["generations"]} == {
        ("g", 1),
        ("g", 2),
        ("g2", 1),
        ("g2", 2),
        ("g2", 3),
    }
    assert all(r["event_date"].year == 2023 for rows in out.values() for r in rows)
    assert all(isinstance(r["ts"], int) and r["ts"] > T0 for r in out["anomalies"])


def test_consumer_protocol_groups_go_to_their_replayer():
    from rebalance_core.consumer import ConsumerGroupReplayer
    from rebalance_core.replay import new_replayer

    kip848 = [ev(0, "group_epoch_bumped", group_epoch=1)]
    assert isinstance(new_replayer(CLUSTER, GROUP, events=kip848), ConsumerGroupReplayer)
    classic = new_replayer(CLUSTER, GROUP, events=sc.eager_broker_only())
    assert isinstance(classic, GroupReplayer)
    assert isinstance(new_replayer(CLUSTER, GROUP, state=classic.snapshot()), GroupReplayer)
    replay(kip848)  # dispatched, no error


def test_lost_after_the_group_emptied_does_not_resurrect_ownership():
    events = [
        ev(0, "join_received", member_id="c1", attributes={"state": "Empty"}),
        ev(1, "rebalance_prepared", generation_id=0),
        ev(2, "join_completed", generation_id=1, leader_id="c1", members="c1", protocol_name="range"),
        ev(3, "join_response", generation_id=1, member_id="c1"),
        ev(4, "assignment_received", generation_id=1, leader_id="c1", assignment={"c1": "t-0"}),
        ev(5, "sync_response", generation_id=1, member_id="c1", partitions="t-0"),
        ev(5, "partitions_assigned", member_id="c1", partitions="t-0"),
        ev(6000, "leave_sent", member_id="c1"),
        ev(6001, "member_removed", member_id="c1", reason="leave_group"),
        ev(6001, "rebalance_prepared", generation_id=1),
        ev(6001, "group_empty", generation_id=2),
        ev(8000, "partitions_lost", member_id="c1", partitions="t-0"),  # the stuck poll loop wakes up
    ]
    out = run(events)
    (move,) = out["partition_movements"]
    assert rel(move, "stop_cause", "revoked_at", "assigned_at") == ("member_left", 6000, None)
    assert not out["anomalies"]


def test_cooperative_unsubscribed_topic_causes_no_follow_up_round():
    events = [
        ev(0, "join_received", member_id="c1", subscription="t u", attributes={"state": "Empty"}),
        ev(1, "rebalance_prepared", generation_id=0),
        ev(2, "join_completed", generation_id=1, leader_id="c1", members="c1", protocol_name=sc.COOP),
        ev(3, "assignment_received", generation_id=1, leader_id="c1", assignment={"c1": "t-0 u-0"}),
        ev(100, "join_received", member_id="c1", subscription="t", attributes={"state": "Stable"}),
        ev(101, "rebalance_prepared", generation_id=1, reason="Updating metadata for member c1"),
        ev(102, "join_completed", generation_id=2, leader_id="c1", members="c1", protocol_name=sc.COOP),
        ev(103, "assignment_received", generation_id=2, leader_id="c1", assignment={"c1": "t-0"}),
        ev(200, "rebalance_prepared", generation_id=2, reason="Leader c1 re-joining group during Stable"),
    ]
    out = run(events)
    assert [(g["generation_id"], g["episode_round"]) for g in out["generations"]] == [(1, 1), (2, 1)]


def test_a_static_members_join_is_member_timed_through_its_instance():
    """The broker's static join lines name the group.instance.id, not the client: a new static member whose
    own log showed its JoinGroup applies its assignment at its own callbacks, even when its first line with
    the member id comes after the group turned Stable."""
    member_side = {"group_instance_id": "i2", "client_id": "c2"}
    events = [
        ev(0, "join_received", member_id="c1", attributes={"state": "Empty"}),
        ev(1, "rebalance_prepared", generation_id=0),
        ev(2, "join_completed", generation_id=1, leader_id="c1", protocol_name="range"),
        ev(3, "assignment_received", generation_id=1, leader_id="c1", assignment={"c1": "t-0 t-1"}),
        ev(99, "join_sent", **member_side),  # the new process, no member id yet
        ev(100, "join_received", member_id="i2-B", group_instance_id="i2", attributes={"state": "Stable"}),
        ev(100, "rebalance_prepared", generation_id=1),
        ev(102, "join_completed", generation_id=2, leader_id="c1", protocol_name="range"),
        ev(103, "assignment_received", generation_id=2, assignment={"c1": "t-0", "i2-B": "t-1"}),
        ev(150, "join_response", generation_id=2, member_id="i2-B", **member_side),
        ev(160, "sync_response", generation_id=2, member_id="i2-B", partitions="t-1", **member_side),
        ev(160, "partitions_assigned", member_id="i2-B", partitions="t-1", **member_side),
    ]
    out = run(events)
    moves = {
        m["partition"]: rel(m, "from_member_id", "to_member_id", "revoked_at", "assigned_at")
        for m in out["partition_movements"]
    }
    # eager: c1 (no log of its own) stops at the Preparing; i2-B starts at its own callback
    assert moves == {0: ("c1", "c1", 100, 103), 1: ("c1", "i2-B", 100, 160)}
    assert not out["anomalies"]


POLL_TIMEOUT = "consumer poll timeout has expired."


def poll_timeout_then_rejoin():
    """One eager consumer's log (client a): max.poll.interval.ms expires at 10000; the heartbeat thread
    logs it and sends the LeaveGroup at once (AbstractCoordinator.maybeLeaveGroup); the application thread
    returns to poll() at 30000, calls onPartitionsLost, and rejoins without a member id."""
    return [
        ev(0, "join_response", generation_id=1, member_id="c1", protocol_name="range", client_id="a"),
        ev(2, "sync_response", generation_id=1, member_id="c1", partitions="t-0", client_id="a"),
        ev(3, "partitions_assigned", member_id="c1", partitions="t-0", client_id="a"),
        ev(10000, "poll_timeout_expired", client_id="a"),
        ev(10000, "leave_sent", member_id="c1", reason=POLL_TIMEOUT, client_id="a"),
        ev(30000, "partitions_lost", member_id="c1", partitions="t-0", client_id="a"),
        ev(
            30001, "join_requested", client_id="a", reason="rebalance failed due to MemberIdRequiredException"
        ),
        ev(30001, "join_sent", client_id="a"),
        ev(30005, "join_response", generation_id=3, member_id="c1b", protocol_name="range", client_id="a"),
        ev(30007, "sync_response", generation_id=3, member_id="c1b", partitions="t-0", client_id="a"),
        ev(30008, "partitions_assigned", member_id="c1b", partitions="t-0", client_id="a"),
    ]


def test_poll_timeout_leave_and_lost_partitions_are_one_episode_of_the_poll_timeout():
    out = run(poll_timeout_then_rejoin())
    *_, episode = out["rebalance_episodes"]
    assert len(out["rebalance_episodes"]) == 2  # generation 1's, then the poll timeout's
    assert (episode["reason"], episode["rounds"]) == (POLL_TIMEOUT, 1)
    assert rel(episode, "started_at", "stabilized_at") == (10000, 30007)
    (move,) = out["partition_movements"]
    # stopped at the LeaveGroup, not at the onPartitionsLost callback the application ran at 30000; the
    # rejoin got generation 3: generation 2 formed without the only logged member and nothing consumed,
    # the group emptied (rebalance_core.replay._emptied_unseen), so t-0 was not waiting for anyone
    assert rel(move, "stop_cause", "revoked_at", "assigned_at", "unavailable_ms") == (
        "member_left",
        10000,
        None,
        None,
    )
    assert move["source"] == "inferred"
    assert not out["anomalies"]


def test_poll_timeout_the_other_members_rebalance_starts_at_the_leave_group():
    """Both members' logs: c2 learns of the rebalance at its next heartbeat (10500); the rebalance began
    with c1's LeaveGroup (GroupCoordinator.removeMemberAndUpdateGroup prepares it at once)."""
    both = [
        ev(0, "join_response", generation_id=1, member_id="c2", protocol_name="range", client_id="b"),
        ev(2, "sync_response", generation_id=1, member_id="c2", partitions="t-1", client_id="b"),
        ev(3, "partitions_assigned", member_id="c2", partitions="t-1", client_id="b"),
        ev(10500, "join_requested", member_id="c2", reason="group is already rebalancing", client_id="b"),
        ev(10501, "partitions_revoked", member_id="c2", partitions="t-1", client_id="b"),
        ev(10502, "join_sent", member_id="c2", client_id="b"),
        ev(10510, "join_response", generation_id=2, member_id="c2", protocol_name="range", client_id="b"),
        ev(10511, "assignment_computed", generation_id=2, member_id="c2", assignment={"c2": "t-0 t-1"}),
        ev(10512, "sync_response", generation_id=2, member_id="c2", partitions="t-0 t-1", client_id="b"),
        ev(10520, "partitions_assigned", member_id="c2", partitions="t-0 t-1", client_id="b"),
    ] + [e for e in poll_timeout_then_rejoin() if e.ts - T0 <= 10000]
    out = run(both)
    episode = next(ep for ep in out["rebalance_episodes"] if ep["last_generation_id"] == 2)
    assert (rel(episode, "started_at")[0], episode["reason"]) == (10000, POLL_TIMEOUT)
    t0 = next(m for m in out["partition_movements"] if m["partition"] == 0)
    assert rel(t0, "from_member_id", "to_member_id", "revoked_at", "unavailable_ms") == (
        "c1",
        "c2",
        10000,
        520,
    )


def test_a_static_members_poll_timeout_sends_no_leave_group_and_starts_no_rebalance():
    """AbstractCoordinator.maybeLeaveGroup sends LeaveGroup for dynamic members only (KIP-345): the static
    member stays in the group until its session expires; it stopped consuming at the poll timeout."""
    events = [
        ev(
            0, "join_response", generation_id=1, member_id="c1", group_instance_id="i1", protocol_name="range"
        ),
        ev(2, "sync_response", generation_id=1, member_id="c1", group_instance_id="i1", partitions="t-0"),
        ev(3, "partitions_assigned", member_id="c1", group_instance_id="i1", partitions="t-0"),
        ev(10000, "poll_timeout_expired", member_id="c1", group_instance_id="i1"),
    ]
    out = run(events)
    assert [rel(ep, "started_at")[0] for ep in out["rebalance_episodes"]] == [0]
    (move,) = out["partition_movements"]
    assert rel(move, "revoked_at", "assigned_at") == (10000, None)


# "consumer poll timeout has expired" (AbstractCoordinator.HeartbeatThread, Heartbeat.pollTimeoutExpired) only
# says the member's last poll() was at least max.poll.interval.ms earlier: a stall stopped it then, a GC pause
# earlier still, a slow batch at the line. The stop at the line is the latest it can be, never `observed`;
# the same for a 2.x LeaveGroup whose reason is the poll timeout (its warning line missing). A LeaveGroup of
# close() states its instant (AbstractCoordinator.close -> onLeavePrepare, maybeLeaveGroup).
@pytest.mark.parametrize(
    "lines, source",
    [
        (
            [
                ev(10000, "poll_timeout_expired", client_id="a"),
                ev(10000, "leave_sent", member_id="c1", reason=POLL_TIMEOUT, client_id="a"),
            ],
            "inferred",
        ),
        ([ev(10000, "leave_sent", member_id="c1", reason=POLL_TIMEOUT, client_id="a")], "inferred"),
        (
            [ev(10000, "leave_sent", member_id="c1", reason="the consumer is being closed", client_id="a")],
            "observed",
        ),
    ],
    ids=["poll-timeout-line", "2.x-leave-for-the-poll-timeout", "close"],
)
def test_a_poll_timeout_only_bounds_when_the_member_stopped_consuming(lines, source):
    """c1 (client a) gives t-0 up at 10000; c2 (client b) gets it in generation 2."""
    taker = [
        ev(10010, "join_response", generation_id=2, member_id="c2", protocol_name="range", client_id="b"),
        ev(10011, "assignment_computed", generation_id=2, member_id="c2", assignment={"c2": "t-0"}),
        ev(10012, "sync_response", generation_id=2, member_id="c2", partitions="t-0", client_id="b"),
        ev(10013, "partitions_assigned", member_id="c2", partitions="t-0", client_id="b"),
    ]
    out = run(poll_timeout_then_rejoin()[:3] + lines + taker)
    (move,) = out["partition_movements"]
    assert rel(move, "stop_cause", "revoked_at", "unavailable_ms") == ("member_left", 10000, 13)
    assert move["source"] == source
    assert not out["anomalies"]


def test_an_eager_members_stop_at_a_signal_its_poll_loop_never_acted_on_is_the_latest_it_can_be():
    """c1 (eager) learns of a rebalance from its heartbeat thread at 5000 and stops there (onJoinPrepare
    revokes inside the next poll()); no revocation or JoinGroup follows, and at 20000 its poll timer expires:
    the poll loop never came back (ConsumerCoordinator.onJoinPrepare, Heartbeat.pollTimeoutExpired), so it
    stopped consuming at its last poll, before the signal. c2 gets t-0 at 20013."""
    events = poll_timeout_then_rejoin()[:3] + [
        ev(5000, "heartbeat_rebalancing", member_id="c1", client_id="a"),
        ev(20000, "leave_sent", member_id="c1", reason=POLL_TIMEOUT, client_id="a"),
        ev(20010, "join_response", generation_id=2, member_id="c2", protocol_name="range", client_id="b"),
        ev(20011, "assignment_computed", generation_id=2, member_id="c2", assignment={"c2": "t-0"}),
        ev(20012, "sync_response", generation_id=2, member_id="c2", partitions="t-0", client_id="b"),
        ev(20013, "partitions_assigned", member_id="c2", partitions="t-0", client_id="b"),
    ]
    (move,) = run(events)["partition_movements"]
    assert rel(move, "revoked_at", "assigned_at") == (5000, 20013)
    assert move["source"] == "inferred"


def test_an_eager_members_stop_at_a_signal_before_its_removal_without_a_join_group_is_a_bound():
    """c1 (eager) learns of a rebalance at 5000 and sends no JoinGroup; the coordinator then removes it on
    session timeout (GroupCoordinator.onExpireHeartbeat): its poll loop never got to onJoinPrepare, so
    the stop placed at its signal is the latest it can be (`inferred`)."""
    events = poll_timeout_then_rejoin()[:3] + [
        ev(5000, "heartbeat_rebalancing", member_id="c1", client_id="a"),
        ev(20000, "member_removed", member_id="c1", reason="session_timeout"),
        ev(20010, "join_response", generation_id=2, member_id="c2", protocol_name="range", client_id="b"),
        ev(20011, "assignment_computed", generation_id=2, member_id="c2", assignment={"c2": "t-0"}),
        ev(20012, "sync_response", generation_id=2, member_id="c2", partitions="t-0", client_id="b"),
        ev(20013, "partitions_assigned", member_id="c2", partitions="t-0", client_id="b"),
    ]
    (move,) = run(events)["partition_movements"]
    assert (rel(move, "revoked_at")[0], move["source"]) == (5000, "inferred")


def test_a_static_members_poll_timeout_stop_is_the_latest_it_can_be():
    events = [
        ev(
            0, "join_response", generation_id=1, member_id="c1", group_instance_id="i1", protocol_name="range"
        ),
        ev(2, "sync_response", generation_id=1, member_id="c1", group_instance_id="i1", partitions="t-0"),
        ev(3, "partitions_assigned", member_id="c1", group_instance_id="i1", partitions="t-0"),
        ev(10000, "poll_timeout_expired", member_id="c1", group_instance_id="i1"),
    ]
    (move,) = run(events)["partition_movements"]
    assert (rel(move, "revoked_at")[0], move["source"]) == (10000, "inferred")


def follower_rejoins_with_the_same_generation():
    """Two eager consumers' logs at generation 3 (c1 leader {t-0}, c2 {t-1}). At 5000 c2 rejoins
    (unchanged metadata): the Stable group's coordinator answers with generation 3 again, no rebalance
    (GroupCoordinator.doCurrentMemberJoinGroup). Eager: c2 revoked t-1 in onJoinPrepare, gets it back."""
    a3 = {"c1": "t-0", "c2": "t-1"}
    return [
        ev(0, "join_response", generation_id=3, member_id="c1", protocol_name="range", leader_id="c1"),
        ev(0, "join_response", generation_id=3, member_id="c2", protocol_name="range", leader_id="c1"),
        ev(1, "assignment_computed", generation_id=3, member_id="c1", assignment=a3),
        ev(2, "sync_response", generation_id=3, member_id="c1", partitions="t-0"),
        ev(2, "sync_response", generation_id=3, member_id="c2", partitions="t-1"),
        ev(3, "partitions_assigned", member_id="c1", partitions="t-0"),
        ev(3, "partitions_assigned", member_id="c2", partitions="t-1"),
        ev(5000, "join_requested", member_id="c2", reason="cached metadata has changed"),
        ev(5001, "partitions_revoked", member_id="c2", partitions="t-1"),
        ev(5002, "join_sent", member_id="c2"),
        ev(5010, "join_response", generation_id=3, member_id="c2", protocol_name="range", leader_id="c1"),
        ev(5020, "sync_response", generation_id=3, member_id="c2", partitions="t-1"),
        ev(5021, "partitions_assigned", member_id="c2", partitions="t-1"),
    ]


def test_a_follower_given_its_generation_back_is_a_member_only_rejoin():
    out = run(follower_rejoins_with_the_same_generation())
    assert [g["generation_id"] for g in out["generations"]] == [3]  # no new generation row
    assert [rel(ep, "started_at")[0] for ep in out["rebalance_episodes"]] == [0]  # no group-wide rebalance
    (day,) = out["group_daily_summary"]
    assert (day["member_rejoins"], day["member_rejoin_ms"]) == (1, 20)  # c2: signal 5000 -> sync 5020
    (move,) = out["partition_movements"]
    assert rel(move, "from_member_id", "to_member_id", "revoked_at", "assigned_at") == (
        "c2",
        "c2",
        5000,
        5021,
    )
    assert move["wasted_revocation"] and move["episode_id"] is None  # counted in the day, outside episodes
    assert day["partition_unavailable_ms"] == 21 and not out["anomalies"]


def test_a_same_generation_rejoin_seen_with_the_brokers_log_is_no_rebalance_either():
    broker = [
        ev(-10, "rebalance_prepared", generation_id=2, reason="Adding new member c2"),
        ev(-1, "join_completed", generation_id=3, leader_id="c1", members="c1 c2", protocol_name="range"),
        ev(1, "assignment_received", generation_id=3, leader_id="c1", member_count=2),
    ]
    out = run(broker + follower_rejoins_with_the_same_generation())
    assert [g["generation_id"] for g in out["generations"]] == [3]
    assert len(out["rebalance_episodes"]) == 1
    (day,) = out["group_daily_summary"]
    assert (day["member_rejoins"], day["member_rejoin_ms"]) == (1, 20)


def test_connects_assignment_line_names_the_leader_and_a_worker_rejoin_keeps_the_generation():
    """DistributedHerder "Joined group at generation N ... Assignment{leader='w1', ...}": w2's own log
    only. Its second join in generation 7 got generation 7 back (WorkerCoordinator follower, unchanged
    metadata): no new generation."""
    events = [
        ev(0, "join_requested", member_id="w2", reason="rebalance started"),
        ev(0, "join_sent", member_id="w2"),
        ev(5, "join_response", generation_id=7, member_id="w2", protocol_name="sessioned"),
        ev(9, "sync_response", generation_id=7, member_id="w2", leader_id="w1", attributes={"delay_ms": "0"}),
        ev(4000, "join_requested", member_id="w2", reason="rebalance started"),
        ev(4000, "join_sent", member_id="w2"),
        ev(4005, "join_response", generation_id=7, member_id="w2", protocol_name="sessioned"),
        ev(
            4009,
            "sync_response",
            generation_id=7,
            member_id="w2",
            leader_id="w1",
            attributes={"delay_ms": "0"},
        ),
    ]
    out = run(events)
    (gen,) = out["generations"]
    assert (gen["generation_id"], gen["leader_member_id"]) == (7, "w1")
    assert len(out["rebalance_episodes"]) == 1
    (day,) = out["group_daily_summary"]
    assert (day["rebalances"], day["member_rejoins"], day["member_rejoin_ms"]) == (1, 1, 9)


def test_episodes_started_before_the_input_or_still_open_are_counted_apart_from_rebalances():
    """Real logs start and end mid-way: `rebalances` counts the episodes the input shows whole."""
    still_open = [
        ev(9000, "join_received", member_id="z", attributes={"state": "Stable"}),
        ev(9001, "rebalance_prepared", generation_id=8, reason="Adding new member z"),
    ]
    out = run(sc.starts_mid_rebalance() + still_open)
    assert [rel(ep, "started_at", "stabilized_at") for ep in out["rebalance_episodes"]] == [
        (None, 2),
        (5001, 5101),
        (9001, None),
    ]
    (day,) = out["group_daily_summary"]
    assert (day["rebalances"], day["rebalances_open"], day["rebalances_started_before_input"]) == (1, 1, 1)


def test_a_brokers_leave_reason_gets_the_poll_timeout_its_member_logged():
    """Broker 2.4-3.1 prints "removing member c1 on LeaveGroup" without the client's reason (3.2+ adds
    "; client reason: consumer poll timeout has expired."): the member's own log gives it."""
    broker = [
        ev(-5, "join_completed", generation_id=1, leader_id="c1", members="c1", protocol_name="range"),
        ev(-4, "assignment_received", generation_id=1, leader_id="c1", member_count=1),
        ev(10001, "rebalance_prepared", generation_id=1, reason="removing member c1 on LeaveGroup"),
        ev(10002, "member_removed", member_id="c1", reason="leave_group"),
        ev(10003, "group_empty", generation_id=2),
    ]
    client = [e for e in poll_timeout_then_rejoin() if e.ts - T0 <= 10000]
    out = run(broker + client)
    episode = next(ep for ep in out["rebalance_episodes"] if rel(ep, "started_at")[0] == 10001)
    assert episode["reason"] == f"removing member c1 on LeaveGroup; client reason: {POLL_TIMEOUT}"
    (move,) = out["partition_movements"]
    assert rel(move, "stop_cause", "revoked_at") == ("member_left", 10000)


def test_a_static_members_new_process_given_the_current_generation_is_no_rebalance_in_member_logs():
    """KIP-345, members' logs only: the new process of static member i1 joins with an empty member id
    and gets generation 1 back with a new member id. The coordinator replaced the old member of the
    Stable group and triggered no rebalance (GroupCoordinator.updateStaticMemberAndRebalance; 4.0
    GroupMetadataManager.updateStaticMemberThenRebalanceOrCompleteJoin): no second row of generation 1,
    no episode, and generation 1's members stay the ones it was formed with."""
    member_side = [e for e in sc.static_restart() if not e.is_coordinator]
    member_side[:0] = [
        ev(10, "join_response", generation_id=1, member_id=m, group_instance_id=i, leader_id="i1-A")
        for m, i in (("i1-A", "i1"), ("i2-A", "i2"))
    ] + [
        ev(
            10,
            "assignment_computed",
            generation_id=1,
            member_id="i1-A",
            assignment={"i1-A": "t-0", "i2-A": "t-1"},
        ),
        ev(11, "sync_response", generation_id=1, member_id="i1-A", group_instance_id="i1", partitions="t-0"),
        ev(11, "sync_response", generation_id=1, member_id="i2-A", group_instance_id="i2", partitions="t-1"),
    ]
    out = run(member_side)
    assert [(g["generation_id"], g["members"]) for g in out["generations"]] == [(1, ["i1-A", "i2-A"])]
    assert len(out["rebalance_episodes"]) == 1  # generation 1's own, none for the restart
    assert ("i1-B", "t", 0) in {(a["member_id"], a["topic"], a["partition"]) for a in out["assignments"]}


def test_a_join_response_logged_after_its_generation_ended_opens_no_round_in_member_logs():
    """Members' logs only: c3 sent its JoinGroup, then its process paused; the coordinator completed
    generation 2 with it (the leader's assignment names it), removed it on session timeout and the others
    moved on to generation 3. c3 handles the JoinGroup response at its next poll
    (AbstractCoordinator.JoinGroupResponseHandler), long after: generation 2 has one row, no new round."""
    a2 = {"c1": "t-0", "c2": "t-1", "c3": ""}
    a3 = {"c1": "t-0", "c2": "t-1"}
    events = [
        ev(0, "join_response", generation_id=1, member_id="c1", protocol_name="range", leader_id="c1"),
        ev(0, "join_response", generation_id=1, member_id="c2", protocol_name="range", leader_id="c1"),
        ev(1, "assignment_computed", generation_id=1, member_id="c1", assignment=a3),
        ev(2, "sync_response", generation_id=1, member_id="c1", partitions="t-0"),
        ev(2, "sync_response", generation_id=1, member_id="c2", partitions="t-1"),
        ev(1000, "join_sent", client_id="c3", source="host3"),
        ev(1005, "join_requested", member_id="c1", reason="group is already rebalancing"),
        ev(1005, "join_requested", member_id="c2", reason="group is already rebalancing"),
        ev(1010, "join_response", generation_id=2, member_id="c1", protocol_name="range", leader_id="c1"),
        ev(1010, "join_response", generation_id=2, member_id="c2", protocol_name="range", leader_id="c1"),
        ev(1011, "assignment_computed", generation_id=2, member_id="c1", assignment=a2),
        ev(1020, "sync_response", generation_id=2, member_id="c1", partitions="t-0"),
        ev(1020, "sync_response", generation_id=2, member_id="c2", partitions="t-1"),
        ev(11000, "join_requested", member_id="c1", reason="group is already rebalancing"),
        ev(11000, "join_requested", member_id="c2", reason="group is already rebalancing"),
        ev(11010, "join_response", generation_id=3, member_id="c1", protocol_name="range", leader_id="c1"),
        ev(11010, "join_response", generation_id=3, member_id="c2", protocol_name="range", leader_id="c1"),
        ev(11011, "assignment_computed", generation_id=3, member_id="c1", assignment=a3),
        ev(11020, "sync_response", generation_id=3, member_id="c1", partitions="t-0"),
        ev(11020, "sync_response", generation_id=3, member_id="c2", partitions="t-1"),
        ev(20000, "join_response", generation_id=2, member_id="c3", client_id="c3", source="host3"),
    ]
    out = run(events)
    assert [(g["generation_id"], g["members"]) for g in out["generations"]] == [
        (1, ["c1", "c2"]),
        (2, ["c1", "c2", "c3"]),
        (3, ["c1", "c2"]),
    ]
    assert [e["rounds"] for e in out["rebalance_episodes"]] == [1, 1, 1]


def test_member_logs_without_the_leaders_assignment_do_not_know_a_generations_members():
    """Members' logs only: a generation's full member list is in the leader's assignment line
    (ConsumerCoordinator.onLeaderElected assigns every member, "Finished assignment for group at
    generation N"). Without it, a member that joined but logged nothing (its process stalled after the
    JoinGroup; the 3.x "Successfully joined group" line names no leader) may be in it: members and count
    are null, not the members that happened to log."""
    events = [
        ev(0, "join_response", generation_id=1, member_id="c1", protocol_name="range"),
        ev(0, "join_response", generation_id=1, member_id="c2", protocol_name="range"),
        ev(1, "assignment_computed", generation_id=1, member_id="c1", assignment={"c1": "t-0", "c2": "t-1"}),
        ev(2, "sync_response", generation_id=1, member_id="c1", partitions="t-0"),
        ev(2, "sync_response", generation_id=1, member_id="c2", partitions="t-1"),
        ev(5000, "join_requested", member_id="c2", reason="group is already rebalancing"),
        ev(5010, "join_response", generation_id=2, member_id="c2", protocol_name="range"),
    ]
    out = run(events)
    rows = {g["generation_id"]: (g["members"], g["member_count"]) for g in out["generations"]}
    assert rows == {1: (["c1", "c2"], 2), 2: (None, None)}


def test_the_last_members_leave_empties_the_group_at_a_new_generation_in_member_logs():
    """Members' logs only: the leader's assignment of generation 1 lists c1 and c2; both send a LeaveGroup
    (c2 first: a rebalance c1 takes part in, generation 2 of c1 alone). When c1, the last member, leaves,
    the join phase its LeaveGroup starts has no member to wait for: the coordinator completes it at once,
    increments the generation and the group turns Empty (GroupCoordinator.onCompleteJoin ->
    GroupMetadata.initNextGeneration; ClassicGroup in 4.0). That rebalance ends at the leave, generation
    3 ended Empty (inferred: no member logs it); a new process joining later is a rebalance of its own."""
    a1 = {"c1": "t-0", "c2": "t-1"}
    events = [
        ev(0, "join_response", generation_id=1, member_id="c1", protocol_name="range", leader_id="c1"),
        ev(0, "join_response", generation_id=1, member_id="c2", protocol_name="range", leader_id="c1"),
        ev(1, "assignment_computed", generation_id=1, member_id="c1", assignment=a1),
        ev(2, "sync_response", generation_id=1, member_id="c1", partitions="t-0"),
        ev(2, "sync_response", generation_id=1, member_id="c2", partitions="t-1"),
        ev(1000, "leave_sent", member_id="c2", reason="the consumer is being closed"),
        ev(1005, "join_requested", member_id="c1", reason="group is already rebalancing"),
        ev(1010, "join_response", generation_id=2, member_id="c1", protocol_name="range", leader_id="c1"),
        ev(1011, "assignment_computed", generation_id=2, member_id="c1", assignment={"c1": "t-0 t-1"}),
        ev(1020, "sync_response", generation_id=2, member_id="c1", partitions="t-0 t-1"),
        ev(5000, "leave_sent", member_id="c1", reason="the consumer is being closed"),
        ev(9000, "join_sent", client_id="c3", source="host3"),
        ev(
            9010,
            "join_response",
            generation_id=4,
            member_id="c3",
            client_id="c3",
            source="host3",
            leader_id="c3",
        ),
        ev(9011, "assignment_computed", generation_id=4, member_id="c3", assignment={"c3": "t-0 t-1"}),
        ev(9020, "sync_response", generation_id=4, member_id="c3", partitions="t-0 t-1"),
    ]
    out = run(events)
    rows = [(g["generation_id"], g["ended_empty"], g["members"], g["source"]) for g in out["generations"]]
    assert rows == [
        (1, False, ["c1", "c2"], "observed"),
        (2, False, ["c1"], "observed"),
        (3, True, [], "inferred"),
        (4, False, ["c3"], "observed"),
    ]
    episodes = [
        (rel(e, "started_at")[0], e["first_generation_id"], e["rounds"]) for e in out["rebalance_episodes"]
    ]
    assert episodes[1:] == [(1000, 2, 1), (5000, 3, 1), (9000, 4, 1)]


def test_a_leave_while_a_member_without_a_leave_line_may_remain_does_not_empty_the_group():
    """The leader's assignment listed c2 too, whose log shows no LeaveGroup (it may have crashed: it stays
    a member until its session times out): c1's leave starts a rebalance that is not known to empty the
    group; nothing is inferred."""
    a1 = {"c1": "t-0", "c2": "t-1"}
    events = [
        ev(0, "join_response", generation_id=1, member_id="c1", protocol_name="range", leader_id="c1"),
        ev(0, "join_response", generation_id=1, member_id="c2", protocol_name="range", leader_id="c1"),
        ev(1, "assignment_computed", generation_id=1, member_id="c1", assignment=a1),
        ev(2, "sync_response", generation_id=1, member_id="c1", partitions="t-0"),
        ev(2, "sync_response", generation_id=1, member_id="c2", partitions="t-1"),
        ev(5000, "leave_sent", member_id="c1", reason="the consumer is being closed"),
    ]
    out = run(events)
    assert [(g["generation_id"], g["ended_empty"]) for g in out["generations"]] == [(1, False)]


@pytest.mark.parametrize(
    "signalled, source",
    [(True, "inferred"), (False, "observed")],
    ids=["after-an-unanswered-signal", "without-a-signal"],
)
def test_a_cooperative_close_after_a_signal_no_join_group_answered_is_the_latest_stop(signalled, source):
    """c1 (cooperative) learns of a rebalance at 5000 and sends no JoinGroup; at 140000 it revokes all it
    owns, a close() (ConsumerCoordinator.onLeavePrepare). Its next poll() would have rejoined: the poll
    loop never came back after the signal, so the stop at the revocation is the latest it can be."""
    coop = "cooperative-sticky"
    events = [
        ev(0, "join_response", generation_id=1, member_id="c1", protocol_name=coop, client_id="a"),
        ev(2, "sync_response", generation_id=1, member_id="c1", partitions="t-0", client_id="a"),
        ev(3, "partitions_assigned", member_id="c1", partitions="t-0", client_id="a"),
        *([ev(5000, "heartbeat_rebalancing", member_id="c1", client_id="a")] if signalled else []),
        ev(140000, "partitions_revoked", member_id="c1", partitions="t-0", client_id="a"),
        ev(145000, "join_response", generation_id=2, member_id="c2", protocol_name=coop, client_id="b"),
        ev(145001, "assignment_computed", generation_id=2, member_id="c2", assignment={"c2": "t-0"}),
        ev(145002, "sync_response", generation_id=2, member_id="c2", partitions="t-0", client_id="b"),
        ev(145003, "partitions_assigned", member_id="c2", partitions="t-0", client_id="b"),
    ]
    (move,) = run(events)["partition_movements"]
    assert (rel(move, "revoked_at")[0], move["source"]) == (140000, source)


@pytest.mark.parametrize("instance", ["i2", None], ids=["static", "dynamic"])
def test_an_eager_signal_stop_whose_partition_a_later_generation_gives_away_is_the_latest_stop(instance):
    """Members' logs: c2 (eager) learns of a rebalance at 5000 and sends no JoinGroup; generation
    2 forms without it (KIP-345 keeps a static member that does not rejoin; a dynamic one is dropped,
    GroupCoordinator.onCompleteJoin) and gives t-1 to c1. Its poll
    loop never got to onJoinPrepare: the stop placed at its signal is the latest it can be."""
    events = [
        ev(0, "join_response", generation_id=1, member_id="c1", protocol_name="range", client_id="a"),
        ev(1, "assignment_computed", generation_id=1, member_id="c1", assignment={"c1": "t-0", "c2": "t-1"}),
        ev(2, "sync_response", generation_id=1, member_id="c1", partitions="t-0", client_id="a"),
        ev(3, "partitions_assigned", member_id="c1", partitions="t-0", client_id="a"),
        ev(
            0,
            "join_response",
            generation_id=1,
            member_id="c2",
            protocol_name="range",
            client_id="b",
            group_instance_id=instance,
        ),
        ev(2, "sync_response", generation_id=1, member_id="c2", partitions="t-1", client_id="b"),
        ev(3, "partitions_assigned", member_id="c2", partitions="t-1", client_id="b"),
        ev(5000, "heartbeat_rebalancing", member_id="c2", client_id="b"),
        ev(5001, "heartbeat_rebalancing", member_id="c1", client_id="a"),
        ev(5001, "partitions_revoked", member_id="c1", partitions="t-0", client_id="a"),
        ev(5002, "join_sent", member_id="c1", client_id="a"),
        ev(9000, "join_response", generation_id=2, member_id="c1", protocol_name="range", client_id="a"),
        ev(9001, "assignment_computed", generation_id=2, member_id="c1", assignment={"c1": "t-0 t-1"}),
        ev(9002, "sync_response", generation_id=2, member_id="c1", partitions="t-0 t-1", client_id="a"),
        ev(9003, "partitions_assigned", member_id="c1", partitions="t-0 t-1", client_id="a"),
    ]
    moves = run(events)["partition_movements"]
    given_away = [m for m in moves if m["from_member_id"] == "c2"]
    assert [(rel(m, "revoked_at")[0], m["source"]) for m in given_away] == [(5000, "inferred")]
