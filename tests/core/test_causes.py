"""The cause of every rebalance episode: Kafka's reason wordings of every version, and simulations whose
cause is known, replayed with all events and from the broker's side alone."""

from __future__ import annotations

import json

import pytest

from rebalance_core.causes import CauseTracker
from rebalance_core.explain import new_explained_replayer, replay_explained
from rebalance_core.rebalance_reasons import Cause, classify_reason, split_client_reason
from rebalance_core.replay import event_order_key
from rebalance_core.replay_common import ReplaySettings
from rebalance_core.simulate import load_scenario, simulate
from tests.core.replay_helpers import CLUSTER, GROUP, T0, ev
from tests.core.sim_helpers import coordinator_only

M = "consumer-1-0b9f5d3e-2c4a-4e1b-8f6d-7a5c3b2e1d09"

# (reason as Kafka logs it, cause, member it names, instance it names)
REASONS = [
    # Scala GroupCoordinator 2.1-2.2 / 2.3 ("instanceid") / 2.4-3.1 / 3.2+ (client reason, KIP-800)
    (f"Adding new member {M}", Cause.MEMBER_JOINED, M, None),
    (f"Adding new member {M} with group instanceid Some(pod-2)", Cause.MEMBER_JOINED, M, "pod-2"),
    (f"Adding new member {M} with group instance id None", Cause.MEMBER_JOINED, M, None),
    (
        f"Adding new member {M} with group instance id None; client reason: not provided",
        Cause.MEMBER_JOINED,
        M,
        None,
    ),
    (
        f"Adding new member {M} with group instance id null; client reason: need to re-join with the given "
        f"member-id: {M}",
        Cause.MEMBER_JOINED,
        M,
        None,
    ),  # Java 4.0
    (f"Member {M} joining group during PreparingRebalance; client reason: x", Cause.MEMBER_JOINED, M, None),
    (f"removing member {M} on heartbeat expiration", Cause.SESSION_TIMEOUT, M, None),
    (f"removing member {M}. on heartbeat expiration.", Cause.SESSION_TIMEOUT, M, None),
    (f"removing member {M} on LeaveGroup", Cause.MEMBER_LEFT, M, None),
    (
        f"Removing member {M} on LeaveGroup; client reason: the consumer is being closed",
        Cause.MEMBER_LEFT,
        M,
        None,
    ),
    (
        f"Removing member {M} on LeaveGroup; client reason: consumer poll timeout has expired.",
        Cause.POLL_TIMEOUT,
        M,
        None,
    ),
    (f"explicit `LeaveGroup` request for ({M}) members.", Cause.MEMBER_LEFT, M, None),  # Java 3.7+
    (f"Removing Set({M}) on pending sync request expiration", Cause.SYNC_TIMEOUT, f"Set({M})", None),
    (
        f"Updating metadata for static member {M} with instance id pod-1",
        Cause.STATIC_MEMBER_REPLACED,
        M,
        "pod-1",
    ),
    (
        f"Group's selectedProtocol will change because static member {M} with instance id pod-1 joined with change "
        "of protocol; client reason: x",
        Cause.STATIC_MEMBER_REPLACED,
        M,
        "pod-1",
    ),
    (f"leader {M} re-joining group during Stable", Cause.LEADER_REJOINED, M, None),  # 2.x
    (
        f"Leader {M} re-joining group during Stable; client reason: cached metadata has changed from x to y",
        Cause.METADATA_CHANGED,
        M,
        None,
    ),
    (
        f"Leader {M} re-joining group during Stable; client reason: rebalance enforced by user",
        Cause.ENFORCED,
        M,
        None,
    ),
    (f"Updating metadata for member {M} during Stable", Cause.SUBSCRIPTION_CHANGED, M, None),
    (
        f"Updating metadata for member {M} during CompletingRebalance; client reason: subscription has changed",
        Cause.SUBSCRIPTION_CHANGED,
        M,
        None,
    ),
    (
        f"error when storing group assignment during SyncGroup (member: {M})",
        Cause.ASSIGNMENT_STORE_FAILED,
        M,
        None,
    ),
    (
        f"Error COORDINATOR_NOT_AVAILABLE when storing group assignment during SyncGroup (member: {M})",
        Cause.ASSIGNMENT_STORE_FAILED,
        M,
        None,
    ),
    (
        "Freshly-loaded group g1 is over capacity (10). Rebalancing in order to give a chance for consumers to "
        "commit offsets",
        Cause.COORDINATOR_MOVED,
        None,
        None,
    ),
    ("Downgrade group g1 from consumer to classic.", Cause.GROUP_CONVERTED, None, None),
    # a member's own reason ("Request joining group due to: R", 3.0+)
    ("cached metadata has changed", Cause.METADATA_CHANGED, None, None),
    ("subscription has changed", Cause.SUBSCRIPTION_CHANGED, None, None),
    ("encountered UNKNOWN_MEMBER_ID from HEARTBEAT response", Cause.MEMBER_JOINED, None, None),
    ("encountered FENCED_INSTANCE_ID from HEARTBEAT response", Cause.STATIC_MEMBER_REPLACED, None, None),
    (
        "rebalance failed due to 'This is not the correct coordinator.' (NotCoordinatorException)",
        Cause.COORDINATOR_MOVED,
        None,
        None,
    ),
    ("consumer poll timeout has expired", Cause.POLL_TIMEOUT, None, None),
    # KIP-848 (the replay names the epoch bump's cause)
    ("member session expired", Cause.SESSION_TIMEOUT, None, None),
    ("topic metadata changed", Cause.METADATA_CHANGED, None, None),
]


