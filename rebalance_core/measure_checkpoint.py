"""The checkpoint codec of an `OwnershipTimeline` (rebalance_core.measures): its state as JSON and back.

`TimelineCheckpoint` is the part of `OwnershipTimeline` that writes its memory (current owners, open
stops, the open episode, day counters, rows not drained yet) as a JSON-serialisable dict and restores it,
so a replay resumes across batches. It models no Kafka class (the measures of docs/metrics.md).
"""

from __future__ import annotations

import datetime as dt
from dataclasses import asdict, fields
from typing import Any

from rebalance_core.checkpoint_rows import row_from_json, row_to_json, tps_from_json, tps_to_json
from rebalance_core.events import TopicPartition
from rebalance_core.measure_records import DayTotals, EpisodeRecord, Holder, Stop


class TimelineCheckpoint:
    """`OwnershipTimeline.snapshot()` and the restore its constructor runs from a snapshot."""

    def snapshot(self) -> dict[str, Any]:
        def tp_key(tp: TopicPartition) -> list:
            return [tp.topic, tp.partition]

        episode = None
        if self.episode is not None:
            episode = asdict(self.episode)
            episode["owners_before"] = [
                [*tp_key(tp), o] for tp, o in sorted(self.episode.owners_before.items())
            ]
        return {
            "consuming": [[*tp_key(tp), *asdict(h).values()] for tp, h in sorted(self._consuming.items())],
            "stopped": [[*tp_key(tp), *asdict(s).values()] for tp, s in sorted(self._stopped.items())],
            "known": tps_to_json(sorted(self._known)),
            "stw_since": self._stw_since,
            "last_ts": self._last_ts,
            "last_stop_ts": self._last_stop_ts,
            "last_stop_inferred": self._last_stop_inferred,
            "stw_since_inferred": self._stw_since_inferred,
            "stw_counted": self._stw_counted,
            "last_handover_stop": self._last_handover_stop,
            "stw_recounted_to": self._stw_recounted_to,
            "owners_known": self._owners_known,
            "episode": episode,
            "days": {d.isoformat(): asdict(t) for d, t in sorted(self._days.items())},
            "out": {name: [row_to_json(r) for r in rows] for name, rows in self._out.items()},
        }

    def _restore(self, state: dict) -> None:
        for topic, partition, *holder in state["consuming"]:
            h = Holder(*holder)
            tp = TopicPartition(topic, partition)
            self._consuming[tp] = h
            self._by_member.setdefault(h.member, set()).add(tp)
        for topic, partition, *stop in state["stopped"]:
            self._stopped[TopicPartition(topic, partition)] = Stop(*stop)
        self._known = set(tps_from_json(state["known"]))
        self._stw_since = state["stw_since"]
        self._last_ts = state["last_ts"]
        self._last_stop_ts = state["last_stop_ts"]
        self._last_stop_inferred = state.get("last_stop_inferred", False)
        self._stw_since_inferred = state.get("stw_since_inferred", False)
        self._stw_counted = state.get("stw_counted", [])
        self._last_handover_stop = state.get("last_handover_stop")
        self._stw_recounted_to = state.get("stw_recounted_to")
        self._owners_known = state.get("owners_known", True)
        if state["episode"] is not None:
            ep = dict(state["episode"])
            ep["owners_before"] = {TopicPartition(t, p): o for t, p, o in ep["owners_before"]}
            self.episode = EpisodeRecord(**ep)
        names = {f.name for f in fields(DayTotals)}
        self._days = {
            dt.date.fromisoformat(d): DayTotals(**{k: v for k, v in t.items() if k in names})
            for d, t in state["days"].items()
        }
        self._out = {name: [row_from_json(r) for r in rows] for name, rows in state["out"].items()}
