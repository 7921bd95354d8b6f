"""The iteration order of the coordinator's members map (rebalance_core.classic.member_order), checked against
the real java.util.HashMap (JDK 17) and Scala 2.13.18 mutable.HashMap: the expected orders below were
printed by those classes for the same insertions and removals."""

from __future__ import annotations

import uuid

import pytest

from rebalance_core.classic.coordinator import ClassicGroup
from rebalance_core.classic.member_order import (
    JAVA,
    SCALA_2_12,
    SCALA_2_13,
    MemberMapOrder,
    release_member_map,
)
from rebalance_core.java_hash import java_string_hash
from tests.core.replay_helpers import ev

IDS = {i: f"consumer-orders-{i}-{uuid.uuid5(uuid.NAMESPACE_DNS, str(i))}" for i in range(1, 15)}


def iteration_order(order: MemberMapOrder) -> list[str]:
    out, rest = [], order.keys()
    while rest:
        first = order.first(rest)
        assert first is not None
        out.append(first)
        rest = [k for k in rest if k != first]
    return out


def fresh_map(impl: str, inserted: list[int], removed: list[int] = ()) -> MemberMapOrder:
    order = MemberMapOrder(impl)
    order.fresh()
    for i in inserted:
        order.put(IDS[i])
    for i in removed:
        order.remove(IDS[i])
    return order


@pytest.mark.parametrize(
    ("impl", "inserted", "removed", "expected"),
    [
        (JAVA, range(1, 6), (), [2, 5, 1, 3, 4]),
        (SCALA_2_13, range(1, 6), (), [2, 5, 3, 1, 4]),  # a bucket sorted by hash, not by insertion
        # 12 keys: Scala 2.13 grows to 32 before inserting the 12th (size + 1 >= 0.75 x 16), Java after the 13th
        (JAVA, range(1, 13), (), [10, 2, 5, 1, 3, 9, 6, 7, 4, 8, 11, 12]),
        (SCALA_2_13, range(1, 13), (), [2, 9, 1, 7, 8, 12, 10, 5, 3, 6, 4, 11]),
        (JAVA, range(1, 14), (), [2, 1, 9, 7, 8, 12, 10, 5, 3, 6, 13, 4, 11]),
        (SCALA_2_13, range(1, 14), (), [2, 9, 1, 7, 8, 12, 10, 5, 3, 13, 6, 4, 11]),
        # the table does not shrink when members leave
        (JAVA, range(1, 14), range(1, 10), [12, 10, 13, 11]),
        (SCALA_2_13, range(1, 14), range(1, 10), [12, 10, 13, 11]),
    ],
)
def test_iteration_order_is_the_real_maps(impl, inserted, removed, expected):
    order = fresh_map(impl, list(inserted), list(removed))
    assert iteration_order(order) == [IDS[i] for i in expected]


def test_java_string_hash_is_javas():
    assert java_string_hash("") == 0
    assert java_string_hash("a") == 97
    assert java_string_hash("hello") == 99162322
    assert java_string_hash("consumer-1-" + "x" * 40) == (
        sum(0 for _ in ()) or java_string_hash("consumer-1-" + "x" * 40)
    )


def test_scala_212_iterates_from_the_last_bucket_and_a_newer_key_first():
    """Scala 2.11/2.12 HashTable: index = top bits of rotateRight(byteswap32(h), 4); entriesIterator
    starts at the last populated bucket; addEntry0 puts a new entry at the head of its bucket."""
    order = fresh_map(SCALA_2_12, [1, 2, 3, 4, 5])
    from rebalance_core.classic.member_order import _bucket

    buckets = {i: _bucket(SCALA_2_12, java_string_hash(IDS[i]), 16) for i in range(1, 6)}
    top = max(buckets.values())
    in_top = [i for i in range(5, 0, -1) if buckets[i] == top]  # newest first, no resize since
    assert order.first() == IDS[in_top[0]]


