"""KIP-848, the broker's log alone: when a member's partitions really start and stop.

The coordinator's "Member m new assignment state: epoch=E, previousEpoch=P, state=S, assignedPartitions=[...] and
revokedPartitions=[...]" (GroupMetadataManager.consumerGroupHeartbeat, one member's step computed by
CurrentAssignmentBuilder) states what it hands the member, not what the member does with it:
- a start: the member is STABLE at the new epoch as soon as nothing it is given is held by another, before it has
  even read the response; it consumes them once its onPartitionsAssigned ran on its application thread, which it
  acknowledges in a heartbeat (owned partitions) that the broker does not log at INFO;
- a stop: UNREVOKED_PARTITIONS asks it to revoke; it revokes in its callback and acknowledges at once, so the
  stop lies between the request and its next state line (or its leave).
A member whose poll loop is stuck runs neither callback and leaves on its poll timer
(AbstractMembershipManager.transitionToSendingLeaveGroup, max.poll.interval.ms, 300 s by default); the broker
logs that leave like any other: "left" (epoch -1), or "temporarily left" for a static member
(ConsumerMembershipManager.leaveGroupEpoch: -2).
"""

from __future__ import annotations

import dataclasses

import pytest

from rebalance_core.kafka_logs import parse_lines
from rebalance_core.replay import replay
from rebalance_core.replay_common import ReplaySettings

_GC = (
    "INFO [GroupCoordinator id=1 topic=__consumer_offsets partition=3] [GroupId g] {} "
    "(org.apache.kafka.coordinator.group.GroupMetadataManager)"
)
TOPIC_ID = "AAAAAAAAAAAAAAAAAAAAAA"
SETTINGS = ReplaySettings(topics={"t": 2}, topic_ids={"t": TOPIC_ID}, default_assignor="uniform")


def line(when: str, text: str) -> str:
    return f"[2024-01-01 00:{when}] {_GC.format(text)}"


def state(
    when: str, member: str, epoch: int, previous: int, name: str, assigned: str, revoked: str = ""
) -> str:
    def ids(partitions: str) -> str:
        return ", ".join(f"{TOPIC_ID}-{p}" for p in partitions.split(",") if p)

    return line(
        when,
        f"Member {member} new assignment state: epoch={epoch}, previousEpoch={previous}, state={name}, "
        f"assignedPartitions=[{ids(assigned)}] and revokedPartitions=[{ids(revoked)}].",
    )


def target(when: str, epoch: int, members: dict[str, str]) -> str:
    parts = ", ".join(
        f"{m}=MemberAssignment(partitions={{{TOPIC_ID}=[{p.replace(',', ', ')}]}})" if p else
        f"{m}=MemberAssignment(partitions={{}})"
        for m, p in members.items()
    )  # fmt: skip
    return line(
        when,
        f"Computed a new target assignment for epoch {epoch} with 'uniform' assignor in 0ms: {{{parts}}}.",
    )


def c2_takes_t1_from_c1(static: bool) -> list[str]:
    """c1 consumes t-0 and t-1; c2 joins, c1 revokes t-1 (acknowledged 10 ms later) and c2 is handed it at 00:13."""
    joins = (
        "Static member c2 with instance id c2 joins the consumer group using the consumer protocol."
        if static
        else "Member c2 joins the consumer group using the consumer protocol."
    )
    return [
        line("00:00,000", "Member c1 joins the consumer group using the consumer protocol."),
        line("00:00,000", "Bumped group epoch to 1."),
        target("00:00,000", 1, {"c1": "0,1"}),
        state("00:00,001", "c1", 1, 0, "STABLE", "0,1"),
        line("00:10,000", joins),
        line("00:10,000", "Bumped group epoch to 2."),
        target("00:10,000", 2, {"c1": "0", "c2": "1"}),
        state("00:10,001", "c2", 2, 0, "UNRELEASED_PARTITIONS", ""),
        state("00:11,000", "c1", 1, 1, "UNREVOKED_PARTITIONS", "0", revoked="1"),
        state("00:11,010", "c1", 2, 1, "STABLE", "0"),
        state("00:13,000", "c2", 2, 2, "STABLE", "1"),
    ]


def run(lines: list[str], **stated: int | None) -> dict:
    """Replay a broker log, with the timings the user states in ReplaySettings (`stated`; None: not stated)."""
    parsed = parse_lines(lines, file="server.log", cluster="k")
    assert parsed.quarantine == []
    return replay(parsed.events, dataclasses.replace(SETTINGS, **stated))


