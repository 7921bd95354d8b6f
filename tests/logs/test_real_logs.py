"""The real logs in tests/fixtures/kafka_logs/real/ parse to what EXPECTED.md (same folder) reads in them:
events, generations, members, partitions and the timestamps the durations are computed from."""

from __future__ import annotations

import pytest

from rebalance_core.events import parse_ts
from rebalance_core.kafka_logs import ParseResult
from tests.logs.kafka_log_fixtures import REAL, at, parse_fixture, tps


def parsed(name: str, **options) -> ParseResult:
    return parse_fixture(REAL / name, **options)


def of_type(result: ParseResult, event_type: str, group_id: str | None = None) -> list:
    return [
        e
        for e in result.events
        if e.event_type == event_type and (group_id is None or e.group_id == group_id)
    ]


def ms(a: str, b: str) -> int:
    return parse_ts(b) - parse_ts(a)


# read / events / event lines / skipped / quarantined, per file (every line accounted for)
COUNTS = {
    "04_broker_3.0_expiry_dead_recreate.log": (12, 8, 8, 4, 0),
    "05_broker_3.8_classic_join_leave.log": (15, 12, 12, 3, 0),
    "06_broker_3.8_kip848_target_assignment.log": (11, 7, 7, 4, 0),
    "09_client_classic_eager_two_members.log": (27, 7, 8, 19, 0),
    "10_client_kip848_reconcile.log": (99, 18, 37, 62, 0),
    "11_client_streams_cooperative_4threads.log": (162, 19, 47, 115, 0),
    # the sink consumer's "Request joining group due to: consumer pro-actively leaving the group" follows its
    # LeaveGroup: recognised, no event
    "12_client_connect_incremental_cooperative.log": (54, 11, 12, 42, 0),
}


@pytest.mark.parametrize(("name", "counts"), COUNTS.items())
def test_counts(name, counts):
    c = parsed(name).counts
    assert (c.read, c.events, c.event_lines, c.skipped, c.quarantined) == counts


def test_04_expiry_dead_recreate():
    r = parsed("04_broker_3.0_expiry_dead_recreate.log")
    assert {e.group_id for e in r.events} == {"testtopic-app"}
    assert {e.side for e in r.events} == {"coordinator"} and {e.source for e in r.events} == {"broker-1"}
    [failed] = of_type(r, "member_removed")
    assert (at(failed.ts), failed.member_id, failed.reason) == (
        "2022-01-25T13:08:11.616Z",
        "my-java-consumer-0f9eb754-e6b4-47b5-954d-3cfa09d53bcd",
        "session_timeout",
    )
    first, second = of_type(r, "rebalance_prepared")
    assert (at(first.ts), first.generation_id) == ("2022-01-25T13:08:11.619Z", 1)
    assert "on heartbeat expiration" in first.reason and first.attributes["offsets_partition"] == "31"
    [empty] = of_type(r, "group_empty")
    assert (empty.generation_id, ms(at(first.ts), at(empty.ts))) == (2, 1)
    [dead] = of_type(r, "group_dead")
    assert (at(dead.ts), dead.generation_id) == ("2022-01-25T13:12:04.714Z", 2)
    [joined] = of_type(r, "join_received")
    assert (joined.member_id, joined.attributes["state"]) == (
        "my-java-consumer-7dfd6962-b848-4383-a596-82f349150d56",
        "Empty",
    )
    assert (second.generation_id, second.reason) == (
        0,
        "Adding new member my-java-consumer-7dfd6962-b848-4383-a596-82f349150d56 with group instance id None",
    )
    [stabilized] = of_type(r, "join_completed")
    assert (stabilized.generation_id, stabilized.member_count, ms(at(second.ts), at(stabilized.ts))) == (
        1,
        1,
        3002,
    )
    [received] = of_type(r, "assignment_received")
    assert (
        received.generation_id,
        received.leader_id,
        received.member_count,
        received.attributes["static_member_count"],
    ) == (1, "my-java-consumer-7dfd6962-b848-4383-a596-82f349150d56", 1, "0")
    generations = [e.generation_id for e in r.events if e.generation_id is not None]
    assert generations == [1, 2, 2, 0, 1, 1]  # "1, 2, 2(Dead), 0, 1" (+ the assignment of generation 1)


