"""The replay takes a client's own settings from its config dump (`client_config`) where the broker's
lines do not state them, before ReplaySettings' defaults; where members disagree, the coordinator's view
(rebalance_core.client_config): session timeout per member, the assignor by Kafka's protocol vote, eager
when any member revokes eagerly."""

from __future__ import annotations

import pytest

from rebalance_core import client_config
from rebalance_core.classic.replayer import GroupReplayer
from rebalance_core.replay_common import ReplaySettings
from tests.builders import config_dump, consumer_2x, consumer_3x
from tests.core.broker_log import replay_log
from tests.core.replay_helpers import ev
from tests.core.test_replay_broker_only import C2, _c2_crashes, _ms


def with_dumps(broker_lines: list[str], *dumps: list[str]) -> list[str]:
    return [line for dump in dumps for line in dump] + broker_lines


@pytest.mark.parametrize(
    ("settings", "stopped_at"),
    [
        (consumer_2x(client_id="c2", **{"session.timeout.ms": "10000"}), "10:04:50,000"),
        (consumer_3x(client_id="c2", **{"session.timeout.ms": "20000"}), "10:04:40,000"),
        # another client's session timeout is not c2's (classic: each member's own)
        (consumer_2x(client_id="c1", **{"session.timeout.ms": "10000"}), "10:05:00,000"),
    ],
)
def test_a_crashed_members_stop_uses_its_own_configured_session_timeout(settings, stopped_at):
    """GroupCoordinator expires a member session.timeout.ms (its own, from its JoinGroup) after its last
    heartbeat; 2.x/3.x removal lines do not print it, the member's config dump does."""
    dump = config_dump("2024-11-08 09:00:00,000", "ConsumerConfig", {**settings, "group.id": "g1"})
    out = replay_log(with_dumps(_c2_crashes(), dump), topics={"t": 4}, default_assignor="range")
    crashed = [m for m in out["partition_movements"] if m["from_member_id"] == C2]
    assert crashed and {m["revoked_at"] for m in crashed} == {_ms(stopped_at)}
    assert {m["source"] for m in crashed} == {"inferred"}  # still an estimate


def test_the_configured_assignor_infers_the_broker_only_assignment():
    """A broker log never names the assignor of a 2.x group; the members' dumps do (roundrobin here), and
    it wins over ReplaySettings.default_assignor."""
    dumps = [
        config_dump("2024-11-08 09:00:00,000", "ConsumerConfig", consumer_2x(client_id=c))
        for c in ("c1", "c2")
    ]
    configured = replay_log(with_dumps(_c2_crashes(), *dumps), topics={"t": 4}, default_assignor="range")
    by_default = replay_log(_c2_crashes(), topics={"t": 4}, default_assignor="roundrobin")
    assert configured["assignments"] and configured["assignments"] == by_default["assignments"]
    assert (
        configured["assignments"]
        != replay_log(_c2_crashes(), topics={"t": 4}, default_assignor="range")["assignments"]
    )


def test_a_cooperative_config_makes_the_group_cooperative_and_one_eager_member_makes_it_eager():
    coop = ev(0, "client_config", client_id="a", protocol_name="cooperative-sticky")
    coop.attributes = {"assignors": "cooperative-sticky", "rebalance_protocol": "cooperative"}
    replayer = GroupReplayer("k", "g", ReplaySettings(default_assignor="range"))
    replayer.feed([coop])
    assert replayer.protocol == "cooperative"
    # a rolling upgrade's member still offering range first revokes eagerly (ConsumerCoordinator)
    eager = ev(1, "client_config", client_id="b", protocol_name="range")
    eager.attributes = {"assignors": "range,cooperative-sticky", "rebalance_protocol": "eager"}
    replayer.feed([eager])
    assert replayer.protocol == "eager"
    # the replay's saved state keeps them
    resumed = GroupReplayer("k", "g", ReplaySettings(), state=replayer.snapshot())
    assert resumed.protocol == "eager" and resumed.client_configs == replayer.client_configs


@pytest.mark.parametrize(
    ("offers", "selected"),
    [
        ([["range"]], "range"),
        ([["range", "cooperative-sticky"], ["cooperative-sticky"]], "cooperative-sticky"),  # the common one
        ([["sticky", "range"], ["range", "sticky"], ["range", "sticky"]], "range"),  # most preferred
        ([["range"], ["roundrobin"]], None),  # none in common: Kafka refuses the second member
        ([], None),
    ],
)
def test_the_assignor_is_the_one_the_coordinator_would_select(offers, selected):
    """GroupMetadata.selectProtocol / ClassicGroup.selectProtocol: candidates = protocols every member
    supports; each member votes for its most preferred candidate; the most votes win."""
    configs = {f"c{i}": {"assignors": ",".join(offer)} for i, offer in enumerate(offers)}
    assert client_config.selected_protocol(configs) == selected


