"""The 3.x broker line of a request refused for a replaced static member (GroupCoordinator
.validateCurrentMember, FENCED_INSTANCE_ID): "Request memberId=OLD for static member with groupInstanceId=I
is fenced by current memberId=NEW during operation OP". It names no group; it names the instance's new
member id, which the 3.x replacement line ("Replacing previously mapped member OLD") does not print."""

from __future__ import annotations

from rebalance_core.kafka_logs import parse_lines
from tests.builders import assignment_received, prepare_rebalance, scala_line, stabilized, static_join
from tests.core.broker_log import replay_log

I1 = "i1-0eec4c23-8ca2-4a89-becc-9a2b139de9f9"
I2_OLD = "i2-5485febc-752b-4881-b106-5829a1889014"
I2_NEW = "i2-35bf992d-c9e9-4616-a12e-7696a6cecc1b"


def _fenced(ts, old, new, operation="Heartbeat"):
    return scala_line(
        ts,
        f"Request memberId={old} for static member with groupInstanceId=i2 is fenced by current memberId={new} "
        f"during operation {operation}",
    )


def _static_restart(*after: str) -> list[str]:
    """Static i1, i2; i2's process restarts within the session timeout (Stable: no rebalance); then the
    lines `after`."""
    return [
        static_join("10:00:00,000", "i1", I1, "Empty"),
        prepare_rebalance(
            "10:00:00,001",
            0,
            f"Adding new member {I1} with group instance id Some(i1); client reason: not provided",
        ),
        static_join("10:00:01,000", "i2", I2_OLD, "PreparingRebalance"),
        stabilized("10:00:03,001", 1, 2),
        assignment_received("10:00:03,010", I1, 1, 2, 2),
        scala_line(
            "10:20:00,000",
            "Static member with groupInstanceId=i2 and unknown member id joins group g1 in Stable state. "
            f"Replacing previously mapped member {I2_OLD} with this groupInstanceId.",
        ),
        *after,
    ]


def test_the_fenced_request_line_is_given_the_group_an_earlier_line_named_its_member_in():
    parsed = parse_lines(
        _static_restart(_fenced("10:20:05,000", I2_OLD, I2_NEW)), file="server.log", cluster="k"
    )
    assert not parsed.quarantine
    (fenced,) = [e for e in parsed.events if e.event_type == "member_removed"]
    assert (fenced.group_id, fenced.member_id, fenced.group_instance_id, fenced.reason) == (
        "g1",
        I2_OLD,
        "i2",
        "fenced_static",
    )
    assert fenced.attributes["current_member_id"] == I2_NEW
    assert fenced.attributes["operation"] == "Heartbeat"


def test_a_fenced_request_naming_no_member_of_the_file_stays_in_quarantine():
    parsed = parse_lines([_fenced("10:20:05,000", "i2-a", "i2-b")], file="server.log", cluster="k")
    assert [q.reason for q in parsed.quarantine] == [
        "broker.static_fenced_request.3_0: no group id in the line"
    ]


def test_the_fenced_request_names_the_instances_new_member_id_and_stops_nothing():
    """The instance's partitions are with its new member id from the fenced line on; the old process is a
    zombie of a replacement made earlier: no removal, no stop, no rebalance."""
    out = replay_log(
        _static_restart(_fenced("10:20:05,000", I2_OLD, I2_NEW)), topics={"t": 4}, default_assignor="range"
    )
    assert not out["anomalies"]
    latest = {(a["member_id"], a["partition"]) for a in out["assignments"] if a["generation_id"] == 1}
    assert {(I2_NEW, 2), (I2_NEW, 3)} <= latest
    assert [(g["generation_id"], g["member_count"]) for g in out["generations"]] == [(1, 2)]
    assert len(out["rebalance_episodes"]) == 1
    assert not [m for m in out["partition_movements"] if m["unavailable_ms"]]


def test_a_fenced_request_after_a_replacement_no_line_showed_names_the_new_member_id_too():
    lines = [line for line in _static_restart() if "Replacing previously mapped member" not in line]
    out = replay_log(
        [*lines, _fenced("10:20:05,000", I2_OLD, I2_NEW)], topics={"t": 4}, default_assignor="range"
    )
    assert not out["anomalies"]
    latest = {(a["member_id"], a["partition"]) for a in out["assignments"] if a["generation_id"] == 1}
    assert {(I2_NEW, 2), (I2_NEW, 3)} <= latest
    assert not [m for m in out["partition_movements"] if m["unavailable_ms"]]
