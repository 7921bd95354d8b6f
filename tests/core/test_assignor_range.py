"""Kafka's client `RangeAssignorTest` (and the MemberInfo / rack parts of `AbstractPartitionAssignorTest`),
ported as data, plus hypothesis properties of the range assignor."""

from __future__ import annotations

from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rebalance_core.assignors import GroupSpec, MemberSubscription, RebalanceProtocol, get_assignor
from rebalance_core.assignors.range import RangeAssignor, member_order_key, use_rack_aware_assignment
from rebalance_core.events import TopicPartition
from tests.core.assignor_checks import assert_valid

# AbstractPartitionAssignorTest.ALL_RACKS
ALL_RACKS = ("a", "b", "c", "d", "e", "f")


def tps(text: str) -> list[TopicPartition]:
    """Kafka's test notation "t1-0, t1-3" -> sorted partitions."""
    if not text:
        return []
    out = []
    for item in text.split(", "):
        topic, _, partition = item.rpartition("-")
        out.append(TopicPartition(topic, int(partition)))
    return sorted(out)


def partition_racks(
    topics: dict[str, int],
    replication_factor: int,
    broker_racks: list[str | None],
    first_node: int | None = None,
) -> dict[str, tuple[frozenset[str], ...]]:
    """AbstractPartitionAssignorTest.partitionsPerTopic / partitionInfos: partition i of a topic has its
    replicas on brokers (i + j + offset) % brokers, j < replication factor; the offset runs on over the
    topics in order (or is `first_node` for every topic)."""
    out = {}
    offset = 0
    for topic, count in topics.items():
        start = offset if first_node is None else first_node
        out[topic] = tuple(
            frozenset(
                rack
                for j in range(replication_factor)
                if (rack := broker_racks[(i + j + start) % len(broker_racks)]) is not None
            )
            for i in range(count)
        )
        offset += count
    return out


def racks(count: int) -> list[str]:
    return [ALL_RACKS[i % len(ALL_RACKS)] for i in range(count)]


def null_racks(count: int) -> list[None]:
    return [None] * count


# --- RangeAssignorTest's @EnumSource(RackConfig) tests ----------------------------------------------

RACK_CONFIGS = ("NO_BROKER_RACK", "NO_CONSUMER_RACK", "BROKER_AND_CONSUMER_RACK")


def rack_config_spec(
    config: str,
    topics: dict[str, int],
    members: list[tuple[str, list[str], str | None]],
    max_consumers: int = 3,
) -> GroupSpec:
    """RangeAssignorTest.initializeRacks + partitionInfos + subscription(topics, consumerIndex):
    replication factor = max consumers, as many broker racks (none for NO_BROKER_RACK), consumer i on
    rack i (none for NO_CONSUMER_RACK)."""
    num_broker_racks = 0 if config == "NO_BROKER_RACK" else max_consumers
    brokers = max_consumers if num_broker_racks <= 0 else num_broker_racks * max_consumers
    broker_racks = [
        None if num_broker_racks <= 0 else ALL_RACKS[i % num_broker_racks] for i in range(brokers)
    ]
    consumer_racks = num_broker_racks if num_broker_racks > 0 else len(ALL_RACKS)
    return GroupSpec(
        topics=topics,
        members=tuple(
            MemberSubscription(
                member_id=member_id,
                subscription=tuple(subscription),
                group_instance_id=instance_id,
                rack=None if config == "NO_CONSUMER_RACK" else ALL_RACKS[index % consumer_racks],
            )
            for index, (member_id, subscription, instance_id) in enumerate(members)
        ),
        partition_racks=partition_racks(topics, max_consumers, broker_racks, first_node=0),
    )


