"""The KIP-848 replayer with a 4.0 broker log alone (targets logged without their map, no assignment-state
line, no member log): a convergence presumed one or two heartbeat intervals after the target, unless the next
bump or a member's failure comes first, and the presumption withdrawn when a fenced or stalled member proves
it wrong; either way the epoch and its episode say inferred.

The rules are GroupMetadataManager.consumerGroupHeartbeat (updateTargetAssignment, then maybeReconcile in the
heartbeat that computed it), CurrentAssignmentBuilder.computeNextAssignment (a lone member is reconciled at
once; a revocation takes a round trip) and ConsumerGroup.maybeUpdateGroupState, with the client's poll timer
(ConsumerMembershipManager / MembershipManagerImpl, AbstractMembershipManager.transitionToSendingLeaveGroup).
A mixin of `consumer.replayer.ConsumerGroupReplayer`.
"""

from __future__ import annotations

from rebalance_core.consumer.coordinator import (
    REASON_JOINED,
    REASON_LEFT,
    REASON_REBALANCE_TIMEOUT,
    REASON_SESSION,
)
from rebalance_core.consumer.replay_state import DEFAULT_CONSUMER_HEARTBEAT_INTERVAL_MS, MemberView
from rebalance_core.consumer.states import ClientState

# bump causes after which no member has anything to revoke: each reconciles at its next heartbeat
FREEING_REASONS = frozenset({REASON_LEFT, REASON_SESSION, REASON_REBALANCE_TIMEOUT})


