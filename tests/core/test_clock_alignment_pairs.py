"""rebalance_core.clock_alignment's pairs, one rule each: a JoinGroup/SyncGroup response is never logged
before the completion it names (GroupCoordinator.onCompleteJoin / setAndPropagateAssignment), so such a
pair proves the member clock behind whatever its size; a JoinGroup logged after that completion proves it
ahead unless the coordinator may have answered it with no join phase (a static member's Stable rejoin, an
unchanged-metadata rejoin); a pair contradicting the log's others (a generation id reused after the group
was deleted) is left out and the log reported."""

from __future__ import annotations

import itertools

from rebalance_core.clock_alignment import member_log_alignment, member_log_offsets
from rebalance_core.events import Event
from schemas.events import EventType

_IDS = itertools.count()


def _event(side: str, event_type: str, ts: int, generation: int, **fields) -> Event:
    return Event(
        event_id=str(next(_IDS)),
        ts=ts,
        cluster="k",
        group_id="g",
        side=side,
        event_type=event_type,
        generation_id=generation,
        line=ts,
        **fields,
    )


def _completed(ts: int, generation: int) -> Event:
    return _event("coordinator", EventType.JOIN_COMPLETED.value, ts, generation, file="server.log")


def _joined(sent: int, answered: int, generation: int, **fields) -> list[Event]:
    """A member's JoinGroup sent at `sent` and its response naming `generation` at `answered` (c.log)."""
    member = {"side": "member", "client_id": "c", "file": "c.log", **fields}
    return [
        _event(event_type=EventType.JOIN_SENT.value, ts=sent, generation=None, **member),
        _event(event_type=EventType.JOIN_RESPONSE.value, ts=answered, generation=generation, **member),
    ]


def test_a_response_logged_long_before_the_completion_it_names_shifts_the_log():
    events = [_completed(10_000, 1), *_joined(7_000, 8_000, 1)]  # 2 s behind
    assert member_log_offsets(events, 100) == {"c.log": -2_000}


def test_a_joingroup_logged_long_after_the_completion_it_names_shifts_the_log():
    events = [_completed(10_000, 1), *_joined(11_900, 12_010, 1)]  # 2 s ahead
    assert member_log_offsets(events, 100) == {"c.log": 1_900}


def test_a_static_members_joingroup_long_after_the_completion_bounds_nothing_beyond_the_allowance():
    events = [_completed(10_000, 1), *_joined(60_000, 60_010, 1, group_instance_id="i-1")]
    assert member_log_offsets(events, 100) == {}


def test_a_second_response_naming_the_same_generation_bounds_nothing_beyond_the_allowance():
    """An unchanged-metadata rejoin in Stable gets the current generation back (handleJoinGroup)."""
    events = [_completed(10_000, 1), *_joined(9_000, 10_005, 1), *_joined(60_000, 60_010, 1)]
    assert member_log_offsets(events, 100) == {}


def test_a_pair_contradicting_the_logs_others_is_left_out_and_the_log_reported():
    """Generation 1 of the member's log is the group's earlier lifetime (deleted, then recreated): its
    response precedes the broker's generation 1 by a minute, while generations 2 and 3 agree."""
    events = [
        _completed(100_000, 1),
        _completed(110_000, 2),
        _completed(120_000, 3),
        *_joined(39_000, 40_000, 1),
        *_joined(109_000, 110_005, 2),
        *_joined(119_000, 120_005, 3),
    ]
    alignment = member_log_alignment(events, 100)
    assert alignment.offsets == {}
    # generations 2 and 3 leave the offset in [-1 000, 5]; generation 1 puts it at most -60 000
    assert alignment.contradicted == {"c.log": 60_000 - 1_000}
