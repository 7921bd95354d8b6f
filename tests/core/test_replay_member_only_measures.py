"""Partition measures from the consumers' logs alone (no broker line): what the members' logs show is
exact, and what happens while no member with a log takes part in the group is flagged (inferred, a
lower bound), never a phantom stop-the-world, unavailability or move (issue 12)."""

from __future__ import annotations

from rebalance_core.replay_common import ReplaySettings
from tests.core.replay_helpers import ev, lone_consumer_closes_at_5000, rel, run


def only_member_leaves_then_a_new_process_joins():
    """One eager consumer (client a) is the whole group (the leader's assignment lists only it). It closes
    at 5000: onLeavePrepare revokes, a dynamic member sends LeaveGroup (AbstractCoordinator
    .maybeLeaveGroup), and the coordinator, left with no member, completes the join Empty as generation 2
    (GroupCoordinator.removeMemberAndUpdateGroup -> onCompleteJoin). A new process of the client joins at
    9000 and gets generation 3: no member's log shows generation 2."""
    return [
        *lone_consumer_closes_at_5000(),
        ev(9000, "join_sent", client_id="a"),
        ev(9005, "join_response", generation_id=3, member_id="a-2", protocol_name="range", client_id="a"),
        ev(9006, "assignment_computed", generation_id=3, member_id="a-2", assignment={"a-2": "t-0 t-1"}),
        ev(9008, "sync_response", generation_id=3, member_id="a-2", partitions="t-0 t-1", client_id="a"),
        ev(9009, "partitions_assigned", member_id="a-2", partitions="t-0 t-1", client_id="a"),
    ]


def test_a_group_emptied_between_two_processes_has_no_phantom_stop_the_world_or_moves():
    out = run(only_member_leaves_then_a_new_process_joins())
    (day,) = out["group_daily_summary"]
    # the group emptied (no consumer waited for t-0/t-1 from 5000 to 9009): no stop-the-world across the
    # gap, no unavailable time, and the new process's partitions came from no one (not moved)
    assert (day["stw_ms"], day["partition_unavailable_ms"], day["partitions_moved"]) == (0, 0, 0)
    assert day["partitions_revoked"] == 2 and day["revocations_wasted"] == 0
    moves = out["partition_movements"]
    assert [rel(m, "stop_cause", "revoked_at", "assigned_at", "unavailable_ms") for m in moves] == [
        ("revoked", 5000, None, None)
    ] * 2
    # when it emptied is in no line of the view: the rows it closed, and their episode, say so
    assert {m["source"] for m in moves} == {"inferred"}
    assert any(ep["source"] == "inferred" for ep in out["rebalance_episodes"])


def test_a_static_member_closed_without_leave_group_then_back_after_the_group_emptied():
    """A static consumer's close() revokes (onLeavePrepare) and sends no LeaveGroup (KIP-345,
    AbstractCoordinator.maybeLeaveGroup: dynamic members only); the coordinator removes it when its session
    expires and the group, with no member, turns Empty (generation 2). Its next process rejoins at 60000
    with generation 3. Its own log has no line in between: no stop-the-world across the minute."""

    def static(ts, event_type, **fields):  # a line of the instance's log
        return ev(ts, event_type, client_id="s", group_instance_id="i1", **fields)

    events = [
        static(0, "join_sent"),
        static(5, "join_response", generation_id=1, member_id="i1-A", protocol_name="range"),
        static(6, "assignment_computed", generation_id=1, member_id="i1-A", assignment={"i1-A": "t-0"}),
        static(8, "sync_response", generation_id=1, member_id="i1-A", partitions="t-0"),
        static(9, "partitions_assigned", member_id="i1-A", partitions="t-0"),
        static(5000, "partitions_revoked", member_id="i1-A", partitions="t-0"),
        static(60000, "join_sent"),
        static(60005, "join_response", generation_id=3, member_id="i1-B", protocol_name="range"),
        static(60006, "assignment_computed", generation_id=3, member_id="i1-B", assignment={"i1-B": "t-0"}),
        static(60008, "sync_response", generation_id=3, member_id="i1-B", partitions="t-0"),
        static(60009, "partitions_assigned", member_id="i1-B", partitions="t-0"),
    ]
    out = run(events)
    (day,) = out["group_daily_summary"]
    assert (day["stw_ms"], day["partition_unavailable_ms"], day["partitions_moved"]) == (0, 0, 0)
    assert day["revocations_wasted"] == 0  # given back after the group emptied: not the eager tax
    (move,) = out["partition_movements"]
    assert (move["assigned_at"], move["source"]) == (None, "inferred")