@pytest.mark.parametrize(("reason", "cause", "member", "instance"), REASONS, ids=[r[0][:50] for r in REASONS])
def test_every_kafka_reason_wording_names_its_cause_and_member(reason, cause, member, instance):
    got = classify_reason(reason)
    assert got is not None
    assert (got.cause, got.member_id, got.instance_id) == (cause, member, instance)


@pytest.mark.parametrize(
    "reason",
    [
        None,
        "",
        "group is already rebalancing",
        "need to revoke partitions and re-join",
        "rebalance started",
        "Need to revoke partitions [t-1] and re-join the group",
    ],
)
def test_a_reason_naming_no_cause_is_not_guessed(reason):
    assert classify_reason(reason) is None


# ----------------------------------------------------------------------------- known simulations
def _simulate(*actions, **settings):
    doc = {
        "group_id": GROUP,
        "start": "2024-11-08T10:00:00Z",
        "topics": {"t": 6},
        "settings": {"assignor": "range", **settings},
        "actions": [
            {"at": "0s", "action": "join", "member": "c1"},
            {"at": "0s", "action": "join", "member": "c2"},
            *actions,
        ],
    }
    timeline, sim_settings = load_scenario(doc)
    return simulate(timeline, sim_settings).events


SIMULATIONS = {
    "crash": ([{"at": "60s", "action": "crash", "member": "c2"}], {}, Cause.SESSION_TIMEOUT),
    "gc_pause": (
        [{"at": "60s", "action": "pause", "member": "c2", "duration": "60s", "kind": "gc"}],
        {},
        Cause.SESSION_TIMEOUT,
    ),
    "close": ([{"at": "60s", "action": "leave", "member": "c2"}], {}, Cause.MEMBER_LEFT),
    "slow_poll": (
        [{"at": "60s", "action": "pause", "member": "c2", "duration": "400s", "kind": "poll"}],
        {},
        Cause.POLL_TIMEOUT,
    ),
    "partitions_added": (
        [{"at": "60s", "action": "partitions", "topic": "t", "count": 8}],
        {},
        Cause.METADATA_CHANGED,
    ),
    "scale_out": ([{"at": "60s", "action": "join", "member": "c3"}], {}, Cause.MEMBER_JOINED),
    "cooperative_scale_out": (
        [{"at": "60s", "action": "join", "member": "c3"}],
        {"assignor": "cooperative-sticky"},
        Cause.MEMBER_JOINED,
    ),
}


