"""The ownership timeline (docs/metrics.md) on hand-made start/stop sequences."""

from __future__ import annotations

import datetime as dt
import json

from rebalance_core.events import TopicPartition
from rebalance_core.measures import DOUBLE_OWNERSHIP, STOP_NOT_OWNED, OwnershipTimeline

P0, P1, P2 = (TopicPartition("t", i) for i in range(3))
DAY = 1_700_000_000_000  # 2023-11-14T22:13:20Z


def eager_timeline() -> OwnershipTimeline:
    """c1 owns p0..p2; c2 joins: eager, everything stops, p0,p1 back to c1 and p2 to c2."""
    tl = OwnershipTimeline("k", "g")
    for tp in (P0, P1, P2):
        tl.start(tp, "c1", DAY)  # first assignment: no movement row
    tl.begin_episode("e1", DAY + 1000, reason="new member", rebalance_protocol="eager")
    for tp in (P0, P1, P2):
        assert tl.stop(tp, "c1", DAY + 1010, "revoked") is None
    tl.round_completed(2, DAY + 1100)
    tl.start(P0, "c1", DAY + 1110, generation_id=2)
    tl.start(P1, "c1", DAY + 1110, generation_id=2)
    tl.start(P2, "c2", DAY + 1120, generation_id=2)
    return tl


def test_eager_rebalance_rows():
    tl = eager_timeline()
    out = tl.finish()
    moves = out["partition_movements"]
    assert [(m["partition"], m["to_member_id"], m["unavailable_ms"]) for m in moves] == [
        (0, "c1", 100),
        (1, "c1", 100),
        (2, "c2", 110),
    ]
    assert [m["wasted_revocation"] for m in moves] == [True, True, False]
    assert [m["moved"] for m in moves] == [False, False, True]
    assert {m["episode_id"] for m in moves} == {"e1"}
    (ep,) = out["rebalance_episodes"]
    assert ep["stw_ms"] == 100  # last stop at +1010 -> first start at +1110
    assert ep["partition_unavailable_ms"] == 310
    assert ep["max_partition_unavailable_ms"] == 110
    assert (ep["partitions_moved"], ep["partitions_revoked"], ep["revocations_wasted"]) == (1, 3, 2)
    assert ep["rebalance_ms"] == 100 and ep["first_generation_id"] == ep["last_generation_id"] == 2
    (day,) = tl.daily_rows()
    assert day["event_date"] == dt.date(2023, 11, 14)
    assert (day["rebalances"], day["stw_ms"], day["partition_unavailable_ms"]) == (1, 100, 310)
    assert day["reasons"] == {"new member": 1}


def test_cooperative_keeps_unmoved_partitions_running():
    tl = OwnershipTimeline("k", "g")
    for tp in (P0, P1, P2):
        tl.start(tp, "c1", DAY)
    tl.begin_episode("e1", DAY + 1000)
    tl.round_completed(2, DAY + 1100)
    tl.stop(P2, "c1", DAY + 1105, "revoked")
    tl.next_round()
    tl.round_completed(3, DAY + 1200)
    tl.start(P2, "c2", DAY + 1210)
    tl.end_episode()
    out = tl.drain()
    (ep,) = out["rebalance_episodes"]
    assert ep["rounds"] == 2 and (ep["first_generation_id"], ep["last_generation_id"]) == (2, 3)
    assert ep["stw_ms"] == 0 and ep["partition_unavailable_ms"] == 105 and ep["partitions_moved"] == 1


def test_stop_the_world_ends_at_group_empty_and_open_stops_are_emitted():
    tl = OwnershipTimeline("k", "g")
    tl.start(P0, "c1", DAY)
    tl.begin_episode("e1", DAY + 50_000)
    tl.stop(P0, "c1", DAY + 5_000, "member_failed")  # crash: last heartbeat, placed in the past
    tl.group_empty(DAY + 50_001)
    tl.round_completed(2, DAY + 50_001)
    out = tl.finish()
    (move,) = out["partition_movements"]
    assert move["assigned_at"] is None and move["unavailable_ms"] is None and move["moved"] is False
    (ep,) = out["rebalance_episodes"]
    assert ep["stw_ms"] == 45_001 and ep["rebalance_ms"] == 1


def test_static_restart_outside_an_episode_counts_in_the_day():
    tl = OwnershipTimeline("k", "g")
    tl.start(P0, "a-1", DAY, instance="a")
    tl.stop(P0, "a-1", DAY + 100, "member_failed", instance="a")
    tl.start(P0, "a-2", DAY + 400, instance="a")
    (move,) = tl.drain()["partition_movements"]
    assert move["moved"] is False and move["wasted_revocation"] is False and move["episode_id"] is None
    (day,) = tl.daily_rows()
    assert (day["stw_ms"], day["partition_unavailable_ms"], day["rebalances"]) == (300, 300, 0)


