"""Both views (the brokers' server.log and the members' own logs, merged): what one side leaves unnamed,
the other side's lines name."""

from __future__ import annotations

from tests.core.broker_log import replay_log, scala_line

C1 = "c1-0eec4c23-8ca2-4a89-becc-9a2b139de9f9"
C2 = "c2-5485febc-752b-4881-b106-5829a1889014"
C3 = "c3-78e51061-7311-48a3-82ce-6f447ed4d57b"
C4 = "c4-2b1d0e6f-58a4-4c8e-9d51-7e0f3c6a1b92"
OFFSETS = "(__consumer_offsets-12)"
COORDINATOR = "org.apache.kafka.clients.consumer.internals.ConsumerCoordinator"


def _client(ts: str, client: str, message: str) -> str:
    return f"[2024-11-08 {ts}] INFO [Consumer clientId={client}, groupId=g1] {message} ({COORDINATOR})"


def _prepare(ts, old_generation, member):
    return scala_line(
        ts,
        f"Preparing to rebalance group g1 in state PreparingRebalance with old generation {old_generation} "
        f"{OFFSETS} (reason: Adding new member {member} with group instance id None)",
    )


def _pending_join(ts, member, state):
    return scala_line(
        ts,
        f"Dynamic member with unknown member id joins group g1 in {state} state. Created a new member id "
        f"{member} and request the member to rejoin with this id.",
    )


def test_a_leaders_assignment_for_an_interrupted_generation_names_its_members_and_leader():
    """2.x: c2 and c3 are pending (KIP-394) when c1 opens the join phase; one of them rejoins unlogged
    and generation 1 has 2 members, which one the broker's lines do not say. c4's join interrupts it in
    CompletingRebalance before any assignment line. c1's "Finished
    assignment for group at generation 1", logged after, lists every member of the generation and is the
    leader's (AbstractCoordinator.onJoinLeader, ConsumerCoordinator.onLeaderElected assigns each member):
    generation 1 is [c1, c2] led by c1, although SyncGroup refuses that assignment."""
    lines = [
        _prepare("10:00:00,010", 0, C1),
        _pending_join("10:00:00,020", C2, "PreparingRebalance"),
        _pending_join("10:00:00,030", C3, "PreparingRebalance"),
        scala_line("10:00:03,010", f"Stabilized group g1 generation 1 {OFFSETS} with 2 members"),
        _pending_join("10:00:03,011", C4, "CompletingRebalance"),
        _prepare("10:00:03,012", 1, C4),
        _client(
            "10:00:03,020",
            "c1",
            f"Finished assignment for group at generation 1: {{{C1}=Assignment(partitions=[t-0]), "
            f"{C2}=Assignment(partitions=[t-1])}}",
        ),
        scala_line("10:00:06,000", f"Stabilized group g1 generation 2 {OFFSETS} with 4 members"),
        scala_line(
            "10:00:06,020",
            "Assignment received from leader for group g1 for generation 2. The group has 4 members, "
            "0 of which are static.",
        ),
    ]
    out = replay_log(lines, topics={"t": 3}, default_assignor="range")
    assert [(g["generation_id"], g["members"], g["leader_member_id"]) for g in out["generations"]][0] == (
        1,
        sorted([C1, C2]),
        C1,
    )