# (id, topics, [(member, subscription, group.instance.id)], expected {member: "t-p, ..."}, max consumers)
RACK_CONFIG_CASES = [
    ("testOneConsumerOneTopic", {"topic1": 3}, [("consumer1", ["topic1"], None)],
     {"consumer1": "topic1-0, topic1-1, topic1-2"}, 3),
    ("testOnlyAssignsPartitionsFromSubscribedTopics", {"topic1": 3, "other": 3}, [("consumer1", ["topic1"], None)],
     {"consumer1": "topic1-0, topic1-1, topic1-2"}, 3),
    ("testOneConsumerMultipleTopics", {"topic1": 1, "topic2": 2}, [("consumer1", ["topic1", "topic2"], None)],
     {"consumer1": "topic1-0, topic2-0, topic2-1"}, 3),
    ("testTwoConsumersOneTopicOnePartition", {"topic1": 1},
     [("consumer1", ["topic1"], None), ("consumer2", ["topic1"], None)],
     {"consumer1": "topic1-0", "consumer2": ""}, 3),
    ("testTwoConsumersOneTopicTwoPartitions", {"topic1": 2},
     [("consumer1", ["topic1"], None), ("consumer2", ["topic1"], None)],
     {"consumer1": "topic1-0", "consumer2": "topic1-1"}, 3),
    ("testMultipleConsumersMixedTopics", {"topic1": 3, "topic2": 2},
     [("consumer1", ["topic1"], None), ("consumer2", ["topic1", "topic2"], None), ("consumer3", ["topic1"], None)],
     {"consumer1": "topic1-0", "consumer2": "topic1-1, topic2-0, topic2-1", "consumer3": "topic1-2"}, 3),
    ("testTwoConsumersTwoTopicsSixPartitions", {"topic1": 3, "topic2": 3},
     [("consumer1", ["topic1", "topic2"], None), ("consumer2", ["topic1", "topic2"], None)],
     {"consumer1": "topic1-0, topic1-1, topic2-0, topic2-1", "consumer2": "topic1-2, topic2-2"}, 3),
    # The instance ids decide the order, not the member ids.
    ("testTwoStaticConsumersTwoTopicsSixPartitions", {"topic1": 3, "topic2": 3},
     [("consumer-b", ["topic1", "topic2"], "instance1"), ("consumer-a", ["topic1", "topic2"], "instance2")],
     {"consumer-b": "topic1-0, topic1-1, topic2-0, topic2-1", "consumer-a": "topic1-2, topic2-2"}, 3),
    # A static member sorts before every dynamic one.
    ("testOneStaticConsumerAndOneDynamicConsumerTwoTopicsSixPartitions", {"topic1": 3, "topic2": 3},
     [("consumer-b", ["topic1", "topic2"], "instance1"), ("consumer-a", ["topic1", "topic2"], None)],
     {"consumer-b": "topic1-0, topic1-1, topic2-0, topic2-1", "consumer-a": "topic1-2, topic2-2"}, 3),
    ("testStaticMemberRangeAssignmentPersistent", {"topic1": 5, "topic2": 4},
     [("consumer1", ["topic1", "topic2"], "instance1"), ("consumer2", ["topic1", "topic2"], "instance2"),
      ("consumer3", ["topic1", "topic2"], "instance3"), ("consumer4", ["topic1", "topic2"], None)],
     {"consumer1": "topic1-0, topic1-1, topic2-0", "consumer2": "topic1-2, topic2-1",
      "consumer3": "topic1-3, topic2-2", "consumer4": "topic1-4, topic2-3"}, 5),
    # ... and the dynamic member replaced by another one gets the same partitions.
    ("testStaticMemberRangeAssignmentPersistent-replaced", {"topic1": 5, "topic2": 4},
     [("consumer1", ["topic1", "topic2"], "instance1"), ("consumer2", ["topic1", "topic2"], "instance2"),
      ("consumer3", ["topic1", "topic2"], "instance3"), ("consumer5", ["topic1", "topic2"], None)],
     {"consumer1": "topic1-0, topic1-1, topic2-0", "consumer2": "topic1-2, topic2-1",
      "consumer3": "topic1-3, topic2-2", "consumer5": "topic1-4, topic2-3"}, 5),
]  # fmt: skip


@pytest.mark.parametrize("config", RACK_CONFIGS)
@pytest.mark.parametrize(
    ("topics", "members", "expected", "max_consumers"),
    [pytest.param(*case[1:], id=case[0]) for case in RACK_CONFIG_CASES],
)
def test_range_assignor_cases(config, topics, members, expected, max_consumers):
    spec = rack_config_spec(config, topics, members, max_consumers)
    # initializeRacks turns preferRackAwareLogic on: the rack-aware path must give the plain result.
    assignment = RangeAssignor(prefer_rack_aware_logic=True).assign(spec)
    assert assignment == {member: tps(text) for member, text in expected.items()}
    assert_valid(spec, assignment)


