"""Kafka's group-coordinator `UniformHomogeneousAssignmentBuilderTest`,
`UniformHeterogeneousAssignmentBuilderTest` and `CommonAssignorTests`, ported as data, plus hypothesis
properties (validity, balance, stickiness) of the uniform assignor."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rebalance_core.assignors import GroupSpec, MemberSubscription, RebalanceProtocol, get_assignor
from rebalance_core.assignors.uniform import (
    SubscriptionType,
    UniformAssignor,
    coordinator_member_order,
    group_subscription_type,
    topic_id_hash,
    topic_id_order_key,
)
from rebalance_core.events import TopicPartition
from rebalance_core.java_hash import (
    java_hash_order,
    java_string_hash,
    table_size_after_puts,
    table_size_of_copy,
)
from tests.core.assignor_checks import assert_kafka_balanced, assert_valid, is_fully_balanced

HOMOGENEOUS = SubscriptionType.HOMOGENEOUS
HETEROGENEOUS = SubscriptionType.HETEROGENEOUS

# The fixed topic ids of Kafka's builder tests. Their Uuid.hashCode buckets (table of 16) are
# topic2: 1, topic4: 5, topic3: 9, topic1: 10: a HashSet of them iterates topic2, topic4, topic3, topic1.
TOPIC_IDS = {
    "topic1": "T1-A4s3VTwiI5CTbEp6POw",
    "topic2": "T2-B4s3VTwiI5YHbPp6YUe",
    "topic3": "T3-CU8fVTLCz5YMkLoDQsa",
    "topic4": "T4-Tw9fVTLCz5HbPp6YQsa",
}


def owned(text: str) -> tuple[TopicPartition, ...]:
    """ "topic1: 0 2; topic2: 1" -> partitions, in that order (Kafka's mkOrderedAssignment order)."""
    out = []
    for part in filter(None, (p.strip() for p in text.split(";"))):
        topic, _, partitions = part.partition(":")
        out += [TopicPartition(topic.strip(), int(p)) for p in partitions.split()]
    return tuple(out)


def expected_of(text_by_member: dict[str, str]) -> dict[str, list[TopicPartition]]:
    return {member: sorted(owned(text)) for member, text in text_by_member.items()}


def spec_of(topics: dict[str, int], members: list[tuple], partition_racks=None) -> GroupSpec:
    """members: (member id, subscription, owned text[, rack])."""
    return GroupSpec(
        topics=topics,
        members=tuple(
            MemberSubscription(m[0], tuple(m[1]), owned=owned(m[2]), rack=m[3] if len(m) > 3 else None)
            for m in members
        ),
        topic_ids=TOPIC_IDS,
        partition_racks=partition_racks or {},
    )


T12 = ["topic1", "topic2"]
T13 = ["topic1", "topic3"]
T123 = ["topic1", "topic2", "topic3"]

# (id, topics, members, expected)
HOMOGENEOUS_CASES = [
    ("testOneMemberNoTopicSubscription", {"topic1": 3}, [("A", [], "")], {"A": ""}),
    # Kafka throws when a member's topic id is not in the metadata; the coordinator never passes one
    # (it resolves topic names to ids and drops unknown names), which is what happens here.
    ("testOneMemberSubscribedToNonexistentTopic", {"topic1": 3}, [("A", ["topic2"], "")], {"A": ""}),
    # A gives its extra slot up (it owns nothing); B, the last unfilled member, takes it. topic3 is
    # listed before topic1 (HashSet order of their ids).
    ("testFirstAssignmentTwoMembersTwoTopicsNoMemberRacks", {"topic1": 3, "topic3": 2},
     [("A", T13, ""), ("B", T13, "")], {"A": "topic3: 0 1", "B": "topic1: 0 1 2"}),
    ("testFirstAssignmentNumMembersGreaterThanTotalNumPartitions", {"topic3": 2},
     [("A", ["topic3"], ""), ("B", ["topic3"], ""), ("C", ["topic3"], "")],
     {"A": "", "B": "topic3: 0", "C": "topic3: 1"}),
    ("testReassignmentForTwoMembersTwoTopicsGivenUnbalancedPrevAssignment", {"topic1": 3, "topic2": 3},
     [("A", T12, "topic1: 0 1; topic2: 0 1"), ("B", T12, "topic1: 2; topic2: 2")],
     {"A": "topic1: 0 1; topic2: 0", "B": "topic1: 2; topic2: 1 2"}),
    ("testReassignmentWhenPartitionsAreAddedForTwoMembersTwoTopics", {"topic1": 6, "topic2": 5},
     [("A", T12, "topic1: 0 2; topic2: 0"), ("B", T12, "topic1: 1; topic2: 1 2")],
     {"A": "topic1: 0 2; topic2: 0 3 4", "B": "topic1: 1 3 4 5; topic2: 1 2"}),
    ("testReassignmentWhenOneMemberAddedAfterInitialAssignmentWithTwoMembersTwoTopics", {"topic1": 3, "topic2": 3},
     [("A", T12, "topic1: 0 2; topic2: 0"), ("B", T12, "topic1: 1; topic2: 1 2"), ("C", T12, "")],
     {"A": "topic1: 0 2", "B": "topic1: 1; topic2: 1", "C": "topic2: 0 2"}),
    ("testReassignmentWhenOneMemberRemovedAfterInitialAssignmentWithThreeMembersTwoTopics", {"topic1": 3, "topic2": 3},
     [("A", T12, "topic1: 0; topic2: 0"), ("B", T12, "topic1: 1; topic2: 1")],
     {"A": "topic1: 0; topic2: 0 2", "B": "topic1: 1 2; topic2: 1"}),
    ("testReassignmentWhenOneSubscriptionRemovedAfterInitialAssignmentWithTwoMembersTwoTopics", {"topic1": 2, "topic2": 2},
     [("A", ["topic2"], "topic1: 0; topic2: 0"), ("B", ["topic2"], "topic1: 1; topic2: 1")],
     {"A": "topic2: 0", "B": "topic2: 1"}),
]  # fmt: skip

# The heterogeneous builder's tests force HETEROGENEOUS even where all subscriptions are equal.
HETEROGENEOUS_CASES = [
    ("testTwoMembersNoTopicSubscription", {"topic1": 3}, [("A", [], ""), ("B", [], "")], {"A": "", "B": ""}),
    ("testTwoMembersSubscribedToNonexistentTopics", {"topic1": 3},
     [("A", ["topic3"], ""), ("B", ["topic2"], "")], {"A": "", "B": ""}),
    ("testFirstAssignmentTwoMembersTwoTopics", {"topic1": 3, "topic3": 6},
     [("A", T13, ""), ("B", ["topic3"], "")], {"A": "topic1: 0 1 2; topic3: 4", "B": "topic3: 0 1 2 3 5"}),
    ("testFirstAssignmentNumMembersGreaterThanTotalNumPartitions", {"topic1": 2, "topic3": 1},
     [("A", ["topic3"], ""), ("B", ["topic3"], ""), ("C", ["topic1"], "")],
     {"A": "topic3: 0", "B": "", "C": "topic1: 0 1"}),
    ("testReassignmentForTwoMembersThreeTopicsGivenUnbalancedPrevAssignment", {"topic1": 6, "topic2": 4, "topic3": 4},
     [("A", ["topic1"], "topic1: 0 1 2"), ("B", T12, "topic1: 3; topic2: 0"),
      ("C", T123, "topic1: 4 5; topic2: 1 2 3; topic3: 0 1 2 3")],
     {"A": "topic1: 0 1 2 5", "B": "topic1: 3; topic2: 0 1 2 3", "C": "topic1: 4; topic3: 0 1 2 3"}),
    ("testReassignmentWhenPartitionsAreAddedForTwoMembers", {"topic1": 6, "topic2": 5, "topic3": 3, "topic4": 3},
     [("A", T13, "topic1: 0 1 2 3; topic3: 0 1"),
      ("B", ["topic1", "topic2", "topic3", "topic4"], "topic2: 0 1 2; topic4: 0 1 2")],
     {"A": "topic1: 0 1 2 3 4 5; topic3: 0 1 2", "B": "topic2: 0 1 2 3 4; topic4: 0 1 2"}),
    ("testReassignmentWhenOneMemberAddedAndPartitionsAddedTwoMembersTwoTopics", {"topic1": 6, "topic2": 7},
     [("A", ["topic1"], "topic1: 0 2; topic2: 0"), ("B", T12, "topic1: 1; topic2: 1 2"), ("C", T12, "")],
     {"A": "topic1: 0 2 3 4 5", "B": "topic1: 1; topic2: 1 2 6", "C": "topic2: 0 3 4 5"}),
    ("testReassignmentWhenOneMemberRemovedAfterInitialAssignmentWithThreeMembersThreeTopics",
     {"topic1": 3, "topic2": 8, "topic3": 3},
     [("A", T13, "topic1: 0 1 2; topic3: 0 1"), ("B", ["topic2"], "topic2: 3 4 5 6")],
     {"A": "topic1: 0 1 2; topic3: 0 1 2", "B": "topic2: 0 1 2 3 4 5 6 7"}),
    ("testReassignmentWhenOneSubscriptionRemovedAfterInitialAssignmentWithTwoMembersTwoTopics", {"topic1": 3, "topic2": 5},
     [("A", ["topic1"], "topic1: 0 2; topic2: 1 3"), ("B", T12, "topic1: 1; topic2: 0 2 4")],
     {"A": "topic1: 0 1 2", "B": "topic2: 0 1 2 3 4"}),
    # Partitions run out before the subscribers are balanced; the least loaded start with none.
    ("testReassignmentWhenTopicPartitionsRunOutAndMembersHaveNoPartitions", {"topic1": 2, "topic2": 2, "topic3": 2},
     [("A", T123, "topic1: 0 1; topic2: 0 1; topic3: 0 1"), ("B", T123, "")],
     {"A": "topic2: 0; topic3: 0 1", "B": "topic1: 0 1; topic2: 1"}),
    ("testFirstAssignmentWithTwoMembersIncludingOneWithoutSubscriptions", {"topic1": 3},
     [("A", ["topic1"], ""), ("B", [], "")], {"A": "topic1: 0 1 2", "B": ""}),
]  # fmt: skip


@pytest.mark.parametrize(
    ("subscription_type", "topics", "members", "expected"),
    [pytest.param(HOMOGENEOUS, *c[1:], id=c[0]) for c in HOMOGENEOUS_CASES]
    + [pytest.param(HETEROGENEOUS, *c[1:], id=c[0]) for c in HETEROGENEOUS_CASES],
)
def test_uniform_builder_cases(subscription_type, topics, members, expected):
    spec = spec_of(topics, members)
    assignment = UniformAssignor().assign(spec, subscription_type)
    assert assignment == expected_of(expected)
    assert_valid(spec, assignment)


def test_validity_and_balance_for_large_sample_set():
    """testValidityAndBalanceForLargeSampleSet: 100 topics of 3 partitions, 49 members."""
    topics = {f"topic-{i}": 3 for i in range(1, 101)}
    members = [(f"member{i}", list(topics), "") for i in range(1, 50)]
    spec = spec_of(topics, members)
    assignment = UniformAssignor().assign(spec)
    assert_valid(spec, assignment)
    assert is_fully_balanced(assignment)


# --- CommonAssignorTests ------------------------------------------------------------------------------

COMMON_TOPICS = {"topic1": 2, "topic2": 5, "topic3": 7}
# MetadataImageBuilder.addRacks(): brokers 0-3 on rack0-rack3; partition p on brokers p and p + 1 (mod 4).
COMMON_RACKS = {
    t: tuple(frozenset({f"rack{p % 4}", f"rack{(p + 1) % 4}"}) for p in range(n))
    for t, n in COMMON_TOPICS.items()
}


def run(spec: GroupSpec, subscription_type: SubscriptionType) -> dict[str, list[TopicPartition]]:
    return UniformAssignor().assign(spec, subscription_type)


def with_owned(spec: GroupSpec, assignment, order=None) -> GroupSpec:
    by_id = {m.member_id: m for m in spec.members}
    ids = order or [m.member_id for m in spec.members]
    return GroupSpec(
        topics=spec.topics,
        members=tuple(
            MemberSubscription(i, by_id[i].subscription, owned=tuple(assignment[i]), rack=by_id[i].rack)
            for i in ids
        ),
        partition_racks=spec.partition_racks,
    )


@pytest.mark.parametrize("rack_aware", [False, True])
@pytest.mark.parametrize("subscription_type", [HOMOGENEOUS, HETEROGENEOUS])
def test_assignment_reuse(subscription_type, rack_aware):
    """testAssignmentReuse: fed its own assignment back, the assignor returns it unchanged."""
    racks = ("rack1", "rack2", "rack3") if rack_aware else (None, None, None)
    spec = spec_of(COMMON_TOPICS, [(m, T123, "", r) for m, r in zip("ABC", racks)], COMMON_RACKS)
    first = run(spec, subscription_type)
    assert run(with_owned(spec, first), subscription_type) == first


@pytest.mark.parametrize("rack_aware", [False, True])
@pytest.mark.parametrize("subscription_type", [HOMOGENEOUS, HETEROGENEOUS])
def test_reassignment_stickiness(subscription_type, rack_aware):
    """testReassignmentStickiness: with its assignment fed back, the assignor returns the same whatever
    order the members come in. Only B has a rack, so that A and C are interchangeable."""
    spec = spec_of(
        COMMON_TOPICS,
        [("A", T123, ""), ("B", T123, "", "rack1" if rack_aware else None), ("C", T123, "")],
        COMMON_RACKS,
    )
    first = run(spec, subscription_type)
    for order in itertools.permutations("ABC"):
        assert run(with_owned(spec, first, list(order)), subscription_type) == first


@pytest.mark.parametrize("rack_aware", [False, True])
@pytest.mark.parametrize("subscription_type", [HOMOGENEOUS, HETEROGENEOUS])
def test_member_replacement_stickiness(subscription_type, rack_aware):
    """(Static) member replacement: a member id replaced by a new one that carries the old one's
    assignment (the coordinator hands a rejoining static member its predecessor's target assignment)
    gets the same partitions, and nobody else's change."""
    racks = ("rack1", "rack2", "rack3") if rack_aware else (None, None, None)
    spec = spec_of(COMMON_TOPICS, [(m, T123, "", r) for m, r in zip("ABC", racks)], COMMON_RACKS)
    first = run(spec, subscription_type)
    replaced = GroupSpec(
        topics=spec.topics,
        members=tuple(
            MemberSubscription(
                "B2" if m.member_id == "B" else m.member_id,
                m.subscription,
                owned=tuple(first[m.member_id]),
                rack=m.rack,
            )
            for m in spec.members
        ),
        partition_racks=spec.partition_racks,
    )
    assert run(replaced, subscription_type) == {"A": first["A"], "B2": first["B"], "C": first["C"]}


def test_registry_and_protocols():
    assignor = get_assignor("uniform")
    assert isinstance(assignor, UniformAssignor)
    assert assignor.supported_protocols == (RebalanceProtocol.COOPERATIVE,)


# --- Java iteration orders -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "java_hash"),
    [
        ("", 0),
        ("A", 65),
        ("hello", 99162322),
        ("Aa", 2112),
        ("BB", 2112),
        ("é", 233),
        ("\U0001f600", 1772899),
    ],
)
def test_java_string_hash(text, java_hash):
    """String.hashCode, over UTF-16 code units (the emoji is two of them)."""
    assert java_string_hash(text) == java_hash


