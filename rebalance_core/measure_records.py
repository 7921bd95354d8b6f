"""The records an `OwnershipTimeline` (rebalance_core.measures) keeps while it measures.

Who consumes a partition (`Holder`), a partition stopped and not started again (`Stop`), the rebalance
episode being measured (`EpisodeRecord`, a rebalance_episodes row in the making) and one UTC day's
counters (`DayTotals`, a group_daily_summary row in the making), with the UTC date an instant falls in
(`utc_date`, `day_end_ms`). They model no Kafka class: they are the measures of docs/metrics.md (a member's
consumption between onPartitionsAssigned and onPartitionsRevoked / onPartitionsLost of
ConsumerRebalanceListener).
"""

from __future__ import annotations

import datetime as dt
import functools
from dataclasses import dataclass, field

from rebalance_core.events import TopicPartition

DAY_MS = 86_400_000
_EPOCH_DATE = dt.date(1970, 1, 1)


@functools.lru_cache(maxsize=4096)
def date_of_day(day: int) -> dt.date:
    """The UTC date of epoch day `day` (instant // DAY_MS)."""
    return _EPOCH_DATE + dt.timedelta(days=day)


def utc_date(ms: int) -> dt.date:
    """The UTC date of an instant in epoch milliseconds (called for most events: cached per day)."""
    return date_of_day(ms // DAY_MS)


def day_end_ms(day: dt.date) -> int:
    """The last millisecond of a UTC date."""
    return (day.toordinal() - _EPOCH_ORDINAL + 1) * DAY_MS - 1


_EPOCH_ORDINAL = _EPOCH_DATE.toordinal()


@dataclass(slots=True)
class Holder:
    """A member consuming a partition since `since`."""

    member: str
    instance: str | None
    since: int | None  # None: since before the input
    source: str = "observed"


@dataclass(slots=True)
class Stop:
    """A partition stopped by `member` at `ts` and not started again yet."""

    member: str
    instance: str | None
    ts: int | None  # None: at an instant no event shows
    cause: str
    source: str = "observed"


@dataclass
class EpisodeRecord:
    """One rebalance episode being measured. Callers may set the descriptive fields
    (reason, rebalance_protocol, timing_source, source) while it is open."""

    episode_id: str
    started_at: int | None
    reason: str | None = None
    rebalance_protocol: str | None = None
    timing_source: str | None = None
    source: str = "observed"
    rounds: int = 1
    first_generation_id: int | None = None
    last_generation_id: int | None = None
    stabilized_at: int | None = None
    stw_ms: int = 0
    partition_unavailable_ms: int = 0
    max_partition_unavailable_ms: int = 0
    partitions_revoked: int = 0
    revocations_wasted: int = 0
    # identity (group.instance.id or member id) of each partition's owner when the episode began
    owners_before: dict[TopicPartition, str] = field(default_factory=dict)
    # False: who owned what before, during or after it is not known (`OwnershipTimeline.owners_unknown`):
    # its partition measures are null
    partitions_known: bool = True


@dataclass
class DayTotals:
    """Counters of one UTC day (GROUP_DAILY_SUMMARY measure columns). The timeline fills the
    partition measures and `rebalances`; the replayer adds generations, events, anomalies, reasons."""

    rebalances: int = 0  # completed: start and end in the input
    rebalances_open: int = 0  # began in the input, not seen to complete
    rebalances_started_before_input: int = 0
    member_rejoins: int = 0  # same-generation rejoins of one member (no group-wide rebalance)
    member_rejoin_ms: int = 0
    generations: int = 0
    stw_ms: int = 0
    partition_unavailable_ms: int = 0
    max_partition_unavailable_ms: int = 0
    partitions_moved: int = 0
    partitions_revoked: int = 0
    revocations_wasted: int = 0
    reasons: dict[str, int] = field(default_factory=dict)
    timing_sources: list[str] = field(default_factory=list)
    events: int = 0
    anomalies: int = 0
    partitions_known: bool = True  # False: an episode of the day had unknown owners (measures null)

    def add_episode_timing(self, timing_source: str | None) -> None:
        if timing_source and timing_source not in self.timing_sources:
            self.timing_sources.append(timing_source)
            self.timing_sources.sort()
