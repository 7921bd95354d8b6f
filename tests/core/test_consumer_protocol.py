"""KIP-848 consumer group protocol: model, simulator and replayer.

Real logs (EXPECTED.md 06 and 10) as hand-written canonical events, named simulated cases, and a
simulate -> replay round trip (the replay of the simulator's events must equal its ground truth).
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import json
import re

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from rebalance_core.consumer import (
    ConsumerGroupReplayer,
    ConsumerSimSettings,
    simulate_consumer_group,
)
from rebalance_core.consumer.reconcile import MemberAssignment, reconcile_member
from rebalance_core.consumer.states import (
    ClientState,
    MemberState,
    is_valid_client_transition,
)
from rebalance_core.events import Event, TopicPartition
from rebalance_core.replay import event_order_key
from rebalance_core.replay_common import ReplaySettings
from rebalance_core.timeline import (
    Crash,
    Join,
    Leave,
    PartitionCount,
    Pause,
    Restart,
    Stall,
    Subscribe,
    Timeline,
)
from schemas.events import EventType, RemovalReason
from tests.logs.kafka_log_fixtures import REAL, parse_fixture

TABLES = ("generations", "assignments", "partition_movements", "rebalance_episodes", "group_daily_summary")


def ms(text: str) -> int:
    """A log timestamp ('2024-11-11 09:37:20,677' or '... 20.677'), read as UTC."""
    stamp = dt.datetime.strptime(text.replace(",", "."), "%Y-%m-%d %H:%M:%S.%f").replace(tzinfo=dt.UTC)
    return int(stamp.timestamp() * 1000)


def tps(topic: str, *partitions: int) -> tuple[TopicPartition, ...]:
    return tuple(TopicPartition(topic, p) for p in partitions)


class Log:
    """Builds the canonical events a parser would emit for one group."""

    def __init__(self, group: str, cluster: str = "k"):
        self.group, self.cluster, self.events = group, cluster, []

    def add(self, when: str, side: str, event_type: EventType, **fields) -> None:
        n = len(self.events)
        self.events.append(
            Event(f"e{n}", ms(when), self.cluster, self.group, side, event_type.value, line=n, **fields)
        )

    def replay(self, settings: ReplaySettings | None = None) -> dict:
        """The replay tables, plus the per-member reconciliation rows."""
        replayer = ConsumerGroupReplayer(self.cluster, self.group, settings)
        replayer.feed(sorted(self.events, key=event_order_key))
        out = replayer.finish()
        out["member_reconciliations"] = replayer.drain_reconciliations()
        return out


def replay(events, cluster="sim", group="group", settings=None) -> dict:
    replayer = ConsumerGroupReplayer(cluster, group, settings)
    replayer.feed(sorted(events, key=event_order_key))
    return replayer.finish()


# ================================================================================= real logs
B8F7 = "avro-producer-b8f7c567-6711-4cc6-8720-29ce8dee2034"
GJWZ = "gjWzAEmmRlOfypB2_GB_9Q"
N6C1 = "6nc1qt8rSeyTwBh__vZELQ"
T7L8 = "7l8rBsX6TMqbHE6QgWshdw"
T8IW = "8iWjCLGESE6MUiR5ANkArg"


def log_06() -> Log:
    """06_broker_3.8_kip848_target_assignment.log: topics appear only as ids."""
    log = Log("avro-consumer2")
    c = "coordinator"
    day = "2024-11-11 09:"
    log.add(f"{day}37:20,677", c, EventType.TARGET_ASSIGNMENT_COMPUTED, assignment_epoch=4, protocol_name="uniform",
            assignment={B8F7: tps(T7L8, *range(6)), GJWZ: tps(T8IW, *range(6))})  # fmt: skip
    log.add(f"{day}37:20,961", c, EventType.MEMBER_EPOCH_UPDATED, member_id=B8F7, member_epoch=4,
            partitions=tps(T7L8, *range(6)), attributes={"previous_epoch": "3", "state": "STABLE", "revoked": ""})  # fmt: skip
    log.add(f"{day}37:25,723", c, EventType.MEMBER_EPOCH_UPDATED, member_id=GJWZ, member_epoch=4,
            partitions=tps(T8IW, *range(6)), attributes={"previous_epoch": "4", "state": "STABLE", "revoked": ""})  # fmt: skip
    log.add(f"{day}38:25,810", c, EventType.TARGET_ASSIGNMENT_COMPUTED, assignment_epoch=5, protocol_name="uniform",
            assignment={GJWZ: tps(T7L8, *range(6)) + tps(T8IW, *range(6))})  # fmt: skip
    log.add(f"{day}38:40,249", c, EventType.TARGET_ASSIGNMENT_COMPUTED, assignment_epoch=6, protocol_name="uniform",
            assignment={N6C1: tps(T8IW, *range(6)), GJWZ: tps(T7L8, *range(6))})  # fmt: skip
    log.add(f"{day}38:40,966", c, EventType.MEMBER_EPOCH_UPDATED, member_id=GJWZ, member_epoch=6,
            partitions=tps(T7L8, *range(6)), attributes={"previous_epoch": "5", "state": "STABLE", "revoked": ""})  # fmt: skip
    log.add(f"{day}38:45,273", c, EventType.MEMBER_EPOCH_UPDATED, member_id=N6C1, member_epoch=6,
            partitions=tps(T8IW, *range(6)), attributes={"previous_epoch": "6", "state": "STABLE", "revoked": ""})  # fmt: skip
    return log


def test_06_broker_target_assignments_and_convergence():
    out = log_06().replay()
    gens = {g["generation_id"]: g for g in out["generations"]}
    assert sorted(gens) == [4, 5, 6]
    assert {g["group_protocol"] for g in gens.values()} == {"consumer"}
    assert {g["rebalance_protocol"] for g in gens.values()} == {"consumer"}
    assert {g["protocol_name"] for g in gens.values()} == {"uniform"}
    # epoch 4: target 09:37:20,677 -> gjWz STABLE at 09:37:25,723
    assert gens[4]["join_completed_at"] == ms("2024-11-11 09:37:20,677")
    assert gens[4]["stabilized_at"] == ms("2024-11-11 09:37:25,723")
    assert gens[4]["rebalance_ms"] == 5046
    assert gens[4]["members"] == sorted([B8F7, GJWZ])
    # epoch 5 never converged in the file: superseded by epoch 6
    assert gens[5]["stabilized_at"] is None and gens[5]["members"] == [GJWZ]
    # epoch 6: target 09:38:40,249 -> 6nc1 STABLE at 09:38:45,273
    assert gens[6]["rebalance_ms"] == 5024
    assert gens[6]["members"] == sorted([N6C1, GJWZ])
    assert gens[5]["episode_id"] == gens[6]["episode_id"] != gens[4]["episode_id"]
    assert (gens[5]["episode_round"], gens[6]["episode_round"]) == (1, 2)
    assert out["anomalies"] == []


def test_06_partitions_move_from_gjwz_to_6nc1_at_epoch_6():
    out = log_06().replay()
    moved = [m for m in out["partition_movements"] if m["topic"] == T8IW]
    assert sorted(m["partition"] for m in moved) == list(range(6))
    for m in moved:
        assert (m["from_member_id"], m["to_member_id"], m["generation_id"]) == (GJWZ, N6C1, 6)
        assert m["moved"] and not m["wasted_revocation"]
        # coordinator timing: gjWz told to give them up at 40,966; 6nc1 gets them at 45,273
        assert m["revoked_at"] == ms("2024-11-11 09:38:40,966")
        assert m["assigned_at"] == ms("2024-11-11 09:38:45,273")


def test_06_a_state_line_a_later_previous_epoch_proves_missing_makes_its_changes_inferred():
    """gjWz's epoch-6 line says previousEpoch=5, but no epoch-5 line of gjWz is in the excerpt: the coordinator
    logs every change of a member's state, so that line is missing, and when gjWz took the 7l8r partitions
    (at epoch 5, between the epoch-5 target and this line) and gave up 8iWj is not known. Those movements
    are inferred (their unavailable time an upper bound), never observed; the counts stay."""
    out = log_06().replay()
    rows = out["partition_movements"]
    assert len(rows) == 12 and {m["source"] for m in rows} == {"inferred"}
    took = [m for m in rows if m["topic"] == T7L8]
    assert {(m["from_member_id"], m["to_member_id"]) for m in took} == {(B8F7, GJWZ)}
    assert {m["unavailable_ms"] for m in took} == {15156}  # at most: b8f7's departure to the epoch-6 line
    (episode,) = [r for r in out["rebalance_episodes"] if r["last_generation_id"] == 6]
    assert episode["source"] == "inferred"


def test_06_per_member_reconcile_latency():
    out = log_06().replay()
    latency = {(r["group_epoch"], r["member_id"]): r["reconcile_ms"] for r in out["member_reconciliations"]}
    assert latency == {(4, B8F7): 284, (4, GJWZ): 5046, (6, GJWZ): 717, (6, N6C1): 5024}


def test_06_topic_ids_map_back_to_names():
    settings = ReplaySettings(topic_ids={"avro-a": T7L8, "avro-b": T8IW})
    out = log_06().replay(settings)
    assert {m["topic"] for m in out["partition_movements"]} <= {"avro-a", "avro-b"}
    assert {a["topic"] for a in out["assignments"]} == {"avro-a", "avro-b"}


# ============================================== member lines that state the member's assignment
M1, M2 = "member-1", "member-2"


def assignment_state(log: Log, when: str, member: str, epoch: int, previous: int, state: str, *assigned: int,
                     revoked: str = "") -> None:  # fmt: skip
    """GroupMetadataManager "Member m new assignment state: epoch=E, previousEpoch=P, state=S,
    assignedPartitions=[...] and revokedPartitions=[...]" (3.8+), as the parser emits it."""
    log.add(when, "coordinator", EventType.MEMBER_EPOCH_UPDATED, member_id=member, member_epoch=epoch,
            partitions=tps("t", *assigned), attributes={"previous_epoch": str(previous), "state": state,
                                                          "revoked": revoked})  # fmt: skip


def log_4_0_second_member_joins() -> Log:
    """Kafka 4.0 broker: the target map is logged at DEBUG only (GroupMetadataManager.updateTargetAssignment),
    so "Computed a new target assignment for epoch 2 ... in 1ms." names no member. m2 joins; m1 revokes
    t-2, t-3 (UNREVOKED_PARTITIONS at its old epoch), then both reach STABLE at epoch 2."""
    log, c, day = Log("g"), "coordinator", "2025-03-10 14:"
    log.add(f"{day}00:00,000", c, EventType.GROUP_EPOCH_BUMPED, group_epoch=1)
    log.add(
        f"{day}00:00,002",
        c,
        EventType.TARGET_ASSIGNMENT_COMPUTED,
        assignment_epoch=1,
        protocol_name="uniform",
    )
    assignment_state(log, f"{day}00:00,005", M1, 1, 0, "STABLE", 0, 1, 2, 3)
    log.add(f"{day}05:00,000", c, EventType.JOIN_RECEIVED, member_id=M2)
    log.add(f"{day}05:00,001", c, EventType.GROUP_EPOCH_BUMPED, group_epoch=2)
    log.add(
        f"{day}05:00,003",
        c,
        EventType.TARGET_ASSIGNMENT_COMPUTED,
        assignment_epoch=2,
        protocol_name="uniform",
    )
    assignment_state(log, f"{day}05:00,004", M2, 2, 0, "UNRELEASED_PARTITIONS")
    assignment_state(log, f"{day}05:03,000", M1, 1, 0, "UNREVOKED_PARTITIONS", 0, 1, revoked="t-2,t-3")
    assignment_state(log, f"{day}05:06,000", M1, 2, 1, "STABLE", 0, 1)
    assignment_state(log, f"{day}05:09,000", M2, 2, 2, "STABLE", 2, 3)
    return log


def test_a_target_without_its_map_keeps_the_members_and_converges_at_the_last_stable_member():
    out = log_4_0_second_member_joins().replay()
    gens = {g["generation_id"]: g for g in out["generations"]}
    assert (gens[1]["members"], gens[1]["stabilized_at"]) == ([M1], ms("2025-03-10 14:00:00,005"))
    assert gens[2]["members"] == [M1, M2]
    assert gens[2]["join_completed_at"] == ms("2025-03-10 14:05:00,003")
    assert gens[2]["stabilized_at"] == ms("2025-03-10 14:05:09,000")  # m2 STABLE at epoch 2
    assert gens[2]["rebalance_ms"] == 9000  # the join (epoch bump cause) -> the last member reconciled
    assert out["anomalies"] == []


def test_assignment_lines_give_observed_assignment_rows():
    out = log_4_0_second_member_joins().replay()
    rows = {(a["generation_id"], a["member_id"], a["partition"], a["source"]) for a in out["assignments"]}
    assert rows == {(1, M1, p, "observed") for p in range(4)} | {
        (2, M1, 0, "observed"),
        (2, M1, 1, "observed"),
        (2, M2, 2, "observed"),
        (2, M2, 3, "observed"),
    }
    moved = sorted((m["partition"], m["from_member_id"], m["to_member_id"], m["unavailable_ms"])
                   for m in out["partition_movements"] if m["moved"])  # fmt: skip
    assert moved == [(2, M1, M2, 6000), (3, M1, M2, 6000)]  # revoked 05:03 (coordinator timing), added 05:09


def test_reaching_stable_ends_a_members_reconciliation_not_the_epochs_start():
    """A log that begins mid-reconciliation: the first line showing epoch 7 is a member reaching it. The
    target for 7 was computed before any member could be at 7, so the epoch started before the input."""
    log = Log("g")
    assignment_state(log, "2025-03-10 14:00:03,000", M2, 7, 6, "UNRELEASED_PARTITIONS", 2)
    assignment_state(log, "2025-03-10 14:00:04,000", M1, 7, 6, "STABLE", 0, 1)
    assignment_state(log, "2025-03-10 14:00:06,000", M2, 7, 6, "STABLE", 2, 3)
    out = log.replay()
    (gen,) = out["generations"]
    assert (gen["generation_id"], gen["rebalance_started_at"], gen["rebalance_ms"]) == (7, None, None)
    assert gen["stabilized_at"] == ms("2025-03-10 14:00:06,000")
    (episode,) = out["rebalance_episodes"]
    assert (episode["started_at"], episode["stabilized_at"]) == (None, ms("2025-03-10 14:00:06,000"))
    reconciled = {r["member_id"]: r["reconciled_at"] for r in out["member_reconciliations"]}
    assert reconciled == {M1: ms("2025-03-10 14:00:04,000"), M2: ms("2025-03-10 14:00:06,000")}
    assert {a["source"] for a in out["assignments"]} == {"observed"}
    (day,) = out["group_daily_summary"]
    assert (day["rebalances"], day["rebalances_started_before_input"]) == (0, 1)


TKQV = "tKQVSQuHR9aBocp13XT9nw"
OCPR = "oCpRdkCgQGWK7Rq-kJ2BVw"


def log_10(reconciling_lines: bool = False) -> Log:
    """10_client_kip848_reconcile.log: two members' own logs, no broker. reconciling_lines: also the
    "Reconciling assignment" blocks (assigned and currently owned partitions), as the parser emits them."""
    log = Log("nextgen-consumer-group")
    m = "member"
    day = "2026-03-16 16:54:"

    def state(when, member, epoch, a, b):
        log.add(day + when, m, EventType.MEMBER_STATE_CHANGED, member_id=member, member_epoch=epoch,
                client_id="consumer-nextgen", attributes={"from_state": a, "to_state": b})  # fmt: skip

    def callback(when, member, event_type, *partitions):
        log.add(day + when, m, event_type, member_id=member, client_id="consumer-nextgen",
                partitions=tps("my-topic", *partitions))  # fmt: skip

    def reconciling(when, member, assigned, owned):
        if reconciling_lines:
            log.add(day + when, m, EventType.SYNC_RESPONSE, member_id=member, client_id="consumer-nextgen",
                    partitions=tps("my-topic", *assigned),
                    attributes={"owned": ",".join(f"my-topic-{p}" for p in owned), "group_protocol": "consumer"})  # fmt: skip

    # block 2 (oCpRd) and block 1 (tKQV) interleave in time
    state("47.162", OCPR, 0, "UNSUBSCRIBED", "JOINING")
    state("47.214", OCPR, 2, "JOINING", "RECONCILING")
    reconciling("47.215", OCPR, (), ())
    callback("47.216", OCPR, EventType.PARTITIONS_ASSIGNED)
    state("47.217", OCPR, 2, "RECONCILING", "ACKNOWLEDGING")
    state("47.217", OCPR, 2, "ACKNOWLEDGING", "STABLE")
    state("51.473", TKQV, 1, "STABLE", "RECONCILING")
    reconciling("51.475", TKQV, (0, 1), (0, 1, 2))
    callback("51.475", TKQV, EventType.PARTITIONS_REVOKED, 2)  # membership manager "Revoking ..."
    callback("51.481", TKQV, EventType.PARTITIONS_REVOKED, 2)  # listener invoker "Revoke ..." (the same)
    callback("52.494", TKQV, EventType.PARTITIONS_ASSIGNED)
    state("52.495", TKQV, 1, "RECONCILING", "ACKNOWLEDGING")
    state("52.496", TKQV, 1, "ACKNOWLEDGING", "STABLE")
    state("57.224", OCPR, 2, "STABLE", "RECONCILING")
    reconciling("57.227", OCPR, (2,), ())
    callback("58.084", OCPR, EventType.PARTITIONS_ASSIGNED, 2)
    state("58.085", OCPR, 2, "RECONCILING", "ACKNOWLEDGING")
    state("58.112", OCPR, 2, "ACKNOWLEDGING", "STABLE")
    return log


def test_10_client_reconcile_my_topic_2_unowned_6609_ms():
    out = log_10().replay()
    (move,) = out["partition_movements"]
    assert (move["topic"], move["partition"]) == ("my-topic", 2)
    assert (move["from_member_id"], move["to_member_id"], move["stop_cause"]) == (TKQV, OCPR, "revoked")
    assert move["revoked_at"] == ms("2026-03-16 16:54:51.475")
    assert move["assigned_at"] == ms("2026-03-16 16:54:58.084")
    assert move["unavailable_ms"] == 6609 and move["moved"]
    assert out["anomalies"] == []  # the repeated revocation line is not a second stop


@pytest.mark.parametrize("reconciling_lines", [False, True])
def test_10_one_incremental_rebalance(reconciling_lines):
    out = log_10(reconciling_lines).replay()
    assert [m["unavailable_ms"] for m in out["partition_movements"]] == [6609]
    (episode,) = out["rebalance_episodes"]
    assert (episode["partitions_moved"], episode["partitions_revoked"]) == (1, 1)
    assert episode["partition_unavailable_ms"] == 6609
    if reconciling_lines:
        # tKQV keeps consuming my-topic-0/1: no stop-the-world. Without those lines the replay cannot
        # know it owned anything but my-topic-2, and the group looks stopped while it is in flight.
        assert episode["stw_ms"] == 0
    else:
        assert episode["stw_ms"] == 6609
    (gen,) = out["generations"]
    # member-side logs only: first member signal (JOINING) -> last member STABLE, at member epoch 2
    assert gen["generation_id"] == 2 and gen["source"] == "inferred" and gen["timing_source"] == "member"
    assert gen["rebalance_started_at"] == ms("2026-03-16 16:54:47.162")
    assert gen["stabilized_at"] == ms("2026-03-16 16:54:58.112")
    assert gen["rebalance_ms"] == 10950
    (day,) = out["group_daily_summary"]
    assert (day["rebalances"], day["partitions_moved"], day["partition_unavailable_ms"]) == (1, 1, 6609)
    assert day["events"] == len(log_10(reconciling_lines).events) and day["anomalies"] == 0


def test_a_members_reconciling_block_gives_observed_assignment_rows():
    """The KIP-848 client's "Reconciling assignment ... Assigned partitions: [...]" states the member's whole
    assignment for the epoch it reconciles to (AbstractMembershipManager): observed, not inferred."""
    rows = {
        (a["member_id"], a["topic"], a["partition"], a["source"])
        for a in log_10(reconciling_lines=True).replay()["assignments"]
    }
    assert {(m, p, src) for m, _, p, src in rows if m == TKQV} == {
        (TKQV, 0, "observed"),
        (TKQV, 1, "observed"),
    }


@pytest.mark.parametrize(
    "name, group, expected",
    [
        ("06_broker_3.8_kip848_target_assignment.log", "avro-consumer2", {4: 5046, 5: None, 6: 5024}),
        ("10_client_kip848_reconcile.log", "nextgen-consumer-group", {2: 10950}),
    ],
)
def test_real_logs_through_the_parser(name, group, expected):
    parsed = parse_fixture(REAL / name)
    out = replay([e for e in parsed.events if e.group_id == group], cluster="test", group=group)
    assert {g["generation_id"]: g["rebalance_ms"] for g in out["generations"]} == expected
    assert out["anomalies"] == []
    if group == "nextgen-consumer-group":
        assert [m["unavailable_ms"] for m in out["partition_movements"]] == [6609]
        assert out["rebalance_episodes"][0]["stw_ms"] == 0


# ==================================================================================== model
def test_client_transition_table_follows_kafka():
    assert is_valid_client_transition(ClientState.RECONCILING, ClientState.ACKNOWLEDGING)
    assert not is_valid_client_transition(ClientState.STABLE, ClientState.ACKNOWLEDGING)
    assert is_valid_client_transition(ClientState.STALE, ClientState.JOINING)
    assert not is_valid_client_transition(ClientState.UNSUBSCRIBED, ClientState.STABLE)


def test_reconcile_revokes_before_moving_to_the_target_epoch():
    p0, p1 = tps("t", 0, 1)
    member = MemberAssignment(member_epoch=1, previous_epoch=0, assigned=frozenset({p0, p1}))
    free = lambda tp: False  # noqa: E731
    step = reconcile_member(member, 2, frozenset({p0}), frozenset({p0, p1}), free)
    assert (step.state, step.member_epoch, step.assigned, step.pending_revocation) == (
        MemberState.UNREVOKED_PARTITIONS,
        1,
        frozenset({p0}),
        frozenset({p1}),
    )
    assert reconcile_member(step, 2, frozenset({p0}), frozenset({p0, p1}), free) is step  # not acked yet
    done = reconcile_member(step, 2, frozenset({p0}), frozenset({p0}), free)
    assert (done.state, done.member_epoch, done.previous_epoch) == (MemberState.STABLE, 2, 1)


def test_reconcile_withholds_partitions_not_yet_released():
    (p0,) = tps("t", 0)
    joining = MemberAssignment()
    waiting = reconcile_member(joining, 2, frozenset({p0}), frozenset(), lambda tp: True)
    assert (waiting.state, waiting.member_epoch, waiting.assigned) == (
        MemberState.UNRELEASED_PARTITIONS,
        2,
        frozenset(),
    )
    got = reconcile_member(waiting, 2, frozenset({p0}), frozenset(), lambda tp: False)
    assert (got.state, got.assigned) == (MemberState.STABLE, frozenset({p0}))


# ============================================================================ named simulations
def simulate(actions, topics=None, **sim_settings):
    timeline = Timeline(topics=topics or {"t": 6}, actions=tuple(actions))
    return timeline, simulate_consumer_group(timeline, ConsumerSimSettings(**sim_settings))


def assert_replay_matches_truth(sim) -> dict:
    out = replay(sim.events)
    truth = {name: list(sim.truth[name]) for name in TABLES}
    if sim.unobservable:
        # a crash is known only at the session expiry: the timeline does not recount stop-the-world
        # for stops placed in the past, so only the truth sees that interval
        for tables in (truth, out):
            for name in ("rebalance_episodes", "group_daily_summary"):
                tables[name] = [{**r, "stw_ms": None} for r in tables[name]]
    for name in TABLES:
        assert out[name] == truth[name], name
    assert out["anomalies"] == []
    return out