@pytest.mark.parametrize(
    "reason, head, client",
    [
        # GroupCoordinator / GroupMetadataManager append the JoinGroup's reason (KIP-800, 3.2+)
        (
            "Updating metadata for member m-1 during Stable; client reason: cached metadata has changed",
            "Updating metadata for member m-1 during Stable",
            "cached metadata has changed",
        ),
        # a 2.x-3.1 client sends none: JoinGroupRequest.joinReason prints "not provided"
        (
            "Leader m-1 re-joining group during Stable; client reason: not provided",
            "Leader m-1 re-joining group during Stable",
            "not provided",
        ),
        # a Connect worker sends an empty one (the line may lose its trailing space)
        (
            "Updating metadata for member w-1 during Stable; client reason:",
            "Updating metadata for member w-1 during Stable",
            "",
        ),
        # a broker before 3.2, or a cause of the coordinator's own: no client reason
        (
            "Adding new member m-2 with group instance id None",
            "Adding new member m-2 with group instance id None",
            None,
        ),
        (None, "", None),
    ],
)
def test_a_coordinator_reason_splits_into_its_head_and_the_quoted_client_reason(reason, head, client):
    assert split_client_reason(reason) == (head, client)


@pytest.mark.parametrize("view", ["all events", "broker only"])
@pytest.mark.parametrize("name", sorted(SIMULATIONS))
def test_the_episode_after_the_action_has_the_simulated_cause(name, view):
    actions, settings, cause = SIMULATIONS[name]
    events = _simulate(*actions, **settings)
    if view == "broker only":
        events = coordinator_only(events)
    out = replay_explained(events, ReplaySettings(topics={"t": 6}))
    episodes = sorted(out["rebalance_episodes"], key=lambda r: r["started_at"] or 0)
    assert episodes[0]["cause"] == Cause.MEMBER_JOINED.value  # the group forms
    after = [r for r in episodes if r["started_at"] >= T_ACTION]
    assert after, "the action caused no episode"
    assert after[0]["cause"] == cause.value
    if cause is not Cause.METADATA_CHANGED:  # the leader (c1) rejoins for a partition change
        assert after[0]["trigger_client_id"] == "c3" if name.endswith("scale_out") else "c2"


T_ACTION = 1_731_060_000_000 + 60_000  # 2024-11-08T10:01:00Z


def test_the_daily_summary_counts_episodes_per_cause():
    events = _simulate(
        {"at": "60s", "action": "crash", "member": "c2"}, {"at": "200s", "action": "join", "member": "c3"}
    )
    out = replay_explained(events)
    (summary,) = out["group_daily_summary"]
    assert summary["causes"] == {"member_joined": 2, "session_timeout": 1}
    assert sum(summary["causes"].values()) == summary["rebalances"]


# ------------------------------------------------------------------------------ hand-written evidence
def _explain(events, **settings):
    return replay_explained(sorted(events, key=event_order_key), ReplaySettings(**settings))


def test_a_broker_without_reasons_is_explained_by_the_removal_it_logged():
    # 0.10-2.0 brokers print no reason on the Preparing line; "has failed, removing it" names the cause
    out = _explain(
        [
            ev(0, "join_completed", generation_id=1, leader_id="m1", members="m1 m2"),
            ev(10, "assignment_received", generation_id=1),
            ev(
                50_000,
                "member_removed",
                member_id="m2",
                reason="session_timeout",
                client_id="c2",
                attributes={"client_host": "/10.0.0.7"},
            ),
            ev(50_000, "rebalance_prepared", generation_id=1),
            ev(50_010, "join_completed", generation_id=2, leader_id="m1", members="m1"),
            ev(50_020, "assignment_received", generation_id=2),
        ]
    )
    last = max(out["rebalance_episodes"], key=lambda r: r["started_at"] or 0)
    assert (last["cause"], last["trigger_member_id"], last["trigger_client_id"], last["trigger_host"]) == (
        "session_timeout",
        "m2",
        "c2",
        "10.0.0.7",
    )
    assert last["cause_raw_reason"] is None


