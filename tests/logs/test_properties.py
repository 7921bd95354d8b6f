"""Properties of the parser on arbitrary text: no crash, nothing but Kafka group logging becomes an event,
every line is accounted for, and a rerun gives the same events."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rebalance_core.kafka_logs import parse_lines
from tests.logs.kafka_log_fixtures import EXCERPT_LOGS, REAL_LOGS, file_lines

# Words of an application log that does not use Kafka's group protocol (no Kafka prefix, no wording).
WORDS = st.sampled_from(
    [
        "order",
        "processed",
        "user",
        "42",
        "ERROR",
        "INFO",
        "[main]",
        "group",
        "partition",
        "member",
        "rebalance",
        "generation",
        "joined",
        "assigned",
        "(x.y.Z)",
        "{",
        "}",
        "[",
        "]",
        "#",
        "-",
        ":",
        "2024-01-01",
        "12:00:00,000",
    ]
)
APP_LINE = st.lists(WORDS, max_size=12).map(" ".join)
ENVELOPED = st.tuples(
    st.sampled_from(
        [
            "[2024-01-01 12:00:00,000] INFO ",
            "2024-01-01 12:00:00.000 WARN  [main] a.B - ",
            "2024-01-01T12:00:00Z ERROR ",
            "",
        ]
    ),
    APP_LINE,
).map("".join)
ANY_TEXT = st.text(st.characters(blacklist_categories=("Cs",)), max_size=80)
KAFKA_LINES = [line for path in EXCERPT_LOGS + REAL_LOGS for line in file_lines(path)]


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.one_of(ENVELOPED, ANY_TEXT), max_size=30))
def test_text_that_is_not_kafka_group_logging_yields_no_events(lines):
    lines = [line.replace("\n", " ").replace("\r", " ") for line in lines]
    result = parse_lines(lines, file="app.log", cluster="c")
    assert result.events == []
    counts = result.counts
    assert counts.read == len(lines) == counts.event_lines + counts.skipped + counts.quarantined


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.one_of(st.sampled_from(KAFKA_LINES), ENVELOPED, ANY_TEXT), max_size=40))
def test_mixed_input_is_fully_accounted_for_and_deterministic(lines):
    lines = [line.replace("\n", " ").replace("\r", " ") for line in lines]
    first = parse_lines(lines, file="mixed.log", cluster="c")
    again = parse_lines(lines, file="mixed.log", cluster="c")
    counts = first.counts
    assert counts.read == len(lines) == counts.event_lines + counts.skipped + counts.quarantined
    assert counts.events == len(first.events)
    assert [e.to_row() for e in first.events] == [e.to_row() for e in again.events]
    for event in first.events:
        assert event.group_id and event.cluster == "c" and event.file == "mixed.log" and event.line >= 1
