"""The classic replayer's rounds and episodes, closing: a round stabilizes (the coordinator's Stable, or
every member's sync), applies its assignment and ends in a generations row; members that joined without a
line of their own are counted; an episode ends when no further round is due.

The rules are the coordinator's `GroupCoordinator` (onCompleteJoin, setAndPropagateAssignment: CompletingRebalance
-> Stable) and `ClassicGroup` (4.0), and for the joins no log answered, the client's `AbstractCoordinator`. A
mixin of `classic.replayer.GroupReplayer`.
"""

from __future__ import annotations

from rebalance_core import client_config
from rebalance_core.assignors import CLIENT_ASSIGNORS
from rebalance_core.classic import coordinator as co
from rebalance_core.classic.replay_state import (
    JOIN_SENT,
    LEAVE_SENT,
    MemberView,
    Round,
    SilentJoiner,
    len_or_none,
    process_of,
)
from rebalance_core.events import Event, TopicPartition, classic_member_owner
from rebalance_core.measure_records import utc_date
from rebalance_core.replay_common import ordered_across_logs

# the broker's group.initial.rebalance.delay.ms default (GroupCoordinatorConfig): an Empty group's first join
# phase lasts at most max(it, the rebalance timeout) (InitialDelayedJoin); a members'-logs view cannot see it
KAFKA_INITIAL_REBALANCE_DELAY_MS = 3_000