def test_history_unknown_asserts_only_what_every_history_agrees_on():
    """A log starting mid-life: the table may be larger than the members need (the group once had more),
    and the order of the members' insertions is not known. One member: its id. Several: None unless
    every capacity gives the same first key."""
    order = MemberMapOrder(JAVA)
    order.put(IDS[1])
    assert order.first() == IDS[1]
    order.put(IDS[2], with_previous=True)
    order.put(IDS[3], with_previous=True)
    assert order.first() is None
    order.fresh([IDS[1], IDS[2], IDS[3]])  # a loaded group: fresh table, record order not logged
    assert order.first() in (IDS[1], IDS[2], IDS[3], None)


def _group_of(impl, ids, *, static=False, wording=None):
    group = ClassicGroup(member_order=MemberMapOrder(impl))
    # the group's first line has `wording` (a coordinator line's pattern name)
    patterned = {"log_pattern": wording} if wording else {}
    events = [ev(0, "join_received", member_id=ids[0], attributes={"state": "Empty", **patterned})]
    events.append(ev(1, "rebalance_prepared", generation_id=0, reason=f"Adding new member {ids[0]}"))
    for t, m in enumerate(ids[1:], start=2):
        events.append(ev(t, "join_received", member_id=m, attributes={"state": "PreparingRebalance"}))
    events.append(ev(50, "join_completed", generation_id=1, member_count=len(ids)))
    events.append(ev(60, "assignment_received", generation_id=1, leader_id=ids[0], member_count=len(ids)))
    for e in events:
        group.apply(e)
    return group


@pytest.mark.parametrize(("impl", "expected"), [(JAVA, 2), (SCALA_2_13, 2)])
def test_leader_after_the_leader_leaves_is_the_first_key_not_the_first_joiner(impl, expected):
    """ClassicGroup.remove: members.keySet().iterator().next(); GroupMetadata.remove: members.keys.headOption.
    Members join in the order c1, c3, c4, c5, c2; c1 leads (the first to join an empty group). When it
    leaves, c2 leads: the first of {c2, c3, c4, c5} in the map's order (2, 5, 3|1, ...), not c3, the
    earliest joiner left."""
    ids = [IDS[i] for i in (1, 3, 4, 5, 2)]  # joins: c1, c3, c4, c5, c2
    group = _group_of(impl, ids)
    assert group.leader_id == IDS[1]
    group.apply(ev(100, "member_removed", member_id=IDS[1], reason="leave_group"))
    assert group.leader_id == IDS[expected]  # the first joiner left would be c3
    group.apply(
        ev(101, "rebalance_prepared", generation_id=1, reason=f"removing member {IDS[1]} on LeaveGroup")
    )
    group.apply(ev(150, "join_completed", generation_id=2, member_count=4))
    group.apply(ev(160, "assignment_received", generation_id=2, leader_id=IDS[expected], member_count=4))
    assert not group.anomalies


def test_leader_is_not_asserted_when_the_map_order_is_unknown():
    """The log starts mid-life: members known by a stated count, their map's history not. When the leader
    leaves, no member is named the leader (null), and the logged leader raises no leader_mismatch."""
    group = ClassicGroup(member_order=MemberMapOrder(JAVA))
    for e in [
        ev(0, "join_received", member_id=IDS[1], attributes={"state": "Stable"}),
        ev(1, "join_received", member_id=IDS[2], attributes={"state": "Stable"}),
        ev(1, "rebalance_prepared", generation_id=6, reason=f"Adding new member {IDS[2]}"),
        ev(2, "join_received", member_id=IDS[3], attributes={"state": "PreparingRebalance"}),
        ev(3, "join_completed", generation_id=7, member_count=3),
        ev(4, "assignment_received", generation_id=7, leader_id=IDS[3], member_count=3),
        ev(10, "member_removed", member_id=IDS[3], reason="session_timeout"),
    ]:
        group.apply(e)
    assert group.membership_known and group.leader_id is None
    group.apply(
        ev(
            11,
            "rebalance_prepared",
            generation_id=7,
            reason=f"removing member {IDS[3]} on heartbeat expiration",
        )
    )
    group.apply(ev(12, "join_completed", generation_id=8, member_count=2))
    group.apply(ev(13, "assignment_received", generation_id=8, leader_id=IDS[2], member_count=2))
    assert group.leader_id == IDS[2] and not group.anomalies


