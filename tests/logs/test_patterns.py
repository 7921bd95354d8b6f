"""The pattern table: every row parses its own example, names and needles are sound, and the rows
cover the Kafka releases still in production for the events a replay needs."""

from __future__ import annotations

import re

import pytest

from rebalance_core.coordinator_moves import HANDOVER_TYPES
from rebalance_core.kafka_logs import parse_lines
from rebalance_core.kafka_logs.parser import match_pattern
from rebalance_core.kafka_logs.patterns import PATTERNS, PREFIXES
from schemas.events import EventType, Side

RELEASES = (
    [(0, 10), (0, 11), (1, 0), (1, 1)] + [(2, m) for m in range(9)] + [(3, m) for m in range(10)] + [(4, 0)]
)
_VERSION = re.compile(r"^(?P<lo>\d+\.\d+)(?:\.\d+)?(?:(?P<plus>\+)|-(?P<hi>\d+\.\d+)(?:\.\d+)?)?(?:$| \()")


def version_range(versions: str) -> tuple[tuple[int, int], tuple[int, int]]:
    m = _VERSION.match(versions)
    assert m, f"unreadable versions {versions!r}"
    lo = tuple(int(x) for x in m["lo"].split("."))
    hi = (99, 0) if m["plus"] else tuple(int(x) for x in (m["hi"] or m["lo"]).split("."))
    return lo, hi


def line_for(side: Side, message: str) -> str:
    """A message as Kafka would log it: log4j envelope and the prefix of the side."""
    if side == Side.COORDINATOR:
        prefix = "[GroupCoordinator id=1 topic=__consumer_offsets partition=3] [GroupId g1] "
        logger = "org.apache.kafka.coordinator.group.GroupMetadataManager"
    else:
        prefix = "[Consumer clientId=c1, groupId=g1] "
        logger = "org.apache.kafka.clients.consumer.internals.ConsumerCoordinator"
    return f"[2024-01-01 12:00:00,000] INFO {prefix}{message} ({logger})"


def test_pattern_names_are_unique_and_say_the_side():
    names = [p.name for p in PATTERNS]
    assert len(names) == len(set(names))
    for p in PATTERNS:
        assert p.name.split(".")[0] in (
            ("broker", "kip848") if p.side == Side.COORDINATOR else ("client", "connect")
        )


@pytest.mark.parametrize("row", PATTERNS, ids=lambda p: p.name)
def test_row_matches_its_own_example_first(row):
    assert row.needle in (row.example if row.multiline else row.example.split("\n")[0])
    matched, _ = match_pattern(row.example, row.side)
    assert matched is row


@pytest.mark.parametrize("row", PATTERNS, ids=lambda p: p.name)
def test_row_example_in_a_log_line_yields_its_event(row):
    result = parse_lines(line_for(row.side, row.example).split("\n"), file="t.log", cluster="c")
    counts = result.counts
    assert counts.read == counts.event_lines + counts.skipped + counts.quarantined
    assert not result.quarantine, result.quarantine
    if row.event is None:
        assert result.events == [] and counts.skipped_by_reason == {"no_event": counts.read}
        return
    assert result.events, row.name
    first = result.events[0]
    assert (first.event_type, first.side, first.attributes["log_pattern"]) == (
        row.event.value,
        row.side.value,
        row.name,
    )
    # legacy client rows name the group in the text; a partition hand-over names no group: its group id is
    # the partition's name (rebalance_core.coordinator_moves)
    assert (
        first.group_id in ("g1",)
        or row.name.startswith("client.")
        or (first.event_type in HANDOVER_TYPES and first.group_id == "__consumer_offsets-12")
    )


@pytest.mark.parametrize("row", PATTERNS, ids=lambda p: p.name)
def test_versions_are_readable(row):
    lo, hi = version_range(row.versions)
    assert (0, 9) <= lo <= hi


def test_regex_groups_are_known_fields():
    known = {
        "group_id",
        "member_id",
        "leader_id",
        "group_instance_id",
        "reason",
        "protocol_name",
        "client_id",
        "generation_id",
        "member_count",
        "group_epoch",
        "member_epoch",
        "assignment_epoch",
        "partitions",
        "instance",
        "node",
        "assignment",
        "target_assignment",
    }
    for row in PATTERNS:
        for name in row.compiled.groupindex:
            assert name in known or name.startswith(("a_", "x_")), (row.name, name)
        for name in row.constants:
            assert name in ("reason", "member_epoch") or name.startswith("a_"), (row.name, name)


