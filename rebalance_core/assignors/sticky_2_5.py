"""StickyAssignor and CooperativeStickyAssignor as Kafka 2.3-2.5 clients run them.

Before 2.6, AbstractStickyAssignor.assign had one algorithm for every group: the general one, with a
sortPartitions that, for a reassignment where all members subscribe to the same topics, lists partitions
round-robin from the most loaded member to the least (preferring partitions that had another owner in an
older generation), and a balance phase that moves partitions to the least loaded member (TreeSet by
assignment size, then member id: SubscriptionComparator). 2.6 added the all-subscriptions-equal algorithm
(allSubscriptionsEqual / constrainedAssign), which breaks the same ties differently, so a 2.5 group's
leader hands out other partitions than today's (`rebalance_core.assignors.sticky`, Kafka 3.8) would.
2.5's CooperativeStickyAssignor.memberData carries no generation (Optional.empty): every owned partition
counts as the current generation's, the last claimant of a partition claimed twice keeping it.

The steps follow Kafka 2.5's AbstractStickyAssignor (method names cited), on the partition ids of
`sticky._Layout`. java.util.HashMap iteration orders decide which partition is taken first where the
algorithm walks a map (the previous owners, all partitions); `_hashmap_order` reproduces them.
"""

from __future__ import annotations

from collections.abc import Sequence

from rebalance_core.assignors.base import GroupAssignment, GroupSpec, RebalanceProtocol
from rebalance_core.assignors.sticky import (
    _balance_score,
    _java_hashmap_order,
    _Layout,
    _PartitionMovements,
)
from rebalance_core.java_hash import table_size_after_puts

DEFAULT_GENERATION = -1
# the first Kafka release whose sticky assignors have the all-subscriptions-equal algorithm
CONSTRAINED_ASSIGN_SINCE = (2, 6)


def _hashmap_order(layout: _Layout, gids: Sequence[int]) -> list[int]:
    """`gids` (distinct, in insertion order) as a java.util.HashMap<TopicPartition, _> iterates them."""
    mask = table_size_after_puts(len(gids)) - 1
    return [
        g for _, g in sorted(enumerate(gids), key=lambda ig: (layout.java_spread_of(ig[1]) & mask, ig[0]))
    ]


