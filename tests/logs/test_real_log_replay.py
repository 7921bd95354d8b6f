"""Replay each real log (parser -> rebalance_core.replay) and check EXPECTED.md's conclusions: rebalance
counts, generations, durations (broker: Preparing -> Stabilized = join_completed_at - rebalance_started_at),
members, partitions moved, stop-the-world. A disagreement caused by the replayer goes to
/work/notes/ROUNDTRIP_ISSUES.md ("REAL-n") and its test is marked xfail(strict=True) until fixed."""

from __future__ import annotations

from rebalance_core.events import parse_ts
from rebalance_core.replay import replay
from tests.logs.kafka_log_fixtures import REAL, parse_fixture


def tables(name: str, **options) -> dict[str, list[dict]]:
    return replay(parse_fixture(REAL / name, **options).events)


def of_group(rows: list[dict], group_id: str) -> list[dict]:
    return [r for r in rows if r["group_id"] == group_id]


def completed(episodes: list[dict]) -> list[dict]:
    return [e for e in episodes if e["stabilized_at"] is not None]


def test_04_two_rebalances_across_a_group_deletion():
    t = tables("04_broker_3.0_expiry_dead_recreate.log")
    emptied, recreated = sorted(t["generations"], key=lambda g: g["rebalance_started_at"])
    assert (
        emptied["generation_id"],
        emptied["ended_empty"],
        emptied["rebalance_ms"],
        emptied["member_count"],
    ) == (2, True, 1, 0)
    assert (recreated["generation_id"], recreated["ended_empty"], recreated["member_count"]) == (1, False, 1)
    assert recreated["join_completed_at"] - recreated["rebalance_started_at"] == 3002
    assert recreated["leader_member_id"] == "my-java-consumer-7dfd6962-b848-4383-a596-82f349150d56"
    assert len(t["rebalance_episodes"]) == 2
    assert not t["anomalies"]  # generation 0 after the group died is not an error


def test_05_three_rebalances():
    t = tables("05_broker_3.8_classic_join_leave.log")
    leader, second = (
        "avro-producer-0eec4c23-8ca2-4a89-becc-9a2b139de9f9",
        "avro-producer-4be6fc59-a8a4-4882-b22f-f8693a0b1536",
    )
    gens = sorted(t["generations"], key=lambda g: g["generation_id"])
    assert [g["generation_id"] for g in gens] == [1, 2, 3]
    assert [g["join_completed_at"] - g["rebalance_started_at"] for g in gens] == [3, 2080, 1707]
    assert [g["member_count"] for g in gens] == [1, 2, 1]
    assert [sorted(g["members"]) for g in gens] == [[leader], sorted([leader, second]), [leader]]
    assert {g["leader_member_id"] for g in gens} == {leader}
    assert len(completed(t["rebalance_episodes"])) == 3 and not t["partition_movements"]


def test_06_kip848_three_target_assignments():
    t = tables(
        "06_broker_3.8_kip848_target_assignment.log",
        topic_ids={"a": "7l8rBsX6TMqbHE6QgWshdw", "b": "8iWjCLGESE6MUiR5ANkArg"},
    )
    b8f7, gjwz, nc1 = (
        "avro-producer-b8f7c567-6711-4cc6-8720-29ce8dee2034",
        "gjWzAEmmRlOfypB2_GB_9Q",
        "6nc1qt8rSeyTwBh__vZELQ",
    )
    gens = sorted(t["generations"], key=lambda g: g["generation_id"])
    assert [(g["generation_id"], g["group_protocol"], g["protocol_name"]) for g in gens] == [
        (4, "consumer", "uniform"),
        (5, "consumer", "uniform"),
        (6, "consumer", "uniform"),
    ]
    converged = {g["generation_id"]: g["rebalance_ms"] for g in gens}
    assert converged[4] == 5046 and converged[6] == 5024  # target computed -> last member STABLE
    assert [sorted(g["members"]) for g in gens] == [[b8f7, gjwz], [gjwz], [nc1, gjwz]]
    moved = sorted(
        (m["topic"], m["partition"], m["from_member_id"], m["to_member_id"])
        for m in t["partition_movements"]
        if m["moved"]
    )
    # epoch 5: b8f7 left (not logged), gjWz takes both topics; epoch 6: 8iWj-0..5 go to 6nc1
    assert moved == [("a", p, b8f7, gjwz) for p in range(6)] + [("b", p, gjwz, nc1) for p in range(6)]
    assert all(e["stw_ms"] == 0 for e in t["rebalance_episodes"])  # KIP-848 never stops the world


