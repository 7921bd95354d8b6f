"""Whose event is it: member ids the log lines do not print (parser) and member-side timing of a member
whose own lines come late (parser -> replay), on small hand-written Kafka 3.9 log excerpts."""

from __future__ import annotations

from rebalance_core.kafka_logs import parse_lines
from rebalance_core.replay import replay
from tests.builders import CONSUMER_COORDINATOR, consumer_line, generation_text, scala_line

A = "c1-0eec4c23-8ca2-4a89-becc-9a2b139de9f9"
A2 = "c1-5485febc-752b-4881-b106-5829a1889014"
B = "c2-4be6fc59-a8a4-4882-b22f-f8693a0b1536"
I2_OLD = "i2-1c3e5a7b-9d2f-4b6e-8a0c-3e5d7f9b1a2c"
I2_NEW = "i2-7dfd6962-b848-4383-a596-82f349150d56"
NODE = "kafka-1:9092 (id: 2147483646 rack: null)"
DAY = "2024-01-01"
INVOKER = "org.apache.kafka.clients.consumer.internals.ConsumerRebalanceListenerInvoker"


def at(second: float) -> str:
    whole, millis = divmod(round(second * 1000), 1000)
    return f"10:{whole // 60:02d}:{whole % 60:02d},{millis:03d}"


def client(second: float, message: str, client_id: str = "c1", instance: str | None = None, **kw) -> str:
    logger = kw.get("logger", CONSUMER_COORDINATOR)
    return consumer_line(at(second), client_id, message, group="g", day=DAY, instance=instance, logger=logger)


def broker(second: float, message: str) -> str:
    return scala_line(at(second), message, day=DAY)


def parse(lines: list[str], name: str = "consumer.log"):
    result = parse_lines(lines, file=name, cluster="k")
    assert not result.quarantine, result.quarantine
    return result.events


def of_type(events, event_type: str):
    return [e for e in events if e.event_type == event_type]


# ------------------------------------------------------------------------------------- member ids
def test_partitions_lost_after_a_leave_belong_to_the_member_that_left():
    """Poll timeout: LeaveGroup, reset, then onJoinPrepare gives the old member's partitions away as lost
    and the consumer joins as a new member. The lost callback is the old member's, not the new one's."""
    events = parse(
        [
            client(0, f"Successfully joined group with generation {generation_text(3, A)}"),
            client(0.1, f"Successfully synced group in generation {generation_text(3, A)}"),
            client(0.1, "Adding newly assigned partitions: t-0, t-1", logger=INVOKER),
            client(
                400, "consumer poll timeout has expired. This means the time between subsequent calls ..."
            ),
            client(
                400,
                f"Member {A} sending LeaveGroup request to coordinator {NODE} due to consumer poll timeout "
                "has expired.",
            ),
            client(400, "Resetting generation and member id due to: consumer pro-actively leaving the group"),
            client(400, "Request joining group due to: consumer pro-actively leaving the group"),
            client(
                430,
                "Giving away all assigned partitions as lost since generation/memberID has been reset,"
                "indicating that consumer is in old state or no longer part of the group",
            ),
            client(430, "Lost previously assigned partitions t-0, t-1", logger=INVOKER),
            client(430, "(Re-)joining group"),
            client(430.02, f"Request joining group due to: need to re-join with the given member-id: {A2}"),
            client(430.02, "(Re-)joining group"),
            client(433, f"Successfully joined group with generation {generation_text(5, A2)}"),
        ]
    )
    [lost] = of_type(events, "partitions_lost")
    assert (lost.member_id, lost.attributes["member_id_from"]) == (A, "before_reset")
    # the request after leaving is bookkeeping (no event); the KIP-394 rejoin request is the new member's
    assert [(e.reason, e.member_id) for e in of_type(events, "join_requested")] == [
        (f"need to re-join with the given member-id: {A2}", A2)
    ]


def test_lost_partitions_at_the_start_of_a_file_never_take_a_later_member_id():
    events = parse(
        [
            client(
                0,
                "Resetting generation and member id due to: encountered UNKNOWN_MEMBER_ID from HEARTBEAT "
                "response",
            ),
            client(0, "Lost previously assigned partitions t-0", logger=INVOKER),
            client(0, "(Re-)joining group"),
            client(3, f"Successfully joined group with generation {generation_text(7, A2)}"),
        ]
    )
    [lost] = of_type(events, "partitions_lost")
    assert lost.member_id is None and "member_id_from" not in lost.attributes