def test_a_rejoin_into_the_next_generation_is_no_emptied_group():
    """The same process's next generation (one after the last one shown) is an ordinary rebalance: its
    eager revocation waits for the reassignment (unavailable and stop-the-world as logged, observed)."""
    events = only_member_leaves_then_a_new_process_joins()[:5] + [
        ev(5000, "join_requested", member_id="a-1", reason="group is already rebalancing", client_id="a"),
        ev(5000, "partitions_revoked", member_id="a-1", partitions="t-0 t-1", client_id="a"),
        ev(5001, "join_sent", member_id="a-1", client_id="a"),
        ev(5010, "join_response", generation_id=2, member_id="a-1", protocol_name="range", client_id="a"),
        ev(5011, "assignment_computed", generation_id=2, member_id="a-1", assignment={"a-1": "t-0 t-1"}),
        ev(5012, "sync_response", generation_id=2, member_id="a-1", partitions="t-0 t-1", client_id="a"),
        ev(5013, "partitions_assigned", member_id="a-1", partitions="t-0 t-1", client_id="a"),
    ]
    out = run(events)
    (day,) = out["group_daily_summary"]
    assert (day["stw_ms"], day["partition_unavailable_ms"], day["revocations_wasted"]) == (13, 26, 2)
    assert {m["source"] for m in out["partition_movements"]} == {"observed"}


def test_a_stop_the_world_still_running_at_the_end_of_the_input_is_a_lower_bound():
    """The group's last consumer closes at 5000 and its log ends: the stop-the-world that began there goes
    on past the input (until its LeaveGroup empties the group, or a static member's session expires,
    KIP-345), so the 0 counted is a lower bound and the rows say so."""
    events = only_member_leaves_then_a_new_process_joins()[:7]
    out = run(events)
    (day,) = out["group_daily_summary"]
    assert (day["stw_ms"], day["partitions_revoked"]) == (0, 2)
    assert {m["source"] for m in out["partition_movements"]} == {"inferred"}
    assert out["rebalance_episodes"][-1]["source"] == "inferred"


def test_a_static_consumer_closed_at_the_end_of_the_input_leaves_the_last_episode_a_lower_bound():
    """A static consumer (group.instance.id) is the whole group and closes at 5000: onLeavePrepare revokes,
    and no LeaveGroup is sent (KIP-345, AbstractCoordinator.maybeLeaveGroup: dynamic members only), so no
    rebalance opens; the group stands still until its session expires (GroupCoordinator.onExpireHeartbeat),
    after the input. The stop-the-world counted (0) is a lower bound: with no episode open, the last
    episode says so."""
    static = {"client_id": "a", "group_instance_id": "a"}
    events = [
        ev(0, "join_sent", **static),
        ev(5, "join_response", generation_id=1, member_id="a-1", protocol_name="range", **static),
        ev(6, "assignment_computed", generation_id=1, member_id="a-1", assignment={"a-1": "t-0 t-1"}),
        ev(8, "sync_response", generation_id=1, member_id="a-1", partitions="t-0 t-1", **static),
        ev(9, "partitions_assigned", member_id="a-1", partitions="t-0 t-1", **static),
        ev(5000, "partitions_revoked", member_id="a-1", partitions="t-0 t-1", **static),
    ]
    out = run(events)
    (day,) = out["group_daily_summary"]
    assert (day["stw_ms"], day["partitions_revoked"]) == (0, 2)
    assert [ep["source"] for ep in out["rebalance_episodes"]] == ["inferred"]