def test_05_classic_join_leave():
    r = parsed("05_broker_3.8_classic_join_leave.log")
    leader = "avro-producer-0eec4c23-8ca2-4a89-becc-9a2b139de9f9"
    second = "avro-producer-4be6fc59-a8a4-4882-b22f-f8693a0b1536"
    prepared, stabilized, received = (
        of_type(r, t) for t in ("rebalance_prepared", "join_completed", "assignment_received")
    )
    assert [e.generation_id for e in prepared] == [0, 1, 2]
    assert [(e.generation_id, e.member_count) for e in stabilized] == [(1, 1), (2, 2), (3, 1)]
    assert [ms(at(p.ts), at(s.ts)) for p, s in zip(prepared, stabilized)] == [3, 2080, 1707]
    assert {e.leader_id for e in received} == {leader} and [e.generation_id for e in received] == [1, 2, 3]
    assert [e.attributes["client_reason"] for e in prepared] == [
        "rebalance failed due to MemberIdRequiredException",
        "rebalance failed due to MemberIdRequiredException",
        "the consumer is being closed",
    ]
    joins = of_type(r, "join_received")
    assert [(j.member_id, j.attributes["state"]) for j in joins] == [(leader, "Empty"), (second, "Stable")]
    [left] = of_type(r, "member_removed")
    assert (left.member_id, left.reason, left.client_id, left.group_instance_id) == (
        second,
        "leave_group",
        "avro-producer",
        None,
    )
    assert (
        left.attributes.items()
        >= {
            "session_timeout_ms": "45000",
            "rebalance_timeout_ms": "300000",
            "client_host": "/172.23.0.7",
            "supported_protocols": "range,cooperative-sticky",
        }.items()
    )
    assert prepared[2].line < left.line  # the "has left" line follows the Preparing line it caused
    assert not any(e.partitions for e in r.events)


def test_06_kip848_target_assignments():
    r = parsed("06_broker_3.8_kip848_target_assignment.log")
    b8f7, gjwz, nc1 = (
        "avro-producer-b8f7c567-6711-4cc6-8720-29ce8dee2034",
        "gjWzAEmmRlOfypB2_GB_9Q",
        "6nc1qt8rSeyTwBh__vZELQ",
    )
    t7, t8 = "7l8rBsX6TMqbHE6QgWshdw", "8iWjCLGESE6MUiR5ANkArg"
    targets = of_type(r, "target_assignment_computed")
    assert [(t.assignment_epoch, t.protocol_name, t.attributes["compute_ms"]) for t in targets] == [
        (4, "uniform", "10"),
        (5, "uniform", "1"),
        (6, "uniform", "1"),
    ]
    six = [f"{t7}-{p}" for p in range(6)]
    eight = [f"{t8}-{p}" for p in range(6)]
    assert {m: [str(tp) for tp in ps] for m, ps in targets[0].assignment.items()} == {b8f7: six, gjwz: eight}
    assert {m: [str(tp) for tp in ps] for m, ps in targets[1].assignment.items()} == {gjwz: six + eight}
    assert {m: [str(tp) for tp in ps] for m, ps in targets[2].assignment.items()} == {nc1: eight, gjwz: six}
    states = of_type(r, "member_epoch_updated")
    assert [
        (s.member_id, s.member_epoch, s.attributes["previous_epoch"], s.attributes["state"], at(s.ts))
        for s in states
    ] == [
        (b8f7, 4, "3", "STABLE", "2024-11-11T09:37:20.961Z"),
        (gjwz, 4, "4", "STABLE", "2024-11-11T09:37:25.723Z"),  # the line without its (logger) suffix
        (gjwz, 6, "5", "STABLE", "2024-11-11T09:38:40.966Z"),
        (nc1, 6, "6", "STABLE", "2024-11-11T09:38:45.273Z"),
    ]
    assert [tps(s) for s in states] == [six, eight, six, eight]
    assert {s.attributes["revoked"] for s in states} == {""}
    assert ms(at(targets[0].ts), at(states[1].ts)) == 5046 and ms(at(targets[2].ts), at(states[3].ts)) == 5024
    assert not any(e.generation_id is not None for e in r.events)
    named = parsed("06_broker_3.8_kip848_target_assignment.log", topic_ids={"a": t7, "b": t8})
    assert tps(of_type(named, "member_epoch_updated")[0]) == [f"a-{p}" for p in range(6)]