class _Sticky25:
    """AbstractStickyAssignor.assign of Kafka 2.5 for one group (members by index, partitions by id)."""

    def __init__(self, spec: GroupSpec, *, generations_in_user_data: bool) -> None:
        subscribed = {t for m in spec.members for t in m.subscription}
        self.layout = layout = _Layout({t: spec.topics[t] for t in subscribed if spec.topics.get(t, 0) > 0})
        self.spec = spec
        # the subscriptions map (HashMap<String, Subscription>) in its iteration order
        self.members = [spec.members[i] for i in _java_hashmap_order([m.member_id for m in spec.members])]
        self.ids = [m.member_id for m in self.members]
        self.potential: list[set[int]] = []  # consumer2AllPotentialPartitions
        for m in self.members:
            gids: set[int] = set()
            for t in m.subscription:
                rank = layout.rank.get(t)
                if rank is not None:
                    gids.update(range(layout.offsets[rank], layout.offsets[rank + 1]))
            self.potential.append(gids)
        self.potential_count = [0] * layout.total  # partition2AllPotentialConsumers' sizes
        for gids in self.potential:
            for g in gids:
                self.potential_count[g] += 1
        self.generations_in_user_data = generations_in_user_data
        self.movements = _PartitionMovements(layout)

    # -- prepopulateCurrentAssignments ------------------------------------------------------------------
    def _prepopulate(self) -> tuple[dict[int, list[int]], dict[int, int]]:
        layout = self.layout
        claims: dict[int, dict[int, int]] = {}  # partition -> generation -> member (insertion = first seen)
        for me, m in enumerate(self.members):
            present = self.generations_in_user_data and m.generation is not None
            generation = m.generation if present else DEFAULT_GENERATION
            for topic, partition in m.owned:
                rank = layout.rank.get(topic)
                if rank is None or not 0 <= partition < layout.counts[rank]:
                    continue  # (2.5 would keep a partition of a deleted topic here and drop it below)
                by_generation = claims.setdefault(layout.offsets[rank] + partition, {})
                if present and generation in by_generation:
                    continue  # "assigned to multiple consumers following sticky assignment generation"
                by_generation[generation] = me
        current: dict[int, list[int]] = {}
        previous: dict[int, int] = {}  # prevAssignment: partition -> member of the generation before
        for g in _hashmap_order(layout, list(claims)):
            newest_first = sorted(claims[g], reverse=True)
            current.setdefault(claims[g][newest_first[0]], []).append(g)
            if len(newest_first) > 1:
                previous[g] = claims[g][newest_first[1]]
        return current, previous

    def _order(self, me: int, lists: dict[int, list[int]]) -> tuple[int, str]:
        """SubscriptionComparator: by assigned partitions, then member id."""
        return (len(lists[me]), self.ids[me])

    # -- sortPartitions ---------------------------------------------------------------------------------
    def _sort_partitions(
        self, current: dict[int, list[int]], previous: dict[int, int], fresh: bool
    ) -> list[int]:
        layout = self.layout
        identical = len({frozenset(p) for p in self.potential}) <= 1
        if fresh or not identical:
            # PartitionComparator: fewer potential consumers first, then topic, then partition
            return sorted(range(layout.total), key=lambda g: (self.potential_count[g], g))
        lists = {me: [g for g in gids if self.potential_count[g]] for me, gids in current.items()}
        moved_before = _hashmap_order(layout, list(previous))  # partitionsWithADifferentPreviousAssignment
        out: list[int] = []
        listed: set[int] = set()
        waiting = set(lists)
        while waiting:
            me = max(waiting, key=lambda c: self._order(c, lists))  # pollLast
            remaining = lists[me]
            was_other = [g for g in moved_before if g in remaining]
            if was_other:
                g = was_other[0]
                remaining.remove(g)
            elif remaining:
                g = remaining.pop(0)
            else:
                waiting.discard(me)
                continue
            out.append(g)
            listed.add(g)
        for g in _hashmap_order(layout, range(layout.total)):
            if g not in listed:
                out.append(g)
        return out

    # -- assign -----------------------------------------------------------------------------------------
    def assign(self) -> dict[int, list[int]]:
        current, previous = self._prepopulate()
        fresh = not current
        for me in range(len(self.members)):
            current.setdefault(me, [])
        owner = {g: me for me, gids in current.items() for g in gids}  # currentPartitionConsumer
        sorted_partitions = self._sort_partitions(current, previous, fresh)
        unassigned = list(sorted_partitions)
        held = set()
        revocation_required = False
        topic_of = self.layout.topic_of
        for me, gids in current.items():
            subscribed = {self.layout.rank[t] for t in self.members[me].subscription if t in self.layout.rank}
            kept = []
            for g in gids:
                if topic_of[g] not in subscribed:
                    revocation_required = True
                    del owner[g]
                else:
                    kept.append(g)
                    held.add(g)
            gids[:] = kept
        unassigned = [g for g in unassigned if g not in held]
        self._balance(current, previous, sorted_partitions, unassigned, owner, revocation_required)
        return current

    def _balance(
        self,
        current: dict[int, list[int]],
        previous: dict[int, int],
        sorted_partitions: list[int],
        unassigned: list[int],
        owner: dict[int, int],
        revocation_required: bool,
    ) -> None:
        initializing = max(len(gids) for gids in current.values()) == 0
        for g in unassigned:  # assignPartition: the first member, by load then id, that can take it
            takers = [me for me in current if g in self.potential[me]]
            if takers:
                me = min(takers, key=lambda c: self._order(c, current))
                current[me].append(g)
                owner[g] = me
        movable = [self.potential_count[g] >= 2 for g in range(self.layout.total)]
        sorted_partitions = [g for g in sorted_partitions if movable[g]]
        unassigned = [g for g in unassigned if movable[g]]
        fixed = {  # canParticipateInReassignment(consumer): all it can have, none of it movable
            me: gids
            for me, gids in current.items()
            if len(gids) >= len(self.potential[me]) and not any(movable[g] for g in gids)
        }
        for me in fixed:
            del current[me]
        before = ({me: list(gids) for me, gids in current.items()}, dict(owner))
        if not revocation_required:
            self._perform_reassignments(unassigned, current, previous, owner)
        performed = self._perform_reassignments(sorted_partitions, current, previous, owner)
        if not initializing and performed and _score(current) >= _score(before[0]):
            current.clear()
            current.update(before[0])
            owner.clear()
            owner.update(before[1])
        current.update(fixed)

    def _is_balanced(self, current: dict[int, list[int]], owner: dict[int, int]) -> bool:
        sizes = [len(gids) for gids in current.values()]
        if not sizes or min(sizes) >= max(sizes) - 1:
            return True
        for me, gids in current.items():
            if len(gids) == len(self.potential[me]):
                continue
            for g in self.potential[me].difference(gids):
                other = owner.get(g)
                if other is not None and other in current and len(gids) < len(current[other]):
                    return False
        return True

    def _perform_reassignments(
        self,
        partitions: list[int],
        current: dict[int, list[int]],
        previous: dict[int, int],
        owner: dict[int, int],
    ) -> bool:
        performed = False
        while True:
            modified = False
            for g in partitions:
                if self._is_balanced(current, owner):
                    break
                me = owner[g]
                before = previous.get(g)
                if before is not None and before in current and len(current[me]) > len(current[before]) + 1:
                    self._reassign(g, before, current, owner)
                    performed = modified = True
                    continue
                if any(
                    other in current and len(current[me]) > len(current[other]) + 1
                    for other in range(len(self.members))
                    if g in self.potential[other]
                ):
                    takers = [c for c in current if g in self.potential[c]]
                    self._reassign(g, min(takers, key=lambda c: self._order(c, current)), current, owner)
                    performed = modified = True
            if not modified:
                return performed

    def _reassign(self, g: int, new: int, current: dict[int, list[int]], owner: dict[int, int]) -> None:
        """reassignPartition + processPartitionMovement."""
        g = self.movements.actual_partition_to_move(g, owner[g], new)
        old = owner[g]
        self.movements.move(g, old, new)
        current[old].remove(g)
        current[new].append(g)
        owner[g] = new