def test_a_restarted_static_member_does_not_lend_its_new_id_to_the_old_process_lines():
    """The file starts with the old process's onLeavePrepare revocation (a static member sends no
    LeaveGroup); the new process joins with an empty id and gets a new one (KIP-345)."""
    events = parse(
        [
            client(0, "Revoke previously assigned partitions t-2", "c2", "i2", logger=INVOKER),
            client(11, "(Re-)joining group", "c2", "i2"),
            client(
                11.3, f"Successfully joined group with generation {generation_text(4, I2_NEW)}", "c2", "i2"
            ),
        ]
    )
    [revoked] = of_type(events, "partitions_revoked")
    assert revoked.member_id is None


def test_a_static_member_that_asked_to_rejoin_keeps_its_id_across_the_join():
    events = parse(
        [
            client(0, "Request joining group due to: group is already rebalancing", "c2", "i2"),
            client(0, "Revoke previously assigned partitions t-2", "c2", "i2", logger=INVOKER),
            client(0, "(Re-)joining group", "c2", "i2"),
            client(2, f"Successfully joined group with generation {generation_text(5, I2_OLD)}", "c2", "i2"),
        ]
    )
    [revoked] = of_type(events, "partitions_revoked")
    assert (revoked.member_id, revoked.attributes["member_id_from"]) == (I2_OLD, "later_line")


def test_a_static_members_unrequested_join_keeps_its_id_when_the_next_line_shows_the_same_id():
    """A 2.x client logs no rejoin request (enforceRebalance, a metadata change): its "(Re-)joining group"
    may be a restarted process's (empty id) or the live member's. A restarted static member always gets a
    new id (KIP-345, GroupCoordinator.doUnknownJoinGroup -> updateStaticMemberAndRebalance), so the same
    id in the join response means the JoinGroup carried it; a new id keeps the join empty (a restart)."""
    events = parse(
        [
            client(0, f"Successfully joined group with generation {generation_text(3, I2_OLD)}", "c2", "i2"),
            client(10, "(Re-)joining group", "c2", "i2"),
            client(20, f"Successfully joined group with generation {generation_text(4, I2_OLD)}", "c2", "i2"),
            client(30, "(Re-)joining group", "c2", "i2"),
            client(31, f"Successfully joined group with generation {generation_text(5, I2_NEW)}", "c2", "i2"),
        ]
    )
    assert [(e.member_id, e.attributes.get("member_id_from")) for e in of_type(events, "join_sent")] == [
        (I2_OLD, "earlier_line"),
        (None, None),
    ]


def test_a_join_sent_carries_the_member_id_only_when_a_live_member_asked_to_rejoin():
    """The JoinGroup carries generation.memberId: a rejoin the member requested has its id; the first join
    of a new process (here after a close whose rejoin request was still pending) has none."""
    events = parse(
        [
            client(0, f"Successfully joined group with generation {generation_text(3, A)}"),
            client(10, "Request joining group due to: group is already rebalancing"),
            client(10, "(Re-)joining group"),
            client(12, f"Successfully joined group with generation {generation_text(4, A)}"),
            client(20, "Request joining group due to: group is already rebalancing"),
            client(
                20,
                f"Member {A} sending LeaveGroup request to coordinator {NODE} due to the consumer is being "
                "closed",
            ),
            client(20, "Resetting generation and member id due to: consumer pro-actively leaving the group"),
            client(30, "(Re-)joining group"),
            client(33, f"Successfully joined group with generation {generation_text(6, A2)}"),
        ]
    )
    assert [(e.member_id, e.attributes.get("member_id_from")) for e in of_type(events, "join_sent")] == [
        (A, "earlier_line"),
        (None, None),
    ]


def test_a_dynamic_members_new_id_names_its_client():
    """GroupCoordinator makes a dynamic member's id `{client.id}-{UUID}`; a static one's starts with its
    group.instance.id, which says nothing of the client."""
    events = parse(
        [
            broker(
                0,
                f"Dynamic member with unknown member id joins group g in Stable state. Created a new member "
                f"id {B} and request the member to rejoin with this id.",
            ),
            broker(
                1,
                f"Static member with groupInstanceId=i2 and unknown member id joins group g in Stable state. "
                f"Created a new member id {I2_NEW} for this member and add to the group.",
            ),
        ],
        "server.log",
    )
    dynamic, static = events
    assert (dynamic.client_id, dynamic.attributes["client_id_from"]) == ("c2", "member_id")
    assert static.client_id is None and static.group_instance_id == "i2"


