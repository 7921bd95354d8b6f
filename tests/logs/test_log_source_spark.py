"""`read_kafka_logs` on a local SparkSession: the same events as the pure parser, in the event schema,
quarantine rows in the quarantine table's columns, and the line counts."""

from __future__ import annotations

import gzip
import shutil

import pytest

from jobs.log_source import LogOptions, parse_file, read_kafka_logs
from schemas.events import EVENT_COLUMN_NAMES, event_spark_schema
from schemas.tables import QUARANTINE
from tests.logs.kafka_log_fixtures import EXCERPTS, REAL, parse_fixture

pytestmark = pytest.mark.spark


# The plain files' plans: both small files read whole (the default `whole_file_bytes`), or line by line
# (`whole_file_bytes` 0) with `large_file_bytes`: connect.log (the larger) and ecs.jsonl in scans of their
# own, connect.log alone in one and ecs.jsonl in the shared `_metadata` scan, or both in the shared scan.
PLANS = {"whole-files": "whole", "own-scans": 0, "own-and-shared": "connect", "shared-scan": None}


@pytest.mark.parametrize("plan", PLANS.values(), ids=PLANS.keys())
def test_read_kafka_logs(spark, tmp_path, plan):
    root = tmp_path / "logs"
    (root / "nested").mkdir(parents=True)
    shutil.copy(REAL / "12_client_connect_incremental_cooperative.log", root / "connect.log")
    (root / "nested" / "broker.log.gz").write_bytes(
        gzip.compress((REAL / "05_broker_3.8_classic_join_leave.log").read_bytes())
    )
    shutil.copy(EXCERPTS / "client_ecs_json.jsonl", root / "nested" / "ecs.jsonl")
    expected = [
        parse_fixture(p)
        for p in (
            REAL / "12_client_connect_incremental_cooperative.log",
            REAL / "05_broker_3.8_classic_join_leave.log",
            EXCERPTS / "client_ecs_json.jsonl",
        )
    ]

    options = {"cluster": "prod", "tz": "UTC"}
    if plan != "whole":
        options["whole_file_bytes"] = 0
    if plan == "whole":
        assert (root / "connect.log").stat().st_size < LogOptions().whole_file_bytes
    elif plan == "connect":
        options["large_file_bytes"] = (root / "connect.log").stat().st_size
        assert (root / "nested" / "ecs.jsonl").stat().st_size < options["large_file_bytes"]
    elif plan is not None:
        options["large_file_bytes"] = plan

    events, quarantine, counts = read_kafka_logs(spark, str(root), options)

    assert events.schema == event_spark_schema() and events.columns == EVENT_COLUMN_NAMES
    rows = events.collect()
    assert len({r["event_id"] for r in rows}) == len(rows)
    assert sorted((r["group_id"], r["event_type"], r["line"]) for r in rows) == sorted(
        (e.group_id, e.event_type, e.line) for result in expected for e in result.events
    )
    assert {r["cluster"] for r in rows} == {"prod"}
    [sync4] = [r for r in rows if r["event_type"] == "sync_response" and r["generation_id"] == 4]
    assert sync4["attributes"]["delay_ms"] == "0" and sync4["file"].endswith("connect.log")
    assert str(sync4["ts"]) == "2022-03-13 13:56:48.996000"
    [q] = quarantine.collect()
    assert quarantine.columns == [c.name for c in QUARANTINE]
    assert (q["cluster"], q["group_id"], q["source_line"], str(q["event_date"])) == (
        "prod",
        "json-group",
        8,
        "2024-02-10",
    )
    assert counts == {
        "files": 3,
        "read": sum(r.counts.read for r in expected),
        "events": sum(r.counts.events for r in expected),
        "event_lines": sum(r.counts.event_lines for r in expected),
        "skipped": sum(r.counts.skipped for r in expected),
        "quarantined": 1,
    }


def test_unknown_option_is_an_error(spark):
    with pytest.raises(ValueError, match="unknown kafka-log option"):
        read_kafka_logs(spark, str(REAL), {"timezone": "UTC"})


