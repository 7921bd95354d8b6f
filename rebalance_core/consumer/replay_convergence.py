"""The KIP-848 replayer's group epochs and their convergence: a cause of the next bump, an epoch opening
(and whether its rebalance is a further round of the one before), and when the current epoch converged
(generation stabilized_at): every member of the target reconciled to it, or, without a target map, every
member STABLE at the epoch with no partition in flight.

The rules are GroupMetadataManager.consumerGroupHeartbeat (bump, target, then each member's step),
ConsumerGroup.maybeUpdateGroupState (Stable once every member is at the target epoch), CurrentAssignmentBuilder
(UNREVOKED_PARTITIONS keeps a member's epoch, UNRELEASED_PARTITIONS until its partitions are free) and the
client's ConsumerMembershipManager (MembershipManagerImpl: the epoch is logged before the reconciliation).
A mixin of `consumer.replayer.ConsumerGroupReplayer`.
"""

from __future__ import annotations

from rebalance_core import client_config
from rebalance_core.consumer.replay_state import (
    CLIENT_RECONCILING,
    MemberView,
)
from rebalance_core.consumer.states import ClientState, MemberState
from rebalance_core.events import Event, TopicPartition

# round_unknown_until for "the next rebalance, whenever it opens" (an instant after any log's; _open_epoch clears
# it at the next opening)
ROUND_UNKNOWN_UNTIL_NEXT = 2**62


