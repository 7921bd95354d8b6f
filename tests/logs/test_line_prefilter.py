"""The Spark reader's pre-filter (jobs.log_source: a line is left out when it is the head of an entry with
none of the words every group line carries, or a line that follows such a head without a head between)
loses nothing: on every fixture, the kept lines, numbered and parsed with the gaps, give the same events,
quarantine rows and line counts as the whole file."""

from __future__ import annotations

import pytest

from jobs.log_source import (
    GROUP_LINE,
    MAYBE_CONTINUED,
    OTHER_HEAD,
    LogOptions,
    keep_bytes,
    kept_lines,
    line_kind,
    parse_file,
)
from rebalance_core.kafka_logs import QuarantinedLine, parse_lines
from rebalance_core.kafka_logs.parser import ParseResult
from tests.logs.kafka_log_fixtures import EXCERPT_LOGS, REAL_LOGS


def parse_prefiltered(path) -> ParseResult:
    lines = path.read_bytes().decode("utf-8", errors="replace").split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    keep = kept_lines(line_kind(line) for line in lines)
    numbered = [(n, line.rstrip("\r")) for (n, line), k in zip(enumerate(lines, start=1), keep) if k]
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


def test_the_prefilter_leaves_out_the_noise_of_a_broker_log_and_its_stack_traces():
    noisy = [
        "[2024-01-01 00:00:00,000] INFO [Log partition=t-0, dir=/k] Rolled new log segment at offset 5 (kafka.log.Log)",
        "[2024-01-01 00:00:00,001] WARN [ReplicaFetcher replicaId=1, leaderId=2, fetcherId=0] Error in fetch (k.s.R)",
        "\tat kafka.server.ReplicaFetcherThread.processPartitionData(ReplicaFetcherThread.scala:1)",
        "[2024-01-01 00:00:00,002] INFO [GroupCoordinator 1]: Preparing to rebalance group g1 (k.c.g.GroupCoordinator)",
        "\tat kafka.server.KafkaApis.handle(KafkaApis.scala:1)",
        '{"@timestamp":"2024-01-01T00:00:00.003Z","log.level":"INFO","message":"Deleted segment"}',
        "\tat kafka.server.KafkaApis.handle(KafkaApis.scala:2)",
    ]
    kinds = [line_kind(line) for line in noisy]
    assert kinds == [
        OTHER_HEAD,
        OTHER_HEAD,
        MAYBE_CONTINUED,
        GROUP_LINE,
        MAYBE_CONTINUED,
        OTHER_HEAD,
        MAYBE_CONTINUED,
    ]
    assert list(kept_lines(kinds)) == [False, False, False, True, True, False, False]
    # a block starting inside an entry keeps its first lines (the head may be in the block before)
    assert list(kept_lines([MAYBE_CONTINUED, OTHER_HEAD, MAYBE_CONTINUED])) == [True, False, False]


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
    lines = {7: b"a\xffb", 8: b"c"}
    keep_bytes(ParseResult([], [row], None), {7: b"a\xffb"}, lambda wanted: {n: lines[n] for n in wanted})
    assert row.raw_base64 == "Yf9iCmM="  # base64 of b"a\xffb\nc"


def test_the_vectorised_numbering_keeps_what_kept_lines_keeps_across_batches_and_blocks():
    import random

    import pyarrow as pa

    from jobs.log_source import _COUNT_ROW, _number_blocks

    rng = random.Random(7)
    blocks = [(1, 0, 11), (1, 4096, 7), (2, 0, 1), (1, 8192, 9)]  # (file, block start, lines)
    rows = []
    for fid, block, n in blocks:
        for _ in range(n):
            kind = rng.choice([OTHER_HEAD, GROUP_LINE, MAYBE_CONTINUED, MAYBE_CONTINUED])
            text = None if kind == OTHER_HEAD else b"x"
            rows.append({"fid": fid, "block": block, "kind": kind, "path": text and "f", "bytes": text})
    schema = pa.schema(
        [
            ("fid", pa.int64()),
            ("block", pa.int64()),
            ("kind", pa.int8()),
            ("path", pa.string()),
            ("bytes", pa.binary()),
        ]
    )
    table = pa.Table.from_pylist(rows, schema=schema)
    out = pa.Table.from_batches(list(_number_blocks(table.to_batches(max_chunksize=4)))).to_pylist()

    assert [(r["fid"], r["block"], r["count"]) for r in out if r["line"] == _COUNT_ROW] == blocks
    expected, start = [], 0
    for fid, block, n in blocks:
        kinds = [r["kind"] for r in rows[start : start + n]]
        expected += [(fid, block, i) for i, keep in enumerate(kept_lines(kinds)) if keep]
        start += n
    assert [(r["fid"], r["block"], r["line"]) for r in out if r["line"] != _COUNT_ROW] == expected
