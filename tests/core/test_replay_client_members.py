"""Consumers' logs alone (no broker line, issue 12): a generation's member list without the leader's
assignment line ("Finished assignment for group at generation N", ConsumerCoordinator.onLeaderElected).
The coordinator completes a join phase with every member whose JoinGroup reached it and answers them all
at once (GroupCoordinator.onCompleteJoin; ClassicGroup in 4.0), and each consumer logs the response naming
its generation (AbstractCoordinator.JoinGroupResponseHandler, "Successfully joined group with generation").
So the members whose responses name generation N (and the leader a response names) are the list when
every JoinGroup the logs show before N formed is answered or names one of them; a JoinGroup no line
answered (the process died or stalled after it), a static member (kept without rejoining), or a response
with no JoinGroup line before it leave the list null."""

from __future__ import annotations

import pytest

from rebalance_core.events import Event
from rebalance_core.kafka_logs.parser import parse_lines
from rebalance_core.replay import replay
from tests.builders import CONSUMER_COORDINATOR, consumer_line, generation_text
from tests.core.replay_helpers import ev, run


def line(client: str, at: str, message: str, logger: str = CONSUMER_COORDINATOR) -> str:
    return consumer_line(f"10:00:{at}", client, message, group="g", day="2024-01-01", logger=logger)


def first_join(client: str, at: str, again_at: str, member: str) -> list[str]:
    """A new consumer: its JoinGroup without a member id (MEMBER_ID_REQUIRED, KIP-394) and at once the one
    with the id it was given ("need to re-join with the given member-id", AbstractCoordinator 3.0+)."""
    return [
        line(client, at, "(Re-)joining group"),
        line(
            client,
            again_at,
            f"Request joining group due to: need to re-join with the given member-id: {member}",
        ),
        line(client, again_at, "(Re-)joining group"),
    ]


def joined(client: str, at: str, generation: int, member: str) -> list[str]:
    gen = generation_text(generation, member)
    return [line(client, at, f"Successfully joined group with generation {gen}")]


def synced(client: str, at: str, generation: int, member: str, partitions: str) -> list[str]:
    gen = generation_text(generation, member)
    return [
        line(client, at, f"Successfully synced group in generation {gen}"),
        line(client, at, f"Notifying assignor about the new Assignment(partitions=[{partitions}])"),
        line(client, at, f"Adding newly assigned partitions: {partitions}"),
    ]


def generations(lines: list[str]) -> dict[int, list[str] | None]:
    parsed = parse_lines(lines, file="consumers.log", cluster="k")
    assert not parsed.quarantine
    out = replay(parsed.events)
    return {g["generation_id"]: g["members"] for g in out["generations"]}


def test_every_joingroup_answered_states_the_members_without_the_leaders_assignment():
    """c1 and c2 each log the JoinGroup and the response naming generation 1; no assignment line (the
    leader died between its JoinGroup response and its SyncGroup). No other JoinGroup was sent: the two
    are the generation (GroupCoordinator.onCompleteJoin answers every member at once)."""
    lines = [
        *first_join("c1", "00,000", "00,010", "c1-a"),
        *first_join("c2", "00,005", "00,015", "c2-a"),
        *joined("c1", "03,010", 1, "c1-a"),
        *joined("c2", "03,011", 1, "c2-a"),
        *synced("c2", "03,030", 1, "c2-a", "t-1"),
    ]
    assert generations(lines)[1] == ["c1-a", "c2-a"]


def test_a_joingroup_no_line_answered_leaves_the_members_unknown():
    """c3 sends its JoinGroup well before generation 1 forms and its log shows nothing after it (the
    process died): the coordinator counted it, and no line of the generation names it."""
    lines = [
        *first_join("c1", "00,000", "00,010", "c1-a"),
        *first_join("c2", "00,005", "00,015", "c2-a"),
        *first_join("c3", "00,020", "00,030", "c3-a"),
        *joined("c1", "03,010", 1, "c1-a"),
        *joined("c2", "03,011", 1, "c2-a"),
        *synced("c2", "03,030", 1, "c2-a", "t-1"),
    ]
    assert generations(lines)[1] is None


def test_a_restarted_process_leaves_its_earlier_joingroup_unanswered():
    """c2's first process sends its JoinGroup and dies; a new process of the same client joins (a
    JoinGroup without an id: a new member, KIP-394) and gets generation 1. The first member's JoinGroup
    reached the coordinator before the phase completed: it is in generation 1 too, named by no line."""
    lines = [
        *first_join("c1", "00,000", "00,010", "c1-a"),
        *first_join("c2", "00,005", "00,015", "c2-a"),
        *first_join("c2", "01,000", "01,010", "c2-b"),
        *joined("c1", "03,010", 1, "c1-a"),
        *joined("c2", "03,011", 1, "c2-b"),
        *synced("c2", "03,030", 1, "c2-b", "t-1"),
    ]
    assert generations(lines)[1] is None


def dead_leader_named_by_c1(*c2_joins: Event) -> list[Event]:
    """c1 joins and its JoinGroup response names c2-a the leader; `c2_joins`: what c2's log shows (its
    JoinGroups, no response: it died after them)."""
    return [
        ev(0, "join_sent", client_id="c1", source="h1"),
        ev(10, "join_sent", member_id="c1-a", client_id="c1", source="h1"),
        *c2_joins,
        ev(
            3010,
            "join_response",
            generation_id=1,
            member_id="c1-a",
            client_id="c1",
            source="h1",
            protocol_name="range",
            leader_id="c2-a",
        ),
    ]


