"""The output tables (Delta, partitioned by `event_date`), declared once.

Every row carries `cluster`, `group_id`, `scenario` and `event_date` (UTC date of the instant that
closed the row: a generation's stabilization/end, a movement's assignment, an episode's end; for
`group_state` the last day of the run). The protocol core emits rows as dicts with these column
names (timestamps as UTC epoch milliseconds, converted at the Spark/Arrow boundary); docs/metrics.md
defines every measure.
"""

from __future__ import annotations

from schemas.events import EVENT_COLUMNS
from schemas.fields import (
    ATTRIBUTES,
    BOOLEAN,
    COUNTS,
    DATE,
    INT,
    LONG,
    STRING,
    STRINGS,
    TIMESTAMP,
    Column,
)

KEY_COLUMNS: tuple[Column, ...] = (
    Column("cluster", STRING, True),
    Column("group_id", STRING, False),  # null only in quarantine rows whose group is unknown
    Column("scenario", STRING, True, "'actual' for the replay of what happened; else a what-if name"),
    Column("event_date", DATE, True, "Partition column: UTC date of the instant that closed the row"),
)

GENERATIONS = KEY_COLUMNS + (
    Column("generation_id", INT, True, "Classic generation; KIP-848: the group epoch"),
    Column("group_protocol", STRING, True, "classic | consumer (KIP-848)"),
    Column("protocol_type", STRING, False, "consumer | connect | ... (classic protocol type)"),
    Column("protocol_name", STRING, False, "Assignor / selected protocol"),
    Column("rebalance_protocol", STRING, False, "eager | cooperative | consumer"),
    Column("leader_member_id", STRING),
    Column("member_count", INT),
    Column("static_member_count", INT),
    Column("members", STRINGS),
    Column("rebalance_started_at", TIMESTAMP, False, "PreparingRebalance entered; null if before the log"),
    Column("join_completed_at", TIMESTAMP, False, "CompletingRebalance entered ('Stabilized group')"),
    Column("stabilized_at", TIMESTAMP, False, "Stable entered; null if it never stabilized"),
    Column("ended_empty", BOOLEAN),
    Column("rebalance_reason", STRING),
    Column("rebalance_ms", LONG, False, "rebalance_started_at -> stabilized_at"),
    Column("episode_id", STRING, False, "Links the rounds of one rebalance episode"),
    Column("episode_round", INT, False, "1-based round within the episode"),
    Column("source", STRING, True, "observed | inferred"),
    Column("timing_source", STRING, False, "member | coordinator"),
)

ASSIGNMENTS = KEY_COLUMNS + (
    Column("generation_id", INT, True),
    Column("member_id", STRING, True),
    Column("group_instance_id", STRING),
    Column("topic", STRING, True),
    Column("partition", INT, True),
    Column("source", STRING, True, "observed | inferred"),
)

PARTITION_MOVEMENTS = KEY_COLUMNS + (
    Column("generation_id", INT, False, "Generation in which the partition got its new owner"),
    Column("episode_id", STRING),
    Column("topic", STRING, True),
    Column("partition", INT, True),
    Column("from_member_id", STRING),
    Column("to_member_id", STRING),
    Column("stop_cause", STRING, False, "revoked | lost | member_failed | member_left"),
    Column("revoked_at", TIMESTAMP, False, "When the old owner stopped consuming it"),
    Column("assigned_at", TIMESTAMP, False, "When the new owner started; null if never reassigned"),
    Column("unavailable_ms", LONG),
    Column("moved", BOOLEAN, True, "Owner differs"),
    Column("wasted_revocation", BOOLEAN, True, "Revoked, then given back to the same owner"),
    Column("source", STRING, True, "observed | inferred"),
)

REBALANCE_EPISODES = KEY_COLUMNS + (
    Column("episode_id", STRING, True),
    Column("rounds", INT, True),
    Column("first_generation_id", INT),
    Column("last_generation_id", INT),
    Column("started_at", TIMESTAMP),
    Column("stabilized_at", TIMESTAMP),
    Column("rebalance_ms", LONG),
    Column("stw_ms", LONG),
    Column("partition_unavailable_ms", LONG),
    Column("max_partition_unavailable_ms", LONG),
    Column("partitions_moved", INT),
    Column("partitions_revoked", INT),
    Column("revocations_wasted", INT),
    Column("reason", STRING),
    Column("rebalance_protocol", STRING),
    Column("timing_source", STRING),
    Column("source", STRING, True, "observed | inferred"),
    Column(
        "cause",
        STRING,
        False,
        "rebalance_core.rebalance_reasons.Cause: member_joined, session_timeout, ..., unknown",
    ),
    Column("cause_raw_reason", STRING, False, "The reason the cause was read from, as logged"),
    Column("trigger_member_id", STRING, False, "The member whose join/leave/failure started it"),
    Column("trigger_client_id", STRING),
    Column("trigger_host", STRING),
)

