"""Logs of different hosts carry different clocks (NTP keeps them within tens of ms). A member's log whose
clock runs ahead of the broker's contradicts Kafka's request/response order (its JoinGroup seems sent after
the join phase it joined completed); the replay aligns it by that order (rebalance_core.clock_alignment)
and gives the episodes the synchronized logs give."""

from __future__ import annotations

import datetime as dt
import re
from collections import defaultdict

import pytest

from rebalance_core.clock_alignment import member_log_offsets
from rebalance_core.kafka_logs import parse_lines
from rebalance_core.kafka_logs.writer import KafkaLogWriter
from rebalance_core.kafka_logs.writer_lines import BROKER
from rebalance_core.replay import replay
from rebalance_core.simulate import SimulationSettings, simulate
from rebalance_core.timeline import Join, Leave, Timeline

S = 1_000
_TS = re.compile(r"^\[(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3})\]")


def _logs() -> dict[str, list[str]]:
    """c1 alone, c2 joins, c3 joins, c2 leaves (eager range): the broker's and each consumer's log (3.x)."""
    timeline = Timeline(
        topics={"t": 4},
        actions=(Join(0, "c1"), Join(30 * S, "c2"), Join(60 * S, "c3"), Leave(90 * S, "c2")),
        group_id="g",
        start_ms=1_731_060_000_000,
    )
    events = simulate(timeline, SimulationSettings(assignor="range")).events
    files: dict[str, list[str]] = defaultdict(list)
    for line in KafkaLogWriter(broker_era="3.x", client_era="3.x").write_all(events):
        client = re.search(r"clientId=(\w+)", line.text)
        name = "server.log" if line.stream == BROKER else f"{client.group(1) if client else 'c'}.log"
        files[name].extend(line.text.split("\n"))
    return files


def _ahead(lines: list[str], ms: int) -> list[str]:
    """The same log written by a host whose clock runs `ms` ahead."""

    def shift(m: re.Match) -> str:
        at = dt.datetime.strptime(m.group(1), "%Y-%m-%d %H:%M:%S,%f") + dt.timedelta(milliseconds=ms)
        return f"[{at.strftime('%Y-%m-%d %H:%M:%S,%f')[:-3]}]"

    return [_TS.sub(shift, line) for line in lines]


def _replay(files: dict[str, list[str]]):
    events = []
    for name, lines in sorted(files.items()):
        parsed = parse_lines(lines, file=name, cluster="k")
        assert not parsed.quarantine
        events += parsed.events
    return events, replay(events)


def _episodes(out) -> list[tuple]:
    return [
        (e["episode_id"], e["rounds"], e["first_generation_id"], e["last_generation_id"], e["source"])
        for e in out["rebalance_episodes"]
    ]


def _generations(out) -> list[tuple]:
    return [
        (g["generation_id"], g["members"], g["leader_member_id"], g["source"], g["episode_id"])
        for g in out["generations"]
    ]


@pytest.mark.parametrize(
    "ms", [80, 2_000, -150, -2_000], ids=["80ms-ahead", "2s-ahead", "150ms-behind", "2s-behind"]
)
def test_a_consumer_clock_off_the_brokers_gives_the_same_episodes(ms):
    """c2's host runs `ms` ahead (negative: behind): its JoinGroup lines seem sent after the broker
    completed the join phases their responses name, or its responses seem logged before them, which no
    Kafka path does, whatever the size of the shift. Aligned by that order, the episodes and generations
    are those of the synchronized logs; a stop-the-world time that spans c2's and the broker's clocks
    stays within the offset interval the protocol's order leaves open (the JoinGroup round trip)."""
    files = _logs()
    _, synchronized = _replay(files)
    skewed_events, skewed = _replay({**files, "c2.log": _ahead(files["c2.log"], ms)})
    offset = member_log_offsets(skewed_events, 100)["c2.log"]
    assert 0 < offset <= ms if ms > 0 else ms <= offset < 0
    assert _episodes(skewed) == _episodes(synchronized)
    assert _generations(skewed) == _generations(synchronized)
    for was, now in zip(synchronized["rebalance_episodes"], skewed["rebalance_episodes"], strict=True):
        assert (
            now["stw_ms"] == was["stw_ms"]
            or now["source"] == "inferred"
            or abs(now["stw_ms"] - was["stw_ms"]) <= abs(ms - offset)
        )
    assert not skewed["anomalies"]


def test_synchronized_logs_are_left_as_they_are():
    """Clocks that keep the protocol's order need no alignment (the allowance rules cover the rest)."""
    events, _ = _replay(_logs())
    assert member_log_offsets(events, 100) == {}
