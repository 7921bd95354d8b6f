"""KIP-848, a 4.0+ broker's log (no target map, no member assignment states: DEBUG) with the members' own logs:
when an episode ends, and which assignment rows the members' blocks state. Without the target, the episode ends once every partition stopped is consumed again, but
those of a topic no member subscribes any more, which the target hands to nobody (the broker's assignors give a
topic's partitions to its subscribers only): each member's "Reconciling assignment" block at the epoch names its
whole assignment (ConsumerMembershipManager.maybeReconcile)."""

from __future__ import annotations

import itertools
import json

from rebalance_core.consumer.replayer import ConsumerGroupReplayer
from rebalance_core.events import TopicPartition
from rebalance_core.replay import event_order_key
from schemas.events import EventType
from tests.core.test_consumer_protocol import Log, ms, tps

DAY = "2025-03-10 14:"
C, M = "coordinator", "member"


def state(log, when, member, epoch, a, b):
    log.add(
        DAY + when,
        M,
        EventType.MEMBER_STATE_CHANGED,
        member_id=member,
        member_epoch=epoch,
        client_id=member,
        attributes={"from_state": a, "to_state": b},
    )


def block(log, when, member, assigned, owned, revoked=(), epoch=None):
    """epoch: the member epoch the parser gives the block (that of the member's state line before it)."""
    log.add(
        DAY + when,
        M,
        EventType.SYNC_RESPONSE,
        member_id=member,
        member_epoch=epoch,
        client_id=member,
        partitions=assigned,
        attributes={
            "owned": ",".join(f"{tp.topic}-{tp.partition}" for tp in owned),
            "revoked": ",".join(f"{tp.topic}-{tp.partition}" for tp in revoked),
            "group_protocol": "consumer",
        },
    )


def callback(log, when, member, event_type, partitions):
    log.add(DAY + when, M, event_type, member_id=member, client_id=member, partitions=partitions)


def bump(log, when, epoch):
    log.add(DAY + when, C, EventType.GROUP_EPOCH_BUMPED, group_epoch=epoch)
    log.add(
        DAY + when, C, EventType.TARGET_ASSIGNMENT_COMPUTED, assignment_epoch=epoch, protocol_name="uniform"
    )


def joins(log, when, member, epoch, assigned):
    state(log, when + ",000", member, 0, "UNSUBSCRIBED", "JOINING")
    log.add(DAY + when + ",001", C, EventType.JOIN_RECEIVED, member_id=member)
    bump(log, when + ",001", epoch)
    state(log, when + ",002", member, epoch, "JOINING", "RECONCILING")
    block(log, when + ",003", member, assigned, ())
    callback(log, when + ",004", member, EventType.PARTITIONS_ASSIGNED, assigned)
    state(log, when + ",004", member, epoch, "RECONCILING", "ACKNOWLEDGING")
    state(log, when + ",004", member, epoch, "ACKNOWLEDGING", "STABLE")


def leaves(log, when, member, epoch, owned, next_epoch):
    state(log, when + ",000", member, epoch, "STABLE", "PREPARE_LEAVING")
    callback(log, when + ",001", member, EventType.PARTITIONS_REVOKED, owned)
    state(log, when + ",001", member, -1, "PREPARE_LEAVING", "LEAVING")
    state(log, when + ",001", member, epoch, "LEAVING", "UNSUBSCRIBED")
    log.add(DAY + when + ",002", C, EventType.MEMBER_REMOVED, member_id=member, reason="leave_group")
    log.add(DAY + when + ",002", C, EventType.GROUP_EPOCH_BUMPED, group_epoch=next_epoch)


