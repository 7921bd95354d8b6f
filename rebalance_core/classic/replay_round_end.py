"""The classic replayer's rounds and episodes, closing: a round stabilizes (the coordinator's Stable, or
every member's sync), applies its assignment and ends in a generations row; an episode ends when no further
round is due. Whether the members' own lines are a generation's whole member list is `replay_member_list`'s.

The rules are the coordinator's `GroupCoordinator` (onCompleteJoin, setAndPropagateAssignment: CompletingRebalance
-> Stable) and `ClassicGroup` (4.0). A mixin of `classic.replayer.GroupReplayer`.
"""

from __future__ import annotations

from rebalance_core.classic import coordinator as co
from rebalance_core.classic.replay_state import (
    MemberView,
    Round,
    len_or_none,
)
from rebalance_core.events import TopicPartition
from rebalance_core.measure_records import utc_date
from rebalance_core.replay_common import ordered_across_logs


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
                self.round.computed_revokers.append(member)
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

    def _maybe_end_episode(self) -> None:
        """An episode ends once its last round is Stable, every member with its own log applied that
        round's assignment, and no follow-up round is due (docs/metrics.md, Episode)."""
        rnd = self.round
        ep = self.timeline.episode
        if rnd is None or ep is None or not rnd.stable or self.follow_up_due:
            return
        for v in self.views.values():  # a loop, not any(genexpr): checked after every event
            if v.pending is not None or (
                v.signal_ts is not None
                and not self._rejoin_outlived(v, rnd)
                and not self._closed_in_join(v, rnd)
            ):
                return  # a member with its own log is still rejoining or applying its assignment
        if self.protocol == "cooperative" and not rnd.assignment_known:
            return  # revocations unknown: the next round's reason tells whether it follows this one
        if self.protocol == "cooperative" and self._next_reason_states_follow_up(rnd):
            rnd.held_for_reason = True  # until the next line (`_end_held_episode`)
            return
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

    @staticmethod
    def _closed_in_join(view: MemberView, rnd: Round) -> bool:
        """Whether a member that gave its partitions up as lost after its last JoinGroup, and sent none
        since, is no member of the Stable round `rnd`, so the episode need not wait for it. A lost line
        after the JoinGroup went out is ConsumerCoordinator.onLeavePrepare: close() during a rebalance
        (`rebalanceInProgress()`) loses what it owns; a static member (KIP-345) sends no LeaveGroup, so no
        other line of the process follows. (onJoinPrepare's lost line, after a JoinGroup error reset the
        generation, comes before the JoinGroup it prepares: `_rejoin_after_lost` clears the mark then.)
        The leader's assignment lists the round's members without it: the coordinator dropped its
        JoinGroup (its session expired), and nothing of that process is awaited."""
        return (
            view.lost_before_rejoin
            and view.lost_at is not None
            and view.lost_at > view.signal_ts
            and rnd.members_listed
            and rnd.members is not None
            and view.member_id not in rnd.members
        )

    def _longest_join_round_trip(self) -> int | None:
        """The longest join round trip the members' logs show (`MemberView.round_trip_ms`), None if none."""
        return max(
            (v.round_trip_ms for v in self.views.values() if v.round_trip_ms is not None), default=None
        )

    def _end_episode(self, ts: int | None = None) -> None:
        self._note_protocol()
        self.timeline.end_episode(ts)