class RoundEnds:
    """Close rounds and episodes: stabilize, apply the assignment, write the generations row."""

    def _stabilize(self, ts: int, source: str) -> None:
        """The round's group turned Stable at `ts`: its assignment is known (observed/inferred) and
        members without member-side events apply it now (coordinator timing)."""
        rnd = self.round
        rnd.stable = True
        rnd.stabilized_at = ts
        gen = rnd.generation_id
        assignment = self.leader_assignment
        if assignment is None and self.has_coordinator:
            assignment = self._infer_assignment(rnd)
            source = "inferred" if assignment is not None else source
        if assignment is not None:
            rnd.source = source
            # an inference without the previous owners cannot tell what a cooperative round revoked
            rnd.assignment_known = source == "observed" or self.assignment_generation is not None
            if source == "inferred" and self._subscription_change_unseen(rnd):
                rnd.assignment_known = False
            if rnd.members is None:
                rnd.members = sorted(assignment)
            self._emit_assignment(assignment, gen, ts, source)
            self._apply_assignment(assignment, ts, gen, source)
            self._set_assignment(assignment, gen, source)
            self.timeline.owners_known()
        elif self.has_coordinator and not self._members_apply_own_syncs(rnd):
            # no line gives this generation's assignment and the assignor could not be rerun: who
            # consumes what is unknown from here, and so are the partition measures (null, not 0)
            self.timeline.owners_unknown()
        if source == "inferred" and self.timeline.episode is not None:
            self.timeline.episode.source = "inferred"
        if self.kip415_delay_inferred and None not in (rnd.leader_id, self.closed_leader):
            # a leader that did not compute the previous generation has no view of the previous
            # assignment (IncrementalCooperativeAssignor.performTaskAssignment clears it on a generation
            # mismatch): nothing is lost to it, nothing delayed
            self.kip415_delay_inferred = rnd.leader_id == self.closed_leader
        if self.kip415_delay_inferred and self.timeline.episode is not None:
            self.follow_up_due = True  # the workers rejoin when the delay expires (`_kip415_lost`)
            self.timeline.episode.source = "inferred"
        self.timeline.round_completed(gen, ts)

    def _subscription_change_unseen(self, rnd: Round) -> bool:
        """The round's reason says a member's subscription changed (3.2+ client reason, set by
        ConsumerCoordinator.rejoinNeededOrPending: "subscription has changed"), and no line gave that
        member's subscription: the assignor rerun (`_infer_assignment`) used the old one, so what the
        round revoked, and whether a KIP-429 follow-up round comes, is not known from it."""
        if "subscription has changed" not in (rnd.reason or ""):
            return False
        named = co.members_named_in_reason(rnd.reason)
        info = self.group.members.get(named[0]) if named is not None else None
        return info is None or info.subscription is None

    def _members_apply_own_syncs(self, rnd: Round) -> bool:
        """Whether every member of the round has a log of its own (its sync gives its partitions)."""
        members = rnd.members
        if members is None and self.group.membership_known:
            members = list(self.group.members)
        return members is not None and all(self._is_member_timed(m, self._instance_of(m)) for m in members)

    def _apply_assignment(
        self, assignment: dict[str, list[TopicPartition]], ts: int, gen, source: str
    ) -> None:
        """Coordinator timing for members without member-side events: stop owned - assigned and start
        assigned - owned at the stabilization instant. In member-only logs that instant is the first sync
        of the generation a logged member shows, not the coordinator's Stable nor the member's own
        SyncGroup response: their rows are estimates (`inferred`)."""
        if not self.has_coordinator:
            source = "inferred"
        for member in sorted(self._owners()):
            if self._is_member_timed(member):
                continue
            revoked = sorted(self.timeline.partitions_of(member) - set(assignment.get(member, ())))
            info = self.group.members.get(member)
            subscribed = set(info.subscription) if info and info.subscription is not None else None
            if self.protocol == "cooperative" and any(
                subscribed is None or tp.topic in subscribed for tp in revoked
            ):
                # KIP-429: the owner revokes and rejoins. Partitions of topics it unsubscribed were
                # revoked in onJoinPrepare already and cause no follow-up round.
                self.follow_up_due = True
            if revoked:
                self._stop_all(revoked, member, ts, "revoked", self._instance_of(member), source)
        for member in sorted(assignment):
            if self._is_member_timed(member):
                continue
            if assignment[member]:
                self._start_all(assignment[member], member, ts, self._instance_of(member), gen, source)

    def _end_round(self, ts: int | None = None) -> None:
        rnd = self.round
        if rnd is None:
            return
        self.round = None
        if rnd.ended_at is None:
            rnd.ended_at = (
                rnd.stabilized_at
                if rnd.stabilized_at is not None
                else (ts if ts is not None else self.last_ts)
            )
        if rnd.generation_id is None:
            return  # the join phase never completed: no generation (its time counts in the episode)
        previous_members = (  # the last closed generation's, if known (`_absent_static_member_may_be_in`)
            self.remaining_members
            if self.closed_generation is not None and self.closed_generation < rnd.generation_id
            else None
        )
        self.closed_generation = rnd.generation_id
        self.closed_leader = None if rnd.ended_empty else rnd.leader_id
        connect = (rnd.protocol_type or self.group.protocol_type) == "connect"
        # a Connect leader logs no assignment line: the workers' own lines are the member list
        listed = rnd.members_listed or (connect and not self.has_coordinator)
        self.remaining_members = (
            list(rnd.members)
            if (listed or rnd.ended_empty) and rnd.members is not None and not rnd.stand_ins
            else None
        )
        ended = rnd.stabilized_at if rnd.stabilized_at is not None else rnd.ended_at
        rebalance_ms = (
            ended - rnd.started_at if rnd.started_at is not None and (rnd.stable or rnd.ended_empty) else None
        )
        date = utc_date(rnd.ended_at if rnd.ended_at is not None else rnd.started_at)
        self.timeline.day(date).generations += 1
        members = sorted(rnd.members) if rnd.members is not None else None
        stood_in = None
        if members is not None and set(members) & set(rnd.stand_ins):
            # an old id stands for a replaced instance's new one, which no line named (yet)
            stood_in, members = members, None
        if (
            not self.has_coordinator
            and not rnd.members_listed
            and not rnd.ended_empty
            and (
                self._silent_joiner_may_be_in(rnd)
                or (not connect and (self._unanswered_process_may_be_in(rnd) or rnd.join_unlogged))
                or self._absent_static_member_may_be_in(rnd, previous_members)
            )
        ):
            # members' logs only, and no leader's assignment listing them (a Connect leader logs none): the
            # members whose JoinGroup responses name the generation, and the leader they name, are the
            # list, unless a member whose log shows nothing of the generation may be in it (a JoinGroup
            # its log never saw answered: `_silent_joiner_may_be_in`; a static member that did not rejoin:
            # `_absent_static_member_may_be_in`); then the list is not known.
            members = stood_in = None
            rnd.member_count = None
        elif not self.has_coordinator and rnd.members_listed:
            self._forget_unlisted_joins(rnd)
        if not connect and self._assignment_incomplete(rnd, members):
            rnd.source = "inferred"
        if (
            members is not None
            and not self.has_coordinator
            and not rnd.members_listed
            and not rnd.ended_empty
            and not self._hidden_member_excluded(rnd, members)
        ):
            rnd.source = "inferred"  # the list is the logged members': one whose log is not here may be in it
        self._out["generations"].append(
            {
                **self.key,
                "event_date": date,
                "generation_id": rnd.generation_id,
                "group_protocol": "classic",
                "protocol_type": rnd.protocol_type or self.group.protocol_type,
                "protocol_name": rnd.protocol_name or self.protocol_name,
                "rebalance_protocol": self.protocol,
                "leader_member_id": None
                if rnd.ended_empty or rnd.leader_id in rnd.stand_ins
                else rnd.leader_id,
                "member_count": rnd.member_count if rnd.member_count is not None else len_or_none(members),
                "static_member_count": rnd.static_member_count,
                "members": members,
                "rebalance_started_at": rnd.started_at,
                "join_completed_at": rnd.join_completed_at,
                "stabilized_at": rnd.stabilized_at if rnd.stable else None,
                "ended_empty": rnd.ended_empty,
                "rebalance_reason": rnd.reason,
                "rebalance_ms": rebalance_ms,
                "episode_id": rnd.episode_id,
                "episode_round": rnd.episode_round,
                "source": rnd.source,
                "timing_source": rnd.timing_source,
            }
        )
        if rnd.stand_ins and (stood_in is not None or rnd.leader_id in rnd.stand_ins):
            self._stand_in_rows.append(
                [self._out["generations"][-1], stood_in, rnd.leader_id, list(rnd.stand_ins)]
            )

    def _assignment_incomplete(self, rnd: Round, members: list[str] | None) -> bool:
        """Members' logs only: a member of the generation (its JoinGroup response names it) whose log states
        no assignment for it, and no leader's line listing it. Each consumer learns only its own partitions
        (ConsumerCoordinator.onJoinComplete logs them after its SyncGroup response); the leader's
        "Finished assignment for group at generation N" (ConsumerCoordinator.onLeaderElected, INFO 2.4+) is
        the one line naming everyone's. One that died or stalled between its JoinGroup response and its
        SyncGroup is still assigned partitions (the leader assigns every member of the JoinGroup response,
        the coordinator stores them: GroupCoordinator.setAndPropagateAssignment): the rows the others' lines
        give are not the generation's whole assignment, so it is `inferred`, not a confident partial one."""
        if self.has_coordinator or members is None or rnd.ended_empty or rnd.generation_id is None:
            return False
        stated = self.emitted if self.emitted_generation == rnd.generation_id else set()
        return not set(members) <= stated

    def _hidden_member_excluded(self, rnd: Round, members: list[str]) -> bool:
        """Members' logs only, no leader's line listing generation `rnd`: whether the assignment the
        logged members state for it rules out a member whose log is not in the input (a host not
        collected, a non-Java client). The leader assigns every member of the JoinGroup response
        (ConsumerCoordinator.onLeaderElected), and Kafka's assignors give each member subscribed to a
        topic at least one of its partitions when the topic has more partitions than members:
        RangeAssignor (floor(partitions / subscribers) each), RoundRobinAssignor (a topic's partitions
        are consecutive in its sorted order and go to its subscribers in turn), the sticky assignors
        (balanced: no subscriber holds none while another holds two). So when every partition of every
        known topic (`ReplaySettings.topics`; not the counts learned from the partitions lines name, a
        lower bound) is in the members' stated assignments and
        each topic has more partitions than the generation has stated members, no other member shares
        those topics. A custom assignor, unknown topics, or a gap: the list is inferred. (A member of
        topics no setting names stays undetectable from these logs.)"""
        protocol = rnd.protocol_name or self.protocol_name
        topics = self.settings.topics
        if protocol not in CLIENT_ASSIGNORS or not topics:
            return False
        if any(count <= len(members) for count in topics.values()):
            return False
        covered = set()
        gen = rnd.generation_id
        for row in reversed(self._out["assignments"]):
            if row["generation_id"] != gen:
                if row["generation_id"] is not None and gen is not None and row["generation_id"] < gen:
                    break
                continue
            if row["member_id"] in members:
                covered.add((row["topic"], row["partition"]))
        return all(
            (topic, partition) in covered
            for topic, count in self.topics.items()
            for partition in range(count)
        )

    def _silent_joiner_may_be_in(self, rnd: Round) -> bool:
        """Members' logs only, no leader's assignment line for the generation (a Connect leader logs none),
        so the members' own lines are the member list: whether a member whose log shows a JoinGroup and
        nothing answering it (it died or stalled after sending it) may be in generation `rnd`. A JoinGroup that reached the coordinator
        before the join phase completed is in the generation it completes (GroupCoordinator.onCompleteJoin
        / ClassicGroup: every member that joined): one sent before another the phase still awaited (a
        member of the generation sent it later), or more than twice the worker's own round trip
        (KIP-394's two JoinGroups) before the first response naming the generation (the coordinator answers every
        member at once on completion). One sent later may have missed it (its response, if logged,
        names the next generation). A dynamic member that does not rejoin is in that generation only: the
        next join phase's completion removes it (GroupCoordinator.onCompleteJoin), if its session did not
        expire first. A static one stays until its session expires (heartbeat expiration is scheduled at
        the join's completion, GroupCoordinator.completeAndScheduleNextHeartbeatExpiration):
        session.timeout.ms from the first generation it may be in (its config dump or
        `ReplaySettings.session_timeout_ms`; unknown: every later generation)."""
        formed = rnd.join_completed_at if rnd.join_completed_at is not None else rnd.stabilized_at
        if formed is None:
            return False
        views_may_be_in = False
        for view in self.views.values():
            if view.join_sent_at is None or view.member_id in (rnd.members or ()):
                continue
            if view.unanswered_since is not None and formed > view.unanswered_since and not view.instance:
                # counted in an earlier generation and never rejoined: this join phase's completion removed
                # it (GroupCoordinator.onCompleteJoin: dynamic members not rejoined), if its session did
                # not expire first; a static member stays until its session expires
                continue
            timeout = self._configured_session_timeout(view.member_id) or self.settings.session_timeout_ms
            if self._unanswered_join_may_be_in(view, rnd, formed, timeout, self.settings.clock_skew_ms):
                views_may_be_in = True
        # every silent joiner's state advances with each generation, whatever the views say
        return self._silent_joiners_may_be_in(rnd, formed) or views_may_be_in

    def _note_process_join(self, e: Event) -> None:
        """Members' logs only: a process's JoinGroup, the response answering it, or its LeaveGroup
        (`_unanswered_process_may_be_in`). A consumer sends one JoinGroup at a time and logs the response
        that names its generation (AbstractCoordinator.joinGroupIfNeeded / JoinGroupResponseHandler). A
        new member's first JoinGroup carries no id and only gets one (KIP-394, MEMBER_ID_REQUIRED); the
        second carries it. A JoinGroup without an id while one is unanswered, or with another id, is a new
        member's (a new process of the same client): the earlier one stays unanswered. Once a response
        answers a later JoinGroup, the earlier unanswered ones were a dead predecessor's: no later line
        (the live member's rejoin with its id, its LeaveGroup, its response) is theirs. Each entry:
        [sent, its LeaveGroup, the member id its lines name, superseded by an answered later JoinGroup]."""
        joins = self.unanswered_processes.setdefault(process_of(e), [])
        waiting = joins[-1] if joins and joins[-1][1] is None and not _superseded(joins[-1]) else None
        if e.event_type == JOIN_SENT:
            if waiting is None or not e.member_id or waiting[2] not in (None, e.member_id):
                joins.append([e.ts, None, e.member_id, False])
            else:
                waiting[2] = e.member_id
        elif e.event_type == LEAVE_SENT:
            if waiting is not None:
                waiting[1] = e.ts
        else:
            rnd = self.round
            answers = rnd is not None and rnd.generation_id == e.generation_id
            if answers and e.member_id and e.member_id not in rnd.answered:
                rnd.answered.append(e.member_id)
            if waiting is not None:
                if answers:
                    # a member of the generation sent it: the join phase awaited it (its member view has
                    # no JoinGroup of its own when the line named no id: a static member, KIP-394's first)
                    rnd.latest_member_join = max(rnd.latest_member_join or waiting[0], waiting[0])
                joins.pop()
                for earlier in joins:  # a dead predecessor's: the live member's lines are not theirs
                    earlier[3:] = [True]
            elif answers:
                # a response with no JoinGroup line before it: these logs do not show every JoinGroup,
                # so a member whose log shows nothing of the generation may have joined it
                rnd.join_unlogged = True

    def _unanswered_process_may_be_in(self, rnd: Round) -> bool:
        """Consumers' logs only: whether a process whose log shows a JoinGroup sent before generation
        `rnd` formed, and no response answering it, may be in it. The coordinator completes the join
        phase with every member whose JoinGroup reached it and answers them all at once
        (GroupCoordinator.onCompleteJoin; ClassicGroup in 4.0): such a process either missed the phase or
        is in it and died, stalled or left before logging the response: unless its lines named its member
        id and another member's response names that id (the leader: JoinGroupResponse.leader), or its
        lines name no id and a named member's own lines show nothing else of it, it may be a member no
        line of the generation names. Its LeaveGroup removes it
        (GroupCoordinator.removeMemberAndUpdateGroup) only if it reached the coordinator first: taken so
        when sent a full join round trip (the KIP-394 pair of JoinGroups, `MemberView.round_trip_ms`, the
        longest the logs show) before the formation. A JoinGroup sent earlier than that is in this
        generation, and the next join phase's completion removes the dynamic member that never rejoins
        (onCompleteJoin), so it is in no later one; one sent within it may be in the next instead."""
        formed = rnd.join_completed_at if rnd.join_completed_at is not None else rnd.stabilized_at
        if formed is None:
            return True
        round_trip = self._longest_join_round_trip()
        members = rnd.members or ()
        may_be_in, unnamed, matched = False, 0, set()
        for process, joins in list(self.unanswered_processes.items()):
            open_joins = []
            skew = self._skew_from_formation(rnd, process)
            for entry in joins:
                sent, left, member = entry[:3]
                if sent >= formed + skew:
                    open_joins.append(entry)  # its response, if any, names a later generation
                    continue
                if left is not None and round_trip is not None and left + round_trip + skew <= formed:
                    continue  # its LeaveGroup arrived before the phase completed
                if member is None:
                    unnamed += 1
                elif member in members:
                    matched.add(member)
                else:
                    may_be_in = True  # a member the generation's lines do not name
                if round_trip is None or sent + round_trip + skew > formed:
                    open_joins.append(entry)  # it may have missed this phase for the next
            if open_joins:
                self.unanswered_processes[process] = open_joins
            else:
                del self.unanswered_processes[process]
        # a JoinGroup whose lines name no id is one member each: at most the members a response names
        # (the leader) whose own lines show neither a response nor their JoinGroup's id
        named_only = [m for m in members if m not in rnd.answered and m not in matched]
        return may_be_in or unnamed > len(named_only)

    def _forget_unlisted_joins(self, rnd: Round) -> None:
        """Consumers' logs only, a generation the leader's assignment lists in full
        (ConsumerCoordinator.onLeaderElected: every member of the JoinGroup response): an unanswered
        JoinGroup (`_note_process_join`) that reached the coordinator before this join phase completed
        and whose member the list leaves out was answered in this or an earlier phase, and its member
        removed since (GroupCoordinator.onCompleteJoin, a session expiry, a LeaveGroup). Only a new
        JoinGroup, which its log would show, brings the process back, so the entry counts for no later
        generation. Reached it before: sent before the JoinGroup of a listed member the phase awaited
        (`Round.latest_member_join`, as `_unanswered_join_may_be_in`), or a full join round trip
        (`MemberView.round_trip_ms`) before the formation."""
        formed = rnd.join_completed_at if rnd.join_completed_at is not None else rnd.stabilized_at
        if formed is None or rnd.members is None:
            return
        round_trip = self._longest_join_round_trip()
        awaited = rnd.latest_member_join

        def reached_before(sent: int) -> bool:
            return (awaited is not None and sent < awaited) or (
                round_trip is not None and sent + round_trip <= formed
            )

        for process, joins in list(self.unanswered_processes.items()):
            kept = [entry for entry in joins if entry[2] in rnd.members or not reached_before(entry[0])]
            if kept:
                self.unanswered_processes[process] = kept
            else:
                del self.unanswered_processes[process]

    def _absent_static_member_may_be_in(self, rnd: Round, previous_members: list[str] | None) -> bool:
        """Members' logs only: whether a static member (KIP-345) whose log shows nothing of generation
        `rnd` may be in it. The completion of a join phase removes only the dynamic members that did not
        rejoin; a static one keeps its place, with its last metadata, until its session expires
        (GroupCoordinator.onCompleteJoin: `notYetRejoinedMembers.filterNot(_.isStaticMember)`; ClassicGroup
        in 4.0), and a static member's JoinGroup in a Stable group gets the current generation back
        without a rebalance (GroupCoordinator.updateStaticMemberAndRebalance), so the generation may have
        formed before the logs begin. Where the logs show static members, one no line shows may be in it,
        unless the members of the last generation the logs closed are known (`previous_members`: its
        leader's assignment listed them, or it ended Empty; None: not known): then this one formed within
        the logs, and a member no line of it names is one of those that did not rejoin, which only a
        static one survives (a member joining since sent a JoinGroup its log shows, answered with a
        generation the logs show or `_unanswered_process_may_be_in`). A static
        member keeps its group.instance.id, which begins its member id (GroupMetadata / ClassicGroup
        .generateMemberId): one whose instance a member of this generation has was replaced by it."""
        if not any(view.instance for view in self.views.values()):
            return False
        if previous_members is None:
            return True
        members = rnd.members or ()
        instances = {self._instance_of(m) or classic_member_owner(m) for m in members}
        for member in previous_members:
            instance = self._instance_of(member)
            if member not in members and instance is not None and instance not in instances:
                return True
        return False

    def _silent_joiners_may_be_in(self, rnd: Round, formed: int) -> bool:
        """`_silent_joiner_may_be_in` for the members no line named, or only their LeaveGroup
        (`SilentJoiner`). Such a member never rejoins: the join phase after the one that counted it removes
        it (GroupCoordinator.onCompleteJoin removes the dynamic members not rejoined; ClassicGroup in 4.0),
        if its session did not expire first. So it is in one generation at most: the first formed after its
        JoinGroup arrived; a JoinGroup sent within that bound of the formation may have made this one or
        the next. A LeaveGroup reaches the coordinator within a round trip of its line and removes the
        member (GroupCoordinator.removeMemberAndUpdateGroup): a generation formed later does not count it."""
        may_be_in, still_open = False, []
        skew = self.settings.clock_skew_ms  # a silent joiner's log shows nothing of the generation
        infos = {m: self.group.members.get(m) for m in rnd.members or ()}
        named = [(m, i.client_id if i else None, self._instance_of(m)) for m, i in infos.items()]
        for joiner in self.silent_joiners:
            if joiner.left_at is not None and formed >= joiner.left_at + (joiner.round_trip_ms or 0) + skew:
                continue  # its LeaveGroup arrived first
            rtt = joiner.round_trip_ms
            # every member the generation's lines name, and the joiner, must show its own dump: the group's
            # rebalance timeout is the largest of its members' (a rotated-away dump may hold it)
            longest_phase = client_config.group_rebalance_timeout_ms(
                self.client_configs, [*named, _joiner_member(joiner)]
            )
            if (
                longest_phase is not None
                and rtt is not None
                and ordered_across_logs(
                    joiner.join_sent_at + 2 * rtt + max(longest_phase, KAFKA_INITIAL_REBALANCE_DELAY_MS),
                    formed,
                    skew,
                )
            ):
                # the join phase its JoinGroup entered ended within the group's rebalance timeout
                # (DelayedJoin / InitialDelayedJoin): a generation no line shows counted it, and this one,
                # formed later, removed it (onCompleteJoin: dynamic members not rejoined)
                continue
            if joiner.join_sent_at >= formed + skew:
                still_open.append(joiner)
                continue
            may_be_in = True
            clearly_before = self._unanswered_join_may_be_in(joiner, rnd, formed, None, skew)
            if not clearly_before and joiner.unanswered_since is None:
                joiner.unanswered_since = formed
                still_open.append(joiner)  # it may be in the next generation instead
        self.silent_joiners = still_open
        return may_be_in

    @staticmethod
    def _unanswered_join_may_be_in(
        joiner: MemberView | SilentJoiner, rnd: Round, formed: int, timeout: int | None, skew: int
    ) -> bool:
        """`_silent_joiner_may_be_in` for one JoinGroup no line answered (`joiner.join_sent_at`). Its log
        is not the one of the instants it is compared with: within `skew` of them, it may be before."""
        if joiner.unanswered_since is None:
            awaited, rtt = rnd.latest_member_join, joiner.round_trip_ms
            before_awaited = awaited is not None and joiner.join_sent_at < awaited + skew
            # its JoinGroup's way there and the response's way back, each bounded by a round trip
            before_completion = rtt is not None and joiner.join_sent_at < formed - 2 * rtt + skew
            if not (before_awaited or before_completion):
                return False
            joiner.unanswered_since = formed
        return timeout is None or formed <= joiner.unanswered_since + timeout

    def _maybe_end_episode(self) -> None:
        """An episode ends once its last round is Stable, every member with its own log applied that
        round's assignment, and no follow-up round is due (docs/metrics.md, Episode)."""
        rnd = self.round
        ep = self.timeline.episode
        if rnd is None or ep is None or not rnd.stable or self.follow_up_due:
            return
        for v in self.views.values():  # a loop, not any(genexpr): checked after every event
            if v.pending is not None or (v.signal_ts is not None and not self._rejoin_outlived(v, rnd)):
                return  # a member with its own log is still rejoining or applying its assignment
        if self.protocol == "cooperative" and not rnd.assignment_known:
            return  # revocations unknown: the next round's reason tells whether it follows this one
        self._end_round()
        self._end_episode()

    def _rejoin_outlived(self, view: MemberView, rnd: Round) -> bool:
        """Whether a member whose log shows a JoinGroup and nothing answering it (it died or stalled after
        sending it) is no member of the Stable round `rnd`, so the episode need not wait for it: the
        leader's assignment lists the generation's members without it, and its JoinGroup went out more
        than a join round trip (`MemberView.round_trip_ms`, the longest the logs show) before the round
        began. The coordinator answers every JoinGroup of a join phase at its completion
        (GroupCoordinator.onCompleteJoin; ClassicGroup in 4.0): one that reached it before this round
        began was answered in an earlier phase, or removed with its member (a dynamic member that does
        not rejoin, onCompleteJoin; a session expiry), and one reaching it later would start the next
        round, not join this one."""
        if not rnd.members_listed or rnd.members is None or view.member_id in rnd.members:
            return False
        round_trip = self._longest_join_round_trip()
        # the round's start is another member's line (or the broker's): a clock-skew allowance apart
        return (
            round_trip is not None
            and rnd.started_at is not None
            and ordered_across_logs(view.signal_ts + round_trip, rnd.started_at, self.settings.clock_skew_ms)
        )

    def _skew_from_formation(self, rnd: Round, process: str) -> int:
        """The clock-skew allowance between `process`'s log and the instant generation `rnd` formed
        (`ReplaySettings.clock_skew_ms`): none when that instant is its own JoinGroup response."""
        return 0 if rnd.join_completed_by == process else self.settings.clock_skew_ms

    def _longest_join_round_trip(self) -> int | None:
        """The longest join round trip the members' logs show (`MemberView.round_trip_ms`), None if none."""
        return max(
            (v.round_trip_ms for v in self.views.values() if v.round_trip_ms is not None), default=None
        )

    def _end_episode(self, ts: int | None = None) -> None:
        self._note_protocol()
        self.timeline.end_episode(ts)


def _joiner_member(joiner: SilentJoiner) -> tuple[str | None, str | None, str | None]:
    """A silent joiner as (member id, client id, group.instance.id), as far as its lines name them."""
    return joiner.member_id, joiner.client_id, joiner.instance


def _superseded(entry: list) -> bool:
    """Whether an unanswered JoinGroup (`RoundEnds._note_process_join`) was followed by an answered
    JoinGroup of its process (entries of states written before the flag have three fields)."""
    return len(entry) > 3 and bool(entry[3])