C2_IDLESS_JOIN = ev(5, "join_sent", client_id="c2", source="h2")
C2_JOIN_WITH_ID = ev(15, "join_sent", member_id="c2-a", client_id="c2", source="h2")


@pytest.mark.parametrize(
    "c2_joins",
    [(C2_IDLESS_JOIN, C2_JOIN_WITH_ID), (C2_IDLESS_JOIN,)],
    ids=["its-lines-name-its-id", "its-lines-name-no-id"],
)
def test_a_dead_leader_named_by_the_responses_completes_the_members(c2_joins):
    """Canonical member events: c2 dies after its JoinGroup (no response); c1's JoinGroup response names
    c2-a the leader (JoinGroupResponse.leader), a member of the generation. Whether c2's log shows the id
    it was given or only its idless JoinGroup (one member: that JoinGroup may be c2-a's), every JoinGroup
    is accounted for, and c1-a and c2-a are the generation."""
    rows = {
        g["generation_id"]: (g["members"], g["leader_member_id"])
        for g in run(dead_leader_named_by_c1(*c2_joins))["generations"]
    }
    assert rows[1] == (["c1-a", "c2-a"], "c2-a")


def test_a_static_member_that_did_not_rejoin_may_be_in_the_generation():
    """KIP-345: the completion of a join phase removes only the dynamic members that did not rejoin
    (GroupCoordinator.onCompleteJoin); a static member's place stays until its session expires, and its
    JoinGroup in a Stable group gets the generation back without a rebalance. With static members in
    the logs, the members that logged the generation are not the list."""
    events = [
        ev(0, "join_sent", client_id="c1", source="h1", group_instance_id="i1"),
        ev(
            10,
            "join_response",
            generation_id=1,
            member_id="i1-a",
            client_id="c1",
            source="h1",
            group_instance_id="i1",
            protocol_name="range",
            leader_id="i1-a",
        ),
    ]
    assert run(events)["generations"][0]["members"] is None


def test_an_idless_joingroup_counts_as_the_named_leader_only_one_for_one():
    """A JoinGroup whose lines name no id is one member: c2's idless JoinGroup may be the leader c2-a's
    (test above), but a second such JoinGroup (c3) is a member no line names: the list is not known."""
    extra = ev(7, "join_sent", client_id="c3", source="h3")
    assert run(dead_leader_named_by_c1(C2_IDLESS_JOIN, extra))["generations"][0]["members"] is None


def test_a_dead_predecessors_joingroup_is_not_named_by_the_live_members_rejoin():
    """c2's first process sends its idless JoinGroup and dies; a new process of c2 joins as c2-b and gets
    generation 1, whose SyncGroup fails (the next rebalance began), so c2-b rejoins with its id before
    generation 1 ends. That rejoin answers nothing of the dead process: its JoinGroup reached the
    coordinator before the phase completed and keeps its place until its rejoin deadline
    (GroupCoordinator.onCompleteJoin), a member no line of generation 1 names."""
    c1 = {"client_id": "c1", "source": "h1"}
    c2 = {"client_id": "c2", "source": "h2"}
    events = [
        ev(0, "join_sent", **c1),
        ev(10, "join_sent", member_id="c1-a", **c1),
        ev(5, "join_sent", **c2),  # the first process: no response, no id its lines name
        ev(1000, "join_sent", **c2),  # the new process's first JoinGroup (no id: KIP-394)
        ev(1010, "join_sent", member_id="c2-b", **c2),
        ev(3010, "join_response", generation_id=1, member_id="c1-a", protocol_name="range", **c1),
        ev(3011, "join_response", generation_id=1, member_id="c2-b", protocol_name="range", **c2),
        ev(3020, "join_sent", member_id="c1-a", **c1),
        ev(3021, "join_sent", member_id="c2-b", **c2),
        ev(3030, "join_response", generation_id=2, member_id="c1-a", protocol_name="range", **c1),
        ev(3031, "join_response", generation_id=2, member_id="c2-b", protocol_name="range", **c2),
    ]
    rows = {g["generation_id"]: g["members"] for g in run(events)["generations"]}
    # generation 2's join phase removed the dead member that never rejoined (onCompleteJoin)
    assert rows == {1: None, 2: ["c1-a", "c2-b"]}


def test_consumers_sharing_a_client_id_in_one_file_do_not_answer_each_others_joingroup():
    """Two consumers of one JVM with one explicit client.id "c" write to one file (one process key): c-a
    sends its JoinGroups and dies; c-b joins and gets generation 1, then rejoins with its own id. c-b's
    answered JoinGroup marks c-a's unanswered one superseded, which only keeps c-b's later lines off it
    (its rejoin carries c-b, not c-a): c-a's JoinGroup still counts, a member no line of generation 1
    names, so the list is unknown, not stated without it."""
    lines = [
        *first_join("c1", "00,000", "00,010", "c1-a"),
        *first_join("c", "00,005", "00,015", "c-a"),
        *first_join("c", "01,000", "01,010", "c-b"),
        *joined("c1", "03,010", 1, "c1-a"),
        *joined("c", "03,011", 1, "c-b"),
        *synced("c", "03,030", 1, "c-b", "t-1"),
    ]
    assert generations(lines)[1] is None
