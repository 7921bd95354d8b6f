"""Kafka's StickyAssignor ("sticky", eager) and CooperativeStickyAssignor ("cooperative-sticky").

Both are Kafka's AbstractStickyAssignor (clients/.../consumer/internals) as of Kafka 3.8: KIP-881 rack
awareness, owned partitions kept in (partition, topic) order (KAFKA-16277), the rack-aware bookkeeping of
KAFKA-15170 and the isBalanced fix of KAFKA-15106. They differ only in where the previous assignment comes from (StickyAssignor: its user data;
CooperativeStickyAssignor: Subscription.ownedPartitions; here both are MemberSubscription.owned and
.generation) and in what the cooperative one does afterwards: a partition that changes owner is withheld
from its new owner for one round (CooperativeStickyAssignor.adjustAssignment, KIP-429).

The algorithm is Kafka's, step by step (method names are cited), on integer partition ids: partition
`offsets[topic] + p` with topics sorted by name, so id order is Kafka's (topic, partition) order and the
inner loops touch ints, lists and arrays rather than one object per partition.

Kafka iterates some java.util.HashMaps (the members, and one HashSet of moved partitions) and the result
depends on that order where the algorithm breaks ties (e.g. which of several over-full members keeps the
extra partition). `_java_hashmap_order` and `_MovedPartitions` reproduce those iteration orders so the
results match Kafka's exactly (see Kafka's testMaxQuotaConsumerMoreThanNumExpectedMaxCapacityMembers).
"""

from __future__ import annotations

import gc
import heapq
from array import array
from bisect import bisect_right
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from itertools import chain, compress, count, repeat

from rebalance_core.assignors.base import (
    AssignmentError,
    GroupAssignment,
    GroupSpec,
    MemberSubscription,
    RebalanceProtocol,
)
from rebalance_core.events import TopicPartition
from rebalance_core.java_hash import java_hash_order, java_spread, java_string_hash, table_size_after_puts

DEFAULT_GENERATION = -1  # AbstractStickyAssignor.DEFAULT_GENERATION: "no generation known"


@dataclass
class StickyResult:
    """One run of a sticky assignor, with the bookkeeping Kafka's tests look at.

    assignment: what each member is told to own (for cooperative-sticky: without the withheld partitions).
    partitions_transferring_ownership: AbstractStickyAssignor.partitionsTransferringOwnership: partition ->
        new owner, filled by the all-subscriptions-equal algorithm; None after the general algorithm (Kafka
        sets it to null there and the cooperative assignor computes the transfers itself).
    withheld: partition -> the member it goes to once its previous owner has revoked it (cooperative only).
    is_sticky: PartitionMovements.isSticky() of the general algorithm: no topic had partitions moved both
        from A to B and from B to A (True when the all-subscriptions-equal algorithm ran).
    """

    assignment: GroupAssignment
    partitions_transferring_ownership: dict[TopicPartition, str] | None
    withheld: dict[TopicPartition, str]
    is_sticky: bool


class _AbstractStickyAssignor:
    """AbstractStickyAssignor. `prefer_rack_aware_logic` is Kafka's test-only switch
    (AbstractPartitionAssignor.preferRackAwareLogic): use the rack-aware algorithm even when every partition
    has replicas on every rack."""

    name: str
    supported_protocols: tuple[RebalanceProtocol, ...]
    _withholds_transfers: bool

    def __init__(self, *, prefer_rack_aware_logic: bool = False) -> None:
        self.prefer_rack_aware_logic = prefer_rack_aware_logic

    def assign(self, spec: GroupSpec) -> GroupAssignment:
        return self.assign_detailed(spec).assignment

    def assign_detailed(self, spec: GroupSpec) -> StickyResult:
        if not spec.members:
            return StickyResult({}, {}, {}, True)
        with _cyclic_gc_paused():
            return self._assign(spec)

    def _assign(self, spec: GroupSpec) -> StickyResult:
        prepared = _Prepared(spec, self.prefer_rack_aware_logic)
        if prepared.all_subscriptions_equal:
            lists, transfers = _ConstrainedAssignment(prepared).build()
            general = None
        else:
            general = _GeneralAssignment(prepared)
            lists = general.build()
            transfers = None
        withheld: dict[int, int] = {}
        if self._withholds_transfers:
            # CooperativeStickyAssignor.assign: the constrained algorithm tracked its transfers; after the
            # general one they are computed by comparing with what the members said they own.
            withheld = transfers if transfers is not None else _transfers(prepared, general.owner)
            for member in set(withheld.values()):
                lists[member] = [g for g in lists[member] if g not in withheld]
        layout = prepared.layout
        ids = prepared.member_ids
        return StickyResult(
            assignment=prepared.to_assignment(lists),
            partitions_transferring_ownership=(
                None if transfers is None else {layout.tp(g): ids[m] for g, m in transfers.items()}
            ),
            withheld={layout.tp(g): ids[m] for g, m in withheld.items()},
            is_sticky=True if general is None else general.movements.is_sticky(),
        )