def _covered(events: set[EventType], side: Side) -> set[tuple[int, int]]:
    covered = set()
    for row in PATTERNS:
        if row.event in events and row.side == side:
            lo, hi = version_range(row.versions)
            covered |= {r for r in RELEASES if lo <= r <= hi}
    return covered


@pytest.mark.parametrize(
    ("events", "side", "since"),
    [
        ({EventType.REBALANCE_PREPARED}, Side.COORDINATOR, (0, 10)),
        ({EventType.JOIN_COMPLETED}, Side.COORDINATOR, (0, 10)),
        ({EventType.ASSIGNMENT_RECEIVED}, Side.COORDINATOR, (0, 10)),
        ({EventType.MEMBER_REMOVED}, Side.COORDINATOR, (0, 10)),
        ({EventType.GROUP_EMPTY}, Side.COORDINATOR, (0, 11)),
        ({EventType.GROUP_LOADED}, Side.COORDINATOR, (0, 10)),
        ({EventType.JOIN_RECEIVED}, Side.COORDINATOR, (2, 4)),  # INFO join lines appear with KIP-394
        ({EventType.STATIC_MEMBER_REPLACED}, Side.COORDINATOR, (2, 3)),  # static membership (KIP-345)
        ({EventType.GROUP_EPOCH_BUMPED}, Side.COORDINATOR, (3, 6)),
        ({EventType.TARGET_ASSIGNMENT_COMPUTED}, Side.COORDINATOR, (3, 6)),
        ({EventType.MEMBER_EPOCH_UPDATED}, Side.COORDINATOR, (3, 6)),
        ({EventType.JOIN_SENT}, Side.MEMBER, (0, 10)),
        ({EventType.JOIN_RESPONSE}, Side.MEMBER, (0, 10)),
        ({EventType.HEARTBEAT_REBALANCING, EventType.JOIN_REQUESTED}, Side.MEMBER, (0, 10)),
        ({EventType.PARTITIONS_REVOKED}, Side.MEMBER, (0, 10)),
        ({EventType.PARTITIONS_ASSIGNED}, Side.MEMBER, (0, 10)),
        ({EventType.PARTITIONS_LOST}, Side.MEMBER, (2, 4)),  # onPartitionsLost is KIP-429 (2.4)
        ({EventType.ASSIGNMENT_COMPUTED}, Side.MEMBER, (0, 10)),
        ({EventType.SYNC_RESPONSE}, Side.MEMBER, (2, 6)),  # no sync line before 2.6 (eager)
        ({EventType.LEAVE_SENT}, Side.MEMBER, (0, 10)),
        ({EventType.COORDINATOR_DISCOVERED}, Side.MEMBER, (0, 10)),
        ({EventType.MEMBER_STATE_CHANGED}, Side.MEMBER, (3, 7)),
    ],
    ids=lambda v: "+".join(e.value for e in v) if isinstance(v, set) else None,
)
def test_rows_cover_every_release_from(events, side, since):
    missing = [r for r in RELEASES if r >= since and r not in _covered(events, side)]
    assert not missing, f"no wording for {sorted(e.value for e in events)} in releases {missing}"


def test_prefix_table_is_data():
    assert {p.kind for p in PREFIXES} == {"broker", "client", "streams", "other"}
    for p in PREFIXES:
        version_range(p.versions)


