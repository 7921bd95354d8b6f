"""`rebalance-replay parse-logs` end to end: files, directories and gzip in, events.jsonl /
quarantine.jsonl / counts.json out, counts printed, reruns identical, user errors exit 2."""

from __future__ import annotations

import gzip
import json
import shutil

import pytest

from jobs.cli import main
from rebalance_core.events import Event
from tests.logs.kafka_log_fixtures import EXCERPTS, REAL


@pytest.fixture
def logs(tmp_path):
    """cluster-a/broker-1/server.log (04), cluster-a/app-9/consumer.log.gz (09), and an ECS file
    with one quarantined line directly under the root."""
    root = tmp_path / "logs"
    (root / "cluster-a" / "broker-1").mkdir(parents=True)
    (root / "cluster-a" / "app-9").mkdir(parents=True)
    shutil.copy(
        REAL / "04_broker_3.0_expiry_dead_recreate.log", root / "cluster-a" / "broker-1" / "server.log"
    )
    data = (REAL / "09_client_classic_eager_two_members.log").read_bytes()
    (root / "cluster-a" / "app-9" / "consumer.log.gz").write_bytes(gzip.compress(data))
    shutil.copy(EXCERPTS / "client_ecs_json.jsonl", root / "ecs.jsonl")
    return root


def read_jsonl(path):
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_parse_logs_end_to_end(logs, tmp_path, capsys):
    out = tmp_path / "out"
    pattern = r"(?P<cluster>cluster-[^/]+)/(?P<source>[^/]+)/"
    status = main(
        [
            "parse-logs",
            str(logs),
            "--out",
            str(out),
            "--cluster",
            "fallback",
            "--path-pattern",
            pattern,
            "--workers",
            "2",
        ]
    )
    assert status == 0
    printed = capsys.readouterr().out
    assert (
        "parse-logs: 3 file(s), read 47 lines: 20 events (from 22 lines), 24 skipped, 1 quarantined"
        in printed
    )

    events = [Event.from_row(row) for row in read_jsonl(out / "events.jsonl")]
    by_group = {}
    for e in events:
        by_group.setdefault(e.group_id, []).append(e)
    assert {e.cluster for e in by_group["testtopic-app"]} == {"cluster-a"}
    assert {e.source for e in by_group["testtopic-app"]} == {"broker-1"}  # from the path, not the log prefix
    assert {(e.cluster, e.source) for e in by_group["legacy-consumer-group"]} == {("cluster-a", "app-9")}
    assert {(e.cluster, e.source) for e in by_group["json-group"]} == {("fallback", "c-json-1")}
    assert len(by_group["legacy-consumer-group"]) == 7 and by_group["legacy-consumer-group"][0].line == 11

    [quarantined] = read_jsonl(out / "quarantine.jsonl")
    assert quarantined["source_line"] == 8 and quarantined["reason"].startswith("unknown wording")
    assert quarantined["cluster"] == "fallback" and quarantined["event_date"] == "2024-02-10"
    assert (
        quarantined["source_file"].endswith("ecs.jsonl") and quarantined["ts"] == "2024-02-10T08:32:00.000Z"
    )

    counts = json.loads((out / "counts.json").read_text(encoding="utf-8"))
    assert counts["total"]["read"] == 47 and counts["total"]["quarantined"] == 1
    assert sorted(counts["files"]) == sorted(str(p) for p in logs.rglob("*") if p.is_file())

    first_run = {
        name: (out / name).read_bytes() for name in ("events.jsonl", "quarantine.jsonl", "counts.json")
    }
    assert (
        main(
            [
                "parse-logs",
                str(logs),
                "--out",
                str(out),
                "--cluster",
                "fallback",
                "--path-pattern",
                pattern,
                "--workers",
                "1",
            ]
        )
        == 0
    )
    assert {name: (out / name).read_bytes() for name in first_run} == first_run  # reruns are idempotent


def test_topic_ids_and_time_zone(tmp_path, capsys):
    topic_ids = tmp_path / "topics.yaml"
    topic_ids.write_text("orders: Lb8XbqB9RnK4nZ3JrVwHzA\n", encoding="utf-8")
    out = tmp_path / "out"
    assert (
        main(
            [
                "parse-logs",
                str(EXCERPTS / "broker_4.0_kip848.log"),
                "--out",
                str(out),
                "--topic-ids",
                str(topic_ids),
                "--tz",
                "Europe/Paris",
            ]
        )
        == 0
    )
    events = read_jsonl(out / "events.jsonl")
    assert events[0]["ts"] == "2025-03-10T13:00:00.000Z"  # 14:00 in Paris (CET)
    partitions = {p["topic"] for e in events for p in e.get("partitions", [])}
    assert partitions == {"orders"}


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--tz", "Mars/Olympus"], "unknown time zone"),
        (["--path-pattern", "(unclosed"], "path pattern"),
        (["--path-pattern", "no-groups"], "no named group"),
    ],
)
def test_user_errors_exit_2(tmp_path, capsys, extra, message):
    status = main(
        ["parse-logs", str(EXCERPTS / "broker_1.1_session_timeout.log"), "--out", str(tmp_path / "o"), *extra]
    )
    assert status == 2 and message in capsys.readouterr().err


