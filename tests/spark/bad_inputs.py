"""Damaged inputs for the 'nothing lost' tests: hypothesis strategies and fixed cases that break lines
of valid inputs (the packaged sample's events, the real Kafka logs) in every way seen in the wild:
random bytes, truncation, bytes that are not UTF-8, values of the wrong type, absurd timestamps, deep
nesting, huge lines, repeated event ids."""

from __future__ import annotations

import base64
import json
import re

import pyarrow as pa
from hypothesis import strategies as st

from jobs.input import SAMPLE_DATA
from schemas.events import event_arrow_schema
from tests.logs.kafka_log_fixtures import REAL_LOGS

SAMPLE_LINES = SAMPLE_DATA.read_bytes().splitlines()
EVENT_LINES = [line for line in SAMPLE_LINES if b'"bad-' not in line]  # the sample's valid events
LOG_LINES = [line for path in REAL_LOGS for line in path.read_bytes().split(b"\n") if line]
NOT_UTF8 = (b"\xe9", b"\xff", b"\xc3", b"\xed\xa0\x80", b"\xf8\x88\x80\x80\x80", b"\x80\x80")

# Timestamps: unparseable, beyond Spark's years 1..9999, before 2010 or from 2100 (quarantined), or a
# real instant of the sample's days (valid).
TIMESTAMPS = st.one_of(
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from(["+99999-01-01T00:00:00Z", "0001-01-01T00:00:00Z", "1969-12-31T23:59:59Z",
                     "2100-01-01T00:00:00Z", "9999-12-31T23:59:59.999Z", "yesterday", "", "1e400",
                     "2024-11-08T25:61:00Z", "2024-11-08T10:00:00Z", "2024-11-09T23:59:59.999+00:00"]),
    st.integers(min_value=1731024000000, max_value=1731196799999),  # 2024-11-08 .. 2024-11-09
)  # fmt: skip
JSON_VALUES = st.one_of(
    st.none(), st.booleans(), st.integers(), st.floats(), st.text(max_size=8), st.lists(st.integers(), max_size=3),
    st.dictionaries(st.text(max_size=3), st.integers(), max_size=2),
)  # fmt: skip


def _event(line: bytes) -> dict:
    return json.loads(line)


def truncated(line: bytes, at: int) -> bytes:
    return line[:at]


def with_bytes(line: bytes, at: int, junk: bytes) -> bytes:
    return line[:at] + junk + line[at:]


def nested(depth: int) -> bytes:
    """A JSON document nested `depth` deep, in an event's attributes."""
    event = _event(EVENT_LINES[0])
    event["event_id"] = f"deep-{depth}"
    text = json.dumps(event)
    return (text[:-1] + ', "attributes": ' + '{"a": ' * depth + "1" + "}" * depth + "}").encode()


@st.composite
def json_lines(draw) -> bytes:
    """One line of a JSON lines input: a sample event, intact or damaged."""
    line = draw(st.sampled_from(EVENT_LINES))
    kind = draw(st.sampled_from(["intact", "bytes", "truncated", "not-utf8", "wrong-type", "ts", "nested", "duplicate"]))  # fmt: skip
    if kind == "bytes":
        return draw(st.binary(max_size=300))
    if kind == "truncated":
        return truncated(line, draw(st.integers(0, len(line))))
    if kind == "not-utf8":
        return with_bytes(line, draw(st.integers(0, len(line))), draw(st.sampled_from(NOT_UTF8)))
    event = _event(line)
    if kind == "wrong-type":
        event[draw(st.sampled_from(sorted(event)))] = draw(JSON_VALUES)
    elif kind == "ts":
        event["ts"] = draw(TIMESTAMPS)
    elif kind == "nested":
        return nested(draw(st.integers(1, 3000)))
    if kind != "duplicate":  # a duplicate keeps its event id; the others get their own
        event["event_id"] = f"{event['event_id']}-{kind}-{draw(st.integers(0, 10**9))}"
    return json.dumps(event, allow_nan=True).encode()


def fixed_json_lines() -> list[bytes]:
    """Every truncation of one event line, a 1 MB line (valid) and a 1 MB line cut short, JSON nested
    far deeper than Jackson allows, a line of nothing but bytes that are not UTF-8."""
    line = EVENT_LINES[3]
    event = _event(line)
    huge = {**event, "event_id": "huge", "client_id": "c" * 1_000_000}
    return [
        *(truncated(line, i) for i in range(len(line))),
        json.dumps(huge).encode(),
        json.dumps({**huge, "event_id": "huge-cut"}).encode()[:900_000],
        nested(10_000),
        bytes(range(128, 256)),
    ]


def spark_lines(data: bytes) -> list[bytes]:
    """The rows Spark's text reader makes of `data`: lines end at \\n, \\r\\n or \\r (Hadoop's
    LineReader); a line of spaces only is not a row (jobs.input)."""
    lines = re.split(rb"\r\n|\r|\n", data)
    if lines and lines[-1] == b"":
        lines.pop()
    return [line for line in lines if line.strip(b" ")]


def decoded_raw(row: dict) -> bytes:
    """The exact bytes a quarantine row keeps of its line."""
    return base64.b64decode(row["raw_base64"]) if row["raw_base64"] is not None else row["raw"].encode()


