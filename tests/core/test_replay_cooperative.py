"""Cooperative rebalances (KIP-429) and Connect's incremental cooperative protocol (KIP-415): rounds of
one episode are linked; partitions that stay with their owner never stop."""

from __future__ import annotations

import pytest

from rebalance_core.replay_common import ReplaySettings
from tests.core import replay_scenarios as sc
from tests.core.replay_helpers import ev, rel, run


def test_two_rounds_are_one_episode():
    out = run(sc.cooperative_two_rounds())
    gens = out["generations"]
    assert [(g["generation_id"], g["episode_round"]) for g in gens] == [(2, 1), (3, 2)]
    assert len({g["episode_id"] for g in gens}) == 1
    assert {g["rebalance_protocol"] for g in gens} == {"cooperative"}
    (episode,) = out["rebalance_episodes"]
    assert rel(
        episode, "rounds", "first_generation_id", "last_generation_id", "started_at", "stabilized_at"
    ) == (
        2,
        2,
        3,
        1001,
        1703,
    )
    assert (episode["stw_ms"], episode["partitions_moved"], episode["partitions_revoked"]) == (0, 2, 2)
    # only t-2, t-3 stop (c1's revocation), and start when c2 (no log: coordinator timing) gets them
    moves = [
        rel(m, "partition", "from_member_id", "to_member_id", "revoked_at", "assigned_at", "generation_id")
        for m in out["partition_movements"]
    ]
    assert moves == [(2, "c1", "c2", 1605, 1703, 3), (3, "c1", "c2", 1605, 1703, 3)]


def test_broker_only_cooperative_links_rounds_by_inferred_revocation():
    events = [e for e in sc.cooperative_two_rounds() if e.is_coordinator]
    for e in events:
        e.assignment = None
    # generation 1 known: c1 owned everything
    prefix = [
        ev(0, "join_received", member_id="c1", attributes={"state": "Empty"}),
        ev(1, "rebalance_prepared", generation_id=0),
        ev(2, "join_completed", generation_id=1, leader_id="c1", members="c1", protocol_name=sc.COOP),
        ev(3, "assignment_received", generation_id=1, leader_id="c1"),
    ]
    out = run(prefix + events, ReplaySettings(topics={"t": 4}))
    episodes = out["rebalance_episodes"]
    assert [e["rounds"] for e in episodes] == [1, 2]
    assert episodes[1]["stw_ms"] == 0 and episodes[1]["source"] == "inferred"
    moves = out["partition_movements"]
    assert moves and all(m["from_member_id"] == "c1" and m["to_member_id"] == "c2" for m in moves)
    # revoked at round 1's Stable, assigned at round 2's
    assert {rel(m, "revoked_at", "assigned_at") for m in moves} == {(1603, 1703)}


def test_connect_revocation_links_the_next_round_expected_12():
    """EXPECTED.md 12 (1): 2 rounds, first 'Rebalance started' -> last synced 210 ms."""
    out = run(sc.connect_two_rounds())
    (episode,) = out["rebalance_episodes"]
    assert (episode["rounds"], episode["rebalance_ms"]) == (2, 210)
    assert [g["generation_id"] for g in out["generations"]] == [4, 5]
    assert {g["rebalance_protocol"] for g in out["generations"]} == {"cooperative"}


def test_kip415_delay_links_the_delayed_round():
    w = "w1"
    events = [
        ev(0, "join_sent", member_id=w),
        ev(5, "join_response", generation_id=1, member_id=w, protocol_name="sessioned"),
        ev(10, "sync_response", generation_id=1, member_id=w, attributes={"delay_ms": 300000}),
        ev(300_010, "join_sent", member_id=w, reason="scheduled rebalance"),
        ev(300_015, "join_response", generation_id=2, member_id=w, protocol_name="sessioned"),
        ev(300_020, "sync_response", generation_id=2, member_id=w, attributes={"delay_ms": 0}),
    ]
    (episode,) = run(events)["rebalance_episodes"]
    assert (episode["rounds"], episode["rebalance_ms"]) == (2, 300_020)


def test_unrelated_next_rebalance_is_a_new_episode():
    events = sc.cooperative_two_rounds() + [
        ev(90_000, "join_received", member_id="c3", attributes={"state": "Stable"}),
        ev(90_001, "rebalance_prepared", generation_id=3, reason="Adding new member c3"),
    ]
    out = run(events)
    assert [e["rounds"] for e in out["rebalance_episodes"]] == [2, 1]
    last = out["rebalance_episodes"][-1]
    assert last["stabilized_at"] is None and last["rebalance_ms"] is None  # input ended mid-rebalance