def of_type(sim, event_type: EventType, member: str | None = None) -> list[Event]:
    return [
        e
        for e in sim.events
        if e.event_type == event_type.value and (member is None or e.member_id == member)
    ]


def test_member_joins_partitions_move_only_after_release():
    tl, sim = simulate([Join(0, "c1"), Join(20_000, "c2")])
    out = assert_replay_matches_truth(sim)
    moves = out["partition_movements"]
    assert sorted(m["partition"] for m in moves) == [3, 4, 5]
    (revoke,) = of_type(sim, EventType.PARTITIONS_REVOKED, "c1")
    c2_gets = [e for e in of_type(sim, EventType.MEMBER_EPOCH_UPDATED, "c2") if e.partitions]
    c2_first = of_type(sim, EventType.MEMBER_EPOCH_UPDATED, "c2")[0]
    assert c2_first.attributes["state"] == MemberState.UNRELEASED_PARTITIONS.value  # c1 still holds them
    assert c2_gets[0].ts > revoke.ts  # given out only once c1 revoked and acknowledged
    c1_waits = of_type(sim, EventType.MEMBER_EPOCH_UPDATED, "c1")[1]
    assert (c1_waits.attributes["state"], c1_waits.member_epoch) == (
        MemberState.UNREVOKED_PARTITIONS.value,
        1,
    )
    for m in moves:
        assert (m["from_member_id"], m["to_member_id"], m["stop_cause"]) == ("c1", "c2", "revoked")
        assert m["revoked_at"] == revoke.ts and m["assigned_at"] > m["revoked_at"]
    (episode,) = [e for e in out["rebalance_episodes"] if e["partitions_moved"]]
    assert episode["stw_ms"] == 0  # c1 keeps consuming t-0..2 throughout
    # c2 waits for its next heartbeat after c1's release: about one heartbeat interval
    assert 0 < max(m["unavailable_ms"] for m in moves) <= 5_000


def test_static_member_leaves_with_epoch_minus_2_and_returns():
    tl, sim = simulate(
        [Join(0, "c1", instance_id="host-1"), Join(0, "c2"), Restart(30_000, "c1", down_ms=10_000)]
    )
    out = assert_replay_matches_truth(sim)
    (left,) = of_type(sim, EventType.MEMBER_REMOVED, "c1")
    assert left.member_epoch == -2 and left.group_instance_id == "host-1"
    (back,) = of_type(sim, EventType.STATIC_MEMBER_REPLACED)
    assert (back.member_id, back.attributes["old_member_id"]) == ("c1#2", "c1")
    assert not [
        e for e in of_type(sim, EventType.GROUP_EPOCH_BUMPED) if left.ts <= e.ts <= back.ts
    ]  # no rebalance
    (closing,) = [e for e in of_type(sim, EventType.PARTITIONS_REVOKED, "c1") if e.ts >= tl.start_ms + 30_000]
    c1_partitions = set(closing.partitions)
    for e in of_type(sim, EventType.MEMBER_EPOCH_UPDATED, "c2"):
        if e.ts > closing.ts:
            assert not c1_partitions & set(e.partitions)  # reserved while c1 is away
    away = [m for m in out["partition_movements"] if m["stop_cause"] == "member_left"]
    assert {(tp.topic, tp.partition) for tp in c1_partitions} == {(m["topic"], m["partition"]) for m in away}
    for m in away:
        assert (m["to_member_id"], m["moved"], m["stop_cause"], m["episode_id"]) == (
            "c1#2",
            False,
            "member_left",
            None,
        )
        assert 9_900 <= m["unavailable_ms"] < 10_100  # down for 10 s
    (day,) = out["group_daily_summary"]
    assert day["partition_unavailable_ms"] >= 9_900 * len(away)


def test_static_member_away_beyond_session_timeout_loses_its_partitions():
    tl, sim = simulate([Join(0, "c1", instance_id="host-1"), Join(0, "c2"), Leave(30_000, "c1")])
    assert_replay_matches_truth(sim)
    left, expired = of_type(sim, EventType.MEMBER_REMOVED, "c1")
    assert (left.member_epoch, expired.reason) == (-2, "session_timeout")
    assert 0 < expired.ts - left.ts <= 45_000  # the session runs from its last heartbeat before leaving
    final = {tuple(e.partitions) for e in of_type(sim, EventType.MEMBER_EPOCH_UPDATED, "c2")}
    assert tps("t", *range(6)) in final  # c2 ends up with everything


def test_member_session_timeout_fences_it():
    tl, sim = simulate([Join(0, "c1"), Join(0, "c2"), Crash(30_000, "c2")])
    out = assert_replay_matches_truth(sim)
    (removed,) = of_type(sim, EventType.MEMBER_REMOVED, "c2")
    assert removed.reason == "session_timeout"
    bump = [e for e in of_type(sim, EventType.GROUP_EPOCH_BUMPED) if e.ts == removed.ts]
    assert bump and bump[0].reason == "member session expired"
    failed = [m for m in out["partition_movements"] if m["stop_cause"] == "member_failed"]
    assert failed and {m["to_member_id"] for m in failed} == {"c1"}
    for m in failed:
        assert m["revoked_at"] == removed.ts - 45_000  # its last heartbeat
    gen = out["generations"][-1]
    assert gen["rebalance_reason"] == "member session expired" and gen["members"] == ["c1"]


# A process joins and is closed before the coordinator answered its first heartbeat, and a new one
# starts at once: the coordinator sees the join, the leave, then the new member.
JOIN_LEAVE_REJOIN = Timeline(topics={"t": 1, "u": 0}, actions=(Join(0, "a"), Leave(0, "a"), Join(0, "a")))


@pytest.mark.parametrize("static", [False, True])
def test_member_gone_before_reconciling_never_consumed_and_a_joining_client_is_no_member(static):
    sim = simulate_consumer_group(JOIN_LEAVE_REJOIN, ConsumerSimSettings(static_membership=static))
    out = assert_replay_matches_truth(sim)
    # the first process left before its assignment reached it (its own log never assigns t-0): no
    # movement from it to its successor
    assert out["partition_movements"] == []
    if not static:
        # the epoch bumped by its leave has no member: the new process's JOINING line (logged before)
        # does not make it one until the coordinator has its heartbeat
        epoch_2 = next(g for g in out["generations"] if g["generation_id"] == 2)
        assert (epoch_2["member_count"], epoch_2["ended_empty"]) == (0, True)


# ================================================================================ round trip
NAMES = ("a", "b", "c", "d")


@st.composite
def timelines(draw) -> tuple[Timeline, bool]:
    """A valid membership timeline: joins, leaves, crashes, restarts, pauses, resubscriptions."""
    initial = {"t": draw(st.integers(1, 8)), "u": draw(st.integers(0, 3))}
    counts = dict(initial)
    up: dict[str, bool] = {}
    busy: dict[str, int] = {}
    actions = []
    at = 0
    for _ in range(draw(st.integers(1, 8))):
        at += draw(st.sampled_from([0, 1, 7, 500, 3_000, 20_000, 60_000]))
        kind = draw(
            st.sampled_from(["join", "join", "leave", "crash", "restart", "pause", "subscribe", "partitions"])
        )
        name = draw(st.sampled_from(NAMES))
        if kind == "partitions":
            topic = draw(st.sampled_from(["t", "u"]))
            counts[topic] += draw(st.integers(1, 3))
            actions.append(PartitionCount(at, topic, counts[topic]))
        elif busy.get(name, -1) >= at:
            continue
        elif kind == "join":
            if not up.get(name):
                up[name] = True
                topics = draw(st.sampled_from([None, ("t",), ("t", "u")]))
                instance = draw(st.sampled_from([None, None, f"{name}-host"]))
                actions.append(Join(at, name, topics=topics, instance_id=instance))
        elif up.get(name):
            if kind in ("leave", "crash"):
                up[name] = False
                actions.append(Leave(at, name) if kind == "leave" else Crash(at, name))
            elif kind == "restart":
                down = draw(st.sampled_from([10, 5_000, 50_000]))
                actions.append(Restart(at, name, down, draw(st.booleans())))
                busy[name] = at + down + 1
            elif kind == "pause":
                length = draw(st.sampled_from([100, 10_000, 60_000, 400_000]))
                actions.append(Pause(at, name, length, draw(st.sampled_from(["gc", "poll"]))))
                busy[name] = at + length + 1
            else:
                actions.append(Subscribe(at, name, draw(st.sampled_from([("t",), ("u",), ("t", "u")]))))
    actions = actions or [Join(0, "a")]
    return Timeline(topics=initial, actions=tuple(actions)), draw(st.booleans())


# found by a random draw: b freezes (gc) right after the heartbeat it sends while reconciling its first
# assignment, which the coordinator answers with a's share of it
GC_WHILE_RECONCILING_ITS_FIRST_ASSIGNMENT = Timeline(
    topics={"t": 1, "u": 1},
    actions=(Join(0, "b"), Pause(0, "b", 100, "gc"), Join(0, "a")),
)


def test_a_heartbeat_sent_while_reconciling_does_not_release_the_partitions_being_assigned():
    sim = simulate_consumer_group(GC_WHILE_RECONCILING_ITS_FIRST_ASSIGNMENT, ConsumerSimSettings())
    assert_replay_matches_truth(sim)
    # b takes u-0 (its epoch-1 assignment) after its freeze and revokes it; only then does a get it
    (u0,) = tps("u", 0)
    b_revoked = [e.ts for e in of_type(sim, EventType.PARTITIONS_REVOKED, "b") if u0 in e.partitions]
    a_assigned = [
        e.ts for e in of_type(sim, EventType.PARTITIONS_ASSIGNED, "a") if u0 in (e.partitions or ())
    ]
    assert b_revoked and a_assigned and a_assigned[0] > b_revoked[0]


@settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(timelines(), st.floats(0, 1))
@example((JOIN_LEAVE_REJOIN, False), 0.0)
@example((JOIN_LEAVE_REJOIN, True), 0.0)
@example((GC_WHILE_RECONCILING_ITS_FIRST_ASSIGNMENT, False), 0.0)
def test_round_trip_replay_reproduces_the_simulated_truth(case, cut_at):
    timeline, static = case
    sim = simulate_consumer_group(timeline, ConsumerSimSettings(static_membership=static))
    assert_replay_matches_truth(sim)
    # ground-truth invariant: a partition is never started before its previous owner stopped it
    assert all(
        m["assigned_at"] is None or m["assigned_at"] >= m["revoked_at"]
        for m in sim.truth["partition_movements"]
    )
    # a nightly run stopping anywhere and resuming from the JSON snapshot gives the same rows
    events = sorted(sim.events, key=event_order_key)
    cut = int(cut_at * len(events))
    first = ConsumerGroupReplayer(timeline.cluster, timeline.group_id)
    first.feed(events[:cut])
    head = first.drain()
    second = ConsumerGroupReplayer(
        timeline.cluster, timeline.group_id, state=json.loads(json.dumps(first.snapshot()))
    )
    second.feed(events[cut:])
    tail = second.finish()
    whole = replay(events)
    for name in whole:
        assert head[name] + tail[name] == whole[name], name
    # the broker's log alone gives the same group epochs, convergence instants and target assignments
    broker = replay([e for e in events if e.side == "coordinator"])
    without_timing = lambda rows: [{k: v for k, v in r.items() if k != "timing_source"} for r in rows]  # noqa: E731
    assert without_timing(broker["generations"]) == without_timing(sim.truth["generations"])
    assert broker["assignments"] == sim.truth["assignments"]


def test_settings_from_the_classic_simulator():
    from rebalance_core.simulate import SimulationSettings

    classic = SimulationSettings(assignor="server-range", static_membership=True, session_timeout_ms=30_000)
    kip848 = ConsumerSimSettings.from_simulation_settings(classic)
    # the client's session.timeout.ms does not apply: group.consumer.session.timeout.ms, a broker setting
    assert (kip848.assignor, kip848.static_membership, kip848.session_timeout_ms) == (
        "server-range",
        True,
        45_000,
    )
    assert kip848.heartbeat_interval_ms == 5_000  # group.consumer.heartbeat.interval.ms, a broker setting
    broker = SimulationSettings(
        assignor="uniform",
        group_consumer_session_timeout_ms=20_000,
        group_consumer_heartbeat_interval_ms=2_000,
    )
    kip848 = ConsumerSimSettings.from_simulation_settings(broker)
    assert (kip848.session_timeout_ms, kip848.heartbeat_interval_ms) == (20_000, 2_000)


@pytest.mark.parametrize("field", ["network_ms", "revoke_callback_ms"])
def test_settings_reject_zero_latencies(field):
    with pytest.raises(ValueError):
        ConsumerSimSettings(**{field: 0})


# ====================================================== Kafka 4.0 broker logs: maps at DEBUG only
def as_logged(sim, broker_era: str | None = "4.x", client_era: str | None = None) -> list[Event]:
    """The simulated history as Kafka logs it (KafkaLogWriter), parsed back: the broker's server.log in
    `broker_era` wording and/or each consumer's own log in `client_era` wording."""
    from rebalance_core.kafka_logs import parse_lines
    from rebalance_core.kafka_logs.writer import KafkaLogWriter
    from rebalance_core.kafka_logs.writer_lines import BROKER

    writer = KafkaLogWriter(
        consumer_protocol=True, broker_era=broker_era or "3.x", client_era=client_era or "3.x"
    )
    files: dict[str, list[str]] = {}
    for line in writer.write_all(sim.events):
        if (broker_era if line.stream == BROKER else client_era) is None:
            continue
        files.setdefault("server.log" if line.stream == BROKER else client_file(line.text), []).extend(
            line.text.split("\n")
        )
    events = []
    for name, text in sorted(files.items()):
        result = parse_lines(text, file=name, cluster="sim")
        assert result.quarantine == []
        events.extend(result.events)
    return events


def client_file(text: str) -> str:
    """The consumer's own log a client line goes to: its "[Consumer clientId=X, ...]" prefix names it; a
    config dump (AbstractConfig.logAll, "ConsumerConfig values:") has no prefix and names its client in its
    `client.id = X` row (a consumer logs it at construction, before it joins)."""
    prefixed = re.search(r"clientId=([^,\]]*)", text) or re.search(
        r"^\s*client\.id = (\S+)$", text, re.MULTILINE
    )
    assert prefixed is not None, text
    return f"{prefixed.group(1)}.log"


def members_by_epoch(tables) -> dict[int, list[str]]:
    return {g["generation_id"]: g["members"] for g in tables["generations"]}


def rounds(tables) -> list[int]:
    return [r["rounds"] for r in sorted(tables["rebalance_episodes"], key=lambda r: r["started_at"] or 0)]


# c2 joins while c1 has the partitions (c1 revokes at its next heartbeat), c3 joins 3 s later, before c2
# got what c1 released: one rebalance of two epochs; c2 crashes much later (fenced 45 s after its last
# heartbeat) and c1 leaves: one epoch each. The lone c1's own join converges at once.
JOINS_THEN_FAILURES = [
    Join(0, "c1"),
    Join(1, "c2"),
    Join(3_000, "c3"),
    Crash(60_000, "c2"),
    Leave(180_000, "c1"),
]


def test_a_4_0_broker_log_gives_each_epoch_the_members_at_its_bump():
    """GroupMetadataManager.consumerGroupHeartbeat logs "Member m joins the consumer group" before "Bumped
    group epoch to E": the joiner is in E, not in E-1; a fenced or departed member is out of the bump
    its removal causes (4.0 logs the target map, which would name them, at DEBUG only)."""
    _, sim = simulate(JOINS_THEN_FAILURES)
    out = replay(as_logged(sim, "4.x"))
    assert members_by_epoch(out) == members_by_epoch(sim.truth)
    assert members_by_epoch(out)[1] == ["c1"]


def test_a_4_0_broker_log_alone_has_no_partition_measures():
    """No 4.0 INFO line states an assignment (GroupMetadataManager.updateTargetAssignment and maybeReconcile
    log the maps at DEBUG): what moved, for how long, is unknown, so the partition measures are null, not 0."""
    _, sim = simulate(JOINS_THEN_FAILURES)
    out = replay(as_logged(sim, "4.x"))
    assert out["assignments"] == [] and out["partition_movements"] == []
    for row in out["group_daily_summary"] + out["rebalance_episodes"]:
        assert row["partitions_moved"] is None and row["partition_unavailable_ms"] is None
        assert row["stw_ms"] is None and row["revocations_wasted"] is None
    # a 3.8/3.9 broker log states them: the measures are numbers
    (day,) = replay(as_logged(sim, "3.x"))["group_daily_summary"]
    assert day["partitions_moved"] is not None and day["partition_unavailable_ms"] is not None


def test_a_4_0_broker_log_alone_presumes_convergence_after_the_members_heartbeats():
    """Every member learns a new target at its next heartbeat (group.consumer.heartbeat.interval.ms, 5 s by
    default), a revocation takes one more: an epoch bumped again sooner is the next round of the same
    rebalance, one bumped later started a new one. The presumption is marked inferred."""
    _, sim = simulate(JOINS_THEN_FAILURES)
    out = replay(as_logged(sim, "4.x"))
    assert rounds(out) == rounds(sim.truth) == [1, 2, 1, 1]
    assert [r["source"] for r in sorted(out["rebalance_episodes"], key=lambda r: r["started_at"])] == [
        "observed",  # the lone joiner: reconciled in its joining heartbeat
        "inferred",
        "inferred",
        "inferred",  # the input ends before its presumed convergence: whether it converged is presumed
    ]


def test_a_member_failing_before_the_presumed_convergence_keeps_the_epoch_open():
    """c2 crashes right after c3's join: its last heartbeat (its fence - the 45 s session timeout) is before
    it could reconcile the new epoch, so that epoch never converged and the fence's epoch is a further round."""
    _, sim = simulate([Join(0, "c1"), Join(0, "c2"), Join(20_000, "c3"), Crash(20_001, "c2")])
    assert rounds(sim.truth)[-1] == 2
    out = replay(as_logged(sim, "4.x"))
    assert rounds(out) == rounds(sim.truth)


def test_consumer_logs_with_a_4_0_broker_log_converge_when_every_member_is_stable():
    """Both sides, 4.0: no assignment-state line, but each member's log shows it reconciled (STABLE) and the
    partitions it revoked taken up by their new owner (AbstractMembershipManager); a member that is
    RECONCILING again at the same epoch reopens it."""
    _, sim = simulate(JOINS_THEN_FAILURES)
    out = replay(as_logged(sim, "4.x", "4.x"))
    assert rounds(out) == rounds(sim.truth)
    assert members_by_epoch(out) == members_by_epoch(sim.truth)


def assignments_by_epoch(tables, source: str | None = None) -> dict[int, dict[str, list[tuple[str, int]]]]:
    out: dict[int, dict[str, list[tuple[str, int]]]] = {}
    for r in tables["assignments"]:
        if source is None or r["source"] == source:
            out.setdefault(r["generation_id"], {}).setdefault(r["member_id"], []).append(
                (r["topic"], r["partition"])
            )
    return out


def test_consumer_logs_with_a_4_0_broker_log_state_each_epochs_assignment_where_every_member_logged_it():
    """4.0 logs the target map at DEBUG only, but each member logs the assignment its heartbeat brings
    ("Reconciling assignment ... Assigned partitions:", AbstractMembershipManager.maybeReconcile) under the
    member epoch of its transition line, and keeps what a revocation leaves it when it moves to the epoch
    it revoked for (CurrentAssignmentBuilder.computeNextAssignment). c1 logs epoch 1's assignment after
    epoch 2 was bumped (c2's join 1 ms later): the rows wait for it. At epoch 2 the coordinator withheld from
    c2 what c1 was still revoking (UNRELEASED_PARTITIONS) and c3's join bumped the epoch before c2's next
    heartbeat: no line states c2's share of epoch 2, so that epoch stays inferred."""
    _, sim = simulate(JOINS_THEN_FAILURES)
    events = as_logged(sim, "4.x", "4.x")
    out = replay(events)
    truth = assignments_by_epoch(sim.truth)
    observed = assignments_by_epoch(out, "observed")
    assert sorted(observed) == [1, 3, 4, 5]
    assert observed == {epoch: truth[epoch] for epoch in observed}
    assert 2 in assignments_by_epoch(out, "inferred") and "c2" not in assignments_by_epoch(out)[2]
    # resumed from a snapshot between epoch 1's close and c1's line stating it: the same rows
    events = sorted(events, key=event_order_key)
    cut = next(i for i, e in enumerate(events) if e.member_id == "c1" and e.partitions)
    first = ConsumerGroupReplayer("sim", "group")
    first.feed(events[:cut])
    assert [held.epoch for held in first.tracker.held] == [1]
    head = first.drain()
    second = ConsumerGroupReplayer("sim", "group", state=json.loads(json.dumps(first.snapshot())))
    second.feed(events[cut:])
    tail = second.finish()
    assert head["assignments"] + tail["assignments"] == out["assignments"]


def test_consumer_logs_with_a_4_0_broker_log_the_lone_member_of_an_epoch_is_withheld_nothing():
    """c1, alone in the group, drops topic u from its subscription: it revokes u's partitions on its way to the
    new epoch and keeps t's ("Reconciling assignment": assigned t, revoked u). The coordinator withholds only
    what another member still owns (CurrentAssignmentBuilder: UNRELEASED_PARTITIONS), and there is none: the
    partitions it revoked went to no one, so its line states the epoch's whole assignment (observed)."""
    _, sim = simulate(
        [Join(0, "c1"), Subscribe(60_000, "c1", ("t",)), Leave(60_500, "c1"), Join(120_000, "c2")],
        topics={"t": 3, "u": 2},
    )
    out = replay(as_logged(sim, "4.x", "4.x"))
    truth = assignments_by_epoch(sim.truth)
    assert truth[2] == {"c1": list(tps("t", 0, 1, 2))}
    assert assignments_by_epoch(out, "observed") == truth


def test_consumer_logs_with_a_4_0_broker_log_a_leave_from_stable_shows_the_epoch_converged_before_it():
    """c1, alone, revokes u's partitions for the new epoch and logs STABLE at its old epoch; its next heartbeat
    moves it to the new epoch silently (nothing more to reconcile: ConsumerMembershipManager logs no line). Its
    leave, "Member c1 with epoch 2 transitioned from STABLE to PREPARE_LEAVING" (AbstractMembershipManager
    .leaveGroup logs the epoch it holds), shows epoch 2 converged before it: the leave's epoch is a rebalance of
    its own, not a further round; when epoch 2 converged no line dates (its generation says inferred)."""
    _, sim = simulate(
        [Join(0, "c1"), Subscribe(60_000, "c1", ("t",)), Leave(60_500, "c1"), Join(120_000, "c2")],
        topics={"t": 3, "u": 2},
    )
    out = replay(as_logged(sim, "4.x", "4.x"))
    assert rounds(out) == rounds(sim.truth) == [1, 1, 1, 1]
    epoch_2 = {g["generation_id"]: g for g in out["generations"]}[2]
    assert epoch_2["source"] == "inferred" and epoch_2["stabilized_at"] is not None


