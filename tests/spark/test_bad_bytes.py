"""Nothing is lost to bad bytes, in any input format: a run on damaged input (random bytes, lines cut
at every position, bytes that are not UTF-8, values of the wrong type, absurd timestamps, deep nesting,
1 MB lines, repeated event ids, a file whose name is not UTF-8) exits 0 without a traceback; every row
read is replayed, quarantined, a duplicate or skipped (`read = replayed + quarantined + duplicates +
skipped`), and a quarantined row keeps the exact bytes of what it was.

The Spark runs batch many generated cases into one input each (a few examples per format); the pure
checks of the log reader take many more."""

from __future__ import annotations

import base64
import contextlib
import gzip
import io
import json
import os
import tempfile
from collections import Counter
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from deltalake import DeltaTable, write_deltalake
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from jobs.cli import main as cli_main
from jobs.log_source import LogOptions, parse_bytes
from tests.spark.bad_inputs import (
    decoded_raw,
    event_tables,
    fixed_json_lines,
    json_lines,
    log_lines,
    spark_lines,
)

BAD_NAME = b"events-caf\xe9.jsonl"  # a file name that is not UTF-8: Spark cannot open it
SPARK_RUNS = settings(max_examples=2, deadline=None, database=None, suppress_health_check=list(HealthCheck))


