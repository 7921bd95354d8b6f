"""Excerpts written the way Kafka writes them (0.10 to 4.x, both sides, eager/cooperative, static members,
session timeouts, KIP-848, Connect, JSON and compose layouts), each with its expected canonical events
(tests/fixtures/kafka_logs/excerpts/*.expected.json)."""

from __future__ import annotations

import json

import pytest

from tests.logs.kafka_log_fixtures import EXCERPT_LOGS, EXCERPTS, REAL_LOGS, compact, parse_fixture


def expected_of(path):
    return json.loads((EXCERPTS / f"{path.name}.expected.json").read_text(encoding="utf-8"))


@pytest.mark.parametrize("path", EXCERPT_LOGS, ids=lambda p: p.name)
def test_excerpt_events(path):
    expected = expected_of(path)
    result = parse_fixture(path, **expected["options"])
    assert [compact(e) for e in result.events] == expected["events"]
    assert result.counts.as_dict() == expected["counts"]
    assert [q.line for q in result.quarantine] == expected["quarantined_lines"]


@pytest.mark.parametrize("path", EXCERPT_LOGS + REAL_LOGS, ids=lambda p: p.name)
def test_every_line_is_counted_once(path):
    result = parse_fixture(path)
    counts = result.counts
    assert counts.read == len(path.read_text(encoding="utf-8").splitlines())
    assert counts.read == counts.event_lines + counts.skipped + counts.quarantined
    assert counts.skipped == sum(counts.skipped_by_reason.values())
    assert counts.events == len(result.events)
    assert counts.quarantined == sum(len(q.raw.split("\n")) for q in result.quarantine)  # raw joins its lines


@pytest.mark.parametrize("path", EXCERPT_LOGS + REAL_LOGS, ids=lambda p: p.name)
def test_event_ids_are_deterministic_and_unique(path):
    first, again = parse_fixture(path), parse_fixture(path)
    ids = [e.event_id for e in first.events]
    assert ids == [e.event_id for e in again.events]
    assert len(set(ids)) == len(ids)


def test_a_group_line_without_a_group_id_is_quarantined_with_the_reason():
    result = parse_fixture(EXCERPTS / "broker_2.4_static_members.log")
    [row] = result.quarantine
    assert row.line == 7 and "no group id" in row.reason and row.raw.startswith("[2019-12-03 16:52:41,010]")


def test_unknown_wording_is_quarantined_not_skipped():
    result = parse_fixture(EXCERPTS / "client_ecs_json.jsonl")
    [row] = result.quarantine
    assert row.line == 8 and row.reason.startswith("unknown wording") and row.group_id == "json-group"


def test_topic_ids_stay_ids_without_a_mapping():
    events = parse_fixture(EXCERPTS / "broker_4.0_kip848.log").events
    assigned = {str(tp) for e in events if e.partitions for tp in e.partitions}
    assert assigned == {f"Lb8XbqB9RnK4nZ3JrVwHzA-{p}" for p in range(4)}