NO_ASSIGNMENT_KNOWN = (
    "null: an episode of the day had unknown owners: no line of the input states an assignment and"
    " the assignor cannot be rerun (e.g. a broker log without partition counts; docs/metrics.md)"
)

GROUP_DAILY_SUMMARY = KEY_COLUMNS + (
    Column("rebalances", INT, True, "Completed episodes (start and end in the input) that ended this day"),
    Column("rebalances_open", INT, True, "Episodes that began in the input and were not seen to complete"),
    Column("rebalances_started_before_input", INT, True, "Episodes whose start is before the input"),
    Column(
        "member_rejoins",
        INT,
        True,
        "A member rejoined the Stable group with unchanged metadata and got the same generation back "
        "(no group-wide rebalance)",
    ),
    Column("member_rejoin_ms", LONG, True, "Total duration of those rejoins, each member's signal -> sync"),
    Column("generations", INT, True),
    Column("stw_ms", LONG, False, NO_ASSIGNMENT_KNOWN),
    Column("partition_unavailable_ms", LONG, False, NO_ASSIGNMENT_KNOWN),
    Column("max_partition_unavailable_ms", LONG, False, NO_ASSIGNMENT_KNOWN),
    Column("partitions_moved", INT, False, NO_ASSIGNMENT_KNOWN),
    Column("partitions_revoked", INT, False, NO_ASSIGNMENT_KNOWN),
    Column("revocations_wasted", INT, False, NO_ASSIGNMENT_KNOWN),
    Column("reasons", COUNTS, False, "rebalance reason -> count"),
    Column("causes", COUNTS, False, "episode cause -> count"),
    Column(
        "unowned_partition_ms",
        LONG,
        False,
        "Partition-ms no member ever owned, left unassigned by a Stable "
        "generation (included in partition_unavailable_ms)",
    ),
    Column("timing_source", STRING),
    Column("events", LONG, True, "Events replayed for this group and day"),
    Column("anomalies", LONG, True),
)

GROUP_STATE = KEY_COLUMNS + (
    Column("as_of_ts", TIMESTAMP, False, "Time of the last event replayed"),
    Column("state_version", INT, True),
    Column("state_json", STRING, True, "The core's snapshot of the group (GroupReplayer.snapshot)"),
)

ANOMALIES = KEY_COLUMNS + (
    Column("ts", TIMESTAMP),
    Column("event_id", STRING),
    Column("event_type", STRING),
    Column("group_state", STRING, False, "Coordinator state the model was in"),
    Column("rule", STRING, True, "The rule the event breaks, e.g. invalid_transition"),
    Column("detail", STRING),
)

# rebalance_core.incidents: patterns across a group's episodes; coordinator_move rows have no group_id
REBALANCE_INCIDENTS = KEY_COLUMNS + (
    Column("incident_id", STRING, True),
    Column(
        "kind",
        STRING,
        True,
        "rebalance_storm | stuck_rebalance | rolling_restart | flapping_member | "
        "unowned_partitions | coordinator_move",
    ),
    Column("started_at", TIMESTAMP),
    Column("ended_at", TIMESTAMP),
    Column("duration_ms", LONG),
    Column("episodes", INT, False, "Episodes in it"),
    Column("first_episode_id", STRING),
    Column("last_episode_id", STRING),
    Column(
        "members", STRINGS, False, "Members in it (group.instance.id, else client id@host, else client id)"
    ),
    Column("groups", STRINGS, False, "coordinator_move: the groups that moved"),
    Column("partitions", STRINGS, False, "unowned_partitions: the partitions no member owned"),
    Column("partition_unavailable_ms", LONG, False, "unowned_partitions: partition-ms unassigned"),
    Column(
        "uncounted_unavailable_ms", LONG, False, "... of partitions never owned (not in partition_movements)"
    ),
    Column("detail", STRING),
)

# rebalance_core.coordinator_moves: one row per broker's tenure as a group's coordinator
GROUP_COORDINATORS = KEY_COLUMNS + (
    Column("broker", STRING, True, "Broker id"),
    Column("from_ts", TIMESTAMP, False, "null: since before the log"),
    Column("to_ts", TIMESTAMP, False, "null: still coordinating at the end of the input"),
    Column(
        "started_by", STRING, True, "group_loaded | coordinator_discovered | first_seen | moved | elected"
    ),
    Column("ended_by", STRING, False, "group_unloaded | coordinator_unavailable | moved | resigned"),
    Column("offsets_partition", INT, False, "__consumer_offsets partition named by the broker's lines"),
    Column(
        "seen_by", STRING, True, "coordinator | member | partition (only the broker's partition hand-overs)"
    ),
)

