"""The Spark reader's pre-filter (jobs.log_source: a line is left out when it is an entry's head and carries
no word every group line carries) loses nothing: on every fixture, the kept lines, numbered and parsed with
the gaps, give the same events, quarantine rows and line counts as the whole file."""

from __future__ import annotations

import re

import pytest

from jobs.log_source import GROUP_WORDS, HEAD_LEVEL, HEAD_TIME, LogOptions, keep_bytes, parse_file
from rebalance_core.kafka_logs import QuarantinedLine, parse_lines
from rebalance_core.kafka_logs.parser import ParseResult
from tests.logs.kafka_log_fixtures import EXCERPT_LOGS, REAL_LOGS

# The same regular expressions the JVM evaluates (`rlike`: a match anywhere, as Python's `search`).
GROUP, TIME, LEVEL = (re.compile(p) for p in (GROUP_WORDS, HEAD_TIME, HEAD_LEVEL))


def kept(line: str) -> bool:
    return bool(GROUP.search(line)) or not (TIME.search(line) and LEVEL.search(line))


def parse_prefiltered(path) -> ParseResult:
    lines = path.read_bytes().decode("utf-8", errors="replace").split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    numbered = [(n, line.rstrip("\r")) for n, line in enumerate(lines, start=1) if kept(line)]
    result = parse_lines(numbered, file=str(path), cluster="default", numbered=True)
    left_out = len(lines) - len(numbered)
    result.counts.read += left_out
    result.counts.skip("not_group", left_out)
    return result


@pytest.mark.parametrize("path", REAL_LOGS + EXCERPT_LOGS, ids=lambda p: p.name)
def test_the_prefiltered_lines_parse_as_the_whole_file(path):
    whole = parse_file(str(path), LogOptions())
    result = parse_prefiltered(path)
    assert [e.to_row() for e in result.events] == [e.to_row() for e in whole.events]
    assert result.quarantine == whole.quarantine
    assert (
        result.counts.read,
        result.counts.events,
        result.counts.event_lines,
        result.counts.quarantined,
    ) == (
        whole.counts.read,
        whole.counts.events,
        whole.counts.event_lines,
        whole.counts.quarantined,
    )
    assert result.counts.skipped == whole.counts.skipped


def test_the_prefilter_leaves_out_the_noise_of_a_broker_log():
    noisy = [
        "[2024-01-01 00:00:00,000] INFO [Log partition=t-0, dir=/k] Rolled new log segment at offset 5 (kafka.log.Log)",
        "[2024-01-01 00:00:00,001] WARN [ReplicaFetcher replicaId=1, leaderId=2, fetcherId=0] Error in fetch (k.s.R)",
        "[2024-01-01 00:00:00,002] INFO [GroupCoordinator 1]: Preparing to rebalance group g1 (k.c.g.GroupCoordinator)",
        "\tat kafka.server.ReplicaFetcherThread.processPartitionData(ReplicaFetcherThread.scala:1)",
        '{"@timestamp":"2024-01-01T00:00:00.003Z","log.level":"INFO","message":"Deleted segment"}',
    ]
    assert [kept(line) for line in noisy] == [False, False, True, True, False]


def test_a_gap_ends_the_entry_above_and_its_stray_continuations_are_skipped():
    numbered = [
        (1, "[2024-01-01 00:00:00,000] INFO [Consumer clientId=c, groupId=g] Updating assignment with"),
        (2, "\tAssigned partitions:                       [t-0]"),
        # line 3, a head not about groups, was left out; line 4 continued it
        (4, "\tat a.B.c(B.java:1)"),
        (5, " (org.apache.kafka.clients.consumer.internals.ConsumerCoordinator)"),
    ]
    result = parse_lines(numbered, file="c.log", cluster="c", numbered=True)
    [event] = result.events
    assert (event.line, result.counts.event_lines, result.quarantine) == (1, 2, [])
    assert result.counts.read == 4 and result.counts.skipped_by_reason == {"not_group": 2}


def test_keep_bytes_gives_a_quarantined_entry_the_bytes_of_its_lines_that_are_not_utf8():
    row = QuarantinedLine("f", 7, "a\ufffdb\nc", "why")
    keep_bytes(ParseResult([], [row], None), {7: b"a\xffb"})
    assert row.raw_base64 == "Yf9iCmM="  # base64 of b"a\xffb\nc"