def test_a_members_own_session_timeout_is_found_by_client_instance_or_member_id():
    configs = {"c1": {"session_timeout_ms": "10000"}, "i-2": {"session_timeout_ms": "20000"}}
    assert client_config.session_timeout_ms(configs, "c1-0eec4c23-8ca2-4a89-becc-9a2b139de9f9") == 10_000
    assert client_config.session_timeout_ms(configs, "m", instance="i-2") == 20_000
    assert client_config.session_timeout_ms(configs, "m", client_id="c3") is None
    # a static member's id `{group.instance.id}-{UUID}`, its dump keyed by its client id
    configs = {"c4": {"session_timeout_ms": "30000", "group_instance_id": "i-4"}}
    assert client_config.session_timeout_ms(configs, "i-4-5485febc-752b-4881-b106-5829a1889014") == 30_000


def test_the_what_ifs_actual_settings_come_from_the_config_dumps():
    """The what-if replays a group under its actual settings: the members' dumps state their session
    timeout, max.poll.interval.ms (the rebalance timeout), heartbeat interval and assignor."""
    from rebalance_core.kafka_logs import parse_lines
    from rebalance_core.whatif import TimelineExtractor

    settings = consumer_2x(
        client_id="c2",
        **{"session.timeout.ms": "12000", "heartbeat.interval.ms": "4000", "max.poll.interval.ms": "90000"},
    )
    lines = with_dumps(_c2_crashes(), config_dump("2024-11-08 09:00:00,000", "ConsumerConfig", settings))
    events = parse_lines(lines, file="server.log", cluster="k").events
    (group_id,) = {e.group_id for e in events}
    extractor = TimelineExtractor("k", group_id)
    extractor.feed(events)
    actual = extractor.finish().actual
    assert (actual.session_timeout_ms, actual.max_poll_interval_ms, actual.heartbeat_interval_ms) == (
        12_000,
        90_000,
        4_000,
    )
    assert actual.assignor == "roundrobin"
    assert {"session_timeout_ms", "max_poll_interval_ms", "heartbeat_interval_ms"} <= set(actual.observed)


def test_a_dump_saying_group_protocol_consumer_makes_the_group_a_kip848_one():
    """group.protocol = consumer (3.7+, KIP-848): the member speaks ConsumerGroupHeartbeat, whatever else
    its lines show; its session timeout is the broker's group.consumer.session.timeout.ms, not its own."""
    from rebalance_core.consumer import ConsumerGroupReplayer
    from rebalance_core.kafka_logs import parse_lines
    from rebalance_core.replay import new_replayer

    kip848 = consumer_3x(**{"group.protocol": "consumer"})
    events = parse_lines(
        config_dump("2024-06-01 10:00:00,000", "ConsumerConfig", kip848), file="a", cluster="k"
    ).events
    assert isinstance(new_replayer("k", "g1", events=events), ConsumerGroupReplayer)
    classic = parse_lines(
        config_dump("2024-06-01 10:00:00,000", "ConsumerConfig", consumer_3x()), file="a", cluster="k"
    )
    assert isinstance(new_replayer("k", "g1", events=classic.events), GroupReplayer)


def test_a_members_own_max_poll_interval_comes_from_its_own_dump_never_the_unnamed_one():
    """max.poll.interval.ms bounds a member's poll timer (AbstractHeartbeatRequestManager: the KIP-848 client
    leaves when it expires): only the member's own dump states it; an unnamed dump may be another client's."""
    configs: client_config.ClientConfigs = {}
    for client, instance, max_poll in (("c1", None, "60000"), ("c2", "i-2", "600000"), ("", None, "10000")):
        dump = ev(0, "client_config", client_id=client or None, group_instance_id=instance)
        dump.attributes = {"max_poll_interval_ms": max_poll}
        client_config.note(configs, dump)
    assert client_config.own_max_poll_interval_ms(configs, "u1", client_id="c1") == 60_000
    assert client_config.own_max_poll_interval_ms(configs, "u2", instance="i-2") == 600_000
    assert client_config.own_max_poll_interval_ms(configs, "u3", client_id="c3") is None
