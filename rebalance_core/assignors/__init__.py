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


def get_assignor(name: str) -> Assignor:
    """An assignor by its Kafka name; AssignmentError for an unknown one."""
    try:
        target = _REGISTRY[name]
    except KeyError:
        raise AssignmentError(f"unknown assignor {name!r} (known: {', '.join(ASSIGNOR_NAMES)})") from None
    import importlib

    module_name, class_name = target.split(":")
    return getattr(importlib.import_module(module_name), class_name)()


__all__ = [
    "ASSIGNOR_NAMES",
    "AssignmentError",
    "Assignor",
    "GroupAssignment",
    "GroupSpec",
    "MemberSubscription",
    "RebalanceProtocol",
    "SERVER_ASSIGNORS",
    "get_assignor",
]