def test_consumer_logs_with_a_4_0_broker_log_a_leave_from_stable_leaves_partitions_released_to_another_member_in_flight():
    """c1 joins 5 ms after c2: its heartbeat moves it to epoch 2 with nothing (UNRELEASED_PARTITIONS: c2 still
    holds its share), c2 revokes that share and moves to epoch 2 silently, then leaves from STABLE at epoch 2
    before c1's next heartbeat hands it the share (CurrentAssignmentBuilder.computeNextAssignment). Every member
    is at epoch 2, yet the partitions c2 released for it, of a topic the group still consumes, are in flight:
    epoch 2 never converged, and the leave's epoch is a further round of its rebalance (random:394)."""
    _, sim = simulate([Join(0, "c2"), Join(5, "c1"), Leave(7_000, "c2")], topics={"t": 10, "u": 1})
    out = replay(as_logged(sim, "4.x", "4.x"))
    assert rounds(out) == rounds(sim.truth) == [1, 2]


def test_consumer_logs_with_a_4_0_broker_log_partitions_a_blocked_member_was_handed_are_not_in_flight():
    """c1's poll loop stalls after it joined: c2 released t-0 and t-1 for it and left from STABLE, and at epoch 4
    (t grew) c1's "Reconciling assignment" names all of t while its blocked callback starts none. The coordinator
    needs no acknowledgement of added partitions (CurrentAssignmentBuilder: STABLE at once), so what c1's own
    block at the epoch names is handed, not in flight: epoch 4 converges and c2's rejoin opens a rebalance of its
    own (random:914)."""
    _, sim = simulate(
        [
            Join(0, "c2"),
            Join(20_000, "c1"),
            Stall(20_100, "c1"),
            Leave(22_000, "c2"),
            PartitionCount(25_000, "t", 5),
            Join(27_000, "c2"),
        ],
        topics={"t": 4},
    )
    out = replay(as_logged(sim, "4.x", "4.x"))
    assert rounds(out) == rounds(sim.truth) == [1, 3, 2]


def test_an_epochs_assignment_rows_wait_only_for_members_whose_own_log_is_in_the_input():
    """Only c1's consumer log was collected: c2 and c3 never log a line that could state an epoch's assignment,
    so the rows of the epochs c1 moved past are written as soon as c1 did, not held back to the input's end."""
    _, sim = simulate(JOINS_THEN_FAILURES)
    events = [e for e in as_logged(sim, "4.x", "4.x") if e.side == "coordinator" or e.member_id == "c1"]
    replayer = ConsumerGroupReplayer("sim", "group")
    replayer.feed(sorted(events, key=event_order_key))
    assert {row["generation_id"] for row in replayer.drain()["assignments"]} == {1, 2, 3}
    assert replayer.tracker.held == []


def test_a_fence_without_its_session_timeout_stops_the_member_45s_before_marked_inferred():
    """KIP-848 sessions are the broker's group.consumer.session.timeout.ms (GroupCoordinatorConfig, 45 s by
    default), not the client's session.timeout.ms; the fence line does not state it, so the stop one
    default session timeout before the fence is inferred, not observed."""
    _, sim = simulate([Join(0, "c1"), Join(0, "c2"), Crash(30_000, "c2")])
    out = replay(as_logged(sim, "3.x"))
    failed = [m for m in out["partition_movements"] if m["stop_cause"] == "member_failed"]
    (removed,) = of_type(sim, EventType.MEMBER_REMOVED, "c2")
    assert failed and {(m["revoked_at"], m["source"]) for m in failed} == {(removed.ts - 45_000, "inferred")}
    stated = ReplaySettings(session_timeout_ms=45_000, consumer_heartbeat_interval_ms=5_000)
    configured = replay(as_logged(sim, "3.x"), settings=stated)
    assert {m["source"] for m in configured["partition_movements"] if m["stop_cause"] == "member_failed"} == {
        "observed"
    }


def test_a_joining_client_is_in_no_epoch_before_its_first_member_epoch():
    """Consumers' logs alone: "Member m with epoch 0 transitioned from UNSUBSCRIBED to JOINING" is a heartbeat
    sent, not a member; m is one from the epoch its first response carries (ConsumerMembershipManager:
    JOINING -> RECONCILING with the member epoch), so it is not among the members of the epoch before."""
    _, sim = simulate([Join(0, "c1"), Join(1, "c2")])
    out = replay(as_logged(sim, None, "4.x"))
    assert members_by_epoch(out)[1] == ["c1"]
    assert members_by_epoch(out) == members_by_epoch(sim.truth)


def test_consumer_logs_alone_a_member_whose_partitions_go_elsewhere_unrevoked_was_removed():
    """A crashed member's log just stops. The coordinator gives a partition to another member only once its
    owner revoked it or was removed (CurrentAssignmentBuilder keeps it UNRELEASED_PARTITIONS until then), so a
    partition added elsewhere that its owner never revoked says the owner is out of the group; when it stopped,
    no line shows: inferred."""
    _, sim = simulate([Join(0, "c1"), Join(0, "c2"), Crash(30_000, "c2")])
    out = replay(as_logged(sim, None, "4.x"))
    assert members_by_epoch(out) == members_by_epoch(sim.truth)
    failed = [m for m in out["partition_movements"] if m["from_member_id"] == "c2"]
    assert failed and {(m["to_member_id"], m["stop_cause"], m["source"]) for m in failed} == {
        ("c1", "member_failed", "inferred")
    }
    assert out["anomalies"] == []


@pytest.mark.parametrize("era", ["3.x", "4.x"])
def test_consumer_logs_alone_an_epoch_converges_while_a_member_s_callback_for_added_partitions_is_blocked(
    era,
):
    """c3 leaves while c2's application thread is blocked (a slow poll). c2's heartbeat thread still takes the
    new epoch: it logs RECONCILING at it with its "Reconciling assignment" (only partitions added), and the
    coordinator needs no acknowledgement of added partitions (CurrentAssignmentBuilder: STABLE at once), so
    once c1 is STABLE at that epoch too, it converged, though c2's callback has not started what it was given.
    c2's poll timeout leave later is a rebalance of its own, not a further round."""
    _, sim = simulate(
        [
            Join(0, "c1"),
            Join(0, "c2"),
            Join(1_000, "c3"),
            Pause(60_000, "c2", duration_ms=18_000, kind="poll"),
            Leave(60_500, "c3"),
        ],
        topics={"t": 4, "u": 4},
        assignor="uniform",
        session_timeout_ms=6_000,
        max_poll_interval_ms=12_000,
    )
    assert rounds(sim.truth) == [1, 2, 1, 1, 1]
    assert rounds(replay(as_logged(sim, None, era))) == rounds(sim.truth)


def test_consumer_logs_alone_a_doubted_member_showing_the_epoch_itself_is_one_of_its_members():
    """c3 drops topic u as c1 joins: the subscription change bumps an epoch no member line explains, and c3,
    silent at it, may have been removed unseen, so it is in doubt in the epochs after. Its own line at epoch 5
    (after c2's leave), with no FENCED or JOINING before it, shows the coordinator had it at that epoch (a
    removed member's heartbeat is refused and it rejoins: ConsumerMembershipManager): epoch 5's members are
    known. Epoch 4's row, written before that line, stays null (never a guess)."""
    _, sim = simulate(
        [
            Join(0, "c3"),
            Join(500, "c2"),
            Subscribe(121_000, "c3", ("t",)),
            Join(121_000, "c1"),
            Leave(241_000, "c2"),
        ],
        topics={"t": 10, "u": 4},
        assignor="server-range",
        session_timeout_ms=6_000,
        max_poll_interval_ms=6_000,
    )
    out = replay(as_logged(sim, None, "4.x"))
    truth = members_by_epoch(sim.truth)
    assert members_by_epoch(out) == {**truth, 4: None}
    assert truth[5] == ["c1", "c3"]


def test_consumer_logs_alone_a_leave_or_a_join_starts_the_next_rebalance_not_a_further_round():
    """A member's PREPARE_LEAVING or JOINING is what bumps the next epoch (the coordinator's leave/join), not a
    step of the current one; only RECONCILING at an epoch already reached reopens it."""
    _, sim = simulate(JOINS_THEN_FAILURES)
    out = replay(as_logged(sim, None, "4.x"))
    assert rounds(out) == rounds(sim.truth)


@pytest.mark.parametrize(
    "sides", [("4.x", None), (None, "4.x"), ("4.x", "4.x")], ids=["broker", "consumers", "both"]
)
def test_a_static_member_replaced_at_a_converged_epoch_is_not_one_of_its_members(sides):
    """A static member back under a new member id gets the epoch as it is (GroupMetadataManager: the target is
    recomputed, no bump), so an epoch that converged before keeps the members it converged with; a temporarily
    left static member whose reserved partitions are given to another had its session expire."""
    actions = [
        Join(0, "c1"),
        Join(0, "c2"),
        Restart(60_000, "c1", down_ms=10_000),
        Restart(120_000, "c2", down_ms=90_000),
    ]
    _, sim = simulate(actions, static_membership=True)
    out = replay(as_logged(sim, *sides))
    assert members_by_epoch(out) == members_by_epoch(sim.truth)
    assert rounds(out) == rounds(sim.truth)


def test_a_lone_joiner_of_an_emptied_group_converges_in_its_joining_heartbeat():
    """The group emptied (its only member left), then c2 joins alone: CurrentAssignmentBuilder gives it
    everything in the heartbeat that created it (nothing is owned by another member), so its epoch converged
    at once and c3 joining 2 s later starts a new rebalance, not a further round."""
    _, sim = simulate([Join(0, "c1"), Leave(10_000, "c1"), Join(20_000, "c2"), Join(22_000, "c3")])
    out = replay(as_logged(sim, "4.x"))
    assert rounds(out) == rounds(sim.truth)
    epoch = {g["generation_id"]: g for g in out["generations"]}[3]
    assert (epoch["members"], epoch["stabilized_at"]) == (["c2"], epoch["join_completed_at"])


def test_consumer_logs_a_joiner_given_nothing_yet_is_still_reconciling():
    """c2 joins a group whose partitions c1 owns: its first response assigns it nothing (the partitions are
    UNRELEASED until c1 revokes them at its next heartbeat) and it logs STABLE, while c1, with nothing logged
    yet, still owes the revocation. c3 joining before that is a further round of the same rebalance."""
    _, sim = simulate([Join(0, "c1"), Join(22_000, "c2"), Join(23_000, "c3")])
    assert rounds(sim.truth) == [1, 2]
    for sides in [("4.x", "4.x"), (None, "4.x")]:
        assert rounds(replay(as_logged(sim, *sides))) == [1, 2]


# =================================== Kafka 4.0 broker logs: what the INFO lines tell of convergence
def target_4_0(log: Log, when: str, epoch: int) -> None:
    """4.0 INFO "Computed a new target assignment for epoch E with 'uniform' assignor in Nms." (no map)."""
    log.add(
        when,
        "coordinator",
        EventType.TARGET_ASSIGNMENT_COMPUTED,
        assignment_epoch=epoch,
        protocol_name="uniform",
    )


def episodes(tables) -> list[tuple[int, str]]:
    return [
        (r["rounds"], r["source"])
        for r in sorted(tables["rebalance_episodes"], key=lambda r: r["started_at"])
    ]


def log_4_0_member_leaves_then_returns(returns_after: str) -> Log:
    """Kafka 4.0 broker lines of one group (no target map, no assignment state: both DEBUG): c1 and c2 in the
    group; c2 leaves; the target of that epoch is computed at c1's next heartbeat; c2 comes back (new
    member id c2b) `returns_after` the target."""
    log, c, day = Log("g"), "coordinator", "2025-03-10 14:"
    log.add(f"{day}00:00,000", c, EventType.JOIN_RECEIVED, member_id="c1")
    log.add(f"{day}00:00,000", c, EventType.GROUP_EPOCH_BUMPED, group_epoch=1)
    target_4_0(log, f"{day}00:00,001", 1)
    log.add(f"{day}00:01,000", c, EventType.JOIN_RECEIVED, member_id="c2")
    log.add(f"{day}00:01,000", c, EventType.GROUP_EPOCH_BUMPED, group_epoch=2)
    target_4_0(log, f"{day}00:01,001", 2)
    log.add(f"{day}01:00,000", c, EventType.MEMBER_REMOVED, member_id="c2")
    log.add(f"{day}01:00,000", c, EventType.GROUP_EPOCH_BUMPED, group_epoch=3)
    target_4_0(log, f"{day}01:03,000", 3)
    log.add(f"{day}{returns_after}", c, EventType.JOIN_RECEIVED, member_id="c2b")
    log.add(f"{day}{returns_after}", c, EventType.GROUP_EPOCH_BUMPED, group_epoch=4)
    target_4_0(log, f"{day}{returns_after}", 4)
    return log


def test_a_4_0_broker_log_the_one_member_left_may_still_owe_a_revocation_so_its_epoch_is_presumed():
    """After c2's leave, c1 is the only member and is assigned everything, but it may still owe the revocation
    epoch 2 asked of it (CurrentAssignmentBuilder keeps it UNREVOKED_PARTITIONS until it acknowledges), which no
    4.0 INFO line shows: epoch 3 is not taken as converged at its target line. c2b back 2 s after that target
    (before c1's next heartbeat is surely due) is presumed a further round, 30 s after a new rebalance; both
    say inferred."""
    soon = log_4_0_member_leaves_then_returns("01:05,000").replay()
    assert episodes(soon)[2:] == [(2, "inferred")]
    later = log_4_0_member_leaves_then_returns("01:33,000").replay()
    assert episodes(later)[2:] == [(1, "inferred"), (1, "inferred")]


def test_a_4_0_broker_log_a_bump_before_the_members_heartbeats_are_due_is_a_presumed_further_round():
    """Epoch 2 has two members; the other one (not the joiner that computed the target) learns it at its next
    heartbeat, up to group.consumer.heartbeat.interval.ms later, and no 4.0 INFO line says when. Epoch 3 bumped
    sooner than that merges into the same rebalance, and the episode says the merge is inferred; bumped later,
    epoch 2 is presumed converged, inferred too: never a silent guess."""
    log = log_4_0_member_leaves_then_returns("01:05,000")
    soon = [e for e in log.events if e.ts < ms("2025-03-10 14:01:00,000")]
    c = "coordinator"
    log.events = soon
    log.add("2025-03-10 14:00:02,000", c, EventType.MEMBER_REMOVED, member_id="c2")
    log.add("2025-03-10 14:00:02,000", c, EventType.GROUP_EPOCH_BUMPED, group_epoch=3)
    log.add("2025-03-10 14:00:03,000", c, EventType.TARGET_ASSIGNMENT_COMPUTED, assignment_epoch=3, protocol_name="uniform")  # fmt: skip
    merged = log.replay()
    assert episodes(merged) == [(1, "observed"), (2, "inferred")]
    later = log_4_0_member_leaves_then_returns("01:05,000").replay()
    assert episodes(later)[1] == (1, "inferred")


def test_a_4_0_target_without_its_map_makes_ownership_unknown_until_the_group_empties():
    """Ownership per episode (OwnershipTimeline.owners_unknown / owners_known), not for the whole input: a
    4.0 target line names no member (the map is DEBUG) and c1 has no line of its own, so from that target who
    owns what is unknown (its episodes' and days' partition measures null). Once the group empties nobody
    owns anything (OwnershipTimeline.group_empty): c3 then joins with its own log (AsyncKafkaConsumer's
    callbacks), and the next day's rebalance has numbers again."""
    log, c = Log("g"), "coordinator"
    day1, day2 = "2025-03-10 14:", "2025-03-11 09:"
    log.add(f"{day1}00:00,000", c, EventType.JOIN_RECEIVED, member_id="c1")
    log.add(f"{day1}00:00,000", c, EventType.GROUP_EPOCH_BUMPED, group_epoch=1)
    target_4_0(log, f"{day1}00:00,001", 1)
    log.add(f"{day1}05:00,000", c, EventType.MEMBER_REMOVED, member_id="c1")
    log.add(f"{day1}05:00,000", c, EventType.GROUP_EPOCH_BUMPED, group_epoch=2)
    m = "member"
    log.add(f"{day2}00:00,000", m, EventType.MEMBER_STATE_CHANGED, member_id="c3", member_epoch=0,
            attributes={"from_state": "UNSUBSCRIBED", "to_state": "JOINING"})  # fmt: skip
    log.add(f"{day2}00:00,001", c, EventType.JOIN_RECEIVED, member_id="c3")
    log.add(f"{day2}00:00,001", c, EventType.GROUP_EPOCH_BUMPED, group_epoch=3)
    target_4_0(log, f"{day2}00:00,001", 3)
    log.add(f"{day2}00:00,002", m, EventType.MEMBER_STATE_CHANGED, member_id="c3", member_epoch=3,
            attributes={"from_state": "JOINING", "to_state": "RECONCILING"})  # fmt: skip
    log.add(f"{day2}00:00,004", m, EventType.PARTITIONS_ASSIGNED, member_id="c3", partitions=tps("t", 0, 1))
    log.add(f"{day2}00:00,004", m, EventType.MEMBER_STATE_CHANGED, member_id="c3", member_epoch=3,
            attributes={"from_state": "RECONCILING", "to_state": "ACKNOWLEDGING"})  # fmt: skip
    log.add(f"{day2}00:00,004", m, EventType.MEMBER_STATE_CHANGED, member_id="c3", member_epoch=3,
            attributes={"from_state": "ACKNOWLEDGING", "to_state": "STABLE"})  # fmt: skip
    out = log.replay()
    by_epoch = {r["first_generation_id"]: r for r in out["rebalance_episodes"]}
    assert by_epoch[1]["partitions_moved"] is None and by_epoch[1]["stw_ms"] is None
    assert by_epoch[3]["partitions_moved"] == 0 and by_epoch[3]["partition_unavailable_ms"] == 0
    days = {str(d["event_date"]): d for d in out["group_daily_summary"]}
    assert days["2025-03-10"]["partitions_moved"] is None
    assert days["2025-03-11"]["partitions_moved"] == 0 and days["2025-03-11"]["stw_ms"] == 0


def test_a_static_member_back_under_its_own_member_id_keeps_its_own_logs_timing():
    """A 4.0 consumer keeps its member id across rejoins, so GroupMetadataManager's "Static member with
    instance id c1 re-joins ... Created a new member c1 to replace the existing member c1" can name the same
    id: its own log is still there, its partitions are timed by its callbacks and known (not null)."""
    log, c, m, day = Log("g"), "coordinator", "member", "2025-03-10 14:"

    def state(when, epoch, old, new):
        log.add(f"{day}{when}", m, EventType.MEMBER_STATE_CHANGED, member_id="c1", group_instance_id="c1",
                member_epoch=epoch, attributes={"from_state": old, "to_state": new})  # fmt: skip

    state("00:00,000", 0, "UNSUBSCRIBED", "JOINING")
    log.add(f"{day}00:00,001", c, EventType.JOIN_RECEIVED, member_id="c1", group_instance_id="c1")
    log.add(f"{day}00:00,001", c, EventType.GROUP_EPOCH_BUMPED, group_epoch=1)
    target_4_0(log, f"{day}00:00,001", 1)
    state("00:00,002", 1, "JOINING", "RECONCILING")
    log.add(f"{day}00:00,003", m, EventType.PARTITIONS_ASSIGNED, member_id="c1", partitions=tps("t", 0, 1))
    state("00:00,003", 1, "RECONCILING", "ACKNOWLEDGING")
    state("00:00,003", 1, "ACKNOWLEDGING", "STABLE")
    log.add(f"{day}01:00,000", m, EventType.PARTITIONS_REVOKED, member_id="c1", partitions=tps("t", 0, 1))
    log.add(
        f"{day}01:00,001",
        c,
        EventType.MEMBER_REMOVED,
        member_id="c1",
        group_instance_id="c1",
        member_epoch=-2,
    )
    log.add(f"{day}01:10,000", c, EventType.STATIC_MEMBER_REPLACED, member_id="c1", group_instance_id="c1",
            attributes={"old_member_id": "c1"})  # fmt: skip
    target_4_0(log, f"{day}01:10,000", 1)
    log.add(f"{day}01:10,002", m, EventType.PARTITIONS_ASSIGNED, member_id="c1", partitions=tps("t", 0, 1))
    out = log.replay()
    assert all(r["partition_unavailable_ms"] is not None for r in out["rebalance_episodes"])
    (day_row,) = out["group_daily_summary"]
    assert day_row["partition_unavailable_ms"] is not None


def test_a_4_0_epoch_with_a_static_member_away_converges_only_with_its_replacement():
    """c1 left temporarily (member epoch -2), then a metadata change bumps epoch 3. The group is not Stable
    while a member is not at the target epoch (ConsumerGroup.maybeUpdateGroupState), so epoch 3 cannot have
    converged before c1's instance came back as c1b, whose joining heartbeat recomputes the target and
    reconciles it (GroupMetadataManager.consumerGroupHeartbeat): epoch 3's members are c1b and c2."""
    log, c, day = Log("g"), "coordinator", "2025-03-10 14:"
    log.add(f"{day}00:00,000", c, EventType.JOIN_RECEIVED, member_id="c1", group_instance_id="i1")
    log.add(f"{day}00:00,000", c, EventType.GROUP_EPOCH_BUMPED, group_epoch=1)
    target_4_0(log, f"{day}00:00,001", 1)
    log.add(f"{day}00:00,002", c, EventType.JOIN_RECEIVED, member_id="c2", group_instance_id="i2")
    log.add(f"{day}00:00,002", c, EventType.GROUP_EPOCH_BUMPED, group_epoch=2)
    target_4_0(log, f"{day}00:00,002", 2)
    log.add(
        f"{day}01:00,000",
        c,
        EventType.MEMBER_REMOVED,
        member_id="c1",
        group_instance_id="i1",
        member_epoch=-2,
    )
    log.add(f"{day}01:05,000", c, EventType.TOPIC_METADATA_CHANGED)
    log.add(f"{day}01:05,000", c, EventType.GROUP_EPOCH_BUMPED, group_epoch=3)
    target_4_0(log, f"{day}01:05,000", 3)
    log.add(f"{day}01:23,000", c, EventType.STATIC_MEMBER_REPLACED, member_id="c1b", group_instance_id="i1",
            attributes={"old_member_id": "c1"})  # fmt: skip
    target_4_0(log, f"{day}01:23,000", 3)
    out = log.replay()
    epoch_3 = {g["generation_id"]: g for g in out["generations"]}[3]
    assert (epoch_3["members"], epoch_3["stabilized_at"]) == (["c1b", "c2"], ms("2025-03-10 14:01:23,000"))


def test_consumer_logs_with_a_4_0_broker_log_a_partition_nobody_consumes_keeps_the_epoch_open():
    """c2 crashed (its log just stops, its last line STABLE); t grows to 8 partitions ("Computed new subscription
    metadata: {t=TopicMetadata(..., numPartitions=8 ...)}"). The uniform assignor gives every partition of a
    subscribed topic to a subscriber (GroupMetadataManager.updateTargetAssignment), so t-6/t-7 not consumed by
    anyone says a member has not taken its share: the epoch has not converged, and c3's join is a further
    round of that rebalance, which ends once c2 is fenced and its share goes to the living members."""
    _, sim = simulate(
        [
            Join(0, "c1"),
            Join(0, "c2"),
            Crash(20_000, "c2"),
            PartitionCount(21_000, "t", 8),
            Join(30_000, "c3"),
        ]
    )
    assert rounds(sim.truth) == [1, 1, 3]
    assert rounds(replay(as_logged(sim, "4.x", "4.x"))) == [1, 1, 3]


