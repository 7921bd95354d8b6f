"""Hand-written event logs for the replay tests: `ev(ts, type, **fields)` builds one canonical event
(side from the event type), `tps("t-0 t-1")` partitions, `run(events)` one group's replay."""

from __future__ import annotations

import itertools
import json

from rebalance_core.classic.replayer import GroupReplayer
from rebalance_core.events import Event, TopicPartition
from rebalance_core.replay import event_order_key
from rebalance_core.replay_common import ReplaySettings
from schemas.events import COORDINATOR_EVENTS, EventType

CLUSTER, GROUP = "k", "g"
T0 = 1_700_000_000_000  # 2023-11-14T22:13:20Z
# Event ids in creation order. Hand-written events have no file or line, so for two events of the same
# instant and type rank the id is the replay's last tie-break (`event_order_key`): the width keeps the
# text order equal to the creation (list) order whatever the counter stood at before ("e9" > "e10" would
# swap them once some other scenario had been built in the process).
_ids = itertools.count()


def tps(text: str) -> tuple[TopicPartition, ...]:
    """'t-0 t-1' -> (TopicPartition('t', 0), TopicPartition('t', 1))"""
    out = []
    for item in text.split():
        topic, _, number = item.rpartition("-")
        out.append(TopicPartition(topic, int(number)))
    return tuple(out)


def ev(ts: int, event_type: str, **fields) -> Event:
    side = "coordinator" if EventType(event_type) in COORDINATOR_EVENTS else "member"
    for key in ("partitions",):
        if isinstance(fields.get(key), str):
            fields[key] = tps(fields[key])
    if isinstance(fields.get("assignment"), dict):
        fields["assignment"] = {
            m: tps(v) if isinstance(v, str) else v for m, v in fields["assignment"].items()
        }
    for key in ("members", "subscription"):
        if isinstance(fields.get(key), str):
            fields[key] = tuple(fields[key].split())
    if "attributes" in fields:
        fields["attributes"] = {k: str(v) for k, v in fields["attributes"].items()}
    fields.setdefault("cluster", CLUSTER)
    fields.setdefault("group_id", GROUP)
    return Event(event_id=f"e{next(_ids):09d}", ts=T0 + ts, side=side, event_type=event_type, **fields)


def run(events, settings: ReplaySettings | None = None) -> dict[str, list[dict]]:
    replayer = GroupReplayer(CLUSTER, GROUP, settings)
    replayer.feed(sorted(events, key=event_order_key))
    return replayer.finish()


def run_split(events, cuts, settings: ReplaySettings | None = None) -> dict[str, list[dict]]:
    """Replay with a snapshot -> JSON -> resume at every cut position; same output expected."""
    events = sorted(events, key=event_order_key)
    out: dict[str, list[dict]] = {}
    state = None
    bounds = [0, *sorted(cuts), len(events)]
    for lo, hi in itertools.pairwise(bounds):
        replayer = GroupReplayer(CLUSTER, GROUP, settings, state=state)
        replayer.feed(events[lo:hi])
        for name, rows in replayer.drain().items():
            out.setdefault(name, []).extend(rows)
        state = json.loads(json.dumps(replayer.snapshot()))
    replayer = GroupReplayer(CLUSTER, GROUP, settings, state=state)
    for name, rows in replayer.finish().items():
        out.setdefault(name, []).extend(rows)
    return out


def rel(row: dict, *names: str) -> tuple:
    """Row values with timestamps made relative to T0."""
    return tuple(row[n] - T0 if isinstance(row[n], int) and row[n] > T0 // 2 else row[n] for n in names)


def lone_consumer_closes_at_5000() -> list[Event]:
    """Members' logs: one eager consumer (client a, member a-1) is the whole group (the leader's assignment
    lists only it), consumes t-0 and t-1 from 9, and closes at 5000 (onLeavePrepare revokes, LeaveGroup)."""
    return [
        ev(0, "join_sent", client_id="a"),
        ev(5, "join_response", generation_id=1, member_id="a-1", protocol_name="range", client_id="a"),
        ev(6, "assignment_computed", generation_id=1, member_id="a-1", assignment={"a-1": "t-0 t-1"}),
        ev(8, "sync_response", generation_id=1, member_id="a-1", partitions="t-0 t-1", client_id="a"),
        ev(9, "partitions_assigned", member_id="a-1", partitions="t-0 t-1", client_id="a"),
        ev(5000, "partitions_revoked", member_id="a-1", partitions="t-0 t-1", client_id="a"),
        ev(5000, "leave_sent", member_id="a-1", reason="the consumer is being closed", client_id="a"),
    ]