@pytest.mark.parametrize("has_consumer_rack", [True, False])
@pytest.mark.parametrize(
    "subscription",
    [
        pytest.param((), id="testOneConsumerNoTopic"),
        pytest.param(("topic1",), id="testOneConsumerNonexistentTopic"),
    ],
)
def test_one_consumer_without_partitions(subscription, has_consumer_rack):
    spec = GroupSpec(
        topics={},
        members=(MemberSubscription("consumer1", subscription, rack="a" if has_consumer_rack else None),),
    )
    assert RangeAssignor(prefer_rack_aware_logic=True).assign(spec) == {"consumer1": []}


@pytest.mark.parametrize("config", RACK_CONFIGS)
def test_static_member_range_assignment_persistent_after_member_id_changes(config):
    """testStaticMemberRangeAssignmentPersistentAfterMemberIdChanges: the instances keep their ranges
    when their member ids change."""
    topics = {"topic1": 5, "topic2": 5}
    expected = {
        "instance1": tps("topic1-0, topic1-1, topic2-0, topic2-1"),
        "instance2": tps("topic1-2, topic1-3, topic2-2, topic2-3"),
        "instance3": tps("topic1-4, topic2-4"),
    }
    both = ["topic1", "topic2"]
    before = [
        ("consumer1", both, "instance1"),
        ("consumer2", both, "instance2"),
        ("consumer3", both, "instance3"),
    ]
    after = [
        ("consumer1", both, "instance1"),
        ("consumer5", both, "instance2"),
        ("consumer4", both, "instance3"),
    ]
    for members in (before, after):
        assignment = RangeAssignor(prefer_rack_aware_logic=True).assign(
            rack_config_spec(config, topics, members)
        )
        assert {instance: assignment[member] for member, _, instance in members} == expected


def test_rack_aware_static_member_range_assignment_persistent_after_member_id_changes():
    """testRackAwareStaticMemberRangeAssignmentPersistentAfterMemberIdChanges: replication factor 2 on
    3 broker racks, consumers on racks a, b, c."""
    topics = {"topic1": 5, "topic2": 5}
    broker_racks = [ALL_RACKS[i % 3] for i in range(6)]
    layout = partition_racks(topics, 2, broker_racks, first_node=0)
    expected = {
        "instance1": tps("topic1-0, topic1-2, topic2-0, topic2-2"),
        "instance2": tps("topic1-1, topic1-3, topic2-1, topic2-3"),
        "instance3": tps("topic1-4, topic2-4"),
    }
    both = ("topic1", "topic2")
    for ids in (("consumer1", "consumer2", "consumer3"), ("consumer1", "consumer5", "consumer4")):
        members = tuple(
            MemberSubscription(member_id, both, group_instance_id=f"instance{i + 1}", rack=ALL_RACKS[i])
            for i, member_id in enumerate(ids)
        )
        spec = GroupSpec(topics=topics, members=members, partition_racks=layout)
        assignment = RangeAssignor(prefer_rack_aware_logic=True).assign(spec)
        assert {m.group_instance_id: assignment[m.member_id] for m in members} == expected


# --- verifyRackAssignment cases ----------------------------------------------------------------------


def verify_rack_assignment(
    topics: dict[str, int],
    replication_factor: int,
    broker_racks: list[str | None],
    consumer_racks: list[str | None],
    consumer_topics: list[list[str]],
    expected: list[str],
    mismatches: int,
    prefer_rack_aware_logic: bool = False,
) -> None:
    """AbstractPartitionAssignorTest.verifyRackAssignment: consumers "consumer0".. with the given racks
    and subscriptions get exactly `expected`; `mismatches` (unless -1) partitions are assigned to a
    consumer with a rack that holds no replica of them."""
    layout = partition_racks(topics, replication_factor, broker_racks)
    members = tuple(
        MemberSubscription(f"consumer{i}", tuple(subscription), rack=rack)
        for i, (subscription, rack) in enumerate(zip(consumer_topics, consumer_racks))
    )
    spec = GroupSpec(topics=topics, members=members, partition_racks=layout)
    assignment = RangeAssignor(prefer_rack_aware_logic=prefer_rack_aware_logic).assign(spec)
    assert assignment == {f"consumer{i}": tps(text) for i, text in enumerate(expected)}
    assert_valid(spec, assignment)
    if mismatches >= 0:
        mismatched = [
            tp
            for m in members
            if m.rack is not None
            for tp in assignment[m.member_id]
            if m.rack not in layout[tp.topic][tp.partition]
        ]
        assert len(mismatched) == mismatches, mismatched


