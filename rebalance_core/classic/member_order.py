"""Iteration order of the coordinator's map of member ids, which picks a classic group's leader.

When the leader leaves, Kafka's coordinator makes the first key of its members map the leader
(`ClassicGroup.remove`: `members.keySet().iterator().next()`; Scala `GroupMetadata.remove`:
`members.keys.headOption`), and a leader that did not rejoin is replaced by the first member in that order
that did (`maybeElectNewJoinedLeader`). That order is a hash table's, not the join order:

- `java.util.HashMap<String, ?>` (Java group coordinator, 3.6+; default in 4.0): buckets by
  `(h ^ (h >>> 16)) & (capacity - 1)` with `h = String.hashCode`, iterated from bucket 0 up, a bucket in
  insertion order (`putVal` appends); capacity 16, doubled once the size exceeds 0.75 x capacity after an
  insertion, or when a bucket reaches 9 entries in a table smaller than 64 (`treeifyBin`); a bucket of 8
  or more entries in a larger table may be a tree, whose order is not modelled (unknown). Removal never
  shrinks the table, and a resize keeps each bucket's order.
- Scala 2.13 `mutable.HashMap` (the Scala coordinator of Kafka 2.6-3.9, built with Scala 2.13 by
  default): the same bucket index, iterated from bucket 0 up, but a bucket is kept sorted by the improved
  hash (signed), equal hashes in insertion order; capacity 16, doubled *before* an insertion that would
  make the size reach 0.75 x capacity (`put0`: `contentSize + 1 >= threshold`).
- Scala 2.11/2.12 `mutable.HashMap` over `HashTable` (Kafka up to 2.5, and the _2.12 builds): bucket =
  the top log2(capacity) bits of `rotateRight(byteswap32(h), 4)` (the seed is fixed when the table is
  created at 16), iterated from the LAST bucket down; a new entry goes to the head of its bucket and every
  resize (size > 0.75 x capacity after an insertion) reverses each bucket.

The order depends on the table's capacity, hence on the largest membership the map ever had, and within
a bucket on the order of insertions. Where the model does not know the map's history (a log that starts
mid-life: the capacity may be larger than the current membership needs; members whose insertions no line
shows), `first` answers only when every possible history gives the same first key, else None: the leader
is then not asserted. Likewise when the implementation was not stated (ReplaySettings.coordinator_member_map
None) and the lines seen so far do not fix it: a Scala coordinator of 2.4-3.9 may run either the _2.12 or
the _2.13 build, so the map is followed under both and `first` answers only where they agree.
"""

from __future__ import annotations

from collections.abc import Iterable

from rebalance_core.java_hash import java_int, java_spread, java_string_hash
from rebalance_core.kafka_logs.patterns import release_range

JAVA = "java"
SCALA_2_13 = "scala-2.13"
SCALA_2_12 = "scala-2.12"
IMPLEMENTATIONS = (JAVA, SCALA_2_13, SCALA_2_12)

_INITIAL_CAPACITY = 16
_MAX_CAPACITY = 1 << 30
_MASK = 0xFFFFFFFF


def _byteswap32(v: int) -> int:
    """scala.util.hashing.byteswap32."""
    hc = (v * 0x9E3775CD) & _MASK
    hc = int.from_bytes(hc.to_bytes(4, "big"), "little")
    return (hc * 0x9E3775CD) & _MASK


def _scala212_improved(h: int) -> int:
    """HashTable.improve(hcode, seed) with the seed of a table created at 16 (bitCount(15) = 4)."""
    i = _byteswap32(h)
    return ((i >> 4) | (i << 28)) & _MASK


def _bucket(impl: str, h: int, capacity: int) -> int:
    if impl == SCALA_2_12:
        return _scala212_improved(h) >> (32 - capacity.bit_length() + 1)
    return java_spread(h) & (capacity - 1)


def _grown(impl: str, size_before: int, capacity: int) -> tuple[int, int]:
    """(capacity when the insertion lands, capacity after it) for inserting into a map of `size_before`."""
    if impl == SCALA_2_13:
        if size_before + 1 >= int(capacity * 0.75) and capacity < _MAX_CAPACITY:
            capacity *= 2  # put0 grows first
        return capacity, capacity
    threshold = int(capacity * 0.75) if impl == JAVA else capacity * 750 // 1000
    after = capacity * 2 if size_before + 1 > threshold and capacity < _MAX_CAPACITY else capacity
    return capacity, after


def release_member_map(versions: str) -> str | None:
    """The Scala members map a coordinator line implies by the releases that print it (`versions` of its
    pattern row: "2.1-3.9", "0.9-0.10.2", "3.0+", "2.8"): Scala 2.11/2.12 HashTable's order (scala-2.12)
    for a wording only releases up to 2.3 print, which Kafka built for Scala 2.10-2.12 only (Scala 2.13
    builds start with 2.4: gradle/dependencies.gradle `defaultScalaVersions`). From 2.4 on, official
    builds exist for both 2.12 and 2.13 (the default, gradle.properties `scalaVersion`, is 2.12 up to 2.5
    and 2.13 from 2.6; the broker's lines do not show which one runs): None, nor does a wording printed
    up to the newest release ("+"): 4.0's coordinator is the Java one."""
    releases = release_range(versions)
    if releases is None or releases[1] is None:
        return None
    return SCALA_2_12 if releases[1] < (2, 4) else None


