"""Kafka's client `RoundRobinAssignorTest`, ported as data, plus hypothesis properties."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rebalance_core.assignors import GroupSpec, MemberSubscription, RebalanceProtocol, get_assignor
from rebalance_core.assignors.range import member_order_key
from rebalance_core.assignors.roundrobin import RoundRobinAssignor
from rebalance_core.events import TopicPartition
from tests.core.assignor_checks import assert_valid, is_fully_balanced
from tests.core.test_assignor_range import tps

BOTH = ["topic1", "topic2"]

# (id, topics, [(member, subscription, group.instance.id)], expected {member: "t-p, ..."})
CASES = [
    ("testOneConsumerNoTopic", {}, [("consumer", [], None)], {"consumer": ""}),
    ("testOneConsumerNonexistentTopic", {}, [("consumer", ["topic"], None)], {"consumer": ""}),
    ("testOneConsumerOneTopic", {"topic": 3}, [("consumer", ["topic"], None)], {"consumer": "topic-0, topic-1, topic-2"}),
    ("testOnlyAssignsPartitionsFromSubscribedTopics", {"topic": 3, "other": 3}, [("consumer", ["topic"], None)],
     {"consumer": "topic-0, topic-1, topic-2"}),
    ("testOneConsumerMultipleTopics", {"topic1": 1, "topic2": 2}, [("consumer", BOTH, None)],
     {"consumer": "topic1-0, topic2-0, topic2-1"}),
    ("testTwoConsumersOneTopicOnePartition", {"topic": 1},
     [("consumer1", ["topic"], None), ("consumer2", ["topic"], None)], {"consumer1": "topic-0", "consumer2": ""}),
    ("testTwoConsumersOneTopicTwoPartitions", {"topic": 2},
     [("consumer1", ["topic"], None), ("consumer2", ["topic"], None)], {"consumer1": "topic-0", "consumer2": "topic-1"}),
    ("testMultipleConsumersMixedTopics", {"topic1": 3, "topic2": 2},
     [("consumer1", ["topic1"], None), ("consumer2", BOTH, None), ("consumer3", ["topic1"], None)],
     {"consumer1": "topic1-0", "consumer2": "topic1-1, topic2-0, topic2-1", "consumer3": "topic1-2"}),
    ("testTwoDynamicConsumersTwoTopicsSixPartitions", {"topic1": 3, "topic2": 3},
     [("consumer1", BOTH, None), ("consumer2", BOTH, None)],
     {"consumer1": "topic1-0, topic1-2, topic2-1", "consumer2": "topic1-1, topic2-0, topic2-2"}),
    # The instance ids decide the order, not the member ids.
    ("testTwoStaticConsumersTwoTopicsSixPartitions", {"topic1": 3, "topic2": 3},
     [("consumer-b", BOTH, "instance1"), ("consumer-a", BOTH, "instance2")],
     {"consumer-b": "topic1-0, topic1-2, topic2-1", "consumer-a": "topic1-1, topic2-0, topic2-2"}),
    # A static member sorts before every dynamic one.
    ("testOneStaticConsumerAndOneDynamicConsumerTwoTopicsSixPartitions", {"topic1": 3, "topic2": 3},
     [("consumer-b", BOTH, "instance1"), ("consumer-a", BOTH, None)],
     {"consumer-b": "topic1-0, topic1-2, topic2-1", "consumer-a": "topic1-1, topic2-0, topic2-2"}),
    ("testStaticMemberAssignmentPersistent", {"topic1": 3, "topic2": 3},
     [("consumer1", BOTH, "instance1"), ("consumer2", BOTH, "instance2"), ("consumer3", BOTH, "instance3"),
      ("consumer4", BOTH, None)],
     {"consumer1": "topic1-0, topic2-1", "consumer2": "topic1-1, topic2-2", "consumer3": "topic1-2",
      "consumer4": "topic2-0"}),
    # ... and a new dynamic member replacing consumer4 gets its partitions.
    ("testStaticMemberAssignmentPersistent-replaced", {"topic1": 3, "topic2": 3},
     [("consumer1", BOTH, "instance1"), ("consumer2", BOTH, "instance2"), ("consumer3", BOTH, "instance3"),
      ("consumer5", BOTH, None)],
     {"consumer1": "topic1-0, topic2-1", "consumer2": "topic1-1, topic2-2", "consumer3": "topic1-2",
      "consumer5": "topic2-0"}),
    # The class javadoc's two examples.
    ("javadoc-equal-subscriptions", {"t0": 3, "t1": 3}, [("C0", ["t0", "t1"], None), ("C1", ["t0", "t1"], None)],
     {"C0": "t0-0, t0-2, t1-1", "C1": "t0-1, t1-0, t1-2"}),
    ("javadoc-unequal-subscriptions", {"t0": 1, "t1": 2, "t2": 3},
     [("C0", ["t0"], None), ("C1", ["t0", "t1"], None), ("C2", ["t0", "t1", "t2"], None)],
     {"C0": "t0-0", "C1": "t1-0", "C2": "t1-1, t2-0, t2-1, t2-2"}),
]  # fmt: skip


def spec_of(topics, members) -> GroupSpec:
    return GroupSpec(
        topics=topics,
        members=tuple(MemberSubscription(m, tuple(s), group_instance_id=i) for m, s, i in members),
    )


@pytest.mark.parametrize(("topics", "members", "expected"), [pytest.param(*c[1:], id=c[0]) for c in CASES])
def test_round_robin_cases(topics, members, expected):
    spec = spec_of(topics, members)
    assignment = RoundRobinAssignor().assign(spec)
    assert assignment == {member: tps(text) for member, text in expected.items()}
    assert_valid(spec, assignment)


@pytest.mark.parametrize(
    "member_ids",
    [
        pytest.param(("consumer1", "consumer2", "consumer3"), id="first"),
        pytest.param(("consumer4", "consumer5", "consumer1"), id="renamed"),
    ],
)
def test_static_member_assignment_persistent_after_member_id_changes(member_ids):
    """testStaticMemberAssignmentPersistentAfterMemberIdChanges: instance i gets partition i of both
    topics, whatever the member ids."""
    members = [(m, BOTH, f"instance{i + 1}") for i, m in enumerate(member_ids)]
    assignment = RoundRobinAssignor().assign(spec_of({"topic1": 3, "topic2": 3}, members))
    assert {instance: assignment[m] for m, _, instance in members} == {
        f"instance{i + 1}": [TopicPartition("topic1", i), TopicPartition("topic2", i)] for i in range(3)
    }


def test_registry_and_protocols():
    assignor = get_assignor("roundrobin")
    assert isinstance(assignor, RoundRobinAssignor)
    assert assignor.supported_protocols == (RebalanceProtocol.EAGER,)


# --- properties ------------------------------------------------------------------------------------------

TOPIC_NAMES = ("a", "b", "t1", "t2", "t10")


@st.composite
def group_specs(draw, same_subscription: bool):
    topics = draw(st.dictionaries(st.sampled_from(TOPIC_NAMES), st.integers(0, 10), max_size=5))
    member_ids = draw(
        st.lists(st.sampled_from([f"c{i}" for i in range(10)]), min_size=1, max_size=7, unique=True)
    )
    instance_ids = draw(st.permutations([f"i{i}" for i in range(len(member_ids))]))
    shared = tuple(draw(st.lists(st.sampled_from((*TOPIC_NAMES, "missing")), max_size=5, unique=True)))
    members = tuple(
        MemberSubscription(
            member_id,
            shared
            if same_subscription
            else tuple(draw(st.lists(st.sampled_from(TOPIC_NAMES), max_size=5, unique=True))),
            group_instance_id=instance_id if draw(st.booleans()) else None,
        )
        for member_id, instance_id in zip(member_ids, instance_ids)
    )
    return GroupSpec(topics=topics, members=members)


@given(group_specs(same_subscription=True))
@settings(max_examples=100)
def test_identical_subscriptions_deal_partitions_in_turn(spec):
    """With identical subscriptions the k-th partition (topics by name, then partition number) goes to
    member k mod N in MemberInfo order, so the assignment is fully balanced (the class javadoc)."""
    assignment = RoundRobinAssignor().assign(spec)
    assert_valid(spec, assignment)
    assert is_fully_balanced(assignment)
    members = sorted(spec.members, key=member_order_key)
    subscribed = sorted(set(spec.members[0].subscription))
    partitions = [TopicPartition(t, p) for t in subscribed for p in range(spec.topics.get(t, 0))]
    expected = {m.member_id: sorted(partitions[i :: len(members)]) for i, m in enumerate(members)}
    assert assignment == expected


@given(group_specs(same_subscription=False))
@settings(max_examples=100)
def test_unequal_subscriptions_stay_valid(spec):
    """Unequal subscriptions: non-subscribers are skipped; every subscribed partition still lands once
    on a subscriber."""
    assert_valid(spec, RoundRobinAssignor().assign(spec))
