"""Configuration of `rebalance-replay run`: YAML file + command-line overrides -> one `JobConfig`.

The defaults below are the content of conf/local.yaml (a test keeps the two equal), so `run` works
from any directory without a file. A file given with `--conf` is laid over the defaults; command-line
values are laid over the file. Anything wrong (unknown key, wrong type, bad date) is a UsageError.
"""

from __future__ import annotations

import argparse
import copy
import datetime as dt
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from jobs.usage import UsageError
from rebalance_core.incidents import IncidentSettings

_SCENARIO_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")
INPUT_FORMATS = ("auto", "json", "parquet", "delta", "kafka-log")
DELTA_WRITERS = ("auto", "spark", "delta-rs")

DEFAULTS: dict[str, Any] = {
    "input": {"path": None, "format": "auto", "options": {}},
    "cluster": None,
    "warehouse": "./warehouse",
    "staging": None,
    "scenario": "actual",
    "dates": {"from": None, "to": None},
    "delta_writer": "auto",
    "replay": {
        "final": True,
        "topics": {},
        "default_assignor": None,
        "session_timeout_ms": None,
        "consumer_heartbeat_interval_ms": None,
        "max_poll_interval_ms": None,
        "clock_skew_ms": 100,
        "offsets_topic_partitions": None,
    },
    # rebalance_core.incidents.IncidentSettings (the same defaults; a test keeps them equal)
    "incidents": {
        "storm_rebalances": 5,
        "storm_window_ms": 600_000,
        "default_rebalance_timeout_ms": 300_000,
        "rolling_members": 3,
        "rolling_gap_ms": 600_000,
        "flap_count": 3,
        "flap_window_ms": 1_800_000,
        "coordinator_move_window_ms": 60_000,
        "coordinator_move_groups": 2,
    },
    "spark": {
        "master": "local[2]",
        "driver_memory": None,
        "shuffle_partitions": 4,
        "arrow_max_records_per_batch": 2000,
        "conf": {},
    },
}


@dataclass
class SparkOptions:
    master: str | None = "local[2]"  # None: leave it to spark-submit / the cluster
    driver_memory: str | None = None  # spark.driver.memory of a driver launched here (None: Spark's 1g)
    shuffle_partitions: int = 4
    # Rows per Arrow batch handed to the replay (pandas): bounds the Python worker's memory, whatever
    # the size of a group.
    arrow_max_records_per_batch: int = 2000
    conf: dict[str, str] = field(default_factory=dict)


@dataclass
class ReplayOptions:
    final: bool = True
    topics: dict[str, int] = field(default_factory=dict)
    default_assignor: str | None = None
    session_timeout_ms: int | None = None
    # KIP-848 thresholds a broker-only log does not state (ReplaySettings): None = unknown, so the
    # replay flags what depends on them instead of assuming Kafka's defaults
    consumer_heartbeat_interval_ms: int | None = None  # broker group.consumer.heartbeat.interval.ms
    max_poll_interval_ms: int | None = None  # the consumers' max.poll.interval.ms
    clock_skew_ms: int = 100  # how far two hosts' clocks may disagree (ReplaySettings.clock_skew_ms)
    offsets_topic_partitions: int | None = None  # offsets.topic.num.partitions; None: inferred


# the least each incident threshold may be (a "storm" of one rebalance or a "rolling restart" of one
# member would make every rebalance an incident)
_INCIDENT_MINIMUM = {"storm_rebalances": 2, "rolling_members": 2, "flap_count": 2}


@dataclass
class JobConfig:
    input_path: str | None = None
    input_format: str = "auto"
    input_options: dict[str, Any] = field(default_factory=dict)
    cluster: str | None = None
    warehouse: str = "./warehouse"
    staging: str | None = None
    scenario: str = "actual"
    date_from: dt.date | None = None
    date_to: dt.date | None = None
    delta_writer: str = "auto"
    replay: ReplayOptions = field(default_factory=ReplayOptions)
    incidents: IncidentSettings = field(default_factory=IncidentSettings)
    spark: SparkOptions = field(default_factory=SparkOptions)
    source: str = "defaults"  # where the settings came from, for messages