def test_missing_path_exits_2(tmp_path, capsys):
    assert main(["parse-logs", str(tmp_path / "nope.log"), "--out", str(tmp_path / "o")]) == 2
    assert "no such file or directory" in capsys.readouterr().err


JOIN_LINE = (
    b"[2024-01-01 00:00:%02d,000] INFO [Consumer clientId=c, groupId=g] (Re-)joining group (o.a.k.C)\n"
)


def test_truncated_gzip_keeps_its_complete_lines_and_quarantines_the_rest(tmp_path, capsys):
    data = gzip.compress(b"".join(JOIN_LINE % (i % 60) for i in range(2000)))
    cut = tmp_path / "server.log.gz"
    cut.write_bytes(data[: len(data) // 2])
    out = tmp_path / "out"
    assert main(["parse-logs", str(cut), "--out", str(out)]) == 0
    events = read_jsonl(out / "events.jsonl")
    [row] = read_jsonl(out / "quarantine.jsonl")
    assert 0 < len(events) < 2000 and row["source_line"] == len(events) + 1
    assert row["reason"] == "incomplete last line: the gzip stream ends early (the file is truncated)"
    assert (JOIN_LINE % (len(events) % 60)).decode().startswith(row["raw"]) and row["raw"]
    counts = json.loads((out / "counts.json").read_text(encoding="utf-8"))["total"]
    assert (counts["read"], counts["events"], counts["quarantined"]) == (len(events) + 1, len(events), 1)


def test_an_unreadable_file_counts_as_one_quarantined_line(tmp_path, capsys):
    bad = tmp_path / "broken.log.gz"
    bad.write_bytes(b"\x1f\x8b" + bytes(range(256)) * 4)
    out = tmp_path / "out"
    assert main(["parse-logs", str(bad), "--out", str(out)]) == 0
    [row] = read_jsonl(out / "quarantine.jsonl")
    assert row["reason"].startswith("unreadable file: corrupt gzip data") and row["source_file"] == str(bad)
    assert row["source_line"] == 0
    assert "read 1 lines: 0 events (from 0 lines), 0 skipped, 1 quarantined" in capsys.readouterr().out
    counts = json.loads((out / "counts.json").read_text(encoding="utf-8"))
    assert counts["total"]["quarantined"] == 1 and counts["files"][str(bad)]["quarantined"] == 1


def test_log_date_dates_the_time_only_lines_of_a_file_without_a_date_in_its_name(tmp_path, capsys):
    undated = EXCERPTS / "layout_logback_default_client_undated.log"
    assert main(["parse-logs", str(undated), "--out", str(tmp_path / "without")]) == 0
    rows = read_jsonl(tmp_path / "without" / "quarantine.jsonl")
    assert read_jsonl(tmp_path / "without" / "events.jsonl") == [] and len(rows) == 16  # every group entry
    assert all("without a date" in r["reason"] and "--log-date" in r["reason"] for r in rows)
    without = json.loads((tmp_path / "without" / "counts.json").read_text(encoding="utf-8"))["total"]
    assert (
        main(["parse-logs", str(undated), "--out", str(tmp_path / "with"), "--log-date", "2024-05-06"]) == 0
    )
    events = read_jsonl(tmp_path / "with" / "events.jsonl")
    assert read_jsonl(tmp_path / "with" / "quarantine.jsonl") == [] and len(events) == 12
    assert (events[0]["ts"], events[-1]["ts"]) == ("2024-05-06T23:59:57.120Z", "2024-05-07T00:00:00.211Z")
    dated = json.loads((tmp_path / "with" / "counts.json").read_text(encoding="utf-8"))["total"]
    assert without["quarantined"] == dated["event_lines"] and without["skipped"] == dated["skipped"]


def test_a_bad_log_date_exits_2(tmp_path, capsys):
    status = main(["parse-logs", str(EXCERPTS / "broker_1.1_session_timeout.log"), "--out", str(tmp_path / "o"),
                   "--log-date", "2024-13-01"])  # fmt: skip
    assert status == 2 and "not a YYYY-MM-DD date" in capsys.readouterr().err