def test_a_consumer_still_consuming_at_the_end_of_the_input_may_have_died_a_lower_bound():
    """The only consumer's log ends while it owns t-0/t-1, with no leave, close or revocation: it may be
    idle, or killed right after its last line (a process killed logs nothing). Then the coordinator
    removes it once session.timeout.ms expires (GroupCoordinator.onExpireHeartbeat, ClassicGroup in 4.0)
    and the group stands still until then, in no consumer's log. The stop-the-world counted (0) is a
    lower bound: the last episode says so, and no stop is invented (no movement row)."""
    events = only_member_leaves_then_a_new_process_joins()[:5]
    out = run(events)
    assert not out["partition_movements"]
    (day,) = out["group_daily_summary"]
    assert (day["stw_ms"], day["partition_unavailable_ms"]) == (0, 0)
    assert [ep["source"] for ep in out["rebalance_episodes"]] == ["inferred"]


def test_only_the_last_episode_says_what_follows_the_input_is_unseen():
    """Two rebalances, both logged whole: the first is observed; the one the input ends after carries the
    mark (what follows the last line is unseen)."""
    events = only_member_leaves_then_a_new_process_joins()[:5] + [
        ev(5000, "join_requested", member_id="a-1", reason="group is already rebalancing", client_id="a"),
        ev(5000, "partitions_revoked", member_id="a-1", partitions="t-0 t-1", client_id="a"),
        ev(5001, "join_sent", member_id="a-1", client_id="a"),
        ev(5010, "join_response", generation_id=2, member_id="a-1", protocol_name="range", client_id="a"),
        ev(5011, "assignment_computed", generation_id=2, member_id="a-1", assignment={"a-1": "t-0 t-1"}),
        ev(5012, "sync_response", generation_id=2, member_id="a-1", partitions="t-0 t-1", client_id="a"),
        ev(5013, "partitions_assigned", member_id="a-1", partitions="t-0 t-1", client_id="a"),
    ]
    out = run(events)
    assert [ep["source"] for ep in out["rebalance_episodes"]] == ["observed", "inferred"]
    assert {m["source"] for m in out["partition_movements"]} == {"observed"}


def test_a_group_whose_consumers_all_left_ends_observed():
    """Every consumer's LeaveGroup is logged and nothing is consumed at the end: nothing can follow
    unseen (the group is Empty), so no mark beyond what the leave itself settles."""
    events = only_member_leaves_then_a_new_process_joins()
    events = events + [
        ev(20000, "partitions_revoked", member_id="a-2", partitions="t-0 t-1", client_id="a"),
        ev(20000, "leave_sent", member_id="a-2", reason="the consumer is being closed", client_id="a"),
    ]
    out = run(events)
    by_generation = {ep["first_generation_id"]: ep["source"] for ep in out["rebalance_episodes"]}
    assert by_generation[3] == "observed"


def test_with_the_brokers_log_a_consumer_still_consuming_at_the_end_stays_observed():
    """The coordinator logs the removal of a member whose session expired ("Member M ... has failed,
    removing it from the group"): a broker log that ends without one shows the member was alive (or not
    yet expired) and the counts stand."""
    events = [
        ev(0, "join_received", member_id="a-1", client_id="a"),
        ev(1, "rebalance_prepared", reason="Adding new member a-1"),
        ev(2, "join_completed", generation_id=1, leader_id="a-1", members="a-1", protocol_name="range"),
    ] + only_member_leaves_then_a_new_process_joins()[1:5]
    out = run(events)
    assert {ep["source"] for ep in out["rebalance_episodes"]} == {"observed"}


def test_an_eager_revocation_with_no_signal_logged_before_it_is_a_latest_stop_when_a_rejoin_follows():
    """A 2.x consumer logs no "Request joining group due to" line: its onJoinPrepare revocation (Kafka's
    ConsumerCoordinator) is the first line of the rebalance, after the member learned of it at an unlogged
    heartbeat. It stopped consuming at that signal, so the stops placed at the revocation are the latest
    they can be: inferred (EXPECTED.md 09 written as a 2.x log)."""
    from tests.core import replay_scenarios as sc

    events = [e for e in sc.log_09_client_eager() if e.event_type != "join_requested"]
    out = run(events)
    assert {m["source"] for m in out["partition_movements"]} == {"inferred"}
    assert out["rebalance_episodes"][-1]["source"] == "inferred"
    with_signal = run(sc.log_09_client_eager())
    back_to_itself = [m for m in with_signal["partition_movements"] if m["wasted_revocation"]]
    assert back_to_itself and {m["source"] for m in back_to_itself} == {"observed"}


