"""What-if configuration: scenarios (the actual settings with some changed) and extraction options
(conf/whatif.yaml)."""

from __future__ import annotations

import dataclasses
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from rebalance_core.assignors import CLIENT_ASSIGNORS
from rebalance_core.timeline import TimelineError, parse_duration

ACTUAL = "actual"
PROTOCOLS = ("eager", "cooperative", "consumer")
SERVER_ASSIGNORS = {"uniform": "uniform", "range": "server-range", "server-range": "server-range"}  # KIP-848
# Kafka defaults where neither the events nor the configuration say (consumer / broker configs).
DEFAULT_SESSION_TIMEOUT_MS = 45_000  # session.timeout.ms (3.0+)
DEFAULT_MAX_POLL_INTERVAL_MS = 300_000  # max.poll.interval.ms
DEFAULT_HEARTBEAT_INTERVAL_MS = 3_000  # heartbeat.interval.ms (classic client)
DEFAULT_KIP848_HEARTBEAT_INTERVAL_MS = 5_000  # group.consumer.heartbeat.interval.ms (broker)
DEFAULT_KIP848_SESSION_TIMEOUT_MS = 45_000  # group.consumer.session.timeout.ms (broker)
WARMUP_MARGIN_MS = 10_000  # members present before the input: their first rebalance ends before it


class WhatIfError(ValueError):
    """A what-if configuration that cannot be used; the message says what and where."""


# ------------------------------------------------------------------------------------ configuration
@dataclass(frozen=True)
class Scenario:
    """The actual settings with some changed; a None field keeps the group's actual value."""

    name: str
    description: str = ""
    assignor: str | None = None  # range | roundrobin | sticky | cooperative-sticky | uniform
    protocol: str | None = None  # eager | cooperative | consumer (KIP-848); None: the assignor's
    static_membership: bool | None = None  # True: every process gets group.instance.id (KIP-345)
    session_timeout_ms: int | None = None
    max_poll_interval_ms: int | None = None  # also the classic rebalance timeout
    heartbeat_interval_ms: int | None = None
    scheduled_rebalance_max_delay_ms: int | None = None  # KIP-415: Connect groups only (plan)
    group_initial_rebalance_delay_ms: int | None = None
    join_round_trip_ms: int | None = None  # latency model overrides (default: fitted from the events)
    sync_round_trip_ms: int | None = None
    revoke_callback_ms: int | None = None
    assignment_ms: int | None = None

    @property
    def changes_nothing(self) -> bool:
        """The actual settings themselves (a model check such as as-actual)."""
        return all(
            getattr(self, f.name) is None
            for f in dataclasses.fields(self)
            if f.name not in ("name", "description")
        )

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name.strip():
            raise WhatIfError("a scenario needs a non-empty 'name'")
        if self.name == ACTUAL:
            raise WhatIfError("'actual' names the replay of what happened; give the scenario another name")
        if self.protocol is not None and self.protocol not in PROTOCOLS:
            raise WhatIfError(f"scenario {self.name!r}: protocol must be one of {', '.join(PROTOCOLS)}")
        known = (*CLIENT_ASSIGNORS, *SERVER_ASSIGNORS)
        if self.assignor is not None and self.assignor not in known:
            raise WhatIfError(
                f"scenario {self.name!r}: assignor must be one of {', '.join(dict.fromkeys(known))}"
            )
        if self.assignor in ("uniform", "server-range") and self.protocol not in (None, "consumer"):
            raise WhatIfError(
                f"scenario {self.name!r}: {self.assignor} is a KIP-848 server assignor (protocol consumer)"
            )
        if self.static_membership is not None and not isinstance(self.static_membership, bool):
            raise WhatIfError(f"scenario {self.name!r}: static_membership must be true, false or null")
        for f in dataclasses.fields(self):
            value = getattr(self, f.name)
            if f.name.endswith("_ms") and value is not None and (not isinstance(value, int) or value < 0):
                raise WhatIfError(f"scenario {self.name!r}: {f.name} must be a duration >= 0")


