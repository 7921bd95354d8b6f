"""Property checks shared by every assignor's tests, as Kafka's AbstractStickyAssignorTest keeps
them (verifyValidityAndBalance, isFullyBalanced) plus the cooperative rule of KIP-429."""

from __future__ import annotations

from collections import Counter

from rebalance_core.assignors import GroupSpec
from rebalance_core.events import TopicPartition


def assert_valid(spec: GroupSpec, assignment: dict[str, list[TopicPartition]], *, complete: bool = True) -> None:
    """Every member present; partitions sorted, real, only to subscribers, at most once; with
    `complete`, every subscribed partition assigned (cooperative rounds withhold some: complete=False)."""
    members = {m.member_id: m for m in spec.members}
    assert set(assignment) == set(members), f"members {sorted(members)} != assigned {sorted(assignment)}"
    counts = Counter(tp for tps in assignment.values() for tp in tps)
    doubled = sorted(tp for tp, n in counts.items() if n > 1)
    assert not doubled, f"assigned more than once: {doubled}"
    for member_id, tps in assignment.items():
        assert list(tps) == sorted(tps), f"{member_id}: not sorted {tps}"
        for tp in tps:
            assert tp.topic in members[member_id].subscription, f"{tp} given to non-subscriber {member_id}"
            assert 0 <= tp.partition < spec.topics.get(tp.topic, 0), f"{tp} does not exist"
    if complete:
        subscribed = {t for m in spec.members for t in m.subscription}
        expected = {tp for t in subscribed for tp in spec.partitions_of(t)}
        missing = sorted(expected - set(counts))
        assert not missing, f"unassigned partitions: {missing[:10]}"


def assert_kafka_balanced(spec: GroupSpec, assignment: dict[str, list[TopicPartition]]) -> None:
    """AbstractStickyAssignorTest.verifyValidityAndBalance: two members whose loads differ by more
    than one must not hold partitions of a common topic (else one could have been moved)."""
    members = sorted(assignment)
    for i, a in enumerate(members):
        for b in members[i + 1 :]:
            la, lb = len(assignment[a]), len(assignment[b])
            if abs(la - lb) <= 1:
                continue
            topics_a = {tp.topic for tp in assignment[a]}
            topics_b = {tp.topic for tp in assignment[b]}
            common = topics_a & topics_b
            assert not common, f"{a} ({la}) and {b} ({lb}) share topics {sorted(common)}: not balanced"


def is_fully_balanced(assignment: dict[str, list[TopicPartition]]) -> bool:
    """AbstractStickyAssignorTest.isFullyBalanced: max and min load differ by at most one."""
    sizes = [len(tps) for tps in assignment.values()]
    return not sizes or max(sizes) - min(sizes) <= 1


def assert_no_same_round_transfer(spec: GroupSpec, assignment: dict[str, list[TopicPartition]]) -> None:
    """KIP-429: a partition owned by one member is never given to another in the same round; it is
    withheld (revoked) and handed over in the next round."""
    owner = {tp: m.member_id for m in spec.members for tp in m.owned}
    for member_id, tps in assignment.items():
        for tp in tps:
            previous = owner.get(tp)
            assert previous in (None, member_id), f"{tp} moved {previous} -> {member_id} in one round"