def test_a_leave_group_sent_on_poll_timeout_is_a_poll_timeout_even_when_the_broker_does_not_say():
    out = _explain(
        [
            ev(0, "join_completed", generation_id=1, leader_id="m1", members="m1 m2"),
            ev(10, "assignment_received", generation_id=1),
            ev(299_990, "poll_timeout_expired", member_id="m2", client_id="c2"),
            ev(300_000, "rebalance_prepared", generation_id=1, reason="removing member m2 on LeaveGroup"),
            ev(300_010, "join_completed", generation_id=2, leader_id="m1", members="m1"),
            ev(300_020, "assignment_received", generation_id=2),
        ]
    )
    last = max(out["rebalance_episodes"], key=lambda r: r["started_at"] or 0)
    assert last["cause"] == "poll_timeout"
    # the replay completes a 2.4-3.1 broker's reason with the poll timeout its member logged (3.2+ wording)
    assert last["cause_raw_reason"].startswith("removing member m2 on LeaveGroup")


def test_session_expiries_right_after_the_coordinator_moved_are_caused_by_the_move():
    out = _explain(
        [
            ev(0, "join_completed", generation_id=1, leader_id="m1", members="m1 m2", source="broker-1"),
            ev(10, "assignment_received", generation_id=1, source="broker-1"),
            ev(20_000, "group_loaded", generation_id=1, source="broker-2"),
            ev(45_000, "member_removed", member_id="m2", reason="session_timeout", source="broker-2"),
            ev(
                45_000,
                "rebalance_prepared",
                generation_id=1,
                source="broker-2",
                reason="removing member m2 on heartbeat expiration",
            ),
            ev(45_010, "join_completed", generation_id=2, leader_id="m1", members="m1", source="broker-2"),
            ev(45_020, "assignment_received", generation_id=2, source="broker-2"),
        ]
    )
    last = max(out["rebalance_episodes"], key=lambda r: r["started_at"] or 0)
    assert last["cause"] == "coordinator_moved"
    assert last["cause_raw_reason"] == "removing member m2 on heartbeat expiration"


def test_an_unexplained_rebalance_is_unknown():
    out = _explain(
        [
            ev(0, "rebalance_prepared", generation_id=4),
            ev(10, "join_completed", generation_id=5, leader_id="m1", members="m1"),
            ev(20, "assignment_received", generation_id=5),
        ]
    )
    (episode,) = out["rebalance_episodes"]
    assert episode["cause"] == "unknown"
    assert episode["trigger_member_id"] is None


def test_causes_survive_a_snapshot_between_the_evidence_and_the_episode_end():
    events = sorted(
        [
            ev(0, "join_completed", generation_id=1, leader_id="m1", members="m1 m2"),
            ev(10, "assignment_received", generation_id=1),
            ev(50_000, "member_removed", member_id="m2", reason="session_timeout", client_id="c2"),
            ev(50_000, "rebalance_prepared", generation_id=1),
            ev(50_010, "join_completed", generation_id=2, leader_id="m1", members="m1"),
            ev(50_020, "assignment_received", generation_id=2),
        ],
        key=event_order_key,
    )
    first = new_explained_replayer(CLUSTER, GROUP, ReplaySettings(final=False), None, events[:4])
    first.feed(events[:4])
    first.finish()
    state = json.loads(json.dumps(first.snapshot()))
    second = new_explained_replayer(CLUSTER, GROUP, ReplaySettings(), state, events[4:])
    second.feed(events[4:])
    out = second.finish()
    last = max(out["rebalance_episodes"], key=lambda r: r["started_at"] or 0)
    assert (last["cause"], last["trigger_client_id"]) == ("session_timeout", "c2")


def test_the_tracker_state_is_bounded():
    tracker = CauseTracker()
    for i in range(5_000):
        tracker.observe(ev(i, "join_received", member_id=f"m{i}", client_id="c"))
    assert len(tracker.evidence) <= tracker.settings.evidence_kept
    assert len(tracker.members) <= tracker.settings.members_kept
    assert T0  # events are relative to the helpers' T0