def test_09_classic_eager_two_members():
    r = parsed("09_client_classic_eager_two_members.log")
    me = "consumer-legacy-936f0bfd-f1ce-46ab-b896-b39ad77244a0"
    other = "consumer-legacy-5485febc-752b-4881-b106-5829a1889014"
    assert [(e.event_type, at(e.ts)) for e in r.events] == [
        ("join_requested", "2026-03-16T16:52:03.531Z"),
        ("partitions_revoked", "2026-03-16T16:52:03.533Z"),
        ("join_sent", "2026-03-16T16:52:03.535Z"),
        ("join_response", "2026-03-16T16:52:03.539Z"),
        ("assignment_computed", "2026-03-16T16:52:03.540Z"),
        ("sync_response", "2026-03-16T16:52:03.542Z"),
        ("partitions_assigned", "2026-03-16T16:52:03.542Z"),
    ]
    requested, revoked, _, joined, computed, synced, assigned = r.events
    assert requested.reason == "group is already rebalancing"
    assert tps(revoked) == ["my-topic-0", "my-topic-1", "my-topic-2"] and revoked.member_id == me
    assert (joined.generation_id, joined.member_id, joined.protocol_name, joined.client_id) == (
        2,
        me,
        "range",
        "consumer-legacy",
    )
    assert computed.generation_id == 2 and computed.leader_id == me
    assert {m: [str(tp) for tp in ps] for m, ps in computed.assignment.items()} == {
        me: ["my-topic-2"],
        other: ["my-topic-0", "my-topic-1"],
    }
    assert (synced.generation_id, tps(synced)) == (2, ["my-topic-2"])
    assert tps(assigned) == ["my-topic-2"]
    assert ms(at(requested.ts), at(assigned.ts)) == 11  # stop-the-world .531 -> .542
    assert {e.group_id for e in r.events} == {"legacy-consumer-group"}