def case(
    name,
    topics,
    replication_factor,
    broker_racks,
    consumer_racks,
    consumer_topics,
    expected,
    mismatches,
    prefer=False,
):
    return pytest.param(
        topics,
        replication_factor,
        broker_racks,
        consumer_racks,
        consumer_topics,
        expected,
        mismatches,
        prefer,
        id=name,
    )


def non_rack_aware_cases(name, topics, consumer_topics, expected):
    """RangeAssignorTest.verifyNonRackAwareAssignment: rack layouts where rack matching is off or
    cannot change the plain range result."""
    rows = [
        ("no-broker-racks", 3, null_racks(3), racks(3), -1, False),
        ("no-consumer-racks", 3, racks(3), null_racks(3), -1, False),
        ("all-partitions-on-all-racks", 3, racks(3), racks(3), 0, False),
        ("rf4-on-4-racks", 4, racks(4), racks(3), 0, False),
        ("consumer-racks-without-replicas", 3, racks(3), ["d", "e", "f"], -1, False),
        ("one-consumer-rack-missing", 3, racks(3), [None, "e", "f"], -1, False),
        ("prefer-rack-aware-logic", 3, racks(3), racks(3), 0, True),
    ]
    return [
        case(f"{name}-{row}", topics, rf, brokers, consumers, consumer_topics, expected, mismatches, prefer)
        for row, rf, brokers, consumers, mismatches, prefer in rows
    ]


UNIFORM_SUBSCRIPTION = ({"t1": 6, "t2": 7, "t3": 2}, [["t1", "t2", "t3"]] * 3)
NON_EQUAL_SUBSCRIPTION = ({"t1": 6, "t2": 7, "t3": 2}, [["t1", "t2", "t3"]] * 2 + [["t1", "t3"]])
UNIFORM_PARTITIONS = ({"t1": 5, "t2": 5, "t3": 5}, [["t1", "t2", "t3"]] * 3)
UNIFORM_PARTITIONS_NON_EQUAL = ({"t1": 5, "t2": 5, "t3": 5}, [["t1", "t2", "t3"]] * 2 + [["t1", "t3"]])
PLAIN_UNIFORM_PARTITIONS = [
    "t1-0, t1-1, t2-0, t2-1, t3-0, t3-1",
    "t1-2, t1-3, t2-2, t2-3, t3-2, t3-3",
    "t1-4, t2-4, t3-4",
]
CO_PARTITIONED = {"t1": 6, "t2": 6, "t3": 2, "t4": 2}
SPLIT_TOPICS = [["t1", "t2"], ["t1", "t2"], ["t3", "t4"], ["t3", "t4"]]
ALL_FOUR = [["t1", "t2", "t3", "t4"]] * 4
CONSUMER_RACKS_ABBA = ["a", "b", "b", "a"]
SPLIT_PLAIN = [
    "t1-0, t1-1, t1-2, t2-0, t2-1, t2-2",
    "t1-3, t1-4, t1-5, t2-3, t2-4, t2-5",
    "t3-0, t4-0",
    "t3-1, t4-1",
]
ALL_FOUR_PLAIN = [
    "t1-0, t1-1, t2-0, t2-1, t3-0, t4-0",
    "t1-2, t1-3, t2-2, t2-3, t3-1, t4-1",
    "t1-4, t2-4",
    "t1-5, t2-5",
]
SAME_SUBSCRIPTION = {"t1": 6, "t2": 6, "t3": 2, "t4": 2, "t5": 4, "t6": 4}
NINE_TOPICS = [["t1", "t2", "t3", "t4", "t5", "t6", "t7", "t8", "t9"]] * 3
SAME_SUBSCRIPTION_PLAIN = [
    "t1-0, t1-1, t2-0, t2-1, t3-0, t4-0, t5-0, t5-1, t6-0, t6-1",
    "t1-2, t1-3, t2-2, t2-3, t3-1, t4-1, t5-2, t6-2",
    "t1-4, t1-5, t2-4, t2-5, t5-3, t6-3",
]

