"""Both views: a stop-the-world that begins at a stop no line shows (a member that died silently, known only
from the coordinator's session expiry) is a lower bound, and its episode says `inferred`."""

from __future__ import annotations

from tests.builders import (
    OFFSETS,
    assignment_received,
    consumer_line,
    generation_text,
    pending_join,
    prepare_rebalance,
    scala_line,
    stabilized,
)
from tests.core.broker_log import replay_log

C1 = "c1-0eec4c23-8ca2-4a89-becc-9a2b139de9f9"
C2 = "c2-5485febc-752b-4881-b106-5829a1889014"
C3 = "c3-78e51061-7311-48a3-82ce-6f447ed4d57b"


def _generation_1() -> list[str]:
    """c1, c2, c3 each consume one partition of t from 10:00:03."""
    lines = [
        prepare_rebalance(
            "10:00:00,000",
            0,
            f"Adding new member {C1} with group instance id None; client reason: not provided",
        ),
        stabilized("10:00:03,000", 1, 3),
    ]
    for i, member in enumerate((C1, C2, C3)):
        client = member[:2]
        lines.append(
            consumer_line(
                f"10:00:03,01{i}",
                client,
                f"Successfully joined group with generation {generation_text(1, member)}",
            )
        )
    lines.append(
        consumer_line(
            "10:00:03,020",
            "c1",
            f"Finished assignment for group at generation 1: {{{C1}=Assignment(partitions=[t-0]), "
            f"{C2}=Assignment(partitions=[t-1]), {C3}=Assignment(partitions=[t-2])}}",
        )
    )
    lines.append(assignment_received("10:00:03,030", C1, 1, 3))
    for i, member in enumerate((C1, C2, C3)):
        client = member[:2]
        lines += [
            consumer_line(
                f"10:00:03,04{i}",
                client,
                f"Successfully synced group in generation {generation_text(1, member)}",
            ),
            consumer_line(f"10:00:03,04{i}", client, f"Adding newly assigned partitions: t-{i}"),
        ]
    return lines


C3_AGAIN = "c3-12b9619d-3b68-4532-a200-06777e4688fe"


def _failed(ts: str, member: str, preparing: bool) -> list[str]:
    lines = [scala_line(ts, f"Member {member} in group g1 has failed, removing it from the group")]
    if preparing:
        lines.append(
            scala_line(
                ts,
                f"Preparing to rebalance group g1 in state PreparingRebalance with old generation 1 {OFFSETS} "
                f"(reason: removing member {member} on heartbeat expiration)",
            )
        )
    return lines


def _c3_rejoins_and_restarts_first(at: str) -> list[str]:
    """c3's new process joins as a new member and leads generation 2, whose other member c1 stays silent;
    c3 starts t-2 at `at`: the first start since the group stopped as a whole."""
    return [
        consumer_line("10:01:22,500", "c3", "(Re-)joining group"),
        pending_join("10:01:22,520", C3_AGAIN, "PreparingRebalance"),
        stabilized("10:05:07,500", 2, 2),
        consumer_line(
            "10:05:07,520", "c3", f"Successfully joined group with generation {generation_text(2, C3_AGAIN)}"
        ),
        consumer_line(
            "10:05:07,523",
            "c3",
            f"Finished assignment for group at generation 2: {{{C1}=Assignment(partitions=[t-0, t-1]), "
            f"{C3_AGAIN}=Assignment(partitions=[t-2])}}",
        ),
        assignment_received("10:05:07,532", C3_AGAIN, 2, 2),
        consumer_line(
            "10:05:07,542", "c3", f"Successfully synced group in generation {generation_text(2, C3_AGAIN)}"
        ),
        consumer_line(at, "c3", "Adding newly assigned partitions: t-2"),
    ]