def log_m1_leaves_with_a_topic_only_it_subscribed() -> Log:
    """m1 consumes t-0 and u-0, m2 (subscribed to t only) t-1. m1 leaves at 01:00: u-0 goes to nobody, t-0 to m2,
    whose onPartitionsAssigned runs 20 s later; m2 leaves at 02:00."""
    log = Log("g")
    joins(log, "00:00", "m1", 1, tps("t", 0, 1) + tps("u", 0))
    joins(log, "00:10", "m2", 2, ())
    state(log, "00:12,000", "m1", 2, "STABLE", "RECONCILING")
    block(log, "00:12,001", "m1", tps("t", 0) + tps("u", 0), tps("t", 0, 1) + tps("u", 0))
    callback(log, "00:12,002", "m1", EventType.PARTITIONS_REVOKED, tps("t", 1))
    state(log, "00:12,003", "m1", 2, "RECONCILING", "ACKNOWLEDGING")
    state(log, "00:12,003", "m1", 2, "ACKNOWLEDGING", "STABLE")
    state(log, "00:15,000", "m2", 2, "STABLE", "RECONCILING")
    block(log, "00:15,001", "m2", tps("t", 1), ())
    callback(log, "00:15,002", "m2", EventType.PARTITIONS_ASSIGNED, tps("t", 1))
    state(log, "00:15,002", "m2", 2, "RECONCILING", "ACKNOWLEDGING")
    state(log, "00:15,002", "m2", 2, "ACKNOWLEDGING", "STABLE")
    leaves(log, "01:00", "m1", 2, tps("t", 0) + tps("u", 0), 3)
    log.add(
        DAY + "01:00,010",
        C,
        EventType.TARGET_ASSIGNMENT_COMPUTED,
        assignment_epoch=3,
        protocol_name="uniform",
    )
    state(log, "01:00,011", "m2", 3, "STABLE", "RECONCILING")
    block(log, "01:00,012", "m2", tps("t", 0, 1), tps("t", 1))
    callback(log, "01:20,000", "m2", EventType.PARTITIONS_ASSIGNED, tps("t", 0))
    state(log, "01:20,000", "m2", 3, "RECONCILING", "ACKNOWLEDGING")
    state(log, "01:20,000", "m2", 3, "ACKNOWLEDGING", "STABLE")
    leaves(log, "02:00", "m2", 3, tps("t", 0, 1), 4)
    return log


def test_a_partition_of_a_topic_nobody_subscribes_any_more_does_not_hold_the_episode_open():
    """u-0, revoked by m1's leave, is awaited by nobody: epoch 3's episode ends once m2 consumes t-0 (01:20), and
    counts t-0 as moved (m1 -> m2), not at the next bump, when m2 has stopped it again."""
    out = log_m1_leaves_with_a_topic_only_it_subscribed().replay()
    episodes = {r["episode_id"].rsplit("/", 1)[1]: r for r in out["rebalance_episodes"]}
    assert (episodes["epoch-3"]["partitions_moved"], episodes["epoch-3"]["source"]) == (1, "observed")
    assert episodes["epoch-3"]["partition_unavailable_ms"] == 19_999  # t-0: m1's revocation -> m2's callback
    assert out["anomalies"] == []


def test_a_members_own_block_states_its_row_though_another_member_logged_none_at_the_epoch():
    """m2 (subscribed to u) joins at epoch 2 and its block names u-0; m1's assignment does not change, so it logs no
    block at epoch 2 (its epoch moves without a reconciliation). m2's poll loop is stuck: it never consumes u-0 and
    leaves on its poll timer. No member revoked anything towards epoch 2, so nothing was withheld from m2: its row
    is u-0 as its block states (observed), m1's what it consumed (inferred)."""
    log = Log("g")
    joins(log, "00:00", "m1", 1, tps("t", 0, 1))
    state(log, "00:10,000", "m2", 0, "UNSUBSCRIBED", "JOINING")
    log.add(DAY + "00:10,001", C, EventType.JOIN_RECEIVED, member_id="m2")
    bump(log, "00:10,001", 2)
    state(log, "00:10,002", "m2", 2, "JOINING", "RECONCILING")
    block(log, "00:10,003", "m2", tps("u", 0), ())
    state(log, "05:10,004", "m2", 2, "RECONCILING", "PREPARE_LEAVING")
    state(log, "05:10,004", "m2", -1, "PREPARE_LEAVING", "LEAVING")
    state(log, "05:10,004", "m2", 2, "LEAVING", "UNSUBSCRIBED")
    log.add(DAY + "05:10,005", C, EventType.MEMBER_REMOVED, member_id="m2", reason="leave_group")
    log.add(DAY + "05:10,005", C, EventType.GROUP_EPOCH_BUMPED, group_epoch=3)
    out = log.replay()
    rows = sorted((r["member_id"], str(TopicPartition(r["topic"], r["partition"])), r["source"])
                  for r in out["assignments"] if r["generation_id"] == 2)  # fmt: skip
    assert rows == [("m1", "t-0", "inferred"), ("m1", "t-1", "inferred"), ("m2", "u-0", "observed")]


