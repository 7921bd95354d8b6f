"""The timeline action `rebalance`: the application calls KafkaConsumer.enforceRebalance() (issue 12,
what-if). Classic protocol: the member rejoins with the client reason "rebalance enforced by user" (3.2+,
KafkaConsumer.DEFAULT_REASON), which the coordinator prints in its "Preparing to rebalance" line; KIP-848
does not support it (AsyncKafkaConsumer.enforceRebalance only warns). The what-if extraction turns that
reason into the action, so the as-actual replay has the rebalance nobody's membership caused."""

from __future__ import annotations

import dataclasses

import pytest

from rebalance_core.consumer import ConsumerSimSettings, simulate_consumer_group
from rebalance_core.simulate import SimulationSettings, simulate
from rebalance_core.timeline import EnforceRebalance, Join, Timeline, load_timeline
from rebalance_core.whatif import ExtractionOptions, Scenario, TimelineExtractor, WhatIfConfig, whatif
from schemas.events import EventType, Side

S = 1_000
ENFORCED = (Join(0, "c1"), Join(0, "c2"), EnforceRebalance(60 * S, "c1"))


def classic(*actions, assignor="range"):
    timeline = Timeline(topics={"t": 4}, actions=actions, cluster="k", group_id="g")
    return timeline, simulate(
        timeline, SimulationSettings(assignor=assignor, group_initial_rebalance_delay_ms=0)
    )


def test_a_rebalance_action_loads_from_a_document():
    doc = {
        "topics": {"t": 2},
        "actions": [
            {"at": 0, "action": "join", "member": "c1"},
            {"at": "1m", "action": "rebalance", "member": "c1"},
        ],
    }
    assert load_timeline(doc).actions[-1] == EnforceRebalance(60 * S, "c1")


@pytest.mark.parametrize("assignor, revoked", [("range", True), ("cooperative-sticky", False)])
def test_an_enforced_rebalance_rejoins_with_the_user_reason(assignor, revoked):
    timeline, result = classic(*ENFORCED, assignor=assignor)
    later = [e for e in result.events if e.ts >= timeline.start_ms + 60 * S]
    requested = [e for e in later if e.event_type == EventType.JOIN_REQUESTED.value and e.client_id == "c1"]
    assert (
        requested[0].reason == "rebalance enforced by user" and requested[0].ts == timeline.start_ms + 60 * S
    )
    (prepared,) = [e for e in later if e.event_type == EventType.REBALANCE_PREPARED.value]
    assert prepared.reason.endswith(
        "re-joining group during Stable; client reason: rebalance enforced by user"
    )
    # eager: onJoinPrepare revokes everything first; cooperative: nothing (the subscription is unchanged)
    c1_revoked = [
        e for e in later if e.event_type == EventType.PARTITIONS_REVOKED.value and e.client_id == "c1"
    ]
    assert bool(c1_revoked) == revoked


def test_the_consumer_protocol_ignores_an_enforced_rebalance():
    timeline = Timeline(topics={"t": 4}, actions=ENFORCED)
    calm = Timeline(topics={"t": 4}, actions=ENFORCED[:2])
    run, quiet = (simulate_consumer_group(t, ConsumerSimSettings()) for t in (timeline, calm))
    assert [(e.ts, e.event_type) for e in run.events] == [(e.ts, e.event_type) for e in quiet.events]


def test_the_coordinators_user_reason_is_extracted_as_an_enforced_rebalance():
    timeline, result = classic(*ENFORCED)
    broker = [e for e in result.events if e.side == Side.COORDINATOR.value]
    extractor = TimelineExtractor("k", "g", ExtractionOptions())
    extractor.feed(broker)
    extracted = extractor.finish()
    (enforced,) = [a for a in extracted.timeline.actions if isinstance(a, EnforceRebalance)]
    # the JoinGroup reached the coordinator half a round trip after the call, an eager revocation later
    assert abs(extracted.timeline.start_ms + enforced.at - (timeline.start_ms + 60 * S)) <= 50


@pytest.mark.parametrize("view", ["broker", "both"])
def test_the_as_actual_replay_of_an_enforced_rebalance_reproduces_it(view):
    _, result = classic(*ENFORCED)
    events = [e for e in result.events if view == "both" or e.side == Side.COORDINATOR.value]
    rows = whatif(events, WhatIfConfig((Scenario("as-actual"),)))["whatif_comparison"]
    assert {row["model_check"] for row in rows} == {"passed"}, rows[0]["model_check_detail"]


@pytest.mark.parametrize(
    "client_reason",
    [
        "; client reason: not provided",  # a client older than 3.2 sends no reason (JoinGroup < v8)
        "",  # 2.7-3.1 brokers print none
    ],
)
@pytest.mark.parametrize(
    "actions, input_opens_with_the_rebalance",
    [
        (ENFORCED, False),
        # a lone member in the group before the input: its JoinGroup left just before the first line
        ((Join(0, "c1"), EnforceRebalance(60 * S, "c1")), True),
    ],
)
def test_a_leader_rejoining_a_stable_group_for_no_logged_cause_is_replayed_as_its_rejoin(
    client_reason, actions, input_opens_with_the_rebalance
):
    # GroupCoordinator rebalances for the leader's JoinGroup in Stable (so that the leader can reassign for
    # a topic metadata change its member metadata does not carry); a client that gives no reason leaves the
    # cause in no line, yet the rebalance happened: the as-actual must have it
    _, result = classic(*actions)
    broker = []
    for e in result.events:
        if e.side != Side.COORDINATOR.value:
            continue
        if e.event_type == EventType.REBALANCE_PREPARED.value and "re-joining" in (e.reason or ""):
            if input_opens_with_the_rebalance:
                broker = []
            reason = e.reason.replace("; client reason: rebalance enforced by user", client_reason)
            e = dataclasses.replace(e, reason=reason)
        broker.append(e)
    extractor = TimelineExtractor("k", "g", ExtractionOptions())
    extractor.feed(broker)
    extracted = extractor.finish()
    # (a member known by its member id only is named by it: "c1-<uuid>")
    (rejoin,) = [a for a in extracted.timeline.actions if isinstance(a, EnforceRebalance)]
    assert rejoin.member.startswith("c1")
    assert any("for a cause in no line" in note for note in extracted.notes)
    rows = whatif(broker, WhatIfConfig((Scenario("as-actual"),)))["whatif_comparison"]
    assert {row["model_check"] for row in rows} == {"passed"}, rows[0]["model_check_detail"]