# Field extraction of the rows whose fields matter most to the replay (example -> fields).
FIELD_CASES = [
    (
        "Preparing to rebalance group g1 in state PreparingRebalance with old generation 3 (__consumer_offsets-12) "
        "(reason: Removing member c1-x on LeaveGroup; client reason: the consumer is being closed)",
        Side.COORDINATOR,
        {
            "event_type": "rebalance_prepared",
            "generation_id": 3,
            "reason": "Removing member c1-x on LeaveGroup; client reason: the consumer is being closed",
            "attributes": {
                "state": "PreparingRebalance",
                "offsets_partition": "12",
                "client_reason": "the consumer is being closed",
            },
        },
    ),
    (
        "Stabilized group g1 generation 4 (__consumer_offsets-12) with 2 members",
        Side.COORDINATOR,
        {"event_type": "join_completed", "generation_id": 4, "member_count": 2},
    ),
    (
        "Assignment received from leader L1 for group g1 for generation 4. The group has 3 members, 1 of which are static.",
        Side.COORDINATOR,
        {
            "event_type": "assignment_received",
            "generation_id": 4,
            "leader_id": "L1",
            "member_count": 3,
            "attributes": {"static_member_count": "1"},
        },
    ),
    (
        "Member[group.instance.id Some(i1), member.id i1-u] in group g1 has left, removing it from the group",
        Side.COORDINATOR,
        {
            "event_type": "member_removed",
            "member_id": "i1-u",
            "group_instance_id": "i1",
            "reason": "leave_group",
        },
    ),
    (
        "Group g1 removed dynamic members who haven't joined: Set(a-1, b-2)",
        Side.COORDINATOR,
        {"event_type": "member_removed", "member_id": "a-1", "reason": "rebalance_timeout"},
    ),
    (
        "Member m1 fenced from the group because the member failed to sync within timeout..",
        Side.COORDINATOR,
        {"event_type": "member_removed", "member_id": "m1", "reason": "pending_sync_timeout"},
    ),
    (
        "Successfully joined group with generation Generation{generationId=7, memberId='c1-u', protocol='range'}",
        Side.MEMBER,
        {"event_type": "join_response", "generation_id": 7, "member_id": "c1-u", "protocol_name": "range"},
    ),
    (
        "Revoke previously assigned partitions a-b-0, a-b-12",
        Side.MEMBER,
        {"event_type": "partitions_revoked", "partitions": ["a-b-0", "a-b-12"]},
    ),
    (
        "Adding newly assigned partitions: [t-2]",
        Side.MEMBER,
        {"event_type": "partitions_assigned", "partitions": ["t-2"]},
    ),
    (
        "Adding newly assigned partitions: ",
        Side.MEMBER,
        {"event_type": "partitions_assigned", "partitions": []},
    ),
    (
        "Member c1-u sending LeaveGroup request to coordinator b:9092 (id: 2147483645 rack: null) due to consumer poll "
        "timeout has expired.",
        Side.MEMBER,
        {
            "event_type": "leave_sent",
            "member_id": "c1-u",
            "reason": "consumer poll timeout has expired.",
            "attributes": {"coordinator": "b:9092", "coordinator_id": "2"},
        },
    ),
    (
        "Member tK with epoch 3 transitioned from RECONCILING to ACKNOWLEDGING.",
        Side.MEMBER,
        {
            "event_type": "member_state_changed",
            "member_id": "tK",
            "member_epoch": 3,
            "attributes": {
                "from_state": "RECONCILING",
                "to_state": "ACKNOWLEDGING",
                "group_protocol": "consumer",
            },
        },
    ),
]


@pytest.mark.parametrize(
    ("message", "side", "expected"), FIELD_CASES, ids=lambda v: v[:40] if isinstance(v, str) else None
)
def test_fields_extracted(message, side, expected):
    [event, *_] = parse_lines([line_for(side, message)], file="t.log", cluster="c").events
    for key, value in expected.items():
        actual = getattr(event, key)
        if key == "partitions":
            actual = [str(tp) for tp in actual]
        elif key == "attributes":
            actual = {k: v for k, v in actual.items() if k in value}
        assert actual == value, key


@pytest.mark.parametrize(
    "message",
    [
        # GroupMetadata.maybeElectNewJoinedLeader, Scala 2.3-3.9 (no space before "because")
        "Group leader [member.id: c1-old, group.instance.id: Some(c1)] failed to join before rebalance timeout, "
        "and the group couldn't proceed to next generationbecause no member joined.",
        # ClassicGroup.maybeElectNewJoinedLeader, the Java coordinator (3.6+, default in 4.0)
        "Group leader [memberId: c1-old, groupInstanceId: c1] failed to join before the rebalance timeout and "
        "the group couldn't proceed to the next generation because no member joined.",
    ],
)
def test_a_leader_that_failed_to_join_with_no_member_rejoined_is_recognised_without_an_event(message):
    """maybeElectNewJoinedLeader found no rejoined member: the join phase waits again, nothing happened
    to the group yet (no event), but the line is Kafka's and must not be quarantined."""
    matched, _ = match_pattern(message, Side.COORDINATOR)
    assert matched is not None and matched.name == "broker.leader_not_elected.2_3"
    result = parse_lines([line_for(Side.COORDINATOR, message)], file="t.log", cluster="c")
    assert not result.events and not result.quarantine
