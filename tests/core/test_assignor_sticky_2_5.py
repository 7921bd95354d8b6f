"""The sticky assignors as Kafka 2.3-2.5 clients run them (one general algorithm; 2.6 added
AbstractStickyAssignor.constrainedAssign for equal subscriptions): chosen by the client's release, valid,
balanced and sticky as Kafka's verifyValidityAndBalance checks, and breaking ties as 2.5 did."""

from __future__ import annotations

import random
from dataclasses import replace

import pytest

from rebalance_core.assignors import AssignmentError, GroupSpec, MemberSubscription, get_assignor
from rebalance_core.assignors.sticky import CooperativeStickyAssignor
from rebalance_core.assignors.sticky_2_5 import CooperativeStickyAssignor25, StickyAssignor25
from rebalance_core.events import TopicPartition
from tests.core.assignor_checks import (
    assert_kafka_balanced,
    assert_no_same_round_transfer,
    assert_no_two_way_moves,
    assert_valid,
)

FLAVOURS = ("sticky", "cooperative-sticky")


def tps(topic: str, *numbers: int) -> tuple[TopicPartition, ...]:
    return tuple(TopicPartition(topic, n) for n in numbers)


@pytest.mark.parametrize(
    ("version", "expected"),
    [("2.5", CooperativeStickyAssignor25), ("2.4.1", CooperativeStickyAssignor25), ("2.6", CooperativeStickyAssignor),
     (None, CooperativeStickyAssignor)],
)  # fmt: skip
def test_the_client_release_picks_the_algorithm_it_ran(version, expected):
    assert type(get_assignor("cooperative-sticky", version)) is expected
    assert type(get_assignor("sticky", "2.3")) is StickyAssignor25
    assert get_assignor("range", "2.5").name == "range"  # assignors without a version change: today's


def test_a_release_that_is_no_release_is_a_clear_error():
    with pytest.raises(AssignmentError, match="not a Kafka release"):
        get_assignor("sticky", "two")


def test_2_5_gives_unassigned_partitions_to_the_least_loaded_then_lowest_member_id():
    # AbstractStickyAssignor 2.5 balance/assignPartition: each unassigned partition goes to the first of
    # sortedCurrentSubscriptions (SubscriptionComparator: load, then member id), so the joiner c1 takes
    # ship-0 (0 < 1) and ship-1 (1 = 1, "c1" < "c2"); 2.6+'s constrainedAssign gives c1 ship-0 only
    spec = GroupSpec(
        {"ship": 3},
        (MemberSubscription("c1", ("ship",)), MemberSubscription("c2", ("ship",), owned=tps("ship", 2))),
    )
    assert get_assignor("cooperative-sticky", "2.5").assign(spec) == {
        "c1": list(tps("ship", 0, 1)),
        "c2": list(tps("ship", 2)),
    }
    assert get_assignor("cooperative-sticky").assign(spec) == {"c1": list(tps("ship", 0)), "c2": list(tps("ship", 1, 2))}  # fmt: skip


T1, T2 = "topic1", "topic2"


def member(name: str, *topics: str, owned: tuple[TopicPartition, ...] = ()) -> MemberSubscription:
    return MemberSubscription(name, topics, owned=owned)


# Kafka 2.5's AbstractStickyAssignorTest, exact expectations (spec, member -> partitions)
KAFKA_2_5_CASES = {
    "testOneConsumerMultipleTopics": (
        GroupSpec({T1: 1, T2: 2}, (member("consumer", T1, T2),)),
        {"consumer": tps(T1, 0) + tps(T2, 0, 1)},
    ),
    "testMultipleConsumersMixedTopicSubscriptions": (
        GroupSpec(
            {T1: 3, T2: 2}, (member("consumer1", T1), member("consumer2", T1, T2), member("consumer3", T1))
        ),
        {"consumer1": tps(T1, 0, 2), "consumer2": tps(T2, 0, 1), "consumer3": tps(T1, 1)},
    ),
    "testTwoConsumersTwoTopicsSixPartitions": (
        GroupSpec({T1: 3, T2: 3}, (member("consumer1", T1, T2), member("consumer2", T1, T2))),
        {"consumer1": tps(T1, 0, 2) + tps(T2, 1), "consumer2": tps(T1, 1) + tps(T2, 0, 2)},
    ),
    # the second round: the joiner gets partition 0 (the owner's first in HashMap order), not 2
    "testAddRemoveConsumerOneTopic": (
        GroupSpec(
            {"topic": 3},
            (member("consumer1", "topic", owned=tps("topic", 0, 1, 2)), member("consumer2", "topic")),
        ),
        {"consumer1": tps("topic", 1, 2), "consumer2": tps("topic", 0)},
    ),
}


@pytest.mark.parametrize("name", sorted(KAFKA_2_5_CASES))
def test_kafka_2_5_sticky_assignor_cases(name):
    spec, expected = KAFKA_2_5_CASES[name]
    assert StickyAssignor25().assign(spec) == {m: list(p) for m, p in expected.items()}


def random_spec(rng: random.Random, previous: dict[str, list[TopicPartition]] | None) -> GroupSpec:
    topics = {"a": rng.randint(1, 7), "b": rng.randint(0, 5), "c": rng.randint(1, 4)}
    names = [f"consumer-{i}" for i in range(rng.randint(1, 6))]
    equal = rng.random() < 0.5
    members = []
    for name in names:
        subscription = (
            tuple(topics) if equal else tuple(sorted(rng.sample(sorted(topics), rng.randint(1, 3))))
        )
        owned = tuple(tp for tp in (previous or {}).get(name, ()) if tp.topic in topics)
        members.append(MemberSubscription(name, subscription, owned=owned, generation=1 if owned else None))
    return GroupSpec(topics, tuple(members))


@pytest.mark.parametrize("flavour", FLAVOURS)
@pytest.mark.parametrize("seed", range(40))
def test_2_5_assignments_are_valid_balanced_and_sticky(flavour, seed):
    rng = random.Random(seed)
    assignor = get_assignor(flavour, "2.5")
    first = random_spec(rng, None)
    previous = assignor.assign(first)
    assert_valid(first, previous)
    assert_kafka_balanced(first, previous)
    # nothing changed: everyone keeps what they own (AbstractStickyAssignorTest.testNoReassignmentOnCurrentMembers)
    again = GroupSpec(
        first.topics,
        tuple(replace(m, owned=tuple(previous[m.member_id]), generation=1) for m in first.members),
    )
    assert assignor.assign(again) == previous
    # the next rebalance, members coming and going
    spec = random_spec(rng, previous)
    assignment = assignor.assign(spec)
    assert_no_two_way_moves(spec, assignment)
    if flavour == "cooperative-sticky":
        assert_valid(spec, assignment, complete=False)
        assert_no_same_round_transfer(spec, assignment)
    else:
        assert_valid(spec, assignment)
        assert_kafka_balanced(spec, assignment)
