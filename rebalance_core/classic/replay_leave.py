"""The classic replayer's member side, callbacks and leaving: partitions revoked / lost / assigned
(the instants ownership stops and starts), the poll timeout and a member's LeaveGroup, and the group a
last leave empties.

The rules are the client's `ConsumerCoordinator` (onJoinPrepare, onJoinComplete, invokePartitionsRevoked /
Lost / Assigned) and `AbstractCoordinator` (maybeLeaveGroup, the max.poll.interval.ms expiry), and the
coordinator's `GroupCoordinator` removeMemberAndUpdateGroup / `ClassicGroup` (4.0). A mixin of
`classic.replayer.GroupReplayer`.
"""

from __future__ import annotations

from rebalance_core.classic.replay_state import (
    POLL_TIMEOUT_REASON,
    MemberView,
    process_of,
)
from rebalance_core.events import Event, TopicPartition


class LeaveLines:
    """Handlers of a member's rebalance callbacks and leave (ConsumerCoordinator / AbstractCoordinator)."""

    def _m_partitions_revoked(self, e: Event, view: MemberView) -> None:
        listed = list(e.partitions or ())
        view.revoked_at = e.ts
        pending = view.pending
        at = e.ts
        if pending is not None:  # cooperative: revoking owned - assigned after the sync
            pending.to_stop = [tp for tp in pending.to_stop if tp not in listed]
        elif view.signal_ts is not None and self.protocol != "cooperative":
            at = view.signal_ts  # eager: revoked in onJoinPrepare; it stopped at its first signal
        elif self.protocol != "cooperative":
            view.revoked_unsignalled = True  # a close(), unless a rejoin follows (`_unsignalled_rejoin`)
        self._assume_owned_before_the_log(view, listed)
        closed_unpolled = self._closed_after_unanswered_signal(view, listed)
        owned = self.timeline.partitions_of(view.member_id)
        # the listed partitions it consumes, in the line's order, each once (a repeat is no longer its own)
        self._stop_all(
            [tp for tp in dict.fromkeys(listed) if tp in owned], view.member_id, at, "revoked", view.instance
        )
        if closed_unpolled:
            self.timeline.stops_inferred(view.member_id)

    def _closed_after_unanswered_signal(self, view: MemberView, listed: list[TopicPartition]) -> bool:
        """A cooperative member revokes everything it owns after a rebalance signal, with no JoinGroup sent
        since: a close() (ConsumerCoordinator.onLeavePrepare revokes all it owns; a rejoin's onJoinPrepare
        revokes only the partitions its subscription dropped, then sends the JoinGroup). The signal asked
        its next poll() to rejoin (AbstractCoordinator.ensureActiveGroup), and none did: its poll loop
        never came back after the signal (a stall, a GC pause), so it consumed nothing since a last poll no
        line shows. The stops at the revocation are the latest they can be (`inferred`, lower bounds), as
        for an eager signal stop a removal or poll timeout ends (`_polled_out`)."""
        if self.protocol != "cooperative" or view.signal_ts is None or view.join_sent_at is not None:
            return False
        owned = self.timeline.partitions_of(view.member_id)
        return bool(owned) and owned <= set(listed)

    def _unsignalled_rejoin(self, view: MemberView) -> None:
        """The member rejoins after an eager revocation no rebalance signal of its log preceded. A close()
        revokes at that instant (onLeavePrepare); a rejoin's onJoinPrepare revoked after the member learned
        of the rebalance, which a 2.x consumer does not log at INFO (no "Request joining group due to"
        line; the heartbeat thread's REBALANCE_IN_PROGRESS is at DEBUG): it stopped consuming at that
        signal, so the stops placed at the revocation are the latest they can be (`inferred`: the
        unavailable and stop-the-world time from them are lower bounds)."""
        if view.revoked_unsignalled:
            view.revoked_unsignalled = False
            self.timeline.stops_inferred(view.member_id)

    def _rejoin_after_lost(self, view: MemberView) -> None:
        """The member sends a JoinGroup after giving its partitions up as lost: that was
        ConsumerCoordinator.onJoinPrepare finding its generation or member id reset ("Giving away all
        assigned partitions as lost since generation/memberID has been reset"): the coordinator had
        dropped it already (its session expired while the process stalled, or a heartbeat was fenced),
        and the consumer learns it only at its next poll. It stopped consuming at an instant no line
        shows, before that: the stops placed at the lost line are the latest they can be (`inferred`:
        the unavailable and stop-the-world time from them are lower bounds). A close() gives them up as
        lost in onLeavePrepare (during a rebalance) at the instant it stops, and sends no JoinGroup."""
        if view.lost_before_rejoin:
            view.lost_before_rejoin = False
            self.timeline.stops_inferred(view.member_id)

    def _removed_member_rejoins(self, view: MemberView) -> None:
        """Members' logs only: `view` gave its partitions up as lost and now joins without a member id:
        the coordinator had removed it (its session expired while the process stalled: UNKNOWN_MEMBER_ID,
        AbstractCoordinator.resetGenerationOnResponseError resets the member id; a fenced generation
        alone keeps it). When it was the last member the group had (the leader's assignment listed no
        one else, the others' LeaveGroups were logged) and no join phase is open, the removal emptied
        the group: GroupCoordinator.onExpireHeartbeat -> removeMemberAndUpdateGroup prepares a
        rebalance with no member to wait for, completed at once as an Empty generation
        (GroupMetadata / ClassicGroup.initNextGeneration). Like the last member's LeaveGroup
        (`_left_group`): its round starts at the lost line, the latest the removal can be; the
        generation the rejoin gets settles it (`_settle_emptied`: one more than the last, the rejoin
        joined that join phase instead).
        When others of its generation remain and none of their lines showed a rebalance since (their
        processes died or stalled too, or their logs are not in the input), the removal still started
        one (removeMemberAndUpdateGroup -> maybePrepareRebalance in Stable), which no line shows: its
        round starts at the lost line too (`inferred`), and whether the rejoin joined its join phase or
        came after it completed, only the generation the rejoin gets says (`_settle_emptied`)."""
        if (
            self.has_coordinator
            or not view.lost_before_rejoin
            or view.lost_at is None
            or view.instance  # KIP-345: a static member's removal is its session's, no new member id
            or self.remaining_members is None
            or (self.round is not None and self.round.generation_id is None)
        ):
            return
        others = [m for m in self.remaining_members if m != view.member_id]
        if others and view.member_id not in self.remaining_members:
            return  # left out of the last generation: that generation's round was its removal's
        # the coordinator's own reason for it (GroupCoordinator.onExpireHeartbeat), for the cause
        self._member_round_signal(view.lost_at, f"removing member {view.member_id} on heartbeat expiration")
        self.remaining_members = others
        if others:
            self.round.removal_unseen_at = view.lost_at
            self.round.source = "inferred"
            self.timeline.episode.source = "inferred"
        else:
            self.round.emptied_at = view.lost_at

    def _m_partitions_lost(self, e: Event, view: MemberView) -> None:
        view.lost_at = e.ts
        listed = list(e.partitions or ())
        if view.pending is not None:
            view.pending.to_stop = [tp for tp in view.pending.to_stop if tp not in listed]
        self._assume_owned_before_the_log(view, listed)
        for tp in listed:
            if self.timeline.owner_of(tp) == view.member_id:
                self._stop(tp, view.member_id, e.ts, "lost", view.instance)
                # its own poll timeout reset it: those stops are at that line already (observed)
                view.lost_before_rejoin = view.poll_timeout_ts is None

    def _assume_owned_before_the_log(self, view: MemberView, tps: list[TopicPartition]) -> None:
        """A member revokes (or loses) partitions the replay never saw anyone get: it has been consuming
        them since before the log began (real logs start mid-life, EXPECTED.md 09)."""
        self.timeline.assume_all(tps, view.member_id, instance=view.instance)

    def _m_partitions_assigned(self, e: Event, view: MemberView) -> None:
        pending = view.pending
        listed = list(e.partitions or ())
        self._learn_topics(listed)
        if pending is not None:
            # Kafka invokes onPartitionsRevoked before onPartitionsAssigned: unlogged revocations
            # happened at the sync
            self._stop_all(pending.to_stop, view.member_id, pending.sync_ts, "revoked", view.instance)
            self._start_all(
                [tp for tp in pending.to_start if tp not in listed],
                view.member_id,
                pending.sync_ts,
                view.instance,
                pending.generation_id,
                pending.source,
            )
            view.pending = None
        gen = pending.generation_id if pending else view.generation_id
        source = pending.source if pending else "observed"
        self._start_all(listed, view.member_id, e.ts, view.instance, gen, source)

    def _m_poll_timeout_expired(self, e: Event, view: MemberView) -> None:
        """max.poll.interval.ms passed without a poll() (AbstractCoordinator.HeartbeatThread): the heartbeat
        thread logs it and calls maybeLeaveGroup("consumer poll timeout has expired.") at once, which sends
        the LeaveGroup (dynamic members only, AbstractCoordinator.maybeLeaveGroup) and resets the generation.
        The application thread learns it at its next poll(), possibly much later, and only then calls
        onPartitionsLost ("Lost previously assigned partitions"): the partitions are out of the group, and
        unavailable, from here (`_polled_out`: the latest instant the stop can be, `inferred`). The
        LeaveGroup's rebalance is one episode whose reason is the poll timeout."""
        view.poll_timeout_ts = e.ts
        self.poll_timed_out[view.member_id] = e.ts
        self._polled_out(view, e.ts)
        if not view.instance:  # the LeaveGroup follows at once (DEBUG before 2.1: maybe not logged)
            self._left_group(view, e.ts, POLL_TIMEOUT_REASON)

    def _polled_out(self, view: MemberView, ts: int) -> None:
        """The member's poll timer expired at `ts` (Heartbeat.pollTimeoutExpired): its last poll() was at
        least max.poll.interval.ms earlier, and it consumed nothing since (a stall; a GC pause, earlier
        still). What it holds stops here, the latest it can be (`inferred`). An eager member stopped at a
        rebalance signal that no JoinGroup followed (`_signal` assumed its poll loop went on into
        onJoinPrepare, which runs inside poll()) never got there either: those stops are the latest they
        can be too."""
        if view.signal_ts is not None and view.join_sent_at is None:
            self.timeline.stops_inferred(view.member_id)
        self._stop_member(view.member_id, ts, "member_left", source="inferred")

    def _m_leave_sent(self, e: Event, view: MemberView) -> None:
        """The member leaves: a later process with the same client starts with a new member id."""
        reason = POLL_TIMEOUT_REASON if view.poll_timeout_ts is not None else e.reason
        if view.join_sent_at is not None and not self.has_coordinator:
            # it leaves with its JoinGroup unanswered: a generation formed before the LeaveGroup arrived
            # counts it (`_silent_joiner_may_be_in`)
            self.unanswered_joins.left_unanswered(view, e)
        if (e.reason or "").startswith(POLL_TIMEOUT_REASON.rstrip(".")):
            # a LeaveGroup for the poll timeout whose warning no line showed (2.x): the same estimate as
            # `_m_poll_timeout_expired` (its partitions were stopped there when that line came first)
            self._polled_out(view, e.ts)
        else:
            self._stop_member(view.member_id, e.ts, "member_left")
        self._left_group(view, e.ts, reason)
        del self.views[view.member_id]
        self.member_timed.discard(view.member_id)
        self.aliases = {k: v for k, v in self.aliases.items() if v != view.member_id}

    def _left_group(self, view: MemberView, ts: int, reason: str | None) -> None:
        """Member-side logs only: a dynamic member's LeaveGroup makes the coordinator rebalance at once
        (GroupCoordinator.removeMemberAndUpdateGroup -> maybePrepareRebalance; ClassicGroup in 4.0): the
        episode starts at the leave. With the broker's log, its Preparing line gives the start."""
        if not self.has_coordinator and not view.instance:
            opens_a_round = self.round is None or self.round.generation_id is not None
            alone = not opens_a_round and self._alone_in_join_phase(view)
            self._member_round_signal(ts, reason)  # ends the last round: remaining_members are its
            if self.remaining_members is not None:
                self.remaining_members = [m for m in self.remaining_members if m != view.member_id]
                if opens_a_round and not self.remaining_members:
                    self.round.emptied_at = ts
            if alone:
                self.round.emptied_at = ts

    def _alone_in_join_phase(self, view: MemberView) -> bool:
        """Members' logs only: `view` leaves during a join phase in which no other member is known: the
        group had no member before it (its last generation ended Empty, or the input shows none) and no
        other member's log shows a JoinGroup since. The coordinator removes the member
        (GroupCoordinator.removeMemberAndUpdateGroup, PreparingRebalance; ClassicGroup in 4.0) and the
        join phase completes without members: the next generation is Empty (`_settle_emptied` decides,
        from the generation the next JoinGroup response names: a rejoin within group.initial.rebalance
        .delay.ms, InitialDelayedJoin, still joins the same join phase)."""
        if self.remaining_members is None and self.closed_generation is not None:
            return False  # the last generation's members are not known
        if self.remaining_members:
            return False
        leaving = process_of(self._event) if self._event is not None else None
        return leaving is not None and all(p == leaving for p in self.round.joiners)

    def _settle_emptied(self, gen: int | None) -> None:
        """Members' logs only: the round the last member's LeaveGroup opened, settled by the next JoinGroup
        response (`gen`) or the end of the input (None). A new member whose first JoinGroup reached the
        coordinator before that LeaveGroup is a KIP-394 pending member the join phase waits for
        (GroupCoordinator.hasAllMembersJoined: `pendingMembers.isEmpty`; ClassicGroup.hasAllMembersJoined
        in 4.0), so the group never turned Empty and that member's generation is the next one. The
        members' own clocks cannot order the two requests at the coordinator: the generation it joins
        decides. One more than the last completed: it joined that join phase; more: the group emptied
        at the leave (`_emptied_by_last_leave`), also when the input ends first (inferred)."""
        rnd = self.round
        if rnd is not None and rnd.removal_unseen_at is not None:
            self._settle_unseen_removal(gen)
            return
        if rnd is None or rnd.emptied_at is None:
            return
        emptied_at, rnd.emptied_at = rnd.emptied_at, None
        # no generation seen before: the input starts with the group's first join (generation 1 next)
        # unless the response says otherwise
        closed = self.closed_generation
        if gen is None or gen != (closed if closed is not None else 0) + 1:
            self._emptied_by_last_leave(emptied_at, gen)
            if rnd.signal_after_leave is not None:  # the next round started at the first signal since
                self._begin_round(*rnd.signal_after_leave, "member")

    def _settle_unseen_removal(self, gen: int | None) -> None:
        """Members' logs only: the round of a removal no line showed (`_removed_member_rejoins`), settled
        by the next JoinGroup response (`gen`) or the end of the input (None). One more than the last
        completed generation: the new JoinGroup reached the removal's join phase, one rebalance. Else
        that join phase completed without it, as generation(s) no member logged (their rows wait for a
        line naming them, `_note_unlogged_generations`), and the new JoinGroup started a rebalance of its
        own; when no response comes, no line tells which (both `inferred`). The removal's end is in no
        line: taken at its start, the lost line."""
        rnd = self.round
        removed_at, rnd.removal_unseen_at = rnd.removal_unseen_at, None
        closed = self.closed_generation
        held, rnd.signal_after_leave = rnd.signal_after_leave, None
        if gen is not None and gen == (closed if closed is not None else 0) + 1:
            return
        rnd.ended_at = removed_at
        self._end_round()
        self._end_episode(removed_at)
        if held is not None:
            self._begin_round(*held, "member")
            self.round.source = "inferred"
            self.timeline.episode.source = "inferred"

    def _emptied_by_last_leave(self, ts: int, next_gen: int | None = None) -> None:
        """Members' logs only: the last member of the group (the leader's assignment listed every member
        of the last generation; the others' LeaveGroups were logged) left. The join phase its LeaveGroup
        starts has no member to wait for and completes at once: the generation is incremented and the
        group turns Empty (GroupCoordinator.onCompleteJoin -> GroupMetadata.initNextGeneration, "Group G
        with generation N is now empty"; ClassicGroup in 4.0). No member logs that generation: its row is
        inferred, and the rebalance ends at the leave. It is the one before `next_gen` (the generation the
        next JoinGroup response names: the first join into an Empty group completes the next generation),
        else the one after the last completed (none: the group's first). A `next_gen` more than one after
        that shows generations that formed in between with no member logging them (a joiner stalled before
        its JoinGroup response, its join phase completed without the others): they precede the Empty one,
        which the last LeaveGroup completed (`_note_unlogged_generations`; a late line may name them)."""
        rnd = self.round
        closed = self.closed_generation
        if next_gen is not None and (closed is None or next_gen - 1 > closed):
            rnd.generation_id = next_gen - 1
            if closed is not None and rnd.generation_id > closed + 1:
                self.unlogged_generations.append([closed + 1, rnd.generation_id - 1, rnd.episode_id])
        else:
            rnd.generation_id = closed + 1 if closed is not None else 1
        rnd.ended_empty = True
        rnd.members, rnd.member_count = [], 0
        rnd.ended_at = ts
        rnd.source = "inferred"
        self.timeline.group_empty(ts, source="inferred")  # the rows it closes, and their episode, too
        self.timeline.round_completed(rnd.generation_id, ts)
        self._set_assignment({}, rnd.generation_id, "inferred")
        self.follow_up_due = False
        self._end_round()
        self._end_episode(ts)