NOISE = [
    b"[2024-02-10 10:00:00,000] INFO [Log partition=t-%d, dir=/k] Rolled new log segment at offset 5 (kafka.log.Log)",
    b"[2024-02-10 10:00:00,000] ERROR [ReplicaFetcher replicaId=1, leaderId=2, fetcherId=0] Error for partition t-%d (k.s.R)",
    b"java.io.IOException: Connection to 2 was disconnected before the response was read %d",
    b"\tat org.apache.kafka.clients.NetworkClientUtils.sendAndReceive(NetworkClientUtils.java:%d)",
    b"[2024-02-10 10:00:00,000] INFO caf\xe9 \xff not UTF-8 %d (a.B)\r",
]


@pytest.mark.parametrize("option", ["large_file_bytes", "whole_file_bytes"])
def test_a_file_size_option_that_is_not_a_byte_count_is_an_error(spark, option):
    with pytest.raises(ValueError, match=option):
        read_kafka_logs(spark, str(REAL), {option: "64M"})


def test_a_lone_files_partitions_follow_its_byte_order(spark, tmp_path):
    """What a file read by a scan of its own relies on (`_own_scan`): with several splits, each split
    is a partition, in the file's byte order, and its lines come in file order."""
    from pyspark.sql import functions as F

    path = tmp_path / "server.log"
    path.write_bytes(b"".join(b"line %06d\n" % i for i in range(5000)))
    previous = spark.conf.get("spark.sql.files.maxPartitionBytes")
    spark.conf.set("spark.sql.files.maxPartitionBytes", "4096")
    try:
        rows = (
            spark.read.text(str(path))
            .select(
                F.spark_partition_id().alias("part"),
                F.monotonically_increasing_id().alias("id"),
                F.col("_metadata.file_block_start").alias("block"),
                "value",
            )
            .collect()
        )
    finally:
        spark.conf.set("spark.sql.files.maxPartitionBytes", previous)
    blocks = sorted({(r["part"], r["block"]) for r in rows})
    assert len(blocks) > 10 and [b for _, b in blocks] == sorted(b for _, b in blocks)
    assert len({p for p, _ in blocks}) == len(blocks)
    in_order = [r["value"] for r in sorted(rows, key=lambda r: r["id"])]
    assert in_order == [f"line {i:06d}" for i in range(5000)]


@pytest.mark.parametrize("large_file_bytes", [0, 1 << 40], ids=["own-scan", "shared-scan"])
def test_a_file_read_in_many_blocks_parses_as_the_whole_file(spark, tmp_path, large_file_bytes):
    """Splits fall anywhere (inside multi-line entries too): numbering and entries span the blocks, the
    noise left out in the JVM is counted as skipped, every line is counted; whether the file is read by
    a scan of its own (path a literal, block the partition) or by the shared scan (from `_metadata`)."""
    lines = []
    for name in ("12_client_connect_incremental_cooperative.log", "05_broker_3.8_classic_join_leave.log"):
        for i, line in enumerate((REAL / name).read_bytes().splitlines()):
            lines.append(line)
            lines.extend(NOISE[(i + k) % len(NOISE)] % i for k in range(i % 4))
    path = tmp_path / "server.log"
    path.write_bytes(b"\n".join(lines) + b"\n")
    expected = parse_file(str(path), LogOptions())
    previous = spark.conf.get("spark.sql.files.maxPartitionBytes")
    spark.conf.set("spark.sql.files.maxPartitionBytes", "1024")
    try:
        blocks = spark.read.text(str(path)).select("_metadata.file_block_start").distinct().count()
        options = {"large_file_bytes": large_file_bytes, "whole_file_bytes": 0}
        events, quarantine, counts = read_kafka_logs(spark, str(tmp_path), options)
        rows = events.collect()
        quarantined = quarantine.collect()
    finally:
        spark.conf.set("spark.sql.files.maxPartitionBytes", previous)
    assert blocks > 10
    assert sorted((r["line"], r["event_type"], r["event_id"]) for r in rows) == sorted(
        (e.line, e.event_type, e.event_id) for e in expected.events
    )
    assert sorted((q["source_line"], q["reason"]) for q in quarantined) == sorted(
        (q.line, q.reason) for q in expected.quarantine
    )
    assert counts == {
        "files": 1,
        **{k: v for k, v in expected.counts.as_dict().items() if k != "skipped_by_reason"},
    }
    assert counts["read"] == len(lines) == counts["event_lines"] + counts["skipped"] + counts["quarantined"]


