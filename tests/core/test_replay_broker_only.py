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


C3 = "c3-78e51061-7311-48a3-82ce-6f447ed4d57b"


def _failed(ts, member):
    return scala_line(ts, f"Member {member} in group g1 has failed, removing it from the group")


def _two_members_then(lines_after: list[str]) -> list[str]:
    """c1 and c2 join an empty group (generation 1), then `lines_after`."""
    adding = "with group instance id None; client reason: not provided"
    return [
        _pending_join("10:00:00,000", C1, "Empty"),
        _prepare("10:00:00,010", 0, f"Adding new member {C1} {adding}"),
        _pending_join("10:00:01,000", C2, "PreparingRebalance"),  # joins the join phase: no Preparing
        _stabilized("10:00:03,010", 1, 2),
        _assignment("10:00:03,020", C1, 1, 2),
        *lines_after,
    ]


def test_pending_member_is_not_a_member_and_counts_once_it_rejoins_with_its_id():
    """KIP-394: c3's first JoinGroup lands while the group is CompletingRebalance; it only gets a member
    id (MEMBER_ID_REQUIRED), and "The group has 2 members" is right. Its second JoinGroup adds it and
    rebalances ("Adding new member c3"): generation 3 has 3 members and a full inferred assignment."""
    adding = "with group instance id None; client reason: not provided"
    lines = _two_members_then(
        [
            _prepare(
                "10:01:00,000", 1, f"Member {C2} joining group during Stable; client reason: metadata changed"
            ),
            _stabilized("10:01:00,100", 2, 2),
            _pending_join("10:01:00,150", C3, "CompletingRebalance"),
            _assignment("10:01:00,200", C1, 2, 2),
            _prepare("10:01:00,250", 2, f"Adding new member {C3} {adding}"),
            _stabilized("10:01:03,250", 3, 3),
            _assignment("10:01:03,300", C1, 3, 3),
            _failed("10:05:00,000", C2),
            _prepare("10:05:00,001", 3, f"removing member {C2} on heartbeat expiration"),
            _stabilized("10:05:00,100", 4, 2),
            _assignment("10:05:00,200", C1, 4, 2),
        ]
    )
    out = replay_log(lines, topics={"t": 6}, default_assignor="range")
    assert not out["anomalies"]
    gens = {g["generation_id"]: g for g in out["generations"]}
    assert [(n, g["member_count"], g["source"]) for n, g in sorted(gens.items())] == [
        (1, 2, "inferred"),
        (2, 2, "inferred"),
        (3, 3, "inferred"),
        (4, 2, "inferred"),
    ]
    assert gens[3]["members"] == sorted([C1, C2, C3])
    assigned = {(a["generation_id"], a["member_id"]) for a in out["assignments"]}
    assert {(3, C1), (3, C2), (3, C3), (4, C1), (4, C3)} <= assigned
    # range over t-0..t-5: {c1: 0-2, c2: 3-5} -> {c1: 0-1, c2: 2-3, c3: 4-5} moves 3 -> {c1: 0-2, c3: 3-5} moves 2
    (day,) = out["group_daily_summary"]
    assert day["partitions_moved"] == 3 + 2 and day["stw_ms"] > 0


def test_a_membership_the_model_cannot_match_is_resynchronised_by_the_next_stated_count():
    """A member whose JoinGroup no line shows (2.5-2.8 log KIP-394 joins at DEBUG; it joined during the join
    phase, so no Preparing names it) makes "with 3 members" unmatched: one anomaly, that generation's
    assignment is not inferred. When the group is back to the two members the model knows, the stated
    count resynchronises it and the later generations are measured again."""
    lines = _two_members_then(
        [
            _prepare(
                "10:01:00,000", 1, f"Member {C2} joining group during Stable; client reason: metadata changed"
            ),
            _stabilized("10:01:00,100", 2, 3),
            _assignment("10:01:00,200", C1, 2, 3),
            _failed("10:05:00,000", C3),
            _prepare("10:05:00,001", 2, f"removing member {C3} on heartbeat expiration"),
            _stabilized("10:05:00,100", 3, 2),
            _assignment("10:05:00,200", C1, 3, 2),
            _prepare(
                "10:06:00,000",
                3,
                f"Leader {C1} re-joining group during Stable; client reason: metadata changed",
            ),
            _stabilized("10:06:00,100", 4, 2),
            _assignment("10:06:00,200", C1, 4, 2),
        ]
    )
    out = replay_log(lines, topics={"t": 6}, default_assignor="range")
    assert [a["rule"] for a in out["anomalies"]] == ["member_count_mismatch"]
    gens = {g["generation_id"]: g for g in out["generations"]}
    assert [(n, g["member_count"], g["members"], g["source"]) for n, g in sorted(gens.items())] == [
        (1, 2, sorted([C1, C2]), "inferred"),
        (2, 3, None, "observed"),  # three members, one unnamed: no assignment to infer
        (3, 2, sorted([C1, C2]), "inferred"),
        (4, 2, sorted([C1, C2]), "inferred"),
    ]
    assert {a["generation_id"] for a in out["assignments"]} == {1, 3, 4}
    # eager range, same owners in generations 3 and 4: every partition is revoked and given back
    last = out["rebalance_episodes"][-1]
    assert (last["partitions_revoked"], last["revocations_wasted"], last["stw_ms"]) == (6, 6, 200)