def test_a_member_without_a_log_is_timed_by_the_logged_members_lines_an_estimate():
    """Member-only logs: a member with no log of its own (known from the leader's assignment) starts its
    partitions at the first sync of the generation a logged member shows, not at its own SyncGroup
    response: those rows are inferred."""
    from tests.core import replay_scenarios as sc

    out = run(sc.log_09_client_eager())
    to_other = [m for m in out["partition_movements"] if m["to_member_id"] == "consumer-legacy-5485"]
    assert len(to_other) == 2 and {m["source"] for m in to_other} == {"inferred"}


def test_a_close_revokes_at_its_own_instant():
    """close(): onLeavePrepare revokes, then the LeaveGroup (AbstractCoordinator.maybeLeaveGroup); no rejoin
    follows, so the stop is the revocation's own instant (observed) while the other member consumes on."""
    events = [
        ev(0, "join_response", generation_id=1, member_id="a-1", protocol_name="range", client_id="a"),
        ev(
            1,
            "assignment_computed",
            generation_id=1,
            member_id="a-1",
            assignment={"a-1": "t-0", "b-1": "t-1"},
        ),
        ev(2, "sync_response", generation_id=1, member_id="a-1", partitions="t-0", client_id="a"),
        ev(3, "partitions_assigned", member_id="a-1", partitions="t-0", client_id="a"),
        ev(0, "join_response", generation_id=1, member_id="b-1", protocol_name="range", client_id="b"),
        ev(2, "sync_response", generation_id=1, member_id="b-1", partitions="t-1", client_id="b"),
        ev(3, "partitions_assigned", member_id="b-1", partitions="t-1", client_id="b"),
        ev(5000, "partitions_revoked", member_id="a-1", partitions="t-0", client_id="a"),
        ev(5000, "leave_sent", member_id="a-1", reason="the consumer is being closed", client_id="a"),
    ]
    out = run(events)
    (move,) = out["partition_movements"]
    assert rel(move, "stop_cause", "revoked_at", "source") == ("revoked", 5000, "observed")


def test_a_connect_workers_assignment_is_rebuilt_from_its_increments_since_its_first_join():
    """KIP-415 (IncrementalCooperativeAssignor): a worker's assignment line prints what it is given and
    what it must revoke, not all it runs. From its first JoinGroup without a member id on, what it runs
    after each generation = before - revoked + added; rows `inferred` (no line lists the workers)."""

    def worker(ts, event_type, **fields):
        return ev(ts, event_type, client_id="w1", protocol_type="connect", **fields)

    events = [
        worker(0, "join_sent"),
        worker(5, "join_response", generation_id=1, member_id="w1-a", protocol_name="sessioned"),
        worker(8, "sync_response", generation_id=1, member_id="w1-a", attributes={"added": "c-0, c-1"}),
        worker(9, "partitions_assigned", member_id="w1-a", partitions="c-0 c-1"),
        worker(100, "join_sent", member_id="w1-a"),
        worker(105, "join_response", generation_id=2, member_id="w1-a", protocol_name="sessioned"),
        worker(108, "sync_response", generation_id=2, member_id="w1-a", attributes={"revoked": "c-1"}),
        worker(109, "partitions_revoked", member_id="w1-a", partitions="c-1"),
        worker(200, "join_sent", member_id="w1-a"),
        worker(205, "join_response", generation_id=3, member_id="w1-a", protocol_name="sessioned"),
        worker(208, "sync_response", generation_id=3, member_id="w1-a", attributes={"added": "c-2"}),
        worker(209, "partitions_assigned", member_id="w1-a", partitions="c-2"),
    ]
    out = run(events)
    rows = {}
    for r in out["assignments"]:
        rows.setdefault(r["generation_id"], []).append(f"{r['topic']}-{r['partition']}")
    assert rows == {1: ["c-0", "c-1"], 2: ["c-0"], 3: ["c-0", "c-2"]}
    assert {r["source"] for r in out["assignments"]} == {"inferred"}


