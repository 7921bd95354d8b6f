"""The JSON shape the replay checkpoints share for their output rows: a row not drained yet is kept with
its `event_date` as ISO text (a checkpoint is JSON, `jobs/replay_batches.py` stores it as `state_json`)
and restored as a `datetime.date`. Used by the `OwnershipTimeline` checkpoint (`measure_checkpoint`), the
KIP-848 epoch tracker (`consumer.epoch_checkpoint`) and replayer (`consumer.replay_checkpoint`). It models no Kafka
class.
"""

from __future__ import annotations

import datetime as dt


def row_to_json(row: dict) -> dict:
    """A row with its event_date as ISO text (snapshots are JSON)."""
    date = row.get("event_date")
    return {**row, "event_date": date.isoformat() if isinstance(date, dt.date) else date}


def row_from_json(row: dict) -> dict:
    date = row.get("event_date")
    return {**row, "event_date": dt.date.fromisoformat(date) if isinstance(date, str) else date}