def test_consumer_logs_with_a_4_0_broker_log_a_fenced_member_whose_own_line_stated_the_epoch_had_it():
    """c5 pauses past its session and is fenced; it rejoins alone (its joining heartbeat reconciles it: nothing
    is owned by another member) and logs STABLE at the new epoch, then crashes and is fenced again. The fence
    line does not state the session timeout, so its last heartbeat is only bounded by its join; but its own line
    states the epoch, which the client logs from a heartbeat response (ConsumerMembershipManager
    .onHeartbeatSuccess): the coordinator had it there, so that epoch converged and the fence opens a
    rebalance of its own."""
    _, sim = simulate(
        [Join(0, "c5"), Pause(2_000, "c5", duration_ms=8_000), Crash(11_000, "c5")],
        topics={"t": 2},
        session_timeout_ms=6_000,
        max_poll_interval_ms=12_000,
    )
    assert rounds(sim.truth) == [1, 1, 1, 1]
    assert rounds(replay(as_logged(sim, "4.x", "4.x"))) == rounds(sim.truth)


def client_line(log: Log, when: str, member: str, instance: str, epoch: int, old: str, new: str) -> None:
    """ConsumerMembershipManager "Member m with epoch E transitioned from OLD to NEW." (a static member's log)."""
    log.add(when, "member", EventType.MEMBER_STATE_CHANGED, member_id=member, group_instance_id=instance,
            member_epoch=epoch, attributes={"from_state": old, "to_state": new})  # fmt: skip


def client_joins(log: Log, when: str, member: str, instance: str, epoch: int, *partitions: int) -> None:
    """A member's log of its join: JOINING, the response's epoch (RECONCILING), its partitions, STABLE."""
    stamp = f"2025-03-10 14:{when}"
    client_line(log, f"{stamp},000", member, instance, 0, "UNSUBSCRIBED", "JOINING")
    client_line(log, f"{stamp},002", member, instance, epoch, "JOINING", "RECONCILING")
    log.add(f"{stamp},004", "member", EventType.PARTITIONS_ASSIGNED, member_id=member, group_instance_id=instance,
            partitions=tps("t", *partitions))  # fmt: skip
    client_line(log, f"{stamp},004", member, instance, epoch, "RECONCILING", "ACKNOWLEDGING")
    client_line(log, f"{stamp},004", member, instance, epoch, "ACKNOWLEDGING", "STABLE")


def test_consumer_logs_alone_a_static_instance_accepted_again_means_its_previous_member_is_out():
    """c1 (instance i1) crashed, its log silent. c1b with instance i1 is accepted (given epoch 4): the
    coordinator accepts an instance id only once its previous member left or was removed
    (GroupMetadataManager.throwIfInstanceIdIsUnreleased, else UNRELEASED_INSTANCE_ID), so c1 is no member of
    epoch 4 (what c1 consumed stops, inferred, once another member is assigned it)."""
    log = Log("g")
    client_joins(log, "00:00", "c1", "i1", 1, 0, 1)
    client_joins(log, "00:05", "c2", "i2", 2)
    client_joins(log, "02:00", "c1b", "i1", 4)  # assigned nothing yet: no partition of c1 moves
    out = log.replay()
    assert members_by_epoch(out)[4] == ["c1b", "c2"]


def test_consumer_logs_alone_a_static_member_replaced_within_an_unconverged_epoch_is_not_one_of_its_members():
    """c1 (instance i1) left temporarily (epoch -2) and epoch 3 cannot converge while it is away; c1b with
    instance i1 replaces it at that same epoch (GroupMetadataManager.replaceMember: no bump): epoch 3's
    members are c1b and c2, not c1."""
    log = Log("g")
    client_joins(log, "00:00", "c1", "i1", 1, 0, 1)
    client_joins(log, "00:05", "c2", "i2", 2)
    day = "2025-03-10 14:"
    log.add(f"{day}01:00,000", "member", EventType.PARTITIONS_REVOKED, member_id="c1", group_instance_id="i1",
            partitions=tps("t", 0, 1))  # fmt: skip
    client_line(log, f"{day}01:00,000", "c1", "i1", 2, "STABLE", "PREPARE_LEAVING")
    client_line(log, f"{day}01:00,001", "c1", "i1", -2, "PREPARE_LEAVING", "LEAVING")
    client_line(log, f"{day}01:00,001", "c1", "i1", 2, "LEAVING", "UNSUBSCRIBED")
    client_line(log, f"{day}01:03,000", "c2", "i2", 3, "STABLE", "RECONCILING")
    client_line(log, f"{day}01:03,000", "c2", "i2", 3, "RECONCILING", "ACKNOWLEDGING")
    client_line(log, f"{day}01:03,000", "c2", "i2", 3, "ACKNOWLEDGING", "STABLE")
    client_joins(log, "01:20", "c1b", "i1", 3, 0, 1)
    out = log.replay()
    assert members_by_epoch(out)[3] == ["c1b", "c2"]


def test_consumer_logs_alone_a_static_member_back_after_its_session_expired_was_a_member_of_its_last_epoch():
    """c1 (instance i1) is alone at epoch 2 and leaves temporarily (epoch -2, no bump). c1b with instance i1
    comes back much later and is answered with epoch 4, not the current one: not a replacement in place
    (GroupMetadataManager.replaceMember bumps nothing) but a join after c1's session expired (epoch 3). c1 was
    the member of epoch 2 all along."""
    log = Log("g")
    client_joins(log, "00:00", "c1", "i1", 1, 0, 1)
    day = "2025-03-10 14:"
    client_line(log, f"{day}01:00,000", "c1", "i1", 1, "STABLE", "RECONCILING")
    client_line(log, f"{day}01:00,002", "c1", "i1", 1, "RECONCILING", "ACKNOWLEDGING")
    client_line(log, f"{day}01:00,002", "c1", "i1", 1, "ACKNOWLEDGING", "STABLE")
    client_line(log, f"{day}01:00,500", "c1", "i1", 2, "STABLE", "PREPARE_LEAVING")
    log.add(f"{day}01:00,505", "member", EventType.PARTITIONS_REVOKED, member_id="c1", group_instance_id="i1",
            partitions=tps("t", 0, 1))  # fmt: skip
    client_line(log, f"{day}01:00,505", "c1", "i1", -2, "PREPARE_LEAVING", "LEAVING")
    client_line(log, f"{day}01:00,505", "c1", "i1", 2, "LEAVING", "UNSUBSCRIBED")
    client_joins(log, "03:20", "c1b", "i1", 4, 0, 1)
    out = log.replay()
    assert members_by_epoch(out)[2] == ["c1"]
    assert members_by_epoch(out)[4] == ["c1b"]


_RESTARTED = "INFO [Consumer clientId=c2, groupId=g] Member {0} with epoch {1} transitioned from {2} to {3}. (org.apache.kafka.clients.consumer.internals.ConsumerMembershipManager)"  # fmt: skip


def test_consumer_logs_alone_a_crashed_member_whose_consumer_restarted_makes_later_member_lists_unknown():
    """Client c2 joins as member c2 and falls silent mid-reconcile (a crash); it restarts and joins as c2b. A
    consumer keeps its member id for life, so c2 is dead, but the coordinator counts it until its session
    expires, group.consumer.session.timeout.ms (the broker's) after its last heartbeat: no consumer log states
    when. Epoch 2 (c2's own last) has c2. c2b is answered with epoch 3, right after 2: a new member gets the
    epoch its own join bumped (GroupMetadataManager.consumerGroupHeartbeat), so no removal came between and
    epoch 3 still counts c2. Epoch 4's bump no line explains (c2's session expiring, or else): its member
    list is unknown (null), never a guess either way."""
    lines = [
        *(line for line in _joins("00:00", "c1", 1, "t-0, t-1") if "GroupCoordinator" not in line),
        _stamped("00:02,000", _MM.format("c2", 0, "UNSUBSCRIBED", "JOINING")),
        _stamped("00:02,002", _MM.format("c2", 2, "JOINING", "RECONCILING")),  # and nothing more from c2
        _stamped("00:05,000", _MM.format("c1", 2, "STABLE", "RECONCILING")),  # c2 now silent: crashed
        _stamped("00:05,002", _CB.format("c1", "Revoke previously assigned partitions", "t-1")),
        _stamped("00:05,002", _MM.format("c1", 2, "RECONCILING", "ACKNOWLEDGING")),
        _stamped("00:05,002", _MM.format("c1", 2, "ACKNOWLEDGING", "STABLE")),
        _stamped("00:09,000", _RESTARTED.format("c2b", 0, "UNSUBSCRIBED", "JOINING")),
        _stamped("00:09,002", _RESTARTED.format("c2b", 3, "JOINING", "RECONCILING")),
        _stamped("00:09,004", _RESTARTED.format("c2b", 3, "RECONCILING", "ACKNOWLEDGING")),
        _stamped("00:09,004", _RESTARTED.format("c2b", 3, "ACKNOWLEDGING", "STABLE")),
        _stamped("00:20,000", _MM.format("c1", 4, "STABLE", "RECONCILING")),  # c2 fenced at some point
        _stamped("00:20,002", _MM.format("c1", 4, "RECONCILING", "ACKNOWLEDGING")),
        _stamped("00:20,002", _MM.format("c1", 4, "ACKNOWLEDGING", "STABLE")),
    ]
    from rebalance_core.kafka_logs import parse_lines

    parsed = parse_lines(lines, file="consumers.log", cluster="sim")
    assert parsed.quarantine == []
    generations = {g["generation_id"]: g for g in replay(parsed.events, group="g")["generations"]}
    assert generations[2]["members"] == ["c1", "c2"]
    assert generations[3]["members"] == ["c1", "c2", "c2b"]
    assert generations[4]["members"] is None
    assert generations[4]["member_count"] is None


def test_consumer_logs_alone_a_crashed_member_whose_partition_is_handed_on_is_no_member_of_that_epoch():
    """c2 settles with t-1 at epoch 2 and crashes (its log silent); its client restarts as c2b, answered with
    epoch 3 (its join alone). Epoch 4's bump no line explains, so c2, dead but counted until its session
    expires, is in doubt there; then c2b is handed t-1 at epoch 4, which c2 never revoked. The coordinator
    withholds a partition until its owner released it or was removed (CurrentAssignmentBuilder:
    UNRELEASED_PARTITIONS), so c2 was removed by then and epoch 4's members are c1 and c2b."""
    lines = [
        *(line for line in _c1_and_c2_settled_at_epoch_2() if "GroupCoordinator" not in line),
        _stamped("00:09,000", _RESTARTED.format("c2b", 0, "UNSUBSCRIBED", "JOINING")),
        _stamped("00:09,002", _RESTARTED.format("c2b", 3, "JOINING", "RECONCILING")),
        _stamped("00:09,004", _RESTARTED.format("c2b", 3, "RECONCILING", "ACKNOWLEDGING")),
        _stamped("00:09,004", _RESTARTED.format("c2b", 3, "ACKNOWLEDGING", "STABLE")),
        _stamped("00:55,000", _RESTARTED.format("c2b", 4, "STABLE", "RECONCILING")),
        _stamped("00:55,002", _CB.format("c2", "Adding newly assigned partitions:", "t-1")),
        _stamped("00:55,002", _RESTARTED.format("c2b", 4, "RECONCILING", "ACKNOWLEDGING")),
        _stamped("00:55,002", _RESTARTED.format("c2b", 4, "ACKNOWLEDGING", "STABLE")),
        _stamped("00:56,000", _MM.format("c1", 4, "STABLE", "RECONCILING")),
        _stamped("00:56,002", _MM.format("c1", 4, "RECONCILING", "ACKNOWLEDGING")),
        _stamped("00:56,002", _MM.format("c1", 4, "ACKNOWLEDGING", "STABLE")),
    ]
    from rebalance_core.kafka_logs import parse_lines

    parsed = parse_lines(lines, file="consumers.log", cluster="sim")
    assert parsed.quarantine == []
    members = members_by_epoch(replay(parsed.events, group="g"))
    assert members[3] == ["c1", "c2", "c2b"]
    assert members[4] == ["c1", "c2b"]


def test_consumer_logs_alone_a_member_learning_it_was_fenced_makes_the_epoch_opened_while_it_was_silent_unknown():
    """c2 pauses after epoch 2 (silent); c3 joins at epoch 4. c2 resumes and learns it was FENCED: its
    session expired at an instant no consumer log shows (group.consumer.session.timeout.ms, the broker's), so
    whether epoch 4 still counted it cannot be told (null); it rejoins at epoch 5."""
    lines = [
        *(line for line in _c1_and_c2_settled_at_epoch_2() if "GroupCoordinator" not in line),
        *(line for line in _joins("01:00", "c3", 4, "") if "GroupCoordinator" not in line),
        _stamped("01:30,000", _MM.format("c2", 2, "STABLE", "FENCED")),
        _stamped("01:30,000", _CB.format("c2", "Lost previously assigned partitions", "t-1")),
        _stamped("01:30,001", _MM.format("c2", 0, "FENCED", "JOINING")),
        _stamped("01:30,003", _MM.format("c2", 5, "JOINING", "RECONCILING")),
        _stamped("01:30,005", _MM.format("c2", 5, "RECONCILING", "ACKNOWLEDGING")),
        _stamped("01:30,005", _MM.format("c2", 5, "ACKNOWLEDGING", "STABLE")),
    ]
    from rebalance_core.kafka_logs import parse_lines

    parsed = parse_lines(lines, file="consumers.log", cluster="sim")
    assert parsed.quarantine == []
    members = members_by_epoch(replay(parsed.events, group="g"))
    assert members[2] == ["c1", "c2"]
    assert members[4] is None
    assert members[5] == ["c1", "c2", "c3"]


def test_consumer_logs_alone_a_restart_overlapping_a_graceful_close_keeps_the_member_lists_known():
    """Client c2's new consumer c2b joins while c2 is still closing (PREPARE_LEAVING, then its leave): no
    crash, every epoch's members are known."""
    lines = [
        *(line for line in _c1_and_c2_settled_at_epoch_2() if "GroupCoordinator" not in line),
        _stamped("01:00,000", _MM.format("c2", 2, "STABLE", "PREPARE_LEAVING")),
        _stamped("01:00,001", _RESTARTED.format("c2b", 0, "UNSUBSCRIBED", "JOINING")),
        _stamped("01:00,002", _CB.format("c2", "Revoke previously assigned partitions", "t-1")),
        _stamped("01:00,002", _MM.format("c2", -1, "PREPARE_LEAVING", "LEAVING")),
        _stamped("01:00,002", _MM.format("c2", 2, "LEAVING", "UNSUBSCRIBED")),
        _stamped("01:00,003", _RESTARTED.format("c2b", 4, "JOINING", "RECONCILING")),
        _stamped("01:00,005", _RESTARTED.format("c2b", 4, "RECONCILING", "ACKNOWLEDGING")),
        _stamped("01:00,005", _RESTARTED.format("c2b", 4, "ACKNOWLEDGING", "STABLE")),
    ]
    from rebalance_core.kafka_logs import parse_lines

    parsed = parse_lines(lines, file="consumers.log", cluster="sim")
    assert parsed.quarantine == []
    generations = replay(parsed.events, group="g")["generations"]
    assert all(g["members"] is not None for g in generations)
    assert members_by_epoch({"generations": generations})[4] == ["c1", "c2b"]


def test_consumer_logs_alone_a_leaver_is_a_member_of_the_epoch_a_join_opened_before_its_leave_arrived():
    """c2 logs LEAVING -> UNSUBSCRIBED once its leave heartbeat (epoch -1) is sent; c3's join answered with
    epoch 3, right after the epoch 2 c2 left in, was bumped by that join alone: every removal bumps the epoch
    (GroupMetadataManager.consumerGroupFenceMember), so c2's leave had not arrived and c2 is in epoch 3; its
    leave is epoch 4."""
    lines = [
        *(line for line in _c1_and_c2_settled_at_epoch_2() if "GroupCoordinator" not in line),
        _stamped("01:00,000", _MM.format("c2", 2, "STABLE", "PREPARE_LEAVING")),
        _stamped("01:00,002", _CB.format("c2", "Revoke previously assigned partitions", "t-1")),
        _stamped("01:00,002", _MM.format("c2", -1, "PREPARE_LEAVING", "LEAVING")),
        _stamped("01:00,002", _MM.format("c2", 2, "LEAVING", "UNSUBSCRIBED")),
        _stamped("01:00,003", _MM.format("c3", 0, "UNSUBSCRIBED", "JOINING")),
        _stamped("01:00,005", _MM.format("c3", 3, "JOINING", "RECONCILING")),
        _stamped("01:00,007", _CB.format("c3", "Adding newly assigned partitions:", "")),
        _stamped("01:00,007", _MM.format("c3", 3, "RECONCILING", "ACKNOWLEDGING")),
        _stamped("01:00,007", _MM.format("c3", 3, "ACKNOWLEDGING", "STABLE")),
        _stamped("01:05,000", _MM.format("c3", 4, "STABLE", "RECONCILING")),
        _stamped("01:05,002", _CB.format("c3", "Adding newly assigned partitions:", "t-1")),
        _stamped("01:05,002", _MM.format("c3", 4, "RECONCILING", "ACKNOWLEDGING")),
        _stamped("01:05,002", _MM.format("c3", 4, "ACKNOWLEDGING", "STABLE")),
    ]
    from rebalance_core.kafka_logs import parse_lines

    parsed = parse_lines(lines, file="consumers.log", cluster="sim")
    assert parsed.quarantine == []
    members = members_by_epoch(replay(parsed.events, group="g"))
    assert members[3] == ["c1", "c2", "c3"]
    assert members[4] == ["c1", "c3"]


# ======================================================= a 4.x member's own epoch field (both logs)
_GC = "INFO [GroupCoordinator id=1 topic=__consumer_offsets partition=3] [GroupId g] {} (org.apache.kafka.coordinator.group.GroupMetadataManager)"  # fmt: skip
_MM = "INFO [Consumer clientId={0}, groupId=g] Member {0} with epoch {1} transitioned from {2} to {3}. (org.apache.kafka.clients.consumer.internals.ConsumerMembershipManager)"  # fmt: skip
_CB = "INFO [Consumer clientId={0}, groupId=g] {1} [{2}] (org.apache.kafka.clients.consumer.internals.ConsumerRebalanceListenerInvoker)"  # fmt: skip


def _stamped(when: str, text: str) -> str:
    return f"[2024-01-01 00:{when}] {text}"


def _joins(when: str, member: str, epoch: int, assigned: str) -> list[str]:
    """A member's join, both sides: the broker bumps the epoch and computes the target (4.0: map at DEBUG)."""
    a, b = f"{when},000", f"{when},001"
    return [
        _stamped(a, _MM.format(member, 0, "UNSUBSCRIBED", "JOINING")),
        _stamped(b, _GC.format(f"Member {member} joins the consumer group using the consumer protocol.")),
        _stamped(b, _GC.format(f"Bumped group epoch to {epoch}.")),
        _stamped(
            b,
            _GC.format(f"Computed a new target assignment for epoch {epoch} with 'uniform' assignor in 0ms."),
        ),  # fmt: skip
        _stamped(f"{when},002", _MM.format(member, epoch, "JOINING", "RECONCILING")),
        _stamped(f"{when},004", _CB.format(member, "Adding newly assigned partitions:", assigned)),
        _stamped(f"{when},004", _MM.format(member, epoch, "RECONCILING", "ACKNOWLEDGING")),
        _stamped(f"{when},004", _MM.format(member, epoch, "ACKNOWLEDGING", "STABLE")),
    ]


def _c1_and_c2_settled_at_epoch_2() -> list[str]:
    """c1 joins with t-0 and t-1; c2 joins, c1 revokes t-1 and c2 takes it: both STABLE at epoch 2."""
    return [
        *_joins("00:00", "c1", 1, "t-0, t-1"),
        *_joins("00:02", "c2", 2, ""),
        _stamped("00:05,000", _MM.format("c1", 2, "STABLE", "RECONCILING")),
        _stamped("00:05,002", _CB.format("c1", "Revoke previously assigned partitions", "t-1")),
        _stamped("00:05,002", _MM.format("c1", 2, "RECONCILING", "ACKNOWLEDGING")),
        _stamped("00:05,002", _MM.format("c1", 2, "ACKNOWLEDGING", "STABLE")),
        _stamped("00:07,000", _MM.format("c2", 2, "STABLE", "RECONCILING")),
        _stamped("00:07,002", _CB.format("c2", "Adding newly assigned partitions:", "t-1")),
        _stamped("00:07,002", _MM.format("c2", 2, "RECONCILING", "ACKNOWLEDGING")),
        _stamped("00:07,002", _MM.format("c2", 2, "ACKNOWLEDGING", "STABLE")),
    ]


def test_both_4x_logs_a_member_stating_the_new_epoch_while_its_callback_is_blocked_is_reconciled_for_the_coordinator():
    """c2 leaves; c1's heartbeat answer carries epoch 3 with c2's partition added, nothing to revoke, so the
    coordinator has c1 STABLE at epoch 3 (CurrentAssignmentBuilder.computeNextAssignment) and the group Stable
    (ConsumerGroup.maybeUpdateGroupState). c1's log says "with epoch 3 ... to RECONCILING" (ConsumerMembershipManager
    .onHeartbeatSuccess updates the epoch before reconciling) and then nothing: its onPartitionsAssigned waits for
    a busy poll loop. Epoch 3 converged there: c4's join later is a rebalance of its own, not a round of epoch 3's."""
    lines = [
        *_c1_and_c2_settled_at_epoch_2(),
        _stamped("01:00,000", _MM.format("c2", 2, "STABLE", "PREPARE_LEAVING")),
        _stamped("01:00,002", _CB.format("c2", "Revoke previously assigned partitions", "t-1")),
        _stamped("01:00,002", _MM.format("c2", -1, "PREPARE_LEAVING", "LEAVING")),
        _stamped("01:00,002", _MM.format("c2", 2, "LEAVING", "UNSUBSCRIBED")),
        _stamped("01:00,003", _GC.format("Member c2 left the consumer group.")),
        _stamped("01:00,003", _GC.format("Bumped group epoch to 3.")),
        _stamped(
            "01:00,050",
            _GC.format("Computed a new target assignment for epoch 3 with 'uniform' assignor in 0ms."),
        ),  # fmt: skip
        _stamped("01:02,000", _MM.format("c1", 3, "STABLE", "RECONCILING")),  # its callback blocked from here
        *_joins("01:30", "c4", 4, ""),
    ]
    from rebalance_core.kafka_logs import parse_lines

    parsed = parse_lines(lines, file="mixed.log", cluster="sim")
    assert parsed.quarantine == []
    out = replay(parsed.events, group="g")
    assert episodes(out) == [(1, "observed"), (1, "observed"), (1, "observed"), (1, "observed")]