class Convergence:
    """Group epochs opening and converging (GroupMetadataManager, CurrentAssignmentBuilder)."""

    # -- thresholds: what the logs (or the user) state, never Kafka's default taken as a fact --------------
    def _m_client_config(self, e: Event) -> None:
        """A client's config dump (AbstractConfig.logAll at the consumer's construction): its max.poll.interval.ms
        (rebalance_core.client_config, the reader the classic replayer uses too)."""
        client_config.note(self.client_configs, e)

    def _longest_heartbeat_interval_ms(self, stated_session_timeout_ms: int | None = None) -> int | None:
        """The broker's group.consumer.heartbeat.interval.ms, the interval a KIP-848 member heartbeats at: the
        coordinator tells it in every heartbeat response (ConsumerHeartbeatRequestManager
        .heartbeatIntervalForResponse; AbstractHeartbeatRequestManager starts at 0 and logs the interval at no
        INFO line), so no client log states it, and the client's own heartbeat.interval.ms (its config dump) is
        the classic protocol's, unused here. As the user states it (ReplaySettings), else a bound: below the
        session timeout a fence line states (`stated_session_timeout_ms`; GroupCoordinatorConfig requires
        interval < session timeout). Else None, unknown: what rests on it says inferred. Not the broker's
        default group.consumer.max.session.timeout.ms (operators change it), nor ReplaySettings
        .session_timeout_ms (the classic protocol's client setting)."""
        return self.settings.consumer_heartbeat_interval_ms or stated_session_timeout_ms

    def _max_poll_interval_ms(self, view: MemberView) -> int | None:
        """A member's max.poll.interval.ms: as the coordinator's line states its rebalance timeout (the client
        sends max.poll.interval.ms as RebalanceTimeoutMs: ConsumerHeartbeatRequestManager), else its own config
        dump, else the user's setting (ReplaySettings); None: unknown (the client's setting has no upper
        bound, so no default stands in for it)."""
        if view.rebalance_timeout_ms is not None:
            return view.rebalance_timeout_ms
        own = client_config.own_max_poll_interval_ms(
            self.client_configs, view.member_id, view.client_id, view.instance
        )
        return own if own is not None else self.settings.max_poll_interval_ms

    def _cause(self, ts: int, reason: str | None) -> None:
        """Something that bumps the group epoch happened; the bump itself may not be logged."""
        if self.pending_start is None:
            self.pending_start = ts
        if reason and self.pending_reason is None:
            self.pending_reason = reason

    def _open_epoch(
        self, epoch: int, ts: int | None, reason: str | None, source: str, seen_at: int | None = None
    ) -> None:
        """Epoch `epoch` began at `ts` (None: before `seen_at`, the first line showing it), or at the
        cause seen before it."""
        cause = self.pending_start if self.has_coordinator else self.member_signal
        shown = ts if ts is not None else seen_at
        current = self.tracker.epoch
        if self.presumed_converged is not None and (current is None or epoch > current):
            self._settle_presumed(shown)
        self._reopened_unsettled(epoch)
        started = cause if cause is not None and cause <= shown else ts
        timing = "member" if self.has_member_side else "coordinator"
        episode_before = self.timeline.episode
        if self.tracker.open_epoch(
            epoch, started, reason or self.pending_reason, source, timing, seen_at=shown
        ):
            self.pending_start = self.pending_reason = self.member_signal = None
            episode = self.timeline.episode
            if episode is not None and episode is not episode_before:
                if self.round_unknown_until is not None and shown <= self.round_unknown_until:
                    episode.source = "inferred"
                if episode.started_at is not None:
                    self._young_starts_inferred(episode.started_at)
            self.round_unknown_until = None

    def _reopened_unsettled(self, epoch: int) -> None:
        """Epoch `epoch` opens while the current one, in which a member logged RECONCILING again at that same
        epoch, has not converged (again). That line answers a heartbeat that handed the member partitions at the same
        epoch: the coordinator hands them once their previous owners released them, and the member is then
        STABLE for it (CurrentAssignmentBuilder: UNRELEASED_PARTITIONS -> STABLE, no acknowledgement needed for
        added partitions), so the epoch may have converged right there, while the member's own callback (what
        its log times) had not run yet. Whether the new epoch is a further round or a rebalance of its own,
        no line tells: the episode says inferred."""
        cur = self.tracker.current
        reopened, self.reopened_epoch = self.reopened_epoch, None
        if cur is None or cur.closed or reopened != cur.epoch or epoch <= cur.epoch:
            return
        if cur.stabilized_at is None and self.timeline.episode is not None:
            self.timeline.episode.source = "inferred"

    def _young_starts_inferred(self, opened_at: int) -> None:
        """A rebalance opens at `opened_at` while a member timed by the coordinator alone was handed partitions
        less than a heartbeat interval before. The coordinator logs the assignment when it answers the
        heartbeat (CurrentAssignmentBuilder moves the member to STABLE at once); the member consumes them only
        once its onPartitionsAssigned has run, and it acknowledges that in a later heartbeat that no broker line
        shows (the member's state does not change: GroupMetadataManager logs a new assignment state only on a
        change). Whether it owned them before this rebalance, and so whether they move in it, is unknown: the
        episode's movement count is inferred (never an exact-looking count of moves it cannot see). Without a
        stated interval or bound (_longest_heartbeat_interval_ms), any start may be so."""
        episode = self.timeline.episode
        interval = self._longest_heartbeat_interval_ms()
        for view in self.members.values():
            if view.member_timed or not view.server_started or view.server_started_at is None:
                continue
            if interval is not None and opened_at - view.server_started_at >= interval:
                continue
            if set(view.server_started) & self.timeline.partitions_of(view.member_id):
                episode.source = "inferred"
                return

    def _check_convergence(self, ts: int) -> None:
        cur = self.tracker.current
        if cur is None or cur.closed:
            return
        if cur.target is not None:
            for member, tps in cur.target.items():
                view = self.members.get(member)
                if view is None or not self._reconciled(view, cur.epoch, tps, ts):
                    return
            self.tracker.converged(ts)
        elif self.has_coordinator:
            if self.targets_logged and cur.target_at is None:
                # the broker logs each target it computes, and none for this epoch yet: the group is
                # Assigning while its epoch is ahead of the target's (ConsumerGroup.maybeUpdateGroupState),
                # whatever its members' own lines say; the target comes with some member's next heartbeat
                return
            # no target map (4.0+: DEBUG): converged once every member the coordinator knows is STABLE at
            # the epoch (ConsumerGroup turns Stable when all members are reconciled to the target epoch).
            # A member with no assignment-state line (4.0 logs them at DEBUG) but its own log: STABLE with
            # no partition in flight, provisionally (its epoch moves silently when nothing changes for it)
            views = [self.members[m] for m in self._group_members()]
            if not views or (cur.stabilized_at is not None and not all(v.server_lines for v in views)):
                return
            if all(self._reconciled_without_target(v, cur.epoch) for v in views):
                by_member = not all(v.server_lines for v in views)
                # every member stated at the epoch (by the coordinator or its own line): what it consumes
                # says nothing more; otherwise a STABLE member's epoch may have moved silently. Not so when a
                # bump is on its way (a member left or joined: a removed member may never have reached the
                # epoch, and its unrevoked partitions kept the others UNRELEASED_PARTITIONS)
                told = self.pending_start is None and all(
                    v.server_lines or self._told_epoch(v, cur.epoch) for v in views
                )
                members = [v.member_id for v in views]
                if by_member and told and self._released_to_a_subscriber(members):
                    return
                if not (by_member and not told and self._in_flight(members)):
                    if by_member and not told and self._silent_member_may_lag(views, cur.epoch, ts):
                        self._presumed_episode()
                        # until every member's next heartbeat is due, a bump may find the epoch unconverged:
                        # the rebalance it opens may be a further round of this one
                        self._round_unknown_until(self._heartbeat_due(ts))
                    if any(v.client_state not in CLIENT_RECONCILING for v in views if not v.server_lines):
                        # a member's leave showed it at the epoch (see _told_epoch): it got there at an
                        # earlier heartbeat no line dates, so this convergence instant is only the latest one
                        cur.source = "inferred"
                    self.tracker.converged(ts, provisional=by_member)
        elif cur.stabilized_at is None:
            active = [v for m in self._group_members() if (v := self.members[m]).member_timed]
            if not active:
                return
            members = [v.member_id for v in active]
            if all(v.client_state == ClientState.STABLE.value for v in active) and not self._in_flight(
                members
            ):
                self.tracker.converged(ts, provisional=True)
            elif all(self._told_epoch(v, cur.epoch) for v in active) and not self._in_flight(
                members, self._stated_not_started(members)
            ):
                # every member's own line states the epoch (see _told_epoch): the coordinator has each at it
                # with nothing left to revoke; what is in flight is only what a member's "Reconciling
                # assignment" at the epoch adds and its callback has not started yet (its application thread
                # is blocked: the coordinator needs no acknowledgement of added partitions,
                # CurrentAssignmentBuilder: STABLE at once)
                self.tracker.converged(ts, provisional=True)

    def _silent_member_may_lag(self, views: list[MemberView], epoch: int, ts: int) -> bool:
        """A STABLE member whose own log never stated `epoch` (4.x logs no line when the coordinator moves a
        member's epoch without changing its assignment: ConsumerMembershipManager updates the epoch silently)
        may not have heartbeated since the target was computed: until one heartbeat interval has passed, the
        group may still be Reconciling (ConsumerGroup.maybeUpdateGroupState) and no line tells which (an unstated
        interval: the longest Kafka allows)."""
        target_at = self.tracker.current.target_at
        interval = self._longest_heartbeat_interval_ms()
        if target_at is not None and interval is not None and ts >= target_at + interval:
            return False
        return any(not v.server_lines and v.client_epoch != epoch for v in views)

    def _heartbeat_due(self, ts: int) -> int | None:
        """When every member has heartbeated since the current epoch's target (computed at the latest at `ts`):
        one group.consumer.heartbeat.interval.ms after it (GroupMetadataManager answers each heartbeat with the
        member's next assignment step); None: the interval is unknown (_longest_heartbeat_interval_ms)."""
        target_at = self.tracker.current.target_at
        interval = self._longest_heartbeat_interval_ms()
        return None if interval is None else (target_at if target_at is not None else ts) + interval

    def _round_unknown_until(self, ts: int | None) -> None:
        """A rebalance opening at or before `ts` (None: whenever, the next one) may be a further round of the
        current one (see round_unknown_until): whether the convergence presumed before it held, no line
        tells."""
        ts = ROUND_UNKNOWN_UNTIL_NEXT if ts is None else ts
        if self.round_unknown_until is None or ts > self.round_unknown_until:
            self.round_unknown_until = ts

    def _others_seen(self, member_id: str) -> bool:
        """Some other member was seen (in the group or gone): the input covers the group's membership, so a
        member alone in the epoch's snapshot is alone (else one from before the input may be silent)."""
        return bool(self.gone.keys() - {member_id}) or any(m != member_id for m in self.members)

    def _stated_not_started(self, members: list[str]) -> dict[TopicPartition, str]:
        """Partitions the current epoch's "Reconciling assignment" lines give `members` that they do not consume
        yet: partition -> member."""
        stated = self.tracker.current.stated
        return {
            tp: m for m in members for tp in stated.get(m, ()) if tp not in self.timeline.partitions_of(m)
        }

    def _in_flight(self, members: list[str], awaited: dict[TopicPartition, str] | None = None) -> bool:
        """Member-side convergence cannot hold yet: a partition was revoked and is not consumed again, or a
        member consumes nothing while the group has a partition for each (the broker's assignors give every
        member one then: it waits for partitions another member has not revoked yet, UNRELEASED_PARTITIONS;
        the owner's revocation comes at its next heartbeat and its epoch moves silently until then).
        `awaited`: partitions a member's own line assigned it that it has not started yet, counted as its own."""
        tl = self.timeline
        awaited = awaited or {}
        if tl.stopped().keys() - awaited.keys():
            return True
        consuming = {**tl.consuming(), **awaited}
        if len(consuming) >= len(members) and any(m not in consuming.values() for m in members):
            return True
        # a topic some member consumes is subscribed, and the broker's assignors (uniform, range) give every
        # partition of a subscribed topic to a subscriber: one of its partitions that nobody consumes (a new
        # partition, or one assigned to a member that has not taken it yet) is still on its way
        consumed: dict[str, int] = {}
        for tp in consuming:
            consumed[tp.topic] = consumed.get(tp.topic, 0) + 1
        return any(n < self.partition_counts.get(topic, 0) for topic, n in consumed.items())

    def _released_to_a_subscriber(self, members: list[str]) -> bool:
        """A partition revoked and not consumed again belongs to a topic some member still consumes (or its own
        line at the epoch assigned it), so the group still subscribes it and the broker's assignors (uniform,
        range) give it to some member in the epoch's target. Every member being at the epoch does not make the
        epoch converged then: the member it goes to moved to the epoch without it, UNRELEASED_PARTITIONS while its
        previous owner still held it, and gets it only at its next heartbeat (CurrentAssignmentBuilder
        .computeNextAssignment); the group stays Reconciling until then (ConsumerGroup.maybeUpdateGroupState).
        A revoked partition of a topic nobody consumes any more (an unsubscribed topic) is awaited by nobody."""
        tl = self.timeline
        epoch = self.tracker.current.epoch
        # handed: a member's own block at the epoch names it (its callback may not have started it yet: the
        # coordinator needs no acknowledgement of added partitions, CurrentAssignmentBuilder: STABLE at once)
        awaited = {
            tp: m
            for m in members
            if (v := self.members[m]).block_epoch == epoch
            for tp in v.block_assigned
            if tp not in tl.partitions_of(m)
        }
        # a leaving member revokes all it holds for its leave (ConsumerMembershipManager: PREPARE_LEAVING), not
        # for the epoch: those partitions wait for the bump its leave makes, and their topics stay subscribed
        on_leave = tl.stopped_on_leave()
        subscribed = {tp.topic for tp in (*tl.consuming(), *awaited, *on_leave)}
        released = tl.stopped().keys() - awaited.keys() - on_leave
        return any(tp.topic in subscribed for tp in released)

    def _reconciled_without_target(self, view: MemberView, epoch: int) -> bool:
        if view.left_static:
            return False
        if view.server_lines:
            return view.server_epoch == epoch and view.server_state == MemberState.STABLE.value
        if view.member_timed:
            return view.client_state == ClientState.STABLE.value or self._told_epoch(view, epoch)
        return False  # known to the coordinator, no line says where its reconciliation stands

    @staticmethod
    def _told_epoch(view: MemberView, epoch: int) -> bool:
        """The member's own line states the group's current epoch while it reconciles: the coordinator moved it
        to that epoch, which it does only once the member has nothing left to revoke (CurrentAssignmentBuilder
        .computeNextAssignment: UNREVOKED_PARTITIONS keeps the member's epoch), so it is STABLE there, or
        UNRELEASED_PARTITIONS until a later heartbeat hands it the rest, which its next RECONCILING line at the
        same epoch shows. The client logs the epoch of the heartbeat response before it reconciles
        (ConsumerMembershipManager.onHeartbeatSuccess: updateMemberEpoch, then transitionTo(RECONCILING)), so
        a member whose rebalance callback is blocked is at the epoch for the coordinator, not for its log.
        A member that starts leaving from STABLE states the epoch it was STABLE at (a leave is no heartbeat
        response: AbstractMembershipManager.leaveGroup logs the epoch it holds), even one the coordinator moved
        it to silently (its assignment unchanged: ConsumerMembershipManager updates the epoch, logs nothing)."""
        return view.client_epoch == epoch and (
            view.client_state in CLIENT_RECONCILING or view.stable_epoch == epoch
        )

    def _reconciled(self, view: MemberView, epoch: int, target: tuple[TopicPartition, ...], ts: int) -> bool:
        if view.left_static:
            return False
        if view.server_lines:
            return view.server_epoch == epoch and view.server_state == MemberState.STABLE.value
        reconciled = (
            view.member_timed
            and view.client_state == ClientState.STABLE.value
            and self.timeline.partitions_of(view.member_id) == set(target)
        )
        if reconciled:
            self.tracker.member_reconciled(view.member_id, ts, "member")
        return reconciled
