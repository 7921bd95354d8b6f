"""`rebalance-replay assign`, run as `python -m jobs.cli assign` with the group on stdin."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


def run_assign(stdin: str, *args: str) -> subprocess.CompletedProcess[str]:
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")])),
    }
    return subprocess.run(
        [sys.executable, "-m", "jobs.cli", "assign", *args],
        input=stdin,
        capture_output=True,
        text=True,
        cwd=REPO,
        env=env,
        timeout=120,
    )


def group(assignor: str | None, topics: dict[str, int], members: list[dict]) -> str:
    doc = {"topics": topics, "members": members}
    if assignor is not None:
        doc["assignor"] = assignor
    return json.dumps(doc)


def test_issue_example():
    """The issue's example: range, t1 with 3 partitions, one member c1 -> c1 gets t1-0..2."""
    result = run_assign(group("range", {"t1": 3}, [{"member_id": "c1", "subscription": ["t1"]}]))
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout) == {"assignment": {"c1": [["t1", 0], ["t1", 1], ["t1", 2]]}}
    assert result.stderr == ""


def test_assignor_option_overrides_the_input():
    """The input asks for range; --assignor roundrobin wins (RoundRobinAssignor's javadoc example)."""
    members = [
        {"member_id": "C0", "subscription": ["t0", "t1"]},
        {"member_id": "C1", "subscription": ["t0", "t1"]},
    ]
    result = run_assign(group("range", {"t0": 3, "t1": 3}, members), "--assignor", "roundrobin")
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["assignment"] == {
        "C0": [["t0", 0], ["t0", 2], ["t1", 1]],
        "C1": [["t0", 1], ["t1", 0], ["t1", 2]],
    }


@pytest.mark.parametrize("assignor", ["range", "roundrobin", "uniform", "server-range"])
def test_subscription_to_a_missing_topic_yields_no_partitions_and_a_warning(assignor):
    members = [
        {"member_id": "c1", "subscription": ["t1", "missing"]},
        {"member_id": "c2", "subscription": ["missing"]},
    ]
    result = run_assign(group(assignor, {"t1": 2}, members))
    assert result.returncode == 0, result.stderr
    assignment = json.loads(result.stdout)["assignment"]
    assert assignment == {"c1": [["t1", 0], ["t1", 1]], "c2": []}
    assert result.stderr.splitlines() == [
        "rebalance-replay assign: warning: topic 'missing' (subscribed by c1, c2) is not in 'topics': "
        "not assigned, as Kafka skips a topic without metadata"
    ]


@pytest.mark.parametrize(
    ("stdin", "args", "message"),
    [
        pytest.param(group("no-such-assignor", {}, []), (), "unknown assignor", id="unknown-assignor"),
        pytest.param(
            group("range", {}, []), ("--assignor", "nope"), "unknown assignor", id="unknown-assignor-option"
        ),
        pytest.param('{"assignor": "range", "topics": {', (), "malformed JSON", id="malformed-json"),
        pytest.param(
            group("range", {"t1": 1}, [{"member_id": "c1"}, {"member_id": "c1"}]),
            (),
            "duplicate member id",
            id="duplicate-member-ids",
        ),
        pytest.param(
            group("range", {"t1": -1}, []), (), "negative partition count", id="negative-partition-count"
        ),
        pytest.param(group(None, {}, []), (), "no assignor", id="no-assignor"),
    ],
)
def test_bad_input_is_one_line_on_stderr_and_exit_status_2(stdin, args, message):
    result = run_assign(stdin, *args)
    assert result.returncode == 2
    assert result.stdout == ""
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("rebalance-replay assign: error: ")
    assert message in lines[0]
    assert "Traceback" not in result.stderr