@pytest.mark.parametrize("with_broker_lines", [True, False], ids=["both-4.x", "consumers-alone"])
def test_4x_member_logs_a_member_leaving_after_a_provisional_convergence_leaves_its_moves_to_that_rebalance(
    with_broker_lines,
):
    """Epoch 2 (c2's join) converges when c2 takes t-1 from c1; with 4.0's logs only provisionally (the members'
    epochs may move silently), so its episode stays open. c2 then closes: PREPARE_LEAVING revokes t-1 before its
    leave heartbeat, whose removal bumps the epoch (GroupMetadataManager.consumerGroupFenceMember). The leave
    means the convergence held (ConsumerMembershipManager: every member STABLE, reconciled): epoch 2's episode
    moved t-1 (c1 -> c2), and t-1 going back to c1 is the next rebalance's move, not a partition without owner."""
    lines = [
        *_c1_and_c2_settled_at_epoch_2(),
        _stamped("01:00,000", _MM.format("c2", 2, "STABLE", "PREPARE_LEAVING")),
        _stamped("01:00,002", _CB.format("c2", "Revoke previously assigned partitions", "t-1")),
        _stamped("01:00,002", _MM.format("c2", -1, "PREPARE_LEAVING", "LEAVING")),
        _stamped("01:00,002", _MM.format("c2", 2, "LEAVING", "UNSUBSCRIBED")),
        _stamped("01:00,003", _GC.format("Member c2 left the consumer group.")),
        _stamped("01:00,003", _GC.format("Bumped group epoch to 3.")),
        _stamped(
            "01:00,050",
            _GC.format("Computed a new target assignment for epoch 3 with 'uniform' assignor in 0ms."),
        ),  # fmt: skip
        _stamped("01:02,000", _MM.format("c1", 3, "STABLE", "RECONCILING")),
        _stamped("01:02,002", _CB.format("c1", "Adding newly assigned partitions:", "t-1")),
        _stamped("01:02,002", _MM.format("c1", 3, "RECONCILING", "ACKNOWLEDGING")),
        _stamped("01:02,002", _MM.format("c1", 3, "ACKNOWLEDGING", "STABLE")),
    ]
    if not with_broker_lines:
        lines = [line for line in lines if "GroupCoordinator" not in line]
    from rebalance_core.kafka_logs import parse_lines

    parsed = parse_lines(lines, file="mixed.log", cluster="sim")
    assert parsed.quarantine == []
    rows = sorted(replay(parsed.events, group="g")["rebalance_episodes"], key=lambda r: r["started_at"])
    assert [r["partitions_moved"] for r in rows] == [0, 1, 1]
    assert [r["partitions_revoked"] for r in rows] == [0, 1, 0]


def test_both_4x_logs_a_member_fenced_after_a_provisional_convergence_leaves_its_moves_to_that_rebalance():
    """As above, but c2's process dies silently after epoch 2 converged: the broker fences it when its session
    expires (GroupMetadataManager: "fenced from the group because the member session expired", a bump,
    consumerGroupFenceMember). Its partitions stop at its last heartbeat, after the convergence: epoch 2's
    episode still moved t-1 to c2, and t-1 back to c1 is the next rebalance's move."""
    lines = [
        *_c1_and_c2_settled_at_epoch_2(),
        _stamped(
            "01:00,000", _GC.format("Member c2 fenced from the group because the member session expired..")
        ),
        _stamped("01:00,000", _GC.format("Bumped group epoch to 3.")),
        _stamped(
            "01:00,050",
            _GC.format("Computed a new target assignment for epoch 3 with 'uniform' assignor in 0ms."),
        ),  # fmt: skip
        _stamped("01:02,000", _MM.format("c1", 3, "STABLE", "RECONCILING")),
        _stamped("01:02,002", _CB.format("c1", "Adding newly assigned partitions:", "t-1")),
        _stamped("01:02,002", _MM.format("c1", 3, "RECONCILING", "ACKNOWLEDGING")),
        _stamped("01:02,002", _MM.format("c1", 3, "ACKNOWLEDGING", "STABLE")),
    ]
    from rebalance_core.kafka_logs import parse_lines

    parsed = parse_lines(lines, file="mixed.log", cluster="sim")
    assert parsed.quarantine == []
    rows = sorted(replay(parsed.events, group="g")["rebalance_episodes"], key=lambda r: r["started_at"])
    assert [r["partitions_moved"] for r in rows] == [0, 1, 1]


def test_both_4x_logs_an_epoch_ended_by_members_whose_epoch_moves_silently_is_inferred_within_a_heartbeat():
    """c3 (owning nothing) leaves: epoch 4 changes nothing for c1 and c2, whose epochs the coordinator moves
    at their next heartbeats (within group.consumer.heartbeat.interval.ms) without a line: the client updates
    its epoch silently when its assignment is unchanged (ConsumerMembershipManager). c4 joins 2 s later: whether
    epoch 4 was Stable first (ConsumerGroup.maybeUpdateGroupState) no line tells, so its rebalance is inferred."""
    lines = [
        *_c1_and_c2_settled_at_epoch_2(),
        *_joins("01:00", "c3", 3, ""),
        _stamped("02:00,000", _MM.format("c3", 3, "STABLE", "PREPARE_LEAVING")),
        _stamped("02:00,002", _MM.format("c3", -1, "PREPARE_LEAVING", "LEAVING")),
        _stamped("02:00,002", _MM.format("c3", 3, "LEAVING", "UNSUBSCRIBED")),
        _stamped("02:00,003", _GC.format("Member c3 left the consumer group.")),
        _stamped("02:00,003", _GC.format("Bumped group epoch to 4.")),
        _stamped(
            "02:00,050",
            _GC.format("Computed a new target assignment for epoch 4 with 'uniform' assignor in 0ms."),
        ),  # fmt: skip
        *_joins("02:02", "c4", 5, ""),
    ]
    from rebalance_core.kafka_logs import parse_lines

    parsed = parse_lines(lines, file="mixed.log", cluster="sim")
    assert parsed.quarantine == []
    out = replay(parsed.events, group="g")
    assert episodes(out)[-2:] == [(1, "inferred"), (1, "inferred")]


@pytest.mark.parametrize(
    ("left_after", "max_poll_interval_ms", "source"),
    [("05:10,000", 300_000, "inferred"), ("11:00,000", 300_000, "observed"), ("11:00,000", None, "inferred")],
)
def test_broker_log_alone_a_member_removed_soon_after_it_was_given_partitions_may_never_have_consumed_them(
    left_after, max_poll_interval_ms, source
):
    """m2 is STABLE with t-2, t-3 at 05:09 for the coordinator (CurrentAssignmentBuilder: nothing it is given
    is held by another), whether or not its onPartitionsAssigned ran: a callback blocked by a busy poll loop
    ends in the poll timer's leave (AbstractMembershipManager.transitionToSendingLeaveGroup) within
    max.poll.interval.ms (300 s by default), which the broker logs as a plain leave. m2 leaving 1 s later:
    its consumption of t-2, t-3, so their movements, are inferred; leaving 6 min later: it polled meanwhile, when
    max.poll.interval.ms is stated (ReplaySettings); not stated, the client's setting has no upper bound."""
    log = log_4_0_second_member_joins()
    log.add(f"2025-03-10 14:{left_after}", "coordinator", EventType.MEMBER_REMOVED, member_id=M2,
            reason=RemovalReason.LEAVE_GROUP.value)  # fmt: skip
    stated = ReplaySettings(max_poll_interval_ms=max_poll_interval_ms, consumer_heartbeat_interval_ms=5_000)
    out = log.replay(stated)
    away = [r for r in out["partition_movements"] if r["from_member_id"] == M2]
    assert [(r["topic"], r["partition"], r["source"]) for r in away] == [("t", 2, source), ("t", 3, source)]


@pytest.mark.parametrize(("rebalance_timeout_ms", "source"), [("300000", "observed"), ("600000", "inferred")])
def test_a_joins_stated_rebalance_timeout_is_the_members_max_poll_interval(rebalance_timeout_ms, source):
    """The join states m2's rebalance timeout: its max.poll.interval.ms (ConsumerHeartbeatRequestManager sends it
    as RebalanceTimeoutMs). m2 leaving 6 min after its assignment, with 300 s stated, polled meanwhile (observed);
    with 600 s stated, the leave may still be its poll timer's, its onPartitionsAssigned never run (inferred)."""
    log = log_4_0_second_member_joins()
    log.events = [
        dataclasses.replace(e, attributes={"rebalance_timeout_ms": rebalance_timeout_ms})
        if e.event_type == EventType.JOIN_RECEIVED.value and e.member_id == M2
        else e
        for e in log.events
    ]
    log.add("2025-03-10 14:11:00,000", "coordinator", EventType.MEMBER_REMOVED, member_id=M2,
            reason=RemovalReason.LEAVE_GROUP.value)  # fmt: skip
    out = log.replay(ReplaySettings(consumer_heartbeat_interval_ms=5_000))
    away = [r for r in out["partition_movements"] if r["from_member_id"] == M2]
    assert [(r["topic"], r["partition"], r["source"]) for r in away] == [("t", 2, source), ("t", 3, source)]


@pytest.mark.parametrize(
    ("acknowledged", "heartbeat_interval_ms", "source"),
    [(False, 5_000, "inferred"), (True, 5_000, "observed"), (True, None, "inferred")],
)
def test_broker_log_alone_a_revocation_asked_of_a_member_fenced_before_any_later_line_is_inferred(
    acknowledged, heartbeat_interval_ms, source
):
    """The coordinator asks m1 to revoke t-2, t-3 (UNREVOKED_PARTITIONS at its old epoch, CurrentAssignmentBuilder)
    and keeps it there until a heartbeat acknowledges. m1's session then expires: with no later line moving it on,
    whether it revoked before it died no broker line tells, so those revocations are inferred; once a line shows
    it at the new epoch (acknowledged) within the stated group.consumer.heartbeat.interval.ms, they are observed
    (with none stated, no gap is within it)."""
    log, c, day = Log("g"), "coordinator", "2025-03-10 14:"
    log.add(f"{day}00:00,000", c, EventType.GROUP_EPOCH_BUMPED, group_epoch=1)
    log.add(
        f"{day}00:00,002",
        c,
        EventType.TARGET_ASSIGNMENT_COMPUTED,
        assignment_epoch=1,
        protocol_name="uniform",
    )
    assignment_state(log, f"{day}00:00,005", M1, 1, 0, "STABLE", 0, 1, 2, 3)
    log.add(f"{day}05:00,000", c, EventType.JOIN_RECEIVED, member_id=M2)
    log.add(f"{day}05:00,001", c, EventType.GROUP_EPOCH_BUMPED, group_epoch=2)
    log.add(
        f"{day}05:00,003",
        c,
        EventType.TARGET_ASSIGNMENT_COMPUTED,
        assignment_epoch=2,
        protocol_name="uniform",
    )
    assignment_state(log, f"{day}05:00,004", M2, 2, 0, "UNRELEASED_PARTITIONS")
    assignment_state(log, f"{day}05:03,000", M1, 1, 0, "UNREVOKED_PARTITIONS", 0, 1, revoked="t-2,t-3")
    if acknowledged:
        assignment_state(log, f"{day}05:06,000", M1, 2, 1, "STABLE", 0, 1)
    log.add(
        f"{day}05:50,000",
        c,
        EventType.MEMBER_REMOVED,
        member_id=M1,
        reason=RemovalReason.SESSION_TIMEOUT.value,
    )
    log.add(f"{day}05:50,001", c, EventType.GROUP_EPOCH_BUMPED, group_epoch=3)
    log.add(
        f"{day}05:50,003",
        c,
        EventType.TARGET_ASSIGNMENT_COMPUTED,
        assignment_epoch=3,
        protocol_name="uniform",
    )
    assignment_state(log, f"{day}05:52,000", M2, 3, 2, "STABLE", 0, 1, 2, 3)
    out = log.replay(
        ReplaySettings(session_timeout_ms=45_000, consumer_heartbeat_interval_ms=heartbeat_interval_ms)
    )
    revoked = [
        r for r in out["partition_movements"] if r["from_member_id"] == M1 and r["stop_cause"] == "revoked"
    ]
    assert [(r["partition"], r["source"]) for r in revoked] == [(2, source), (3, source)]


def test_consumer_logs_alone_a_member_holding_nothing_while_another_is_given_every_partition_is_out():
    """c1 joins and is given nothing yet (UNRELEASED_PARTITIONS: c2 holds them), then its log goes silent; c2
    crashes, c2b joins. At epoch 5 c2b is STABLE with both partitions: the broker's assignors give every member
    at least one partition when there are as many (UniformAssignor, RangeAssignor), so c1 has no target there:
    its session expired unseen, and it is no member of epoch 5 (it owned nothing, so nothing stops)."""
    log = Log("g")
    client_joins(log, "00:00", "c2", None, 1, 0, 1)
    client_joins(log, "00:01", "c1", None, 2)
    client_joins(log, "00:10", "c2b", None, 3)  # c2 crashed, its partitions not released yet
    client_line(log, "2025-03-10 14:00:20,000", "c2b", None, 5, "STABLE", "RECONCILING")
    log.add("2025-03-10 14:00:20,002", "member", EventType.PARTITIONS_ASSIGNED, member_id="c2b",
            partitions=tps("t", 0, 1))  # fmt: skip
    client_line(log, "2025-03-10 14:00:20,002", "c2b", None, 5, "RECONCILING", "ACKNOWLEDGING")
    client_line(log, "2025-03-10 14:00:20,002", "c2b", None, 5, "ACKNOWLEDGING", "STABLE")
    out = log.replay()
    assert members_by_epoch(out)[5] == ["c2b"]


def _three_members_at_epoch_3(c3_takes_its_partition: bool) -> list[str]:
    """c1 (t-0..t-2), c2 and c3 join; c1 revokes t-2 for c2 and t-1 for c3. c3 takes t-1, or falls silent
    (a crash) before it does."""
    lines = [
        *(line for line in _joins("00:00", "c1", 1, "t-0, t-1, t-2") if "GroupCoordinator" not in line),
        *(line for line in _joins("00:02", "c2", 2, "") if "GroupCoordinator" not in line),
        _stamped("00:05,000", _MM.format("c1", 2, "STABLE", "RECONCILING")),
        _stamped("00:05,002", _CB.format("c1", "Revoke previously assigned partitions", "t-2")),
        _stamped("00:05,002", _MM.format("c1", 2, "RECONCILING", "ACKNOWLEDGING")),
        _stamped("00:05,002", _MM.format("c1", 2, "ACKNOWLEDGING", "STABLE")),
        _stamped("00:07,000", _MM.format("c2", 2, "STABLE", "RECONCILING")),
        _stamped("00:07,002", _CB.format("c2", "Adding newly assigned partitions:", "t-2")),
        _stamped("00:07,002", _MM.format("c2", 2, "RECONCILING", "ACKNOWLEDGING")),
        _stamped("00:07,002", _MM.format("c2", 2, "ACKNOWLEDGING", "STABLE")),
        *(line for line in _joins("01:00", "c3", 3, "") if "GroupCoordinator" not in line),
        _stamped("01:05,000", _MM.format("c1", 3, "STABLE", "RECONCILING")),
        _stamped("01:05,002", _CB.format("c1", "Revoke previously assigned partitions", "t-1")),
        _stamped("01:05,002", _MM.format("c1", 3, "RECONCILING", "ACKNOWLEDGING")),
        _stamped("01:05,002", _MM.format("c1", 3, "ACKNOWLEDGING", "STABLE")),
    ]
    if c3_takes_its_partition:
        lines += [
            _stamped("01:08,000", _MM.format("c3", 3, "STABLE", "RECONCILING")),
            _stamped("01:08,002", _CB.format("c3", "Adding newly assigned partitions:", "t-1")),
            _stamped("01:08,002", _MM.format("c3", 3, "RECONCILING", "ACKNOWLEDGING")),
            _stamped("01:08,002", _MM.format("c3", 3, "ACKNOWLEDGING", "STABLE")),
        ]
    return lines


def _epoch_4_gives_c1(partition: str) -> list[str]:
    return [
        _stamped("01:50,000", _MM.format("c1", 4, "STABLE", "RECONCILING")),
        _stamped("01:50,002", _CB.format("c1", "Adding newly assigned partitions:", partition)),
        _stamped("01:50,002", _MM.format("c1", 4, "RECONCILING", "ACKNOWLEDGING")),
        _stamped("01:50,002", _MM.format("c1", 4, "ACKNOWLEDGING", "STABLE")),
    ]


def test_consumer_logs_alone_an_epoch_no_line_explains_has_an_unknown_member_list():
    """c3 falls silent (a crash) before taking t-1; 45 s later (group.consumer.session.timeout.ms, the
    broker's) the coordinator fences it (GroupMetadataManager.consumerGroupFenceMember bumps the epoch) and
    t-1 goes back to c1 at epoch 4. No member log states that bump's cause: a join, a leave (epoch -1) or a
    fence shows in the member's own log (ConsumerMembershipManager), a silent member's session expiry does
    not. c3 never stated epoch 4, so whether epoch 4 counts it cannot be told: null, never the guess that c3
    is still in."""
    lines = [*_three_members_at_epoch_3(c3_takes_its_partition=False), *_epoch_4_gives_c1("t-1")]
    from rebalance_core.kafka_logs import parse_lines

    parsed = parse_lines(lines, file="consumers.log", cluster="sim")
    assert parsed.quarantine == []
    generations = {g["generation_id"]: g for g in replay(parsed.events, group="g")["generations"]}
    assert generations[3]["members"] == ["c1", "c2", "c3"]
    assert generations[4]["members"] is None
    assert generations[4]["member_count"] is None


def test_consumer_logs_alone_a_bump_that_brings_a_partition_never_consumed_keeps_the_member_list_known():
    """Epoch 4 gives c1 t-3, a partition no member consumed since the group's first epoch: the topic grew,
    and the coordinator bumps the epoch on a subscription metadata change (GroupMetadataManager
    .consumerGroupHeartbeat), a cause that removes no member. Epoch 4 keeps c1, c2 and c3."""
    lines = [*_three_members_at_epoch_3(c3_takes_its_partition=True), *_epoch_4_gives_c1("t-3")]
    from rebalance_core.kafka_logs import parse_lines

    parsed = parse_lines(lines, file="consumers.log", cluster="sim")
    assert parsed.quarantine == []
    assert members_by_epoch(replay(parsed.events, group="g"))[4] == ["c1", "c2", "c3"]


def test_a_consumer_closed_before_its_first_member_epoch_is_no_member_and_its_leave_reserves_nothing():
    """Static c1 (instance i1) crashes; its restarted consumer c1b is closed while still JOINING (epoch 0):
    it sends its leave heartbeat (epoch -2) without ever having been answered with a member epoch, so the
    coordinator has no such member (GroupMetadataManager.consumerGroupStaticMemberGroupLeave: i1 is still
    c1's, FENCED_INSTANCE_ID) and nothing is reserved for c1b. When c1's session expires the group is empty:
    epoch 2 has no member and ends Empty."""
    log = Log("g")
    stamp = "2025-03-10 14:00:00"
    client_line(log, f"{stamp},000", "c1", "i1", 0, "UNSUBSCRIBED", "JOINING")
    log.add(f"{stamp},001", "coordinator", EventType.JOIN_RECEIVED, member_id="c1", group_instance_id="i1")
    log.add(
        f"{stamp},001", "coordinator", EventType.GROUP_EPOCH_BUMPED, group_epoch=1, reason="member joined"
    )
    log.add(f"{stamp},001", "coordinator", EventType.MEMBER_EPOCH_UPDATED, member_id="c1", group_instance_id="i1",
            member_epoch=1, partitions=tps("t", 0, 1), attributes={"previous_epoch": "0", "state": "STABLE"})  # fmt: skip
    client_line(log, f"{stamp},002", "c1", "i1", 1, "JOINING", "RECONCILING")
    log.add(f"{stamp},004", "member", EventType.PARTITIONS_ASSIGNED, member_id="c1", group_instance_id="i1",
            partitions=tps("t", 0, 1))  # fmt: skip
    client_line(log, f"{stamp},004", "c1", "i1", 1, "RECONCILING", "ACKNOWLEDGING")
    client_line(log, f"{stamp},004", "c1", "i1", 1, "ACKNOWLEDGING", "STABLE")
    # c1 crashes at 14:00:10; its consumer restarts as c1b and is closed at once
    restart = "2025-03-10 14:00:12,000"
    client_line(log, restart, "c1b", "i1", 0, "UNSUBSCRIBED", "JOINING")
    client_line(log, restart, "c1b", "i1", 0, "JOINING", "PREPARE_LEAVING")
    client_line(log, restart, "c1b", "i1", -2, "PREPARE_LEAVING", "LEAVING")
    client_line(log, restart, "c1b", "i1", 0, "LEAVING", "UNSUBSCRIBED")
    expiry = "2025-03-10 14:00:55,000"
    log.add(expiry, "coordinator", EventType.MEMBER_REMOVED, member_id="c1", group_instance_id="i1",
            reason=RemovalReason.SESSION_TIMEOUT.value, attributes={"session_timeout_ms": "45000"})  # fmt: skip
    log.add(
        expiry, "coordinator", EventType.GROUP_EPOCH_BUMPED, group_epoch=2, reason="member session expired"
    )
    generations = {g["generation_id"]: g for g in log.replay()["generations"]}
    assert generations[2]["members"] == []
    assert generations[2]["ended_empty"] is True


def test_a_crash_known_at_its_session_expiry_recounts_the_stop_the_world_before_the_next_start():
    """c1 consumes t-0 and t-1, c2 nothing. c1 crashes at 14:00:10 (its last heartbeat); at 14:00:13 the topic
    grows and c2 starts t-2 (its callback, 14:00:13.002). The coordinator fences c1 only at 14:00:55 (group.consumer.session.timeout.ms,
    GroupMetadataManager.consumerGroupFenceMember), and the replay places c1's stops at its last heartbeat:
    from 14:00:10 to 14:00:13.002 nothing was consumed, 3 s of stop-the-world the running count could not see
    when c2 started (c1 still counted as consuming then)."""
    log = Log("g")
    day = "2025-03-10 14:00"

    def coordinator(when: str, event_type: EventType, **fields) -> None:
        log.add(f"{day}:{when}", "coordinator", event_type, **fields)

    def member_epoch(when: str, member: str, epoch: int, state: str, *partitions: int) -> None:
        coordinator(when, EventType.MEMBER_EPOCH_UPDATED, member_id=member, member_epoch=epoch,
                    partitions=tps("t", *partitions), attributes={"state": state})  # fmt: skip

    def assigned(when: str, member: str, *partitions: int) -> None:
        log.add(f"{day}:{when}", "member", EventType.PARTITIONS_ASSIGNED, member_id=member,
                partitions=tps("t", *partitions))  # fmt: skip

    def client(when: str, member: str, epoch: int, old: str, new: str) -> None:
        log.add(f"{day}:{when}", "member", EventType.MEMBER_STATE_CHANGED, member_id=member, member_epoch=epoch,
                attributes={"from_state": old, "to_state": new})  # fmt: skip

    for member, epoch, at, partitions in (("c1", 1, "00", (0, 1)), ("c2", 2, "02", ())):
        client(f"{at},000", member, 0, "UNSUBSCRIBED", "JOINING")
        coordinator(f"{at},001", EventType.JOIN_RECEIVED, member_id=member)
        coordinator(f"{at},001", EventType.GROUP_EPOCH_BUMPED, group_epoch=epoch, reason="member joined")
        member_epoch(f"{at},001", member, epoch, "STABLE", *partitions)
        client(f"{at},002", member, epoch, "JOINING", "RECONCILING")
        assigned(f"{at},004", member, *partitions)
        client(f"{at},004", member, epoch, "RECONCILING", "STABLE")
    member_epoch("02,500", "c1", 2, "STABLE", 0, 1)
    coordinator("13,000", EventType.GROUP_EPOCH_BUMPED, group_epoch=3, reason="topic metadata changed")
    member_epoch("13,000", "c2", 3, "STABLE", 2)
    client("13,001", "c2", 3, "STABLE", "RECONCILING")
    assigned("13,002", "c2", 2)
    client("13,002", "c2", 3, "RECONCILING", "STABLE")
    coordinator("55,000", EventType.MEMBER_REMOVED, member_id="c1", reason=RemovalReason.SESSION_TIMEOUT.value,
                attributes={"session_timeout_ms": "45000"})  # fmt: skip
    coordinator("55,000", EventType.GROUP_EPOCH_BUMPED, group_epoch=4, reason="member session expired")
    member_epoch("55,000", "c2", 4, "STABLE", 0, 1, 2)
    client("55,001", "c2", 4, "STABLE", "RECONCILING")
    assigned("55,002", "c2", 0, 1)
    client("55,002", "c2", 4, "RECONCILING", "STABLE")
    out = log.replay()
    assert sum(ep["stw_ms"] for ep in out["rebalance_episodes"]) == 3_002