def test_member_logs_only_a_revocation_at_the_members_own_epoch_states_its_row_there_what_it_owns():
    """Members' logs only. m1 (t-0) and m2 (u-0) are at epoch 2; at 00:30 m1, still at epoch 2, revokes t-0: a step
    towards epoch 3, which no line has shown yet (the coordinator sends a revocation only for a newer target,
    CurrentAssignmentBuilder.computeNextAssignment). Its block's "Assigned partitions" are epoch 3's, not epoch 2's;
    its owned partitions are its whole assignment at epoch 2 (observed), though it revoked them before epoch 3 was
    shown, and nobody revoked anything towards epoch 2."""
    log = Log("g")
    for when, member, epoch, assigned in (("00:00", "m1", 1, tps("t", 0)), ("00:10", "m2", 2, tps("u", 0))):
        state(log, when + ",000", member, 0, "UNSUBSCRIBED", "JOINING")
        state(log, when + ",002", member, epoch, "JOINING", "RECONCILING")
        block(log, when + ",003", member, assigned, ())
        callback(log, when + ",004", member, EventType.PARTITIONS_ASSIGNED, assigned)
        state(log, when + ",004", member, epoch, "RECONCILING", "ACKNOWLEDGING")
        state(log, when + ",004", member, epoch, "ACKNOWLEDGING", "STABLE")
    state(log, "00:30,000", "m1", 2, "STABLE", "RECONCILING")
    block(log, "00:30,001", "m1", (), tps("t", 0), revoked=tps("t", 0))
    callback(log, "00:30,002", "m1", EventType.PARTITIONS_REVOKED, tps("t", 0))
    state(log, "00:30,003", "m1", 2, "RECONCILING", "ACKNOWLEDGING")
    state(log, "00:30,003", "m1", 2, "ACKNOWLEDGING", "STABLE")
    state(log, "00:30,010", "m1", 3, "STABLE", "RECONCILING")
    state(log, "00:35,000", "m2", 3, "STABLE", "RECONCILING")
    block(log, "00:35,001", "m2", tps("t", 0) + tps("u", 0), tps("u", 0))
    callback(log, "00:35,002", "m2", EventType.PARTITIONS_ASSIGNED, tps("t", 0))
    out = log.replay()
    rows = sorted((r["member_id"], str(TopicPartition(r["topic"], r["partition"])), r["source"])
                  for r in out["assignments"] if r["generation_id"] == 2)  # fmt: skip
    assert rows == [("m1", "t-0", "observed"), ("m2", "u-0", "observed")]


