"""Which broker coordinates a group, checked against Kafka's placement rule.

A group's coordinator is the leader of `__consumer_offsets-P` with
`P = Utils.abs(groupId.hashCode()) % offsets.topic.num.partitions` (GroupMetadataManager.partitionFor,
Scala 0.9-3.9; GroupCoordinatorService.partitionFor, Java 3.6+). Broker lines print the partition
(`(__consumer_offsets-P)`, event attribute `offsets_partition`); `check_placement` compares every logged
P with the rule, with the partition count configured or, when it is not, inferred as the smallest count
consistent with every group seen, and flags the groups that disagree (a log of another cluster under
this cluster's name, a group id rewritten by the pipeline, a wrong partition count).

Pure: no I/O, no clock.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from rebalance_core.kafka_logs.writer_lines import partition_for

# offsets.topic.num.partitions can be set at most this high for the search (Kafka's default is 50).
MAX_OFFSETS_PARTITIONS = 1000
KAFKA_DEFAULT_OFFSETS_PARTITIONS = 50


@dataclass(frozen=True)
class PartitionCount:
    count: int | None
    source: str  # configured | inferred (all groups agree) | best_fit (most groups agree) | unknown


def infer_partition_count(observed: Mapping[str, int], limit: int = MAX_OFFSETS_PARTITIONS) -> PartitionCount:
    """The smallest offsets.topic.num.partitions under which every group's observed partition is its
    `partitionFor`; when none is, the count most groups agree with (Kafka's default 50 on a tie, else
    the smallest). `observed`: group id -> its logged __consumer_offsets partition."""
    if not observed:
        return PartitionCount(None, "unknown")
    groups = list(observed.items())
    lowest = max(p for _, p in groups) + 1
    for n in range(lowest, limit + 1):
        if all(partition_for(g, n) == p for g, p in groups):
            return PartitionCount(n, "inferred")
    best, best_agree = None, 0
    for n in range(lowest, limit + 1):
        agree = sum(1 for g, p in groups if partition_for(g, n) == p)
        if agree > best_agree or (agree == best_agree and n == KAFKA_DEFAULT_OFFSETS_PARTITIONS):
            best, best_agree = n, agree
    return PartitionCount(best, "best_fit") if best_agree else PartitionCount(None, "unknown")


def check_placement(
    observations: Iterable[tuple[str, int]], configured: int | None = None
) -> tuple[PartitionCount, list[dict[str, Any]]]:
    """One row per group: the partition(s) its broker lines name, the one Kafka's rule gives, agreement.
    `observations`: (group id, logged partition) pairs, repeats allowed."""
    by_group: dict[str, set[int]] = {}
    for group_id, partition in observations:
        by_group.setdefault(group_id, set()).add(int(partition))
    single = {g: next(iter(ps)) for g, ps in by_group.items() if len(ps) == 1}
    count = PartitionCount(configured, "configured") if configured else infer_partition_count(single)
    rows = []
    for group_id in sorted(by_group):
        seen = sorted(by_group[group_id])
        expected = partition_for(group_id, count.count) if count.count else None
        if len(seen) > 1:
            agrees, detail = False, f"broker lines name {len(seen)} partitions: {seen}"
        elif expected is None:
            agrees, detail = None, "offsets.topic.num.partitions unknown"
        else:
            agrees = seen[0] == expected
            detail = (
                None
                if agrees
                else (
                    f"logged __consumer_offsets-{seen[0]}, Kafka places the group in __consumer_offsets-{expected}"
                    f" with {count.count} partitions ({count.source})"
                )
            )
        rows.append(
            {
                "group_id": group_id,
                "offsets_partitions_logged": seen,
                "offsets_partition_expected": expected,
                "offsets_topic_partitions": count.count,
                "partitions_source": count.source,
                "agrees": agrees,
                "detail": detail,
            }
        )
    return count, rows