def test_simulator_a_frozen_member_fenced_later_stopped_at_its_last_heartbeat_and_the_gap_is_stop_the_world():
    """The oracle: c1 (t-0) freezes in a GC pause right after a heartbeat and stays frozen beyond the broker's
    session timeout; meanwhile t grows and c2 starts the new t-1. The coordinator fences c1 at the session
    expiry (GroupMetadataManager.consumerGroupFenceMember): its stop is at its last heartbeat, so nothing was
    consumed from that heartbeat until c2 started t-1, which the truth's stop-the-world counts, as it does for
    a crash (whose stop is recorded at the heartbeat itself)."""
    _, sim = simulate(
        [Join(0, "c1"), Join(1_000, "c2"), Pause(20_000, "c1", 120_000), PartitionCount(30_000, "t", 2)],
        topics={"t": 1},
    )
    [stop] = [m["revoked_at"] for m in sim.truth["partition_movements"] if m["from_member_id"] == "c1"]
    start = min(
        e.ts
        for e in sim.events
        if e.event_type == EventType.PARTITIONS_ASSIGNED.value
        and TopicPartition("t", 1) in (e.partitions or ())
    )
    assert stop < start
    assert sum(ep["stw_ms"] for ep in sim.truth["rebalance_episodes"]) == start - stop


def test_consumer_logs_alone_a_consumer_closed_while_joining_is_in_no_epoch_before_its_own():
    """c3 closes while JOINING (PREPARE_LEAVING at epoch 0, then its leave heartbeat): the coordinator never
    answered it with a member epoch (ConsumerMembershipManager logs the epoch of the response it acts on), so
    it is no member of the epoch the others are at (its join, if it arrived, bumps a later one)."""
    log = Log("g")
    client_joins(log, "00:00", "c1", "", 1, 0, 1)
    client_joins(log, "00:01", "c2", "", 2)
    stamp = "2025-03-10 14:00:02,000"
    client_line(log, stamp, "c3", "", 0, "UNSUBSCRIBED", "JOINING")
    client_line(log, stamp, "c3", "", 0, "JOINING", "PREPARE_LEAVING")
    client_line(log, stamp, "c3", "", -1, "PREPARE_LEAVING", "LEAVING")
    client_line(log, stamp, "c3", "", 0, "LEAVING", "UNSUBSCRIBED")
    assert members_by_epoch(log.replay())[2] == ["c1", "c2"]


def test_consumer_logs_alone_a_member_gone_stale_has_left_and_its_group_is_empty_until_it_rejoins():
    """The lone c1's poll timer expires: it sends its leave heartbeat (epoch -1) and goes STALE
    (AbstractMembershipManager.transitionToStale), out of the group; its partitions are reported lost only when
    the application polls again, 15 s later, and it rejoins. The group was empty in between: no stop-the-world
    and no unavailability are counted across it."""
    log = Log("g")
    client_joins(log, "00:00", "c1", "", 1, 0)
    stamp = "2025-03-10 14:01:00,000"
    client_line(log, stamp, "c1", "", 1, "STABLE", "PREPARE_LEAVING")
    client_line(log, stamp, "c1", "", -1, "PREPARE_LEAVING", "LEAVING")
    client_line(log, stamp, "c1", "", 1, "LEAVING", "STALE")
    back = "2025-03-10 14:01:15"
    log.add(f"{back},000", "member", EventType.PARTITIONS_LOST, member_id="c1", partitions=tps("t", 0))
    client_line(log, f"{back},000", "c1", "", 0, "STALE", "JOINING")
    client_line(log, f"{back},002", "c1", "", 3, "JOINING", "RECONCILING")
    log.add(f"{back},004", "member", EventType.PARTITIONS_ASSIGNED, member_id="c1", partitions=tps("t", 0))
    client_line(log, f"{back},004", "c1", "", 3, "RECONCILING", "STABLE")
    out = log.replay()
    assert sum(ep["stw_ms"] or 0 for ep in out["rebalance_episodes"]) == 0
    assert sum(m["unavailable_ms"] or 0 for m in out["partition_movements"]) == 0


def log_3_8_second_member_joins(after: str) -> Log:
    """Kafka 3.8 broker: m1 joins alone and is STABLE with t-0..t-3 at 14:00:00,001; m2 joins at `after`;
    m1 revokes t-2, t-3 for m2 (target map at INFO)."""
    log, c, day = Log("g"), "coordinator", "2025-03-10 14:"
    log.add(f"{day}00:00,000", c, EventType.JOIN_RECEIVED, member_id=M1)
    log.add(f"{day}00:00,000", c, EventType.GROUP_EPOCH_BUMPED, group_epoch=1)
    log.add(f"{day}00:00,000", c, EventType.TARGET_ASSIGNMENT_COMPUTED, assignment_epoch=1, protocol_name="uniform",
            assignment={M1: tps("t", 0, 1, 2, 3)})  # fmt: skip
    assignment_state(log, f"{day}00:00,001", M1, 1, 0, "STABLE", 0, 1, 2, 3)
    log.add(f"{day}{after}", c, EventType.JOIN_RECEIVED, member_id=M2)
    log.add(f"{day}{after}", c, EventType.GROUP_EPOCH_BUMPED, group_epoch=2)
    log.add(f"{day}{after}", c, EventType.TARGET_ASSIGNMENT_COMPUTED, assignment_epoch=2, protocol_name="uniform",
            assignment={M1: tps("t", 0, 1), M2: tps("t", 2, 3)})  # fmt: skip
    assignment_state(log, f"{day}{after}", M2, 2, 0, "UNRELEASED_PARTITIONS")
    assignment_state(log, f"{day}01:00,000", M1, 1, 1, "UNREVOKED_PARTITIONS", 0, 1, revoked="t-2,t-3")
    assignment_state(log, f"{day}01:00,010", M1, 2, 1, "STABLE", 0, 1)
    assignment_state(log, f"{day}01:05,000", M2, 2, 2, "STABLE", 2, 3)
    return log


@pytest.mark.parametrize(
    ("after", "heartbeat_interval_ms", "source"),
    [("00:00,003", 5_000, "inferred"), ("00:30,000", 5_000, "observed"), ("00:30,000", None, "inferred")],
)
def test_a_rebalance_right_after_an_assignment_the_broker_alone_cannot_tell_was_consumed_moves_inferred(
    after, heartbeat_interval_ms, source
):
    """The coordinator logs m1's assignment when it answers m1's heartbeat (CurrentAssignmentBuilder makes it
    STABLE at once); m1 consumes t-2, t-3 only once its onPartitionsAssigned has run, which it acknowledges in a
    heartbeat no broker line shows. m2 joining 2 ms later: whether t-2, t-3 moved from m1 (or m1 never started
    them) is unknown to the broker's log, so that episode is inferred; 30 s later m1 surely heartbeated since,
    and the moves are the broker's to count, given group.consumer.heartbeat.interval.ms (stated; not stated, m1's
    revocation acknowledged 10 ms after the request is not within it: inferred)."""
    out = log_3_8_second_member_joins(after).replay(
        ReplaySettings(consumer_heartbeat_interval_ms=heartbeat_interval_ms)
    )
    episodes = sorted(out["rebalance_episodes"], key=lambda r: r["started_at"])
    assert [(r["first_generation_id"], r["partitions_moved"]) for r in episodes] == [(1, 0), (2, 2)]
    assert [r["source"] for r in episodes] == ["observed", source]


def log_4_0_static_member_bounces(left: str) -> Log:
    """Kafka 4.0 broker, static members a (m1) and b (m2): b joins (epoch 2, target map at DEBUG only); a
    "temporarily left" (epoch -2) at `left` and re-joins at 14:05:20 as m1-new, which replaces m1 at epoch 2
    (no bump) and recomputes the target."""
    log, c, day = Log("g"), "coordinator", "2025-03-10 14:"
    log.add(f"{day}00:00,000", c, EventType.JOIN_RECEIVED, member_id=M1, group_instance_id="a")
    log.add(f"{day}00:00,000", c, EventType.GROUP_EPOCH_BUMPED, group_epoch=1)
    log.add(
        f"{day}00:00,000",
        c,
        EventType.TARGET_ASSIGNMENT_COMPUTED,
        assignment_epoch=1,
        protocol_name="uniform",
    )
    log.add(f"{day}05:00,000", c, EventType.JOIN_RECEIVED, member_id=M2, group_instance_id="b")
    log.add(f"{day}05:00,000", c, EventType.GROUP_EPOCH_BUMPED, group_epoch=2)
    log.add(
        f"{day}05:00,000",
        c,
        EventType.TARGET_ASSIGNMENT_COMPUTED,
        assignment_epoch=2,
        protocol_name="uniform",
    )
    log.add(f"{day}{left}", c, EventType.MEMBER_REMOVED, member_id=M1, group_instance_id="a", member_epoch=-2,
            reason=RemovalReason.LEAVE_GROUP.value)  # fmt: skip
    log.add(f"{day}05:20,000", c, EventType.STATIC_MEMBER_REPLACED, member_id="m1-new", group_instance_id="a",
            attributes={"old_member_id": M1})  # fmt: skip
    log.add(
        f"{day}05:20,000",
        c,
        EventType.TARGET_ASSIGNMENT_COMPUTED,
        assignment_epoch=2,
        protocol_name="uniform",
    )
    return log


@pytest.mark.parametrize(("left", "members"), [("05:04,000", None), ("05:15,000", [M1, M2])])
def test_a_4_0_broker_log_cannot_tell_which_id_of_a_static_member_that_bounced_mid_epoch_the_epoch_counted(
    left, members
):
    """A static member rejoining with epoch 0 replaces its predecessor (epoch -2) at the same epoch
    (GroupMetadataManager.consumerGroupHeartbeat, ConsumerGroupMember with the same instanceId). a left 4 s
    after epoch 2's target: the epoch may have converged with m1 before it left, or only with m1-new; a 4.0
    broker logs neither the members' assignment states nor the Stable group, so epoch 2's members are null,
    never a guess. a leaving 15 s after the target: every member's heartbeats were due long before, so epoch 2
    converged with m1 (inferred, as every presumed convergence)."""
    out = log_4_0_static_member_bounces(left).replay()
    gens = {g["generation_id"]: g for g in out["generations"]}
    assert gens[2]["members"] == members
    assert gens[2]["source"] == "inferred"


def log_4_0_presumed_convergence_then_a_late_fence(fenced: str) -> Log:
    """Kafka 4.0 broker: m1 alone (epoch 1); m2 joins at 14:05:00 (epoch 2, target map at DEBUG); m2 leaves at
    14:05:20 (epoch 3); m1's session expires at `fenced` (its last heartbeat one default 45 s session before)."""
    log, c, day = Log("g"), "coordinator", "2025-03-10 14:"
    log.add(f"{day}00:00,000", c, EventType.JOIN_RECEIVED, member_id=M1)
    log.add(f"{day}00:00,000", c, EventType.GROUP_EPOCH_BUMPED, group_epoch=1)
    log.add(
        f"{day}00:00,000",
        c,
        EventType.TARGET_ASSIGNMENT_COMPUTED,
        assignment_epoch=1,
        protocol_name="uniform",
    )
    log.add(f"{day}05:00,000", c, EventType.JOIN_RECEIVED, member_id=M2)
    log.add(f"{day}05:00,000", c, EventType.GROUP_EPOCH_BUMPED, group_epoch=2)
    log.add(
        f"{day}05:00,000",
        c,
        EventType.TARGET_ASSIGNMENT_COMPUTED,
        assignment_epoch=2,
        protocol_name="uniform",
    )
    log.add(
        f"{day}05:20,000", c, EventType.MEMBER_REMOVED, member_id=M2, reason=RemovalReason.LEAVE_GROUP.value
    )
    log.add(f"{day}05:20,000", c, EventType.GROUP_EPOCH_BUMPED, group_epoch=3)
    log.add(
        f"{day}{fenced}",
        c,
        EventType.MEMBER_REMOVED,
        member_id=M1,
        reason=RemovalReason.SESSION_TIMEOUT.value,
    )
    log.add(f"{day}{fenced}", c, EventType.GROUP_EPOCH_BUMPED, group_epoch=4)
    return log


@pytest.mark.parametrize(
    ("fenced", "max_poll_interval_ms", "source"),
    [("05:40,000", 300_000, "inferred"), ("06:30,000", 300_000, "observed"), ("06:30,000", None, "inferred")],
)
def test_a_4_0_broker_log_a_fence_showing_a_member_silent_before_a_presumed_convergence_makes_the_next_rebalance_inferred(
    fenced, max_poll_interval_ms, source
):
    """With a 4.0 broker log alone, epoch 2 is presumed converged once the members' heartbeats were due (10 s),
    so m2's leave at 05:20 opens a new rebalance. m1 fenced at 05:40 was silent since 04:55, before epoch 2's
    target: it never had epoch 2 and the group is not Stable until every member has (ConsumerGroup
    .maybeUpdateGroupState), so epochs 3-4 may be further rounds of epoch 2's rebalance: that rebalance is
    inferred. Fenced at 06:30, m1 heartbeated until 05:45, long after epoch 2's target: nothing says otherwise,
    provided m2's leave 20 s after its join is no poll-timer leave (AbstractHeartbeatRequestManager), which only
    a stated max.poll.interval.ms longer than that shows; unstated, it may be, and the rebalance is inferred."""
    settings = ReplaySettings(max_poll_interval_ms=max_poll_interval_ms)
    out = log_4_0_presumed_convergence_then_a_late_fence(fenced).replay(settings)
    episodes = sorted(out["rebalance_episodes"], key=lambda r: r["started_at"])
    assert [r["first_generation_id"] for r in episodes] == [1, 2, 3]
    assert episodes[2]["source"] == source


def member_state(log: Log, when: str, member: str, epoch: int, from_state: str, to_state: str) -> None:
    """ConsumerMembershipManager "Member m with epoch E transitioned from A to B." (the member's own log)."""
    log.add(when, "member", EventType.MEMBER_STATE_CHANGED, member_id=member, client_id=member, member_epoch=epoch,
            attributes={"from_state": from_state, "to_state": to_state})  # fmt: skip


def test_with_a_4_0_broker_log_an_epoch_whose_target_is_not_computed_yet_has_not_converged():
    """Kafka 4.0 broker + consumers' logs. m2's session expires at 14:05:10 (epoch 3); m1 is STABLE by its own
    log, but the broker logs every target it computes and none for epoch 3 follows before m3 joins (epoch 4): the
    group stays Assigning while its epoch is ahead of the target's (ConsumerGroup.maybeUpdateGroupState), so
    epochs 3 and 4 are rounds of one rebalance, not two."""
    log, c, day = Log("g"), "coordinator", "2025-03-10 14:"
    member_state(log, f"{day}00:00,000", M1, 0, "UNSUBSCRIBED", "JOINING")
    log.add(f"{day}00:00,001", c, EventType.JOIN_RECEIVED, member_id=M1)
    log.add(f"{day}00:00,001", c, EventType.GROUP_EPOCH_BUMPED, group_epoch=1)
    log.add(
        f"{day}00:00,001",
        c,
        EventType.TARGET_ASSIGNMENT_COMPUTED,
        assignment_epoch=1,
        protocol_name="uniform",
    )
    member_state(log, f"{day}00:00,002", M1, 1, "JOINING", "RECONCILING")
    member_state(log, f"{day}00:00,003", M1, 1, "RECONCILING", "STABLE")
    log.add(f"{day}05:00,001", c, EventType.JOIN_RECEIVED, member_id=M2)
    log.add(f"{day}05:00,001", c, EventType.GROUP_EPOCH_BUMPED, group_epoch=2)
    log.add(
        f"{day}05:00,001",
        c,
        EventType.TARGET_ASSIGNMENT_COMPUTED,
        assignment_epoch=2,
        protocol_name="uniform",
    )
    member_state(log, f"{day}05:04,000", M1, 2, "STABLE", "RECONCILING")
    member_state(log, f"{day}05:04,001", M1, 2, "RECONCILING", "STABLE")
    log.add(
        f"{day}05:10,000",
        c,
        EventType.MEMBER_REMOVED,
        member_id=M2,
        reason=RemovalReason.SESSION_TIMEOUT.value,
    )
    log.add(f"{day}05:10,000", c, EventType.GROUP_EPOCH_BUMPED, group_epoch=3)
    log.add(f"{day}05:11,000", c, EventType.JOIN_RECEIVED, member_id="member-3")
    log.add(f"{day}05:11,000", c, EventType.GROUP_EPOCH_BUMPED, group_epoch=4)
    log.add(
        f"{day}05:11,000",
        c,
        EventType.TARGET_ASSIGNMENT_COMPUTED,
        assignment_epoch=4,
        protocol_name="uniform",
    )
    member_state(log, f"{day}05:14,000", M1, 4, "STABLE", "RECONCILING")
    member_state(log, f"{day}05:14,001", M1, 4, "RECONCILING", "STABLE")
    assert rounds(log.replay()) == [1, 1, 2]


def test_a_fence_without_its_session_timeout_never_places_the_last_heartbeat_before_a_logged_one():
    """Kafka 4.0 broker: m1 joins alone (its joining heartbeat reconciles it: epoch 1 converges at once) and its
    session expires 6 s later. The fence line states no timeout; the default 45 s (group.consumer.session
    .timeout.ms) would place m1's last heartbeat before its own join, which the coordinator logged: the session was
    shorter, and the last heartbeat is at least the join. So epoch 1 stays converged (the join reconciled m1
    before it went silent), a rebalance of its own, and the fence one more."""
    log, c, day = Log("g"), "coordinator", "2025-03-10 14:"
    member_state(log, f"{day}00:00,000", M1, 0, "UNSUBSCRIBED", "JOINING")
    log.add(f"{day}00:00,001", c, EventType.JOIN_RECEIVED, member_id=M1)
    log.add(f"{day}00:00,001", c, EventType.GROUP_EPOCH_BUMPED, group_epoch=1)
    log.add(
        f"{day}00:00,001",
        c,
        EventType.TARGET_ASSIGNMENT_COMPUTED,
        assignment_epoch=1,
        protocol_name="uniform",
    )
    member_state(log, f"{day}00:00,002", M1, 1, "JOINING", "RECONCILING")
    log.add(
        f"{day}00:06,003",
        c,
        EventType.MEMBER_REMOVED,
        member_id=M1,
        reason=RemovalReason.SESSION_TIMEOUT.value,
    )
    log.add(f"{day}00:06,003", c, EventType.GROUP_EPOCH_BUMPED, group_epoch=2)
    out = log.replay()
    assert rounds(out) == [1, 1]
    gens = {g["generation_id"]: g for g in out["generations"]}
    assert gens[1]["stabilized_at"] == ms(f"{day}00:00,001")


def test_a_static_members_session_runs_from_its_leave_heartbeat():
    """Kafka 4.0 broker + consumers' logs. Static m1 "temporarily left" (epoch -2) at 14:00:30, after epoch 2
    converged (14:00:15, m1's RECONCILING line at epoch 2), and its session expires at 14:00:59. The leave is a heartbeat
    (GroupMetadataManager.consumerGroupStaticMemberGroupLeave keeps the member and its session timer), so its
    last heartbeat is 14:00:30, not the default 45 s before the fence (14:00:14, before the convergence): epoch 2
    stays converged, and the fence is a rebalance of its own."""
    log, c, day = Log("g"), "coordinator", "2025-03-10 14:"
    member_state(log, f"{day}00:00,000", M1, 0, "UNSUBSCRIBED", "JOINING")
    log.add(f"{day}00:00,001", c, EventType.JOIN_RECEIVED, member_id=M1, group_instance_id="a")
    log.add(f"{day}00:00,001", c, EventType.GROUP_EPOCH_BUMPED, group_epoch=1)
    log.add(
        f"{day}00:00,001",
        c,
        EventType.TARGET_ASSIGNMENT_COMPUTED,
        assignment_epoch=1,
        protocol_name="uniform",
    )
    member_state(log, f"{day}00:00,002", M1, 1, "JOINING", "RECONCILING")
    member_state(log, f"{day}00:00,003", M1, 1, "RECONCILING", "STABLE")
    member_state(log, f"{day}00:10,000", M2, 0, "UNSUBSCRIBED", "JOINING")
    log.add(f"{day}00:10,001", c, EventType.JOIN_RECEIVED, member_id=M2, group_instance_id="b")
    log.add(f"{day}00:10,001", c, EventType.GROUP_EPOCH_BUMPED, group_epoch=2)
    log.add(
        f"{day}00:10,001",
        c,
        EventType.TARGET_ASSIGNMENT_COMPUTED,
        assignment_epoch=2,
        protocol_name="uniform",
    )
    member_state(log, f"{day}00:10,002", M2, 2, "JOINING", "RECONCILING")
    member_state(log, f"{day}00:15,000", M1, 2, "STABLE", "RECONCILING")
    member_state(log, f"{day}00:15,001", M1, 2, "RECONCILING", "STABLE")
    member_state(log, f"{day}00:20,000", M2, 2, "RECONCILING", "STABLE")
    member_state(log, f"{day}00:30,000", M1, -2, "PREPARE_LEAVING", "LEAVING")
    log.add(f"{day}00:30,001", c, EventType.MEMBER_REMOVED, member_id=M1, group_instance_id="a", member_epoch=-2,
            reason=RemovalReason.LEAVE_GROUP.value)  # fmt: skip
    log.add(f"{day}00:59,000", c, EventType.MEMBER_REMOVED, member_id=M1, group_instance_id="a",
            reason=RemovalReason.SESSION_TIMEOUT.value)  # fmt: skip
    log.add(f"{day}00:59,000", c, EventType.GROUP_EPOCH_BUMPED, group_epoch=3)
    out = log.replay()
    assert rounds(out) == [1, 1, 1]
    gens = {g["generation_id"]: g for g in out["generations"]}
    assert gens[2]["stabilized_at"] == ms(f"{day}00:15,000")


def m2_joins_after_m1_settled_4_0(m1_instance: str | None = None, m1_assigned: list | None = None) -> Log:
    """Kafka 4.0 broker + consumers' logs (target maps at DEBUG only): m1 (static when `m1_instance`) joins alone
    at 14:00:00 and is STABLE at epoch 1 (its onPartitionsAssigned logged when `m1_assigned`); m2 joins at
    14:05:00 (epoch 2) and logs RECONCILING, then STABLE at epoch 2 at 14:05:00,003."""
    log, c, day = Log("g"), "coordinator", "2025-03-10 14:"
    member_state(log, f"{day}00:00,000", M1, 0, "UNSUBSCRIBED", "JOINING")
    log.add(f"{day}00:00,001", c, EventType.JOIN_RECEIVED, member_id=M1, group_instance_id=m1_instance)
    log.add(f"{day}00:00,001", c, EventType.GROUP_EPOCH_BUMPED, group_epoch=1)
    log.add(
        f"{day}00:00,001",
        c,
        EventType.TARGET_ASSIGNMENT_COMPUTED,
        assignment_epoch=1,
        protocol_name="uniform",
    )
    member_state(log, f"{day}00:00,002", M1, 1, "JOINING", "RECONCILING")
    if m1_assigned is not None:
        log.add(f"{day}00:00,003", "member", EventType.PARTITIONS_ASSIGNED, member_id=M1, client_id=M1,
                partitions=m1_assigned)  # fmt: skip
    member_state(log, f"{day}00:00,003", M1, 1, "RECONCILING", "STABLE")
    member_state(log, f"{day}05:00,000", M2, 0, "UNSUBSCRIBED", "JOINING")
    log.add(f"{day}05:00,001", c, EventType.JOIN_RECEIVED, member_id=M2)
    log.add(f"{day}05:00,001", c, EventType.GROUP_EPOCH_BUMPED, group_epoch=2)
    log.add(
        f"{day}05:00,001",
        c,
        EventType.TARGET_ASSIGNMENT_COMPUTED,
        assignment_epoch=2,
        protocol_name="uniform",
    )
    member_state(log, f"{day}05:00,002", M2, 2, "JOINING", "RECONCILING")
    member_state(log, f"{day}05:00,003", M2, 2, "RECONCILING", "STABLE")
    return log


