"""Broker-only replays from Kafka's own server.log text (lines from tests.builders): `replay_log(text, ...)` parses the lines with
rebalance_core.kafka_logs and replays them like the job does (no member logs)."""

from __future__ import annotations

from rebalance_core.kafka_logs import parse_lines
from rebalance_core.replay import replay
from rebalance_core.replay_common import ReplaySettings


def replay_log(lines: list[str], **settings) -> dict[str, list[dict]]:
    return replay_logs({"server.log": lines}, **settings)


def replay_logs(files: dict[str, list[str]], **settings) -> dict[str, list[dict]]:
    """Several broker files (file name -> lines), parsed apart and replayed together."""
    events = []
    for file, lines in files.items():
        parsed = parse_lines(lines, file=file, cluster="k")
        assert not parsed.quarantine, parsed.quarantine
        events += parsed.events
    return replay(events, ReplaySettings(**settings))


def episodes(out: dict[str, list[dict]]) -> list[tuple]:
    return [
        (e["rounds"], e["first_generation_id"], e["last_generation_id"]) for e in out["rebalance_episodes"]
    ]