def load_config(
    path: str | Path | None = None,
    overrides: dict[str, Any] | None = None,
    flags: dict[str, str] | None = None,
) -> JobConfig:
    """Defaults, then the YAML file at `path`, then `overrides` (dotted keys, None = not given).
    `flags` names the command-line option of an override (dotted key -> e.g. '--from'), so that an
    error about a value the user typed names the option, not the file."""
    doc = copy.deepcopy(DEFAULTS)
    source = "defaults"
    if path is not None:
        _merge(doc, _read_yaml(Path(path)), where=str(path))
        source = str(path)
    given: dict[str, str] = {}
    for dotted, value in (overrides or {}).items():
        if value is None:
            continue
        given[dotted] = (flags or {}).get(dotted, f"{dotted} (given)")
        *parents, leaf = dotted.split(".")
        node = doc
        for key in parents:
            node = node[key]
        node[leaf] = value
    return _build(doc, source, given)


def _read_yaml(path: Path) -> dict[str, Any]:
    try:
        text = path.read_text()
    except FileNotFoundError:
        raise UsageError(f"config file not found: {path}") from None
    except OSError as exc:
        raise UsageError(f"cannot read config file {path}: {exc.strerror}") from None
    try:
        doc = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" (line {mark.line + 1})" if mark is not None else ""
        raise UsageError(f"config file {path} is not valid YAML{where}") from None
    except ValueError as exc:  # YAML reads 2024-13-45 as a date, and Python refuses the date
        raise UsageError(f"config file {path} holds a date that does not exist: {exc}") from None
    if doc is None:
        return {}
    if not isinstance(doc, dict):
        raise UsageError(f"config file {path} must be a mapping of settings")
    return doc


def _merge(base: dict[str, Any], extra: dict[str, Any], *, where: str, prefix: str = "") -> None:
    for key, value in extra.items():
        name = f"{prefix}{key}"
        if key not in base:
            raise UsageError(f"{where}: unknown setting {name!r}")
        # Mappings of settings merge key by key; free mappings (options, topics, conf) are replaced.
        if isinstance(base[key], dict) and base[key] and isinstance(value, dict):
            _merge(base[key], value, where=where, prefix=f"{name}.")
        else:
            base[key] = value


def _build(doc: dict[str, Any], source: str, given: dict[str, str] | None = None) -> JobConfig:
    where = source
    given = given or {}
    inp, replay, spark, dates = doc["input"], doc["replay"], doc["spark"], doc["dates"]
    date_from = _date(dates["from"], "dates.from", where)
    date_to = _date(dates["to"], "dates.to", where)
    if date_from and date_to and date_from > date_to:
        if not {"dates.from", "dates.to"} & set(given):
            raise UsageError(f"{where}: dates.from {date_from} is after dates.to {date_to}")
        first, last = (given.get(k, f"{k} of {source}") for k in ("dates.from", "dates.to"))
        raise UsageError(f"{first} {date_from} is after {last} {date_to}")
    config = JobConfig(
        input_path=_optional_str(inp["path"], "input.path", where),
        input_format=_choice(inp["format"], INPUT_FORMATS, "input.format", where),
        input_options=_mapping(inp["options"], "input.options", where),
        cluster=_optional_str(doc["cluster"], "cluster", where),
        warehouse=_str(doc["warehouse"], "warehouse", where),
        staging=_optional_str(doc["staging"], "staging", where),
        scenario=_str(doc["scenario"], "scenario", where),
        date_from=date_from,
        date_to=date_to,
        delta_writer=_choice(doc["delta_writer"], DELTA_WRITERS, "delta_writer", where),
        replay=ReplayOptions(
            final=_bool(replay["final"], "replay.final", where),
            topics={
                str(t): _int(n, f"replay.topics.{t}", where)
                for t, n in _mapping(replay["topics"], "replay.topics", where).items()
            },
            default_assignor=_optional_str(replay["default_assignor"], "replay.default_assignor", where),
            session_timeout_ms=_optional_int(
                replay["session_timeout_ms"], "replay.session_timeout_ms", where
            ),
            consumer_heartbeat_interval_ms=_optional_int(
                replay["consumer_heartbeat_interval_ms"], "replay.consumer_heartbeat_interval_ms", where
            ),
            max_poll_interval_ms=_optional_int(
                replay["max_poll_interval_ms"], "replay.max_poll_interval_ms", where
            ),
            clock_skew_ms=_int(replay["clock_skew_ms"], "replay.clock_skew_ms", where, least=0),
            offsets_topic_partitions=_optional_int(
                replay["offsets_topic_partitions"], "replay.offsets_topic_partitions", where
            ),
        ),
        incidents=IncidentSettings(
            **{
                name: _int(value, f"incidents.{name}", where, _INCIDENT_MINIMUM.get(name, 1))
                for name, value in _mapping(doc["incidents"], "incidents", where).items()
            }
        ),
        spark=SparkOptions(
            master=_optional_str(spark["master"], "spark.master", where),
            driver_memory=_memory(
                spark["driver_memory"], given.get("spark.driver_memory") or f"{where}: spark.driver_memory"
            ),
            shuffle_partitions=_int(spark["shuffle_partitions"], "spark.shuffle_partitions", where),
            arrow_max_records_per_batch=_int(
                spark["arrow_max_records_per_batch"], "spark.arrow_max_records_per_batch", where
            ),
            conf={str(k): str(v) for k, v in _mapping(spark["conf"], "spark.conf", where).items()},
        ),
        source=source,
    )
    if not _SCENARIO_NAME.fullmatch(config.scenario):  # it goes into Delta predicates and paths
        name = given.get("scenario") or f"{where}: scenario"
        raise UsageError(f"{name} must be letters, digits, '.', '_' or '-', got {config.scenario!r}")
    return config


