"""What every group replayer (classic `classic.replayer.GroupReplayer`, KIP-848 `ConsumerGroupReplayer`)
shares: the settings a replay runs with (`ReplaySettings`), the dispatch table of its handlers, admitting
an event before modelling it, an anomaly row, the row of a generation only a late line shows, the tables
its rows are collected in, and the header of its checkpoint. One place for both protocols, imported
by both and by the entry `rebalance_core.replay` (which picks the protocol's replayer per group), so
neither replayer imports the entry."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from rebalance_core.events import Event
from rebalance_core.measure_records import utc_date
from rebalance_core.measures import OwnershipTimeline
from schemas.events import EVENT_TYPES
from schemas.tables import REPLAY_TABLES

# Anomaly rules every replayer checks (docs/metrics.md, "Anomalies").
WRONG_GROUP = "wrong_group"
UNKNOWN_EVENT_TYPE = "unknown_event_type"
OUT_OF_ORDER = "out_of_order"


@dataclass
class ReplaySettings:
    scenario: str = "actual"
    final: bool = True  # finish(): emit still-open generations/episodes/movements
    topics: dict[str, int] = field(default_factory=dict)  # known partition counts (inference)
    topic_ids: dict[str, str] = field(default_factory=dict)
    default_assignor: str | None = None  # when the log never names the protocol
    # the Scala coordinator's members map (leader after the leader leaves; rebalance_core.classic.member_order):
    # scala-2.13 (Kafka 2.6-3.9 default builds, _2.13 builds from 2.4) or scala-2.12 (up to 2.5, _2.12
    # builds); None: scala-2.12 when the coordinator's wording is only printed by releases up to 2.3
    # (member_order.release_member_map), else both, a leader stated only where they agree;
    # the Java coordinator's lines (3.6+) are read as java.util.HashMap whatever this says
    coordinator_member_map: str | None = None
    session_timeout_ms: int | None = None  # when the log does not say
    # the most two hosts' clocks may disagree (NTP drift), for instants of different logs (a broker's and a
    # client's, two clients'): a difference within it does not order them (`ordered_across_logs`)
    clock_skew_ms: int = 100
    # KIP-848 groups, when the log does not say: the broker's group.consumer.heartbeat.interval.ms (or the
    # group's own, 4.0 GroupConfig), and the members' max.poll.interval.ms (their rebalance timeout). None:
    # unknown, and a replay that needs one says its result is inferred rather than assume Kafka's default
    consumer_heartbeat_interval_ms: int | None = None
    max_poll_interval_ms: int | None = None
    incidents: object | None = None  # incidents.IncidentSettings of rebalance_core.explain (None: defaults)
    run_end_ms: int | None = None  # last instant of the run's last date (rebalance_core.explain's incidents)


class Replayer(Protocol):
    cluster: str
    group_id: str
    timeline: OwnershipTimeline
    last_ts: int | None

    def _anomaly(self, rule: str, e: Event | None, detail: str, ts: int | None = None) -> None: ...


def admit(replayer: Replayer, e: Event) -> bool:
    """Count `e` in its day and say whether the model should see it: an event of another group or of an
    unknown type is an anomaly and goes no further; one earlier than the last is an anomaly but is
    modelled (its time is what the log says)."""
    if e.cluster != replayer.cluster or e.group_id != replayer.group_id:
        replayer._anomaly(WRONG_GROUP, e, f"event of {e.cluster}/{e.group_id}")
        return False
    ts = e.ts
    replayer.timeline.day_at(ts).events += 1
    if e.event_type not in EVENT_TYPES:
        replayer._anomaly(UNKNOWN_EVENT_TYPE, e, f"event_type {e.event_type!r}")
        return False
    last_ts = replayer.last_ts
    if last_ts is None or ts > last_ts:
        replayer.last_ts = ts
    elif ts < last_ts:
        replayer._anomaly(OUT_OF_ORDER, e, f"{ts - last_ts} ms before the previous event")
    return True


def anomaly_row(
    timeline: OwnershipTimeline,
    key: dict[str, Any],
    rule: str,
    ts: int | None,
    event_id: str | None,
    event_type: str | None,
    group_state: str | None,
    detail: str,
    day_ts: int | None = None,
) -> dict[str, Any]:
    """An `anomalies` row (schemas.tables.ANOMALIES), counted in the day of `ts` (or of `day_ts` when
    the anomaly has no instant of its own)."""
    date = utc_date(ts if ts is not None else (day_ts or 0))
    timeline.day(date).anomalies += 1
    return {
        **key,
        "event_date": date,
        "ts": ts,
        "event_id": event_id,
        "event_type": event_type,
        "group_state": group_state,
        "rule": rule,
        "detail": detail,
    }


def unlogged_generation_row(
    timeline: OwnershipTimeline,
    key: dict[str, Any],
    ts: int,
    generation_id: int,
    *,
    group_protocol: str,
    protocol_type: str | None,
    protocol_name: str | None,
    rebalance_protocol: str | None,
    leader_member_id: str | None,
    episode_id: str | None,
    timing_source: str,
) -> dict[str, Any]:
    """A `generations` row (schemas.tables.GENERATIONS) for a generation (epoch) that a member's line at
    `ts` shows existed after the replay had passed it: the member was in it, so it did not end Empty; who
    else, when it formed and whether it stabilized are in no line (null). `inferred`, counted in the day
    of `ts`."""
    date = utc_date(ts)
    timeline.day(date).generations += 1
    return {
        **key,
        "event_date": date,
        "generation_id": generation_id,
        "group_protocol": group_protocol,
        "protocol_type": protocol_type,
        "protocol_name": protocol_name,
        "rebalance_protocol": rebalance_protocol,
        "leader_member_id": leader_member_id,
        "member_count": None,
        "static_member_count": None,
        "members": None,
        "rebalance_started_at": None,
        "join_completed_at": None,
        "stabilized_at": None,
        "ended_empty": False,
        "rebalance_reason": None,
        "rebalance_ms": None,
        "episode_id": episode_id,
        "episode_round": None,
        "source": "inferred",
        "timing_source": timing_source,
    }


def event_handlers(cls: type, prefix: str) -> dict[str, Callable]:
    """A replayer's dispatch table, event_type -> handler: its methods named `<prefix><event_type>` (`_c_`
    for the coordinator's lines, `_m_` for a member's), inherited ones included. One dict lookup per event
    instead of a name built for getattr."""
    return {name[len(prefix) :]: getattr(cls, name) for name in dir(cls) if name.startswith(prefix)}


def event_anomaly_row(
    timeline: OwnershipTimeline,
    key: dict[str, Any],
    rule: str,
    e: Event | None,
    detail: str,
    ts: int | None,
    last_ts: int | None,
    group_state: str | None,
) -> dict[str, Any]:
    """The `anomaly_row` about `e`, at its instant; without an event, at `ts`, else at the last event's."""
    ts = e.ts if e is not None else (ts if ts is not None else last_ts)
    return anomaly_row(
        timeline, key, rule, ts, e.event_id if e else None, e.event_type if e else None, group_state, detail
    )