def test_topic_id_hash_and_order():
    """The test ids' Uuid.hashCode gives the bucket order documented above; Uuid.compareTo orders them
    by their most significant bits; ids that are not Uuids (topic names) sort after Uuids."""
    names = list(TOPIC_IDS)
    ids = [TOPIC_IDS[n] for n in names]
    assert java_hash_order(names, [topic_id_hash(i) for i in ids], 16) == [
        "topic2",
        "topic4",
        "topic3",
        "topic1",
    ]
    assert sorted(names, key=lambda n: topic_id_order_key(TOPIC_IDS[n])) == names
    assert topic_id_order_key(TOPIC_IDS["topic4"]) < topic_id_order_key("a-topic-name")
    assert topic_id_hash("orders") == java_string_hash("orders")


@pytest.mark.parametrize(
    ("count", "puts", "copy"), [(0, 16, 16), (12, 16, 32), (13, 32, 32), (24, 32, 64), (49, 128, 128)]
)
def test_java_table_sizes(count, puts, copy):
    assert table_size_after_puts(count) == puts
    assert table_size_of_copy(count) == copy


def test_members_are_visited_in_hash_map_order():
    """Bucket order of String.hashCode (table of 16): "Aa" and "BB" (2112) share bucket 0 and keep their
    input order, "b" (98) is in bucket 2, "c" (99) in bucket 3."""
    members = [MemberSubscription(m, ()) for m in ("c", "BB", "b", "Aa")]
    assert [m.member_id for m in coordinator_member_order(members)] == ["BB", "Aa", "b", "c"]