def test_a_connect_worker_seen_only_from_mid_life_gets_no_assignment_rows():
    """Its log starts after its first JoinGroup: what it ran before is unknown, so is what it runs."""
    out = run(
        [
            ev(100, "join_sent", member_id="w1-a", client_id="w1", protocol_type="connect"),
            ev(
                105,
                "join_response",
                generation_id=2,
                member_id="w1-a",
                protocol_name="sessioned",
                client_id="w1",
            ),
            ev(
                108,
                "sync_response",
                generation_id=2,
                member_id="w1-a",
                attributes={"added": "c-2"},
                client_id="w1",
            ),
        ]
    )
    assert not out["assignments"]


def _worker(ts, event_type, client, **fields):
    return ev(ts, event_type, client_id=client, protocol_type="connect", **fields)


def _w3_joins_then_falls_silent(w3_rejoin_at: int):
    """Connect workers w1, w2 in generation 1; w3 sends its JoinGroup with its member id (KIP-394's
    second one) at `w3_rejoin_at` and its log shows nothing after it; w1 and w2 rejoin at 1000 and get
    generation 2 at 1010."""
    events = []
    for n, client in enumerate(("w1", "w2")):
        member = f"{client}-a"
        events += [
            _worker(n, "join_sent", client, member_id=member),
            _worker(
                10, "join_response", client, generation_id=1, member_id=member, protocol_name="sessioned"
            ),
            _worker(12, "sync_response", client, generation_id=1, member_id=member),
            _worker(1000 + n, "join_sent", client, member_id=member),
            _worker(
                1010, "join_response", client, generation_id=2, member_id=member, protocol_name="sessioned"
            ),
            _worker(1012, "sync_response", client, generation_id=2, member_id=member),
        ]
    events.append(_worker(w3_rejoin_at, "join_sent", "w3", member_id="w3-a"))
    return sorted(events, key=lambda e: e.ts)


def test_a_connect_worker_whose_join_group_went_unanswered_makes_the_generations_members_unknown():
    """A Connect leader logs no assignment: the workers' own lines are the member list. w3's JoinGroup
    reached the coordinator before w1's and w2's (the join phase still awaited theirs), so it is in the
    generation that phase completed (GroupCoordinator.onCompleteJoin: every member that joined), though
    its log shows no response (it died): generation 2's members are not known (null), never [w1, w2]."""
    out = run(_w3_joins_then_falls_silent(500))
    members = {g["generation_id"]: g["members"] for g in out["generations"]}
    assert members == {1: ["w1-a", "w2-a"], 2: None}


def test_a_connect_worker_joining_after_the_awaited_join_groups_leaves_the_generations_members_known():
    """w3's JoinGroup was sent after every JoinGroup the generation's workers sent: it may have missed
    that join phase (its response would name the next generation), so the logged workers stay the list.
    The hosts' clocks are taken to agree (`clock_skew_ms` 0): else see the next test."""
    out = run(_w3_joins_then_falls_silent(1005), ReplaySettings(clock_skew_ms=0))
    members = {g["generation_id"]: g["members"] for g in out["generations"]}
    assert members == {1: ["w1-a", "w2-a"], 2: ["w1-a", "w2-a"]}


def test_a_join_group_within_the_clock_skew_of_the_awaited_ones_leaves_the_members_unknown():
    """w3's JoinGroup is 4 ms after w2's, in another host's log: within the clocks' disagreement allowance
    (`ReplaySettings.clock_skew_ms`, 100 ms by default) it may have been sent first and joined the phase,
    so generation 2's list is not known (null), never a confident [w1, w2]."""
    out = run(_w3_joins_then_falls_silent(1005))
    members = {g["generation_id"]: g["members"] for g in out["generations"]}
    assert members == {1: ["w1-a", "w2-a"], 2: None}


def _w1_w2_rejoin_for_generation_3(events: list) -> list:
    for client in ("w1", "w2"):
        member = f"{client}-a"
        events += [
            _worker(2000, "join_sent", client, member_id=member),
            _worker(
                2010, "join_response", client, generation_id=3, member_id=member, protocol_name="sessioned"
            ),
            _worker(2012, "sync_response", client, generation_id=3, member_id=member),
        ]
    return sorted(events, key=lambda e: e.ts)