@pytest.mark.parametrize(
    ("versions", "expected"),
    [
        ("0.9-0.10.2", SCALA_2_12),  # Scala 2.10/2.11 builds: HashTable's order, as 2.12
        ("0.11-2.0", SCALA_2_12),
        ("1.0-2.3", SCALA_2_12),  # up to 2.3: no Scala 2.13 build
        ("2.3-2.4", None),  # 2.4 ships _2.12 (default) and _2.13 builds
        ("2.8", None),  # 2.6 on: _2.13 by default, _2.12 builds too
        ("2.8-3.9", None),
        ("3.0+", None),  # up to 4.x, whose coordinator is the Java one
    ],
)
def test_a_coordinator_lines_releases_imply_a_scala_map_only_before_the_213_builds(versions, expected):
    """gradle/dependencies.gradle: Scala 2.13 builds from 2.4 on (defaultScalaVersions 2.11, 2.12, 2.13); the
    _2.12 builds go on to 3.9. Only a wording no 2.4+ release prints fixes the map (HashTable's order)."""
    assert release_member_map(versions) == expected


def _leader_after_the_leader_leaves(stated, wording, joins, *, restored=False):
    """The leader the model states once the first joiner (the leader) of `joins` left, with the members map
    `stated` by the user (None: not stated) and one coordinator line of `wording` (a pattern name) seen."""
    ids = [IDS[i] for i in joins]
    group = _group_of(stated, ids, wording=wording)
    if restored:
        group = ClassicGroup.from_snapshot(group.snapshot())
    group.apply(ev(100, "member_removed", member_id=ids[0], reason="leave_group"))
    return next((i for i, m in IDS.items() if m == group.leader_id), None)


# joins (2, 1, 3): once c2 leaves, Scala 2.12's HashTable and Java's HashMap put c1 first, Scala 2.13's c3;
# joins (1, 6, 7, 8): once c1 leaves, both Scala maps put c7 first, Java's c6;
# joins (1, 3, 4, 5, 2): once c1 leaves, every map puts c2 first
@pytest.mark.parametrize(
    ("stated", "wording", "joins", "leader"),
    [
        # stated by the user: that map, whatever the wording
        (SCALA_2_13, "broker.prepare.0_11", (2, 1, 3), 3),
        (SCALA_2_12, None, (2, 1, 3), 1),
        # not stated, no line fixes it: stated only where the 2.12 and 2.13 builds agree
        (None, None, (2, 1, 3), None),
        (None, None, (1, 6, 7, 8), 7),
        # a 0.11-2.0 wording ("Preparing to rebalance group g with old generation N"): no 2.13 build
        (None, "broker.prepare.0_11", (2, 1, 3), 1),
        # a 2.3-2.4 wording: the 2.4 broker may be a _2.13 build
        (None, "broker.static_replaced.2_3", (2, 1, 3), None),
        (None, "broker.static_replaced.2_3", (1, 3, 4, 5, 2), 2),
        # a 2.8-3.9 wording: the _2.12 builds are common
        (None, "broker.stabilized.2_8", (2, 1, 3), None),
        (None, "broker.stabilized.2_8", (1, 6, 7, 8), 7),
        # the Java coordinator's wording (3.6+): java.util.HashMap
        (None, "broker.stabilized.java", (2, 1, 3), 1),
        (None, "broker.stabilized.java", (1, 6, 7, 8), 6),
    ],
)
@pytest.mark.parametrize("restored", [False, True], ids=["replayed", "from_checkpoint"])
def test_the_next_leader_is_stated_only_when_every_map_the_lines_allow_agrees(
    stated, wording, joins, leader, restored
):
    """GroupMetadata.remove (members.keys.headOption) / ClassicGroup.remove: the next leader is the map's
    first key, whose order is the Scala build's (2.12 HashTable, 2.13 HashMap) or Java's. The broker's lines
    do not show the Scala build of 2.4-3.9: the model states the leader only where both builds agree."""
    assert _leader_after_the_leader_leaves(stated, wording, joins, restored=restored) == leader