def test_group_subscription_type():
    assert group_subscription_type(spec_of({}, [("A", ["x", "y"], ""), ("B", ["y", "x"], "")])) is HOMOGENEOUS
    assert group_subscription_type(spec_of({}, [("A", ["x"], ""), ("B", ["x", "y"], "")])) is HETEROGENEOUS


# --- properties ------------------------------------------------------------------------------------------

TOPIC_NAMES = ("t1", "t2", "t3", "t4")
MEMBER_IDS = tuple(f"m{i}" for i in range(8))
RACKS = ("r1", "r2", "r3")


@st.composite
def groups(draw, same_subscription: bool, with_racks: bool = False):
    """A group with a previous assignment: valid and disjoint, though possibly stale (members gone,
    subscriptions and partition counts changed since)."""
    topics = draw(st.dictionaries(st.sampled_from(TOPIC_NAMES), st.integers(0, 12), min_size=1, max_size=4))
    member_ids = draw(st.lists(st.sampled_from(MEMBER_IDS), min_size=1, max_size=6, unique=True))
    shared = draw(st.lists(st.sampled_from(TOPIC_NAMES), min_size=1, max_size=4, unique=True))
    subscriptions = {
        m: shared
        if same_subscription
        else draw(st.lists(st.sampled_from(TOPIC_NAMES), max_size=4, unique=True))
        for m in member_ids
    }
    holders = [*member_ids, None]  # None: a member that left
    previous: dict[str | None, list[TopicPartition]] = {h: [] for h in holders}
    for topic, count in topics.items():
        for partition in range(count):
            if draw(st.booleans()):
                previous[draw(st.sampled_from(holders))].append(TopicPartition(topic, partition))
    layout = {}
    if with_racks:
        layout = {
            t: tuple(frozenset(draw(st.sets(st.sampled_from(RACKS), max_size=2))) for _ in range(n))
            for t, n in topics.items()
        }
    members = tuple(
        MemberSubscription(
            m,
            tuple(subscriptions[m]),
            owned=tuple(draw(st.permutations(previous[m]))),
            rack=draw(st.none() | st.sampled_from(RACKS)) if with_racks else None,
        )
        for m in member_ids
    )
    topic_ids = {t: TOPIC_IDS[f"topic{t[1]}"] for t in topics if draw(st.booleans())}
    return GroupSpec(topics=topics, members=members, partition_racks=layout, topic_ids=topic_ids)