def test_a_join_group_within_the_clock_skew_may_be_in_the_next_generation_too():
    """w3's JoinGroup at 1005 is within the clocks' disagreement allowance of w2's at 1001: it may have
    reached the coordinator before (generation 2) or after (generation 3) that phase completed, so it is
    not counted in generation 2 alone and removed by the next completion (onCompleteJoin): generation 3's
    list is not known either (null), never a confident [w1, w2]."""
    out = run(_w1_w2_rejoin_for_generation_3(_w3_joins_then_falls_silent(1005)))
    members = {g["generation_id"]: g["members"] for g in out["generations"]}
    assert members == {1: ["w1-a", "w2-a"], 2: None, 3: None}


def test_a_restarted_workers_old_member_id_with_an_unanswered_join_group_may_still_be_in_the_group():
    """A new process of client w3 (a JoinGroup without a member id) does not remove the old one's member
    id: the coordinator keeps it until its session expires (GroupCoordinator heartbeat expiration), so
    the old id whose JoinGroup went unanswered may be in the next generation: members null."""
    events = _w3_joins_then_falls_silent(500) + [
        _worker(700, "join_sent", "w3"),  # the new process: KIP-394's first JoinGroup, no member id
        _worker(712, "join_sent", "w3", member_id="w3-b"),
        _worker(1010, "join_response", "w3", generation_id=2, member_id="w3-b", protocol_name="sessioned"),
        _worker(1012, "sync_response", "w3", generation_id=2, member_id="w3-b"),
    ]
    out = run(sorted(events, key=lambda e: e.ts))
    members = {g["generation_id"]: g["members"] for g in out["generations"]}
    assert members == {1: ["w1-a", "w2-a"], 2: None}


def _a_loses_its_partitions(then: list) -> list:
    """Cooperative consumers a and b in generation 1 (a: t-0, b: t-1); a's process stalls unlogged, the
    coordinator drops it, and a's next line at 5000 gives its partitions up as lost; `then` follows."""
    return [
        ev(0, "join_sent", member_id="a-1", client_id="a"),
        ev(1, "join_sent", member_id="b-1", client_id="b"),
        ev(
            5,
            "join_response",
            generation_id=1,
            member_id="a-1",
            protocol_name="cooperative-sticky",
            client_id="a",
        ),
        ev(
            6,
            "join_response",
            generation_id=1,
            member_id="b-1",
            protocol_name="cooperative-sticky",
            client_id="b",
        ),
        ev(
            7,
            "assignment_computed",
            generation_id=1,
            member_id="a-1",
            assignment={"a-1": "t-0", "b-1": "t-1"},
        ),
        ev(8, "sync_response", generation_id=1, member_id="a-1", partitions="t-0", client_id="a"),
        ev(8, "partitions_assigned", member_id="a-1", partitions="t-0", client_id="a"),
        ev(9, "sync_response", generation_id=1, member_id="b-1", partitions="t-1", client_id="b"),
        ev(9, "partitions_assigned", member_id="b-1", partitions="t-1", client_id="b"),
        ev(5000, "partitions_lost", member_id="a-1", partitions="t-0", client_id="a"),
        *then,
    ]


def test_partitions_lost_before_a_rejoin_stopped_at_an_unlogged_instant_before_the_lost_line():
    """ConsumerCoordinator.onJoinPrepare gives the partitions up as lost when the generation or member id
    was reset: the coordinator had dropped the member (its session expired while it stalled) before it
    noticed, so it stopped consuming earlier than the lost line, when no line shows: the stop placed at
    the lost line is the latest it can be (`inferred`, the unavailable time a lower bound)."""
    out = run(_a_loses_its_partitions([ev(5001, "join_sent", client_id="a")]))
    (stop,) = [m for m in out["partition_movements"] if m["from_member_id"] == "a-1"]
    assert rel(stop, "stop_cause", "revoked_at", "source") == ("lost", 5000, "inferred")


