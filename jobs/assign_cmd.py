"""`rebalance-replay assign`: one assignment, JSON in (stdin) and JSON out (stdout).

in:  {"assignor": "range", "topics": {"t1": 3}, "members": [{"member_id": "c1",
      "group_instance_id": null, "subscription": ["t1"], "owned": [["t1", 0]], "generation": 1,
      "rack": null}], "topic_ids": {...}, "partition_racks": {"t1": [["r1", "r2"], ...]}}
out: {"assignment": {"c1": [["t1", 0], ["t1", 1], ["t1", 2]]}}
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from jobs.usage import UsageError
from rebalance_core.assignors import (
    ASSIGNOR_NAMES,
    AssignmentError,
    GroupSpec,
    MemberSubscription,
    get_assignor,
)
from rebalance_core.events import TopicPartition


def configure(parser: argparse.ArgumentParser) -> None:
    parser.epilog = (
        "stdin: a JSON object with 'assignor', 'topics' (topic -> partition count), 'members' (member_id, "
        "subscription, owned, group_instance_id, rack, generation), and optionally 'topic_ids' and "
        "'partition_racks'. The KIP-848 assignors (uniform, server-range) order and hash topics by topic id; "
        "a topic without an id in 'topic_ids' is represented by its name."
    )
    parser.add_argument(
        "--assignor",
        help=f"assignor name, overrides the input's 'assignor' field ({', '.join(ASSIGNOR_NAMES)})",
    )


def spec_from_json(doc: Any) -> GroupSpec:
    """GroupSpec from the JSON document; UsageError on anything malformed."""
    if not isinstance(doc, dict):
        raise UsageError("input must be a JSON object")
    topics = doc.get("topics", {})
    if not isinstance(topics, dict):
        raise UsageError("'topics' must be an object topic -> partition count")
    for topic, count in topics.items():
        if not isinstance(count, int) or isinstance(count, bool):
            raise UsageError(f"partition count of topic {topic!r} must be an integer, got {count!r}")
    raw_members = doc.get("members", [])
    if not isinstance(raw_members, list):
        raise UsageError("'members' must be a list")
    members = []
    for i, m in enumerate(raw_members):
        if not isinstance(m, dict) or not isinstance(m.get("member_id"), str):
            raise UsageError(f"member #{i} must be an object with a string 'member_id'")
        subscription = m.get("subscription") or []
        if not isinstance(subscription, list) or not all(isinstance(t, str) for t in subscription):
            raise UsageError(f"member {m['member_id']!r}: 'subscription' must be a list of topic names")
        try:
            owned = tuple(_partition(tp) for tp in (m.get("owned") or []))
        except (KeyError, TypeError, ValueError) as exc:
            raise UsageError(f"member {m['member_id']!r}: bad 'owned' entry ({exc!r})") from None
        for key in ("group_instance_id", "rack"):
            if m.get(key) is not None and not isinstance(m[key], str):
                raise UsageError(f"member {m['member_id']!r}: {key!r} must be a string or null")
        generation = m.get("generation")
        if generation is not None and (not isinstance(generation, int) or isinstance(generation, bool)):
            raise UsageError(f"member {m['member_id']!r}: 'generation' must be an integer or null")
        members.append(
            MemberSubscription(
                member_id=m["member_id"],
                subscription=tuple(subscription),
                group_instance_id=m.get("group_instance_id"),
                owned=owned,
                generation=generation,
                rack=m.get("rack"),
            )
        )
    racks_doc = doc.get("partition_racks") or {}
    if not isinstance(racks_doc, dict) or not all(
        isinstance(per_partition, list)
        and all(
            r is None or (isinstance(r, list) and all(isinstance(x, str) for x in r)) for r in per_partition
        )
        for per_partition in racks_doc.values()
    ):
        raise UsageError("'partition_racks' must be an object topic -> per partition, a list of rack names")
    partition_racks = {
        topic: tuple(frozenset(r or ()) for r in per_partition) for topic, per_partition in racks_doc.items()
    }
    topic_ids = doc.get("topic_ids") or {}
    if not isinstance(topic_ids, dict) or not all(isinstance(i, str) for i in topic_ids.values()):
        raise UsageError("'topic_ids' must be an object topic -> topic id")
    try:
        return GroupSpec(
            topics=topics, members=tuple(members), partition_racks=partition_racks, topic_ids=topic_ids
        )
    except AssignmentError as exc:
        raise UsageError(str(exc)) from None


def warn_unknown_topics(spec: GroupSpec) -> None:
    """One stderr line per subscribed topic missing from 'topics': the assignment leaves it out, as Kafka's
    assignors skip a topic without metadata (AbstractPartitionAssignor.assign: "Skipping assignment for
    topic ... since no metadata is available"), but a typo in the input should not pass unnoticed."""
    subscribers: dict[str, list[str]] = {}
    for member in spec.members:
        for topic in member.subscription:
            if topic not in spec.topics:
                subscribers.setdefault(topic, []).append(member.member_id)
    for topic, members in sorted(subscribers.items()):
        print(
            f"rebalance-replay assign: warning: topic {topic!r} (subscribed by {', '.join(members)}) is not in "
            "'topics': not assigned, as Kafka skips a topic without metadata",
            file=sys.stderr,
        )


def _partition(value: Any) -> TopicPartition:
    if isinstance(value, dict):
        return TopicPartition(str(value["topic"]), int(value["partition"]))
    topic, partition = value
    if not isinstance(topic, str) or not isinstance(partition, int):
        raise ValueError(f"{value!r} is not [topic, partition]")
    return TopicPartition(topic, partition)


def main(args: argparse.Namespace) -> int:
    try:
        doc = json.loads(sys.stdin.buffer.read())
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise UsageError(f"malformed JSON on stdin: {exc}") from None
    except RecursionError:
        raise UsageError("malformed JSON on stdin: nested deeper than it can be read") from None
    name = args.assignor or (doc.get("assignor") if isinstance(doc, dict) else None)
    if not name:
        raise UsageError("no assignor: pass --assignor or an 'assignor' field")
    if not isinstance(name, str):
        raise UsageError(f"'assignor' must be a name such as range, got {json.dumps(name)[:80]}")
    spec = spec_from_json(doc)
    warn_unknown_topics(spec)
    try:
        assignor = get_assignor(name)
        assignment = assignor.assign(spec)
    except AssignmentError as exc:
        raise UsageError(str(exc)) from None
    out = {
        "assignment": {m: [[tp.topic, tp.partition] for tp in sorted(tps)] for m, tps in assignment.items()}
    }
    # json.dumps, not json.dump: dump streams through the pure-Python encoder (10x slower at 10k partitions)
    sys.stdout.write(json.dumps(out) + "\n")
    return 0