# ------------------------------------------------------------------------------ parse, then replay
def _new_member_logs_late(instance: str | None) -> list:
    """Range group: c1 (member A) owns t-0, t-1; a new consumer c2 joins, and its own "Successfully joined"
    is logged after the broker already has the leader's assignment (a busy client, a large group)."""
    new = I2_NEW if instance else B
    joined = (
        f"Static member with groupInstanceId={instance} and unknown member id joins group g in Stable state. "
        f"Created a new member id {new} for this member and add to the group."
        if instance
        else f"Dynamic member with unknown member id joins group g in Stable state. Created a new member id {new} "
        "and request the member to rejoin with this id."
    )
    server = [
        broker(
            0,
            f"Dynamic member with unknown member id joins group g in Empty state. Created a new member id "
            f"{A} and request the member to rejoin with this id.",
        ),
        broker(
            0,
            "Preparing to rebalance group g in state PreparingRebalance with old generation 0 "
            f"(__consumer_offsets-3) (reason: Adding new member {A} with group instance id None)",
        ),
        broker(3, "Stabilized group g generation 1 (__consumer_offsets-3) with 1 members"),
        broker(
            3.01,
            f"Assignment received from leader {A} for group g for generation 1. The group has 1 members, "
            "0 of which are static.",
        ),
        broker(60, joined),
        broker(
            60,
            "Preparing to rebalance group g in state PreparingRebalance with old generation 1 "
            f"(__consumer_offsets-3) (reason: Adding new member {new} with group instance id {instance})",
        ),
        broker(63, "Stabilized group g generation 2 (__consumer_offsets-3) with 2 members"),
        broker(
            63.02,
            f"Assignment received from leader {A} for group g for generation 2. The group has 2 "
            f"members, {1 if instance else 0} of which are static.",
        ),
    ]
    assignment = f"{{{A}=Assignment(partitions=[t-0]), {new}=Assignment(partitions=[t-1])}}"
    consumers = [
        client(0, "(Re-)joining group"),
        client(3, f"Successfully joined group with generation {generation_text(1, A)}"),
        client(
            3.005, f"Finished assignment for group at generation 1: {{{A}=Assignment(partitions=[t-0, t-1])}}"
        ),
        client(3.02, f"Successfully synced group in generation {generation_text(1, A)}"),
        client(3.02, "Adding newly assigned partitions: t-0, t-1", logger=INVOKER),
        client(59.99, "(Re-)joining group", "c2", instance),
        client(61, "Request joining group due to: group is already rebalancing"),
        client(61, "Revoke previously assigned partitions t-0, t-1", logger=INVOKER),
        client(61, "(Re-)joining group"),
        client(63, f"Successfully joined group with generation {generation_text(2, A)}"),
        client(63.01, f"Finished assignment for group at generation 2: {assignment}"),
        client(63.03, f"Successfully synced group in generation {generation_text(2, A)}"),
        client(63.03, "Adding newly assigned partitions: t-0", logger=INVOKER),
        client(63.2, f"Successfully joined group with generation {generation_text(2, new)}", "c2", instance),
        client(63.3, f"Successfully synced group in generation {generation_text(2, new)}", "c2", instance),
        client(63.3, "Adding newly assigned partitions: t-1", "c2", instance, logger=INVOKER),
    ]
    return parse(server, "server.log") + parse(consumers)


def test_a_new_member_whose_log_comes_late_starts_at_its_own_callback():
    for instance in (None, "i2"):
        tables = replay(_new_member_logs_late(instance))
        assert not tables["anomalies"]
        [moved] = [m for m in tables["partition_movements"] if m["partition"] == 1]
        new = I2_NEW if instance else B
        # t-1 is c2's from its onPartitionsAssigned, not from the broker's "Assignment received" (63.02 s)
        assert (moved["from_member_id"], moved["to_member_id"], moved["stop_cause"], moved["moved"]) == (
            A,
            new,
            "revoked",
            True,
        )
        assert moved["assigned_at"] - moved["revoked_at"] == 2300, instance
        assert {g["protocol_type"] for g in tables["generations"]} == {"consumer"}


