"""Eager rebalances: both sides, broker only (observed and inferred), one client's log."""

from __future__ import annotations

from rebalance_core.replay_common import ReplaySettings
from tests.core import replay_scenarios as sc
from tests.core.replay_helpers import ev, rel, run

MOVE = (
    "topic",
    "partition",
    "from_member_id",
    "to_member_id",
    "stop_cause",
    "revoked_at",
    "assigned_at",
    "moved",
)
EPISODE = ("rounds", "started_at", "stabilized_at", "rebalance_ms", "stw_ms", "partition_unavailable_ms")
CHURN = ("partitions_moved", "partitions_revoked", "revocations_wasted")


def test_eager_both_sides_member_timing():
    out = run(sc.eager_both_sides())
    # each member stops at its first rebalance signal, starts at partitions_assigned
    assert [rel(m, *MOVE) for m in out["partition_movements"]] == [
        ("t", 0, "c1", "c1", "revoked", 2000, 2605, False),
        ("t", 1, "c1", "c1", "revoked", 2000, 2605, False),
        ("t", 2, "c2", "c2", "revoked", 2500, 2607, False),
        ("t", 3, "c2", "c3", "revoked", 2500, 2609, True),
    ]
    (episode,) = out["rebalance_episodes"]
    assert rel(episode, *EPISODE) == (1, 1001, 2603, 1602, 105, 605 * 2 + 107 + 109)
    assert rel(episode, *CHURN) == (1, 4, 3)
    assert episode["timing_source"] == "member" and episode["rebalance_protocol"] == "eager"
    (gen,) = out["generations"]
    assert rel(gen, "generation_id", "rebalance_started_at", "join_completed_at", "stabilized_at") == (
        2,
        1001,
        2600,
        2603,
    )
    assert gen["members"] == ["c1", "c2", "c3"] and gen["leader_member_id"] == "c1"
    assert gen["timing_source"] == "coordinator"  # the generation's instants are the broker's
    assert {(a["member_id"], a["partition"]) for a in out["assignments"]} == {
        ("c1", 0),
        ("c1", 1),
        ("c2", 2),
        ("c3", 3),
    }
    assert not out["anomalies"]


def test_eager_broker_only_coordinator_timing():
    out = run(sc.eager_broker_only())
    assert [g["generation_id"] for g in out["generations"]] == [1, 2]
    # stop at Preparing, start at the leader's SyncGroup (Stable)
    assert {rel(m, "revoked_at", "assigned_at") for m in out["partition_movements"]} == {(1001, 1102)}
    first, second = out["rebalance_episodes"]
    assert rel(first, *CHURN) == (0, 0, 0)  # first assignment: nothing moves
    assert rel(second, "stw_ms", *CHURN) == (101, 1, 3, 2)
    (day,) = out["group_daily_summary"]
    assert (day["rebalances"], day["generations"], day["stw_ms"], day["events"]) == (2, 2, 101, 8)


def test_one_client_log_expected_09():
    """EXPECTED.md 09: my-topic-0,1 move to the new member; stop-the-world 11 ms (.531 -> .542)."""
    out = run(sc.log_09_client_eager())
    (gen,) = out["generations"]
    assert rel(gen, "generation_id", "rebalance_started_at", "stabilized_at", "rebalance_ms") == (
        2,
        0,
        11,
        11,
    )
    assert gen["timing_source"] == "member" and gen["member_count"] == 2
    moves = {(m["partition"], m["to_member_id"], m["moved"]) for m in out["partition_movements"]}
    assert moves == {
        (0, "consumer-legacy-5485", True),
        (1, "consumer-legacy-5485", True),
        (2, "consumer-legacy-936f", False),
    }
    (episode,) = out["rebalance_episodes"]
    assert (episode["stw_ms"], episode["partitions_moved"]) == (11, 2)


def test_broker_only_without_assignments_reruns_the_assignor():
    out = run(sc.broker_only_no_assignments(), ReplaySettings(topics={"t": 4}))
    assert {g["source"] for g in out["generations"]} == {"inferred"}
    gen2 = [(a["member_id"], a["partition"]) for a in out["assignments"] if a["generation_id"] == 2]
    assert gen2 == [("a", 0), ("a", 1), ("b", 2), ("b", 3)]  # RangeAssignor
    assert {a["source"] for a in out["assignments"]} == {"inferred"}
    assert {m["source"] for m in out["partition_movements"]} == {"inferred"}
    assert out["rebalance_episodes"][1]["partitions_moved"] == 2