@dataclass(frozen=True)
class ExtractionOptions:
    """How events become a timeline where the events leave a choice (conf/whatif.yaml `extraction`)."""

    bounce_window_ms: int = 600_000  # a process back within this is a restart (else leave + join)
    expired_rejoin: str = "restart"  # session expiry + rejoin without proof of life: restart | pause
    heartbeat_interval_ms: int = DEFAULT_HEARTBEAT_INTERVAL_MS  # not in any log
    session_timeout_ms: int = DEFAULT_SESSION_TIMEOUT_MS  # when no event says
    max_poll_interval_ms: int = DEFAULT_MAX_POLL_INTERVAL_MS  # when no event says
    # a group's input spanning longer is not replayed (the simulator runs every heartbeat of the span:
    # months of excerpts pasted together would take hours); run the what-if per day or week instead
    max_span_ms: int = 7 * 24 * 3_600_000

    def __post_init__(self) -> None:
        if self.expired_rejoin not in ("restart", "pause"):
            raise WhatIfError("extraction.expired_rejoin must be restart or pause")
        for f in dataclasses.fields(self):
            value = getattr(self, f.name)
            if f.name.endswith("_ms") and (not isinstance(value, int) or value <= 0):
                raise WhatIfError(f"extraction.{f.name} must be a duration > 0")


@dataclass(frozen=True)
class WhatIfConfig:
    scenarios: tuple[Scenario, ...]
    extraction: ExtractionOptions = field(default_factory=ExtractionOptions)

    def select(self, names: Sequence[str] | None) -> WhatIfConfig:
        """Only the named scenarios, in the order given (None or empty: all)."""
        if not names:
            return self
        by_name = {s.name: s for s in self.scenarios}
        unknown = [n for n in names if n not in by_name]
        if unknown:
            raise WhatIfError(
                f"unknown scenario(s) {', '.join(unknown)}; known: {', '.join(by_name) or 'none'}"
            )
        return dataclasses.replace(self, scenarios=tuple(by_name[n] for n in dict.fromkeys(names)))


_SCENARIO_FIELDS = {f.name for f in dataclasses.fields(Scenario)}
_EXTRACTION_FIELDS = {f.name for f in dataclasses.fields(ExtractionOptions)}


def load_whatif(doc: Any) -> WhatIfConfig:
    """A WhatIfConfig from a parsed YAML document: `scenarios` (a list of mappings with Scenario's field
    names; durations as ms or '45s') and an optional `extraction` mapping. WhatIfError if bad."""
    if not isinstance(doc, Mapping):
        raise WhatIfError("a what-if file must be a mapping with 'scenarios'")
    unknown = sorted(set(doc) - {"scenarios", "extraction"})
    if unknown:
        raise WhatIfError(f"unknown what-if field(s): {', '.join(map(str, unknown))}")
    raw = doc.get("scenarios")
    if not isinstance(raw, list) or not raw:
        raise WhatIfError("'scenarios' must be a non-empty list")
    scenarios = tuple(
        _load_fields(Scenario, item, _SCENARIO_FIELDS, f"scenario #{i + 1}") for i, item in enumerate(raw)
    )
    names = Counter(s.name for s in scenarios)
    repeated = sorted(n for n, count in names.items() if count > 1)
    if repeated:
        raise WhatIfError(f"scenario name(s) used twice: {', '.join(repeated)}")
    extraction = _load_fields(
        ExtractionOptions, doc.get("extraction") or {}, _EXTRACTION_FIELDS, "extraction"
    )
    return WhatIfConfig(scenarios, extraction)


def _load_fields(cls, raw: Any, names: set[str], where: str):
    if not isinstance(raw, Mapping):
        raise WhatIfError(f"{where}: must be a mapping")
    unknown = sorted(set(raw) - names)
    if unknown:
        raise WhatIfError(f"{where}: unknown field(s) {', '.join(map(str, unknown))}")
    kwargs = {}
    for key, value in raw.items():
        if key.endswith("_ms") and value is not None:
            try:
                value = parse_duration(value, f"{where}: {key}")
            except TimelineError as exc:
                raise WhatIfError(str(exc)) from None
        kwargs[key] = value
    return cls(**kwargs)