def test_rules_reported_not_raised():
    tl = OwnershipTimeline("k", "g")
    assert tl.stop(P0, "c1", DAY, "revoked") == STOP_NOT_OWNED
    tl.start(P0, "c1", DAY)
    assert tl.start(P0, "c2", DAY + 10) == DOUBLE_OWNERSHIP
    assert tl.owner_of(P0) == "c2"
    (move,) = tl.drain()["partition_movements"]
    assert move["stop_cause"] == "lost" and move["unavailable_ms"] == 0


def test_snapshot_round_trip_is_json_and_resumes():
    tl = OwnershipTimeline("k", "g")
    for tp in (P0, P1, P2):
        tl.start(tp, "c1", DAY)
    tl.begin_episode("e1", DAY + 1000)
    tl.stop(P0, "c1", DAY + 1010, "revoked")
    state = json.loads(json.dumps(tl.snapshot()))
    resumed = OwnershipTimeline("k", "g", state=state)
    for t in (tl, resumed):
        t.round_completed(2, DAY + 1100)
        t.start(P0, "c2", DAY + 1110)
    assert tl.finish() == resumed.finish()
    assert tl.daily_rows() == resumed.daily_rows()


def test_assumed_ownership_predates_the_input():
    tl = OwnershipTimeline("k", "g")
    assert tl.assume(P0, "c1") and not tl.assume(P0, "c2")
    tl.stop(P0, "c1", DAY + 10, "revoked")
    assert not tl.assume(P0, "c2")  # stopped: known
    tl.start(P0, "c2", DAY + 30)
    (move,) = tl.drain()["partition_movements"]
    assert (move["from_member_id"], move["unavailable_ms"]) == ("c1", 20)
    assert tl.daily_rows()[0]["stw_ms"] == 20


def test_unknown_owners_null_the_episodes_from_there_until_known_and_their_days():
    """Who owns what is unknown (`owners_unknown`): the open episode and every episode begun before the
    owners are known again have null partition measures, and so has their day (its known part would be
    a lower bound only). The state survives a snapshot."""
    tl = OwnershipTimeline("k", "g")
    tl.begin_episode("e1", DAY, reason="new member")
    tl.owners_unknown()  # the round turned Stable with an assignment no event shows
    tl.round_completed(1, DAY + 100)
    tl.end_episode()
    tl = OwnershipTimeline("k", "g", state=json.loads(json.dumps(tl.snapshot())))
    tl.begin_episode("e2", DAY + 1000, reason="member left")  # its owners before: still unknown
    tl.owners_known()
    tl.start(P0, "c1", DAY + 1100, generation_id=2)
    tl.round_completed(2, DAY + 1100)
    tl.end_episode()
    tl.begin_episode("e3", DAY + 2000, reason="new member")
    tl.stop(P0, "c1", DAY + 2000, "revoked")
    tl.start(P0, "c1", DAY + 2100, generation_id=3)
    tl.round_completed(3, DAY + 2100)
    out = tl.finish()
    measured = [(e["episode_id"], e["partition_unavailable_ms"]) for e in out["rebalance_episodes"]]
    assert measured == [("e1", None), ("e2", None), ("e3", 100)]
    (day,) = tl.daily_rows()
    assert (day["rebalances"], day["stw_ms"], day["partitions_revoked"]) == (3, None, None)


def test_a_start_while_another_member_holds_it_makes_the_holders_stop_an_estimate():
    """Consumers' logs alone: a killed process logs nothing (no onPartitionsRevoked / onPartitionsLost),
    and the coordinator gives its partitions to another member once its session expires. When the holder
    stopped is in no event: its stop is placed at the new owner's start, the latest it can be, and the
    row is `inferred` (its unavailable time, and the episode's, a lower bound)."""
    tl = OwnershipTimeline("k", "g")
    tl.start(P0, "c1", DAY)
    tl.begin_episode("e1", DAY + 45_000, reason="removing member c1 on heartbeat expiration")
    assert tl.start(P0, "c2", DAY + 45_100, generation_id=2) == DOUBLE_OWNERSHIP
    tl.round_completed(2, DAY + 45_100)
    out = tl.finish()
    (move,) = out["partition_movements"]
    assert (move["stop_cause"], move["unavailable_ms"], move["source"]) == ("lost", 0, "inferred")
    assert out["rebalance_episodes"][0]["source"] == "inferred"


