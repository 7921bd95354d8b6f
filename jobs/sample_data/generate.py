"""Regenerate jobs/sample_data/events.jsonl, the input `rebalance-replay run` replays by default.

    python -m jobs.sample_data.generate

Deterministic: the simulators (rebalance_core.simulate, and rebalance_core.consumer for
KIP-848) are seeded, so the file only changes when they or the scenarios below change. Six groups on
two clusters, over two UTC days, both group protocols (classic and KIP-848 consumer):

  prod-eu/orders     eager (range): a member joins one second before midnight, so the rebalance
                     starts on one day and ends on the next; then a crash (session timeout)
  prod-eu/payments   cooperative-sticky: joins and a leave, two-round rebalances (KIP-429)
  prod-eu/inventory  static membership (KIP-345): a restart within session.timeout.ms (no rebalance)
                     and one beyond it
  prod-us/clicks     roundrobin: a graceful leave, a partition count change
  prod-us/audit      a static group: one member, never rebalances after the first join
  prod-us/search     KIP-848 consumer protocol (server-side uniform assignor): joins and a crash

then a few rows the job must set aside, one of each: a line that is not JSON, an unknown event type,
a row without a group_id, a row whose ts cannot be parsed, and a repeated event (duplicate event_id).
"""

from __future__ import annotations

import json
from pathlib import Path

from rebalance_core.consumer import ConsumerSimSettings, simulate_consumer_group
from rebalance_core.events import Event
from rebalance_core.simulate import load_scenario, simulate
from rebalance_core.timeline import load_timeline

OUT = Path(__file__).with_name("events.jsonl")

SCENARIOS = [
    {
        "cluster": "prod-eu",
        "group_id": "orders",
        "start": "2024-11-08T23:50:00Z",
        "topics": {"orders": 6},
        "settings": {"assignor": "range", "seed": 1},
        "actions": [
            {"at": "0s", "action": "join", "member": "c1"},
            {"at": "0s", "action": "join", "member": "c2"},
            # c3 joins at 23:59:59: c1 and c2 learn of the rebalance at their next heartbeat, so it
            # starts on 2024-11-08 and ends on 2024-11-09.
            {"at": "599s", "action": "join", "member": "c3"},
            {"at": "20m", "action": "crash", "member": "c2"},
        ],
    },
    {
        "cluster": "prod-eu",
        "group_id": "payments",
        "start": "2024-11-08T14:00:00Z",
        "topics": {"payments": 8},
        "settings": {"assignor": "cooperative-sticky", "seed": 2},
        "actions": [
            {"at": "0s", "action": "join", "member": "p1"},
            {"at": "0s", "action": "join", "member": "p2"},
            {"at": "2m", "action": "join", "member": "p3"},
            {"at": "5m", "action": "leave", "member": "p1"},
        ],
    },
    {
        "cluster": "prod-eu",
        "group_id": "inventory",
        "start": "2024-11-09T08:00:00Z",
        "topics": {"inventory": 4},
        "settings": {"assignor": "sticky", "static_membership": True, "session_timeout_ms": "45s", "seed": 3},
        "actions": [
            {"at": "0s", "action": "join", "member": "i1"},
            {"at": "0s", "action": "join", "member": "i2"},
            {"at": "3m", "action": "restart", "member": "i1", "down": "20s", "graceful": False},
            {"at": "6m", "action": "restart", "member": "i2", "down": "90s", "graceful": False},
        ],
    },
    {
        "cluster": "prod-us",
        "group_id": "clicks",
        "start": "2024-11-08T18:30:00Z",
        "topics": {"clicks": 4, "views": 2},
        "settings": {"assignor": "roundrobin", "seed": 4},
        "actions": [
            {"at": "0s", "action": "join", "member": "k1"},
            {"at": "0s", "action": "join", "member": "k2"},
            {"at": "0s", "action": "join", "member": "k3"},
            {"at": "4m", "action": "partitions", "topic": "clicks", "count": 6},
            {"at": "8m", "action": "leave", "member": "k3"},
        ],
    },
    {
        "cluster": "prod-us",
        "group_id": "audit",
        "start": "2024-11-09T02:00:00Z",
        "end": "10m",
        "topics": {"audit": 2},
        "settings": {"assignor": "range", "seed": 5},
        "actions": [{"at": "0s", "action": "join", "member": "a1"}],
    },
]
CONSUMER_PROTOCOL_SCENARIOS = [
    {
        "cluster": "prod-us",
        "group_id": "search",
        "start": "2024-11-09T06:00:00Z",
        "topics": {"queries": 6},
        "actions": [
            {"at": "0s", "action": "join", "member": "s1"},
            {"at": "0s", "action": "join", "member": "s2"},
            {"at": "3m", "action": "join", "member": "s3"},
            {"at": "6m", "action": "crash", "member": "s1"},
        ],
    },
]


def simulated_events() -> list[Event]:
    events: list[Event] = []
    for doc in SCENARIOS:
        timeline, settings = load_scenario(doc)
        events.extend(simulate(timeline, settings).events)
    for doc in CONSUMER_PROTOCOL_SCENARIOS:
        events.extend(simulate_consumer_group(load_timeline(doc), ConsumerSimSettings()).events)
    return sorted(events, key=lambda e: (e.ts, e.cluster, e.group_id, e.line or 0))


def bad_lines(events: list[Event]) -> list[str]:
    """One row of each kind the job quarantines or drops (see the module docstring)."""
    sample = events[len(events) // 2].to_json_dict()
    unknown_type = {**sample, "event_id": "bad-unknown-type", "event_type": "group_rebalanced"}
    no_group = {k: v for k, v in sample.items() if k != "group_id"} | {"event_id": "bad-no-group"}
    bad_ts = {**sample, "event_id": "bad-ts", "ts": "08/11/2024 10:00"}
    return [
        '{"event_id": "bad-json", "ts": "2024-11-08T20:00:00Z", "cluster": "prod-eu"',  # truncated line
        json.dumps(unknown_type, sort_keys=True),
        json.dumps(no_group, sort_keys=True),
        json.dumps(bad_ts, sort_keys=True),
        json.dumps(sample, sort_keys=True),  # the same event again: a duplicate
    ]


def render() -> str:
    """The content of events.jsonl: the simulated events in time order, the bad rows among them."""
    events = simulated_events()
    lines = [json.dumps(e.to_json_dict(), sort_keys=True) for e in events]
    for offset, line in enumerate(bad_lines(events)):
        lines.insert(len(lines) // 3 + offset * 7, line)
    return "\n".join(lines) + "\n"


def main() -> None:
    OUT.write_text(render())
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
