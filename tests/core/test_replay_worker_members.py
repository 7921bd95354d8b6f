"""Connect workers' logs alone (no broker line, issue 12): a worker that died right after its JoinGroup
(KIP-394's second one, the member id it carries logged nowhere at INFO) is a member no line names. The
coordinator ends every join phase within the group's rebalance timeout, the largest of its members'
rebalance.timeout.ms (GroupMetadata.rebalanceTimeoutMs; DelayedJoin, and for an Empty group
InitialDelayedJoin: at most max(group.initial.rebalance.delay.ms, it)), answering every member that joined
(GroupCoordinator.onCompleteJoin). So a generation formed longer than that after the dead worker's JoinGroup
is not its own: a generation no line shows counted it, and the next completion removed the dynamic member
that never rejoined. The workers' config dumps ("DistributedConfig values:") state the rebalance timeout."""

from __future__ import annotations

import pytest

from rebalance_core.kafka_logs.parser import parse_lines
from rebalance_core.replay import replay
from tests.builders import WORKER_COORDINATOR, config_dump, generation_text, worker_joined, worker_line

HERDER = "org.apache.kafka.connect.runtime.distributed.DistributedHerder:2651"
DISTRIBUTED_CONFIG = "org.apache.kafka.connect.runtime.distributed.DistributedConfig:372"
NEW = "w1-2f0d4a7e-0b6e-4a61-8d55-6f2f1a3c9e11"


def dump(at: str, rebalance_timeout_ms: int, client: str = "w1") -> list[str]:
    settings = {
        "client.id": client,
        "connect.protocol": "sessioned",
        "group.id": "g",
        "heartbeat.interval.ms": "2000",
        "rebalance.timeout.ms": str(rebalance_timeout_ms),
        "scheduled.rebalance.max.delay.ms": "30000",
        "session.timeout.ms": "6000",
    }
    return config_dump(f"2024-01-01 10:00:{at}", "DistributedConfig", settings, DISTRIBUTED_CONFIG)


def line(at: str, message: str, logger: str = WORKER_COORDINATOR) -> str:
    return worker("w1", at, message, logger)


def history(rebalance_timeout_ms: int | None, dumped: str = "w1") -> list[str]:
    """w1 starts, sends its two JoinGroups and dies; restarted 8.5 s later, it forms generation 2 alone."""
    gen = generation_text(2, NEW, "sessioned")
    assignment = (
        f"Assignment{{error=0, leader='{NEW}', leaderUrl='http://w1:8083/', offset=1, connectorIds=[t], "
        "taskIds=[t-0], revokedConnectorIds=[], revokedTaskIds=[], delay=0}"
    )
    out = []
    for at, again in (("00,000", "00,030"), ("08,500", "08,530")):
        if rebalance_timeout_ms is not None:
            out += dump(at, rebalance_timeout_ms, dumped)
        out += [
            line(at, "Rebalance started"),
            line(at, "(Re-)joining group"),
            line(again, "(Re-)joining group"),
        ]
    return out + [
        line("09,060", f"Successfully joined group with generation {gen}"),
        line("09,074", f"Successfully synced group in generation {gen}"),
        line(
            "09,074",
            f"Joined group at generation 2 with protocol version 2 and got assignment: {assignment} "
            "with rebalance delay: 0",
            HERDER,
        ),
    ]


def members(lines: list[str]) -> dict[int, list[str] | None]:
    parsed = parse_lines(lines, file="connect.log", cluster="k")
    assert not parsed.quarantine
    return {g["generation_id"]: g["members"] for g in replay(parsed.events)["generations"]}


def test_a_dead_workers_joingroup_older_than_the_rebalance_timeout_is_not_in_the_generation():
    assert members(history(rebalance_timeout_ms=6_000)) == {2: [NEW]}


@pytest.mark.parametrize("rebalance_timeout_ms", [60_000, None])
def test_a_dead_workers_joingroup_within_the_rebalance_timeout_or_unknown_leaves_the_list_unknown(
    rebalance_timeout_ms,
):
    assert members(history(rebalance_timeout_ms)) == {2: None}


def test_another_clients_dump_does_not_bound_the_groups_rebalance_timeout():
    """Only w9's dump states a rebalance timeout; w1, the generation's member and the dead joiner, shows
    none (its dump rotated away): the group's timeout is the largest of its members' and may be longer."""
    assert members(history(rebalance_timeout_ms=6_000, dumped="w9")) == {2: None}


def worker(client: str, at: str, message: str, logger: str = WORKER_COORDINATOR) -> str:
    return worker_line(f"10:00:{at}", client, message, logger=logger)


def joined_lines(client: str, member: str, generation: int, at: str, leader: str) -> list[str]:
    _, synced, assigned = worker_joined(generation, member, leader, f"http://{leader[:2]}:8083/")
    return [worker(client, at, synced), worker(client, at, assigned, HERDER)]


def test_a_workers_assignment_names_its_generations_leader_after_the_next_round_opened():
    """w3's JoinGroups open the next round before w2 logs generation 2's assignment: w2's "Joined group at
    generation 2 ... leader='w2-…'" line still names generation 2's leader (ConnectProtocol.Assignment
    carries the leader the JoinGroup response named, WorkerCoordinator.onJoinLeader)."""
    w2, w3 = "w2-6b1c9b0e-5d0a-4c3e-9f39-2a8e1c7d4b21", "w3-0c5e7f3a-1b2d-4e6f-8a9b-3c4d5e6f7a8b"
    gen2 = generation_text(2, w2, "sessioned")
    gen3 = generation_text(3, w3, "sessioned")
    lines = [
        worker("w2", "02,000", "Rebalance started"),
        worker("w2", "02,000", "(Re-)joining group"),
        worker("w2", "02,025", "(Re-)joining group"),
        worker("w3", "09,010", "Rebalance started"),
        worker("w3", "09,010", "(Re-)joining group"),
        worker("w2", "09,030", f"Successfully joined group with generation {gen2}"),
        worker("w3", "09,035", "(Re-)joining group"),
        *joined_lines("w2", w2, 2, "09,036", leader=w2),
        worker("w3", "20,000", f"Successfully joined group with generation {gen3}"),
        *joined_lines("w3", w3, 3, "20,005", leader=w3),
    ]
    parsed = parse_lines(lines, file="connect.log", cluster="k")
    assert not parsed.quarantine
    leaders = {g["generation_id"]: g["leader_member_id"] for g in replay(parsed.events)["generations"]}
    assert leaders == {2: w2, 3: w3}
