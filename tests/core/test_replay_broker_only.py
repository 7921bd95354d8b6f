"""Broker-only replays (the brokers' server.log and nothing else), written as Kafka's own log lines and
parsed by our parser: what the broker's view knows is exact, what it cannot know is null or flagged."""

from __future__ import annotations

import pytest

from tests.core.broker_log import episodes, replay_log, scala_line

C1 = "c1-0eec4c23-8ca2-4a89-becc-9a2b139de9f9"
C2 = "c2-5485febc-752b-4881-b106-5829a1889014"
OFFSETS = "(__consumer_offsets-12)"


def _prepare(ts, old_generation, reason):
    return scala_line(
        ts,
        f"Preparing to rebalance group g1 in state PreparingRebalance with old generation {old_generation} "
        f"{OFFSETS} (reason: {reason})",
    )


def _stabilized(ts, generation, members):
    return scala_line(ts, f"Stabilized group g1 generation {generation} {OFFSETS} with {members} members")


def _assignment(ts, leader, generation, members, static=0):
    return scala_line(
        ts,
        f"Assignment received from leader {leader} for group g1 for generation {generation}. The group has "
        f"{members} members, {static} of which are static.",
    )


def _pending_join(ts, member, state):
    return scala_line(
        ts,
        f"Dynamic member with unknown member id joins group g1 in {state} state. Created a new member id "
        f"{member} and request the member to rejoin with this id.",
    )


def _cooperative_join(follow_up_reason: str) -> list[str]:
    """c1 alone at generation 1; c2 joins. Round 1 (generation 2) withholds what c1 must give up, c1
    revokes it and rejoins (KIP-429): round 2 (generation 3) hands it to c2."""
    return [
        _pending_join("10:00:00,000", C1, "Empty"),
        _prepare(
            "10:00:00,010",
            0,
            f"Adding new member {C1} with group instance id None; client reason: not provided",
        ),
        _stabilized("10:00:03,010", 1, 1),
        _assignment("10:00:03,020", C1, 1, 1),
        _pending_join("10:00:10,000", C2, "Stable"),
        _prepare(
            "10:00:10,010",
            1,
            f"Adding new member {C2} with group instance id None; client reason: not provided",
        ),
        _stabilized("10:00:12,000", 2, 2),
        _assignment("10:00:12,010", C1, 2, 2),
        _prepare("10:00:12,050", 2, follow_up_reason),
        _stabilized("10:00:12,100", 3, 2),
        _assignment("10:00:12,110", C1, 3, 2),
    ]


@pytest.mark.parametrize(
    "follow_up_reason",
    [
        f"Leader {C1} re-joining group during Stable; client reason: need to revoke partitions and re-join",
        f"Leader {C1} re-joining group during Stable",  # 3.0-3.1: no client reason
    ],
)
def test_cooperative_follow_up_round_is_part_of_the_episode_when_only_the_default_assignor_says_cooperative(
    follow_up_reason,
):
    """ConsumerCoordinator.onJoinComplete (COOPERATIVE): a member that must revoke rejoins at once, and
    that JoinGroup round belongs to the rebalance that withheld the partitions. The broker's lines do not
    name the protocol; the configured default assignor is the group's (ReplaySettings.default_assignor)."""
    out = replay_log(
        _cooperative_join(follow_up_reason), topics={"t": 4}, default_assignor="cooperative-sticky"
    )
    assert episodes(out) == [(1, 1, 1), (2, 2, 3)]
    second = out["rebalance_episodes"][1]
    assert (second["rebalance_protocol"], second["stw_ms"], second["partitions_moved"]) == (
        "cooperative",
        0,
        2,
    )
    moves = [
        (m["topic"], m["partition"], m["from_member_id"], m["to_member_id"])
        for m in out["partition_movements"]
    ]
    assert moves == [("t", 2, C1, C2), ("t", 3, C1, C2)]
    assert {g["rebalance_protocol"] for g in out["generations"]} == {"cooperative"}
    assert not out["anomalies"]


def test_eager_default_assignor_keeps_every_round_its_own_rebalance():
    out = replay_log(
        _cooperative_join(f"Leader {C1} re-joining group during Stable"),
        topics={"t": 4},
        default_assignor="range",
    )
    assert episodes(out) == [(1, 1, 1), (1, 2, 2), (1, 3, 3)]
