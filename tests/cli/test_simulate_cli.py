"""`rebalance-replay simulate`, run as `python -m jobs.cli simulate` on the scenarios in conf/simulations."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import yaml

from rebalance_core.events import Event
from rebalance_core.simulate import load_scenario, simulate
from tests.core.sim_helpers import replay_events, table_differences

REPO = Path(__file__).resolve().parents[2]
SCENARIO = REPO / "conf" / "simulations" / "02_cooperative_join.yaml"


def run_simulate(*args: str) -> subprocess.CompletedProcess[str]:
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")])),
    }
    return subprocess.run(
        [sys.executable, "-m", "jobs.cli", "simulate", *args],
        capture_output=True,
        text=True,
        cwd=REPO,
        env=env,
        timeout=120,
    )


def read_events(text: str) -> list[Event]:
    return [Event.from_row(json.loads(line)) for line in text.splitlines()]


def test_writes_the_scenarios_events_as_json_lines_and_the_truth(tmp_path):
    out, truth = tmp_path / "events.jsonl", tmp_path / "truth.json"
    result = run_simulate("--scenario", str(SCENARIO), "--out", str(out), "--truth", str(truth))
    assert result.returncode == 0, result.stderr
    events = read_events(out.read_text())
    expected = simulate(*load_scenario(yaml.safe_load(SCENARIO.read_text())))
    assert events == expected.events  # nothing lost or changed through JSON
    assert result.stderr.startswith(f"simulate: {len(events)} events, ")
    tables = json.loads(truth.read_text())
    assert [g["generation_id"] for g in tables["generations"]] == [1, 2, 3, 4, 5]
    # the JSON-lines events replay to the simulator's truth
    assert not table_differences(expected.truth, replay_events(events))


def test_seed_option_is_deterministic_and_overrides_the_scenario():
    first = run_simulate("--scenario", str(SCENARIO), "--out", "-", "--seed", "7")
    again = run_simulate("--scenario", str(SCENARIO), "--out", "-", "--seed", "7")
    default = run_simulate("--scenario", str(SCENARIO), "--out", "-")
    assert first.returncode == again.returncode == default.returncode == 0
    assert first.stdout == again.stdout
    assert first.stdout != default.stdout  # other member ids
    assert [e.event_type for e in read_events(first.stdout)] == [
        e.event_type for e in read_events(default.stdout)
    ]


def test_bad_scenario_is_one_line_and_exit_2(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("topics: {t: 2}\nactions:\n  - {at: 0s, action: leave, member: c1}\n")
    result = run_simulate("--scenario", str(bad), "--out", str(tmp_path / "e.jsonl"))
    assert result.returncode == 2
    assert result.stderr == (
        f"rebalance-replay simulate: error: scenario {bad}: action #1 (leave at 0 ms): "
        "member 'c1' is not running (join it first)\n"
    )
    assert not (tmp_path / "e.jsonl").exists()


def test_bad_settings_missing_file_and_bad_yaml_are_usage_errors(tmp_path):
    settings = tmp_path / "settings.yaml"
    settings.write_text(
        "topics: {t: 2}\nsettings: {assignor: range, protocol: cooperative}\nactions:\n"
        "  - {at: 0s, action: join, member: c1}\n"
    )
    broken = tmp_path / "broken.yaml"
    broken.write_text("topics: {t: 2\n")
    for scenario, message in (
        (settings, "assignor 'range' supports eager, not protocol 'cooperative'"),
        (tmp_path / "missing.yaml", "cannot read scenario"),
        (broken, "is not valid YAML"),
    ):
        result = run_simulate("--scenario", str(scenario), "--out", "-")
        assert result.returncode == 2, scenario
        assert message in result.stderr and result.stderr.count("\n") == 1
        assert "Traceback" not in result.stderr