# "-rfN": best effort for replication factor N, where racks hold a subset of the partitions.
# "-lonely-rack": one consumer on a rack without partitions.
RACK_CASES = [
    *non_rack_aware_cases(
        "testRackAwareAssignmentWithUniformSubscription", *UNIFORM_SUBSCRIPTION,
        ["t1-0, t1-1, t2-0, t2-1, t2-2, t3-0", "t1-2, t1-3, t2-3, t2-4, t3-1", "t1-4, t1-5, t2-5, t2-6"],
    ),
    case("testRackAwareAssignmentWithUniformSubscription-rf1", UNIFORM_SUBSCRIPTION[0], 1, racks(3), racks(3),
         UNIFORM_SUBSCRIPTION[1],
         ["t1-0, t1-3, t2-0, t2-3, t2-6", "t1-1, t1-4, t2-1, t2-4, t3-0", "t1-2, t1-5, t2-2, t2-5, t3-1"], 0),
    case("testRackAwareAssignmentWithUniformSubscription-rf2", UNIFORM_SUBSCRIPTION[0], 2, racks(3), racks(3),
         UNIFORM_SUBSCRIPTION[1],
         ["t1-0, t1-2, t2-0, t2-2, t2-3, t3-1", "t1-1, t1-3, t2-1, t2-4, t3-0", "t1-4, t1-5, t2-5, t2-6"], 1),
    case("testRackAwareAssignmentWithUniformSubscription-lonely-rack", UNIFORM_SUBSCRIPTION[0], 3, racks(2),
         racks(3), UNIFORM_SUBSCRIPTION[1],
         ["t1-0, t1-1, t2-0, t2-1, t2-2, t3-0", "t1-2, t1-3, t2-3, t2-4, t3-1", "t1-4, t1-5, t2-5, t2-6"], 4),
    *non_rack_aware_cases(
        "testRackAwareAssignmentWithNonEqualSubscription", *NON_EQUAL_SUBSCRIPTION,
        ["t1-0, t1-1, t2-0, t2-1, t2-2, t2-3, t3-0", "t1-2, t1-3, t2-4, t2-5, t2-6, t3-1", "t1-4, t1-5"],
    ),
    case("testRackAwareAssignmentWithNonEqualSubscription-rf1", NON_EQUAL_SUBSCRIPTION[0], 1, racks(3), racks(3),
         NON_EQUAL_SUBSCRIPTION[1],
         ["t1-0, t1-3, t2-0, t2-2, t2-3, t2-6", "t1-1, t1-4, t2-1, t2-4, t2-5, t3-0", "t1-2, t1-5, t3-1"], 2),
    case("testRackAwareAssignmentWithNonEqualSubscription-rf2", NON_EQUAL_SUBSCRIPTION[0], 2, racks(3), racks(3),
         NON_EQUAL_SUBSCRIPTION[1],
         ["t1-0, t1-2, t2-0, t2-2, t2-3, t2-5, t3-1", "t1-1, t1-3, t2-1, t2-4, t2-6, t3-0", "t1-4, t1-5"], 0),
    case("testRackAwareAssignmentWithNonEqualSubscription-lonely-rack", NON_EQUAL_SUBSCRIPTION[0], 3, racks(2),
         racks(3), NON_EQUAL_SUBSCRIPTION[1],
         ["t1-0, t1-1, t2-0, t2-1, t2-2, t2-3, t3-0", "t1-2, t1-3, t2-4, t2-5, t2-6, t3-1", "t1-4, t1-5"], 2),
    # Co-partitioning wins over rack alignment.
    *non_rack_aware_cases("testRackAwareAssignmentWithUniformPartitions", *UNIFORM_PARTITIONS, PLAIN_UNIFORM_PARTITIONS),
    case("testRackAwareAssignmentWithUniformPartitions-rf1", UNIFORM_PARTITIONS[0], 1, racks(3), racks(3),
         UNIFORM_PARTITIONS[1], PLAIN_UNIFORM_PARTITIONS, 10),
    case("testRackAwareAssignmentWithUniformPartitions-rf2", UNIFORM_PARTITIONS[0], 2, racks(3), racks(3),
         UNIFORM_PARTITIONS[1], PLAIN_UNIFORM_PARTITIONS, 5),
    case("testRackAwareAssignmentWithUniformPartitions-lonely-rack", UNIFORM_PARTITIONS[0], 3, racks(2), racks(3),
         UNIFORM_PARTITIONS[1], PLAIN_UNIFORM_PARTITIONS, 3),
    *non_rack_aware_cases(
        "testRackAwareAssignmentWithUniformPartitionsNonEqualSubscription", *UNIFORM_PARTITIONS_NON_EQUAL,
        ["t1-0, t1-1, t2-0, t2-1, t2-2, t3-0, t3-1", "t1-2, t1-3, t2-3, t2-4, t3-2, t3-3", "t1-4, t3-4"],
    ),
    case("testRackAwareAssignmentWithUniformPartitionsNonEqualSubscription-rf1", UNIFORM_PARTITIONS_NON_EQUAL[0], 1,
         racks(3), racks(3), UNIFORM_PARTITIONS_NON_EQUAL[1],
         ["t1-0, t1-1, t2-0, t2-1, t2-4, t3-0, t3-1", "t1-2, t1-3, t2-2, t2-3, t3-2, t3-3", "t1-4, t3-4"], 9),
    case("testRackAwareAssignmentWithUniformPartitionsNonEqualSubscription-rf2", UNIFORM_PARTITIONS_NON_EQUAL[0], 2,
         racks(3), racks(3), UNIFORM_PARTITIONS_NON_EQUAL[1],
         ["t1-2, t2-0, t2-1, t2-3, t3-2", "t1-0, t1-3, t2-2, t2-4, t3-0, t3-3", "t1-1, t1-4, t3-1, t3-4"], 0),
    case("testRackAwareAssignmentWithUniformPartitionsNonEqualSubscription-lonely-rack",
         UNIFORM_PARTITIONS_NON_EQUAL[0], 3, racks(2), racks(3), UNIFORM_PARTITIONS_NON_EQUAL[1],
         ["t1-0, t1-1, t2-0, t2-1, t2-2, t3-0, t3-1", "t1-2, t1-3, t2-3, t2-4, t3-2, t3-3", "t1-4, t3-4"], 2),
    case("testRackAwareAssignmentWithCoPartitioning-split-rf3", CO_PARTITIONED, 3, racks(2), CONSUMER_RACKS_ABBA,
         SPLIT_TOPICS, SPLIT_PLAIN, -1),
    case("testRackAwareAssignmentWithCoPartitioning-split-rf2", CO_PARTITIONED, 2, racks(2), CONSUMER_RACKS_ABBA,
         SPLIT_TOPICS, SPLIT_PLAIN, 0),
    case("testRackAwareAssignmentWithCoPartitioning-split-rf1", CO_PARTITIONED, 1, racks(2), CONSUMER_RACKS_ABBA,
         SPLIT_TOPICS,
         ["t1-0, t1-2, t1-4, t2-0, t2-2, t2-4", "t1-1, t1-3, t1-5, t2-1, t2-3, t2-5", "t3-1, t4-1", "t3-0, t4-0"], 0),
    case("testRackAwareAssignmentWithCoPartitioning-all-rf3", CO_PARTITIONED, 3, racks(2), CONSUMER_RACKS_ABBA,
         ALL_FOUR, ALL_FOUR_PLAIN, -1),
    case("testRackAwareAssignmentWithCoPartitioning-all-rf2", CO_PARTITIONED, 2, racks(2), CONSUMER_RACKS_ABBA,
         ALL_FOUR, ALL_FOUR_PLAIN, 0),
    case("testRackAwareAssignmentWithCoPartitioning-all-rf1-2racks", CO_PARTITIONED, 1, racks(2),
         CONSUMER_RACKS_ABBA, ALL_FOUR,
         ["t1-0, t1-2, t2-0, t2-2, t3-0, t4-0", "t1-1, t1-3, t2-1, t2-3, t3-1, t4-1", "t1-5, t2-5", "t1-4, t2-4"], 0),
    case("testRackAwareAssignmentWithCoPartitioning-all-rf1-3racks", CO_PARTITIONED, 1, racks(3),
         CONSUMER_RACKS_ABBA, ALL_FOUR,
         ["t1-0, t1-3, t2-0, t2-3, t3-0, t4-0", "t1-1, t1-4, t2-1, t2-4, t3-1, t4-1", "t1-2, t2-2", "t1-5, t2-5"], 6),
    case("testCoPartitionedAssignmentWithSameSubscription-no-broker-racks", SAME_SUBSCRIPTION, 3, null_racks(3),
         racks(3), NINE_TOPICS, SAME_SUBSCRIPTION_PLAIN, -1),
    case("testCoPartitionedAssignmentWithSameSubscription-prefer-rf3", SAME_SUBSCRIPTION, 3, racks(3), racks(3),
         NINE_TOPICS, SAME_SUBSCRIPTION_PLAIN, 0, prefer=True),
    case("testCoPartitionedAssignmentWithSameSubscription-prefer-rf2", SAME_SUBSCRIPTION, 2, racks(3), racks(3),
         NINE_TOPICS,
         ["t1-0, t1-2, t2-0, t2-2, t3-0, t4-0, t5-1, t6-1", "t1-1, t1-3, t2-1, t2-3, t3-1, t4-1, t5-2, t6-2",
          "t1-4, t1-5, t2-4, t2-5, t5-0, t5-3, t6-0, t6-3"], 0, prefer=True),
]  # fmt: skip