def test_09_one_eager_rebalance_seen_by_its_leader():
    t = tables("09_client_classic_eager_two_members.log")
    [gen] = t["generations"]
    assert (gen["generation_id"], gen["member_count"], gen["protocol_name"], gen["rebalance_protocol"]) == (
        2,
        2,
        "range",
        "eager",
    )
    assert sorted(gen["members"]) == [
        "consumer-legacy-5485febc-752b-4881-b106-5829a1889014",
        "consumer-legacy-936f0bfd-f1ce-46ab-b896-b39ad77244a0",
    ]
    assert gen["leader_member_id"] == "consumer-legacy-936f0bfd-f1ce-46ab-b896-b39ad77244a0"
    [episode] = t["rebalance_episodes"]
    assert episode["rebalance_ms"] == 11  # .531 -> .542


def test_09_stop_the_world_and_movements():
    t = tables("09_client_classic_eager_two_members.log")
    [episode] = t["rebalance_episodes"]
    assert episode["stw_ms"] == 11
    old, new = (
        "consumer-legacy-936f0bfd-f1ce-46ab-b896-b39ad77244a0",
        "consumer-legacy-5485febc-752b-4881-b106-5829a1889014",
    )
    moved = sorted(
        (m["topic"], m["partition"], m["from_member_id"], m["to_member_id"])
        for m in t["partition_movements"]
        if m["moved"]
    )
    assert moved == [("my-topic", 0, old, new), ("my-topic", 1, old, new)]
    # eager: all three revoked at the first signal; my-topic-2 went back to its owner (the eager tax)
    assert (episode["partitions_moved"], episode["partitions_revoked"], episode["revocations_wasted"]) == (
        2,
        3,
        1,
    )


def test_10_kip848_one_incremental_rebalance():
    t = tables("10_client_kip848_reconcile.log")
    [move] = [m for m in t["partition_movements"] if m["moved"]]
    assert (move["topic"], move["partition"]) == ("my-topic", 2)
    assert (move["from_member_id"], move["to_member_id"]) == (
        "tKQVSQuHR9aBocp13XT9nw",
        "oCpRdkCgQGWK7Rq-kJ2BVw",
    )
    assert move["unavailable_ms"] == 6609
    [episode] = completed(t["rebalance_episodes"])
    assert episode["stw_ms"] == 0 and episode["partitions_moved"] == 1
    assert episode["stabilized_at"] - parse_ts("2026-03-16T16:54:47.162Z") == 10950


def test_11_streams_single_cooperative_round():
    t = tables("11_client_streams_cooperative_4threads.log")
    [gen] = t["generations"]
    assert (gen["generation_id"], gen["member_count"], gen["rebalance_protocol"], gen["rebalance_ms"]) == (
        2,
        4,
        "cooperative",
        42197,
    )
    assert gen["leader_member_id"].endswith("StreamThread-3-consumer-bbc9b6ee-9144-4268-98d9-68edeaafd2a3")
    [episode] = t["rebalance_episodes"]
    assert (episode["rounds"], episode["partitions_revoked"], episode["stw_ms"]) == (1, 0, 0)


def test_12_connect_two_rounds_and_a_closing_task_consumer():
    t = tables("12_client_connect_incremental_cooperative.log")
    gens = sorted(of_group(t["generations"], "connect-cluster"), key=lambda g: g["generation_id"])
    assert [(g["generation_id"], g["episode_round"], g["protocol_name"]) for g in gens] == [
        (4, 1, "sessioned"),
        (5, 2, "sessioned"),
    ]
    assert {g["member_count"] for g in gens} == {1}
    [episode] = of_group(t["rebalance_episodes"], "connect-cluster")
    assert (
        episode["rounds"],
        episode["rebalance_ms"],
        episode["first_generation_id"],
        episode["last_generation_id"],
    ) == (2, 210, 4, 5)
    assert episode["partitions_revoked"] == 1  # round 1 revoked task http-sink-0
    assert (
        completed(of_group(t["rebalance_episodes"], "connect-http-sink")) == []
    )  # no rebalance of it completes
    # the worker is its own leader: Connect's assignment line says leader='connect-1-...'
    assert {g["leader_member_id"] for g in gens} == {"connect-1-3b5b3704-b325-47a7-9528-d1daa049e5e6"}
    # the sink consumer's LeaveGroup starts a rebalance the file does not show complete: open, not counted
    (sink_day,) = of_group(t["group_daily_summary"], "connect-http-sink")
    assert (sink_day["rebalances"], sink_day["rebalances_open"]) == (0, 1)