def empty_tables() -> dict[str, list[dict]]:
    """The replay tables (schemas.tables.REPLAY_TABLES), no rows yet."""
    return {name: [] for name in REPLAY_TABLES}


def add_rows(out: dict[str, list[dict]], *sources: Mapping[str, list[dict]]) -> dict[str, list[dict]]:
    """Append each source's rows (table name -> rows) to `out`'s tables, in order; returns `out`."""
    for source in sources:
        for name, rows in source.items():
            out[name].extend(rows)
    return out


def checkpoint_header(version: int, group_protocol: str, cluster: str, group_id: str) -> dict[str, Any]:
    """The keys every replayer's snapshot opens with; `group_protocol` says which replayer resumes it."""
    return {
        "state_version": version,
        "group_protocol": group_protocol,
        "cluster": cluster,
        "group_id": group_id,
    }


def check_checkpoint(state: Mapping[str, Any], version: int, group_protocol: str, what: str) -> None:
    """Raise ValueError unless `state` is a snapshot of this replayer (`what`) in this version."""
    if state.get("state_version") != version or state.get("group_protocol") != group_protocol:
        raise ValueError(
            f"not a {what} replay state (version {state.get('state_version')!r}, "
            f"group_protocol {state.get('group_protocol')!r})"
        )


def ordered_across_logs(earlier: int, later: int, skew_ms: int) -> bool:
    """Whether instant `earlier` of one host's log surely precedes instant `later` of another's: by more
    than the clocks' disagreement allowance (`ReplaySettings.clock_skew_ms`). Within it the clocks do not
    order them; a rule then uses the protocol's own order (a response follows its request) or says the
    fact is unknown. Instants of one log need no allowance (compare them directly)."""
    return earlier + skew_ms < later
