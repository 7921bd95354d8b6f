"""The output rows of an `OwnershipTimeline` (rebalance_core.measures): the part `TimelineRows`.

A partition movement is one partition's handover from the member that stopped consuming it
(ConsumerRebalanceListener.onPartitionsRevoked / onPartitionsLost, or the member's failure or leave)
to the one that starts it (onPartitionsAssigned): this part writes its partition_movements row and adds
its unavailable time and revocation counts to the open episode, else to its UTC day. It also drains the
rows made so far, closes open stops and the open episode at the end of the input, and writes the
group_daily_summary rows of the days accumulated (docs/metrics.md). It models no Kafka class.
"""

from __future__ import annotations

from rebalance_core.events import TopicPartition
from rebalance_core.measure_records import DAY_MS, Stop, date_of_day


class TimelineRows:
    """Movement rows, draining and finishing, and daily rows of `OwnershipTimeline`."""

    def drain(self) -> dict[str, list[dict]]:
        out = self._out
        self._out = {"partition_movements": [], "rebalance_episodes": []}
        return out

    def finish(self, final: bool = True) -> dict[str, list[dict]]:
        """End of input. final: also emit the open episode and open stops (assigned_at null). When the
        group is stopped as a whole at the end (a stop-the-world no start has ended: its last consumer
        closed, left, or is mid-rebalance), that stop-the-world goes on past the input: it counts nothing
        here, a lower bound, so the open rows and the open episode are `inferred`."""
        if final:
            source = "inferred" if self._stw_since is not None else "observed"
            if source == "inferred" and self.episode is not None:
                self.episode.source = source
            self._close_open_stops(source)
            self.end_episode()
        return self.drain()

    def daily_rows(self) -> list[dict]:
        """group_daily_summary rows of the days accumulated so far (then forgotten: rows of one day
        from successive runs are additive)."""
        rows = []
        self._day_cached = None
        for date in sorted(self._days):
            d = self._days.pop(date)
            known = d.partitions_known
            rows.append(
                {
                    **self.key,
                    "event_date": date,
                    "rebalances": d.rebalances,
                    "rebalances_open": d.rebalances_open,
                    "rebalances_started_before_input": d.rebalances_started_before_input,
                    "member_rejoins": d.member_rejoins,
                    "member_rejoin_ms": d.member_rejoin_ms,
                    "generations": d.generations,
                    # null: an episode of the day had unknown owners (the known part is only a lower bound)
                    "stw_ms": d.stw_ms if known else None,
                    "partition_unavailable_ms": d.partition_unavailable_ms if known else None,
                    "max_partition_unavailable_ms": d.max_partition_unavailable_ms if known else None,
                    "partitions_moved": d.partitions_moved if known else None,
                    "partitions_revoked": d.partitions_revoked if known else None,
                    "revocations_wasted": d.revocations_wasted if known else None,
                    "reasons": dict(sorted(d.reasons.items())) or None,
                    "timing_source": _one_timing_source(d.timing_sources),
                    "events": d.events,
                    "anomalies": d.anomalies,
                }
            )
        return rows

    def _movement(
        self,
        tp: TopicPartition,
        stop: Stop,
        to_member: str | None,
        to_instance: str | None,
        ts: int | None,
        generation_id: int | None,
        source: str,
        same_identity: bool = False,
    ) -> None:
        stop_ts = stop.ts
        unavailable = max(0, ts - stop_ts) if ts is not None and stop_ts is not None else None
        same_owner = same_identity or (
            to_member is not None and (to_instance or to_member) == (stop.instance or stop.member)
        )  # the same _identity
        ep = self.episode
        # dated by the first known of: its start, its stop, the latest instant seen, the epoch
        at = ts if ts is not None else stop_ts if stop_ts is not None else self._last_ts or 0
        row = {
            **self.key,
            "event_date": date_of_day(at // DAY_MS),
            "generation_id": generation_id,
            "episode_id": ep.episode_id if ep else None,
            "topic": tp.topic,
            "partition": tp.partition,
            "from_member_id": stop.member,
            "to_member_id": to_member,
            "stop_cause": stop.cause,
            "revoked_at": stop.ts,
            "assigned_at": ts,
            "unavailable_ms": unavailable,
            "moved": to_member is not None and not same_owner,
            "wasted_revocation": stop.cause == "revoked" and same_owner,
            "source": "inferred" if "inferred" in (source, stop.source) or stop.ts is None else "observed",
        }
        self._out["partition_movements"].append(row)
        revoked = int(stop.cause == "revoked")
        wasted = int(row["wasted_revocation"])
        if ep is not None:
            if row["source"] == "inferred":  # its unavailable time is inferred or a bound: so are the totals
                ep.source = "inferred"
            ep.partition_unavailable_ms += unavailable or 0
            ep.max_partition_unavailable_ms = max(ep.max_partition_unavailable_ms, unavailable or 0)
            ep.partitions_revoked += revoked
            ep.revocations_wasted += wasted
        else:
            day = self.day(row["event_date"])
            day.partition_unavailable_ms += unavailable or 0
            day.max_partition_unavailable_ms = max(day.max_partition_unavailable_ms, unavailable or 0)
            day.partitions_revoked += revoked
            day.revocations_wasted += wasted

    def _close_open_stops(self, source: str = "observed") -> None:
        for tp in sorted(self._stopped):
            self._movement(tp, self._stopped.pop(tp), None, None, None, None, source)


def _one_timing_source(sources: list[str]) -> str | None:
    if not sources:
        return None
    return sources[0] if len(sources) == 1 else "mixed"
