"""Java's `String.hashCode` and the iteration order of `java.util.HashMap` / `HashSet`, which several of
Kafka's choices depend on: the `__consumer_offsets` partition of a group
(`GroupMetadataManager.partitionFor`), and the order in which the coordinator and the assignors walk
their maps and sets (assignors/uniform, assignors/sticky, classic/connect; classic/member_order models
the coordinator's members map, Java's and Scala's, over its whole history). One implementation for all
of them.

A HashMap iterates its table from bucket 0 up, a bucket in insertion order (`putVal` appends; a resize
keeps each bucket's order); the bucket is `HashMap.hash(key) & (capacity - 1)`. Bins treeified after 8
collisions in a table of 64 or more are not modelled here.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Sequence
from typing import TypeVar

T = TypeVar("T")

_MASK32 = 0xFFFFFFFF


@functools.lru_cache(maxsize=1 << 16)
def java_string_hash(text: str) -> int:
    """`String.hashCode` (31 * h + c over the UTF-16 code units), as an unsigned 32-bit int."""
    h = 0
    if text.isascii():
        for unit in text.encode("ascii"):
            h = 31 * h + unit
    else:
        data = text.encode("utf-16-be", "surrogatepass")
        for i in range(0, len(data), 2):
            h = 31 * h + (data[i] << 8 | data[i + 1])
    return h & _MASK32


def java_int(value: int) -> int:
    """An unsigned 32-bit value as Java's signed `int`."""
    return value - (1 << 32) if value >= 1 << 31 else value


def java_spread(h: int) -> int:
    """`HashMap.hash` (and Scala 2.13's `improveHash`): h ^ (h >>> 16), the bits that pick the bucket."""
    return (h ^ (h >> 16)) & _MASK32


def table_size_after_puts(count: int) -> int:
    """Table size of a default `new HashMap<>()` after `count` insertions (load factor 0.75)."""
    size = 16
    while count > size * 3 // 4:
        size *= 2
    return size


def table_size_of_copy(count: int) -> int:
    """Table size of `new HashSet<>(collection)` (Java 17: capacity max(size / .75 + 1, 16))."""
    wanted = max(count * 4 // 3 + 1, 16)
    size = 1
    while size < wanted:
        size *= 2
    return size


def java_hash_order(items: Sequence[T], hashes: Sequence[int], table_size: int) -> list[T]:
    """The iteration order of a Java `HashMap`/`HashSet` holding `items`: by bucket, where the bucket
    is `(h ^ h >>> 16) & (table_size - 1)`; items sharing a bucket keep their order in `items`."""
    mask = table_size - 1
    buckets = [java_spread(h) & mask for h in hashes]
    return [items[i] for i in sorted(range(len(items)), key=buckets.__getitem__)]


def java_string_order(keys: Iterable[str], capacity: int | None = None) -> list[str]:
    """Iteration order of a java.util.HashMap / HashSet filled with String `keys` in the given order
    (a repeated key keeps its first place). Default capacity: the table after puts one by one, as
    Collectors.toMap does (`table_size_after_puts`)."""
    keys = list(dict.fromkeys(keys))
    if capacity is None:
        capacity = table_size_after_puts(len(keys))
    return java_hash_order(keys, [java_string_hash(key) for key in keys], capacity)
