"""The group's actual settings as its events show them (`ActualSettings`).

Which group protocol (classic or KIP-848 consumer), assignor and rebalance protocol (eager, KIP-429
cooperative, Connect's IncrementalCooperativeAssignor with its KIP-415 delay), the session and rebalance
timeouts the JoinGroups carry (GroupMetadata.rebalanceTimeoutMs: the largest member's), the clients' own
config dumps (heartbeat.interval.ms, scheduled.rebalance.max.delay.ms), the fitted latency model
(rebalance_core.latency) and the members' Kafka release as their log wording bounds it.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Any

from rebalance_core.assignors import CLIENT_ASSIGNORS
from rebalance_core.assignors.protocols import CONNECT_PROTOCOL_TYPE, CONNECT_PROTOCOLS, rebalance_protocol_of
from rebalance_core.events import Event
from rebalance_core.kafka_logs.patterns import PATTERNS, release_range
from rebalance_core.latency import LatencyModel
from rebalance_core.whatif.config import (
    DEFAULT_HEARTBEAT_INTERVAL_MS,
    DEFAULT_KIP848_HEARTBEAT_INTERVAL_MS,
)
from schemas.events import Side


@dataclass(frozen=True)
class ActualSettings:
    """The group's settings as its events show them (`observed` names those read from events)."""

    group_protocol: str  # classic | consumer
    assignor: str
    protocol: str  # eager | cooperative | consumer
    session_timeout_ms: int
    max_poll_interval_ms: int
    heartbeat_interval_ms: int
    scheduled_rebalance_max_delay_ms: int
    latency: LatencyModel
    observed: tuple[str, ...] = ()
    # the classic protocol type the events show (consumer | connect | ...); None: no event says. KIP-415
    # is a Kafka Connect feature (IncrementalCooperativeAssignor), offered only where this is connect
    protocol_type: str | None = None
    # the members' Kafka client release as far as their log wording bounds it (the newest release every
    # logged member's wording allows, e.g. "2.5"); None: not bounded below a release whose assignors
    # differ from today's (rebalance_core.assignors.get_assignor)
    client_version: str | None = None


