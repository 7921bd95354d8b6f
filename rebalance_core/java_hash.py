"""Java's `String.hashCode`, which several of Kafka's choices depend on: the `__consumer_offsets`
partition of a group (`GroupMetadataManager.partitionFor`), and the iteration order of the `HashMap`s
and `HashSet`s the coordinator and the assignors walk (member_order, assignors/uniform, assignors/sticky,
connect). One implementation for all of them."""

from __future__ import annotations

import functools

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