# rebalance_core.coordinator_placement: Kafka's partitionFor against the logged partitions, per group
COORDINATOR_PLACEMENT = KEY_COLUMNS + (
    Column("offsets_partitions_logged", STRINGS, True),
    Column("offsets_partition_expected", INT),
    Column("offsets_topic_partitions", INT, False, "offsets.topic.num.partitions used"),
    Column("partitions_source", STRING, True, "configured | inferred | best_fit | unknown"),
    Column("agrees", BOOLEAN),
    Column("detail", STRING),
)

QUARANTINE = KEY_COLUMNS + (
    Column("source_file", STRING),
    Column("source_line", LONG),
    Column("raw", STRING, False, "The input as text; bytes that are not UTF-8 show as U+FFFD"),
    Column("reason", STRING, True),
    Column(
        "raw_base64",
        STRING,
        False,
        "Where the input is not UTF-8 (null elsewhere): a line's bytes (JSON lines; a log entry's lines "
        "joined by \\n), or for a Parquet/Delta row `raw`'s JSON with every string as its bytes in base64",
    ),
)

EVENTS = KEY_COLUMNS + tuple(c for c in EVENT_COLUMNS if c.name not in ("cluster", "group_id"))

# What-if (scenario != 'actual'): per group and day, actual vs the scenario, with deltas (scenario - actual).
COMPARED_MEASURES = (
    ("rebalances", INT),
    ("stw_ms", LONG),
    ("partition_unavailable_ms", LONG),
    ("partitions_moved", INT),
    ("revocations_wasted", INT),
)
WHATIF_COMPARISON = (
    KEY_COLUMNS
    + tuple(
        Column(f"{name}_{suffix}", kind)
        for name, kind in COMPARED_MEASURES
        for suffix in ("actual", "scenario", "delta")
    )
    + (
        Column(
            "model_check",
            STRING,
            True,
            "passed | failed | not_run | not_comparable: the group's timeline replayed under its actual "
            "settings against what happened (counts exact, times within max(50 ms, 5 %)); failed: do not "
            "rank its scenarios; not_comparable: the input's view cannot support the check (detail says why); "
            "a pass's detail names the measures it could not check (unknown in the actual replay)",
        ),
        Column(
            "model_check_detail",
            STRING,
            False,
            "The measures that differ (actual vs as-actual), or why not run or not comparable",
        ),
        Column("actual_moments", STRINGS, False, "The day's costliest timeline moments as they happened"),
        Column("scenario_moments", STRINGS, False, "The day's costliest timeline moments under the scenario"),
    )
)

RUN_ACCOUNTING = (
    Column("run_id", STRING, True),
    Column("scenario", STRING, True),
    Column("event_date", DATE, True),
    Column("started_at", TIMESTAMP),
    Column("input", STRING),
    Column("read", LONG, True, "Input rows/lines read"),
    Column("replayed", LONG, True),
    Column("quarantined", LONG, True),
    Column("duplicates", LONG, True, "Dropped as repeats of an event_id"),
    Column("skipped", LONG, True, "Rows outside the run's dates, and log lines not about groups"),
    Column("details", ATTRIBUTES, False, "input_format, writer, scenarios (all the run writes), input_*"),
    Column(
        "status",
        STRING,
        False,
        "writing: the record a run commits before its first table, so a run that stopped between two "
        "tables shows (jobs.run_state); finished: its last commit. Null in rows of older versions",
    ),
    Column("finished_at", TIMESTAMP, False, "When the run committed its last table"),
)

TABLES: dict[str, tuple[Column, ...]] = {
    "events": EVENTS,
    "quarantine": QUARANTINE,
    "generations": GENERATIONS,
    "assignments": ASSIGNMENTS,
    "partition_movements": PARTITION_MOVEMENTS,
    "rebalance_episodes": REBALANCE_EPISODES,
    "group_daily_summary": GROUP_DAILY_SUMMARY,
    "group_state": GROUP_STATE,
    "anomalies": ANOMALIES,
    "rebalance_incidents": REBALANCE_INCIDENTS,
    "group_coordinators": GROUP_COORDINATORS,
    "coordinator_placement": COORDINATOR_PLACEMENT,
    "run_accounting": RUN_ACCOUNTING,
    "whatif_comparison": WHATIF_COMPARISON,
}

# Tables the core produces per group (the rest are written by the job itself).
REPLAY_TABLES = (
    "generations",
    "assignments",
    "partition_movements",
    "rebalance_episodes",
    "group_daily_summary",
    "anomalies",
)


__all__ = ["TABLES", "REPLAY_TABLES"]