def test_a_member_silent_at_an_epoch_it_never_heard_of_leaves_the_epochs_rows_unstated():
    """m1 owns t-0 and t-1 and leaves at epoch 4; m2's block at epoch 4 names t-0. m3 logs nothing at epoch 4: its
    next heartbeat response already carried epoch 5 (the target reaches a member only with a heartbeat response,
    ConsumerGroupHeartbeat), where its block names t-1. t-1, which m1 held, is in no block at epoch 4 and in no
    silent member's consumption: m3's assignment changed there unlogged, so epoch 4's rows are not stated (no row:
    unknown, or inferred), never a confident "m2 has t-0, m3 nothing"."""
    log = Log("g")
    joins(log, "00:00", "m1", 1, tps("t", 0, 1))
    joins(log, "00:10", "m2", 2, ())
    joins(log, "00:20", "m3", 3, ())
    state(log, "00:30,000", "m1", 3, "STABLE", "PREPARE_LEAVING")
    callback(log, "00:30,001", "m1", EventType.PARTITIONS_REVOKED, tps("t", 0, 1))
    state(log, "00:30,002", "m1", -1, "PREPARE_LEAVING", "LEAVING")
    state(log, "00:30,002", "m1", 1, "LEAVING", "UNSUBSCRIBED")
    log.add(DAY + "00:30,003", C, EventType.MEMBER_REMOVED, member_id="m1", reason="leave_group")
    bump(log, "00:30,003", 4)
    state(log, "00:31,000", "m2", 4, "STABLE", "RECONCILING")
    block(log, "00:31,001", "m2", tps("t", 0), ())
    joins(log, "00:40", "m4", 5, ())
    state(log, "00:41,000", "m3", 5, "STABLE", "RECONCILING")
    block(log, "00:41,001", "m3", tps("t", 1), ())
    out = log.replay()
    rows = sorted((r["member_id"], str(TopicPartition(r["topic"], r["partition"])), r["source"])
                  for r in out["assignments"] if r["generation_id"] == 4)  # fmt: skip
    assert all(source == "inferred" for _, _, source in rows)  # none, or inferred: never m2's alone, observed


def log_m1_frozen_past_its_session_logs_its_epoch_2_block_on_waking() -> Log:
    """m1, the lone member, freezes (a GC pause) after its heartbeat brought epoch 2 (t-2 created); the
    coordinator fences it when its session expires (epoch 3, empty). On waking, m1 logs the block of epoch 2,
    then learns it was fenced and rejoins (epoch 4)."""
    log = Log("g")
    joins(log, "00:00", "m1", 1, tps("t", 0, 1))
    bump(log, "00:10,000", 2)
    log.add(DAY + "00:55,000", C, EventType.MEMBER_REMOVED, member_id="m1", reason="session_timeout")
    log.add(DAY + "00:55,000", C, EventType.GROUP_EPOCH_BUMPED, group_epoch=3)
    state(log, "01:05,000", "m1", 2, "STABLE", "RECONCILING")
    block(log, "01:05,001", "m1", tps("t", 0, 1, 2), tps("t", 0, 1), epoch=2)
    state(log, "01:05,002", "m1", 2, "RECONCILING", "FENCED")
    callback(log, "01:05,002", "m1", EventType.PARTITIONS_LOST, tps("t", 0, 1))
    joins(log, "01:06", "m1", 4, tps("t", 0, 1, 2))
    return log


def _rows_of(out, generation):
    return {
        (r["member_id"], r["topic"], r["partition"], r["source"])
        for r in out["assignments"]
        if r["generation_id"] == generation
    }


def test_a_fenced_members_block_logged_on_waking_states_its_row_at_its_last_epoch():
    # ConsumerMembershipManager logs the block of the heartbeat response the member got before its freeze
    # (AbstractMembershipManager.maybeReconcile) and only then hears FENCED_MEMBER_EPOCH; the coordinator sent
    # it its whole target there (CurrentAssignmentBuilder: a lone member is withheld nothing)
    out = log_m1_frozen_past_its_session_logs_its_epoch_2_block_on_waking().replay()
    assert _rows_of(out, 2) == {("m1", "t", p, "observed") for p in (0, 1, 2)}


def test_a_fenced_members_late_block_survives_every_batch_boundary():
    events = sorted(
        log_m1_frozen_past_its_session_logs_its_epoch_2_block_on_waking().events, key=event_order_key
    )
    whole = replay_in_batches(events, [])
    for cut in range(1, len(events)):
        assert replay_in_batches(events, [cut]) == whole, cut


def test_a_fenced_member_that_never_wakes_has_its_rows_written_at_the_end():
    log = log_m1_frozen_past_its_session_logs_its_epoch_2_block_on_waking()
    log.events = [e for e in log.events if e.ts < ms(DAY + "01:00,000")]
    out = log.replay()
    assert {tp for _, _, tp, _ in _rows_of(out, 1)} == {0, 1}
    assert 2 in {g["generation_id"] for g in out["generations"]}


