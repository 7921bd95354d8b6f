"""CooperativeStickyAssignorTest, ported, and hypothesis properties of the cooperative rule (KIP-429).

The AbstractStickyAssignorTest scenarios run for this assignor too, in test_assignor_sticky.py (flavour
"cooperative-sticky"), with Kafka's follow-up rebalances (assignor_checks.cooperative_rounds). Kafka's
memberData/user-data tests (testEncodeAndDecodeGeneration, testDecodeGeneration, testMemberData*) are
about the wire encoding, which MemberSubscription replaces: not ported.
"""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from rebalance_core.assignors import GroupSpec, MemberSubscription
from rebalance_core.assignors.sticky import CooperativeStickyAssignor, StickyAssignor
from tests.core.assignor_checks import (
    assert_kafka_balanced,
    assert_no_same_round_transfer,
    assert_valid,
    cooperative_rounds,
    is_fully_balanced,
)
from tests.core.test_assignor_sticky import (
    GENERATION_ID,
    PROPERTY_SETTINGS,
    RACK_CONFIGS,
    KafkaFixture,
    Scenario,
    after_spec,
    scenarios,
    tp,
    tps,
    with_owned,
)

T, C1, C2, C3 = "topic", "consumer1", "consumer2", "consumer3"


@pytest.mark.parametrize(
    ("n_partitions", "expected"),
    [
        pytest.param(3, {C1: "topic-1", C2: "topic-2", C3: ""}, id="EqualPartitionsPerConsumer"),
        pytest.param(4, {C1: "topic-1, topic-3", C2: "topic-2", C3: ""}, id="UnequalPartitionsPerConsumer"),
    ],
)
@pytest.mark.parametrize("rack_config", RACK_CONFIGS)
def test_all_consumers_have_owned_partition_invalidated_when_claimed_by_multiple_consumers_in_same_generation(
    rack_config, n_partitions, expected
):
    """testAllConsumersHaveOwnedPartitionInvalidatedWhenClaimedByMultipleConsumersInSameGeneration...:
    topic-0 is claimed by two members of one generation, so it counts as owned and is not handed to
    consumer3 until both have revoked it (next round)."""
    f = KafkaFixture("cooperative-sticky", rack_config)
    f.add_topic(T, n_partitions)
    f.v2(C1, [T], tps("topic-0, topic-1"), GENERATION_ID, 0)
    f.v2(C2, [T], tps("topic-0, topic-2"), GENERATION_ID, 1)
    f.v2(C3, [T], [], GENERATION_ID, 2)
    result = f.assign()
    assert {m: set(ps) for m, ps in result.assignment.items()} == {
        m: set(tps(e)) for m, e in expected.items()
    }
    assert result.withheld == {tp(T, 0): C3}
    assert is_fully_balanced(f.verify(result))


def test_uniform_subscription_transfer_ownership_list_is_right():
    """testUniformSubscriptionTransferOwnershipListIsRight (KAFKA-15170): rack-aware, each member owns one
    partition on another rack; both must be counted as transferring ownership (and withheld)."""
    f = KafkaFixture("cooperative-sticky")
    f.replication, f.broker_racks, f.consumer_racks = 1, 2, True
    f.add_topic("topic1", 4)
    f.v2("c0", ["topic1"], tps("topic1-0, topic1-1"), GENERATION_ID, 0)
    f.v2("c1", ["topic1"], tps("topic1-2, topic1-3"), GENERATION_ID, 1)
    result = f.assign()
    assert len(result.partitions_transferring_ownership) == 2
    assert result.withheld == result.partitions_transferring_ownership


def test_withheld_partition_is_handed_over_in_the_next_round():
    """The KIP-429 two-step: a new member gets the partition only after its owner has revoked it."""
    spec = GroupSpec(
        {T: 2},
        (
            MemberSubscription(C1, (T,), owned=(tp(T, 0), tp(T, 1)), generation=1),
            MemberSubscription(C2, (T,)),
        ),
    )
    assignor = CooperativeStickyAssignor()
    first = assignor.assign_detailed(spec)
    assert first.assignment == {C1: [tp(T, 0)], C2: []}
    assert first.withheld == {tp(T, 1): C2}
    second = assignor.assign(with_owned(spec, first.assignment, 2))
    assert second == {C1: [tp(T, 0)], C2: [tp(T, 1)]}


@PROPERTY_SETTINGS
@given(st.one_of(scenarios(), scenarios(uniform=True), scenarios(racks=True)), st.booleans())
def test_cooperative_rounds_never_hand_over_what_they_revoke(scenario: Scenario, prefer_racks: bool):
    """Each round: nothing revoked and given away at once; what is assigned plus what is withheld is
    exactly the eager sticky assignment (one algorithm); withheld partitions are owned by someone else.
    Within Kafka's bound of follow-up rebalances the group reaches a complete, balanced assignment that,
    without racks, then stays put. (Rack-aware, it need not: the round-robin phase can hand a member
    partitions off its rack, and the next rebalance, whatever triggers it, takes them back.)"""
    cooperative = CooperativeStickyAssignor(prefer_rack_aware_logic=prefer_racks)
    eager = StickyAssignor(prefer_rack_aware_logic=prefer_racks)
    before_spec, before = cooperative_rounds(
        cooperative, scenario.before, cooperative.assign(scenario.before)
    )
    spec = after_spec(scenario, before)

    result = cooperative.assign_detailed(spec)
    assert_valid(spec, result.assignment, complete=False)
    assert_no_same_round_transfer(spec, result.assignment)
    combined = {
        m: sorted(ps + [p for p, to in result.withheld.items() if to == m])
        for m, ps in result.assignment.items()
    }
    assert combined == eager.assign(spec)
    owners = {p: m.member_id for m in spec.members for p in m.owned}
    for partition, to in result.withheld.items():
        assert owners.get(partition) not in (None, to)

    final_spec, final = cooperative_rounds(cooperative, spec, result.assignment)
    assert_valid(final_spec, final)
    assert_kafka_balanced(final_spec, final)
    if not any(m.rack for m in spec.members):
        settled = cooperative.assign_detailed(with_owned(final_spec, final, 3))
        assert settled.withheld == {}
        assert settled.assignment == final