class SettingsEvidence:
    """The evidence of the group's settings, and `_actual_settings`, which reads it at finish()."""

    def _init_settings(self) -> None:
        """The state of the settings' evidence (called by TimelineExtractor.__init__)."""
        self.protocol_names: Counter[str] = Counter()
        self.offered_protocols: Counter[str] = Counter()
        self.session_timeouts: Counter[int] = Counter()
        self.rebalance_timeouts: Counter[int] = Counter()
        # KIP-848 config dumps' group.remote.assignor: the server assignor each member asks for
        self.remote_assignors: Counter[str] = Counter()
        self.kip415_delay = 0  # the largest KIP-415 delay a Connect assignment carried (0: none)
        self.protocol_types: Counter[str] = Counter()
        self.revoked_after_sync = False  # a member revoked on its sync: the cooperative protocol (KIP-429)
        # rebalance timeouts the coordinator's removals show (join or sync phase expiry - its start)
        self.expired_rebalance_timeouts: Counter[int] = Counter()
        # clients' config dumps: heartbeat.interval.ms, Connect's scheduled.rebalance.max.delay.ms
        self.heartbeat_intervals: Counter[int] = Counter()
        self.configured_max_delays: Counter[int] = Counter()
        # member logs: client -> (oldest, newest) Kafka release its lines' wordings all appear in
        self.client_releases: dict[str, tuple[tuple[int, int], tuple[int, int]]] = {}

    def _bound_release(self, e: Event) -> None:
        """Each wording a client logs is printed by some Kafka releases only (kafka_logs.patterns `versions`):
        together they bound that client's release (2.5's "Updating assignment with / now assigned
        partitions" block: 2.4-2.5)."""
        bounds = _WORDING_RELEASES.get((e.attributes or {}).get("log_pattern"))
        client = e.client_id or e.source
        if bounds is None or not client:
            return
        low, high = self.client_releases.get(client, ((0, 0), _NEWEST))
        self.client_releases[client] = (max(low, bounds[0]), min(high, bounds[1]))

    def _client_version(self) -> str | None:
        """The newest release every logged client's wording allows, when all of them agree on the side of
        each assignor change (AbstractStickyAssignor.constrainedAssign from 2.6): the leader runs the
        assignor and may be any of them. None (today's algorithms) when no wording bounds it that far."""
        ranges = [r for r in self.client_releases.values() if r[0] <= r[1]]
        if not ranges or len(ranges) < len(self.client_releases):
            return None  # no member wording, or wordings of different releases in one client's lines
        newest = min(high for _, high in ranges)
        if newest == _NEWEST or any(low > newest for low, _ in ranges):
            return None
        if not all((high < _STICKY_CHANGE) == (newest < _STICKY_CHANGE) for _, high in ranges):
            return None
        return f"{newest[0]}.{newest[1]}" if newest < _STICKY_CHANGE else None

    def _m_client_config(self, e: Event) -> None:
        """A client's config dump (docs/events.md `client_config`): the settings its JoinGroup carries.
        A KIP-848 member's session timeout is the broker's group.consumer.session.timeout.ms, not its own."""
        attrs = e.attributes or {}
        keys = [
            ("rebalance_timeout_ms", self.rebalance_timeouts),
            ("heartbeat_interval_ms", self.heartbeat_intervals),
        ]
        if attrs.get("group_protocol") != "consumer":
            keys.append(("session_timeout_ms", self.session_timeouts))
        elif attrs.get("remote_assignor"):
            self.remote_assignors[attrs["remote_assignor"].lower()] += 1
        keys.append(("scheduled_rebalance_max_delay_ms", self.configured_max_delays))
        for key, counter in keys:
            if attrs.get(key, "").isdigit():
                counter[int(attrs[key])] += 1
        if e.protocol_name:
            self.offered_protocols[e.protocol_name] += 1

    def _session_timeout(self) -> int:
        if self.session_timeouts:
            return self.session_timeouts.most_common(1)[0][0]
        return self.replay_settings.session_timeout_ms or self.options.session_timeout_ms

    def _actual_settings(self) -> ActualSettings:
        observed = []
        if self.kip848:
            group_protocol, protocol = "consumer", "consumer"
            # the assignor the broker's lines name, else the one the members ask for (group.remote.assignor:
            # ConsumerGroup.computePreferredServerAssignor takes the one most members name), else the
            # broker's default (group.consumer.assignors' first: uniform)
            assignor = most_common(self.protocol_names) or most_common(self.remote_assignors) or "uniform"
            if self.protocol_names or self.remote_assignors:
                observed.append("assignor")
        else:
            group_protocol = "classic"
            name = most_common(self.protocol_names) or most_common(self.offered_protocols)
            if name in CLIENT_ASSIGNORS:
                observed.append("assignor")
            elif name in CONNECT_PROTOCOLS and most_common(self.protocol_types) == CONNECT_PROTOCOL_TYPE:
                # a Kafka Connect worker group: its leader assigns connectors and tasks with Connect's
                # IncrementalCooperativeAssignor (WorkerCoordinator, protocols compatible / sessioned),
                # replayed by rebalance_core.classic.connect, not by a consumer assignor
                observed.append("assignor")
            elif rebalance_protocol_of(name) == "cooperative" or (name is None and self.revoked_after_sync):
                # Streams' "stream", or members revoking on their sync (KIP-429): cooperative
                self.notes.append(
                    f"protocol {name or 'not logged'} is cooperative (KIP-429): replayed with cooperative-sticky"
                )
                name = "cooperative-sticky"
            else:
                if name is not None:
                    self.notes.append(
                        f"protocol {name!r} is not a consumer assignor the simulator has: range assumed"
                    )
                name = (
                    self.replay_settings.default_assignor
                    if self.replay_settings.default_assignor in CLIENT_ASSIGNORS
                    else "range"
                )
            assignor = name
            protocol = rebalance_protocol_of(assignor) or "eager"
        if self.session_timeouts:
            observed.append("session_timeout_ms")
        if self.rebalance_timeouts or self.expired_rebalance_timeouts:
            observed.append("max_poll_interval_ms")
        # the group's rebalance timeout is the largest of its members' (GroupMetadata.rebalanceTimeoutMs,
        # ClassicGroup.rebalanceTimeoutMs); an expiry the coordinator logged measures it directly
        max_poll = (
            max(self.rebalance_timeouts, default=None)
            or most_common(self.expired_rebalance_timeouts)
            or self.options.max_poll_interval_ms
        )
        latency = self.latency.model()
        max_delay = 0
        if assignor in CONNECT_PROTOCOLS:
            # IncrementalCooperativeAssignor.handleLostAssignments: the first assignment after a worker's
            # work went missing carries delay = scheduled.rebalance.max.delay.ms, later ones what remains
            # of it, the revoking backoff (KAFKA-12495) at most that: the largest delay seen is the setting
            # when that first assignment is in the input, a lower bound otherwise
            # unless the workers' config dumps state the setting itself
            configured = most_common(self.configured_max_delays)
            max_delay = configured if configured is not None else self.kip415_delay
            if max_delay or configured is not None:
                observed.append("scheduled_rebalance_max_delay_ms")
            if configured is None:
                self.notes.append(
                    f"scheduled.rebalance.max.delay.ms is not logged: {max_delay} ms, the largest delay an "
                    "assignment carried (the setting itself if the input holds the first assignment after lost "
                    "work, else a lower bound)"
                    if max_delay
                    else "scheduled.rebalance.max.delay.ms is not logged and no assignment carried a delay: "
                    "0 assumed (lost work reassigned at once)"
                )
        elif self.kip415_delay:
            self.notes.append(
                "KIP-415 delays seen but scheduled.rebalance.max.delay.ms is not logged: not replayed"
            )
        client_version = self._client_version() if group_protocol == "classic" else None
        if client_version is not None and assignor in ("sticky", "cooperative-sticky"):
            observed.append("client_version")
            self.notes.append(
                f"the members' log wording is Kafka {client_version} or older: {assignor} replayed as those "
                "clients run it (before 2.6's all-subscriptions-equal algorithm)"
            )
        heartbeat = self.options.heartbeat_interval_ms
        if self.heartbeat_intervals and group_protocol == "classic":  # the clients' own (config dumps)
            heartbeat = most_common(self.heartbeat_intervals)
            observed.append("heartbeat_interval_ms")
        elif group_protocol == "consumer" and heartbeat == DEFAULT_HEARTBEAT_INTERVAL_MS:
            heartbeat = DEFAULT_KIP848_HEARTBEAT_INTERVAL_MS
        return ActualSettings(
            group_protocol=group_protocol,
            assignor=assignor,
            protocol=protocol,
            session_timeout_ms=self._session_timeout(),
            max_poll_interval_ms=max_poll,
            heartbeat_interval_ms=heartbeat,
            scheduled_rebalance_max_delay_ms=max_delay,
            latency=latency,
            observed=tuple(observed) + tuple(f"latency.{name}" for name in latency.fitted),
            protocol_type=most_common(self.protocol_types),
            client_version=client_version,
        )


def _wording_releases() -> dict[str, tuple[tuple[int, int], tuple[int, int]]]:
    """Member-side wording name -> (oldest, newest) release printing it ("2.4-2.5", "2.4+", "2.3");
    wordings with a second life elsewhere ("1.0-2.3 (KIP-848 membership manager 3.7+)") bound nothing."""
    out = {}
    for pattern in PATTERNS:
        versions = pattern.versions.strip()
        if pattern.side != Side.MEMBER or "(" in versions:
            continue
        oldest, newest = release_range(versions)
        out[pattern.name] = (oldest, newest or _NEWEST)
    return out


_NEWEST = (99, 0)  # "+": up to the newest release
_STICKY_CHANGE = (2, 6)  # AbstractStickyAssignor.constrainedAssign (rebalance_core.assignors.sticky_2_5)
_WORDING_RELEASES = _wording_releases()


def most_common(counter: Counter) -> Any:
    return counter.most_common(1)[0][0] if counter else None