def _c1_removed_then_c3_takes_all() -> list[str]:
    """Generation 3: c1 (silent since) is removed on its session expiry and c3 takes every partition (the
    partitions generation 2 left unconsumed restart here, in the next episode)."""
    return [
        *_failed("10:05:52,501", C1, preparing=False),
        prepare_rebalance("10:05:52,501", 2, f"removing member {C1} on heartbeat expiration"),
        consumer_line("10:05:52,521", "c3", "Request joining group due to: group is already rebalancing"),
        consumer_line("10:05:52,521", "c3", "Revoke previously assigned partitions t-2"),
        stabilized("10:05:52,544", 3, 1),
        consumer_line(
            "10:05:52,564", "c3", f"Successfully joined group with generation {generation_text(3, C3_AGAIN)}"
        ),
        consumer_line(
            "10:05:52,566",
            "c3",
            f"Finished assignment for group at generation 3: {{{C3_AGAIN}=Assignment(partitions=[t-0, t-1, t-2])}}",
        ),
        assignment_received("10:05:52,575", C3_AGAIN, 3, 1),
        consumer_line(
            "10:05:52,585", "c3", f"Successfully synced group in generation {generation_text(3, C3_AGAIN)}"
        ),
        consumer_line("10:05:52,585", "c3", "Adding newly assigned partitions: t-0, t-1, t-2"),
    ]


def _stw_episode(out: dict[str, list[dict]]) -> dict:
    (episode,) = [e for e in out["rebalance_episodes"] if e["first_generation_id"] == 2]
    return episode


def test_stop_the_world_from_a_silent_members_session_expiry_is_inferred():
    """c3 stops t-2 and dies; the coordinator removes it on its session expiry (GroupCoordinator.onExpireHeartbeat:
    "has failed, removing it from the group") and prepares a rebalance; c1 revokes t-0 on its rejoin
    (ConsumerCoordinator.onJoinPrepare); c2 died silently (its own log just ends) and is removed on its session
    expiry after that. c2 stopped consuming t-1 at its death, session.timeout.ms or more before its removal,
    which no line states: the group stopped as a whole at c2's removal at the latest. The stop-the-world counted
    from there to c3's start of t-2 (in this episode, while t-1 restarts in none) is a lower bound: the episode is
    `inferred`, not observed."""
    lines = [
        *_generation_1(),
        consumer_line("10:00:22,501", "c3", "Revoke previously assigned partitions t-2"),
        *_failed("10:01:07,500", C3, preparing=True),
        consumer_line("10:01:21,040", "c1", "Request joining group due to: group is already rebalancing"),
        consumer_line("10:01:21,040", "c1", "Revoke previously assigned partitions t-0"),
        *_failed("10:01:36,500", C2, preparing=False),
        *_c3_rejoins_and_restarts_first("10:05:07,542"),
        *_c1_removed_then_c3_takes_all(),
    ]
    episode = _stw_episode(replay_log(lines))
    assert episode["stw_ms"] == 211_042  # from c2's removal to c3's start: the least it can be
    assert episode["source"] == "inferred"


def test_stop_the_world_from_a_logged_revocation_after_the_last_expiry_stays_observed():
    """The same, but c1 revokes after c2's removal: the latest stop is one c1's own line shows, and a silent
    member's true stop can only be earlier than its removal, so the group stopped as a whole exactly at c1's
    revocation: the stop-the-world is exact."""
    lines = [
        *_generation_1(),
        consumer_line("10:00:22,501", "c3", "Revoke previously assigned partitions t-2"),
        *_failed("10:01:07,500", C3, preparing=True),
        *_failed("10:01:16,500", C2, preparing=False),
        consumer_line("10:01:21,040", "c1", "Request joining group due to: group is already rebalancing"),
        consumer_line("10:01:21,040", "c1", "Revoke previously assigned partitions t-0"),
        *_c3_rejoins_and_restarts_first("10:05:07,542"),
        *_c1_removed_then_c3_takes_all(),
    ]
    episode = _stw_episode(replay_log(lines))
    assert episode["stw_ms"] == 226_502  # from c1's revocation to c3's start
    assert episode["source"] == "observed"
