"""Consumers' logs alone (no broker line, issue 12): a classic generation's assignment. Each consumer logs
only its own partitions, once its SyncGroup response arrives (ConsumerCoordinator.onJoinComplete:
"Notifying assignor about the new Assignment(partitions=[...])", "Adding newly assigned partitions: ...");
the leader's "Finished assignment for group at generation N: {...}" (ConsumerCoordinator.onLeaderElected,
INFO 2.4+) names everyone's. The leader assigns every member of the JoinGroup response and the coordinator
stores it (GroupCoordinator.setAndPropagateAssignment), synced or not: a member of the generation whose
log states no assignment for it leaves the generation's assignment `inferred`, not a confident partial one."""

from __future__ import annotations

import pytest

from rebalance_core.kafka_logs.parser import parse_lines
from rebalance_core.replay import replay
from rebalance_core.replay_common import ReplaySettings
from tests.core.test_replay_client_members import first_join, joined, line, synced


def replayed(lines: list[str], topics: dict[str, int] | None = None) -> dict:
    parsed = parse_lines(lines, file="consumers.log", cluster="k")
    assert not parsed.quarantine
    return replay(parsed.events, ReplaySettings(topics=dict(topics or {})))


def assignment(out: dict, generation: int) -> tuple[dict[str, list[str]], set[str]]:
    """The generation's partitions per member, and the sources of its generation and assignment rows."""
    rows = [a for a in out["assignments"] if a["generation_id"] == generation]
    [row] = [g for g in out["generations"] if g["generation_id"] == generation]
    partitions: dict[str, list[str]] = {}
    for a in rows:
        partitions.setdefault(a["member_id"], []).append(f"{a['topic']}-{a['partition']}")
    return partitions, {row["source"]} | {a["source"] for a in rows}


JOINED_GENERATION_1 = [
    *first_join("c1", "00,000", "00,010", "c1-a"),
    *first_join("c2", "00,005", "00,015", "c2-a"),
    *joined("c1", "03,010", 1, "c1-a"),
    *joined("c2", "03,011", 1, "c2-a"),
]


def test_each_members_own_assignment_lines_state_the_generations_assignment():
    """Both members log their SyncGroup response and partitions, no leader's line, and they hold every
    partition of t, which has more partitions than members (a third member would have got one: range
    assigns floor(3 / 3) each): observed, exact."""
    out = replayed(
        [
            *JOINED_GENERATION_1,
            *synced("c1", "03,030", 1, "c1-a", "t-0, t-1"),
            *synced("c2", "03,031", 1, "c2-a", "t-2"),
        ],
        topics={"t": 3},
    )
    assert assignment(out, 1) == ({"c1-a": ["t-0", "t-1"], "c2-a": ["t-2"]}, {"observed"})


@pytest.mark.parametrize(
    "topics",
    [
        pytest.param(None, id="partition counts unknown"),
        pytest.param({"t": 4}, id="a partition no logged member holds"),
        pytest.param({"t": 3, "u": 2}, id="a topic no more partitions than members"),
    ],
)
def test_a_member_whose_log_is_not_in_the_input_may_be_in_the_generation(topics):
    """The same lines, but the logged members' assignments do not rule out a third consumer whose log was
    not collected: a partition count unknown, one of t's partitions no line assigns (the hidden member's),
    or a topic of two partitions (range could leave a third member empty: floor(2 / 3) = 0). The list is
    the logged members', the generation `inferred` (members still stated: the best the logs give)."""
    out = replayed(
        [
            *JOINED_GENERATION_1,
            *synced("c1", "03,030", 1, "c1-a", "t-0, t-1"),
            *synced("c2", "03,031", 1, "c2-a", "t-2"),
        ],
        topics=topics,
    )
    [generation] = out["generations"]
    assert (generation["members"], generation["source"]) == (["c1-a", "c2-a"], "inferred")


def test_a_member_that_logged_no_assignment_for_its_generation_leaves_it_inferred():
    """c1 is in generation 1 (its JoinGroup response names it) and logs nothing after it (it died before
    its SyncGroup): the leader still assigned it partitions, which no line states."""
    out = replayed([*JOINED_GENERATION_1, *synced("c2", "03,031", 1, "c2-a", "t-1")])
    assert assignment(out, 1) == ({"c2-a": ["t-1"]}, {"observed", "inferred"})
    [generation] = out["generations"]
    assert (generation["members"], generation["source"]) == (["c1-a", "c2-a"], "inferred")


def test_the_leaders_assignment_line_states_a_silent_members_partitions():
    """The same, with the leader's (c2's) "Finished assignment for group at generation 1": it names c1's
    partitions too, so the generation's assignment is observed, exact."""
    leader_line = line(
        "c2",
        "03,020",
        "Finished assignment for group at generation 1: "
        "{c1-a=Assignment(partitions=[t-0]), c2-a=Assignment(partitions=[t-1])}",
    )
    out = replayed([*JOINED_GENERATION_1, leader_line, *synced("c2", "03,031", 1, "c2-a", "t-1")])
    assert assignment(out, 1) == ({"c1-a": ["t-0"], "c2-a": ["t-1"]}, {"observed"})
