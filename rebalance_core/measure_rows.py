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

    def _movements(
        self,
        handovers: list[tuple[TopicPartition, Stop]],
        to_member: str | None,
        to_instance: str | None,
        ts: int | None,
        generation_id: int | None,
        source: str,
        same_identity: bool = False,
    ) -> None:
        """The movement rows of `handovers` (partition, its open stop), in order, each started again by
        `to_member` at `ts` (None: not started again, at the end of the input or of the group); their
        unavailable time and revocations go to the open episode, else to the day of each row."""
        ep = self.episode
        key = self.key
        append = self._out["partition_movements"].append
        moved_to = to_member is not None
        to_identity = (to_instance or to_member) if moved_to else None  # its _identity
        date = date_of_day(ts // DAY_MS) if ts is not None else None
        for tp, stop in handovers:
            stop_ts = stop.ts
            unavailable = max(0, ts - stop_ts) if ts is not None and stop_ts is not None else None
            same_owner = same_identity or (moved_to and to_identity == (stop.instance or stop.member))
            if date is not None:
                event_date = date
            else:  # dated by the first known of: its stop, the latest instant seen, the epoch
                at = stop_ts if stop_ts is not None else self._last_ts or 0
                event_date = date_of_day(at // DAY_MS)
            wasted = stop.cause == "revoked" and same_owner
            inferred = source == "inferred" or stop.source == "inferred" or stop_ts is None
            append(
                {
                    **key,
                    "event_date": event_date,
                    "generation_id": generation_id,
                    "episode_id": ep.episode_id if ep else None,
                    "topic": tp.topic,
                    "partition": tp.partition,
                    "from_member_id": stop.member,
                    "to_member_id": to_member,
                    "stop_cause": stop.cause,
                    "revoked_at": stop_ts,
                    "assigned_at": ts,
                    "unavailable_ms": unavailable,
                    "moved": moved_to and not same_owner,
                    "wasted_revocation": wasted,
                    "source": "inferred" if inferred else "observed",
                }
            )
            totals = ep if ep is not None else self.day(event_date)
            if inferred and ep is not None:  # its unavailable time is inferred or a bound: so are the totals
                ep.source = "inferred"
            totals.partition_unavailable_ms += unavailable or 0
            totals.max_partition_unavailable_ms = max(totals.max_partition_unavailable_ms, unavailable or 0)
            totals.partitions_revoked += stop.cause == "revoked"
            totals.revocations_wasted += wasted

    def _close_open_stops(self, source: str = "observed") -> None:
        stopped = self._stopped
        self._movements([(tp, stopped.pop(tp)) for tp in sorted(stopped)], None, None, None, None, source)


def _one_timing_source(sources: list[str]) -> str | None:
    if not sources:
        return None
    return sources[0] if len(sources) == 1 else "mixed"