def test_a_group_empty_no_event_shows_is_inferred_and_what_starts_after_it_moved_from_no_one():
    """A member-only log learns that the group emptied only from a later generation: the empty instant is
    the latest stop (a lower bound of the stop-the-world), the rows it closes and the episode are inferred,
    and a partition started again in the same episode had no owner before it (not moved)."""
    tl = OwnershipTimeline("k", "g")
    tl.start(P0, "c1", DAY)
    tl.begin_episode("e1", DAY + 1000)
    tl.stop(P0, "c1", DAY + 1000, "member_left")
    assert tl.latest_stop() == DAY + 1000
    tl.group_empty(tl.latest_stop(), source="inferred")
    assert tl.latest_stop() is None
    tl.start(P0, "c2", DAY + 9000, generation_id=3)
    tl.round_completed(3, DAY + 9000)
    out = tl.finish()
    (move,) = out["partition_movements"]
    assert (move["assigned_at"], move["unavailable_ms"], move["source"]) == (None, None, "inferred")
    (episode,) = out["rebalance_episodes"]
    assert (episode["stw_ms"], episode["partitions_moved"], episode["source"]) == (0, 0, "inferred")


def test_a_stop_the_world_open_at_the_end_of_input_makes_the_open_rows_and_episode_inferred():
    tl = eager_timeline()
    tl.begin_episode("e2", DAY + 5000)
    for tp in (P0, P1, P2):
        tl.stop(tp, "c1" if tp != P2 else "c2", DAY + 5001, "revoked")
    out = tl.finish()
    open_rows = [m for m in out["partition_movements"] if m["assigned_at"] is None]
    assert len(open_rows) == 3 and {m["source"] for m in open_rows} == {"inferred"}
    assert out["rebalance_episodes"][-1]["source"] == "inferred"


def _stopped_as_a_whole(c1_stop: int, c2_stop: int) -> OwnershipTimeline:
    """c1 owns p0, p1 and c2 p2; an episode stops them all (observed); c1's stops turn out to be estimates
    (`stops_inferred`: e.g. its poll timer then expired) before c2 starts p2 again."""
    tl = OwnershipTimeline("k", "g")
    for tp, member in ((P0, "c1"), (P1, "c1"), (P2, "c2")):
        tl.start(tp, member, DAY)
    tl.begin_episode("e1", DAY + 1000, rebalance_protocol="eager")
    tl.stop(P0, "c1", DAY + c1_stop, "revoked")
    tl.stop(P1, "c1", DAY + c1_stop, "revoked")
    tl.stop(P2, "c2", DAY + c2_stop, "revoked")
    tl.stops_inferred("c1")
    tl.round_completed(2, DAY + 1100)
    tl.start(P2, "c2", DAY + 1110, generation_id=2)
    tl.end_episode()
    return tl


def test_a_stop_the_world_from_a_stop_found_an_estimate_later_is_a_lower_bound():
    # c1's stop at +1010 was the group's last: the group may have stopped as a whole before it
    (ep,) = _stopped_as_a_whole(c1_stop=1010, c2_stop=1005).drain()["rebalance_episodes"]
    assert ep["stw_ms"] == 100 and ep["source"] == "inferred"
    # c2's observed stop at +1010 was the last: the estimate before it does not move the group's stop
    (ep,) = _stopped_as_a_whole(c1_stop=1005, c2_stop=1010).drain()["rebalance_episodes"]
    assert ep["stw_ms"] == 100 and ep["source"] == "observed"


def test_a_stop_the_world_counted_before_its_starting_stop_is_found_an_estimate_is_a_lower_bound():
    """c1's stops at +1010 start the stop-the-world c2's restart at +1110 ends (episode e1); only in the
    next episode does c1's poll timeout or removal make them estimates: e1's interval is a lower bound."""
    tl = OwnershipTimeline("k", "g")
    for tp, member in ((P0, "c1"), (P1, "c1"), (P2, "c2")):
        tl.start(tp, member, DAY)
    tl.begin_episode("e1", DAY + 1000, rebalance_protocol="eager")
    tl.stop(P2, "c2", DAY + 1005, "revoked")
    tl.stop(P0, "c1", DAY + 1010, "revoked")
    tl.stop(P1, "c1", DAY + 1010, "revoked")
    tl.round_completed(2, DAY + 1100)
    tl.start(P2, "c2", DAY + 1110, generation_id=2)
    tl.end_episode()
    tl.begin_episode("e2", DAY + 5000, rebalance_protocol="eager")
    tl.stops_inferred("c1")
    e1 = tl.drain()["rebalance_episodes"][0]
    assert (e1["episode_id"], e1["stw_ms"], e1["source"]) == ("e1", 100, "inferred")