def test_broker_only_without_topics_has_no_assignments():
    out = run(sc.broker_only_no_assignments())
    assert [g["source"] for g in out["generations"]] == ["observed", "observed"]
    assert not out["assignments"] and not out["partition_movements"] and not out["anomalies"]


def test_inference_failure_is_an_anomaly(monkeypatch):
    import rebalance_core.assignors as assignors

    def broken(name):
        raise ImportError("not written yet")

    monkeypatch.setattr(assignors, "get_assignor", broken)
    out = run(sc.broker_only_no_assignments(), ReplaySettings(topics={"t": 4}))
    assert {a["rule"] for a in out["anomalies"]} == {"inference_failed"}
    assert not out["assignments"]


def test_revoking_partitions_owned_before_the_log():
    """The real 09 log has no earlier assignment: the revocation itself shows what the member owned."""
    events = sc.log_09_client_eager()[1:]
    out = run(events)
    (episode,) = out["rebalance_episodes"]
    assert (episode["stw_ms"], episode["partitions_moved"], episode["partitions_revoked"]) == (11, 2, 3)


def test_a_new_member_named_first_by_the_leaders_assignment_keeps_its_own_timing():
    """A 2.x client logs KIP-394's MEMBER_ID_REQUIRED round at DEBUG: a new member's own log names its id
    only in its JoinGroup response, which may come after the leader's assignment and the leader's sync
    turned the group Stable. The assignment names it (`{client.id}-{UUID}`): its partitions start at its
    own callback, never at the leader's sync to be revoked by its own join response."""
    c1, c2 = "c1-0eec4c23-8ca2-4a89-becc-9a2b139de9f9", "c2-5d0b6f39-41a3-4cc9-af8b-3c502e0b8869"
    own = {"c1": {"client_id": "c1", "file": "c1.log"}, "c2": {"client_id": "c2", "file": "c2.log"}}
    events = [
        ev(0, "join_sent", **own["c1"]),
        ev(1, "join_sent", **own["c2"]),
        ev(30, "join_response", generation_id=1, member_id=c1, protocol_name="range", **own["c1"]),
        ev(
            31,
            "assignment_computed",
            generation_id=1,
            member_id=c1,
            assignment={c1: "t-0", c2: "t-1"},
            **own["c1"],
        ),
        ev(33, "sync_response", generation_id=1, member_id=c1, partitions="t-0", **own["c1"]),
        ev(33, "partitions_assigned", member_id=c1, partitions="t-0", **own["c1"]),
        ev(34, "join_response", generation_id=1, member_id=c2, protocol_name="range", **own["c2"]),
        ev(36, "sync_response", generation_id=1, member_id=c2, partitions="t-1", **own["c2"]),
        ev(36, "partitions_assigned", member_id=c2, partitions="t-1", **own["c2"]),
    ]
    out = run(events)
    assert out["partition_movements"] == []
    (episode,) = out["rebalance_episodes"]
    assert rel(episode, *CHURN) == (0, 0, 0)
    assert not out["anomalies"]


def test_the_leaders_assignment_names_the_leader_and_members_a_2x_broker_line_does_not():
    """The 2.x broker's "Stabilized group G generation N with K members" and "Assignment received from
    leader for group G for generation N" name neither; with the leader's own log, its "Finished
    assignment" does: only the leader runs the assignor, over every member of the generation."""
    assignment = {"c1": "t-0", "c2": "t-1", "c3": ""}
    events = [
        ev(
            0,
            "rebalance_prepared",
            generation_id=0,
            reason="Adding new member c1 with group instance id None",
        ),
        ev(5, "join_completed", generation_id=1, member_count=3, protocol_name="range"),
        ev(6, "join_response", generation_id=1, member_id="c1", protocol_name="range"),
        ev(7, "assignment_computed", generation_id=1, member_id="c1", assignment=assignment),
        ev(8, "assignment_received", generation_id=1, member_count=3),
    ]
    (gen,) = run(events)["generations"]
    assert (gen["leader_member_id"], gen["members"], gen["member_count"]) == ("c1", ["c1", "c2", "c3"], 3)