def _score(current: dict[int, list[int]]) -> int:
    return _balance_score([len(gids) for gids in current.values()])


def _to_assignment(spec: GroupSpec, run: _Sticky25, lists: dict[int, list[int]]) -> GroupAssignment:
    tps = run.layout.all_tps()
    by_id = {run.ids[me]: gids for me, gids in lists.items()}
    return {m.member_id: [tps[g] for g in sorted(by_id.get(m.member_id, ()))] for m in spec.members}


class StickyAssignor25:
    """org.apache.kafka.clients.consumer.StickyAssignor of Kafka 2.3-2.5 (generation in its user data)."""

    name = "sticky"
    supported_protocols = (RebalanceProtocol.EAGER,)

    def assign(self, spec: GroupSpec) -> GroupAssignment:
        if not spec.members:
            return {}
        run = _Sticky25(spec, generations_in_user_data=True)
        return _to_assignment(spec, run, run.assign())


class CooperativeStickyAssignor25:
    """org.apache.kafka.clients.consumer.CooperativeStickyAssignor of Kafka 2.4-2.5: the general algorithm,
    then adjustAssignment withholds a partition from its new owner until its old owner revoked it."""

    name = "cooperative-sticky"
    supported_protocols = (RebalanceProtocol.COOPERATIVE, RebalanceProtocol.EAGER)

    def assign(self, spec: GroupSpec) -> GroupAssignment:
        if not spec.members:
            return {}
        run = _Sticky25(spec, generations_in_user_data=False)
        assignment = _to_assignment(spec, run, run.assign())
        owned = {m.member_id: set(m.owned) for m in spec.members}
        added = {tp: member for member, tps in assignment.items() for tp in tps if tp not in owned[member]}
        revoked = {tp for member, tps in assignment.items() for tp in owned[member].difference(tps)}
        for tp in revoked & added.keys():
            assignment[added[tp]].remove(tp)
        return assignment