# ------------------------------------------------------------------------------------ value checks
def _str(value: Any, name: str, where: str) -> str:
    if not isinstance(value, str) or not value:
        raise UsageError(f"{where}: {name} must be a non-empty string, got {value!r}")
    return value


def _optional_str(value: Any, name: str, where: str) -> str | None:
    return None if value is None else _str(value, name, where)


def _int(value: Any, name: str, where: str, least: int = 1) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < least:
        what = "a positive integer" if least == 1 else f"an integer of at least {least}"
        raise UsageError(f"{where}: {name} must be {what}, got {value!r}")
    return value


def _optional_int(value: Any, name: str, where: str) -> int | None:
    return None if value is None else _int(value, name, where)


_MEMORY = re.compile(r"\d+[kmgt]?", re.IGNORECASE)


def _memory(value: Any, label: str) -> str | None:
    """A JVM memory size as Spark takes it: 4g, 512m, ..."""
    if value is None:
        return None
    if not isinstance(value, str) or not _MEMORY.fullmatch(value):
        raise UsageError(f"{label} must be a size such as 4g or 512m, got {value!r}")
    return value


def _bool(value: Any, name: str, where: str) -> bool:
    if not isinstance(value, bool):
        raise UsageError(f"{where}: {name} must be true or false, got {value!r}")
    return value


def _mapping(value: Any, name: str, where: str) -> dict[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise UsageError(f"{where}: {name} must be a mapping, got {value!r}")
    return dict(value)


def _choice(value: Any, choices: tuple[str, ...], name: str, where: str) -> str:
    if value not in choices:
        raise UsageError(f"{where}: {name} must be one of {', '.join(choices)}, got {value!r}")
    return value


def _date(value: Any, name: str, where: str) -> dt.date | None:
    if value is None or (isinstance(value, dt.date) and not isinstance(value, dt.datetime)):
        return value  # YAML reads an unquoted 2024-11-08 as a date already
    try:
        return dt.date.fromisoformat(str(value))
    except ValueError:
        raise UsageError(f"{where}: {name} must be a date YYYY-MM-DD, got {value!r}") from None


def parse_date(text: str) -> dt.date:
    """argparse `type=` for --date/--from/--to (argparse reports the error and exits with 2)."""
    try:
        return dt.date.fromisoformat(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a date YYYY-MM-DD: {text!r}") from None