def test_10_kip848_reconcile():
    r = parsed("10_client_kip848_reconcile.log")
    tkqv, ocp = "tKQVSQuHR9aBocp13XT9nw", "oCpRdkCgQGWK7Rq-kJ2BVw"
    assert {e.client_id for e in r.events} == {"consumer-nextgen"}  # both members: key by member id
    transitions = [
        (e.member_id, e.member_epoch, e.attributes["from_state"], e.attributes["to_state"], at(e.ts))
        for e in of_type(r, "member_state_changed")
    ]
    assert transitions == [
        (tkqv, 1, "STABLE", "RECONCILING", "2026-03-16T16:54:51.473Z"),
        (tkqv, 1, "RECONCILING", "ACKNOWLEDGING", "2026-03-16T16:54:52.495Z"),
        (tkqv, 1, "ACKNOWLEDGING", "STABLE", "2026-03-16T16:54:52.496Z"),
        (ocp, 0, "UNSUBSCRIBED", "JOINING", "2026-03-16T16:54:47.162Z"),
        (ocp, 2, "JOINING", "RECONCILING", "2026-03-16T16:54:47.214Z"),
        (ocp, 2, "RECONCILING", "ACKNOWLEDGING", "2026-03-16T16:54:47.217Z"),
        (ocp, 2, "ACKNOWLEDGING", "STABLE", "2026-03-16T16:54:47.217Z"),
        (ocp, 2, "STABLE", "RECONCILING", "2026-03-16T16:54:57.224Z"),
        (ocp, 2, "RECONCILING", "ACKNOWLEDGING", "2026-03-16T16:54:58.085Z"),
        (ocp, 2, "ACKNOWLEDGING", "STABLE", "2026-03-16T16:54:58.112Z"),
    ]
    reconciled = [
        (e.member_id, tps(e), e.attributes["revoked"], e.attributes["added"], e.attributes["local_epoch"])
        for e in of_type(r, "sync_response")
    ]
    assert reconciled == [
        (tkqv, ["my-topic-0", "my-topic-1"], "my-topic-2", "", "1"),
        (ocp, [], "", "", "0"),
        (ocp, ["my-topic-2"], "", "my-topic-2", "1"),
    ]
    [revoked] = of_type(r, "partitions_revoked")  # the manager's line; the callback's restates it
    assert (revoked.member_id, tps(revoked), at(revoked.ts)) == (
        tkqv,
        ["my-topic-2"],
        "2026-03-16T16:54:51.475Z",
    )
    added = [(e.member_id, tps(e), at(e.ts)) for e in of_type(r, "partitions_assigned")]
    assert added == [
        (tkqv, [], "2026-03-16T16:54:52.494Z"),
        (ocp, [], "2026-03-16T16:54:47.216Z"),
        (ocp, ["my-topic-2"], "2026-03-16T16:54:58.084Z"),
    ]
    assert ms("2026-03-16T16:54:47.162Z", transitions[-1][4]) == 10950
    assert ms(at(revoked.ts), added[-1][2]) == 6609  # my-topic-2 unowned
    assert (
        r.counts.skipped_by_reason["comment"] == 6
    )  # headers and both block separators; "202" is not an event


def test_11_streams_cooperative():
    r = parsed("11_client_streams_cooperative_4threads.log")
    group = "_confluent-ksql-default_query_CSAS_SENSORS_3"
    prefix = f"{group}-030e833a-12f2-43b6-a31c-1d8afb59e9a6-StreamThread-"
    members = {
        2: f"{prefix}2-consumer-f43e90b1-df10-4565-9f17-877e2cf0e981",
        3: f"{prefix}3-consumer-bbc9b6ee-9144-4268-98d9-68edeaafd2a3",
        4: f"{prefix}4-consumer-51a97204-8375-4e9d-a262-9fad0ec08c45",
        5: f"{prefix}5-consumer-69dc8713-9b33-4504-aab2-6231d077794a",
    }
    assert {e.group_id for e in r.events} == {group}
    requested = sorted((at(e.ts), e.member_id) for e in of_type(r, "join_requested"))
    assert requested == sorted(
        [
            ("2021-11-23T09:20:10.640Z", members[4]),
            ("2021-11-23T09:20:10.640Z", members[2]),
            ("2021-11-23T09:20:10.644Z", members[3]),
        ]
    )
    sent = sorted((at(e.ts), e.client_id) for e in of_type(r, "join_sent"))
    assert sent == sorted(
        [
            ("2021-11-23T09:20:10.642Z", f"{prefix}2-consumer"),
            ("2021-11-23T09:20:10.642Z", f"{prefix}4-consumer"),
            ("2021-11-23T09:20:10.644Z", f"{prefix}3-consumer"),
        ]
    )
    joined = of_type(r, "join_response")
    assert {(e.member_id, e.generation_id, e.protocol_name, at(e.ts)) for e in joined} == {
        (m, 2, "stream", "2021-11-23T09:20:52.823Z") for m in members.values()
    }
    [computed] = of_type(r, "assignment_computed")
    assert (computed.leader_id, computed.generation_id, at(computed.ts)) == (
        members[3],
        2,
        "2021-11-23T09:20:52.830Z",
    )
    assert {m: [str(tp) for tp in ps] for m, ps in computed.assignment.items()} == {
        members[2]: ["SENSORS_RAW-0"],
        members[3]: [],
        members[4]: [],
        members[5]: [],
    }
    synced = of_type(r, "sync_response")
    assert {e.member_id: tps(e) for e in synced} == {
        members[2]: ["SENSORS_RAW-0"],
        members[3]: [],
        members[4]: [],
        members[5]: [],
    }
    assert {e.attributes["revoked"] for e in synced} == {""}  # nothing revoked in the single round
    assert sorted(at(e.ts) for e in synced)[-1] == "2021-11-23T09:20:52.837Z"
    assert ms(requested[0][0], "2021-11-23T09:20:52.837Z") == 42197
    assert ms(sent[0][0], "2021-11-23T09:20:52.823Z") == 42181
    assert not of_type(r, "partitions_revoked")
    assert {e.member_id: tps(e) for e in of_type(r, "partitions_assigned")} == {
        members[2]: ["SENSORS_RAW-0"],
        members[3]: [],
        members[4]: [],
        members[5]: [],
    }
    assert r.counts.skipped_by_reason["streams_internal"] > 0  # stream-thread [...] lines and the stack trace


