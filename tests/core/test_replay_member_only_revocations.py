"""Members' logs only (issue 12): whether a cooperative round has a follow-up round of the same rebalance
is stated by what each member logged it revoked at its sync. A Connect worker (KIP-415, protocol version
>= 1) logs its whole increment, "Joined group at generation N ... Assignment{..., revokedConnectorIds=[...],
revokedTaskIds=[...], delay=D}" (DistributedHerder.onAssigned), and rejoins at once only after revoking a
connector or a task, or when the delay expires (DistributedHerder.handleRebalanceCompleted). A round where
every worker logged nothing revoked and no delay ends its rebalance: the next rebalance is a new one, not a
guess (random:183, client views)."""

from __future__ import annotations

from tests.builders import WORKER_REJOINS, worker_joined, worker_line
from tests.core.broker_log import replay_worker_logs


def line(worker: str, at: str, message: str) -> str:
    return worker_line(f"10:{at}", worker, message)


def joined(worker: str, at: str, generation: int, leader: str, revoked_connectors: str = "") -> list[str]:
    messages = worker_joined(
        generation, f"{worker}-m", f"{leader}-m", f"http://{leader}:8083/", revoked_connectors
    )
    return [line(worker, at, m) for m in messages]


def rebalance_started(worker: str, at: str, heartbeat_failed: bool = False) -> list[str]:
    lines = (
        [line(worker, at, "Attempt to heartbeat failed since group is rebalancing")]
        if heartbeat_failed
        else []
    )
    return lines + [line(worker, at, m) for m in WORKER_REJOINS]


def episodes(out) -> list[tuple[int, int, int, str]]:
    return [
        (e["rounds"], e["first_generation_id"], e["last_generation_id"], e["source"])
        for e in out["rebalance_episodes"]
    ]


def two_workers(revoked_connectors: str = "") -> dict[str, list[str]]:
    """w1 and w2 form generation 1; w1 (the leader) revokes `revoked_connectors` at generation 2; at
    10:05 another rebalance begins (the workers learn it from their heartbeat) and forms generation 3."""
    return {
        "w1": rebalance_started("w1", "00:00,000")
        + joined("w1", "00:03,000", 1, "w1")
        + rebalance_started("w1", "01:00,000", heartbeat_failed=True)
        + joined("w1", "01:00,050", 2, "w1", revoked_connectors)
        + rebalance_started("w1", "05:00,000", heartbeat_failed=True)
        + joined("w1", "05:00,050", 3, "w1"),
        "w2": rebalance_started("w2", "00:00,010")
        + joined("w2", "00:03,001", 1, "w1")
        + rebalance_started("w2", "01:00,001", heartbeat_failed=True)
        + joined("w2", "01:00,051", 2, "w1")
        + rebalance_started("w2", "05:00,001", heartbeat_failed=True)
        + joined("w2", "05:00,051", 3, "w1"),
    }


def test_a_connect_round_whose_workers_all_logged_nothing_revoked_ends_its_rebalance():
    """Generation 2: both workers log revokedConnectorIds=[], revokedTaskIds=[], delay=0 (KIP-415
    IncrementalCooperativeAssignor; DistributedHerder.handleRebalanceCompleted schedules no rejoin): the
    rebalance of 10:05 is a new one, and each rebalance's single round is stated, not inferred."""
    out = replay_worker_logs(two_workers())
    assert [e[:3] for e in episodes(out)] == [(1, 1, 1), (1, 2, 2), (1, 3, 3)]
    assert episodes(out)[1][3] == "observed"


def test_a_connect_worker_that_revoked_only_a_connector_rejoins_in_the_same_rebalance():
    """Generation 2: w1 revokes connector c and no task; a worker rejoins after revoking connectors or
    tasks (DistributedHerder.handleRebalanceCompleted: revokedConnectors or revokedTasks non-empty), so the
    round that forms generation 3 is the follow-up of generation 2's rebalance."""
    out = replay_worker_logs(two_workers(revoked_connectors="c"))
    assert [e[:3] for e in episodes(out)] == [(1, 1, 1), (2, 2, 3)]


def test_a_connect_worker_named_in_the_generation_without_its_assignment_line_leaves_the_follow_up_unknown():
    """Generation 2: w2's JoinGroup response names it a member, and its log shows no assignment line for
    the generation (the line missing, the worker stalled): what w2 revoked is not stated, so whether the
    10:05 round is generation 2's follow-up is a guess (inferred), not a new rebalance stated from w1's
    line alone."""
    logs = two_workers()
    gen2 = "Generation{generationId=2, memberId='w2-m', protocol='sessioned'}"
    logs["w2"] = [
        *rebalance_started("w2", "00:00,010"),
        *joined("w2", "00:03,001", 1, "w1"),
        *rebalance_started("w2", "01:00,001", heartbeat_failed=True),
        line("w2", "01:00,051", f"Successfully joined group with generation {gen2}"),
        *rebalance_started("w2", "05:00,001"),
        *joined("w2", "05:00,051", 3, "w1"),
    ]
    out = replay_worker_logs(logs)
    assert "inferred" in {e[3] for e in episodes(out) if e[2] >= 2}
