"""Replays of hand-written logs (lines from tests.builders) like the job's: `replay_log(lines, ...)` parses
one broker's server.log with rebalance_core.kafka_logs and replays it (no member logs); `replay_logs`
several brokers' files, `replay_worker_logs` Connect workers' own logs."""

from __future__ import annotations

from rebalance_core.kafka_logs import parse_lines
from rebalance_core.replay import replay
from rebalance_core.replay_common import ReplaySettings


def replay_log(lines: list[str], **settings) -> dict[str, list[dict]]:
    return replay_logs({"server.log": lines}, **settings)


def replay_logs(files: dict[str, list[str]], **settings) -> dict[str, list[dict]]:
    """Several broker files (file name -> lines), parsed apart and replayed together."""
    return replay(_parsed(files, cluster="k"), ReplaySettings(**settings))


def replay_worker_logs(logs: dict[str, list[str]]) -> dict[str, list[dict]]:
    """Connect workers' own logs (worker -> lines, each in its `W/connect.log`), replayed together."""
    return replay(_parsed({f"{worker}/connect.log": lines for worker, lines in logs.items()}, cluster="c1"))


def _parsed(files: dict[str, list[str]], cluster: str) -> list:
    events = []
    for file, lines in files.items():
        parsed = parse_lines(lines, file=file, cluster=cluster)
        assert not parsed.quarantine, parsed.quarantine
        events += parsed.events
    return events


def episodes(out: dict[str, list[dict]]) -> list[tuple]:
    return [
        (e["rounds"], e["first_generation_id"], e["last_generation_id"]) for e in out["rebalance_episodes"]
    ]
