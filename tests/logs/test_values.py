"""Parsers of the values Kafka prints inside messages (toString forms)."""

from __future__ import annotations

import pytest

from rebalance_core.events import TopicPartition
from rebalance_core.kafka_logs import values


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("[my-topic-0, my-topic-1]", ["my-topic-0", "my-topic-1"]),
        ("my-topic-0, my-topic-1", ["my-topic-0", "my-topic-1"]),
        (" SENSORS_RAW-0", ["SENSORS_RAW-0"]),
        ("{a.b-3}", ["a.b-3"]),
        ("[]", []),
        ("", []),
        ("  ", []),
    ],
)
def test_partition_lists(text, expected):
    assert [str(tp) for tp in values.partition_list(text)] == expected


@pytest.mark.parametrize("text", ["[t]", "t-x", "[-0]", "a, b-1"])
def test_bad_partition_lists(text):
    with pytest.raises(ValueError):
        values.partition_list(text)


def test_topic_ids_map_to_names():
    assert values.partition_list("[7l8rBs-X6TMq_bHE6QgWshdw-5]", {"7l8rBs-X6TMq_bHE6QgWshdw": "orders"}) == (
        TopicPartition("orders", 5),
    )


def test_classic_assignment_with_user_data():
    text = "{c1-u=Assignment(partitions=[t-0, t-1], userDataSize=111), c2-u=Assignment(partitions=[])}"
    assert values.classic_assignment(text) == {
        "c1-u": (TopicPartition("t", 0), TopicPartition("t", 1)),
        "c2-u": (),
    }
    assert values.classic_assignment("{}") == {}
    with pytest.raises(ValueError):
        values.classic_assignment("{c1=Something}")


def test_target_assignment_by_topic_id():
    text = "{m1=MemberAssignment(partitions={tA=[0, 1], tB=[2]}), m2=MemberAssignment(partitions={})}"
    assert values.target_assignment(text, {"tA": "a"}) == {
        "m1": (TopicPartition("a", 0), TopicPartition("a", 1), TopicPartition("tB", 2)),
        "m2": (),
    }


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Some(pod-1)", "pod-1"),
        ("None", None),
        ("null", None),
        ("Optional[pod-1]", "pod-1"),
        ("Optional.empty", None),
    ],
)
def test_options(text, expected):
    assert values.scala_option(text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [("Set(a-1, b-2)", ("a-1", "b-2")), ("[a-1]", ("a-1",)), ("HashSet(a)", ("a",)), ("Set()", ())],
)
def test_id_collections(text, expected):
    assert values.id_collection(text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("broker:9092 (id: 2147483646 rack: null)", {"coordinator": "broker:9092", "coordinator_id": "1"}),
        (
            "kafka:29092 (id: 2147483647 rack: r1 isFenced: false)",
            {"coordinator": "kafka:29092", "coordinator_id": "0"},
        ),
        ("kafka-3:9092 (id: 3 rack: null)", {"coordinator": "kafka-3:9092", "coordinator_id": "3"}),
        (
            "Coordinator(key='g', nodeId=1, host='kafka', port=29092, errorCode=0, errorMessage='')",
            {"coordinator": "kafka:29092", "coordinator_id": "1"},
        ),
    ],
)
def test_coordinator_nodes(text, expected):
    assert values.coordinator_node(text) == expected


def test_member_metadata():
    text = (
        "MemberMetadata(memberId=c-u, groupInstanceId=Some(i1), clientId=c, clientHost=/172.23.0.7, "
        "sessionTimeoutMs=45000, rebalanceTimeoutMs=300000, supportedProtocols=List(range, cooperative-sticky))"
    )
    fields = values.member_metadata(text)
    assert fields["memberId"] == "c-u" and fields["groupInstanceId"] == "Some(i1)"
    assert (
        fields["supportedProtocols"] == "List(range, cooperative-sticky)"
        and fields["sessionTimeoutMs"] == "45000"
    )


def test_connect_assignment():
    text = (
        "Assignment{error=0, leader='w1-u', leaderUrl='http://w1:8083/', offset=7, connectorIds=[c1], "
        "taskIds=[c1-0, my-conn-12], revokedConnectorIds=[], revokedTaskIds=[], delay=250}"
    )
    fields = values.connect_assignment(text)
    assert fields["leader"] == "w1-u" and fields["delay"] == "250" and fields["revokedTaskIds"] == ()
    assert values.connect_tasks(fields["taskIds"]) == (TopicPartition("c1", 0), TopicPartition("my-conn", 12))


def test_labelled_blocks_both_layouts():
    old = "Updating assignment with\nnow assigned partitions: t-0\ncompare with previously owned partitions: \nnewly added partitions: t-0\nrevoked partitions: \n"
    new = "Reconciling assignment with local epoch 1\n\tMember:                                    m\n\tAssigned partitions:                       [t-0]\n"
    assert values.labelled_block(old) == {"assigned": "t-0", "owned": "", "added": "t-0", "revoked": ""}
    assert values.labelled_block(new) == {"member": "m", "assigned": "[t-0]"}