def test_a_member_removed_for_not_rejoining_stopped_at_an_instant_no_line_shows():
    """c1 closes and c2 dies at the same moment (cooperative): the coordinator waits the rebalance timeout
    for c2's JoinGroup, then removes it (GroupCoordinator.onCompleteJoin: members that did not rejoin are
    removed). When c2 stopped consuming no line shows: its stop at the removal is the latest it can be, so
    the group's stop-the-world (true: from the crash to the group emptying) is a lower bound, marked
    `inferred` on its movement rows and episode, never a confident number."""
    from rebalance_core.replay import replay
    from rebalance_core.simulate import SimulationSettings, simulate
    from rebalance_core.timeline import Crash, Join, Leave, Timeline

    timeline = Timeline(
        topics={"t": 2},
        actions=(Join(0, "c1"), Join(0, "c2"), Leave(60_000, "c1"), Crash(60_000, "c2")),
        group_id="g",
        start_ms=1_731_060_000_000,
    )
    settings = SimulationSettings(
        assignor="cooperative-sticky", max_poll_interval_ms=6_000, heartbeat_interval_ms=2_000, seed=1
    )
    result = simulate(timeline, settings)
    out = replay(result.events, ReplaySettings())
    removed = next(
        e for e in result.events if e.event_type == "member_removed" and e.reason == "rebalance_timeout"
    )
    crashed = [m for m in out["partition_movements"] if m["stop_cause"] == "member_failed"]
    assert crashed and {(m["revoked_at"], m["source"]) for m in crashed} == {(removed.ts, "inferred")}
    last = out["rebalance_episodes"][-1]
    assert last["source"] == "inferred"
    assert last["stw_ms"] <= result.truth["rebalance_episodes"][-1]["stw_ms"]


def test_a_members_sync_logged_after_the_revoking_rejoin_of_another_stays_in_its_generation():
    """Members' logs only, cooperative (KIP-429): c1 syncs generation 2, revokes t-1 and rejoins at once
    (ConsumerCoordinator.onJoinComplete -> requestRejoin "need to revoke partitions ... and re-join");
    c2's SyncGroup response for generation 2 is logged after that. It is generation 2's (the open join
    phase can only become generation 3: the coordinator increments the id at each completed join,
    ClassicGroup/GroupMetadata.initNextGeneration), and its own revoke-rejoin joins the follow-up round
    already open: generations 1-3 one row each, episodes of 1 and 2 rounds, not a third round, and the
    episode ends there (c3's later leave is a rebalance of its own)."""
    coop = "cooperative-sticky"
    a1 = {"c1": "t-0 t-1", "c2": "t-2 t-3"}
    a2 = {"c1": "t-0", "c2": "t-2", "c3": ""}
    a3 = {"c1": "t-0", "c2": "t-2", "c3": "t-1 t-3"}
    revoke = "need to revoke partitions [{}] as indicated by the current assignment and re-join"

    def sync(ts, member, gen, assigned, revoked=""):
        attributes = {"revoked": revoked} if revoked else {}
        return ev(
            ts,
            "sync_response",
            generation_id=gen,
            member_id=member,
            partitions=assigned,
            attributes=attributes,
        )

    events = [
        ev(0, "join_response", generation_id=1, member_id="c1", protocol_name=coop, leader_id="c1"),
        ev(0, "join_response", generation_id=1, member_id="c2", protocol_name=coop, leader_id="c1"),
        ev(1, "assignment_computed", generation_id=1, member_id="c1", assignment=a1),
        sync(2, "c1", 1, "t-0 t-1"),
        ev(2, "partitions_assigned", member_id="c1", partitions="t-0 t-1"),
        sync(3, "c2", 1, "t-2 t-3"),
        ev(3, "partitions_assigned", member_id="c2", partitions="t-2 t-3"),
        ev(1000, "join_sent", client_id="c3", source="host3"),
        ev(1005, "join_requested", member_id="c1", reason="group is already rebalancing"),
        ev(1005, "join_requested", member_id="c2", reason="group is already rebalancing"),
        ev(1010, "join_response", generation_id=2, member_id="c1", protocol_name=coop, leader_id="c1"),
        ev(1010, "join_response", generation_id=2, member_id="c2", protocol_name=coop, leader_id="c1"),
        ev(1011, "assignment_computed", generation_id=2, member_id="c1", assignment=a2),
        ev(1012, "join_response", generation_id=2, member_id="c3", client_id="c3", source="host3"),
        sync(1020, "c1", 2, "t-0", revoked="t-1"),
        ev(1020, "partitions_revoked", member_id="c1", partitions="t-1"),
        sync(1021, "c3", 2, "", ""),
        ev(1022, "join_requested", member_id="c1", reason=revoke.format("t-1")),
        sync(1023, "c2", 2, "t-2", revoked="t-3"),
        ev(1023, "partitions_revoked", member_id="c2", partitions="t-3"),
        ev(1024, "join_requested", member_id="c2", reason=revoke.format("t-3")),
        ev(3000, "join_requested", member_id="c3", reason="group is already rebalancing"),
        ev(3010, "join_response", generation_id=3, member_id="c1", protocol_name=coop, leader_id="c1"),
        ev(3010, "join_response", generation_id=3, member_id="c2", protocol_name=coop, leader_id="c1"),
        ev(3011, "assignment_computed", generation_id=3, member_id="c1", assignment=a3),
        ev(3012, "join_response", generation_id=3, member_id="c3", protocol_name=coop, leader_id="c1"),
        sync(3020, "c1", 3, "t-0"),
        sync(3021, "c2", 3, "t-2"),
        sync(3022, "c3", 3, "t-1 t-3"),
        ev(3022, "partitions_assigned", member_id="c3", partitions="t-1 t-3"),
        # a later, unrelated rebalance: c3 leaves
        ev(60000, "leave_sent", member_id="c3", reason="the consumer is being closed"),
        ev(60005, "join_requested", member_id="c1", reason="group is already rebalancing"),
        ev(60005, "join_requested", member_id="c2", reason="group is already rebalancing"),
        ev(60010, "join_response", generation_id=4, member_id="c1", protocol_name=coop, leader_id="c1"),
        ev(60010, "join_response", generation_id=4, member_id="c2", protocol_name=coop, leader_id="c1"),
        ev(60011, "assignment_computed", generation_id=4, member_id="c1", assignment=a1),
        sync(60020, "c1", 4, "t-0 t-1"),
        ev(60020, "partitions_assigned", member_id="c1", partitions="t-1"),
        sync(60021, "c2", 4, "t-2 t-3"),
        ev(60021, "partitions_assigned", member_id="c2", partitions="t-3"),
    ]
    out = run(events)
    assert [g["generation_id"] for g in out["generations"]] == [1, 2, 3, 4]
    assert [g["members"] for g in out["generations"]][1] == ["c1", "c2", "c3"]
    episodes = out["rebalance_episodes"]
    assert [(e["rounds"], e["first_generation_id"], e["last_generation_id"]) for e in episodes] == [
        (1, 1, 1),
        (2, 2, 3),
        (1, 4, 4),
    ]


