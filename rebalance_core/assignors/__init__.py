"""Kafka's partition assignors, behind one interface (`base.Assignor`).

Client side (classic protocol, the group leader runs them): range, roundrobin, sticky,
cooperative-sticky. Broker side (KIP-848 consumer protocol): uniform, server-range.
"""

from __future__ import annotations

from rebalance_core.assignors.base import (
    AssignmentError,
    Assignor,
    GroupAssignment,
    GroupSpec,
    MemberSubscription,
    RebalanceProtocol,
)

# name -> "module:Class"; imported on first use so that one assignor's import cost is not everyone's.
_REGISTRY: dict[str, str] = {
    "range": "rebalance_core.assignors.range:RangeAssignor",
    "roundrobin": "rebalance_core.assignors.roundrobin:RoundRobinAssignor",
    "sticky": "rebalance_core.assignors.sticky:StickyAssignor",
    "cooperative-sticky": "rebalance_core.assignors.sticky:CooperativeStickyAssignor",
    "uniform": "rebalance_core.assignors.uniform:UniformAssignor",
    "server-range": "rebalance_core.assignors.server_range:ServerRangeAssignor",
}

ASSIGNOR_NAMES = tuple(_REGISTRY)
# KIP-848: assignors the broker runs; they exist only in the consumer group protocol.
SERVER_ASSIGNORS = ("uniform", "server-range")
# the classic protocol's assignors, which the group leader runs (ConsumerPartitionAssignor)
CLIENT_ASSIGNORS = tuple(name for name in ASSIGNOR_NAMES if name not in SERVER_ASSIGNORS)


# name -> (first Kafka release of today's algorithm, the older clients' implementation): the sticky
# assignors got the all-subscriptions-equal algorithm in 2.6 (AbstractStickyAssignor.constrainedAssign),
# which breaks ties differently from the one algorithm 2.3-2.5 clients run
_BEFORE: dict[str, tuple[tuple[int, int], str]] = {
    "sticky": ((2, 6), "rebalance_core.assignors.sticky_2_5:StickyAssignor25"),
    "cooperative-sticky": ((2, 6), "rebalance_core.assignors.sticky_2_5:CooperativeStickyAssignor25"),
}


def kafka_release(version: str) -> tuple[int, int]:
    """'2.5' / '2.5.1' -> (2, 5); AssignmentError for anything else."""
    parts = version.split(".")
    if len(parts) < 2 or not all(p.isdigit() for p in parts[:2]):
        raise AssignmentError(f"not a Kafka release: {version!r} (like 2.5 or 3.8.0)")
    return int(parts[0]), int(parts[1])


def get_assignor(name: str, client_version: str | None = None) -> Assignor:
    """An assignor by its Kafka name, as clients of `client_version` (a Kafka release; None: today's, 3.8)
    run it; AssignmentError for an unknown one."""
    older = _BEFORE.get(name)
    if older is not None and client_version is not None and kafka_release(client_version) < older[0]:
        return _load(older[1])
    try:
        target = _REGISTRY[name]
    except KeyError:
        raise AssignmentError(f"unknown assignor {name!r} (known: {', '.join(ASSIGNOR_NAMES)})") from None
    return _load(target)


def _load(target: str) -> Assignor:
    import importlib

    module_name, class_name = target.split(":")
    return getattr(importlib.import_module(module_name), class_name)()


__all__ = [
    "ASSIGNOR_NAMES",
    "AssignmentError",
    "CLIENT_ASSIGNORS",
    "Assignor",
    "GroupAssignment",
    "GroupSpec",
    "MemberSubscription",
    "RebalanceProtocol",
    "SERVER_ASSIGNORS",
    "get_assignor",
    "kafka_release",
]