@pytest.mark.parametrize(
    (
        "topics",
        "replication_factor",
        "broker_racks",
        "consumer_racks",
        "consumer_topics",
        "expected",
        "mismatches",
        "prefer",
    ),
    RACK_CASES,
)
def test_rack_aware_assignment(
    topics, replication_factor, broker_racks, consumer_racks, consumer_topics, expected, mismatches, prefer
):
    verify_rack_assignment(
        topics,
        replication_factor,
        broker_racks,
        consumer_racks,
        consumer_topics,
        expected,
        mismatches,
        prefer,
    )


# --- AbstractPartitionAssignorTest ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("members", "expected_order"),
    [
        pytest.param([("a", None), ("b", None), ("c", None)], ["a", "b", "c"], id="testMemberInfoSortingWithoutGroupInstanceId"),
        pytest.param([("a", "y"), ("b", "z"), ("c", "x")], ["c", "a", "b"], id="testMemberInfoSortingWithAllGroupInstanceId"),
        pytest.param([("a", None), ("b", "y"), ("c", "x")], ["c", "b", "a"], id="testMemberInfoSortingSomeGroupInstanceId"),
    ],
)  # fmt: skip
def test_member_info_sorting(members, expected_order):
    ordered = sorted(
        (MemberSubscription(m, (), group_instance_id=i) for m, i in members), key=member_order_key
    )
    assert [m.member_id for m in ordered] == expected_order