@pytest.mark.parametrize(
    "revoke_rejoin",
    [
        "need to revoke partitions [t-1] as indicated by the current assignment and re-join",  # 3.x
        "Need to revoke partitions [t-1] and re-join the group",  # 2.4-2.8
    ],
)
def test_a_partition_added_with_a_revocation_starts_at_its_assigned_callback_in_every_wording(revoke_rejoin):
    """ConsumerCoordinator.onJoinComplete (KIP-429): onPartitionsRevoked, then requestRejoin (logged in
    the era's wording), then onPartitionsAssigned ("Adding newly assigned partitions"): the added
    partition starts at that last line, not at the SyncGroup response (random:582, both-2.x)."""
    coop = "cooperative-sticky"
    events = [
        ev(0, "join_response", generation_id=1, member_id="c1", protocol_name=coop, leader_id="c1"),
        ev(0, "join_response", generation_id=1, member_id="c2", protocol_name=coop, leader_id="c1"),
        ev(1, "assignment_computed", generation_id=1, member_id="c1",
           assignment={"c1": "t-0 t-1", "c2": "t-2"}),
        ev(2, "sync_response", generation_id=1, member_id="c1", partitions="t-0 t-1"),
        ev(2, "partitions_assigned", member_id="c1", partitions="t-0 t-1"),
        ev(3, "sync_response", generation_id=1, member_id="c2", partitions="t-2"),
        ev(3, "partitions_assigned", member_id="c2", partitions="t-2"),
        ev(1000, "partitions_revoked", member_id="c2", partitions="t-2"),
        ev(1000, "leave_sent", member_id="c2", reason="the consumer is being closed"),
        ev(1005, "join_requested", member_id="c1", reason="group is already rebalancing"),
        ev(1010, "join_response", generation_id=2, member_id="c1", protocol_name=coop, leader_id="c1"),
        ev(1011, "assignment_computed", generation_id=2, member_id="c1", assignment={"c1": "t-0 t-2"}),
        ev(1020, "sync_response", generation_id=2, member_id="c1", partitions="t-0 t-2"),
        ev(1020, "partitions_revoked", member_id="c1", partitions="t-1"),
        ev(1022, "join_requested", member_id="c1", reason=revoke_rejoin),
        ev(1023, "partitions_assigned", member_id="c1", partitions="t-2"),
    ]  # fmt: skip
    out = run(events)
    (moved,) = [m for m in out["partition_movements"] if m["partition"] == 2]
    assert rel(moved, "from_member_id", "to_member_id", "revoked_at", "assigned_at") == (
        "c2",
        "c1",
        1000,
        1023,
    )