class PresumedConvergence:
    """Convergence presumed from a 4.0 broker log alone (GroupMetadataManager's heartbeat timing)."""

    def _presume_convergence(self, ts: int) -> None:
        """The target of the current epoch was computed at `ts`, its map not logged (4.0: DEBUG). A lone
        member whose join bumped the epoch was reconciled in that very heartbeat (CurrentAssignmentBuilder:
        nothing it is assigned is owned by another member). With neither assignment-state lines nor
        member logs, the epoch is presumed converged once every member had its next heartbeat (after a
        leave or a fence: one interval) or a revocation round trip more (otherwise: two), unless the next
        bump or a member's failure comes first; such a convergence is marked inferred."""
        cur = self.tracker.current
        views = [self.members[m] for m in (cur.members or {}) if m in self.members]
        if not views or cur.closed or any(v.server_lines for v in views):
            return
        lone = len(views) == 1 and (cur.epoch == 1 or self._others_seen(views[0].member_id))
        if lone and cur.reason == REASON_JOINED:
            # a member from before the input may be silent (4.0 logs no line for a stable member): lone
            # only in a new group (epoch 1) or once every member seen before is out. The joiner's heartbeat
            # computes the target and reconciles it (GroupMetadataManager.consumerGroupHeartbeat:
            # updateTargetAssignment, then maybeReconcile). Not so the one member left after a leave or a
            # fence: it may still owe a revocation of the epoch before (CurrentAssignmentBuilder keeps it
            # UNREVOKED_PARTITIONS until it acknowledges), which no 4.0 INFO line shows. With its own log,
            # provisionally: the epoch's row then states what it consumes
            self.tracker.converged(ts, provisional=self.has_member_side)
            return
        if lone and cur.reason in FREEING_REASONS and self._settled_alone(views[0]):
            # the one member left after a leave or a fence, its own log STABLE with nothing to revoke: the
            # target was computed in its heartbeat (no other member heartbeats), and there the coordinator
            # reconciled it at once (CurrentAssignmentBuilder.computeNextAssignment: nothing to revoke, and
            # what it is given no other member holds, a removed member's partitions being free:
            # GroupMetadataManager.consumerGroupFenceMember), whether or not its callback then ran
            self.tracker.converged(ts)
            return
        if self.has_member_side:
            return  # the members' own lines tell
        intervals = 1 if cur.reason in FREEING_REASONS else 2
        # the interval as the user states it, else Kafka's default as an estimate only: what it decides (the
        # convergence instant, or a merge with the next bump) says inferred either way (_settle_presumed)
        interval = self.settings.consumer_heartbeat_interval_ms or DEFAULT_CONSUMER_HEARTBEAT_INTERVAL_MS
        self.presumed_converged = ts + intervals * interval

    def _settled_alone(self, view: MemberView) -> bool:
        """`view`, the group's one member, has nothing to revoke: its own log shows it STABLE (its previous
        reconciliation done, so it owns only what it was assigned), and as the lone member of its topics its
        new target holds every partition of them (UniformAssignor and RangeAssignor alike); a changed
        subscription would be a bump of its own, not a leave's or a fence's."""
        return view.member_timed and not view.left_static and view.client_state == ClientState.STABLE.value

    def _untimed_members_own_unknown(self) -> None:
        """A target computed with its map unlogged (4.0 INFO): a member of the epoch with neither its own log
        nor the coordinator's assignment-state lines (4.0: DEBUG) consumes what no line shows, from here on:
        the open episode's partition measures, and those of the next ones, are null (not 0) until the
        ownership is known again (a logged target map, or the group emptied: `OwnershipTimeline.group_empty`).
        """
        cur = self.tracker.current
        members = cur.members if cur.members is not None else self._group_members()
        views = [self.members[m] for m in members if m in self.members]  # (a removed one owns nothing)
        if any(not (v.member_timed or v.server_lines) for v in views):
            self.timeline.owners_unknown()

    def _settle_presumed(self, ts: int) -> None:
        """At `ts` (the next epoch, or the end of the input): the presumed convergence happened if it is due."""
        at, self.presumed_converged = self.presumed_converged, None
        cur = self.tracker.current
        if at is None or cur is None or cur.closed:
            return
        if at > ts:
            # bumped again (or the input ends) before every member's next heartbeat could be due: whether
            # they all reconciled first, no INFO line of a 4.0 broker tells; the merge is presumed
            self._presumed_episode()
            return
        away = [v.left_static_at for m in (cur.members or {}) if (v := self.members.get(m)) and v.left_static]
        if any(t is not None and t <= at for t in away):
            return  # a static member away (epoch -2) since before: never Stable (ConsumerGroup.maybeUpdateGroupState)
        self._presumed_episode()
        self.presumed_target_at = cur.target_at
        self.tracker.converged(at)

    def _leaver_may_have_stalled(self, view: MemberView, ts: int) -> None:
        """A member seen by the coordinator alone left at `ts`. The broker logs the same leave for a consumer
        closed and for one whose poll timer expired (AbstractMembershipManager.transitionToSendingLeaveGroup,
        epoch -1): its application thread blocked, in a rebalance callback say, since its last poll, up to
        max.poll.interval.ms before. A revocation asked of it since then was never acknowledged
        (CurrentAssignmentBuilder keeps it UNREVOKED_PARTITIONS), so a convergence presumed for a target
        computed since (less a heartbeat interval: the target reaches it at its next heartbeat) may never have
        happened, and the rebalance this leave opens may be a further round of that one: it says inferred.
        Not so for a member that joined less than max.poll.interval.ms before: it joins at a poll
        (AbstractMembershipManager.onConsumerPoll), so its poll timer cannot have expired yet. Only a stated
        max.poll.interval.ms (_max_poll_interval_ms) dates its last poll, and only a known heartbeat interval
        (_longest_heartbeat_interval_ms) when the target reached it: without them, it may have stalled at any
        time, and any presumed convergence is in doubt."""
        if view.member_timed or view.server_lines:
            return  # its own log shows a poll timeout; the coordinator's states show its reconciliation
        max_poll = self._max_poll_interval_ms(view)
        since = None
        if max_poll is not None:
            last_poll = ts - max_poll
            joined = view.heartbeat_seen_at
            if joined is not None and joined > last_poll:
                return
            interval = self._longest_heartbeat_interval_ms()
            since = None if interval is None else last_poll - interval
        cur = self.tracker.current
        settled = self.presumed_target_at is not None and (since is None or self.presumed_target_at > since)
        # presumed, not yet settled (the next bump settles it): the current epoch's
        pending = (
            self.presumed_converged is not None
            and cur.target_at is not None
            and (since is None or cur.target_at > since)
        )
        if settled:
            self._presumption_failed()
        if settled or pending:
            self._round_unknown_until(ts)

    def _presumption_failed(self) -> None:
        """A fenced member was silent since before the target of an epoch whose convergence was presumed: it
        never had that epoch, and the group is not Stable until every member has (ConsumerGroup
        .maybeUpdateGroupState), so that epoch converged only later, if at all, and the rebalances since may be
        rounds of that one. The presumed episode says inferred already; so does the open one, which the presumption
        made a separate rebalance (the rows emitted in between stay as they are)."""
        self.presumed_target_at = None
        if self.timeline.episode is not None:
            self.timeline.episode.source = "inferred"

    def _presumed_episode(self) -> None:
        """The current epoch's convergence (or not) was presumed: its generation and episode say inferred."""
        self.tracker.current.source = "inferred"
        if self.timeline.episode is not None:
            self.timeline.episode.source = "inferred"