def test_12_connect_incremental_cooperative():
    r = parsed("12_client_connect_incremental_cooperative.log")
    worker = "connect-1-3b5b3704-b325-47a7-9528-d1daa049e5e6"
    started = of_type(r, "join_requested", "connect-cluster")
    assert [(at(e.ts), e.reason) for e in started] == [
        ("2022-03-13T13:56:48.982Z", "rebalance started"),
        ("2022-03-13T13:56:49.178Z", "rebalance started"),
    ]
    joined = of_type(r, "join_response", "connect-cluster")
    assert [(e.generation_id, e.member_id, e.protocol_name, at(e.ts)) for e in joined] == [
        (4, worker, "sessioned", "2022-03-13T13:56:48.986Z"),
        (5, worker, "sessioned", "2022-03-13T13:56:49.183Z"),
    ]
    first, second = of_type(r, "sync_response", "connect-cluster")
    assert (first.generation_id, at(first.ts), first.leader_id) == (4, "2022-03-13T13:56:48.996Z", worker)
    assert (
        first.attributes.items()
        >= {
            "delay_ms": "0",
            "revoked_connectors": "http-sink",
            "revoked": "http-sink-0",
            "assigned_connectors": "",
            "added": "",
            "protocol_version": "2",
        }.items()
    )
    assert (
        second.generation_id,
        at(second.ts),
        second.attributes["revoked"],
        second.attributes["delay_ms"],
    ) == (5, "2022-03-13T13:56:49.192Z", "", "0")
    [tasks_revoked] = of_type(r, "partitions_revoked", "connect-cluster")
    assert (tps(tasks_revoked), at(tasks_revoked.ts), tasks_revoked.member_id) == (
        ["http-sink-0"],
        "2022-03-13T13:56:49.176Z",
        worker,
    )
    assert ms(at(started[0].ts), at(second.ts)) == 210
    # the sink task's consumer group
    [revoked] = of_type(r, "partitions_revoked", "connect-http-sink")
    [leave] = of_type(r, "leave_sent", "connect-http-sink")
    sink_member = "connector-consumer-http-sink-0-1370479b-2663-4c35-b868-5678d7b91513"
    assert (tps(revoked), revoked.member_id, revoked.client_id, at(revoked.ts)) == (
        ["http-messages-0"],
        sink_member,
        "connector-consumer-http-sink-0",
        "2022-03-13T13:56:49.023Z",
    )
    assert (
        leave.member_id,
        leave.reason,
        leave.attributes["coordinator"],
        leave.attributes["coordinator_id"],
    ) == (sink_member, "the consumer is being closed", "broker:9092", "1")
    assert not of_type(r, "join_response", "connect-http-sink")
    assert {e.protocol_type for e in r.events if e.group_id == "connect-cluster"} == {"connect"}
