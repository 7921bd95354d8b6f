"""Snapshot and restore of the KIP-848 epoch tracker (`consumer.epochs.EpochTracker`), as JSON for the replay
checkpoint (`consumer.replay_checkpoint`): the open epoch (`OpenEpoch`), rows not drained yet, and the
member-side assignment lines and held rows (`HeldAssignment`). It models no Kafka class: it saves what the
tracker knows of the group's epochs (ConsumerGroup as the logs show it) so a later batch resumes it.
A mixin of `EpochTracker`.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from dataclasses import asdict
from typing import Any

from rebalance_core.checkpoint_rows import row_from_json, row_to_json, tps_from_json, tps_to_json
from rebalance_core.consumer.epoch_assignments import HeldAssignment
from rebalance_core.consumer.epoch_members import OpenEpoch


class EpochCheckpoint:
    """The tracker's state as JSON (snapshot) and back (restore, from `EpochTracker.__init__`)."""

    def snapshot(self) -> dict[str, Any]:
        cur = None
        if self.current is not None:
            cur = asdict(self.current)
            if self.current.target is not None:
                cur["target"] = {m: tps_to_json(tps) for m, tps in self.current.target.items()}
            cur["stated"] = {m: tps_to_json(tps) for m, tps in self.current.stated.items()}
        return {
            "assignor": self.assignor,
            "current": cur,
            "out": {name: [row_to_json(r) for r in rows] for name, rows in self._out.items()},
            "reconciliations": [row_to_json(r) for r in self._reconciliations],
            "hold_for_member_lines": self.hold_for_member_lines,
            "member_assigned": {
                str(epoch): {m: tps_to_json(tps) for m, tps in members.items()}
                for epoch, members in self.member_assigned.items()
            },
            "revoked_toward": {
                str(epoch): {m: tps_to_json(tps) for m, tps in members.items()}
                for epoch, members in self.revoked_toward.items()
            },
            "partitions_held": {
                str(epoch): tps_to_json(sorted(tps)) for epoch, tps in self.partitions_held.items()
            },
            "held": [_held_to_json(h) for h in self.held],
            "fenced_awaited": dict(self.fenced_awaited),
        }

    def _restore(self, state: dict) -> None:
        self.assignor = state["assignor"]
        cur = state.get("current")
        if cur is not None:
            cur = dict(cur)
            if cur["target"] is not None:
                cur["target"] = {m: tps_from_json(tps) for m, tps in cur["target"].items()}
            cur["stated"] = {m: tps_from_json(tps) for m, tps in cur.get("stated", {}).items()}
            self.current = OpenEpoch(**cur)
        self._out = {name: [row_from_json(r) for r in rows] for name, rows in state["out"].items()}
        self._reconciliations = [row_from_json(r) for r in state["reconciliations"]]
        self.hold_for_member_lines = state.get("hold_for_member_lines", False)
        self.member_assigned = {
            int(epoch): {m: tps_from_json(tps) for m, tps in members.items()}
            for epoch, members in state.get("member_assigned", {}).items()
        }
        self.revoked_toward = {
            int(epoch): {m: tps_from_json(tps) for m, tps in members.items()}
            for epoch, members in state.get("revoked_toward", {}).items()
        }
        self.partitions_held = {
            int(epoch): set(tps_from_json(tps)) for epoch, tps in state.get("partitions_held", {}).items()
        }
        self.held = [_held_from_json(h) for h in state.get("held", [])]
        self.fenced_awaited = dict(state.get("fenced_awaited", {}))


def _held_to_json(held: HeldAssignment) -> dict:
    return {
        "epoch": held.epoch,
        "date": held.date.isoformat() if held.date is not None else None,
        "instances": dict(held.instances),
        "members": list(held.members),
        "fallback": {m: [tps_to_json(tps), source] for m, (tps, source) in held.fallback.items()},
        "held": tps_to_json(sorted(held.held)),
        "waiting": sorted(held.waiting),
        "closed_at": held.closed_at,
    }


def _held_from_json(data: Mapping[str, Any]) -> HeldAssignment:
    return HeldAssignment(
        epoch=data["epoch"],
        date=dt.date.fromisoformat(data["date"]) if data["date"] is not None else None,
        instances=dict(data["instances"]),
        members=tuple(data["members"]),
        fallback={m: (tps_from_json(tps), source) for m, (tps, source) in data["fallback"].items()},
        held=frozenset(tps_from_json(data["held"])),
        waiting=set(data["waiting"]),
        closed_at=data.get("closed_at"),
    )