class MemberMapOrder:
    """The keys of one coordinator members map and what is known of its history (module docstring).

    `capacity` is exact when `capacity_known`, else the least the table can have. Keys carry the number
    of their insertion batch: keys of one batch were inserted in an order no line shows (the members a
    log starts with, members promoted together). Scala 2.12 also needs each key's capacity at insertion.
    """

    def __init__(self, impl: str | None = SCALA_2_13):
        """`impl` None: not stated by the user; Scala 2.13 or 2.12 (`alternative`) until a coordinator line
        tells (`follow_release`, `use`)."""
        if impl is not None and impl not in IMPLEMENTATIONS:
            raise ValueError(f"unknown member map implementation {impl!r}")
        self.impl = impl or SCALA_2_13
        self.from_release = impl is None
        # the same map under the other Scala build while the lines leave the build open (`first` needs both)
        self.alternative: MemberMapOrder | None = MemberMapOrder(SCALA_2_12) if impl is None else None
        self.capacity = _INITIAL_CAPACITY
        self.capacity_known = False
        self.batch: dict[str, int] = {}  # key -> insertion batch (dict order = insertion order)
        self.inserted_at: dict[str, int | None] = {}  # key -> capacity when inserted (None: unknown)
        self.unhashed: set[str] = set()  # stand-ins for keys whose real id (hash) is not known yet
        self._next_batch = 1

    # ----------------------------------------------------------------------------------- changes
    def follow_release(self, impl: str) -> None:
        """A coordinator line printed only by releases whose every build has `impl` (`release_member_map`):
        taken unless the user stated the implementation or a Java coordinator's line was seen."""
        if self.from_release and self.impl != JAVA:
            self.use(impl)

    def use(self, impl: str) -> None:
        """The coordinator's lines show the implementation: the map followed under it is kept (its history
        too); a map followed under another one loses its history."""
        if self.alternative is not None and self.alternative.impl == impl:
            kept = self.alternative
            self.impl, self.capacity, self.capacity_known = kept.impl, kept.capacity, kept.capacity_known
            self.batch, self.inserted_at, self.unhashed = kept.batch, kept.inserted_at, kept.unhashed
            self._next_batch = kept._next_batch
        elif impl != self.impl:
            self.impl = impl
            self.forget_history()
        self.alternative = None

    def fresh(self, keys: Iterable[str] = ()) -> None:
        """A new map (group created or loaded), holding `keys` inserted in an unknown order."""
        keys = list(keys)
        if self.alternative is not None:
            self.alternative.fresh(keys)
        self.capacity, self.capacity_known = _INITIAL_CAPACITY, True
        self.batch, self.inserted_at, self.unhashed = {}, {}, set()
        for key in keys:
            self.put(key, with_previous=True)
        if len(keys) > 1 and self.impl == SCALA_2_12:
            for key in keys:  # the resizes among them depend on their order
                self.inserted_at[key] = None

    def put(self, key: str, *, with_previous: bool = False, unhashed: bool = False) -> None:
        """Insert `key` (a no-op for a present key, as in all three maps). `with_previous`: in the same
        batch as the previous insertion (their relative order unknown)."""
        if self.alternative is not None:
            self.alternative.put(key, with_previous=with_previous, unhashed=unhashed)
        if key in self.batch:
            return
        at = self.capacity
        if self.impl == JAVA and self.capacity_known and not unhashed and at < 64:
            # putVal appends, then treeifyBin resizes a small table whose bucket now holds 9 entries
            bucket = _bucket(JAVA, java_string_hash(key), at)
            chain = 1 + sum(1 for k in self._hashed() if _bucket(JAVA, java_string_hash(k), at) == bucket)
            if chain >= 9:
                self.capacity *= 2
        landed, self.capacity = _grown(self.impl, len(self.batch), self.capacity)
        at = landed if self.impl == SCALA_2_13 else at
        if not (with_previous and self.batch):
            self._next_batch += 1
        self.batch[key] = self._next_batch
        self.inserted_at[key] = at if self.capacity_known else None
        if unhashed:
            self.unhashed.add(key)

    def remove(self, key: str) -> None:
        if self.alternative is not None:
            self.alternative.remove(key)
        self.batch.pop(key, None)
        self.inserted_at.pop(key, None)
        self.unhashed.discard(key)

    def rename(self, stand_in: str, key: str) -> None:
        """The stand-in inserted for an unknown id is `key` (same insertion)."""
        if self.alternative is not None:
            self.alternative.rename(stand_in, key)
        if stand_in not in self.batch:
            return
        self.batch = {(key if k == stand_in else k): b for k, b in self.batch.items()}
        self.inserted_at[key] = self.inserted_at.pop(stand_in)
        self.unhashed.discard(stand_in)

    def forget_history(self) -> None:
        """The map may have changed in ways no line shows: keep the keys, not their history."""
        if self.alternative is not None:
            self.alternative.forget_history()
        self.capacity_known = False
        for key in self.batch:
            self.batch[key] = 0
            self.inserted_at[key] = None

    # ------------------------------------------------------------------------------------ queries
    def keys(self) -> list[str]:
        return list(self.batch)

    def first(self, among: Iterable[str] | None = None) -> str | None:
        """The first key (of `among`, default all) in the map's iteration order; None when no key, or
        when the order is not known (under either Scala build, while the build is open: `alternative`)."""
        among = None if among is None else set(among)
        answer = self._first_of(among)
        if self.alternative is not None and self.alternative.first(among) != answer:
            return None
        return answer

    def _first_of(self, among: set[str] | None) -> str | None:
        keys = [k for k in self.batch if among is None or k in among]
        if not keys or self.unhashed:
            return None
        if self.capacity_known:
            capacities = [self.capacity]
        else:
            capacities, c = [], self.capacity
            while c <= _MAX_CAPACITY:
                capacities.append(c)
                c *= 2
        answer = None
        for capacity in capacities:
            first = self._first_at(capacity, keys)
            if first is None or (answer is not None and first != answer):
                return None
            answer = first
        return answer

    def _hashed(self) -> list[str]:
        return [k for k in self.batch if k not in self.unhashed]

    def _first_at(self, capacity: int, keys: list[str]) -> str | None:
        hashes = {k: java_string_hash(k) for k in keys}
        buckets = {k: _bucket(self.impl, hashes[k], capacity) for k in keys}
        edge = (max if self.impl == SCALA_2_12 else min)(buckets.values())
        in_bucket = [k for k in keys if buckets[k] == edge]
        if len(in_bucket) == 1:
            return in_bucket[0]
        if self.impl == SCALA_2_13:
            ranked = sorted(in_bucket, key=lambda k: (java_int(java_spread(hashes[k])), self.batch[k]))
            a, b = ranked[0], ranked[1]
            if java_spread(hashes[a]) == java_spread(hashes[b]) and self.batch[a] == self.batch[b]:
                return None
            return a
        if self.impl == JAVA:
            whole_bucket = [k for k in self.batch if _bucket(JAVA, java_string_hash(k), capacity) == edge]
            if capacity >= 64 and len(whole_bucket) >= 8:
                return None  # possibly a tree bin
            ranked = sorted(in_bucket, key=lambda k: self.batch[k])  # older first
            return None if self.batch[ranked[0]] == self.batch[ranked[1]] else ranked[0]
        # Scala 2.12: a newer key precedes an older one unless an odd number of resizes came after it
        if not self.capacity_known or any(self.inserted_at[k] is None for k in in_bucket):
            return None
        if len({self.batch[k] for k in in_bucket}) < len(in_bucket):
            return None

        def before(x: str, y: str) -> bool:
            older, newer = (x, y) if self.batch[x] < self.batch[y] else (y, x)
            flips = (capacity // self.inserted_at[newer]).bit_length() - 1
            return (newer if flips % 2 == 0 else older) == x

        best = in_bucket[0]
        for k in in_bucket[1:]:
            if before(k, best):
                best = k
        return best

    def __eq__(self, other: object) -> bool:
        return isinstance(other, MemberMapOrder) and self.snapshot() == other.snapshot()

    # ----------------------------------------------------------------------------------- snapshot
    def snapshot(self) -> dict:
        return {
            "impl": self.impl,
            "capacity": self.capacity,
            "capacity_known": self.capacity_known,
            "keys": [[k, self.batch[k], self.inserted_at[k]] for k in self.batch],
            "unhashed": sorted(self.unhashed),
            "next_batch": self._next_batch,
            "from_release": self.from_release,
            "alternative": self.alternative.snapshot() if self.alternative is not None else None,
        }

    @classmethod
    def from_snapshot(cls, state: dict) -> MemberMapOrder:
        order = cls(state["impl"])
        order.capacity, order.capacity_known = state["capacity"], state["capacity_known"]
        order.batch = {k: b for k, b, _ in state["keys"]}
        order.inserted_at = {k: c for k, _, c in state["keys"]}
        order.unhashed = set(state["unhashed"])
        order._next_batch = state["next_batch"]
        order.from_release = state.get("from_release", False)
        alternative = state.get("alternative")
        if alternative is not None:
            order.alternative = cls.from_snapshot(alternative)
        elif order.from_release and order.impl != JAVA and "alternative" not in state:
            # written before the other build was followed: its map holds the same keys, history unknown
            order.alternative = cls(SCALA_2_12 if order.impl == SCALA_2_13 else SCALA_2_13)
            order.alternative.fresh(order.batch)
            order.alternative.forget_history()
        return order
