"""Both views (the brokers' server.log and the members' own logs, merged): what one side leaves unnamed,
the other side's lines name."""

from __future__ import annotations

from tests.builders import (
    assignment_received,
    consumer_line,
    generation_text,
    pending_join,
    prepare_rebalance,
    stabilized,
)
from tests.core.broker_log import replay_log

C1 = "c1-0eec4c23-8ca2-4a89-becc-9a2b139de9f9"
C2 = "c2-5485febc-752b-4881-b106-5829a1889014"
C3 = "c3-78e51061-7311-48a3-82ce-6f447ed4d57b"
C4 = "c4-2b1d0e6f-58a4-4c8e-9d51-7e0f3c6a1b92"


def _prepare(ts, old_generation, member):
    return prepare_rebalance(ts, old_generation, f"Adding new member {member} with group instance id None")


def test_a_leaders_assignment_for_an_interrupted_generation_names_its_members_and_leader():
    """2.x: c2 and c3 are pending (KIP-394) when c1 opens the join phase; one of them rejoins unlogged
    and generation 1 has 2 members, which one the broker's lines do not say. c4's join interrupts it in
    CompletingRebalance before any assignment line. c1's "Finished
    assignment for group at generation 1", logged after, lists every member of the generation and is the
    leader's (AbstractCoordinator.onJoinLeader, ConsumerCoordinator.onLeaderElected assigns each member):
    generation 1 is [c1, c2] led by c1, although SyncGroup refuses that assignment."""
    lines = [
        _prepare("10:00:00,010", 0, C1),
        pending_join("10:00:00,020", C2, "PreparingRebalance"),
        pending_join("10:00:00,030", C3, "PreparingRebalance"),
        stabilized("10:00:03,010", 1, 2),
        pending_join("10:00:03,011", C4, "CompletingRebalance"),
        _prepare("10:00:03,012", 1, C4),
        consumer_line(
            "10:00:03,020",
            "c1",
            f"Finished assignment for group at generation 1: {{{C1}=Assignment(partitions=[t-0]), "
            f"{C2}=Assignment(partitions=[t-1])}}",
        ),
        stabilized("10:00:06,000", 2, 4),
        assignment_received("10:00:06,020", None, 2, 4),
    ]
    out = replay_log(lines, topics={"t": 3}, default_assignor="range")
    assert [(g["generation_id"], g["members"], g["leader_member_id"]) for g in out["generations"]][0] == (
        1,
        sorted([C1, C2]),
        C1,
    )


def _joined(ts: str, client: str, member: str, generation: int) -> str:
    return consumer_line(
        ts,
        client,
        f"Successfully joined group with generation {generation_text(generation, member)}",
        logger="org.apache.kafka.clients.consumer.internals.AbstractCoordinator",
    )


def _c1_and_an_unnamed_member_form_generation_1(joined_lines: list[str]) -> dict:
    """2.x: the broker names c1 only ("Adding new member"; KIP-394 first JoinGroups are DEBUG) and
    counts 2 members; the members' own "Successfully joined" lines follow."""
    lines = [
        _prepare("10:00:00,010", 0, C1),
        stabilized("10:00:03,010", 1, 2),
        *joined_lines,
        assignment_received("10:00:03,040", None, 1, 2),
    ]
    return replay_log(lines, topics={"t": 2}, default_assignor="range")


def test_members_whose_join_responses_name_the_generation_make_up_its_stated_count():
    """The coordinator answers every member of a generation at the join's completion
    (GroupCoordinator.onCompleteJoin): c1's and c2's "Successfully joined group with generation 1" are
    two members of it, and the broker counts 2: generation 1 is [c1, c2]."""
    out = _c1_and_an_unnamed_member_form_generation_1(
        [_joined("10:00:03,020", "c1", C1, 1), _joined("10:00:03,021", "c2", C2, 1)]
    )
    assert [(g["generation_id"], g["members"]) for g in out["generations"]] == [(1, sorted([C1, C2]))]


def test_fewer_join_responses_than_the_stated_count_leave_the_members_unknown():
    """Only c1's log is there: the second member no line names (null, not a guess)."""
    out = _c1_and_an_unnamed_member_form_generation_1([_joined("10:00:03,020", "c1", C1, 1)])
    assert [(g["generation_id"], g["members"]) for g in out["generations"]] == [(1, None)]


def test_the_member_whose_join_opened_the_round_counts_with_the_join_responses():
    """c1's own log is missing, but its "Adding new member" opened the round and no line removed it
    before the join completed: it is in generation 1 with c2, whose response names it; 2 of 2."""
    out = _c1_and_an_unnamed_member_form_generation_1([_joined("10:00:03,021", "c2", C2, 1)])
    assert [(g["generation_id"], g["members"]) for g in out["generations"]] == [(1, sorted([C1, C2]))]