# (left_at, the max.poll.interval.ms the user states, source): within it, maybe the poll timer's leave; beyond a
# stated one, it polled since; with none stated, no instant proves it polled (the setting has no upper bound)
LEAVES_AFTER_A_HANDOVER = [
    ("04:59,000", 300_000, "inferred"),
    ("05:14,000", 300_000, "observed"),
    ("05:14,000", None, "inferred"),
    ("05:14,000", 600_000, "inferred"),
]


def moves_of(out: dict, tp: int) -> list[tuple]:
    return [
        (r["from_member_id"], r["to_member_id"], r["source"])
        for r in out["partition_movements"]
        if r["partition"] == tp
    ]


@pytest.mark.parametrize(("left_at", "max_poll_interval_ms", "source"), LEAVES_AFTER_A_HANDOVER)
def test_a_static_member_temporarily_leaving_soon_after_it_was_handed_partitions_may_never_have_consumed_them(
    left_at, max_poll_interval_ms, source
):
    """c2 (static) is STABLE with t-1 at 00:13 and "temporarily left" at 04:59, within max.poll.interval.ms: its
    poll timer's leave (ConsumerMembershipManager.leaveGroupEpoch: a static member leaves with epoch -2), so its
    onPartitionsAssigned may never have run. Its start of t-1 (the movement c1 -> c2 and the episode that counted
    it) and its stop are inferred. Leaving 5 min 1 s after the line with max.poll.interval.ms stated 300 s: it
    polled meanwhile, all observed; stated 600 s, or not stated (Kafka's default is no bound), still inferred."""
    out = run(
        [
            *c2_takes_t1_from_c1(static=True),
            line(left_at, "Static Member c2 with instance id c2 temporarily left the consumer group."),
        ],
        max_poll_interval_ms=max_poll_interval_ms,
        consumer_heartbeat_interval_ms=5_000,  # c1's revocation, acknowledged 10 ms later, is observed
    )
    assert moves_of(out, 1) == [("c1", "c2", source), ("c2", None, source)]
    handover = out["rebalance_episodes"][1]
    assert (handover["partitions_moved"], handover["source"]) == (1, source)


@pytest.mark.parametrize(("left_at", "max_poll_interval_ms", "source"), LEAVES_AFTER_A_HANDOVER)
def test_a_member_leaving_soon_after_it_was_handed_partitions_leaves_the_rebalance_that_handed_them_inferred(
    left_at, max_poll_interval_ms, source
):
    """c2 is STABLE with t-1 at 00:13 and leaves at 04:59 (epoch -1), within max.poll.interval.ms: maybe its poll
    timer's leave, its onPartitionsAssigned never run. Not only its stop of t-1 is inferred: so is its start, and the
    rebalance of epoch 2, which counted t-1 as moved to c2 (the truth may be: moved to nobody)."""
    out = run(
        [*c2_takes_t1_from_c1(static=False), line(left_at, "Member c2 left the consumer group.")],
        max_poll_interval_ms=max_poll_interval_ms,
        consumer_heartbeat_interval_ms=5_000,  # c1's revocation, acknowledged 10 ms later, is observed
    )
    assert moves_of(out, 1)[:2] == [("c1", "c2", source), ("c2", None, source)]
    handover = out["rebalance_episodes"][1]
    assert (handover["partitions_moved"], handover["source"]) == (1, source)


def c2_then_takes_t0_from_leaving_c1() -> list[str]:
    """After c2_takes_t1_from_c1: c1 leaves at 01:00 and c2 is handed t-0 too, at 01:00.001."""
    return [
        line("01:00,000", "Member c1 left the consumer group."),
        line("01:00,000", "Bumped group epoch to 3."),
        target("01:00,000", 3, {"c2": "0,1"}),
        state("01:00,001", "c2", 3, 2, "STABLE", "0,1"),
    ]


@pytest.mark.parametrize(
    ("left_at", "t1_source"), [("04:59,000", "inferred"), ("05:14,000", "observed")]
)  # fmt: skip
def test_every_line_that_handed_a_leaving_member_partitions_within_max_poll_interval_leaves_their_start_inferred(
    left_at, t1_source
):
    """c2 is handed t-1 at 00:13 and t-0 at 01:00 and leaves, max.poll.interval.ms 300 s: its heartbeats go on from
    its background thread while its poll loop is stuck, so lines keep handing it partitions whose
    onPartitionsAssigned never ran. Leaving at 04:59, both handovers lie within the interval: both starts are
    inferred, not only the latest. Leaving at 05:14, it polled after the first (else it would have left sooner):
    t-1's start stands, t-0's is inferred."""
    out = run(
        [
            *c2_takes_t1_from_c1(static=False),
            *c2_then_takes_t0_from_leaving_c1(),
            line(left_at, "Member c2 left the consumer group."),
        ],
        max_poll_interval_ms=300_000,
        consumer_heartbeat_interval_ms=5_000,
    )
    assert moves_of(out, 1)[0] == ("c1", "c2", t1_source)
    assert moves_of(out, 0)[0] == ("c1", "c2", "inferred")
    assert [r["source"] for r in out["rebalance_episodes"]][1:3] == [t1_source, "inferred"]


