"""`rebalance-replay assign`, run as `python -m jobs.cli assign` with the group on stdin."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

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


# ---------------------------------------------------------------------------------- any bytes at all
VALID = group(
    "cooperative-sticky",
    {"t0": 3, "t1": 2},
    [
        {"member_id": "C0", "subscription": ["t0", "t1"], "owned": [["t0", 0]], "generation": 3, "rack": "a"},
        {"member_id": "C1", "subscription": ["t1"], "owned": [{"topic": "t1", "partition": 1}]},
    ],
).encode()
JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
    max_leaves=8,
)


@st.composite
def damaged_groups(draw) -> bytes:
    """The input of `assign`, damaged: random bytes, cut anywhere, a field of the wrong type, nested
    deeper than any parser allows."""
    kind = draw(st.sampled_from(["bytes", "truncated", "wrong-type", "member-field", "nested"]))
    if kind == "bytes":
        return draw(st.binary(max_size=200))
    if kind == "truncated":
        return VALID[: draw(st.integers(0, len(VALID)))]
    if kind == "nested":
        depth = draw(st.integers(1, 200_000))
        return b'{"assignor": "range", "topics": ' + b"[" * depth + b"]" * depth + b"}"
    doc = json.loads(VALID)
    if kind == "wrong-type":
        doc[draw(st.sampled_from(["assignor", "topics", "members", "partition_racks", "topic_ids"]))] = draw(
            JSON_VALUES
        )
    else:
        member = draw(st.sampled_from(doc["members"]))
        member[draw(st.sampled_from(["member_id", "subscription", "owned", "generation", "rack"]))] = draw(
            JSON_VALUES
        )
    return json.dumps(doc).encode()


@settings(
    max_examples=300,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(stdin=damaged_groups())
def test_any_input_is_an_assignment_or_one_line_and_exit_status_2(stdin, monkeypatch, capsys):
    """In this process (a subprocess per example would take minutes): the same cli.main."""
    from jobs.cli import main as cli_main

    monkeypatch.setattr(sys, "stdin", SimpleNamespace(buffer=io.BytesIO(stdin)))
    status = cli_main(["assign"])
    out, err = capsys.readouterr()
    errors = [line for line in err.splitlines() if ": warning: " not in line]
    if status == 0:
        assert json.loads(out)["assignment"] is not None and errors == []
    else:
        assert status == 2 and out == ""
        assert len(errors) == 1 and errors[0].startswith("rebalance-replay assign: error: "), err
