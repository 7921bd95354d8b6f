"""Kafka Connect workers' logs alone (no broker line, issue 12): a worker that dies, stalls or leaves after
its JoinGroup reached the coordinator, before any response reached it, is in the generation that join
phase completes (GroupCoordinator.onCompleteJoin: every member that joined; ClassicGroup in 4.0), and no
line names it: the leader logs no assignment (IncrementalCooperativeAssignor logs at DEBUG) and the worker
logs the member id the coordinator gave it only at DEBUG (WorkerCoordinator.requestRejoin overrides
AbstractCoordinator's INFO "Request joining group due to: need to re-join with the given member-id").
The generation's member list is then null, never the confident list of the workers that logged it."""

from __future__ import annotations

from rebalance_core.kafka_logs.parser import parse_lines
from tests.builders import WORKER_REJOINS, worker_joined, worker_line
from tests.core.broker_log import replay_worker_logs


def line(worker: str, at: str, message: str) -> str:
    return worker_line(f"10:00:{at}", worker, message)


def first_join(worker: str, at: str, again_at: str) -> list[str]:
    """A new worker process: "Rebalance started" (WorkerCoordinator.onJoinPrepare), its JoinGroup without
    a member id (MEMBER_ID_REQUIRED, KIP-394) and at once the one with the id it was given."""
    return [
        line(worker, at, "Rebalance started"),
        line(worker, at, "(Re-)joining group"),
        line(worker, again_at, "(Re-)joining group"),
    ]


def joined(worker: str, at: str, generation: int, member: str, leader: str) -> list[str]:
    return [line(worker, at, m) for m in worker_joined(generation, member, leader, "http://w1:8083/")]


def rejoin(worker: str, at: str) -> list[str]:
    return [line(worker, at, m) for m in WORKER_REJOINS]


def leave(worker: str, at: str, member: str) -> list[str]:
    return [
        line(
            worker,
            at,
            f"Member {member} sending LeaveGroup request to coordinator kafka-1:9092 (id: 2147483646 "
            "rack: null) due to the consumer is being closed",
        ),
        line(
            worker, at, "Resetting generation and member id due to: consumer pro-actively leaving the group"
        ),
    ]


def members(out) -> dict[int, list[str] | None]:
    return {g["generation_id"]: g["members"] for g in out["generations"]}


def test_a_new_worker_that_dies_after_its_second_join_group_makes_the_generations_members_unknown():
    """w2's second JoinGroup (10:00:01,020) reached the coordinator a second before generation 1 formed;
    w2 died without a line: generation 1 has two members, only w1 logged it. Null, not [w1]. w1's next
    join phase removes w2 (it never rejoins): generation 2 is w1's alone, exact again."""
    out = replay_worker_logs(
        {
            "w1": [*first_join("w1", "00,000", "00,020"), *joined("w1", "02,000", 1, "w1-a", "w1-a")]
            + [*rejoin("w1", "40,000"), *joined("w1", "45,000", 2, "w1-a", "w1-a")],
            "w2": first_join("w2", "01,000", "01,020"),
        }
    )
    assert members(out) == {1: None, 2: ["w1-a"]}
    assert {g["generation_id"]: g["member_count"] for g in out["generations"]} == {1: None, 2: 1}


def test_a_new_worker_whose_join_group_came_after_the_generation_formed_leaves_its_members_known():
    """w2's JoinGroup was sent after generation 1's response reached w1: it cannot be in it."""
    out = replay_worker_logs(
        {
            "w1": [*first_join("w1", "00,000", "00,020"), *joined("w1", "02,000", 1, "w1-a", "w1-a")],
            "w2": first_join("w2", "03,000", "03,020"),
        }
    )
    assert members(out)[1] == ["w1-a"]


def test_a_new_worker_leaving_before_its_join_group_response_may_be_in_a_generation_formed_meanwhile():
    """w2 closes (LeaveGroup naming its id, AbstractCoordinator.maybeLeaveGroup) 4 ms before w1's response
    names generation 1: its LeaveGroup, a round trip (20 ms) on the way, may arrive after the join phase
    completed with w2 in it. Null. Generation 2, formed long after the leave arrived, is exact."""
    out = replay_worker_logs(
        {
            "w1": [*first_join("w1", "00,000", "00,020"), *joined("w1", "10,004", 1, "w1-a", "w1-a")]
            + [*rejoin("w1", "40,000"), *joined("w1", "45,000", 2, "w1-a", "w1-a")],
            "w2": [*first_join("w2", "01,000", "01,020"), *leave("w2", "10,000", "w2-x")],
        }
    )
    assert members(out) == {1: None, 2: ["w1-a"]}


def test_a_replaced_worker_process_whose_member_id_no_line_named_is_still_counted():
    """w2's first process dies right after its second JoinGroup; a new process of w2 joins 30 s later
    and gets its id. The first process's member (no line names it) is in generation 1, formed before the
    new process joined: null. The new process's second JoinGroup, not the first, carries the id the
    response names (KIP-394)."""
    out = replay_worker_logs(
        {
            "w1": [*first_join("w1", "00,000", "00,020"), *joined("w1", "05,000", 1, "w1-a", "w1-a")]
            + [*rejoin("w1", "31,000"), *joined("w1", "36,000", 2, "w1-a", "w1-a")],
            "w2": [*first_join("w2", "01,000", "01,020"), *first_join("w2", "30,000", "30,020")]
            + joined("w2", "36,000", 2, "w2-b", "w1-a"),
        }
    )
    assert members(out) == {1: None, 2: ["w1-a", "w2-b"]}


def test_kip394_join_group_pair_the_member_id_of_a_later_line_goes_to_the_second():
    """Parser: of a worker's two JoinGroup lines with none between, the first carried no member id (and
    neither did the "Rebalance started" before it), even when the client had an id before (a crashed
    process's: the new process does not have it); the id its response names is the second's."""
    lines = [
        *first_join("w1", "00,000", "00,020"),
        *joined("w1", "02,000", 1, "w1-a", "w1-a"),
        *first_join("w1", "30,000", "30,020"),  # a new process: the old one crashed without a line
        *joined("w1", "35,000", 2, "w1-b", "w1-b"),
    ]
    events = parse_lines(lines, file="w1/connect.log", cluster="c1").events
    joins = [(e.event_type, e.member_id) for e in events if e.event_type in ("join_requested", "join_sent")]
    assert joins == [
        ("join_requested", None),
        ("join_sent", None),
        ("join_sent", "w1-a"),
        ("join_requested", None),
        ("join_sent", None),
        ("join_sent", "w1-b"),
    ]
