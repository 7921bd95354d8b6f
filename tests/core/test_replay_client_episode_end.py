"""Consumers' logs alone (no broker line, issue 12): when a rebalance episode ends. It ends once its last
round is Stable and every member with its own log applied that round's assignment (docs/metrics.md,
Episode); a member whose log shows a JoinGroup and nothing after (it died) is waited for only while it
may be a member of that round."""

from __future__ import annotations

from rebalance_core.kafka_logs.parser import parse_lines
from rebalance_core.replay import replay
from tests.core.test_replay_client_members import first_join, joined, line, synced


def assigned(client: str, at: str, generation: int, assignment: dict[str, str]) -> list[str]:
    listed = ", ".join(f"{m}=Assignment(partitions=[{p}])" for m, p in assignment.items())
    return [line(client, at, f"Finished assignment for group at generation {generation}: {{{listed}}}")]


def test_an_episode_ends_without_waiting_for_a_dead_joiner_its_generation_does_not_list():
    """c1 leaves the group empty; c5 joins alone and dies after its JoinGroup: generation 2 is c5's, and no
    line shows it. The coordinator removes c5 when its session expires (its JoinGroup was answered in
    generation 2, GroupCoordinator.onCompleteJoin), before c2 forms generation 3. Generation 4's episode
    ends once its listed members applied their assignment: t-1 moved from c2 to c4, and c4's later
    revocation and LeaveGroup belong to the next episode, not undoing that move."""
    invoker = "org.apache.kafka.clients.consumer.internals.ConsumerRebalanceListenerInvoker"

    def revoke(client: str, at: str, partitions: str) -> str:
        return line(client, at, f"Revoke previously assigned partitions {partitions}", logger=invoker)

    def leave(client: str, at: str, member: str) -> str:
        return line(
            client,
            at,
            f"Member {member} sending LeaveGroup request to coordinator kafka-1:9092 (id: 2147483646 "
            "rack: null) due to the consumer is being closed",
        )

    lines = [
        *first_join("c1", "00,000", "00,010", "c1-a"),
        *joined("c1", "03,010", 1, "c1-a"),
        *assigned("c1", "03,012", 1, {"c1-a": "t-0, t-1"}),
        *synced("c1", "03,030", 1, "c1-a", "t-0, t-1"),
        revoke("c1", "05,000", "t-0, t-1"),
        leave("c1", "05,000", "c1-a"),
        *first_join("c5", "06,000", "06,010", "c5-a"),
        *first_join("c2", "20,000", "20,010", "c2-a"),
        *joined("c2", "23,010", 3, "c2-a"),
        *assigned("c2", "23,012", 3, {"c2-a": "t-0, t-1"}),
        *synced("c2", "23,030", 3, "c2-a", "t-0, t-1"),
        *first_join("c4", "30,000", "30,010", "c4-a"),
        line("c2", "31,000", "Request joining group due to: group is already rebalancing"),
        revoke("c2", "31,000", "t-0, t-1"),
        line("c2", "31,000", "(Re-)joining group"),
        *joined("c2", "31,010", 4, "c2-a"),
        *joined("c4", "31,011", 4, "c4-a"),
        *assigned("c2", "31,012", 4, {"c2-a": "t-0", "c4-a": "t-1"}),
        *synced("c2", "31,030", 4, "c2-a", "t-0"),
        *synced("c4", "31,031", 4, "c4-a", "t-1"),
        revoke("c4", "40,000", "t-1"),
        leave("c4", "40,000", "c4-a"),
    ]
    parsed = parse_lines(lines, file="consumers.log", cluster="k")
    assert not parsed.quarantine
    episodes = replay(parsed.events)["rebalance_episodes"]
    generation_4 = next(r for r in episodes if r["last_generation_id"] == 4)
    assert generation_4["partitions_moved"] == 1