def run_cli(*argv: str) -> tuple[int, str, str]:
    """`rebalance-replay ...` in this process (the suite's Spark session): exit status, stdout, stderr."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = cli_main(list(argv))
    return status, out.getvalue(), err.getvalue()


def table_rows(warehouse: Path, table: str) -> list[dict]:
    path = warehouse / table
    return DeltaTable(str(path)).to_pyarrow_table().to_pylist() if (path / "_delta_log").is_dir() else []


def accounting(warehouse: Path) -> dict[str, int]:
    rows = table_rows(warehouse, "run_accounting")
    assert rows and {r["status"] for r in rows} == {"finished"}
    return {k: sum(r[k] for r in rows) for k in ("read", "replayed", "quarantined", "duplicates", "skipped")}


def assert_every_row_accounted_for(warehouse: Path, read: int) -> dict[str, int]:
    counts = accounting(warehouse)
    assert counts["read"] == read
    assert (
        counts["read"]
        == counts["replayed"] + counts["quarantined"] + counts["duplicates"] + counts["skipped"]
    )
    assert len(table_rows(warehouse, "events")) == counts["replayed"]
    assert len(table_rows(warehouse, "quarantine")) == counts["quarantined"]
    return counts


def assert_clean_exit(status: int, err: str) -> None:
    assert status == 0, err
    assert "Traceback" not in err and err == ""


# ------------------------------------------------------------------------------------- JSON lines
@pytest.mark.spark
@SPARK_RUNS
@given(lines=st.lists(json_lines(), min_size=30, max_size=80), newline=st.sampled_from([b"\n", b"\r\n"]))
def test_json_lines_with_bad_bytes_lose_nothing(spark, lines, newline):
    folder = Path(tempfile.mkdtemp(prefix="bad-json-"))
    lines = lines + fixed_json_lines()
    half = len(lines) // 2
    data = [newline.join(lines[:half]) + newline, newline.join(lines[half:])]  # the second file ends mid-line
    (folder / "in").mkdir()
    for name, content in zip(("a.jsonl", "b.jsonl"), data):
        (folder / "in" / name).write_bytes(content)
    with open(os.path.join(os.fsencode(folder / "in"), BAD_NAME), "wb") as bad_name:
        bad_name.write(data[0])

    status, _, err = run_cli(
        "run", "--input", str(folder / "in"), "--input-format", "json", "--warehouse", str(folder / "wh")
    )

    assert_clean_exit(status, err)
    rows = [row for content in data for row in spark_lines(content)]
    assert_every_row_accounted_for(folder / "wh", len(rows) + 1)  # + the file Spark cannot open
    kept = Counter(decoded_raw(q) for q in table_rows(folder / "wh", "quarantine"))
    not_utf8 = Counter(row for row in rows if not _is_utf8(row))
    assert not not_utf8 - kept  # every line that is not UTF-8 is quarantined with its bytes
    assert kept[os.fsencode(folder / "in") + b"/" + BAD_NAME] == 1  # the file is named, bytes and all
    assert not kept - Counter(rows) - Counter([os.fsencode(folder / "in") + b"/" + BAD_NAME])


def _is_utf8(data: bytes) -> bool:
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


# ---------------------------------------------------------------------------- Parquet and Delta
@pytest.mark.spark
@settings(SPARK_RUNS, max_examples=1)
@given(table=event_tables())
def test_parquet_and_delta_rows_with_bad_bytes_lose_nothing(spark, table):
    table, not_utf8_rows = table
    folder = Path(tempfile.mkdtemp(prefix="bad-tables-"))
    (folder / "parquet").mkdir()
    pq.write_table(table, folder / "parquet" / "part-0.parquet")
    write_deltalake(str(folder / "delta"), table)
    for fmt in ("parquet", "delta"):
        warehouse = folder / f"wh-{fmt}"
        status, _, err = run_cli(
            "run", "--input", str(folder / fmt), "--input-format", fmt, "--warehouse", str(warehouse)
        )
        assert_clean_exit(status, err)
        assert_every_row_accounted_for(warehouse, table.num_rows)
        quarantined = [q for q in table_rows(warehouse, "quarantine") if q["reason"].startswith("not UTF-8")]
        assert len(quarantined) == not_utf8_rows
        for q in quarantined:  # the row's values, each string as its exact bytes
            original = json.loads(q["raw_base64"])
            cluster = base64.b64decode(original["cluster"]) if original.get("cluster") else b""
            keys = [base64.b64decode(entry["key"]) for entry in original.get("attributes") or []]
            assert not _is_utf8(cluster) or b"st\xffate" in keys
            assert base64.b64decode(original["event_id"]).decode() in q["raw"]


# ----------------------------------------------------------------------------------- Kafka logs
LOG_LINE_LISTS = st.lists(log_lines(), min_size=20, max_size=120)


@pytest.mark.spark
@settings(SPARK_RUNS, max_examples=1)
@given(files=st.lists(LOG_LINE_LISTS, min_size=2, max_size=3))
def test_kafka_logs_with_bad_bytes_lose_nothing(spark, files):
    folder = Path(tempfile.mkdtemp(prefix="bad-logs-"))
    logs = folder / "logs"
    logs.mkdir()
    contents = {f"broker-{i}.log": b"\n".join(lines) + b"\n" for i, lines in enumerate(files)}
    contents["huge.log"] = (
        contents["broker-0.log"][:200] + b"x" * 1_000_000 + b"\n" + contents["broker-1.log"]
    )
    contents["binary.log"] = os.urandom(5000)
    contents["corrupt.log.gz"] = b"\x1f\x8b" + os.urandom(100)
    contents["zipped.log.gz"] = gzip.compress(contents["broker-1.log"])
    for name, content in contents.items():
        (logs / name).write_bytes(content)
    with open(os.path.join(os.fsencode(logs), b"server-\xff.log"), "wb") as bad_name:
        bad_name.write(contents["broker-0.log"])

    status, _, err = run_cli(
        "run", "--input", str(logs), "--input-format", "kafka-log", "--warehouse", str(folder / "wh")
    )

    assert_clean_exit(status, err)
    parsed = [parse_bytes(str(logs / name), content, LogOptions()) for name, content in contents.items()]
    rows = sum(len(p.events) + len(p.quarantine) + p.counts.skipped for p in parsed)
    assert_every_row_accounted_for(folder / "wh", rows + 1)  # + the file Spark cannot open
    details = table_rows(folder / "wh", "run_accounting")[0]["details"]
    assert int(dict(details)["input_lines"]) == sum(p.counts.read for p in parsed)
    expected = Counter(q.raw_base64 for p in parsed for q in p.quarantine if q.raw_base64)
    kept = Counter(q["raw_base64"] for q in table_rows(folder / "wh", "quarantine") if q["raw_base64"])
    assert not expected - kept


# ------------------------------------------------------------------------------- the log reader
@settings(max_examples=300, deadline=None)
@given(lines=LOG_LINE_LISTS, final_newline=st.booleans())
def test_every_log_line_is_counted_and_a_quarantined_line_keeps_its_bytes(lines, final_newline):
    data = b"\n".join(lines) + (b"\n" if final_newline else b"")
    result = parse_bytes("server.log", data, LogOptions())
    if data.startswith(b"\x1f\x8b"):  # gzip's magic: a gzip file that does not decompress is one row
        assert [q.reason.split(":")[0] for q in result.quarantine] == ["unreadable file"]
        return
    physical = data.split(b"\n")
    if physical[-1] == b"":
        physical.pop()
    counts = result.counts
    assert counts.read == len(physical)
    assert counts.read == counts.event_lines + counts.skipped + counts.quarantined
    for row in result.quarantine:
        # the entry's own lines (a comment line inside its span is not part of it)
        numbers = row.line_numbers or range(row.line, row.line + row.raw.count("\n") + 1)
        span = [physical[n - 1] for n in numbers]
        if any(not _is_utf8(line) for line in span):
            assert base64.b64decode(row.raw_base64) == b"\n".join(span)
        else:
            assert row.raw_base64 is None


def test_a_1_mb_line_and_a_line_nested_100_000_deep_are_counted_lines():
    from tests.spark.bad_inputs import LOG_LINES

    huge = LOG_LINES[0] + b" " + b"x" * 1_000_000
    deep = b'{"@timestamp": "2024-11-08T10:00:00.000Z", "message": ' + b"[" * 100_000 + b"]" * 100_000 + b"}"
    result = parse_bytes("server.log", b"\n".join([huge, deep, *LOG_LINES[:20]]), LogOptions())
    counts = result.counts
    assert counts.read == 22 == counts.event_lines + counts.skipped + counts.quarantined


def test_parse_logs_reads_a_file_whose_name_is_not_utf8_and_prints_its_name_escaped(tmp_path):
    """parse-logs (pure Python) opens such a file, unlike Spark: its rows and counts name it with the
    bytes that are not UTF-8 as \\xNN (the event ids once failed to hash it, the summary to print it)."""
    import subprocess
    import sys

    from tests.logs.kafka_log_fixtures import REAL

    data = (REAL / "04_broker_3.0_expiry_dead_recreate.log").read_bytes()
    logs = tmp_path / "logs"
    logs.mkdir()
    with open(os.path.join(os.fsencode(logs), b"server-\xe9.log"), "wb") as bad_name:
        bad_name.write(data)
    env = {**os.environ, "PYTHONIOENCODING": "utf-8", "PYTHONPATH": str(Path(__file__).parents[2])}
    done = subprocess.run(
        [sys.executable, "-m", "jobs.cli", "parse-logs", str(logs), "--out", str(tmp_path / "out")],
        capture_output=True,
        env=env,
    )

    assert done.returncode == 0 and done.stderr == b"", done.stderr
    shown = f"{logs}/server-\\xe9.log"
    assert shown in done.stdout.decode("utf-8")
    counts = json.loads((tmp_path / "out" / "counts.json").read_text(encoding="utf-8"))
    assert counts["files"][shown]["read"] == data.count(b"\n") + (not data.endswith(b"\n"))
    events = (tmp_path / "out" / "events.jsonl").read_text(encoding="utf-8").splitlines()
    assert events and counts["total"]["events"] == len(events)


@pytest.mark.spark
@pytest.mark.parametrize(
    ("fmt", "name"), [("json", b"only-caf\xe9.jsonl"), ("kafka-log", b"only-server-\xff.log")]
)
def test_a_folder_whose_only_file_spark_cannot_open_is_one_quarantined_row(spark, tmp_path, fmt, name):
    """Nothing else to read: still exit 0 and the file accounted for (the Kafka log reader's empty
    frames once lacked the quarantine's columns: an analysis error, exit 2, and pyspark's JSON line)."""
    from tests.spark.bad_inputs import EVENT_LINES, LOG_LINES

    folder = tmp_path / "in"
    folder.mkdir()
    content = b"\n".join((EVENT_LINES if fmt == "json" else LOG_LINES)[:20]) + b"\n"
    with open(os.path.join(os.fsencode(folder), name), "wb") as out:
        out.write(content)

    status, _, err = run_cli(
        "run", "--input", str(folder), "--input-format", fmt, "--warehouse", str(tmp_path / "wh")
    )

    assert_clean_exit(status, err)
    assert_every_row_accounted_for(tmp_path / "wh", 1)
    (row,) = table_rows(tmp_path / "wh", "quarantine")
    assert base64.b64decode(row["raw_base64"]) == os.fsencode(folder) + b"/" + name


@pytest.mark.spark
def test_a_value_of_another_type_is_kept_as_text_where_text_is_expected_and_quarantined_elsewhere(
    spark, tmp_path
):
    """What README says of values of the wrong type in JSON lines: Spark's reading of them."""
    from tests.spark.bad_inputs import EVENT_LINES

    base = json.loads(EVENT_LINES[7])
    cases = {
        "as-text-number": {"group_id": 7},
        "as-text-array": {"member_id": [1]},
        "line-text": {"line": "x"},
        "line-fraction": {"line": 1.5},
        "side-number": {"side": 1},
        "ts-object": {"ts": {"x": 1}},
    }
    lines = [json.dumps({**base, **change, "event_id": case}) for case, change in cases.items()]
    (tmp_path / "in.jsonl").write_text("\n".join(lines) + "\n")

    status, _, err = run_cli(
        "run", "--input", str(tmp_path / "in.jsonl"), "--warehouse", str(tmp_path / "wh")
    )

    assert_clean_exit(status, err)
    assert_every_row_accounted_for(tmp_path / "wh", len(cases))
    events = {e["event_id"]: e for e in table_rows(tmp_path / "wh", "events")}
    assert set(events) == {"as-text-number", "as-text-array"}
    assert (events["as-text-number"]["group_id"], events["as-text-array"]["member_id"]) == ("7", "[1]")


@pytest.mark.spark
def test_a_file_that_is_not_of_the_format_given_is_one_line_and_exit_2(spark, tmp_path):
    from tests.spark.bad_inputs import EVENT_LINES

    (tmp_path / "events.jsonl").write_bytes(b"\n".join(EVENT_LINES[:5]) + b"\n")

    status, _, err = run_cli(
        "run", "--input", str(tmp_path / "events.jsonl"), "--input-format", "parquet",
        "--warehouse", str(tmp_path / "wh"),
    )  # fmt: skip

    assert status == 2 and err.count("\n") == 1, err
    assert err.startswith(
        f"rebalance-replay run: error: cannot read {tmp_path / 'events.jsonl'} as parquet: "
    )
    assert "[FAILED_READ_FILE" in err