def test_a_static_replacement_learns_the_new_member_id_from_the_instances_own_log():
    """The 3.x Scala coordinator's replacement line names the old member only; the restarted process's own
    "Successfully joined" names the new one, which the broker's later lines then use."""
    old, new = "i1-0eec4c23-8ca2-4a89-becc-9a2b139de9f9", "i1-5485febc-752b-4881-b106-5829a1889014"
    server = [
        broker(
            0,
            "Static member with groupInstanceId=i1 and unknown member id joins group g in Empty state. "
            f"Created a new member id {old} for this member and add to the group.",
        ),
        broker(
            0,
            "Preparing to rebalance group g in state PreparingRebalance with old generation 0 "
            f"(__consumer_offsets-3) (reason: Adding new member {old} with group instance id Some(i1))",
        ),
        broker(3, "Stabilized group g generation 1 (__consumer_offsets-3) with 1 members"),
        broker(
            3.01,
            f"Assignment received from leader {old} for group g for generation 1. The group has 1 "
            "members, 1 of which are static.",
        ),
        broker(
            60,
            "Static member with groupInstanceId=i1 and unknown member id joins group g in Stable state. "
            f"Replacing previously mapped member {old} with this groupInstanceId.",
        ),
        broker(
            60,
            "Static member which joins during Stable stage and doesn't affect selectProtocol will not "
            "trigger rebalance.",
        ),
        broker(200, f"Member {new} in group g has failed, removing it from the group"),
        broker(
            200,
            "Preparing to rebalance group g in state PreparingRebalance with old generation 1 "
            f"(__consumer_offsets-3) (reason: removing member {new} on heartbeat expiration)",
        ),
        broker(200, "Group g with generation 2 is now empty (__consumer_offsets-3)"),
    ]
    consumers = [
        client(0, "(Re-)joining group", "c1", "i1"),
        client(3, f"Successfully joined group with generation {generation_text(1, old)}", "c1", "i1"),
        client(
            3.005,
            f"Finished assignment for group at generation 1: {{{old}=Assignment(partitions=[t-0])}}",
            "c1",
            "i1",
        ),
        client(3.02, f"Successfully synced group in generation {generation_text(1, old)}", "c1", "i1"),
        client(3.02, "Adding newly assigned partitions: t-0", "c1", "i1", logger=INVOKER),
        client(59.9, "(Re-)joining group", "c1", "i1"),  # a new process (the old one crashed)
        client(60.01, f"Successfully joined group with generation {generation_text(1, new)}", "c1", "i1"),
        client(60.02, f"Successfully synced group in generation {generation_text(1, new)}", "c1", "i1"),
        client(60.02, "Adding newly assigned partitions: t-0", "c1", "i1", logger=INVOKER),
    ]
    tables = replay(parse(server, "server.log") + parse(consumers))
    assert not tables["anomalies"]
    assert [(g["generation_id"], g["members"], g["ended_empty"]) for g in tables["generations"]] == [
        (1, [old], False),
        (2, [], True),
    ]
    assert [
        (m["from_member_id"], m["to_member_id"], m["stop_cause"]) for m in tables["partition_movements"]
    ] == [
        (old, new, "member_failed"),
        (new, None, "member_failed"),
    ]


def test_a_static_cooperative_member_keeps_consuming_while_it_rejoins():
    """Its "(Re-)joining group" after a rebalance request is a rejoin with its member id, not a restarted
    process: the replay stops only what it revokes."""
    cooperative = "cooperative-sticky"
    consumer = [
        client(
            0,
            f"Successfully joined group with generation {generation_text(1, I2_OLD, cooperative)}",
            "c2",
            "i2",
        ),
        client(
            0.01,
            f"Successfully synced group in generation {generation_text(1, I2_OLD, cooperative)}",
            "c2",
            "i2",
        ),
        client(0.01, "Notifying assignor about the new Assignment(partitions=[t-0, t-1])", "c2", "i2"),
        client(0.01, "Adding newly assigned partitions: t-0, t-1", "c2", "i2", logger=INVOKER),
        client(30, "Request joining group due to: group is already rebalancing", "c2", "i2"),
        client(30, "(Re-)joining group", "c2", "i2"),
        client(
            33,
            f"Successfully joined group with generation {generation_text(2, I2_OLD, cooperative)}",
            "c2",
            "i2",
        ),
        client(
            33.01,
            f"Successfully synced group in generation {generation_text(2, I2_OLD, cooperative)}",
            "c2",
            "i2",
        ),
        client(33.01, "Notifying assignor about the new Assignment(partitions=[t-0])", "c2", "i2"),
        client(33.02, "Revoke previously assigned partitions t-1", "c2", "i2", logger=INVOKER),
        client(33.02, "Adding newly assigned partitions: ", "c2", "i2", logger=INVOKER),
    ]
    tables = replay(parse(consumer))
    assert [
        (m["partition"], m["stop_cause"], m["revoked_at"] % 100_000) for m in tables["partition_movements"]
    ] == [(1, "revoked", 33_020)]