@given(st.lists(st.tuples(st.integers(100, 199), st.booleans()), unique_by=lambda x: x[0], max_size=100))
@settings(max_examples=50)
def test_merge_sort_many_member_info(members):
    """testMergeSortManyMemberInfo: static members (in id order) before dynamic ones (in id order)."""
    infos = [
        MemberSubscription(str(i), (), group_instance_id=str(i) if static else None) for i, static in members
    ]
    expected = sorted((m for m in infos if m.group_instance_id), key=lambda m: m.member_id) + sorted(
        (m for m in infos if not m.group_instance_id), key=lambda m: m.member_id
    )
    assert sorted(infos, key=member_order_key) == expected


ABC = {"a", "b", "c"}
ON_ALL = [frozenset(ABC)] * 10
ON_SUBSET = [frozenset({"abc"[i % 3]}) for i in range(10)]


@pytest.mark.parametrize(
    ("consumer_racks", "partition_racks_", "per_partition", "expected", "expected_preferred"),
    [
        (set(), set(), ON_ALL, False, False),
        (set(), ABC, ON_ALL, False, False),
        (ABC, set(), [], False, False),
        ({"d"}, ABC, ON_ALL, False, False),
        (ABC, ABC, ON_ALL, False, True),
        ({"a", "b"}, ABC, ON_ALL, False, True),
        ({"a", "d"}, ABC, ON_ALL, False, True),
        (ABC, ABC, ON_SUBSET, True, True),
        ({"a", "b"}, ABC, ON_SUBSET, True, True),
        ({"a", "d"}, ABC, ON_SUBSET, True, True),
    ],
)
def test_use_rack_aware_assignment(
    consumer_racks, partition_racks_, per_partition, expected, expected_preferred
):
    """testUseRackAwareAssignment, without and with preferRackAwareLogic."""
    assert use_rack_aware_assignment(consumer_racks, partition_racks_, per_partition) is expected
    assert (
        use_rack_aware_assignment(consumer_racks, partition_racks_, per_partition, True) is expected_preferred
    )


def test_registry_and_protocols():
    assignor = get_assignor("range")
    assert isinstance(assignor, RangeAssignor)
    assert assignor.supported_protocols == (RebalanceProtocol.EAGER,)


