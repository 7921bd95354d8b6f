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


def test_corrupt_gzip_is_quarantined(tmp_path, capsys):
    bad = tmp_path / "broken.log.gz"
    bad.write_bytes(gzip.compress(b"[2024-01-01 00:00:00,000] INFO x (a.B)\n" * 50)[:40])
    out = tmp_path / "out"
    assert main(["parse-logs", str(bad), "--out", str(out)]) == 0
    [row] = read_jsonl(out / "quarantine.jsonl")
    assert row["reason"].startswith("unreadable file") and row["source_file"] == str(bad)