@pytest.mark.parametrize("acknowledged", [True, False])
def test_an_acknowledged_revocation_proves_the_member_consumed_what_it_was_handed_before(acknowledged):
    """c1 is handed t-0 and t-1 at 00:00 and leaves at 01:00, no max.poll.interval.ms stated (so no bound proves it
    polled since). It acknowledged the revocation of t-1 at 00:11 (UNREVOKED_PARTITIONS -> STABLE): its
    onPartitionsRevoked ran on its application thread, after the callbacks of the reconciliations before
    (ConsumerMembershipManager reconciles one assignment at a time), so its start of t-0 stands. Without that
    line, its start of both is inferred."""
    lines = c2_takes_t1_from_c1(static=False)
    if not acknowledged:
        lines = [t for t in lines if "00:11,010" not in t and "00:13,000" not in t]
    out = run(
        [*lines, line("01:00,000", "Member c1 left the consumer group.")],
        consumer_heartbeat_interval_ms=5_000,
    )
    source = "observed" if acknowledged else "inferred"
    assert moves_of(out, 0) == [("c1", None, source)]
    assert out["rebalance_episodes"][0]["source"] == source


def c1_asked_to_revoke_t1() -> list[str]:
    """c1 consumes t-0 and t-1; c2 joins at 00:10 and c1 is asked to revoke t-1 at 00:11 (UNREVOKED_PARTITIONS)."""
    return [
        line("00:00,000", "Member c1 joins the consumer group using the consumer protocol."),
        line("00:00,000", "Bumped group epoch to 1."),
        target("00:00,000", 1, {"c1": "0,1"}),
        state("00:00,001", "c1", 1, 0, "STABLE", "0,1"),
        line("00:10,000", "Member c2 joins the consumer group using the consumer protocol."),
        line("00:10,000", "Bumped group epoch to 2."),
        target("00:10,000", 2, {"c1": "0", "c2": "1"}),
        state("00:10,001", "c2", 2, 0, "UNRELEASED_PARTITIONS", ""),
        state("00:11,000", "c1", 1, 1, "UNREVOKED_PARTITIONS", "0", revoked="1"),
    ]


@pytest.mark.parametrize(
    ("acknowledged_at", "heartbeat_interval_ms", "source"),
    [
        ("00:11,010", 5_000, "observed"),
        ("00:41,000", 5_000, "inferred"),
        ("00:14,000", 2_000, "inferred"),  # 3 s apart, beyond a stated 2 s interval (under Kafka's default)
        ("00:11,010", None, "inferred"),  # no interval stated: it can be 1 ms (GroupCoordinatorConfig)
    ],
)
def test_a_revocation_stops_between_the_request_and_the_members_next_state_line(
    acknowledged_at, heartbeat_interval_ms, source
):
    """The member revokes in its callback and acknowledges in a heartbeat sent at once (ConsumerMembershipManager:
    ACKNOWLEDGING), which moves it to the new epoch (CurrentAssignmentBuilder): its stop of t-1 lies between the
    request and that line. 10 ms apart, the request's instant is the stop within the heartbeat bound (observed);
    30 s apart, its callback took up to that long: the stop, so t-1's unavailable time, is inferred. The bound is
    group.consumer.heartbeat.interval.ms as stated (ReplaySettings.consumer_heartbeat_interval_ms); not stated,
    no gap is within it."""
    out = run(
        [
            *c1_asked_to_revoke_t1(),
            state(acknowledged_at, "c1", 2, 1, "STABLE", "0"),
            state(acknowledged_at.replace(",0", ",5"), "c2", 2, 2, "STABLE", "1"),
        ],
        consumer_heartbeat_interval_ms=heartbeat_interval_ms,
    )
    assert moves_of(out, 1) == [("c1", "c2", source)]