def test_an_epoch_left_unconverged_after_a_member_is_handed_released_partitions_makes_its_rebalance_inferred():
    """Kafka 4.0 broker + consumers' logs. m1 revokes t-2, t-3 for the joiner m2; m2, told epoch 2, logs
    RECONCILING again at epoch 2 (14:05:05): the coordinator hands it the released partitions and m2 is STABLE for
    it at once (CurrentAssignmentBuilder: UNRELEASED_PARTITIONS -> STABLE; added partitions need no
    acknowledgement), so epoch 2 may have converged there; m2's callback never runs (it leaves at 14:05:10), so its
    own log never shows it consuming them. Whether m2's leave is a further round of epoch 2's rebalance or a
    rebalance of its own, no line tells: the rebalance says inferred."""
    log, day = m2_joins_after_m1_settled_4_0(m1_assigned=tps("t", 0, 1, 2, 3)), "2025-03-10 14:"
    c = "coordinator"
    member_state(log, f"{day}05:03,000", M1, 1, "STABLE", "RECONCILING")
    log.add(f"{day}05:03,001", "member", EventType.PARTITIONS_REVOKED, member_id=M1, client_id=M1,
            partitions=tps("t", 2, 3))  # fmt: skip
    member_state(log, f"{day}05:03,002", M1, 1, "RECONCILING", "STABLE")
    member_state(log, f"{day}05:05,000", M2, 2, "STABLE", "RECONCILING")
    member_state(log, f"{day}05:10,000", M2, 2, "RECONCILING", "PREPARE_LEAVING")
    log.add(
        f"{day}05:10,001", c, EventType.MEMBER_REMOVED, member_id=M2, reason=RemovalReason.LEAVE_GROUP.value
    )
    log.add(f"{day}05:10,001", c, EventType.GROUP_EPOCH_BUMPED, group_epoch=3)
    out = log.replay()
    episodes = sorted(out["rebalance_episodes"], key=lambda r: r["started_at"])
    assert [(r["first_generation_id"], r["source"]) for r in episodes] == [(1, "observed"), (2, "inferred")]


def test_a_members_own_line_at_an_older_epoch_undoes_a_provisional_convergence():
    """Kafka 4.0 broker + consumers' logs. Epoch 2 (m2's join) looks converged at 14:05:00,002 (m2 told epoch 2; m1 STABLE
    and its epoch may have moved silently). m1's own line at 14:05:02 still states epoch 1: the client logs the epoch
    of the last heartbeat response it processed (ConsumerMembershipManager), so m1 never had epoch 2 before it
    left (-2), and the group is not Stable until every member has (ConsumerGroup.maybeUpdateGroupState): epoch 2 has
    not converged."""
    log, day = m2_joins_after_m1_settled_4_0(m1_instance="a"), "2025-03-10 14:"
    c = "coordinator"
    member_state(log, f"{day}05:02,000", M1, 1, "STABLE", "PREPARE_LEAVING")
    member_state(log, f"{day}05:02,001", M1, -2, "PREPARE_LEAVING", "LEAVING")
    log.add(f"{day}05:02,002", c, EventType.MEMBER_REMOVED, member_id=M1, group_instance_id="a", member_epoch=-2,
            reason=RemovalReason.LEAVE_GROUP.value)  # fmt: skip
    gens = {g["generation_id"]: g for g in log.replay()["generations"]}
    assert gens[2]["stabilized_at"] is None


def test_consumer_logs_alone_a_static_leave_releases_the_partitions_pending_its_revocation_without_a_bump():
    """c1 (static) leaves temporarily (epoch -2) at epoch 1, before it heard of epoch 2 whose target gives t-1
    to c2. The leave clears the partitions pending its revocation (GroupMetadataManager
    .consumerGroupStaticMemberGroupLeave) and keeps the rest reserved: c2 taking t-1 at that same epoch 2 says
    nothing of c1's session, which is still counted in epoch 2; t-0 handed over at a later epoch says it
    expired."""
    lines = [
        *(line for line in _joins("00:00", "c1", 1, "t-0, t-1") if "GroupCoordinator" not in line),
        *(line for line in _joins("00:02", "c2", 2, "") if "GroupCoordinator" not in line),
        _stamped("00:03,000", _MM.format("c1", 1, "STABLE", "PREPARE_LEAVING")),
        _stamped("00:03,002", _CB.format("c1", "Revoke previously assigned partitions", "t-0, t-1")),
        _stamped("00:03,002", _MM.format("c1", -2, "PREPARE_LEAVING", "LEAVING")),
        _stamped("00:03,002", _MM.format("c1", 1, "LEAVING", "UNSUBSCRIBED")),
        _stamped("00:07,000", _MM.format("c2", 2, "STABLE", "RECONCILING")),
        _stamped("00:07,002", _CB.format("c2", "Adding newly assigned partitions:", "t-1")),
        _stamped("00:07,002", _MM.format("c2", 2, "RECONCILING", "ACKNOWLEDGING")),
        _stamped("00:07,002", _MM.format("c2", 2, "ACKNOWLEDGING", "STABLE")),
        _stamped("01:00,000", _MM.format("c2", 3, "STABLE", "RECONCILING")),
        _stamped("01:00,002", _CB.format("c2", "Adding newly assigned partitions:", "t-0")),
        _stamped("01:00,002", _MM.format("c2", 3, "RECONCILING", "ACKNOWLEDGING")),
        _stamped("01:00,002", _MM.format("c2", 3, "ACKNOWLEDGING", "STABLE")),
    ]
    from rebalance_core.kafka_logs import parse_lines

    parsed = parse_lines(lines, file="consumers.log", cluster="sim")
    assert parsed.quarantine == []
    members = members_by_epoch(replay(parsed.events, group="g"))
    assert members[2] == ["c1", "c2"]
    assert members[3] == ["c2"]


def test_consumer_logs_alone_a_member_in_doubt_after_an_unexplained_bump_stays_in_doubt_until_it_shows():
    """c1 and c2 settle at epoch 2, then c2 falls silent. c1 is moved to epoch 3 by a bump no member line
    explains (c2's session expiry, GroupMetadataManager.consumerGroupFenceMember, or a metadata change):
    whether epoch 3 counts c2 is unknown (null), and so is every later epoch's list (c3's join opens epoch
    4) while c2's own log never shows it again: never a guess either way."""
    lines = [
        *(line for line in _c1_and_c2_settled_at_epoch_2() if "GroupCoordinator" not in line),
        _stamped("00:30,000", _MM.format("c1", 3, "STABLE", "RECONCILING")),
        _stamped("00:30,002", _MM.format("c1", 3, "RECONCILING", "ACKNOWLEDGING")),
        _stamped("00:30,002", _MM.format("c1", 3, "ACKNOWLEDGING", "STABLE")),
        *(line for line in _joins("01:00", "c3", 4, "") if "GroupCoordinator" not in line),
    ]
    from rebalance_core.kafka_logs import parse_lines

    parsed = parse_lines(lines, file="consumers.log", cluster="sim")
    assert parsed.quarantine == []
    members = members_by_epoch(replay(parsed.events, group="g"))
    assert members[2] == ["c1", "c2"]
    assert members[3] is None
    assert members[4] is None


def test_consumer_logs_alone_an_unexplained_bump_stays_unknown_when_its_epoch_closes_at_a_leave():
    """c1 and c2 settle at epoch 2, then c2 falls silent. c3's join is answered with epoch 4: two bumps, one
    its own join, the other no member line explains (c2's session expiry, GroupMetadataManager
    .consumerGroupFenceMember, or a metadata change). Epoch 4 converges (provisionally) and closes when c3
    starts leaving (PREPARE_LEAVING, its leave heartbeat bumps the next epoch) rather than at the next bump:
    c2 never stated epoch 4, so epoch 4's member list is unknown (null) however the epoch closes, never the
    guess that c2 is still in."""
    lines = [
        *(line for line in _c1_and_c2_settled_at_epoch_2() if "GroupCoordinator" not in line),
        *(line for line in _joins("01:00", "c3", 4, "") if "GroupCoordinator" not in line),
        _stamped("01:30,000", _MM.format("c3", 4, "STABLE", "PREPARE_LEAVING")),
        _stamped("01:30,001", _MM.format("c3", -1, "PREPARE_LEAVING", "LEAVING")),
        _stamped("01:30,001", _MM.format("c3", 4, "LEAVING", "UNSUBSCRIBED")),
        _stamped("01:35,000", _MM.format("c1", 5, "STABLE", "RECONCILING")),
        _stamped("01:35,002", _MM.format("c1", 5, "RECONCILING", "ACKNOWLEDGING")),
        _stamped("01:35,002", _MM.format("c1", 5, "ACKNOWLEDGING", "STABLE")),
    ]
    from rebalance_core.kafka_logs import parse_lines

    parsed = parse_lines(lines, file="consumers.log", cluster="sim")
    assert parsed.quarantine == []
    members = members_by_epoch(replay(parsed.events, group="g"))
    assert members[2] == ["c1", "c2"]
    assert members[4] is None


def test_consumer_logs_alone_an_epoch_skipped_between_a_leave_and_a_join_counts_all_but_the_leaver():
    """c1 and c2 settle at epoch 2 and c3 joins at 3; c1 leaves for good (epoch -1) and c4's join is answered
    with epoch 5. A joiner gets the epoch its own join bumped (GroupMetadataManager.consumerGroupHeartbeat)
    and the lines explain just two bumps, so c1's leave bumped epoch 4 (consumerGroupFenceMember). c3, lagging,
    shows epoch 4 only later: its row counts epoch 3's members but c1."""
    lines = [
        *(line for line in _c1_and_c2_settled_at_epoch_2() if "GroupCoordinator" not in line),
        *(line for line in _joins("00:30", "c3", 3, "") if "GroupCoordinator" not in line),
        _stamped("01:00,000", _MM.format("c1", 3, "STABLE", "PREPARE_LEAVING")),
        _stamped("01:00,002", _CB.format("c1", "Revoke previously assigned partitions", "t-0")),
        _stamped("01:00,002", _MM.format("c1", -1, "PREPARE_LEAVING", "LEAVING")),
        _stamped("01:00,002", _MM.format("c1", 3, "LEAVING", "UNSUBSCRIBED")),
        *(line for line in _joins("01:01", "c4", 5, "") if "GroupCoordinator" not in line),
        _stamped("01:03,000", _MM.format("c3", 4, "STABLE", "RECONCILING")),
        _stamped("01:03,002", _CB.format("c3", "Adding newly assigned partitions:", "t-0")),
        _stamped("01:03,002", _MM.format("c3", 4, "RECONCILING", "ACKNOWLEDGING")),
        _stamped("01:03,002", _MM.format("c3", 4, "ACKNOWLEDGING", "STABLE")),
    ]
    from rebalance_core.kafka_logs import parse_lines

    parsed = parse_lines(lines, file="consumers.log", cluster="sim")
    assert parsed.quarantine == []
    generations = {g["generation_id"]: g for g in replay(parsed.events, group="g")["generations"]}
    assert generations[3]["members"] == ["c1", "c2", "c3"]
    assert generations[4]["members"] == ["c2", "c3"]
    assert generations[4]["member_count"] == 2
    assert generations[5]["members"] == ["c2", "c3", "c4"]


def test_consumer_logs_alone_the_last_members_leave_ends_its_epoch_with_members_and_shows_no_empty_epoch():
    """c2 leaves (epoch -1: a bump to 3), then c1, the last member, leaves while reconciling to 3. Its leave
    heartbeat is answered after its last line, and removing it bumps the group epoch
    (GroupMetadataManager.consumerGroupFenceMember): the Empty epoch is that later bump, which no member line
    states (another silent bump may have come between), so it has no row; epoch 3, which had c1, did not end
    Empty."""
    lines = [
        *(line for line in _c1_and_c2_settled_at_epoch_2() if "GroupCoordinator" not in line),
        _stamped("01:00,000", _MM.format("c2", 2, "STABLE", "PREPARE_LEAVING")),
        _stamped("01:00,002", _CB.format("c2", "Revoke previously assigned partitions", "t-1")),
        _stamped("01:00,002", _MM.format("c2", -1, "PREPARE_LEAVING", "LEAVING")),
        _stamped("01:00,002", _MM.format("c2", 2, "LEAVING", "UNSUBSCRIBED")),
        _stamped("01:05,000", _MM.format("c1", 3, "STABLE", "RECONCILING")),
        _stamped("01:05,001", _MM.format("c1", 3, "RECONCILING", "PREPARE_LEAVING")),
        _stamped("01:05,002", _CB.format("c1", "Revoke previously assigned partitions", "t-0")),
        _stamped("01:05,002", _MM.format("c1", -1, "PREPARE_LEAVING", "LEAVING")),
        _stamped("01:05,002", _MM.format("c1", 3, "LEAVING", "UNSUBSCRIBED")),
    ]
    from rebalance_core.kafka_logs import parse_lines

    parsed = parse_lines(lines, file="consumers.log", cluster="sim")
    assert parsed.quarantine == []
    generations = replay(parsed.events, group="g")["generations"]
    ended_empty = [(g["generation_id"], g["ended_empty"]) for g in generations]
    assert ended_empty == [(1, False), (2, False), (3, False)]
    assert members_by_epoch({"generations": generations})[3] == ["c1"]


def test_consumer_logs_alone_an_epoch_a_lagging_member_shows_after_a_later_one_has_its_row():
    """c1 and c2 settle at epoch 2; c3's join shows epoch 4 first (epoch 3 was a bump no line showed yet),
    then c1 logs epoch 3, the epoch of the last heartbeat response it processed (ConsumerMembershipManager):
    member epochs are group epochs, so epoch 3 was one, with c1 in it: a row that did not end Empty, its member
    list unknown (null), never left out."""
    lines = [
        *(line for line in _c1_and_c2_settled_at_epoch_2() if "GroupCoordinator" not in line),
        *(line for line in _joins("01:00", "c3", 4, "") if "GroupCoordinator" not in line),
        _stamped("01:01,000", _MM.format("c1", 3, "STABLE", "RECONCILING")),
        _stamped("01:01,002", _MM.format("c1", 3, "RECONCILING", "ACKNOWLEDGING")),
        _stamped("01:01,002", _MM.format("c1", 3, "ACKNOWLEDGING", "STABLE")),
    ]
    from rebalance_core.kafka_logs import parse_lines

    parsed = parse_lines(lines, file="consumers.log", cluster="sim")
    assert parsed.quarantine == []
    generations = {g["generation_id"]: g for g in replay(parsed.events, group="g")["generations"]}
    assert sorted(generations) == [1, 2, 3, 4]
    assert generations[3]["ended_empty"] is False
    assert generations[3]["members"] is None


def test_consumer_logs_alone_a_refused_join_is_in_no_epoch_even_when_its_process_line_showed_it_first():
    """c2 joins at epoch 2; static c1 revokes t-1 for it, then leaves temporarily (epoch -2) while its process
    already starts a new consumer c1b on the same instance; c1's last revocation callback, logged under the
    client id, reads as c1b's. The coordinator refuses c1b's join (UNRELEASED_INSTANCE_ID,
    GroupMetadataManager.throwIfInstanceIdIsUnreleased: FATAL): c1b was never a member, so epoch 2 counts c1
    and c2 only."""
    static = _RESTARTED.replace("[Consumer clientId=c2,", "[Consumer instanceId=c1, clientId=c1,")
    lines = [
        *(line for line in _joins("00:00", "c1", 1, "t-0, t-1") if "GroupCoordinator" not in line),
        _stamped("00:02,000", _MM.format("c2", 0, "UNSUBSCRIBED", "JOINING")),
        _stamped("00:02,002", _MM.format("c2", 2, "JOINING", "RECONCILING")),
        _stamped("00:05,000", static.format("c1", 1, "STABLE", "RECONCILING")),
        _stamped("00:05,002", _CB.format("c1", "Revoke previously assigned partitions", "t-1")),
        _stamped("00:05,002", static.format("c1", 1, "RECONCILING", "ACKNOWLEDGING")),
        _stamped("00:05,002", static.format("c1", 1, "ACKNOWLEDGING", "STABLE")),
        _stamped("00:05,004", _MM.format("c2", 2, "RECONCILING", "ACKNOWLEDGING")),
        _stamped("00:05,004", _MM.format("c2", 2, "ACKNOWLEDGING", "STABLE")),
        _stamped("00:06,000", static.format("c1", 1, "STABLE", "PREPARE_LEAVING")),
        _stamped("00:06,001", static.format("c1b", 0, "UNSUBSCRIBED", "JOINING")),
        _stamped("00:06,001", _CB.format("c1", "Revoke previously assigned partitions", "t-0")),
        _stamped("00:06,002", static.format("c1", -2, "PREPARE_LEAVING", "LEAVING")),
        _stamped("00:06,002", static.format("c1", 1, "LEAVING", "UNSUBSCRIBED")),
        _stamped("00:06,003", static.format("c1b", 0, "JOINING", "FATAL")),
    ]
    from rebalance_core.kafka_logs import parse_lines

    parsed = parse_lines(lines, file="consumers.log", cluster="sim")
    assert parsed.quarantine == []
    assert members_by_epoch(replay(parsed.events, group="g"))[2] == ["c1", "c2"]


def log_4_0_lone_member_after_a_leave(fenced: str) -> Log:
    """Kafka 4.0 broker + consumers' logs: m1 consumes t-0..2 (epoch 1); m2 joins (epoch 2) and is STABLE with
    nothing yet; m1 leaves at 14:00:01 (epoch 3, its target computed at 14:00:01,005 in m2's heartbeat, the only
    member's); m2, silent since, is fenced at `fenced` (its session expired: epoch 4)."""
    log, c, day = Log("g"), "coordinator", "2025-03-10 14:00:"
    member_state(log, f"{day}00,000", M1, 0, "UNSUBSCRIBED", "JOINING")
    log.add(f"{day}00,001", c, EventType.JOIN_RECEIVED, member_id=M1)
    log.add(f"{day}00,001", c, EventType.GROUP_EPOCH_BUMPED, group_epoch=1)
    target_4_0(log, f"{day}00,001", 1)
    member_state(log, f"{day}00,002", M1, 1, "JOINING", "RECONCILING")
    log.add(f"{day}00,003", "member", EventType.PARTITIONS_ASSIGNED, member_id=M1, client_id=M1,
            partitions=tps("t", 0, 1, 2))  # fmt: skip
    member_state(log, f"{day}00,003", M1, 1, "RECONCILING", "ACKNOWLEDGING")
    member_state(log, f"{day}00,003", M1, 1, "ACKNOWLEDGING", "STABLE")
    member_state(log, f"{day}00,005", M2, 0, "UNSUBSCRIBED", "JOINING")
    log.add(f"{day}00,006", c, EventType.JOIN_RECEIVED, member_id=M2)
    log.add(f"{day}00,006", c, EventType.GROUP_EPOCH_BUMPED, group_epoch=2)
    target_4_0(log, f"{day}00,006", 2)
    member_state(log, f"{day}00,007", M2, 2, "JOINING", "RECONCILING")
    log.add(
        f"{day}00,008", "member", EventType.PARTITIONS_ASSIGNED, member_id=M2, client_id=M2, partitions=()
    )
    member_state(log, f"{day}00,008", M2, 2, "RECONCILING", "ACKNOWLEDGING")
    member_state(log, f"{day}00,008", M2, 2, "ACKNOWLEDGING", "STABLE")
    member_state(log, f"{day}01,000", M1, 1, "STABLE", "PREPARE_LEAVING")
    log.add(f"{day}01,001", "member", EventType.PARTITIONS_REVOKED, member_id=M1, client_id=M1,
            partitions=tps("t", 0, 1, 2))  # fmt: skip
    member_state(log, f"{day}01,001", M1, -1, "PREPARE_LEAVING", "LEAVING")
    member_state(log, f"{day}01,001", M1, 1, "LEAVING", "UNSUBSCRIBED")
    log.add(f"{day}01,002", c, EventType.MEMBER_REMOVED, member_id=M1, reason=RemovalReason.LEAVE_GROUP.value)
    log.add(f"{day}01,002", c, EventType.GROUP_EPOCH_BUMPED, group_epoch=3)
    target_4_0(log, f"{day}01,005", 3)
    log.add(f"2025-03-10 14:{fenced}", c, EventType.MEMBER_REMOVED, member_id=M2,
            reason=RemovalReason.SESSION_TIMEOUT.value)  # fmt: skip
    log.add(f"2025-03-10 14:{fenced}", c, EventType.GROUP_EPOCH_BUMPED, group_epoch=4)
    return log


def test_a_lone_stable_member_after_a_leave_is_reconciled_in_the_heartbeat_that_computes_the_target():
    """GroupMetadataManager.consumerGroupHeartbeat computes epoch 3's target in m2's heartbeat (the only member
    left) and reconciles m2 in the same heartbeat: STABLE by its own log, it has nothing to revoke, and m1's
    partitions are free once m1 is removed (CurrentAssignmentBuilder.computeNextAssignment), so epoch 3
    converges at its target although m2's callback never ran (it crashed): its fence is a rebalance of its own."""
    out = log_4_0_lone_member_after_a_leave("00:46,005").replay()
    episodes = sorted(out["rebalance_episodes"], key=lambda r: r["started_at"])
    assert [(r["first_generation_id"], r["rounds"]) for r in episodes] == [(1, 1), (2, 2), (4, 1)]
    gens = {g["generation_id"]: g for g in out["generations"]}
    assert gens[3]["stabilized_at"] == ms("2025-03-10 14:00:01,005")