def assert_sticky(spec: GroupSpec, assignment: dict[str, list[TopicPartition]]) -> None:
    """No move balance does not require: a member keeps all it owns (of its subscribed topics) or gives
    some up, never both gives up and receives; i.e. it keeps min(owned, new size) partitions."""
    for m in spec.members:
        mine = {tp for tp in m.owned if tp.topic in m.subscription}
        new = set(assignment[m.member_id])
        assert len(new & mine) == min(len(mine), len(new)), (m.member_id, sorted(mine), sorted(new))


@given(groups(same_subscription=True))
@settings(max_examples=100)
def test_homogeneous_is_balanced_and_sticky(spec):
    assignment = UniformAssignor().assign(spec)
    assert_valid(spec, assignment)
    assert is_fully_balanced(assignment)
    assert_sticky(spec, assignment)
    assert UniformAssignor().assign(with_owned(spec, assignment)) == assignment


@given(groups(same_subscription=True, with_racks=True))
@settings(max_examples=100)
def test_homogeneous_rack_aware_keeps_balance(spec):
    """Balance comes before rack alignment."""
    assignment = UniformAssignor().assign(spec)
    assert_valid(spec, assignment)
    assert is_fully_balanced(assignment)


@given(groups(same_subscription=False))
@settings(max_examples=100)
def test_heterogeneous_is_balanced_and_stable(spec):
    """No partition could move to a member holding two fewer that also holds its topic, and fed its own
    assignment back, the assignor changes nothing."""
    assignment = UniformAssignor().assign(spec, HETEROGENEOUS)
    assert_valid(spec, assignment)
    assert_kafka_balanced(spec, assignment)
    assert UniformAssignor().assign(with_owned(spec, assignment), HETEROGENEOUS) == assignment
