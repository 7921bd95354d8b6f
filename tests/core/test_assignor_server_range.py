"""Kafka's group-coordinator `RangeAssignorTest` (the KIP-848 broker-side range assignor), ported as data,
plus hypothesis properties."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given, settings

from rebalance_core.assignors import GroupSpec, MemberSubscription, RebalanceProtocol, get_assignor
from rebalance_core.assignors.range import RangeAssignor
from rebalance_core.assignors.server_range import ServerRangeAssignor
from rebalance_core.assignors.uniform import SubscriptionType
from tests.core.assignor_checks import assert_valid
from tests.core.test_assignor_range import group_specs
from tests.core.test_assignor_uniform import (
    COMMON_RACKS,
    COMMON_TOPICS,
    T12,
    T13,
    T123,
    expected_of,
    spec_of,
    with_owned,
)

HOMOGENEOUS = SubscriptionType.HOMOGENEOUS
HETEROGENEOUS = SubscriptionType.HETEROGENEOUS


def add_racks(topics: dict[str, int]) -> dict[str, tuple[frozenset[str], ...]]:
    """MetadataImageBuilder.addRacks(): brokers 0-3 on rack0-rack3; partition p on brokers p, p + 1 (mod 4)."""
    return {
        t: tuple(frozenset({f"rack{p % 4}", f"rack{(p + 1) % 4}"}) for p in range(n))
        for t, n in topics.items()
    }


# (id, subscription type, topics, members (id, subscription, owned[, rack]), expected, partition racks)
CASES = [
    ("testOneMemberNoTopic", HOMOGENEOUS, {}, [("A", [], "")], {"A": ""}, None),
    # Kafka throws for a topic id missing from the metadata; the coordinator never passes one.
    ("testOneMemberSubscribedToNonExistentTopic", HOMOGENEOUS, {"topic1": 3}, [("A", ["topic2"], "")], {"A": ""}, None),
    ("testFirstAssignmentTwoMembersTwoTopicsSameSubscriptions", HOMOGENEOUS, {"topic1": 3, "topic3": 2},
     [("A", T13, ""), ("B", T13, "")], {"A": "topic1: 0 1; topic3: 0", "B": "topic1: 2; topic3: 1"}, None),
    ("testFirstAssignmentThreeMembersThreeTopicsDifferentSubscriptions", HETEROGENEOUS,
     {"topic1": 3, "topic2": 3, "topic3": 2},
     [("A", T12, ""), ("B", ["topic3"], ""), ("C", ["topic2", "topic3"], "")],
     {"A": "topic1: 0 1 2; topic2: 0 1", "B": "topic3: 0", "C": "topic2: 2; topic3: 1"}, None),
    ("testFirstAssignmentNumMembersGreaterThanNumPartitions", HOMOGENEOUS, {"topic1": 3, "topic3": 2},
     [("A", T13, ""), ("B", T13, ""), ("C", T13, "")],
     {"A": "topic1: 0; topic3: 0", "B": "topic1: 1; topic3: 1", "C": "topic1: 2"}, None),
    ("testReassignmentNumMembersGreaterThanNumPartitionsWhenOneMemberAdded", HOMOGENEOUS, {"topic1": 2, "topic2": 2},
     [("A", T12, "topic1: 0; topic2: 0"), ("B", T12, "topic1: 1; topic2: 1"), ("C", T12, "")],
     {"A": "topic1: 0; topic2: 0", "B": "topic1: 1; topic2: 1", "C": ""}, None),
    ("testReassignmentWhenOnePartitionAddedForTwoMembersTwoTopics", HOMOGENEOUS, {"topic1": 4, "topic2": 4},
     [("A", T12, "topic1: 0 1; topic2: 0 1"), ("B", T12, "topic1: 2; topic2: 2")],
     {"A": "topic1: 0 1; topic2: 0 1", "B": "topic1: 2 3; topic2: 2 3"}, None),
    # Not sticky: the new member C takes the last range although A owned two partitions of each topic.
    ("testReassignmentWhenOneMemberAddedAfterInitialAssignmentWithTwoMembersTwoTopics", HOMOGENEOUS,
     {"topic1": 3, "topic2": 3},
     [("A", T12, "topic1: 0 1; topic2: 0 1"), ("B", T12, "topic1: 2; topic2: 2"), ("C", T12, "")],
     {"A": "topic1: 0; topic2: 0", "B": "topic1: 1; topic2: 1", "C": "topic1: 2; topic2: 2"}, None),
    ("testReassignmentWhenOneMemberAddedAndOnePartitionAfterInitialAssignmentWithTwoMembersTwoTopics", HETEROGENEOUS,
     {"topic1": 4, "topic2": 3},
     [("A", T12, "topic1: 0 1; topic2: 0 1"), ("B", T12, "topic1: 2; topic2: 2"), ("C", ["topic1"], "")],
     {"A": "topic1: 0 1; topic2: 0 1", "B": "topic1: 2; topic2: 2", "C": "topic1: 3"}, None),
    ("testReassignmentWhenOneMemberRemovedAfterInitialAssignmentWithTwoMembersTwoTopics", HOMOGENEOUS,
     {"topic1": 3, "topic2": 3}, [("B", T12, "topic1: 2; topic2: 2")], {"B": "topic1: 0 1 2; topic2: 0 1 2"}, None),
    ("testReassignmentWhenMultipleSubscriptionsRemovedAfterInitialAssignmentWithThreeMembersTwoTopics", HETEROGENEOUS,
     {"topic1": 3, "topic2": 3, "topic3": 2},
     [("A", ["topic1"], "topic1: 0 1 2; topic2: 0"), ("B", T123, "topic2: 1"), ("C", ["topic2"], "topic2: 2; topic3: 0 1")],
     {"A": "topic1: 0 1", "B": "topic1: 2; topic2: 0 1; topic3: 0 1", "C": "topic2: 2"}, None),
    # Rack matching: P0 on rack0/rack1, P1 on rack1/rack2, P2 on rack2/rack3, P3 on rack3/rack0.
    ("testRackAwareAssignmentWithCoPartitionedTopics", HOMOGENEOUS, {"topic1": 3, "topic2": 3},
     [("A", T12, "", "rack0"), ("B", T12, "", "rack1"), ("C", T12, "", "rack2")],
     {"A": "topic1: 0; topic2: 0", "B": "topic1: 1; topic2: 1", "C": "topic1: 2; topic2: 2"},
     add_racks({"topic1": 3, "topic2": 3})),
    # Every partition on rack0 and rack1: all on the same racks, so no rack matching.
    ("testRackAwareAssignmentWithCoPartitionedTopicsNoConsumerRackMatch", HOMOGENEOUS, {"topic1": 4, "topic2": 4},
     [("A", T12, "", "rack0"), ("B", T12, "", "rack1"), ("C", T12, "", "rack2")],
     {"A": "topic1: 0 1; topic2: 0 1", "B": "topic1: 2; topic2: 2", "C": "topic1: 3; topic2: 3"},
     {t: (frozenset({"rack0", "rack1"}),) * 4 for t in T12}),
    ("testRackAwareAssignmentWithSingleTopic", HOMOGENEOUS, {"topic1": 4},
     [("A", ["topic1"], "", "rack0"), ("B", ["topic1"], "", "rack2")], {"A": "topic1: 0 3", "B": "topic1: 1 2"},
     add_racks({"topic1": 4})),
    ("testRackAwareAssignmentWithHeterogeneousSubscriptions", HETEROGENEOUS, {"topic1": 3, "topic2": 2, "topic3": 2},
     [("A", ["topic1"], "", "rack0"), ("B", ["topic2"], "", "rack1"), ("C", ["topic3"], "", "rack2")],
     {"A": "topic1: 0 1 2", "B": "topic2: 0 1", "C": "topic3: 0 1"}, add_racks({"topic1": 3, "topic2": 2, "topic3": 2})),
    ("testNoRackAwareAssignmentWhenNoRackInfo", HOMOGENEOUS, {"topic1": 3, "topic2": 3},
     [("A", T12, ""), ("B", T12, "")], {"A": "topic1: 0 1; topic2: 0 1", "B": "topic1: 2; topic2: 2"},
     add_racks({"topic1": 3, "topic2": 3})),
    ("testNoRackAwareAssignmentWhenNoPartitionRackInfo", HOMOGENEOUS, {"topic1": 3, "topic2": 3},
     [("A", T12, "", "rack0"), ("B", T12, "", "rack1")], {"A": "topic1: 0 1; topic2: 0 1", "B": "topic1: 2; topic2: 2"},
     None),
    # A matches P0 and keeps its extra slot for P2 (balance); C on rack5 matches nothing.
    ("testPartialRackMatching", HOMOGENEOUS, {"topic1": 4},
     [("A", ["topic1"], "", "rack0"), ("B", ["topic1"], "", "rack1"), ("C", ["topic1"], "", "rack5")],
     {"A": "topic1: 0 2", "B": "topic1: 1", "C": "topic1: 3"}, add_racks({"topic1": 4})),
    # A member without a rack matches every partition.
    ("testRackAwareWithMixedRackInfoMembers", HOMOGENEOUS, {"topic1": 3, "topic2": 3},
     [("A", T12, "", "rack0"), ("B", T12, ""), ("C", T12, "", "rack2")],
     {"A": "topic1: 0; topic2: 0", "B": "topic1: 1; topic2: 1", "C": "topic1: 2; topic2: 2"},
     add_racks({"topic1": 3, "topic2": 3})),
]  # fmt: skip


@pytest.mark.parametrize(
    ("subscription_type", "topics", "members", "expected", "racks"),
    [pytest.param(*c[1:], id=c[0]) for c in CASES],
)
def test_server_range_cases(subscription_type, topics, members, expected, racks):
    spec = spec_of(topics, members, racks)
    assignment = ServerRangeAssignor().assign(spec, subscription_type)
    assert assignment == expected_of(expected)
    assert_valid(spec, assignment)


@pytest.mark.parametrize(
    ("topics", "members"),
    [
        pytest.param({"topic1": 3}, [("A", "instanceA"), ("B", "instanceB")], id="testStaticMembership"),
        pytest.param(
            {"topic1": 5},
            [("A", "instanceA"), ("C", "instanceC"), ("B", None)],
            id="testMixedStaticMembership",
        ),
    ],
)
def test_static_member_keeps_its_range_under_a_new_member_id(topics, members):
    """A static member rejoining with a new member id (same instance id) gets the same partitions; the
    others keep theirs."""

    def assign(renamed: bool) -> dict[str | None, list]:
        specs = tuple(
            MemberSubscription("memberA1" if renamed and m == "A" else m, ("topic1",), group_instance_id=i)
            for m, i in members
        )
        assignment = ServerRangeAssignor().assign(GroupSpec(topics=topics, members=specs))
        return {m.group_instance_id or m.member_id: assignment[m.member_id] for m in specs}

    assert assign(renamed=True) == assign(renamed=False)


@pytest.mark.parametrize("rack_aware", [False, True])
@pytest.mark.parametrize("subscription_type", [HOMOGENEOUS, HETEROGENEOUS])
def test_reassignment_stickiness(subscription_type, rack_aware):
    """CommonAssignorTests.testReassignmentStickiness: fed its own assignment back, in any member order,
    the assignor returns the same."""
    spec = spec_of(
        COMMON_TOPICS,
        [("A", T123, ""), ("B", T123, "", "rack1" if rack_aware else None), ("C", T123, "")],
        COMMON_RACKS,
    )
    first = ServerRangeAssignor().assign(spec, subscription_type)
    for order in itertools.permutations("ABC"):
        assert ServerRangeAssignor().assign(with_owned(spec, first, list(order)), subscription_type) == first


def test_registry_and_protocols():
    assignor = get_assignor("server-range")
    assert isinstance(assignor, ServerRangeAssignor)
    assert assignor.supported_protocols == (RebalanceProtocol.COOPERATIVE,)


def test_rack_matching_never_hands_a_partition_out_twice():
    """Rack matching fills A, B and C (rack r1) with two partitions each; D (no replica on r2) takes the
    last one and E is left without. Kafka's fallback would give E a range from partition 0, which A
    already holds (see the module doc); here E gets nothing."""
    layout = {"t": (frozenset({"r1"}),) * 6 + (frozenset({"r1", "r3"}),)}
    members = [
        (m, ["t"], "", rack) for m, rack in (("A", "r1"), ("B", "r1"), ("C", "r1"), ("D", "r2"), ("E", "r2"))
    ]
    spec = spec_of({"t": 7}, members, layout)
    assignment = ServerRangeAssignor().assign(spec)
    assert assignment == expected_of({"A": "t: 0 1", "B": "t: 2 3", "C": "t: 4 5", "D": "t: 6", "E": ""})


# --- properties ------------------------------------------------------------------------------------------


@given(group_specs(with_racks=False))
@settings(max_examples=100)
def test_without_racks_it_is_the_client_range_assignor(spec):
    """Without racks both range assignors order the members alike and cut the same ranges."""
    assert ServerRangeAssignor().assign(spec) == RangeAssignor().assign(spec)


@given(group_specs(with_racks=True))
@settings(max_examples=100)
def test_with_racks_every_partition_is_assigned_once(spec):
    assert_valid(spec, ServerRangeAssignor().assign(spec))