def log_4_0_convergence_a_silent_member_may_not_confirm(joined: str) -> Log:
    """Kafka 4.0 broker + consumers' logs: m1 consumes t-0, t-1 (epoch 1); m2 joins at 14:00:10 (epoch 2);
    m1 revokes t-1 (its log still at epoch 1: the coordinator moves its epoch once it acknowledged), m2 takes it
    at 14:00:14; m3 joins at `joined` (epoch 3)."""
    log, c, day = Log("g"), "coordinator", "2025-03-10 14:00:"
    member_state(log, f"{day}00,000", M1, 0, "UNSUBSCRIBED", "JOINING")
    log.add(f"{day}00,001", c, EventType.JOIN_RECEIVED, member_id=M1)
    log.add(f"{day}00,001", c, EventType.GROUP_EPOCH_BUMPED, group_epoch=1)
    target_4_0(log, f"{day}00,001", 1)
    member_state(log, f"{day}00,002", M1, 1, "JOINING", "RECONCILING")
    log.add(f"{day}00,003", "member", EventType.PARTITIONS_ASSIGNED, member_id=M1, client_id=M1,
            partitions=tps("t", 0, 1))  # fmt: skip
    member_state(log, f"{day}00,003", M1, 1, "RECONCILING", "ACKNOWLEDGING")
    member_state(log, f"{day}00,003", M1, 1, "ACKNOWLEDGING", "STABLE")
    member_state(log, f"{day}10,000", M2, 0, "UNSUBSCRIBED", "JOINING")
    log.add(f"{day}10,001", c, EventType.JOIN_RECEIVED, member_id=M2)
    log.add(f"{day}10,001", c, EventType.GROUP_EPOCH_BUMPED, group_epoch=2)
    target_4_0(log, f"{day}10,001", 2)
    member_state(log, f"{day}10,002", M2, 2, "JOINING", "RECONCILING")
    log.add(
        f"{day}10,003", "member", EventType.PARTITIONS_ASSIGNED, member_id=M2, client_id=M2, partitions=()
    )
    member_state(log, f"{day}10,003", M2, 2, "RECONCILING", "ACKNOWLEDGING")
    member_state(log, f"{day}10,003", M2, 2, "ACKNOWLEDGING", "STABLE")
    member_state(log, f"{day}12,000", M1, 1, "STABLE", "RECONCILING")
    log.add(f"{day}12,001", "member", EventType.PARTITIONS_REVOKED, member_id=M1, client_id=M1,
            partitions=tps("t", 1))  # fmt: skip
    member_state(log, f"{day}12,001", M1, 1, "RECONCILING", "ACKNOWLEDGING")
    member_state(log, f"{day}12,001", M1, 1, "ACKNOWLEDGING", "STABLE")
    member_state(log, f"{day}14,000", M2, 2, "STABLE", "RECONCILING")
    log.add(f"{day}14,001", "member", EventType.PARTITIONS_ASSIGNED, member_id=M2, client_id=M2,
            partitions=tps("t", 1))  # fmt: skip
    member_state(log, f"{day}14,001", M2, 2, "RECONCILING", "ACKNOWLEDGING")
    member_state(log, f"{day}14,001", M2, 2, "ACKNOWLEDGING", "STABLE")
    member_state(log, f"{day}{joined}", "member-3", 0, "UNSUBSCRIBED", "JOINING")
    log.add(f"{day}{joined}", c, EventType.JOIN_RECEIVED, member_id="member-3")
    log.add(f"{day}{joined}", c, EventType.GROUP_EPOCH_BUMPED, group_epoch=3)
    target_4_0(log, f"{day}{joined}", 3)
    return log


@pytest.mark.parametrize(
    ("joined", "heartbeat_interval_ms", "source"),
    [("14,500", 5_000, "inferred"), ("30,000", 5_000, "observed"), ("30,000", None, "inferred")],
)
def test_a_rebalance_opening_before_a_silent_member_surely_heartbeated_may_be_a_further_round(
    joined, heartbeat_interval_ms, source
):
    """Epoch 2 looks converged at 14:00:14 (both members STABLE, every partition consumed), but m1's log never
    states epoch 2 (ConsumerMembershipManager updates the epoch silently when nothing changes for it) and its
    next heartbeat, one group.consumer.heartbeat.interval.ms after the target, may still be due: the group may
    be Reconciling (ConsumerGroup.maybeUpdateGroupState). m3's join before 14:00:15 opens a rebalance that may be
    a further round of epoch 2's: inferred. At 14:00:30 m1 has heartbeated since a stated 5 s interval: a
    rebalance of its own. Unstated, the interval (told in each heartbeat response, ConsumerHeartbeatRequestManager,
    logged by no client INFO line) may be anything below the session timeout: still inferred."""
    settings = ReplaySettings(consumer_heartbeat_interval_ms=heartbeat_interval_ms)
    out = log_4_0_convergence_a_silent_member_may_not_confirm(joined).replay(settings)
    episodes = sorted(out["rebalance_episodes"], key=lambda r: r["started_at"])
    assert [r["first_generation_id"] for r in episodes] == [1, 2, 3]
    assert episodes[2]["source"] == source


def log_4_0_leave_after_a_presumed_convergence(left: str, leaver: str) -> Log:
    """Kafka 4.0 broker alone: m1 joins at 14:00:00 (epoch 1), m2 at 14:00:20 (epoch 2); t grows at 14:01:00
    (epoch 3, presumed converged two heartbeat intervals later); `leaver` leaves at `left` (epoch 4)."""
    log, c, day = Log("g"), "coordinator", "2025-03-10 14:"
    for when, member, epoch in (("00:00,000", M1, 1), ("00:20,000", M2, 2)):
        log.add(f"{day}{when}", c, EventType.JOIN_RECEIVED, member_id=member)
        log.add(f"{day}{when}", c, EventType.GROUP_EPOCH_BUMPED, group_epoch=epoch)
        target_4_0(log, f"{day}{when}", epoch)
    log.add(f"{day}01:00,000", c, EventType.TOPIC_METADATA_CHANGED, attributes={"topic.t": "4"})
    log.add(f"{day}01:00,000", c, EventType.GROUP_EPOCH_BUMPED, group_epoch=3)
    target_4_0(log, f"{day}01:00,000", 3)
    log.add(
        f"{day}{left}", c, EventType.MEMBER_REMOVED, member_id=leaver, reason=RemovalReason.LEAVE_GROUP.value
    )
    log.add(f"{day}{left}", c, EventType.GROUP_EPOCH_BUMPED, group_epoch=4)
    return log


@pytest.mark.parametrize(
    ("left", "leaver", "stated", "source"),
    [
        ("05:30,000", M1, True, "inferred"),
        ("06:10,000", M1, True, "observed"),
        ("05:10,000", M2, True, "observed"),
        ("06:10,000", M1, False, "inferred"),
        ("05:10,000", M2, False, "inferred"),
    ],
)
def test_a_4_0_broker_log_a_leave_that_may_be_a_poll_timeout_makes_its_rebalance_inferred(
    left, leaver, stated, source
):
    """The broker logs the same leave for a closed consumer and for one whose poll timer expired
    (AbstractMembershipManager.transitionToSendingLeaveGroup): m1 leaving at 14:05:30 may have blocked in a
    callback since its last poll at 14:00:30, after epoch 3's target (14:01:00), never acknowledging a
    revocation: epoch 3 may never have converged, and the leave's rebalance may be a further round of it.
    With max.poll.interval.ms stated (300 s) and the heartbeat interval (5 s): leaving at 14:06:10, its last poll
    (14:01:10) came after epoch 3's target reached it; m2 leaving at 14:05:10 joined less than max.poll.interval.ms
    before (a member joins at a poll): neither can have blocked it. Unstated, the client's max.poll.interval.ms
    has no upper bound nor a floor above 1 ms (ConsumerConfig): either leave may be its poll timer's."""
    settings = ReplaySettings(
        max_poll_interval_ms=300_000 if stated else None,
        consumer_heartbeat_interval_ms=5_000 if stated else None,
    )
    out = log_4_0_leave_after_a_presumed_convergence(left, leaver).replay(settings)
    episodes = sorted(out["rebalance_episodes"], key=lambda r: r["started_at"])
    assert episodes[-1]["first_generation_id"] == 4
    assert episodes[-1]["source"] == source


def test_an_epoch_converged_by_its_members_logs_keeps_what_a_member_removed_later_consumed():
    """Kafka 4.0 broker + the consumer's log: m1 joins alone (epoch 1, reconciled in its joining heartbeat), its
    callback starts t-0 and t-1; its session expires at 14:00:08 (consumerGroupFenceMember bumps to epoch 2).
    Epoch 1's row closes with what its member consumed before the removal stopped it (inferred: no target map)."""
    log, c, day = Log("g"), "coordinator", "2025-03-10 14:00:"
    member_state(log, f"{day}00,000", M1, 0, "UNSUBSCRIBED", "JOINING")
    log.add(f"{day}00,001", c, EventType.JOIN_RECEIVED, member_id=M1)
    log.add(f"{day}00,001", c, EventType.GROUP_EPOCH_BUMPED, group_epoch=1)
    target_4_0(log, f"{day}00,001", 1)
    member_state(log, f"{day}00,002", M1, 1, "JOINING", "RECONCILING")
    log.add(f"{day}00,004", "member", EventType.PARTITIONS_ASSIGNED, member_id=M1, client_id=M1,
            partitions=tps("t", 0, 1))  # fmt: skip
    member_state(log, f"{day}00,004", M1, 1, "RECONCILING", "ACKNOWLEDGING")
    member_state(log, f"{day}00,004", M1, 1, "ACKNOWLEDGING", "STABLE")
    log.add(f"{day}08,001", c, EventType.MEMBER_REMOVED, member_id=M1,
            reason=RemovalReason.SESSION_TIMEOUT.value)  # fmt: skip
    log.add(f"{day}08,001", c, EventType.GROUP_EPOCH_BUMPED, group_epoch=2)
    out = log.replay()
    rows = [
        (r["member_id"], r["topic"], r["partition"], r["source"])
        for r in out["assignments"]
        if r["generation_id"] == 1
    ]
    assert rows == [(M1, "t", 0, "inferred"), (M1, "t", 1, "inferred")]


def log_3_x_fence_backdated_before_a_convergence(fenced: str) -> Log:
    """Kafka 3.x broker (target maps, assignment states): m1 consumes t-0, t-1 (epoch 1); m2 joins at 14:00:10
    (epoch 2: m1 keeps t-0, m2 gets t-1); m1 is STABLE at epoch 2 at 14:00:11, m2 at 14:00:12 (converged); m1's
    session (45 s, stated) expires at `fenced`."""
    log, c, day = Log("g"), "coordinator", "2025-03-10 14:"

    def state(when, member, epoch, previous, assigned):
        log.add(f"{day}{when}", c, EventType.MEMBER_EPOCH_UPDATED, member_id=member, member_epoch=epoch,
                partitions=assigned, attributes={"previous_epoch": str(previous), "state": "STABLE"})  # fmt: skip

    log.add(f"{day}00:00,000", c, EventType.JOIN_RECEIVED, member_id=M1)
    log.add(f"{day}00:00,000", c, EventType.GROUP_EPOCH_BUMPED, group_epoch=1)
    log.add(f"{day}00:00,000", c, EventType.TARGET_ASSIGNMENT_COMPUTED, assignment_epoch=1,
            protocol_name="uniform", assignment={M1: tps("t", 0, 1)})  # fmt: skip
    state("00:00,000", M1, 1, 0, tps("t", 0, 1))
    log.add(f"{day}00:10,000", c, EventType.JOIN_RECEIVED, member_id=M2)
    log.add(f"{day}00:10,000", c, EventType.GROUP_EPOCH_BUMPED, group_epoch=2)
    log.add(f"{day}00:10,000", c, EventType.TARGET_ASSIGNMENT_COMPUTED, assignment_epoch=2,
            protocol_name="uniform", assignment={M1: tps("t", 0), M2: tps("t", 1)})  # fmt: skip
    state("00:11,000", M1, 2, 1, tps("t", 0))
    state("00:12,000", M2, 2, 0, tps("t", 1))
    log.add(f"{day}{fenced}", c, EventType.MEMBER_REMOVED, member_id=M1, reason=RemovalReason.SESSION_TIMEOUT.value,
            attributes={"session_timeout_ms": "45000"})  # fmt: skip
    log.add(f"{day}{fenced}", c, EventType.GROUP_EPOCH_BUMPED, group_epoch=3)
    return log


@pytest.mark.parametrize(
    ("fenced", "heartbeat_interval_ms", "source"),
    [("00:56,500", 5_000, "inferred"), ("00:57,500", 5_000, "observed"), ("00:57,500", None, "inferred")],
)
def test_a_crash_found_at_its_session_expiry_before_a_convergence_makes_that_rebalance_inferred(
    fenced, heartbeat_interval_ms, source
):
    """m1's stop is placed at its last heartbeat, one session timeout before its fence (consumerGroupFenceMember
    on the session timer). Fenced at 14:00:56.5, it stopped at 14:00:11.5, before epoch 2 converged (14:00:12):
    that rebalance counted m1 as consuming t-0 at its end, which it no longer was: inferred. Fenced at
    14:00:57.5, it stopped after: nothing to doubt, given group.consumer.heartbeat.interval.ms (stated; not
    stated, its last heartbeat 12.5 s after the line that handed it t-0, t-1 may still be within one, which
    only needs to be below the 45 s session: inferred)."""
    out = log_3_x_fence_backdated_before_a_convergence(fenced).replay(
        ReplaySettings(consumer_heartbeat_interval_ms=heartbeat_interval_ms)
    )
    episode = next(r for r in out["rebalance_episodes"] if r["first_generation_id"] == 2)
    assert episode["source"] == source


def test_the_removal_of_a_member_that_never_had_the_epoch_converges_nothing():
    """Kafka 4.0 broker + consumers' logs: m1 joins alone (epoch 1) and its log stops while RECONCILING (a crash);
    m2 joins at 14:00:20 (epoch 2) and is STABLE. m1's session (45 s) expires at 14:00:45,001: its last heartbeat
    came before epoch 2's target, so it never had epoch 2, and its removal comes with the bump to epoch 3
    (GroupMetadataManager.consumerGroupFenceMember): epoch 2 never converged, epoch 3 is its further round."""
    log, c, day = Log("g"), "coordinator", "2025-03-10 14:00:"
    member_state(log, f"{day}00,000", M1, 0, "UNSUBSCRIBED", "JOINING")
    log.add(f"{day}00,001", c, EventType.JOIN_RECEIVED, member_id=M1)
    log.add(f"{day}00,001", c, EventType.GROUP_EPOCH_BUMPED, group_epoch=1)
    target_4_0(log, f"{day}00,001", 1)
    member_state(log, f"{day}00,002", M1, 1, "JOINING", "RECONCILING")
    member_state(log, f"{day}20,000", M2, 0, "UNSUBSCRIBED", "JOINING")
    log.add(f"{day}20,001", c, EventType.JOIN_RECEIVED, member_id=M2)
    log.add(f"{day}20,001", c, EventType.GROUP_EPOCH_BUMPED, group_epoch=2)
    target_4_0(log, f"{day}20,001", 2)
    member_state(log, f"{day}20,002", M2, 2, "JOINING", "RECONCILING")
    member_state(log, f"{day}20,003", M2, 2, "RECONCILING", "ACKNOWLEDGING")
    member_state(log, f"{day}20,003", M2, 2, "ACKNOWLEDGING", "STABLE")
    log.add(f"{day}45,001", c, EventType.MEMBER_REMOVED, member_id=M1, reason=RemovalReason.SESSION_TIMEOUT.value,
            attributes={"session_timeout_ms": "45000"})  # fmt: skip
    log.add(f"{day}45,001", c, EventType.GROUP_EPOCH_BUMPED, group_epoch=3)
    target_4_0(log, f"{day}47,000", 3)
    out = log.replay()
    episodes = sorted(out["rebalance_episodes"], key=lambda r: r["started_at"])
    assert [(r["first_generation_id"], r["rounds"]) for r in episodes] == [(1, 1), (2, 2)]
    gens = {g["generation_id"]: g for g in out["generations"]}
    assert gens[2]["stabilized_at"] is None


def test_events_an_epoch_closed_without_a_target_after_a_members_last_heartbeat_has_it_consume_nothing():
    """c2's process dies at 14:07:45 (its last heartbeat), after c1 left (epoch 3, no target computed before c4's
    join bumps to epoch 4 at 14:08). c2's session expires at 14:08:30 (45 s stated): the coordinator fences it
    one session timeout after its last heartbeat (GroupMetadataManager.consumerGroupFenceMember), so at epoch
    3's close it consumed nothing: epoch 3 (no target) has no assignment row for it, rather than t-1 inferred."""
    log, c, day = Log("g"), "coordinator", "2025-03-10 14:"

    def joins(when: str, member: str, epoch: int, target: dict[str, tuple[int, ...]]) -> None:
        member_state(log, f"{day}{when},000", member, 0, "UNSUBSCRIBED", "JOINING")
        log.add(f"{day}{when},001", c, EventType.JOIN_RECEIVED, member_id=member)
        log.add(f"{day}{when},001", c, EventType.GROUP_EPOCH_BUMPED, group_epoch=epoch)
        log.add(f"{day}{when},001", c, EventType.TARGET_ASSIGNMENT_COMPUTED, assignment_epoch=epoch,
                protocol_name="uniform", assignment={m: tps("t", *ps) for m, ps in target.items()})  # fmt: skip
        assignment_state(log, f"{day}{when},002", member, epoch, 0, "STABLE", *target[member])
        member_state(log, f"{day}{when},003", member, epoch, "JOINING", "RECONCILING")
        log.add(f"{day}{when},004", "member", EventType.PARTITIONS_ASSIGNED, member_id=member, client_id=member,
                partitions=tps("t", *target[member]))  # fmt: skip
        member_state(log, f"{day}{when},004", member, epoch, "RECONCILING", "STABLE")

    joins("00:00", "c1", 1, {"c1": (0, 1)})
    joins("05:00", "c2", 2, {"c1": (0,), "c2": ()})
    member_state(log, f"{day}05:01,000", "c1", 1, "STABLE", "RECONCILING")
    log.add(f"{day}05:01,001", "member", EventType.PARTITIONS_REVOKED, member_id="c1", client_id="c1",
            partitions=tps("t", 1))  # fmt: skip
    member_state(log, f"{day}05:01,002", "c1", 1, "RECONCILING", "STABLE")
    assignment_state(log, f"{day}05:01,003", "c1", 2, 1, "STABLE", 0)
    assignment_state(log, f"{day}05:02,000", "c2", 2, 2, "STABLE", 1)
    member_state(log, f"{day}05:02,001", "c2", 2, "STABLE", "RECONCILING")
    log.add(f"{day}05:02,002", "member", EventType.PARTITIONS_ASSIGNED, member_id="c2", client_id="c2",
            partitions=tps("t", 1))  # fmt: skip
    member_state(log, f"{day}05:02,002", "c2", 2, "RECONCILING", "STABLE")
    member_state(log, f"{day}07:00,000", "c1", 2, "STABLE", "PREPARE_LEAVING")
    log.add(f"{day}07:00,001", "member", EventType.PARTITIONS_REVOKED, member_id="c1", client_id="c1",
            partitions=tps("t", 0))  # fmt: skip
    member_state(log, f"{day}07:00,001", "c1", -1, "PREPARE_LEAVING", "LEAVING")
    log.add(f"{day}07:00,002", c, EventType.MEMBER_REMOVED, member_id="c1", member_epoch=-1,
            reason=RemovalReason.LEAVE_GROUP.value)  # fmt: skip
    log.add(f"{day}07:00,002", c, EventType.GROUP_EPOCH_BUMPED, group_epoch=3)
    joins("08:00", "c4", 4, {"c2": (1,), "c4": (0,)})
    log.add(f"{day}08:30,000", c, EventType.MEMBER_REMOVED, member_id="c2", reason=RemovalReason.SESSION_TIMEOUT.value,
            attributes={"session_timeout_ms": "45000"})  # fmt: skip
    out = log.replay()
    epoch_3 = [(r["member_id"], r["partition"]) for r in out["assignments"] if r["generation_id"] == 3]
    assert epoch_3 == []


def test_simulator_an_epoch_closed_without_a_target_while_a_member_was_frozen_has_it_consume_nothing():
    """b freezes (gc) right after a heartbeat, beyond its session. a leaves (an epoch bump; no target: b, the one
    member left, sends no heartbeat) and c joins. The truth's rows for the epoch without a target are what its
    members consumed when it closed: b, frozen since its last heartbeat, consumed nothing, although the
    coordinator learns it only at b's session expiry (GroupMetadataManager.consumerGroupFenceMember)."""
    timeline = Timeline(
        topics={"t": 2},
        actions=(
            Join(0, "a"),
            Join(1000, "b"),
            Pause(20000, "b", 120000, "gc"),
            Leave(40000, "a"),
            Join(50000, "c"),
        ),
    )
    truth = simulate_consumer_group(timeline, ConsumerSimSettings()).truth
    (no_target,) = [g["generation_id"] for g in truth["generations"] if g["join_completed_at"] is None]
    assert [g["members"] for g in truth["generations"] if g["generation_id"] == no_target] == [["b"]]
    assert [r for r in truth["assignments"] if r["generation_id"] == no_target] == []


@pytest.mark.parametrize(
    ("dumped", "source"), [("300000", "observed"), ("270000", "inferred"), (None, "inferred")]
)
def test_a_static_leavers_own_config_dump_states_the_max_poll_interval_that_rules_out_a_poll_timeout(
    dumped, source
):
    """m2, static (instance i2), joins at 14:00:20 and leaves at 14:05:10. Its client's config dump
    (AbstractConfig.logAll: "ConsumerConfig values:") states max.poll.interval.ms, which the KIP-848 client sends
    as its rebalance timeout and leaves on (AbstractHeartbeatRequestManager's poll timer): 300 s, more than it
    was in the group, so the leave is no poll timeout (it joined at a poll) and its rebalance is a rebalance of its
    own; 270 s, and its last poll may have been at 14:00:40, before epoch 3's target (14:01:00) reached it, a
    revocation never acknowledged; no dump (nor ReplaySettings), and the leave may be the poll timer's: inferred."""
    log = log_4_0_leave_after_a_presumed_convergence("05:10,000", M2)
    log.events = [
        dataclasses.replace(e, group_instance_id="i2") if e.member_id == M2 else e for e in log.events
    ]
    if dumped is not None:
        log.add("2025-03-10 14:00:19,000", "member", EventType.CLIENT_CONFIG, client_id="c2",
                group_instance_id="i2", attributes={"max_poll_interval_ms": dumped})  # fmt: skip
    out = log.replay(ReplaySettings(consumer_heartbeat_interval_ms=5_000))
    episodes = sorted(out["rebalance_episodes"], key=lambda r: r["started_at"])
    assert episodes[-1]["first_generation_id"] == 4
    assert episodes[-1]["source"] == source


def test_the_client_config_dumps_a_kip848_replay_read_survive_its_checkpoint():
    log = Log("g")
    log.add("2025-03-10 14:00:00,000", "member", EventType.CLIENT_CONFIG, client_id="c1",
            attributes={"max_poll_interval_ms": "60000"})  # fmt: skip
    replayer = ConsumerGroupReplayer("k", "g")
    replayer.feed(log.events)
    resumed = ConsumerGroupReplayer("k", "g", state=replayer.snapshot())
    assert (
        resumed.client_configs
        == replayer.client_configs
        == {"c1": {"max_poll_interval_ms": "60000", "client_id": "c1"}}
    )


def test_a_members_own_config_dump_is_found_by_the_client_id_its_lines_carry():
    """A KIP-848 member id is a UUID the coordinator or client makes (ConsumerGroupHeartbeat), naming no client:
    its own lines' client.id ("[Consumer clientId=svc/orders-1, groupId=g]", free text: a "/" in it too) finds
    the dump of its process (AbstractConfig.logAll at the consumer's construction), whose max.poll.interval.ms
    is its poll timer (and its rebalance timeout, ConsumerHeartbeatRequestManager). It survives a checkpoint."""
    log = Log("g")
    log.add("2025-03-10 14:00:00,000", "member", EventType.CLIENT_CONFIG, client_id="svc/orders-1", source="h1",
            attributes={"max_poll_interval_ms": "60000"})  # fmt: skip
    log.add("2025-03-10 14:00:01,000", "member", EventType.MEMBER_STATE_CHANGED, member_id=M1, member_epoch=0,
            client_id="svc/orders-1", source="h1", attributes={"from_state": "UNSUBSCRIBED", "to_state": "JOINING"})  # fmt: skip
    replayer = ConsumerGroupReplayer("k", "g")
    replayer.feed(log.events)
    resumed = ConsumerGroupReplayer("k", "g", state=replayer.snapshot())
    for r in (replayer, resumed):
        assert r._max_poll_interval_ms(r.members[M1]) == 60_000
