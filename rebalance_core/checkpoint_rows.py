"""The JSON shapes the replay checkpoints share: their output rows (a row not drained yet is kept with
its `event_date` as ISO text, a checkpoint being JSON that `jobs/replay_batches.py` stores as `state_json`,
and restored as a `datetime.date`) and partitions as `[topic, partition]` pairs. Used by the
`OwnershipTimeline` checkpoint (`measure_checkpoint`), the KIP-848 epoch tracker (`consumer.epoch_checkpoint`)
and replayer (`consumer.replay_checkpoint`), and the incident detector's state (`incidents`). It models no
Kafka class.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable

from rebalance_core.events import TopicPartition


def row_to_json(row: dict) -> dict:
    """A row with its event_date as ISO text (snapshots are JSON)."""
    date = row.get("event_date")
    return {**row, "event_date": date.isoformat() if isinstance(date, dt.date) else date}


def row_from_json(row: dict) -> dict:
    date = row.get("event_date")
    return {**row, "event_date": dt.date.fromisoformat(date) if isinstance(date, str) else date}


def tps_to_json(tps: Iterable[TopicPartition]) -> list[list]:
    """Partitions as `[topic, partition]` pairs, in the order given."""
    return [[tp.topic, tp.partition] for tp in tps]


def tps_from_json(items: Iterable) -> tuple[TopicPartition, ...]:
    return tuple(TopicPartition(t, p) for t, p in items)
