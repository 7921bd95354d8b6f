"""A scenario for one group: its simulator settings (plan), its simulation, and the replay of what the
actual input would have shown of it (as_observed -> replay_events)."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from rebalance_core.assignors import CLIENT_ASSIGNORS, AssignmentError, get_assignor
from rebalance_core.assignors.protocols import CONNECT_PROTOCOL_TYPE, CONNECT_PROTOCOLS
from rebalance_core.consumer import ConsumerSimSettings, simulate_consumer_group
from rebalance_core.events import Event
from rebalance_core.latency import kip848_one_way_ms
from rebalance_core.replay import event_order_key, new_replayer
from rebalance_core.replay_common import ReplaySettings
from rebalance_core.simulate import SimulationError, SimulationSettings, simulate
from rebalance_core.timeline import Heartbeat, Join, Restart, Timeline
from rebalance_core.whatif.config import (
    DEFAULT_KIP848_HEARTBEAT_INTERVAL_MS,
    DEFAULT_KIP848_SESSION_TIMEOUT_MS,
    SERVER_ASSIGNORS,
    Scenario,
    WhatIfError,
)
from rebalance_core.whatif.extract import ExtractedGroup
from rebalance_core.whatif.settings import ActualSettings
from schemas.events import Side


# ------------------------------------------------------------------------------------- scenarios
@dataclass(frozen=True)
class ScenarioPlan:
    """What a scenario runs for one group: the timeline and the simulator settings (classic or KIP-848)."""

    scenario: Scenario
    timeline: Timeline
    settings: Any  # SimulationSettings | ConsumerSimSettings
    group_protocol: str  # classic | consumer


# anomalies rules of what-if rows: what extraction assumed, a scenario that could not run for the group
ASSUMPTION = "whatif_assumption"
NOT_APPLICABLE = "whatif_not_applicable"
MODEL_CHECK_FAILED = "whatif_model_check_failed"  # the group's as-actual replay does not reproduce it


CONNECT = CONNECT_PROTOCOL_TYPE  # the classic protocol type of Kafka Connect workers' groups
DEFAULT_CONNECT_PROTOCOL = "sessioned"  # DistributedConfig connect.protocol default (2.4+, KIP-507)


class NotApplicable(WhatIfError):
    """The scenario cannot run for this group (e.g. a protocol its assignor does not support)."""


def plan(extracted: ExtractedGroup, scenario: Scenario) -> ScenarioPlan:
    """The scenario's settings for this group: its own values, the group's actual ones elsewhere."""
    actual = extracted.actual
    latency = actual.latency
    if scenario.scheduled_rebalance_max_delay_ms and actual.protocol_type != CONNECT:
        # KIP-415's delay is Kafka Connect's IncrementalCooperativeAssignor (scheduled.rebalance.max.delay.ms
        # of a Connect worker); a consumer's ConsumerCoordinator has no such setting, so no numbers
        raise NotApplicable(
            "scheduled_rebalance_max_delay_ms (KIP-415) is a Kafka Connect setting "
            "(IncrementalCooperativeAssignor); "
            + (
                f"this is a {actual.protocol_type} group"
                if actual.protocol_type
                else "the events do not show this is a Connect group"
            )
        )
    values = {
        name: getattr(scenario, name) if getattr(scenario, name) is not None else default
        for name, default in (
            ("session_timeout_ms", actual.session_timeout_ms),
            ("max_poll_interval_ms", actual.max_poll_interval_ms),
            ("scheduled_rebalance_max_delay_ms", actual.scheduled_rebalance_max_delay_ms),
            ("join_round_trip_ms", latency.join_round_trip_ms),
            ("sync_round_trip_ms", latency.sync_round_trip_ms),
            ("revoke_callback_ms", latency.revoke_callback_ms),
            ("assignment_ms", latency.assignment_ms),
            ("group_initial_rebalance_delay_ms", latency.group_initial_rebalance_delay_ms),
        )
    }
    static = scenario.static_membership
    timeline = extracted.timeline
    if static is False:
        timeline = _without_instance_ids(timeline)
    group_protocol = _scenario_group_protocol(actual, scenario)
    if group_protocol == "consumer":
        name = scenario.assignor or (actual.assignor if actual.group_protocol == "consumer" else "uniform")
        if name not in SERVER_ASSIGNORS:
            raise NotApplicable(
                f"the consumer protocol (KIP-848) has server assignors uniform and range, not {name!r}"
            )
        heartbeat = _broker_setting(
            scenario.heartbeat_interval_ms,
            actual,
            "heartbeat_interval_ms",
            DEFAULT_KIP848_HEARTBEAT_INTERVAL_MS,
        )
        session_timeout = _broker_setting(
            scenario.session_timeout_ms, actual, "session_timeout_ms", DEFAULT_KIP848_SESSION_TIMEOUT_MS
        )
        if static is not False and actual.group_protocol == "classic":
            timeline = _static_restarts_wait_for_release(timeline, bool(static), session_timeout, heartbeat)
        settings = ConsumerSimSettings(
            assignor=SERVER_ASSIGNORS[name],
            static_membership=bool(static),
            heartbeat_interval_ms=heartbeat,
            session_timeout_ms=session_timeout,
            max_poll_interval_ms=values["max_poll_interval_ms"],
            network_ms=kip848_one_way_ms(values["join_round_trip_ms"]),
            revoke_callback_ms=max(1, values["revoke_callback_ms"]),
            assign_callback_ms=max(1, latency.assign_callback_ms),  # fitted from KIP-848 client logs only
        )
        return ScenarioPlan(scenario, timeline, settings, group_protocol)
    if actual.protocol_type == CONNECT and (
        values["scheduled_rebalance_max_delay_ms"] or actual.assignor in CONNECT_PROTOCOLS
    ):
        return _connect_plan(scenario, timeline, actual, values, bool(static), group_protocol)
    assignor = scenario.assignor or (actual.assignor if actual.group_protocol == "classic" else None)
    if assignor is None:
        raise NotApplicable(
            "a classic scenario for a KIP-848 group needs an 'assignor' (e.g. cooperative-sticky)"
        )
    if assignor not in CLIENT_ASSIGNORS:
        raise NotApplicable(f"{assignor!r} is a KIP-848 server assignor: set protocol consumer")
    protocol = scenario.protocol
    if protocol is None and scenario.assignor is None and actual.group_protocol == "classic":
        protocol = actual.protocol
    supported = [p.value for p in get_assignor(assignor).supported_protocols]
    if protocol is not None and protocol not in supported:
        raise NotApplicable(
            f"assignor {assignor} supports {', '.join(supported)}, not the {protocol} protocol"
        )
    try:
        settings = SimulationSettings(
            assignor=assignor,
            protocol=protocol,
            static_membership=bool(static),
            heartbeat_interval_ms=scenario.heartbeat_interval_ms or actual.heartbeat_interval_ms,
            metadata_refresh_ms=latency.metadata_refresh_ms,
            client_version=actual.client_version,  # the group's clients run every scenario
            **values,
        )
    except (SimulationError, AssignmentError) as exc:
        raise NotApplicable(str(exc)) from None
    return ScenarioPlan(scenario, timeline, settings, group_protocol)


def _connect_plan(
    scenario: Scenario,
    timeline: Timeline,
    actual: ActualSettings,
    values: dict,
    static: bool,
    group_protocol: str,
) -> ScenarioPlan:
    """A Kafka Connect worker group (its events name the `compatible` or `sessioned` protocol, or a
    scenario asks for a KIP-415 delay) runs Connect's own assignor (IncrementalCooperativeAssignor;
    rebalance_core.classic.connect): a consumer assignor, an eager protocol or static membership is not something
    its workers can use."""
    if scenario.assignor is not None and scenario.assignor not in CONNECT_PROTOCOLS:
        raise NotApplicable(
            f"a Kafka Connect group assigns with Connect's protocols ({', '.join(CONNECT_PROTOCOLS)}), "
            f"not the consumer assignor {scenario.assignor!r}"
        )
    if scenario.protocol not in (None, "cooperative"):
        raise NotApplicable("a Kafka Connect group (compatible / sessioned) rebalances incrementally only")
    if static:
        raise NotApplicable("Kafka Connect workers have no static membership (KIP-345 is the consumer's)")
    # a worker subscribes to no topics: its work is the connectors' tasks (the timeline's topics)
    timeline = dataclasses.replace(
        timeline,
        actions=tuple(
            dataclasses.replace(a, topics=None) if isinstance(a, Join) and a.topics else a
            for a in timeline.actions
        ),
    )
    try:
        settings = SimulationSettings(
            assignor=scenario.assignor
            or (actual.assignor if actual.assignor in CONNECT_PROTOCOLS else DEFAULT_CONNECT_PROTOCOL),
            heartbeat_interval_ms=scenario.heartbeat_interval_ms or actual.heartbeat_interval_ms,
            metadata_refresh_ms=actual.latency.metadata_refresh_ms,
            **values,
        )
    except (SimulationError, AssignmentError) as exc:
        raise NotApplicable(str(exc)) from None
    return ScenarioPlan(scenario, timeline, settings, group_protocol)


def _broker_setting(stated: int | None, actual: ActualSettings, name: str, kip848_default: int) -> int:
    """A KIP-848 scenario's heartbeat interval or session timeout: the scenario's, else the actual group's
    when it already ran the consumer protocol, else the broker's default. Under KIP-848 both are the
    broker's (group.consumer.heartbeat.interval.ms / group.consumer.session.timeout.ms: GroupMetadataManager),
    so a classic group's client settings do not carry over."""
    if stated is not None:
        return stated
    return getattr(actual, name) if actual.group_protocol == "consumer" else kip848_default