@pytest.mark.parametrize("leave", ["Member c1 left the consumer group.", "Member c1 fenced from the group because the member session expired."])  # fmt: skip
def test_a_revocation_asked_of_a_member_that_then_leaves_without_acknowledging_it_is_inferred(leave):
    """c1 is asked to revoke t-1 at 00:11 and its next line is its leave (or its fence) 4 min later: its poll loop
    may have been stuck since (it leaves on its poll timer, AbstractMembershipManager.transitionToSendingLeaveGroup,
    having revoked nothing), so t-1 stopped somewhere between the request and the leave: inferred."""
    out = run(
        [
            *c1_asked_to_revoke_t1(),
            line("04:11,000", leave),
            line("04:11,000", "Bumped group epoch to 3."),
            target("04:11,000", 3, {"c2": "0,1"}),
            state("04:11,005", "c2", 3, 2, "STABLE", "0,1"),
        ]
    )
    assert moves_of(out, 1) == [("c1", "c2", "inferred")]


def c2_handed_a_free_partition() -> list[str]:
    """c1 consumes t-0; c2 joins at 00:10 and is handed t-1, which nobody held, at 00:13 (no revocation first)."""
    return [
        line("00:00,000", "Member c1 joins the consumer group using the consumer protocol."),
        line("00:00,000", "Bumped group epoch to 1."),
        target("00:00,000", 1, {"c1": "0"}),
        state("00:00,001", "c1", 1, 0, "STABLE", "0"),
        line("00:10,000", "Member c2 joins the consumer group using the consumer protocol."),
        line("00:10,000", "Bumped group epoch to 2."),
        target("00:10,000", 2, {"c1": "0", "c2": "1"}),
        state("00:11,000", "c1", 2, 1, "STABLE", "0"),
        state("00:13,000", "c2", 2, 0, "STABLE", "1"),
    ]


@pytest.mark.parametrize(
    ("fenced_at", "heartbeat_interval_ms", "source"),
    [
        ("00:58,002", 5_000, "inferred"),
        ("01:30,000", 5_000, "observed"),
        ("01:04,000", 2_000, "observed"),  # 6 s: beyond a stated 2 s interval (under Kafka's default)
        # no interval stated, and the fence line states no session timeout to bound it: any interval may be
        # it (group.consumer.max.session.timeout.ms is a broker setting operators change; the 45 s given is
        # ReplaySettings.session_timeout_ms, the classic client's)
        ("01:30,000", None, "inferred"),
        ("02:00,000", None, "inferred"),
    ],
)
def test_a_member_whose_last_heartbeat_was_the_one_that_handed_it_partitions_may_never_have_consumed_them(
    fenced_at, heartbeat_interval_ms, source
):
    """c2 is handed t-1 at 00:13 and fenced on its session expiry (group.consumer.session.timeout.ms stated: 45 s)
    at 00:58.002: its last heartbeat came 2 ms after that line, no regular one since, and its acknowledgement
    (sent once onPartitionsAssigned ran) no broker line shows: whether it ever consumed t-1 is unknown, so its
    start, and its stop, are inferred. Fenced at 01:30, it heartbeat for 32 s more, beyond a stated 5 s interval
    (acknowledging first): its start stands, and its stop at its last heartbeat is observed. With no interval
    stated, nor a session timeout on the fence line (the interval is below it, GroupCoordinatorConfig), no
    heartbeat shows a regular one: inferred, never bounded by a default."""
    out = run(
        [
            *c2_handed_a_free_partition(),
            line(fenced_at, "Member c2 fenced from the group because the member session expired."),
        ],
        consumer_heartbeat_interval_ms=heartbeat_interval_ms,
        session_timeout_ms=45_000,
    )
    assert moves_of(out, 1) == [("c2", None, source)]


@pytest.mark.parametrize(("fenced_at", "source"), [("01:30,000", "inferred"), ("02:00,000", "observed")])
def test_a_session_timeout_the_fence_states_bounds_the_unstated_heartbeat_interval(fenced_at, source):
    """As above with no interval stated, but the fence's event states the member's session timeout (45 s): the
    interval is below it (GroupCoordinatorConfig requires group.consumer.heartbeat.interval.ms < the session
    timeout), so a last heartbeat 62 s after the handover was a regular one (its start stands), one 32 s after
    it may not have been."""
    lines = [
        *c2_handed_a_free_partition(),
        line(fenced_at, "Member c2 fenced from the group because the member session expired."),
    ]
    events = parse_lines(lines, file="server.log", cluster="k").events
    fence = events[-1]
    assert fence.event_type == "member_removed"
    fence.attributes = {**(fence.attributes or {}), "session_timeout_ms": "45000"}
    out = replay(events, SETTINGS)
    assert moves_of(out, 1) == [("c2", None, source)]