def replay_in_batches(events, cuts, settings=None, group=("k", "g")) -> dict:
    """Replay with a snapshot -> JSON -> resume at every cut; group: (cluster, group id) of the events."""
    out: dict[str, list[dict]] = {}
    state = None
    bounds = [0, *cuts, len(events)]
    for lo, hi in itertools.pairwise(bounds):
        replayer = ConsumerGroupReplayer(*group, settings, state=state)
        replayer.feed(events[lo:hi])
        for name, rows in replayer.drain().items():
            out.setdefault(name, []).extend(rows)
        state = json.loads(json.dumps(replayer.snapshot()))
    replayer = ConsumerGroupReplayer(*group, settings, state=state)
    for name, rows in replayer.finish().items():
        out.setdefault(name, []).extend(rows)
    return {name: sorted(map(repr, rows)) for name, rows in out.items()}


def test_a_fenced_member_whose_process_restarted_holds_no_rows():
    """m1's process crashed and restarted as m1b (the same client, a new member id) before the coordinator fenced
    m1: a dead process logs no late block, so epoch 2's rows are written at the fence, not held to the end."""
    log = Log("g")
    joins(log, "00:00", "m1", 1, tps("t", 0, 1))
    bump(log, "00:10,000", 2)
    log.add(
        DAY + "00:20,000",
        M,
        EventType.MEMBER_STATE_CHANGED,
        member_id="m1b",
        member_epoch=0,
        client_id="m1",
        attributes={"from_state": "UNSUBSCRIBED", "to_state": "JOINING"},
    )
    log.add(DAY + "00:20,001", C, EventType.JOIN_RECEIVED, member_id="m1b")
    log.add(DAY + "00:55,000", C, EventType.MEMBER_REMOVED, member_id="m1", reason="session_timeout")
    log.add(DAY + "00:55,000", C, EventType.GROUP_EPOCH_BUMPED, group_epoch=3)
    replayer = ConsumerGroupReplayer("k", "g", None)
    replayer.feed(sorted(log.events, key=event_order_key))
    assert replayer.tracker.fenced_awaited == {}
    assert 2 in {r["generation_id"] for r in replayer.drain()["assignments"]}


def test_members_logs_only_never_take_a_stopped_partition_as_awaited_by_nobody():
    """The same group, its members' logs only: at 01:20 u-0 is stopped and m2, the only member logged, names no u
    partition at epoch 3. But no line names every member (the coordinator's does: GroupMetadataManager keeps each
    member that heartbeats): a member whose host log is missing may subscribe u and take u-0, so u-0 still holds
    the episode open."""
    log = log_m1_leaves_with_a_topic_only_it_subscribed()
    events = sorted((e for e in log.events if e.side != C), key=event_order_key)
    replayer = ConsumerGroupReplayer(log.cluster, log.group)
    replayer.feed([e for e in events if e.ts <= ms(DAY + "01:20,000")])
    assert set(replayer.timeline.stopped()) == set(tps("u", 0))
    assert replayer._stops_awaited_by_nobody() == frozenset()


def test_a_checkpoint_taken_while_members_blocks_are_on_their_views_resumes():
    """A member's latest "Reconciling assignment" block (kept on its view as TopicPartitions) is part of the
    checkpoint a nightly run stores between batches: resumed from JSON at any cut, the replay goes on (it
    failed with "'list' object has no attribute 'topic'" when the block came back as plain lists) and gives
    the rows of one uninterrupted replay. random:34: a simulated KIP-848 group, broker and members' logs."""
    from benchmarks.fidelity import build_case
    from rebalance_core.replay import events_by_group
    from rebalance_core.replay_common import ReplaySettings

    case = build_case("random:34")
    settings = ReplaySettings(final=False, topics=dict(case.topics))
    for group, events in events_by_group(case.events, 0).items():
        whole = replay_in_batches(events, [], settings, group)
        assert whole["assignments"]  # the group's events are replayed, not set aside
        for cut in (len(events) // 3, len(events) // 2, 2 * len(events) // 3):
            assert replay_in_batches(events, [cut], settings, group) == whole, cut