def _scenario_group_protocol(actual: ActualSettings, scenario: Scenario) -> str:
    if scenario.protocol == "consumer" or scenario.assignor in ("uniform", "server-range"):
        return "consumer"
    if scenario.protocol in ("eager", "cooperative"):
        return "classic"
    if actual.group_protocol == "consumer" and scenario.assignor in (None, "range"):
        return "consumer"
    return "classic"


def _static_restarts_wait_for_release(
    timeline: Timeline, all_static: bool, session_timeout_ms: int, heartbeat_ms: int
) -> Timeline:
    """KIP-848: a static member killed (no leave heartbeat with epoch -2) still owns its instance id, so its
    new process is refused with UNRELEASED_INSTANCE_ID (GroupMetadataManager.throwIfInstanceIdIsUnreleased),
    a fatal error for the consumer (ConsumerHeartbeatRequestManager); its supervisor restarts it until the
    old member's session has expired. A classic group's kill-and-restart is replayed as down until then
    (the retry lands within a heartbeat interval of the expiry), not as a process that gives up for good;
    never past the member's next action."""
    static = {a.member for a in timeline.actions if isinstance(a, Join) and (all_static or a.instance_id)}
    released_after = session_timeout_ms + heartbeat_ms
    actions = list(timeline.actions)
    for index, action in enumerate(actions):
        if not isinstance(action, Restart) or action.graceful or action.member not in static:
            continue
        later = (
            a.at
            for a in actions[index + 1 :]
            if getattr(a, "member", None) == action.member
            and not isinstance(a, Heartbeat)  # heartbeat instants are taken only while it runs
            and a.at > action.at
        )
        next_at = min(later, default=None)
        down = released_after if next_at is None else min(released_after, next_at - action.at - 1)
        if down > action.down_ms:
            actions[index] = dataclasses.replace(action, down_ms=down)
    return dataclasses.replace(timeline, actions=tuple(actions))