def test_partitions_lost_by_a_close_during_a_rebalance_stop_at_the_close():
    """A close() during a rebalance gives the partitions up as lost in onLeavePrepare, at the instant it
    stops consuming, and sends a LeaveGroup, no JoinGroup: observed."""
    out = run(
        _a_loses_its_partitions(
            [ev(5000, "leave_sent", member_id="a-1", reason="the consumer is being closed", client_id="a")]
        )
    )
    (stop,) = [m for m in out["partition_movements"] if m["from_member_id"] == "a-1"]
    assert rel(stop, "stop_cause", "revoked_at", "source") == ("lost", 5000, "observed")


def test_a_connect_worker_joining_well_before_the_join_phase_completed_is_in_its_generation():
    """w1 joins an empty group at 0; w3's JoinGroups (KIP-394: without, then with its member id, one round
    trip of 10 ms apart) follow at 100 and 110, after w1's last one, and its log ends. The first response
    naming generation 1 comes at 3000 (group.initial.rebalance.delay.ms held the join phase open,
    InitialDelayedJoin): w3's JoinGroup reached the coordinator long before the phase completed (more
    than two of its round trips), so it is in generation 1, which its log never shows: members null."""
    events = [
        _worker(0, "join_sent", "w1", member_id="w1-a"),
        _worker(100, "join_sent", "w3"),
        _worker(110, "join_sent", "w3", member_id="w3-a"),
        _worker(3000, "join_response", "w1", generation_id=1, member_id="w1-a", protocol_name="sessioned"),
        _worker(3002, "sync_response", "w1", generation_id=1, member_id="w1-a"),
    ]
    out = run(events)
    assert [(g["generation_id"], g["members"]) for g in out["generations"]] == [(1, None)]


def test_a_dead_workers_unanswered_join_group_counts_in_one_generation_only():
    """w3 never rejoins after the generation that counted it: the next join phase's completion removes it
    (GroupCoordinator.onCompleteJoin removes the dynamic members that did not rejoin; ClassicGroup in
    4.0), so generation 3, which w1 and w2 rejoined at 2000, has their two ids again, known without any
    session timeout."""
    out = run(_w1_w2_rejoin_for_generation_3(_w3_joins_then_falls_silent(500)))
    members = {g["generation_id"]: g["members"] for g in out["generations"]}
    assert members == {1: ["w1-a", "w2-a"], 2: None, 3: ["w1-a", "w2-a"]}


def test_a_lone_consumer_killed_silently_is_stopped_before_the_next_process_joins_the_emptied_group():
    """Consumer a-1 is the whole group and is killed after its last line (no LeaveGroup, no callback). The
    coordinator removes it when its session expires and completes the join Empty as generation 2
    (GroupCoordinator.onExpireHeartbeat -> onCompleteJoin), in no consumer's log. A new process joins at
    9000 and gets generation 3. A live dynamic member logs every generation it joins, and one that did not
    rejoin is dropped at the join's completion, so a-1 was out before generation 2 formed, before the new
    JoinGroup reached the coordinator: its partitions stop at that send, the latest they can (member_failed,
    inferred),
    the group emptied unseen, and the new process's partitions came from no one (not moved)."""
    out = run(
        [
            *lone_consumer_closes_at_5000()[:5],
            ev(9000, "join_sent", client_id="a"),
            ev(9005, "join_response", generation_id=3, member_id="a-2", protocol_name="range", client_id="a"),
            ev(9006, "assignment_computed", generation_id=3, member_id="a-2", assignment={"a-2": "t-0 t-1"}),
            ev(9008, "sync_response", generation_id=3, member_id="a-2", partitions="t-0 t-1", client_id="a"),
            ev(9009, "partitions_assigned", member_id="a-2", partitions="t-0 t-1", client_id="a"),
        ]
    )
    (day,) = out["group_daily_summary"]
    assert day["partitions_moved"] == 0
    stops = [m for m in out["partition_movements"] if m["stop_cause"] == "member_failed"]
    assert [rel(m, "revoked_at") for m in stops] == [(9000,)] * 2
    assert {m["source"] for m in stops} == {"inferred"}
    # when a-1 died is in no line: the stop-the-world and unavailable time are lower bounds
    assert out["rebalance_episodes"][-1]["source"] == "inferred"