class StickyAssignor(_AbstractStickyAssignor):
    """org.apache.kafka.clients.consumer.StickyAssignor (KIP-54): eager; balance first, then stickiness to
    the previous assignment (which Kafka carries with its generation in the subscription user data)."""

    name = "sticky"
    supported_protocols = (RebalanceProtocol.EAGER,)
    _withholds_transfers = False


class CooperativeStickyAssignor(_AbstractStickyAssignor):
    """org.apache.kafka.clients.consumer.CooperativeStickyAssignor (KIP-429)."""

    name = "cooperative-sticky"
    supported_protocols = (RebalanceProtocol.COOPERATIVE, RebalanceProtocol.EAGER)
    _withholds_transfers = True


@contextmanager
def _cyclic_gc_paused() -> Iterator[None]:
    """An assignment allocates about one object per partition and no reference cycles; with millions of
    live objects around (a large group's owned partitions) the cyclic collector would rescan them again
    and again meanwhile (3/4 of the run time at 1M partitions). Paused, then restored as it was."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


# --------------------------------------------------------------------------------------------------------
# Java iteration orders


def _java_hashmap_order(keys: Sequence[str]) -> list[int]:
    """Indexes of `keys` in the order a java.util.HashMap<String, _> filled with them in this order iterates:
    by bucket, then by insertion within a bucket. (Bins treeified after 8 collisions are not modelled.)"""
    hashes = [java_string_hash(key) for key in keys]
    return java_hash_order(range(len(keys)), hashes, table_size_after_puts(len(keys)))


# --------------------------------------------------------------------------------------------------------
# Input: partition numbering, members in Kafka's order, owned partitions after generation checks, racks


class _Layout:
    """Partition ids for the topics being assigned (AbstractPartitionAssignor's partitionsPerTopic: topics
    someone subscribes to that have partitions): id = offsets[rank] + partition, ranks by topic name."""

    def __init__(self, counts_by_topic: dict[str, int]) -> None:
        self.topics = sorted(counts_by_topic)
        self.rank = {t: r for r, t in enumerate(self.topics)}
        self.counts = [counts_by_topic[t] for t in self.topics]
        self.offsets = [0]
        for n in self.counts:
            self.offsets.append(self.offsets[-1] + n)
        self.total = self.offsets[-1]
        self._tps: list[TopicPartition] | None = None
        self._topic_of: array | None = None
        self._topic_hashes: list[int] | None = None

    @property
    def topic_of(self) -> array:
        """Topic rank of every partition id."""
        if self._topic_of is None:
            self._topic_of = array("i", chain.from_iterable(repeat(r, n) for r, n in enumerate(self.counts)))
        return self._topic_of

    def rank_of(self, gid: int) -> int:
        return bisect_right(self.offsets, gid) - 1

    def tp(self, gid: int) -> TopicPartition:
        return self.all_tps()[gid]

    def all_tps(self) -> list[TopicPartition]:
        if self._tps is None:
            make = TopicPartition._make
            tps: list[TopicPartition] = []
            for topic, n in zip(self.topics, self.counts):
                tps.extend(map(make, zip(repeat(topic), range(n))))
            self._tps = tps
        return self._tps

    def java_spread_of(self, gid: int) -> int:
        """HashMap.hash(TopicPartition.hashCode()) of a partition id."""
        if self._topic_hashes is None:
            self._topic_hashes = [java_string_hash(t) for t in self.topics]
        rank = self.rank_of(gid)
        partition = gid - self.offsets[rank]
        return java_spread((31 * (31 + partition) + self._topic_hashes[rank]) & 0xFFFFFFFF)


class _RackInfo:
    """AbstractStickyAssignor.RackInfo (KIP-881). Rack-aware only when consumers and replicas have racks in
    common and some partition is not on every rack (AbstractPartitionAssignor.useRackAwareAssignment)."""

    def __init__(self, spec: GroupSpec, layout: _Layout, members: list[MemberSubscription], prefer: bool):
        racks = [m.rack or None for m in members]
        self.active = False
        self.consumer_rack: list[str | None] = [None] * len(members)
        self.partition_racks: list[frozenset[str]] = []
        self._consumers_per_rack: dict[str, int] = {}
        if not any(racks):
            return
        empty: frozenset[str] = frozenset()
        per_partition: list[frozenset[str]] = []
        for topic, n in zip(layout.topics, layout.counts):
            given = tuple(spec.partition_racks.get(topic, ()))[:n]
            per_partition.extend(_rack_set(racks_of_replicas) for racks_of_replicas in given)
            per_partition.extend(repeat(empty, n - len(given)))
        all_partition_racks = frozenset().union(*set(per_partition))
        consumer_racks = {r for r in racks if r}
        if consumer_racks.isdisjoint(all_partition_racks):
            return
        if not prefer and all(r == all_partition_racks for r in per_partition):
            return
        self.active = True
        self.consumer_rack = racks
        self.partition_racks = per_partition
        for r in racks:
            if r:
                self._consumers_per_rack[r] = self._consumers_per_rack.get(r, 0) + 1

    def mismatch(self, member: int, gid: int) -> bool:
        """RackInfo.racksMismatch: the member has a rack and the partition has no replica on it."""
        rack = self.consumer_rack[member]
        return rack is not None and rack not in self.partition_racks[gid]

    def sort_by_rack_consumers(self, gids: list[int]) -> list[int]:
        """RackInfo.sortPartitionsByRackConsumers: fewest same-rack consumers first (stable)."""
        per_rack = self._consumers_per_rack
        racks = self.partition_racks
        return sorted(gids, key=lambda g: sum(per_rack.get(r, 0) for r in racks[g]))

    def next_rack_consumer(self, gid: int, members: list[int], first: int) -> int:
        """RackInfo.nextRackConsumer: index in `members`, from `first` round the list, of the first member on
        one of the partition's racks; -1 if none."""
        racks = self.partition_racks[gid]
        if not racks:
            return -1
        n = len(members)
        for i in range(n):
            index = (first + i) % n
            rack = self.consumer_rack[members[index]]
            if rack is not None and rack in racks:
                return index
        return -1


