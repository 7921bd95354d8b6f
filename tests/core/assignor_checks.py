"""Property checks shared by every assignor's tests, as Kafka's AbstractStickyAssignorTest keeps
them (verifyValidityAndBalance, isFullyBalanced, PartitionMovements.isSticky) plus the cooperative rule of
KIP-429 (CooperativeStickyAssignorTest.verifyCooperativeValidity and its follow-up rebalances)."""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import replace

from rebalance_core.assignors import GroupSpec
from rebalance_core.events import TopicPartition


def assert_valid(
    spec: GroupSpec, assignment: dict[str, list[TopicPartition]], *, complete: bool = True
) -> None:
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
    """AbstractStickyAssignorTest.verifyValidityAndBalance, check for check: one entry per member; each
    member only gets partitions of topics it subscribes to; no two members share a partition; and two
    members whose loads differ by more than one must not hold partitions of a common topic (else one could
    have been moved). It does not require every partition to be assigned (assert_valid does)."""
    subscriptions = {m.member_id: set(m.subscription) for m in spec.members}
    assert len(subscriptions) == len(assignment), f"{len(subscriptions)} members, {len(assignment)} assigned"
    members = sorted(assignment)
    for i, a in enumerate(members):
        for tp in assignment[a]:
            assert tp.topic in subscriptions[a], f"{tp} is assigned to {a}, which does not subscribe to it"
        for b in members[i + 1 :]:
            shared = set(assignment[a]) & set(assignment[b])
            assert not shared, f"{a} and {b} both have {sorted(shared)}"
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


def assert_no_same_round_transfer(spec: GroupSpec, assignment: dict[str, list[TopicPartition]]) -> bool:
    """KIP-429, as CooperativeStickyAssignorTest.verifyCooperativeValidity checks it: no partition is both
    newly assigned to one member (it did not own it) and revoked from another (it owned it and keeps it
    no longer) in the same round; it is withheld and handed over in the next round. Returns whether the
    round revokes anything (then the members rejoin: a follow-up rebalance)."""
    added: set[TopicPartition] = set()
    revoked: set[TopicPartition] = set()
    for m in spec.members:
        owned, assigned = set(m.owned), set(assignment.get(m.member_id, ()))
        added |= assigned - owned
        revoked |= owned - assigned
    both = sorted(added & revoked)
    assert not both, f"revoked and reassigned in the same round: {both}"
    return bool(revoked)


def cooperative_rounds(
    assignor,
    spec: GroupSpec,
    assignment,
    *,
    generation: int = 1,
    max_rounds: int = 4,
    must_settle: bool = True,
):
    """CooperativeStickyAssignorTest.verifyValidityAndBalance's loop: while a round revokes something,
    every member rejoins owning what it was just given (same topics, rack; generation `generation`) and
    the group is assigned again; each round is checked with assert_no_same_round_transfer. Kafka's test
    allows its scenarios at most `max_rounds` follow-up rounds (`rebalances <= 4`); that bounds its cases,
    it is not a promise of the assignor: rack-aware rounds can cycle forever, in Kafka too
    (test_rack_aware_cooperative_rounds_can_cycle_forever_as_kafkas_do). With `must_settle=False` it
    stops after `max_rounds`; whether the last round still revokes is then
    assert_no_same_round_transfer(*returned). Returns the last (spec, assignment)."""
    rounds = 0
    while assert_no_same_round_transfer(spec, assignment):
        if rounds == max_rounds:
            assert not must_settle, f"still revoking after {max_rounds} follow-up rebalances"
            break
        members = tuple(
            replace(m, owned=tuple(assignment[m.member_id]), generation=generation) for m in spec.members
        )
        spec = replace(spec, members=members)
        assignment = assignor.assign(spec)
        rounds += 1
    return spec, assignment


def assert_no_two_way_moves(spec: GroupSpec, assignment: dict[str, list[TopicPartition]]) -> None:
    """Kafka's PartitionMovements.isSticky seen from outside: within one topic, partitions never move both
    from member A to member B and from B to A (that would be churn balance does not need)."""
    previous = {tp: m.member_id for m in spec.members for tp in m.owned}
    moves: dict[str, set[tuple[str, str]]] = defaultdict(set)
    for member_id, tps in assignment.items():
        for tp in tps:
            before = previous.get(tp)
            if before is not None and before != member_id:
                moves[tp.topic].add((before, member_id))
    for topic, pairs in moves.items():
        back_and_forth = sorted((a, b) for a, b in pairs if (b, a) in pairs)
        assert not back_and_forth, f"topic {topic}: partitions moved both ways between {back_and_forth}"
