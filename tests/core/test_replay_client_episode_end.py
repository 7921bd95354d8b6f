"""Consumers' logs alone (no broker line, issue 12): when a rebalance episode ends. It ends once its last
round is Stable and every member with its own log applied that round's assignment (docs/metrics.md,
Episode); a member whose log shows a JoinGroup and nothing after (it died) is waited for only while it
may be a member of that round."""

from __future__ import annotations

from rebalance_core.kafka_logs.parser import parse_lines
from rebalance_core.replay import replay
from tests.builders import CONSUMER_COORDINATOR, consumer_line, generation_text
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


def test_an_episode_ends_without_waiting_for_a_static_member_closed_in_the_join_phase_before_it():
    """Static cooperative members (KIP-345). s3 rejoins for generation 2, then closes while that rebalance
    is in progress: ConsumerCoordinator.onLeavePrepare gives its partitions up as lost
    (`rebalanceInProgress()`) and, static, it sends no LeaveGroup, so its log ends with that JoinGroup
    unanswered. Generation 3 forms after its session expired, and the leader's assignment leaves it out:
    nothing of s3 is awaited, so generation 3's episode ends once s1 and s2 applied their assignment.
    t-2 moved from s3 to s1 in it; s1's later close (its revocation) belongs to no episode of it."""
    invoker = "org.apache.kafka.clients.consumer.internals.ConsumerRebalanceListenerInvoker"
    members = {"s1": "s1-a", "s2": "s2-a", "s3": "s3-a"}

    def static(client: str, at: str, message: str, logger: str = CONSUMER_COORDINATOR) -> str:
        return consumer_line(
            f"10:00:{at}", client, message, group="g", day="2024-01-01", instance=client, logger=logger
        )

    def gen(n: int, client: str) -> str:
        return generation_text(n, members[client], "cooperative-sticky")

    def rejoin(client: str, at: str) -> list[str]:
        return [
            static(client, at, "Request joining group due to: group is already rebalancing"),
            static(client, at, "(Re-)joining group"),
        ]

    def sync(client: str, at: str, n: int, assigned: str, owned: str, added: str) -> list[str]:
        return [
            static(client, at, f"Successfully synced group in generation {gen(n, client)}"),
            static(
                client,
                at,
                "Updating assignment with\n"
                f"\tAssigned partitions:                       [{assigned}]\n"
                f"\tCurrent owned partitions:                  [{owned}]\n"
                f"\tAdded partitions (assigned - owned):       [{added}]\n"
                "\tRevoked partitions (owned - assigned):     []\n",
            ),
            static(client, at, f"Adding newly assigned partitions: {added}", logger=invoker),
        ]

    def finished(client: str, at: str, n: int, assignment: dict[str, str]) -> str:
        listed = ", ".join(f"{members[m]}=Assignment(partitions=[{p}])" for m, p in assignment.items())
        return static(client, at, f"Finished assignment for group at generation {n}: {{{listed}}}")

    lines = [
        static("s1", "00,000", "(Re-)joining group"),
        static("s2", "00,100", "(Re-)joining group"),
        static("s3", "00,200", "(Re-)joining group"),
        *(
            static(c, f"03,01{i}", f"Successfully joined group with generation {gen(1, c)}")
            for i, c in enumerate(members)
        ),
        finished("s1", "03,020", 1, {"s1": "t-0", "s2": "t-1", "s3": "t-2"}),
        *sync("s1", "03,030", 1, "t-0", "", "t-0"),
        *sync("s2", "03,031", 1, "t-1", "", "t-1"),
        *sync("s3", "03,032", 1, "t-2", "", "t-2"),
        # generation 2's rebalance (a subscription change of s2): s3 rejoins, then closes during it
        *rejoin("s2", "20,000"),
        *rejoin("s3", "20,005"),
        *rejoin("s1", "20,006"),
        static(
            "s3",
            "21,000",
            "Giving away all assigned partitions as lost since generation/memberID has been reset,"
            "indicating that consumer is in old state or no longer part of the group",
        ),
        static("s3", "21,000", "Lost previously assigned partitions t-2", logger=invoker),
        *(
            static(c, f"21,01{i}", f"Successfully joined group with generation {gen(2, c)}")
            for i, c in enumerate(("s1", "s2"))
        ),
        finished("s1", "21,020", 2, {"s1": "t-0", "s2": "t-1", "s3": "t-2"}),
        *sync("s1", "21,030", 2, "t-0", "t-0", ""),
        *sync("s2", "21,031", 2, "t-1", "t-1", ""),
        # s3's session expired: generation 3 without it
        *rejoin("s1", "32,000"),
        *rejoin("s2", "32,001"),
        *(
            static(c, f"32,01{i}", f"Successfully joined group with generation {gen(3, c)}")
            for i, c in enumerate(("s1", "s2"))
        ),
        finished("s1", "32,020", 3, {"s1": "t-0, t-2", "s2": "t-1"}),
        *sync("s1", "32,030", 3, "t-0, t-2", "t-0", "t-2"),
        *sync("s2", "32,031", 3, "t-1", "t-1", ""),
        # s1 closes (static: no LeaveGroup)
        static("s1", "50,000", "Revoke previously assigned partitions t-0, t-2", logger=invoker),
    ]
    parsed = parse_lines(lines, file="consumers.log", cluster="k")
    assert not parsed.quarantine
    out = replay(parsed.events)
    generation_3 = next(r for r in out["rebalance_episodes"] if r["last_generation_id"] == 3)
    assert generation_3["partitions_moved"] == 1
    assert generation_3["stabilized_at"] is not None