def _rack_set(racks: Iterable[str | None]) -> frozenset[str]:
    """The racks of a partition's replicas; replicas without a rack do not count (Kafka filters null)."""
    if isinstance(racks, frozenset) and None not in racks and "" not in racks:
        return racks
    return frozenset(r for r in racks if r)


class _Prepared:
    """What AbstractStickyAssignor.assignPartitions works out before choosing an algorithm."""

    def __init__(self, spec: GroupSpec, prefer_rack_aware_logic: bool) -> None:
        self.spec = spec
        subscribed = {t for m in spec.members for t in m.subscription}
        self.layout = layout = _Layout({t: spec.topics[t] for t in subscribed if spec.topics.get(t, 0) > 0})
        order = _java_hashmap_order([m.member_id for m in spec.members])
        self.members = [spec.members[i] for i in order]
        self.member_ids = [m.member_id for m in self.members]
        self.subscriptions = [
            frozenset(layout.rank[t] for t in m.subscription if t in layout.rank) for m in self.members
        ]
        # Kafka compares the topic lists; a member with no subscription does not take the first member's
        # (Kafka would treat {} followed by equal lists as "all equal" and assign to a non-subscriber).
        first = set(self.members[0].subscription)
        self.all_subscriptions_equal = all(set(m.subscription) == first for m in self.members)
        self.generations = [
            DEFAULT_GENERATION if m.generation is None else m.generation for m in self.members
        ]
        self.max_generation = max([DEFAULT_GENERATION, *self.generations])
        self.owned, self.multiply_claimed = self._owned_partitions()
        self.racks = _RackInfo(spec, layout, self.members, prefer_rack_aware_logic)

    def _owned_partitions(self) -> tuple[list[list[int]], set[int]]:
        """allSubscriptionsEqual's second job: each member's still-valid owned partitions. Two members
        claiming one partition: the higher generation keeps it; in the same generation neither does and it
        is remembered as claimed by several (it then counts as transferring ownership)."""
        layout = self.layout
        rank_get, offsets, counts = layout.rank.get, layout.offsets, layout.counts
        owner = array("i", [-1]) * layout.total
        generations = self.generations
        owned: list[list[int]] = []
        multiply_claimed: set[int] = set()
        for me, member in enumerate(self.members):
            mine: list[int] = []
            append = mine.append
            generation = generations[me]
            for topic, partition in member.owned:
                rank = rank_get(topic)
                # Kafka drops topics that are not being assigned; a partition number the topic does not
                # have (topic re-created smaller) is dropped too instead of being assigned.
                if rank is None or not 0 <= partition < counts[rank]:
                    continue
                gid = offsets[rank] + partition
                other = owner[gid]
                if other < 0:
                    owner[gid] = me
                    append(gid)
                elif other != me:  # (a member listing a partition twice: once is enough)
                    if generation == generations[other]:
                        multiply_claimed.add(gid)
                        _discard(owned[other], gid)
                        owner[gid] = me
                    elif generation > generations[other]:
                        append(gid)
                        _discard(owned[other], gid)
                        owner[gid] = me
            owned.append(mine)
        return owned, multiply_claimed

    def to_assignment(self, lists: list[list[int]]) -> GroupAssignment:
        tps = self.layout.all_tps()
        by_id = {m: lst for m, lst in zip(self.member_ids, lists)}
        result: GroupAssignment = {}
        for member in self.spec.members:
            gids = sorted(by_id[member.member_id])
            result[member.member_id] = [tps[g] for g in gids]
        return result