# -------------------------------------------------------------------------------- table inputs
def not_utf8_strings(values: list[bytes | None]) -> pa.Array:
    """An Arrow string array holding arbitrary bytes (Arrow checks nothing when built from buffers):
    what a careless Parquet writer produces."""
    offsets, data, valid = [0], b"", []
    for value in values:
        data += value or b""
        offsets.append(len(data))
        valid.append(value is not None)
    mask = pa.array(valid).buffers()[1] if not all(valid) else None
    return pa.Array.from_buffers(
        pa.string(), len(values), [mask, pa.array(offsets, pa.int32()).buffers()[1], pa.py_buffer(data)],
        null_count=valid.count(False),
    )  # fmt: skip


@st.composite
def event_tables(draw) -> tuple[pa.Table, int]:
    """(table, rows that are not UTF-8): sample events as an Arrow table in the event schema, with some
    rows damaged: strings that are not UTF-8 (in a key column and in the attributes map), absurd
    timestamps, missing required values, repeated event ids; and one column of the wrong type holding
    junk."""
    events = [_event(line) for line in draw(st.lists(st.sampled_from(EVENT_LINES), min_size=20, max_size=60))]
    from rebalance_core.events import Event

    arrow_rows = []
    for i, event in enumerate(events):
        kind = draw(
            st.sampled_from(["intact", "intact", "ts", "null", "duplicate", "bad-cluster", "bad-attr"])
        )
        row = Event.from_row(event).to_row()
        if kind != "duplicate":
            row["event_id"] = f"{row['event_id']}-{i}"
        if kind == "null":
            row[draw(st.sampled_from(["cluster", "group_id", "event_type", "side"]))] = None
        millis = int(row["ts"].timestamp() * 1000)
        if kind == "ts":
            millis = draw(st.integers(min_value=-(2**62), max_value=2**62))
        arrow_rows.append((row, millis, kind))
    schema = pa.schema([f.with_nullable(True) for f in event_arrow_schema()])  # a careless writer's
    table = pa.Table.from_pylist([r for r, _, _ in arrow_rows], schema=schema)
    # timestamps as epoch milliseconds (a LONG column, some out of any range)
    millis = [ms for _, ms, _ in arrow_rows]
    table = table.set_column(table.schema.get_field_index("ts"), "ts", pa.array(millis, pa.int64()))
    clusters = [
        (r["cluster"].encode() + b"\xe9") if kind == "bad-cluster" and r["cluster"] else
        (r["cluster"].encode() if r["cluster"] is not None else None)
        for r, _, kind in arrow_rows
    ]  # fmt: skip
    table = table.set_column(table.schema.get_field_index("cluster"), "cluster", not_utf8_strings(clusters))
    keys = not_utf8_strings([b"state" if kind != "bad-attr" else b"st\xffate" for _, _, kind in arrow_rows])
    values = not_utf8_strings([b"x" for _ in arrow_rows])
    offsets = pa.array(range(len(arrow_rows) + 1), pa.int32())
    attributes = pa.MapArray.from_arrays(offsets, keys, values)
    table = table.set_column(table.schema.get_field_index("attributes"), "attributes", attributes)
    junk = draw(st.lists(st.one_of(st.none(), st.text(max_size=5), st.sampled_from(["7", "-1", "2147483648"])),
                         min_size=len(arrow_rows), max_size=len(arrow_rows)))  # fmt: skip
    table = table.set_column(
        table.schema.get_field_index("generation_id"), "generation_id", pa.array(junk, pa.string())
    )
    not_utf8 = sum(kind == "bad-attr" or (kind == "bad-cluster" and r["cluster"] is not None)
                   for r, _, kind in arrow_rows)  # fmt: skip
    return table, not_utf8


# ---------------------------------------------------------------------------------- Kafka logs
@st.composite
def log_lines(draw) -> bytes:
    """One line of a Kafka log: a real one, intact or damaged."""
    line = draw(st.sampled_from(LOG_LINES))
    kinds = ["intact", "intact", "bytes", "truncated", "not-utf8", "json-layout", "nested", "long"]
    kind = draw(st.sampled_from(kinds))
    if kind == "json-layout":  # the line as a JSON logging layout's record, its fields of any type
        record = {"@timestamp": draw(st.one_of(st.just("2024-11-08T10:00:00.000Z"), JSON_VALUES)),
                  "level": draw(st.one_of(st.just("INFO"), JSON_VALUES)),
                  "message": draw(st.one_of(st.just(line.decode("utf-8", "replace")), JSON_VALUES))}  # fmt: skip
        return json.dumps(record).encode()
    if kind == "nested":  # a JSON record nested deeper than Python's parser allows
        depth = draw(st.integers(1, 100_000))
        return b'{"@timestamp": "2024-11-08T10:00:00.000Z", "message": ' + b"[" * depth + b"]" * depth + b"}"
    if kind == "long":  # a line of up to 64 kB, the real line at its start (1 MB: test_bad_bytes)
        return line + b" " + b"x" * draw(st.integers(1_000, 65_536))
    if kind == "bytes":
        return draw(st.binary(max_size=200)).replace(b"\n", b" ")
    if kind == "truncated":
        return truncated(line, draw(st.integers(0, len(line))))
    if kind == "not-utf8":
        return with_bytes(line, draw(st.integers(0, len(line))), draw(st.sampled_from(NOT_UTF8)))
    return line