def _without_instance_ids(timeline: Timeline) -> Timeline:
    actions = tuple(
        dataclasses.replace(a, instance_id=None) if isinstance(a, Join) and a.instance_id else a
        for a in timeline.actions
    )
    return dataclasses.replace(timeline, actions=actions)


def simulate_plan(scenario_plan: ScenarioPlan) -> list[Event]:
    """The canonical events the scenario's simulation logs (both sides, every member)."""
    return _simulate(scenario_plan)[0]


def _simulate(scenario_plan: ScenarioPlan) -> tuple[list[Event], dict[str, list[dict]]]:
    """The scenario's events and the simulator's ground truth."""
    if scenario_plan.group_protocol == "consumer":
        run = simulate_consumer_group(scenario_plan.timeline, scenario_plan.settings)
    else:
        run = simulate(scenario_plan.timeline, scenario_plan.settings)
    return run.events, run.truth


def as_observed(events: Iterable[Event], extracted: ExtractedGroup) -> list[Event]:
    """The simulated events the actual input would have shown: from its first event on, coordinator
    events only if it had the coordinator's log, member events only of processes whose log it had."""
    kept = []
    for e in events:
        if e.ts < extracted.observed_from:
            continue
        if e.side == Side.COORDINATOR.value:
            if extracted.has_coordinator_log:
                kept.append(e)
        elif (e.client_id or e.source) in extracted.member_logged:
            kept.append(e)
    return kept