def test_own_scans_unioned_with_the_shared_scan_keep_every_line_in_its_file(spark, tmp_path):
    """Several multi-split large files, each in a scan of its own, unioned with the shared scan of the
    small files: each line keeps its file and number (an event's raw text is the file's line at its
    number), the events, quarantine and counts are the pure parser's file by file. The names need
    quoting in a URI (space, %, a literal %20, non-ASCII) or escaping in a Hadoop glob ([ ]): the path
    Spark's listing gives is plain, `_metadata.file_path` percent-encoded, and the text and binaryFile
    sources glob the paths they are given."""
    sources = {
        "server 1%.log": REAL / "12_client_connect_incremental_cooperative.log",
        "sérveur [2].log": REAL / "05_broker_3.8_classic_join_leave.log",
        "small %20 é.jsonl": EXCERPTS / "client_ecs_json.jsonl",
        "broker.log": REAL / "05_broker_3.8_classic_join_leave.log",
        "rotated %20 [1].log.gz": EXCERPTS / "client_ecs_json.jsonl",  # read whole (binaryFile)
    }
    large = ("server 1%.log", "sérveur [2].log")
    for name, source in sources.items():
        lines = []
        for i, line in enumerate(source.read_bytes().splitlines()):
            lines.append(line)
            if name in large:
                lines.extend(NOISE[(i + k) % len(NOISE)] % i for k in range(4))
        data = b"\n".join(lines) + b"\n"
        (tmp_path / name).write_bytes(gzip.compress(data) if name.endswith(".gz") else data)
    sizes = {name: (tmp_path / name).stat().st_size for name in sources}
    threshold = min(sizes[name] for name in large)
    assert threshold > 4 * 1024  # each large file in several splits of maxPartitionBytes (below)
    assert all(sizes[name] < threshold for name in sources if name not in large)
    expected = {str(tmp_path / name): parse_file(str(tmp_path / name), LogOptions()) for name in sources}
    previous = spark.conf.get("spark.sql.files.maxPartitionBytes")
    spark.conf.set("spark.sql.files.maxPartitionBytes", "1024")
    try:
        events, quarantine, counts = read_kafka_logs(
            spark, str(tmp_path), {"large_file_bytes": threshold, "whole_file_bytes": 0}
        )
        rows = events.collect()
        quarantined = quarantine.collect()
    finally:
        spark.conf.set("spark.sql.files.maxPartitionBytes", previous)

    assert {r["file"] for r in rows} == set(expected)
    for row in rows:
        data = (tmp_path / row["file"]).read_bytes()
        data = gzip.decompress(data) if row["file"].endswith(".gz") else data
        file_lines = data.decode("utf-8", "replace").split("\n")
        assert row["raw"].split("\n")[0] == file_lines[row["line"] - 1].rstrip("\r")
    assert sorted((r["file"], r["line"], r["event_type"], r["event_id"], r["raw"]) for r in rows) == sorted(
        (e.file, e.line, e.event_type, e.event_id, e.raw)
        for result in expected.values()
        for e in result.events
    )
    assert sorted((q["source_file"], q["source_line"], q["reason"]) for q in quarantined) == sorted(
        (q.file, q.line, q.reason) for result in expected.values() for q in result.quarantine
    )
    totals = [r.counts.as_dict() for r in expected.values()]
    assert counts == {
        "files": len(sources),
        **{k: sum(t[k] for t in totals) for k in totals[0] if k != "skipped_by_reason"},
    }
    assert counts["read"] == counts["event_lines"] + counts["skipped"] + counts["quarantined"]