def test_javadoc_example():
    """The class javadoc: C0 gets t0p0, t0p1, t1p0, t1p1 and C1 gets t0p2, t1p2."""
    spec = GroupSpec(
        topics={"t0": 3, "t1": 3},
        members=(MemberSubscription("C0", ("t0", "t1")), MemberSubscription("C1", ("t0", "t1"))),
    )
    assert RangeAssignor().assign(spec) == {"C0": tps("t0-0, t0-1, t1-0, t1-1"), "C1": tps("t0-2, t1-2")}


# --- properties ------------------------------------------------------------------------------------------

TOPIC_NAMES = ("t1", "t2", "t3", "t4")


@st.composite
def group_specs(draw, with_racks: bool):
    topics = draw(st.dictionaries(st.sampled_from(TOPIC_NAMES), st.integers(0, 12), max_size=4))
    member_ids = draw(
        st.lists(st.sampled_from([f"c{i}" for i in range(8)]), min_size=1, max_size=6, unique=True)
    )
    rack_names = ("r1", "r2", "r3")
    members = tuple(
        MemberSubscription(
            member_id,
            tuple(draw(st.lists(st.sampled_from((*TOPIC_NAMES, "missing")), max_size=4, unique=True))),
            group_instance_id=draw(
                st.none() | st.sampled_from(("i1", "i2", "i3", "i4", "i5", "i6", "i7", "i8"))
            ),
            rack=draw(st.none() | st.sampled_from(rack_names)) if with_racks else None,
        )
        for member_id in member_ids
    )
    instance_ids = [m.group_instance_id for m in members if m.group_instance_id]
    if len(instance_ids) != len(set(instance_ids)):  # a group never has two members with one instance id
        members = tuple(MemberSubscription(m.member_id, m.subscription, rack=m.rack) for m in members)
    layout = {}
    if with_racks:
        layout = {
            t: tuple(frozenset(draw(st.sets(st.sampled_from(rack_names), max_size=2))) for _ in range(n))
            for t, n in topics.items()
        }
    return GroupSpec(topics=topics, members=members, partition_racks=layout)


def subscribers(spec: GroupSpec, topic: str) -> list[MemberSubscription]:
    return sorted((m for m in spec.members if topic in m.subscription), key=member_order_key)


@given(group_specs(with_racks=False))
@settings(max_examples=100)
def test_plain_range_is_exact(spec):
    """Without racks: per topic, subscriber i (MemberInfo order) gets the i-th contiguous range, the first
    P % N ranges one partition longer (the class javadoc)."""
    assignment = RangeAssignor().assign(spec)
    assert_valid(spec, assignment)
    expected: dict[str, list[TopicPartition]] = {m.member_id: [] for m in spec.members}
    for topic, count in spec.topics.items():
        members = subscribers(spec, topic)
        start = 0
        for i, m in enumerate(members):
            length = count // len(members) + (1 if i < count % len(members) else 0)
            expected[m.member_id] += [TopicPartition(topic, p) for p in range(start, start + length)]
            start += length
    assert assignment == {m: sorted(tps_) for m, tps_ in expected.items()}


@given(group_specs(with_racks=True), st.booleans())
@settings(max_examples=100)
def test_rack_aware_range_keeps_balance_and_co_partitioning(spec, prefer):
    """With racks: every subscriber still gets P // N or P // N + 1 of each topic, exactly P % N of them
    the larger share; topics with the same subscribers and partition count stay co-partitioned."""
    assignment = RangeAssignor(prefer_rack_aware_logic=prefer).assign(spec)
    assert_valid(spec, assignment)
    owner = {tp: m for m, tps_ in assignment.items() for tp in tps_}
    for topic, count in spec.topics.items():
        members = subscribers(spec, topic)
        if not members:
            continue
        shares = Counter(sum(1 for tp in assignment[m.member_id] if tp.topic == topic) for m in members)
        per, extra = divmod(count, len(members))
        assert shares == +Counter({per + 1: extra, per: len(members) - extra})
    for t1 in spec.topics:
        for t2 in spec.topics:
            if (
                t1 < t2
                and spec.topics[t1] == spec.topics[t2]
                and subscribers(spec, t1) == subscribers(spec, t2)
            ):
                for p in range(spec.topics[t1]):
                    assert owner.get(TopicPartition(t1, p)) == owner.get(TopicPartition(t2, p))