def _discard(items: list[int], item: int) -> None:
    if item in items:
        items.remove(item)


# --------------------------------------------------------------------------------------------------------
# All members subscribe to the same topics: AbstractStickyAssignor.ConstrainedAssignmentBuilder


class _ConstrainedAssignment:
    def __init__(self, prepared: _Prepared) -> None:
        self.prepared = prepared
        n_members = len(prepared.members)
        total = prepared.layout.total
        self.min_quota, self.expected_over_min = divmod(total, n_members)
        self.max_quota = self.min_quota + (1 if self.expected_over_min else 0)
        self.current_over_min = 0
        self.assignment: list[list[int]] = [[] for _ in range(n_members)]
        self.under_min: list[int] = []  # unfilledMembersWithUnderMinQuotaPartitions
        self.exactly_min: list[int] = []  # unfilledMembersWithExactlyMinQuotaPartitions
        # maybeRevokedPartitions: owned partitions not kept (over quota, or on no replica of the owner's
        # rack) -> their owner; given to anyone else later, they are transferring ownership (KAFKA-15170)
        self.maybe_revoked: dict[int, int] = {}
        self.transfers: dict[int, int] = {}  # partitionsTransferringOwnership

    def build(self) -> tuple[list[list[int]], dict[int, int]]:
        p = self.prepared
        free = self._assign_owned_partitions()
        unassigned = list(compress(range(p.layout.total), free))
        by_id = p.member_ids.__getitem__
        self.under_min.sort(key=by_id)
        self.exactly_min.sort(key=by_id)
        if p.racks.active:
            unassigned = p.racks.sort_by_rack_consumers(unassigned)
            unassigned = self._assign_rack_aware_round_robin(unassigned)
        self._assign_round_robin(unassigned)
        if self.under_min:  # verifyUnfilledMembers
            raise AssignmentError(
                f"sticky assignor: members {[p.member_ids[m] for m in self.under_min]} stay under the minimum "
                f"quota {self.min_quota} (Kafka throws IllegalStateException here)"
            )
        return self.assignment, self.transfers

    def _assign_owned_partitions(self) -> bytearray:
        """assignOwnedPartitions: keep owned partitions up to the quota, in (partition, topic) order
        (KAFKA-16277: so that every topic is spread); the rest may be revoked. Only `expected_over_min`
        members may keep maxQuota."""
        p = self.prepared
        free = bytearray(b"\x01") * p.layout.total
        racks, multi = p.racks, p.multiply_claimed
        min_q, max_q = self.min_quota, self.max_quota
        for me, owned in enumerate(p.owned):
            if racks.active:
                elsewhere = [g for g in owned if racks.mismatch(me, g)]
                if elsewhere:
                    self.maybe_revoked.update(zip(elsewhere, repeat(me)))
                    owned = [g for g in owned if not racks.mismatch(me, g)]
            if multi:
                owned = [g for g in owned if g not in multi]
            if len(owned) < min_q:
                keep = owned
                self.under_min.append(me)
            elif len(owned) >= max_q and self.current_over_min < self.expected_over_min:
                self.current_over_min += 1
                if self.current_over_min == self.expected_over_min:
                    self.exactly_min.clear()
                keep = self._keep_first(me, owned, max_q)
            else:
                keep = self._keep_first(me, owned, min_q)
                if self.current_over_min < self.expected_over_min:
                    self.exactly_min.append(me)
            self.assignment[me] = list(keep)
            for g in keep:
                free[g] = 0
        return free

    def _keep_first(self, me: int, owned: list[int], n: int) -> list[int]:
        if len(owned) <= n:
            return owned
        layout = self.prepared.layout
        n_topics = len(layout.topics)

        def partition_then_topic(g: int) -> int:
            rank = layout.rank_of(g)
            return (g - layout.offsets[rank]) * n_topics + rank

        owned = sorted(owned, key=partition_then_topic)
        self.maybe_revoked.update(zip(owned[n:], repeat(me)))
        return owned[:n]

    def _note_new(self, gids: Iterable[int], member: int) -> None:
        """The bookkeeping of assignNewPartition: a partition another member did not keep, or one claimed
        by several, is changing owner."""
        maybe_revoked, multi = self.maybe_revoked, self.prepared.multiply_claimed
        if maybe_revoked or multi:
            for g in gids:
                if maybe_revoked.get(g, member) != member or g in multi:
                    self.transfers[g] = member

    def _assign_rack_aware_round_robin(self, unassigned: list[int]) -> list[int]:
        """assignRackAwareRoundRobin: fill members (to minQuota, else maxQuota) with partitions on their
        rack; returns the partitions left for assignRoundRobin. With KAFKA-15170's bookkeeping: members
        reaching maxQuota here count towards `expected_over_min`."""
        racks, assignment = self.prepared.racks, self.assignment
        under, exact = self.under_min, self.exactly_min
        min_q, max_q = self.min_quota, self.max_quota
        left: list[int] = []
        next_index = 0
        for g in unassigned:
            member = None
            index = racks.next_rack_consumer(g, under, next_index)
            if index >= 0:
                member = under[index]
                count_after = len(assignment[member]) + 1
                if count_after >= min_q:
                    under.remove(member)
                    if count_after < max_q and self.current_over_min < self.expected_over_min:
                        exact.append(member)
                else:
                    index += 1
                next_index = index % len(under) if under else 0
            elif exact:
                first = racks.next_rack_consumer(g, exact, 0)
                if first >= 0:
                    member = exact[first]
                    if len(assignment[member]) + 1 == max_q:
                        del exact[first]
                        self.current_over_min += 1
                        if self.current_over_min == self.expected_over_min:
                            exact.clear()
            if member is None:
                left.append(g)
            else:
                assignment[member].append(g)
                self._note_new((g,), member)
        return left

    def _assign_round_robin(self, unassigned: list[int]) -> None:
        """assignRoundRobin: pass after pass over the members under minQuota (a member leaves the list when
        it reaches minQuota and joins the exactly-minQuota queue), then one each to that queue.

        The passes are done in batches: while no member can reach minQuota, k passes give member i of the
        list the partitions i, i+u, i+2u, ... of the next k*u (u members), one C-level slice each."""
        assignment, min_q = self.assignment, self.min_quota
        pos, n = 0, len(unassigned)
        under = self.under_min
        while under and pos < n:
            u = len(under)
            passes = min(min(min_q - len(assignment[m]) for m in under), (n - pos) // u)
            if passes:
                end = pos + passes * u
                for i, member in enumerate(under):
                    chunk = unassigned[pos + i : end : u]
                    assignment[member].extend(chunk)
                    self._note_new(chunk, member)
                pos = end
            else:  # fewer partitions than members left: a last, partial pass
                for member in under[: n - pos]:
                    assignment[member].append(unassigned[pos])
                    self._note_new((unassigned[pos],), member)
                    pos += 1
            reached = [m for m in under if len(assignment[m]) == min_q]
            if reached:
                under[:] = [m for m in under if len(assignment[m]) != min_q]
                self.exactly_min.extend(reached)
        queue = self.exactly_min
        head = 0
        for g in unassigned[pos:]:
            if head >= len(queue):
                raise AssignmentError("sticky assignor: partitions left but every member is at maxQuota")
            member = queue[head]
            head += 1
            assignment[member].append(g)
            self._note_new((g,), member)
        del queue[:head]


# --------------------------------------------------------------------------------------------------------
# Members subscribe to different topics: AbstractStickyAssignor.GeneralAssignmentBuilder


class _MemberClass:
    """Members with the same subscription (and rack): a heap of (size, member id, member) whose head is
    the first of them in Kafka's sortedCurrentSubscriptions (TreeSet by size, then member id)."""

    __slots__ = ("topics", "rack", "heap")

    def __init__(self, topics: frozenset[int], rack: str | None) -> None:
        self.topics = topics
        self.rack = rack
        self.heap: list[tuple[int, str, int]] = []


class _MovedPartitions:
    """Partitions of one topic moved from one member to another, iterated like Kafka's
    HashSet<TopicPartition> (PartitionMovements.getTheActualPartitionToBeMoved takes the first)."""

    __slots__ = ("inserted", "capacity", "_seq")

    def __init__(self) -> None:
        self.inserted: dict[int, int] = {}
        self.capacity = 16
        self._seq = count()

    def add(self, gid: int) -> None:
        self.inserted[gid] = next(self._seq)
        if len(self.inserted) > self.capacity * 3 // 4:
            self.capacity *= 2

    def first(self, layout: _Layout) -> int:
        mask = self.capacity - 1
        return min(self.inserted, key=lambda g: (layout.java_spread_of(g) & mask, self.inserted[g]))


class _PartitionMovements:
    """AbstractStickyAssignor.PartitionMovements: net movements during the reassignment phase, so that a
    partition moving back cancels out and a move A->B reuses a partition that earlier went B->A."""

    def __init__(self, layout: _Layout) -> None:
        self.layout = layout
        self.pair_of: dict[int, tuple[int, int]] = {}
        self.by_topic: dict[int, dict[tuple[int, int], _MovedPartitions]] = {}

    def _remove(self, gid: int) -> tuple[int, int]:
        pair = self.pair_of.pop(gid)
        topic = self.layout.topic_of[gid]
        of_topic = self.by_topic[topic]
        del of_topic[pair].inserted[gid]
        if not of_topic[pair].inserted:
            del of_topic[pair]
            if not of_topic:
                del self.by_topic[topic]
        return pair

    def _add(self, gid: int, pair: tuple[int, int]) -> None:
        self.pair_of[gid] = pair
        self.by_topic.setdefault(self.layout.topic_of[gid], {}).setdefault(pair, _MovedPartitions()).add(gid)

    def move(self, gid: int, old: int, new: int) -> None:
        if gid in self.pair_of:
            src, _ = self._remove(gid)
            if src != new:
                self._add(gid, (src, new))
        else:
            self._add(gid, (old, new))

    def actual_partition_to_move(self, gid: int, old: int, new: int) -> int:
        of_topic = self.by_topic.get(self.layout.topic_of[gid])
        if of_topic is None:
            return gid
        if gid in self.pair_of:
            old = self.pair_of[gid][0]
        reverse = of_topic.get((new, old))
        return gid if reverse is None else reverse.first(self.layout)

    def is_sticky(self) -> bool:
        """isSticky/hasCycles: Kafka only fails on two-member cycles (A->B and B->A in one topic)."""
        return not any((b, a) in pairs for pairs in self.by_topic.values() for a, b in pairs)


class _GeneralAssignment:
    def __init__(self, prepared: _Prepared) -> None:
        self.prepared = prepared
        layout = prepared.layout
        self.layout = layout
        n_members = len(prepared.members)
        self.subs = prepared.subscriptions  # consumer2AllPotentialTopics
        # topic2AllPotentialConsumers: only its sizes matter (the members themselves are found by class)
        self.potential_members = [0] * len(layout.topics)
        for topics in self.subs:
            for t in topics:
                self.potential_members[t] += 1
        self.max_size = [sum(layout.counts[t] for t in topics) for topics in self.subs]
        self.current = [list(owned) for owned in prepared.owned]  # currentAssignment
        self.owner = array("i", [-1]) * layout.total  # currentPartitionConsumer
        for me, owned in enumerate(self.current):
            for g in owned:
                self.owner[g] = me
        self.sizes = [0] * n_members
        self.participating = [True] * n_members
        self.revocation_required = False
        self.movements = _PartitionMovements(layout)
        # sortedAllPartitions: topics with fewer potential members first, then by name
        self.sorted_topics = sorted(
            range(len(layout.topics)), key=lambda t: (self.potential_members[t], layout.topics[t])
        )
        self.topic_classes: list[list[_MemberClass]] = [[] for _ in layout.topics]
        self.size_counts: dict[int, int] = {}
        self.member_class: list[_MemberClass] = []
        self.held: list[dict[int, int]] | None = None  # member -> topic -> partitions held (for isBalanced)
        self.keep_snapshot = False
        self.snapshot: tuple[list[list[int]], array] | None = None  # before the reassignment phase

    def build(self) -> list[list[int]]:
        previous = self._previous_assignment()
        self._assign_owned_partitions()
        layout, owner = self.layout, self.owner
        sorted_all = list(
            chain.from_iterable(range(layout.offsets[t], layout.offsets[t + 1]) for t in self.sorted_topics)
        )
        unassigned = [g for g in sorted_all if owner[g] < 0]
        self._balance(previous, sorted_all, unassigned)
        return self.current

    def _previous_assignment(self) -> dict[int, tuple[int, int]]:
        """prepopulateCurrentAssignments: what members of older generations claim (partition -> (member,
        generation), the newest claim wins), used to move partitions back to them when it helps balance."""
        p = self.prepared
        layout = self.layout
        previous: dict[int, tuple[int, int]] = {}
        for me, member in enumerate(p.members):
            generation = p.generations[me]
            if generation >= p.max_generation:
                continue
            for topic, partition in member.owned:
                rank = layout.rank.get(topic)
                if rank is None or not 0 <= partition < layout.counts[rank]:
                    continue
                gid = layout.offsets[rank] + partition
                known = previous.get(gid)
                if known is None or generation > known[1]:
                    previous[gid] = (me, generation)
        return previous

    def _assign_owned_partitions(self) -> None:
        """assignOwnedPartitions: drop owned partitions of topics the member no longer subscribes to, or
        (rack-aware) on no replica of its rack; either means something must be revoked."""
        racks, topic_of, owner = self.prepared.racks, self.layout.topic_of, self.owner
        n_topics = len(self.layout.topics)
        for me, owned in enumerate(self.current):
            subs = self.subs[me]
            if len(subs) == n_topics and not racks.active:
                keep = owned
            else:
                keep = [
                    g for g in owned if topic_of[g] in subs and not (racks.active and racks.mismatch(me, g))
                ]
            if len(keep) != len(owned):
                self.revocation_required = True
                for g in set(owned).difference(keep):
                    owner[g] = -1
                self.current[me] = keep
            self.sizes[me] = len(keep)

    # -- balance -----------------------------------------------------------------------------------------

    def _balance(
        self, previous: dict[int, tuple[int, int]], sorted_all: list[int], unassigned: list[int]
    ) -> None:
        initializing = max(self.sizes) == 0
        self._build_classes()
        if self.prepared.racks.active:
            left = self._maybe_assign(unassigned, rack_aware=True)
            self._maybe_assign(left, rack_aware=False)
        else:
            self._maybe_assign(unassigned, rack_aware=False)

        # only partitions of topics with 2+ potential members, and members that can gain or lose, take part
        topic_of = self.layout.topic_of
        movable_topic = [n >= 2 for n in self.potential_members]
        reassignable = [g for g in sorted_all if movable_topic[topic_of[g]]]
        unassigned = [g for g in unassigned if movable_topic[topic_of[g]]]
        for me, subs in enumerate(self.subs):
            if self.sizes[me] >= self.max_size[me] and not any(movable_topic[t] for t in subs):
                self.participating[me] = False
        for me, size in enumerate(self.sizes):
            if self.participating[me]:
                self.size_counts[size] = self.size_counts.get(size, 0) + 1

        self.keep_snapshot = not initializing  # taken at the first move: nothing changes before it
        if not self.revocation_required:
            self._perform_reassignments(unassigned, previous)
        performed = self._perform_reassignments(reassignable, previous)
        # keep the result only if it is more balanced than before the reassignment phase
        if not initializing and performed:
            before_current, before_owner = self.snapshot
            before = [len(before_current[m]) for m in range(len(self.sizes)) if self.participating[m]]
            after = [self.sizes[m] for m in range(len(self.sizes)) if self.participating[m]]
            if _balance_score(after) >= _balance_score(before):
                self.current = before_current
                self.owner = before_owner

    def _build_classes(self) -> None:
        racks = self.prepared.racks
        by_key: dict[tuple[frozenset[int], str | None], _MemberClass] = {}
        for me, subs in enumerate(self.subs):
            rack = racks.consumer_rack[me] if racks.active else None
            cls = by_key.get((subs, rack))
            if cls is None:
                cls = by_key[(subs, rack)] = _MemberClass(subs, rack)
                for t in subs:
                    self.topic_classes[t].append(cls)
            cls.heap.append((self.sizes[me], self.prepared.member_ids[me], me))
            self.member_class.append(cls)
        for cls in by_key.values():
            heapq.heapify(cls.heap)

    def _maybe_assign(self, partitions: list[int], *, rack_aware: bool) -> list[int]:
        """maybeAssign/maybeAssignPartition: each partition to the least loaded member (ties: member id)
        subscribed to its topic (and, rack-aware, with no rack or a replica on its rack). Returns those it
        could not place."""
        topic_of, topic_classes = self.layout.topic_of, self.topic_classes
        current, owner, sizes = self.current, self.owner, self.sizes
        partition_racks = self.prepared.racks.partition_racks
        left: list[int] = []
        heapreplace = heapq.heapreplace
        for g in partitions:
            classes = topic_classes[topic_of[g]]
            if rack_aware:
                racks = partition_racks[g]
                classes = [c for c in classes if c.rack is None or c.rack in racks]
            if not classes:
                left.append(g)
                continue
            heap = classes[0].heap if len(classes) == 1 else min((c.heap for c in classes), key=_head)
            size, member_id, me = heap[0]
            heapreplace(heap, (size + 1, member_id, me))
            current[me].append(g)
            owner[g] = me
            sizes[me] = size + 1
        return left

    def _first_member_for(self, topic: int) -> tuple[int, str, int]:
        """The first member of sortedCurrentSubscriptions subscribed to `topic`: (size, id, member). The
        heaps are lazy here: entries whose size is out of date are dropped when they reach the head."""
        best = None
        sizes, participating = self.sizes, self.participating
        for cls in self.topic_classes[topic]:
            heap = cls.heap
            while heap and (heap[0][0] != sizes[heap[0][2]] or not participating[heap[0][2]]):
                heapq.heappop(heap)
            if heap and (best is None or heap[0] < best):
                best = heap[0]
        if best is None:
            raise AssignmentError("sticky assignor: no member left for a reassignable partition")
        return best

    def _is_balanced(self) -> bool:
        """isBalanced: sizes differ by at most one, or no member could take a partition of one of its
        topics from a member holding 2+ more partitions."""
        if not self.size_counts or min(self.size_counts) >= max(self.size_counts) - 1:
            return True
        held = self._held()
        sizes, participating = self.sizes, self.participating
        largest_holder: dict[int, int] = {}
        for me, topics in enumerate(held):
            if participating[me]:
                size = sizes[me]
                for t in topics:
                    if size > largest_holder.get(t, -1):
                        largest_holder[t] = size
        for me, subs in enumerate(self.subs):
            size = sizes[me]
            if not participating[me] or size == self.max_size[me]:
                continue
            for t in subs:
                if largest_holder.get(t, -1) > size + 1:
                    return False
        return True

    def _held(self) -> list[dict[int, int]]:
        if self.held is None:
            topic_of = self.layout.topic_of
            self.held = []
            for owned in self.current:
                counts: dict[int, int] = {}
                for g in owned:
                    t = topic_of[g]
                    counts[t] = counts.get(t, 0) + 1
                self.held.append(counts)
        return self.held

    def _perform_reassignments(self, partitions: list[int], previous: dict[int, tuple[int, int]]) -> bool:
        """performReassignments: pass over the partitions while unbalanced, moving a partition back to its
        previous-generation owner or to the least loaded member when that is 2+ partitions lighter."""
        performed = False
        owner, sizes, topic_of = self.owner, self.sizes, self.layout.topic_of
        while True:
            modified = False
            for g in partitions:
                if self._is_balanced():
                    break
                me = owner[g]
                topic = topic_of[g]
                before = previous.get(g)
                # (Kafka would also move it to a previous owner that no longer subscribes to the topic, or
                # fail on one that does not take part; neither is a valid choice, so those are skipped.)
                if (
                    before is not None
                    and self.participating[before[0]]
                    and topic in self.subs[before[0]]
                    and sizes[me] > sizes[before[0]] + 1
                ):
                    self._reassign(g, before[0])
                    performed = modified = True
                    continue
                # (Kafka first looks among members on the partition's racks, but with the same test and
                # the same choice of target, so the rack-aware branch cannot change the outcome.)
                lightest = self._first_member_for(topic)
                if sizes[me] > lightest[0] + 1:
                    self._reassign(g, lightest[2])
                    performed = modified = True
            if not modified:
                return performed

    def _reassign(self, gid: int, new: int) -> None:
        """reassignPartition + processPartitionMovement."""
        if self.keep_snapshot and self.snapshot is None:
            self.snapshot = ([list(c) for c in self.current], array("i", self.owner))
        gid = self.movements.actual_partition_to_move(gid, self.owner[gid], new)
        old = self.owner[gid]
        self.movements.move(gid, old, new)
        self.current[old].remove(gid)
        self.current[new].append(gid)
        self.owner[gid] = new
        for me, delta in ((old, -1), (new, 1)):
            size = self.sizes[me]
            self.size_counts[size] -= 1
            if not self.size_counts[size]:
                del self.size_counts[size]
            self.size_counts[size + delta] = self.size_counts.get(size + delta, 0) + 1
            self.sizes[me] = size + delta
        for me in (old, new):
            heapq.heappush(self.member_class[me].heap, (self.sizes[me], self.prepared.member_ids[me], me))
        if self.held is not None:
            topic = self.layout.topic_of[gid]
            held_old = self.held[old]
            held_old[topic] -= 1
            if not held_old[topic]:
                del held_old[topic]
            self.held[new][topic] = self.held[new].get(topic, 0) + 1


def _head(heap: list[tuple[int, str, int]]) -> tuple[int, str, int]:
    return heap[0]


def _balance_score(sizes: list[int]) -> int:
    """getBalanceScore: sum over member pairs of |size difference| (computed on sorted sizes)."""
    ordered = sorted(sizes)
    n = len(ordered)
    return sum(size * (2 * i - n + 1) for i, size in enumerate(ordered))


def _transfers(prepared: _Prepared, owner: array) -> dict[int, int]:
    """CooperativeStickyAssignor.computePartitionsTransferringOwnership: partitions now assigned to a member
    that did not own them and revoked from a member that did."""
    layout = prepared.layout
    rank_get, offsets, counts = layout.rank.get, layout.offsets, layout.counts
    kept = bytearray(layout.total)
    moved: list[int] = []
    for me, member in enumerate(prepared.members):
        for topic, partition in member.owned:
            rank = rank_get(topic)
            if rank is None or not 0 <= partition < counts[rank]:
                continue
            gid = offsets[rank] + partition
            new = owner[gid]
            if new == me:
                kept[gid] = 1
            elif new >= 0:
                moved.append(gid)
    return {g: owner[g] for g in moved if not kept[g]}
