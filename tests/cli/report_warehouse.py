"""A small warehouse for the report verb's tests, written with delta-rs directly (no Spark): two days,
three groups (one with a long name, one from a broker-only log without partition counts), a what-if
scenario's rows that the report must ignore, and optionally the columns and table the episode causes
add (rebalance_core.explain: episode cause + trigger, daily causes, rebalance_incidents)."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pyarrow as pa
from deltalake import write_deltalake

from schemas.fields import arrow_schema
from schemas.tables import TABLES

DAY1, DAY2 = dt.date(2024, 11, 8), dt.date(2024, 11, 9)
LONG_GROUP = "orders-enrichment-" + "very-long-name-" * 5 + "eager"
UTC = dt.UTC


def at(day: dt.date, hour: int, minute: int = 0, second: float = 0) -> dt.datetime:
    return dt.datetime(day.year, day.month, day.day, hour, minute, tzinfo=UTC) + dt.timedelta(seconds=second)


# the columns the causes work adds (written only when `with_causes`)
CAUSE_COLUMNS = {
    "rebalance_episodes": [
        pa.field("cause", pa.string()),
        pa.field("cause_raw_reason", pa.string()),
        pa.field("trigger_member_id", pa.string()),
        pa.field("trigger_client_id", pa.string()),
        pa.field("trigger_host", pa.string()),
    ],
    "group_daily_summary": [pa.field("causes", pa.map_(pa.string(), pa.int64()))],
}
# the columns of rebalance_incidents the report reads (the table, where declared, has more)
INCIDENTS_SCHEMA = pa.schema(
    [
        pa.field("cluster", pa.string()),
        pa.field("group_id", pa.string()),
        pa.field("scenario", pa.string()),
        pa.field("event_date", pa.date32()),
        pa.field("incident_id", pa.string()),
        pa.field("kind", pa.string()),
        pa.field("started_at", pa.timestamp("us", tz="UTC")),
        pa.field("ended_at", pa.timestamp("us", tz="UTC")),
        pa.field("groups", pa.list_(pa.string())),
        pa.field("detail", pa.string()),
    ]
)


def _key(group: str, day: dt.date, scenario: str = "actual") -> dict:
    return {"cluster": "prod", "group_id": group, "scenario": scenario, "event_date": day}


def _daily(group, day, rebalances, stw, unavailable, moved, timing="member", scenario="actual", **extra):
    return {
        **_key(group, day, scenario),
        "rebalances": rebalances,
        "rebalances_open": extra.pop("open", 0),
        "rebalances_started_before_input": 0,
        "member_rejoins": 0,
        "member_rejoin_ms": 0,
        "generations": rebalances,
        "stw_ms": stw,
        "partition_unavailable_ms": unavailable,
        "max_partition_unavailable_ms": unavailable,
        "partitions_moved": moved,
        "partitions_revoked": moved,
        "revocations_wasted": 0,
        "reasons": [("member joined", rebalances)],
        "timing_source": timing,
        "events": 10,
        "anomalies": 0,
        **extra,
    }


def _episode(group, start: dt.datetime, seconds, stw, unavailable, reason, **extra):
    return {
        **_key(group, start.date()),
        "episode_id": f"{group}@{start.isoformat()}",
        "rounds": 1,
        "first_generation_id": 1,
        "last_generation_id": 1,
        "started_at": start,
        "stabilized_at": start + dt.timedelta(seconds=seconds),
        "rebalance_ms": int(seconds * 1000),
        "stw_ms": stw,
        "partition_unavailable_ms": unavailable,
        "max_partition_unavailable_ms": unavailable,
        "partitions_moved": 1,
        "partitions_revoked": 1,
        "revocations_wasted": 0,
        "reason": reason,
        "rebalance_protocol": "eager",
        "timing_source": "member",
        "source": "observed",
        **extra,
    }


def _write(root: Path, table: str, rows: list[dict], extra_fields=()) -> None:
    """The table as schemas.tables declares it, plus `extra_fields` it does not declare (yet)."""
    schema = arrow_schema(TABLES[table]) if table in TABLES else pa.schema([])
    for field in extra_fields:
        if field.name not in schema.names:
            schema = schema.append(field)
    data = pa.Table.from_pylist(rows, schema=schema)
    write_deltalake(str(root / table), data, partition_by=["event_date"])


def build_warehouse(root: Path, with_causes: bool = False) -> Path:
    """The warehouse folder (created under `root`)."""
    root.mkdir(parents=True, exist_ok=True)
    causes = {
        "member_joined": {
            "cause": "member_joined",
            "trigger_client_id": "orders-3",
            "trigger_host": "/10.0.0.3",
        },
        "session_timeout": {
            "cause": "session_timeout",
            "trigger_member_id": "orders-2-8d6f7a52-3c1e-4a58-9d0b-1f2e3d4c5b6a",
        },
    }
    episodes = [
        _episode("orders", at(DAY1, 10), 6, 74, 90_000, "removing member orders-2 on heartbeat expiration"),
        _episode("orders", at(DAY2, 3), 2, 40, 30_000, "Adding new member orders-3"),
        _episode(LONG_GROUP, at(DAY1, 12), 3, 74, 6_000, "Adding new member x"),
        _episode("broker-only", at(DAY2, 5), 1, 0, 0, "Adding new member b", timing_source="coordinator"),
    ]
    daily = [
        _daily("orders", DAY1, 1, 74, 90_000, 2),
        _daily("orders", DAY2, 1, 40, 30_000, 1),
        _daily(LONG_GROUP, DAY1, 1, 74, 6_000, 1, open=1),
        _daily("broker-only", DAY2, 1, 0, 0, 0, timing="coordinator"),
        _daily("orders", DAY1, 9, 9_999, 9_999_999, 9, scenario="cooperative"),  # a what-if's rows
    ]
    if with_causes:
        for row, cause in zip(
            episodes, ("session_timeout", "member_joined", "member_joined", "member_joined")
        ):
            row.update({"cause_raw_reason": row["reason"], **causes[cause]})
        for row in daily:
            row["causes"] = (
                [("session_timeout", 1)]
                if row["event_date"] == DAY1 and row["group_id"] == "orders"
                else [("member_joined", 1)]
            )
    movements, assignments = [], []
    for p, (before, after) in enumerate((("orders-1", "orders-3"), ("orders-2", "orders-1"))):
        assignments.append(
            {
                **_key("orders", DAY1),
                "generation_id": 1,
                "member_id": before,
                "topic": "orders",
                "partition": p,
                "source": "observed",
            }
        )
        assignments.append(
            {
                **_key("orders", DAY1),
                "generation_id": 2,
                "member_id": after,
                "topic": "orders",
                "partition": p,
                "source": "observed",
            }
        )
        movements.append(
            {
                **_key("orders", DAY1),
                "generation_id": 2,
                "episode_id": episodes[0]["episode_id"],
                "topic": "orders",
                "partition": p,
                "from_member_id": before,
                "to_member_id": after,
                "stop_cause": "member_failed",
                "revoked_at": at(DAY1, 10, 0, 1),
                "assigned_at": at(DAY1, 10, 0, 46),
                "unavailable_ms": 45_000,
                "moved": True,
                "wasted_revocation": False,
                "source": "observed",
            }
        )
    assignments.append(
        {
            **_key(LONG_GROUP, DAY1),
            "generation_id": 1,
            "member_id": "x",
            "topic": "t",
            "partition": 0,
            "source": "observed",
        }
    )
    _write(root, "group_daily_summary", daily, CAUSE_COLUMNS["group_daily_summary"] if with_causes else ())
    _write(root, "rebalance_episodes", episodes, CAUSE_COLUMNS["rebalance_episodes"] if with_causes else ())
    _write(root, "assignments", assignments)
    _write(root, "partition_movements", movements)
    if with_causes:
        incidents = [
            {
                **_key("orders", DAY1),
                "incident_id": "i1",
                "kind": "rebalance_storm",
                "started_at": at(DAY1, 10),
                "ended_at": at(DAY1, 10, 30),
                "groups": None,
                "detail": "3 rebalances in 30 min",
            },
            {
                **_key(None, DAY2),
                "incident_id": "i2",
                "kind": "coordinator_move",
                "started_at": at(DAY2, 3),
                "ended_at": at(DAY2, 3, 1),
                "groups": ["orders", "broker-only"],
                "detail": "broker 1 restarted",
            },
        ]
        _write(root, "rebalance_incidents", incidents, INCIDENTS_SCHEMA)
    return root