def replay_events(
    cluster: str, group_id: str, events: Sequence[Event], settings: ReplaySettings
) -> dict[str, list[dict]]:
    """One group's events through the reconstructor that fits them (`replay.new_replayer`: classic or
    KIP-848), in replay order."""
    ordered = sorted(events, key=event_order_key)
    replayer = new_replayer(cluster, group_id, settings, None, ordered)
    replayer.feed(ordered)
    return replayer.finish()


def run_scenario(
    extracted: ExtractedGroup, scenario: Scenario, replay_settings: ReplaySettings | None = None
) -> dict[str, list[dict]]:
    """The replay tables of one scenario for one group (rows with scenario = the scenario's name).
    Raises NotApplicable when the scenario cannot run for this group."""
    return run_plan(extracted, plan(extracted, scenario), replay_settings)


def run_plan(
    extracted: ExtractedGroup, scenario_plan: ScenarioPlan, replay_settings: ReplaySettings | None = None
) -> dict[str, list[dict]]:
    """`run_scenario` for a plan made already: simulate, keep what the actual input would have shown,
    replay it, then uncover the downtime no log shows but the timeline knows (uncover_hidden_stops)."""
    events, truth = _simulate(scenario_plan)
    observed = as_observed(events, extracted)
    base = replay_settings or ReplaySettings()
    settings = dataclasses.replace(
        base,
        scenario=scenario_plan.scenario.name,
        final=True,
        topics=dict(extracted.timeline.topics),
        session_timeout_ms=scenario_plan.settings.session_timeout_ms,
    )
    timeline = extracted.timeline
    tables = replay_events(timeline.cluster, timeline.group_id, observed, settings)
    uncover_hidden_stops(tables, truth, extracted.observed_from)
    return tables


HIDDEN_STOP_MATCH_MS = 1_000  # a replayed start and the simulator's true one of the same movement


def uncover_hidden_stops(
    tables: dict[str, list[dict]], truth: dict[str, list[dict]], observed_from: int
) -> None:
    """A process that dies without a word (killed, frozen) stops consuming at its last heartbeat; when
    no log says when (a static member replaced before its session expired, KIP-345), the replay can only
    stop its partitions when the new process shows up, a lower bound. The simulation knows the instant
    from the timeline (a restart the extraction dated from the actual's session expiry): the replayed
    movement takes it, and its episode and day their partition-unavailable time. Only earlier stops of
    cause member_failed are taken: the rest of the replay stays what the logs show."""
    true_stops: dict[tuple[str, int], list[dict]] = {}
    for row in truth.get("partition_movements", ()):
        if row.get("stop_cause") == "member_failed" and None not in (
            row.get("assigned_at"),
            row.get("revoked_at"),
        ):
            true_stops.setdefault((row["topic"], row["partition"]), []).append(row)
    if not true_stops:
        return
    episodes = {row["episode_id"]: row for row in tables.get("rebalance_episodes", ())}
    daily = {row["event_date"]: row for row in tables.get("group_daily_summary", ())}
    for row in tables.get("partition_movements", ()):
        if row.get("stop_cause") != "member_failed" or None in (
            row.get("assigned_at"),
            row.get("revoked_at"),
        ):
            continue  # a stop instant the replay leaves null (unknown) is not moved
        candidates = [
            t
            for t in true_stops.get((row["topic"], row["partition"]), ())
            if abs(t["assigned_at"] - row["assigned_at"]) <= HIDDEN_STOP_MATCH_MS
            and observed_from <= t["revoked_at"] < row["revoked_at"]
        ]
        if not candidates:
            continue
        earlier = min(t["revoked_at"] for t in candidates)
        hidden = row["revoked_at"] - earlier
        row["revoked_at"] = earlier
        row["unavailable_ms"] = (row.get("unavailable_ms") or 0) + hidden
        for total in (episodes.get(row.get("episode_id")), daily.get(row["event_date"])):
            if total is not None:
                total["partition_unavailable_ms"] = (total.get("partition_unavailable_ms") or 0) + hidden
                total["max_partition_unavailable_ms"] = max(
                    total.get("max_partition_unavailable_ms") or 0, row["unavailable_ms"]
                )
