"""The pieces every log writer shares (`writer` and its wordings `writer_broker`, `writer_client`,
`writer_connect` import them; none imports the writer): the two streams a line goes to, the `LogLine`
itself, log4j's timestamp, the hosts and node names Kafka prints, and which removal an event is.

`partition_for` is `GroupMetadataManager.partitionFor` (the group's __consumer_offsets partition, hence
its coordinator); `coordinator_node` is the coordinator's `Node.toString` as `AbstractCoordinator` logs it.
"""

from __future__ import annotations

import functools
import hashlib
import time
from dataclasses import dataclass

from rebalance_core.events import Event
from rebalance_core.java_hash import java_int, java_string_hash
from schemas.events import EventType, RemovalReason

E = EventType
BROKER, CLIENT = "broker", "client"
OFFSETS_TOPIC_PARTITIONS = 50  # offsets.topic.num.partitions default
COORDINATOR_NODE_ID_BASE = 2_147_483_647  # clients address the coordinator as Integer.MAX_VALUE - brokerId


@dataclass(frozen=True, slots=True)
class LogLine:
    ts: int
    stream: str  # BROKER (server.log) | CLIENT (the consumer's log)
    text: str  # one log4j entry; a multi-line message spans several lines; no trailing newline
    event_ids: tuple[str, ...]  # the canonical events this entry renders; (): context Kafka logs around them


@functools.lru_cache(maxsize=65536)
def partition_for(group_id: str, partitions: int = OFFSETS_TOPIC_PARTITIONS) -> int:
    """GroupMetadataManager.partitionFor: Utils.abs(groupId.hashCode) % offsets.topic.num.partitions.
    Utils.abs is Math.abs with Integer.MIN_VALUE -> 0 (not Utils.toPositive's `& 0x7fffffff`, which gives
    another partition for a negative hash: "testtopic-app" is in __consumer_offsets-31, not 17)."""
    h = java_int(java_string_hash(group_id))
    return (0 if h == -(1 << 31) else abs(h)) % partitions


def format_log_ts(ms: int) -> str:
    """log4j's default %d: `2024-11-08 10:02:05,229` (UTC)."""
    seconds, millis = divmod(ms, 1000)
    return f"{_second_text(seconds)},{millis:03d}"


@functools.lru_cache(maxsize=4096)
def _second_text(seconds: int) -> str:
    return time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(seconds))


def broker_id(source: str | None) -> int:
    digits = "".join(ch for ch in (source or "") if ch.isdigit())
    return int(digits) if digits else 0


def client_host(client_id: str | None) -> str:
    digest = hashlib.blake2b((client_id or "").encode(), digest_size=3).digest()
    return "/10.{}.{}.{}".format(*digest)


def coordinator_node(broker: int) -> str:
    """Node.toString of the coordinator as a client knows it."""
    return f"kafka-{broker}:9092 (id: {COORDINATOR_NODE_ID_BASE - broker} rack: null)"


def is_timeout_removal(event: Event) -> bool:
    return (
        event.event_type == E.MEMBER_REMOVED.value and event.reason == RemovalReason.REBALANCE_TIMEOUT.value
    )


def is_pending_sync_removal(event: Event) -> bool:
    return (
        event.event_type == E.MEMBER_REMOVED.value
        and event.reason == RemovalReason.PENDING_SYNC_TIMEOUT.value
    )


def is_leave_removal(event: Event) -> bool:
    return event.event_type == E.MEMBER_REMOVED.value and event.reason == RemovalReason.LEAVE_GROUP.value