def config_dump(second: float, client_id: str) -> str:
    """A consumer process's start: AbstractConfig.logAll of its ConsumerConfig (no client prefix)."""
    return (
        f"[{DAY} {at(second)}] INFO ConsumerConfig values: \n\tclient.id = {client_id}\n\tgroup.id = g\n"
        "\tsession.timeout.ms = 45000 (org.apache.kafka.clients.consumer.ConsumerConfig)"
    )


def test_a_new_process_first_joingroup_is_not_the_kip394_second_of_its_predecessor():
    """c1's first process gets its id from MEMBER_ID_REQUIRED (KIP-394) and sends the JoinGroup with it,
    then dies unanswered; a new process starts (its config dump) and sends a JoinGroup without an id. That
    JoinGroup follows no line of its own process: it is a new member's first, not the pair's second, so the
    predecessor's JoinGroup keeps the id it carried and the new process's first carries none."""
    lines = [
        config_dump(0, "c1"),
        client(0, "(Re-)joining group"),
        client(0.002, f"Request joining group due to: need to re-join with the given member-id: {A}"),
        client(0.002, "(Re-)joining group"),
        config_dump(10, "c1"),
        client(10, "(Re-)joining group"),
        client(10.002, f"Request joining group due to: need to re-join with the given member-id: {A2}"),
        client(10.002, "(Re-)joining group"),
        client(13, f"Successfully joined group with generation {generation_text(1, A2)}"),
    ]
    events = parse("\n".join(lines).split("\n"))
    assert [e.member_id for e in of_type(events, "join_sent")] == [None, A, None, A2]


def test_a_throwaway_consumers_config_dump_with_the_same_client_id_keeps_the_live_members_context():
    """c1 is a live member (id A); a second KafkaConsumer of the same JVM with the same client.id (a
    throwaway one looking up offsets) logs its config dump and never joins. c1's next lines are its own
    rejoin: the request, then the JoinGroup carrying A (AbstractCoordinator.requestRejoin, 3.0+). A new
    process would have joined first, with no rejoin request: the dump was not c1's process restarting."""
    lines = [
        client(0, f"Successfully joined group with generation {generation_text(3, A)}"),
        config_dump(5, "c1"),
        client(10, "Request joining group due to: group is already rebalancing"),
        client(10, "(Re-)joining group"),
        client(12, f"Successfully joined group with generation {generation_text(4, A)}"),
    ]
    events = parse("\n".join(lines).split("\n"))
    assert [(e.member_id, e.attributes.get("member_id_from")) for e in of_type(events, "join_sent")] == [
        (A, "earlier_line")
    ]


def test_a_config_dump_followed_by_the_clients_joingroup_starts_a_new_process():
    """The same dump followed at once by c1's JoinGroup (no rejoin request, no line of the old member in
    between) is a restarted process: its JoinGroup carries no id (a new member, KIP-394)."""
    lines = [
        client(0, f"Successfully joined group with generation {generation_text(3, A)}"),
        config_dump(5, "c1"),
        client(6, "(Re-)joining group"),
        client(6.002, f"Request joining group due to: need to re-join with the given member-id: {A2}"),
        client(6.002, "(Re-)joining group"),
        client(9, f"Successfully joined group with generation {generation_text(4, A2)}"),
    ]
    events = parse("\n".join(lines).split("\n"))
    assert [e.member_id for e in of_type(events, "join_sent")] == [None, A2]
