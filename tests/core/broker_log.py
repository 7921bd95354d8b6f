"""Broker-only replays from Kafka's own server.log text: `replay_log(text, ...)` parses the lines with
rebalance_core.kafka_logs and replays them like the job does (no member logs)."""

from __future__ import annotations

from rebalance_core.kafka_logs import parse_lines
from rebalance_core.replay import replay
from rebalance_core.replay_common import ReplaySettings

COORDINATOR = "kafka.coordinator.group.GroupCoordinator"


def scala_line(ts: str, message: str, broker: int = 1) -> str:
    """One 2.x/3.x Scala GroupCoordinator line in Kafka's shipped layout; `ts` is 'HH:MM:SS,mmm' on
    2024-11-08."""
    return f"[2024-11-08 {ts}] INFO [GroupCoordinator {broker}]: {message} ({COORDINATOR})"


def replay_log(lines: list[str], **settings) -> dict[str, list[dict]]:
    parsed = parse_lines(lines, file="server.log", cluster="k")
    assert not parsed.quarantine, parsed.quarantine
    return replay(parsed.events, ReplaySettings(**settings))


def episodes(out: dict[str, list[dict]]) -> list[tuple]:
    return [
        (e["rounds"], e["first_generation_id"], e["last_generation_id"]) for e in out["rebalance_episodes"]
    ]
