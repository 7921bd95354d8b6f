"""The KIP-848 replayer's coordinator side: the new group coordinator's lines (3.6+), a join, a static
member replaced, a member removed (left, fenced, temporarily left with epoch -2), a group epoch bumped, a
target assignment computed, a member's new assignment state, the subscription metadata, the group deleted.

The rules are GroupMetadataManager.consumerGroupHeartbeat (bump, target, reconcile) and
consumerGroupFenceMember / consumerGroupStaticMemberGroupLeave, with each member's step from
CurrentAssignmentBuilder. A mixin of `consumer.replayer.ConsumerGroupReplayer`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from rebalance_core.consumer.coordinator import REASON_JOINED, REASON_LEFT, REASON_METADATA, REASON_SESSION
from rebalance_core.consumer.replay_state import (
    DEFAULT_CONSUMER_SESSION_TIMEOUT_MS,
    STALE_EPOCH,
    UNKNOWN_STATE,
)
from rebalance_core.consumer.states import LEAVE_GROUP_STATIC_MEMBER_EPOCH, MemberState, parse_member_state
from rebalance_core.events import Event
from schemas.events import RemovalReason

STOP_CAUSE_ON_REMOVAL = {
    RemovalReason.SESSION_TIMEOUT.value: "member_failed",
    RemovalReason.REBALANCE_TIMEOUT.value: "lost",
    RemovalReason.FENCED_STATIC.value: "lost",
    RemovalReason.LEAVE_GROUP.value: "member_left",
}
# removals for a timeout: the member's process may only have paused, and log its last epoch's block when it wakes
FENCE_REASONS = frozenset({RemovalReason.SESSION_TIMEOUT.value, RemovalReason.REBALANCE_TIMEOUT.value})
REMOVAL_REASON_TEXT = {
    RemovalReason.SESSION_TIMEOUT.value: REASON_SESSION,
    RemovalReason.REBALANCE_TIMEOUT.value: "member failed to revoke within the rebalance timeout",
}


class CoordinatorLines:
    """Handlers of the group coordinator's lines (GroupMetadataManager)."""

    def _c_join_received(self, e: Event) -> None:
        if not e.member_id:
            return
        if self.gone.pop(e.member_id, None) is not None:
            self.tracker.member_released(e.member_id)  # back in the group: it states its old epochs no more
        previous = self._left_static(e.group_instance_id)
        if previous is not None and previous.member_id != e.member_id:
            self._replace_static(previous, e.member_id, e.ts)
            return
        view = self._view(e.member_id, e.group_instance_id)
        view.joined, view.heartbeat_seen_at = True, e.ts
        stated = (e.attributes or {}).get("rebalance_timeout_ms", "")
        if stated.isdigit():
            view.rebalance_timeout_ms = int(stated)
        self._cause(e.ts, REASON_JOINED)

    def _c_static_member_replaced(self, e: Event) -> None:
        old = (e.attributes or {}).get("old_member_id")
        previous = self.members.get(old) if old else self._left_static(e.group_instance_id)
        if previous is None:
            self._view(e.member_id, e.group_instance_id)
        elif e.member_id:
            self._replace_static(previous, e.member_id, e.ts)

    def _c_member_removed(self, e: Event) -> None:
        view = self.members.get(e.member_id or "")
        if view is not None:
            self._revocations_acknowledged(view, e.ts)
        if e.member_epoch == LEAVE_GROUP_STATIC_MEMBER_EPOCH:
            # "temporarily left": stays a member with epoch -2, its partitions reserved (no new epoch)
            if view is not None:
                view.left_static, view.left_static_at = True, e.ts
                view.heartbeat_seen_at = e.ts  # its leave heartbeat: its session runs from here
                view.server_epoch = LEAVE_GROUP_STATIC_MEMBER_EPOCH
                # a static member's poll-timer leave too (ConsumerMembershipManager.leaveGroupEpoch)
                self._unacted_starts_inferred(view, e.ts, "member_left")
                self._stop_all(view, e.ts, "member_left")
            return
        reason = e.reason or RemovalReason.LEAVE_GROUP.value
        self._cause(e.ts, REMOVAL_REASON_TEXT.get(reason, REASON_LEFT))  # a removal bumps the epoch
        if view is None:
            return
        stop_at, source = e.ts, "observed"
        if reason == RemovalReason.SESSION_TIMEOUT.value:
            # the member stopped at its last heartbeat, one session timeout before the fence. The fence
            # line does not state the timeout: without a configured one, assume the broker's default
            # group.consumer.session.timeout.ms (GroupCoordinatorConfig, 45 s) and say the stop is inferred
            timeout = self._session_timeout(e)
            if timeout is None:
                timeout, source = DEFAULT_CONSUMER_SESSION_TIMEOUT_MS, "inferred"
                # never before a heartbeat the coordinator logged (its join, an assignment state): then the
                # session was shorter than the default, and the last heartbeat is at least that one
                stop_at = max(e.ts - timeout, view.heartbeat_seen_at or e.ts - timeout)
            else:
                stop_at = e.ts - timeout
                # the stated session places its stop: an epoch closed since without a target had it
                # consuming nothing
                self.tracker.member_stopped_at(view.member_id, stop_at)
            if self._died_before_acknowledging(view, stop_at, self._stated_session_timeout(e)):
                source = "inferred"
            if not view.member_timed and view.server_state == MemberState.UNREVOKED_PARTITIONS.value:
                # its last line asked it to revoke (CurrentAssignmentBuilder: UNREVOKED_PARTITIONS until a
                # heartbeat acknowledges) and no later one shows it did: it may have died first, so the
                # revocations this replay placed at that line are inferred (the broker cannot tell)
                self.timeline.stops_inferred(view.member_id)
            if self.presumed_converged is not None and stop_at < self.presumed_converged:
                # gone before its next heartbeat was surely due: no convergence is presumed. Known only when
                # its last heartbeat came before the target was computed (it never had this epoch, and the
                # group is not Stable until every member has: ConsumerGroup.maybeUpdateGroupState)
                target_at = self.tracker.current.target_at
                if source == "inferred" or target_at is None or stop_at >= target_at:
                    self._presumed_episode()
                self.presumed_converged = None
            if self.presumed_target_at is not None and stop_at < self.presumed_target_at:
                self._presumption_failed()
            cur = self.tracker.current
            # its last heartbeat came before the current epoch's target: it never had that epoch, and its
            # removal comes with the next bump (GroupMetadataManager.consumerGroupFenceMember writes both at
            # once), so the group was never Stable at this epoch without it: its leaving converges nothing
            self.removed_unreconciled = (
                cur is not None and cur.target_at is not None and stop_at < cur.target_at
            )
            if (
                cur is not None
                and not cur.closed
                and cur.stabilized_at is not None
                and stop_at < cur.stabilized_at
                and view.client_epoch != cur.epoch
            ):
                # its own log looked reconciled, but its last heartbeat came before the (provisional)
                # convergence: the coordinator never had it at this epoch. Not so when its own line states
                # the epoch: the client logs the epoch of a heartbeat response (ConsumerMembershipManager
                # .onHeartbeatSuccess), so the coordinator had it there, whatever instant the inferred stop says
                self.tracker.unconverged()
        elif reason == RemovalReason.REBALANCE_TIMEOUT.value:
            self.presumed_converged = None  # it never finished revoking: the epoch never converged
        cause = STOP_CAUSE_ON_REMOVAL.get(reason, "member_left")
        if reason == RemovalReason.LEAVE_GROUP.value:
            self._unacted_starts_inferred(view, e.ts, cause)
            self._leaver_may_have_stalled(view, e.ts)
        # the removal bumps the epoch (consumerGroupFenceMember): an epoch provisionally converged before it
        # closes with what its members consumed, the removed one's partitions included, and so does its
        # episode (what the removed member stops now moves in the next rebalance)
        self.tracker.settle()
        self.tracker.maybe_end_episode()
        owned = bool(self.timeline.partitions_of(view.member_id))
        self._stop_all(view, stop_at, cause, source)
        if owned and stop_at < e.ts:
            # placed at its last heartbeat: partitions others started since were all that was consumed
            self.timeline.recount_backdated_stop(stop_at)
            # and a rebalance that converged since counted its partitions as consumed (moved to it) at its end
            self.timeline.closed_episodes_inferred_after(stop_at)
        del self.members[view.member_id]
        # a frozen process may log its last epoch's block on waking; not one that restarted under another id
        restarted = view.process is not None and any(
            v.process == view.process and v.joined_in_input and m not in self.gone
            for m, v in self.members.items()
        )
        fenced = reason in FENCE_REASONS and view.member_timed and not restarted
        self._forget(view.member_id, e.ts, fenced=fenced, process=view.process)
        if not self._group_members():
            self.emptied = True

    def _c_group_epoch_bumped(self, e: Event) -> None:
        if e.group_epoch is None:
            return
        self._open_epoch(e.group_epoch, e.ts, e.reason, "observed")
        if self.emptied and not self._group_members():
            self.tracker.group_empty(e.ts)

    def _c_target_assignment_computed(self, e: Event) -> None:
        epoch = e.assignment_epoch
        if epoch is None:
            return
        self.targets_logged = True
        current = self.tracker.epoch
        if current is not None and epoch < current:
            self._anomaly(STALE_EPOCH, e, f"target for epoch {epoch} while at {current}")
            return
        recomputed = epoch == current and self.presumed_converged is not None
        if recomputed and self.presumed_converged < e.ts:
            # recomputed without a bump (a static member replaced): the epoch converged before, if due,
            # with the members it had then
            self._settle_presumed(e.ts)
        self._open_epoch(epoch, e.ts, None, "observed")
        if e.assignment is None:
            # 4.0+ logs the target map at DEBUG only (GroupMetadataManager.updateTargetAssignment): the
            # epoch's target was computed here, which members it covers is unknown
            self.tracker.target_computed(e.ts, None, e.protocol_name)
            if recomputed and self.presumed_converged is not None:
                self._settle_presumed(e.ts)  # converges now, with the replacement (see _replace_static)
            self._untimed_members_own_unknown()
            self._presume_convergence(e.ts)
            return
        # the whole target is logged (3.6-3.9 INFO, 4.0 DEBUG): who is assigned what is known from here
        self.timeline.owners_known()
        target = {m: self._names(tps) for m, tps in e.assignment.items()}
        for member in sorted(m for m, v in self.members.items() if v.joined and m not in target):
            # the target covers every member: one missing from it has left unseen
            view = self.members.pop(member)
            self._stop_all(view, e.ts, "member_left")
            self._forget(member, e.ts)
        for member in target:
            self._view(member, None).joined = True
        self.emptied = not target
        instances = {m: v.instance for m, v in self.members.items() if v.instance}
        self.tracker.target_computed(e.ts, target, e.protocol_name, instances)

    def _c_member_epoch_updated(self, e: Event) -> None:
        if not e.member_id or e.member_epoch is None:
            return
        view = self._view(e.member_id, e.group_instance_id)
        attributes = e.attributes or {}
        state = parse_member_state(attributes.get("state"))
        if state is MemberState.UNKNOWN and attributes.get("state") != MemberState.UNKNOWN.value:
            self._anomaly(UNKNOWN_STATE, e, f"member state {attributes.get('state')!r}")
        if self.tracker.epoch is None or e.member_epoch > self.tracker.epoch:
            # the first line showing this epoch: its target was computed before any member reached it
            # (GroupMetadataManager bumps the group epoch, computes the target, then reconciles members),
            # so this line is a member's reconciliation step, not the epoch's start
            self._open_epoch(e.member_epoch, None, None, "inferred", seen_at=e.ts)
        assigned = sorted(self._names(e.partitions or ()))
        if not view.member_timed:
            self._revocations_acknowledged(view, e.ts)
            self._callbacks_ran(view, state, e.ts)
            self._coordinator_timing(view, assigned, e.ts, missing_state_line(view.server_epoch, attributes))
        view.joined = view.server_lines = True
        view.heartbeat_seen_at = e.ts  # the coordinator states an assignment in answer to its heartbeat
        view.server_epoch = e.member_epoch
        view.server_state = state.value
        view.server_assigned = assigned
        view.left_static = False
        if e.member_epoch == self.tracker.epoch:
            # the member's assignment as the coordinator states it (3.8+ "new assignment state ...
            # assignedPartitions=", 3.6-3.7 CurrentAssignment(assignedPartitions=, partitionsPendingRevocation=)):
            # observed, not inferred; STABLE at the epoch ends this member's reconciliation
            self.tracker.member_stated(view.member_id, tuple(assigned))
            if state is MemberState.STABLE:
                self.tracker.member_reconciled(view.member_id, e.ts, "coordinator")

    def _c_topic_metadata_changed(self, e: Event) -> None:
        """ "Computed new subscription metadata: {t=TopicMetadata(..., numPartitions=N ...)}": the partition
        counts of the subscribed topics (attributes topic.<name>), and a cause of the next bump."""
        for key, value in (e.attributes or {}).items():
            if key.startswith("topic.") and value.isdigit():
                self.partition_counts[key.removeprefix("topic.")] = int(value)
        self._cause(e.ts, REASON_METADATA)

    def _c_group_dead(self, e: Event) -> None:
        """The group was deleted: epochs start again from scratch."""
        self.tracker.restart(e.ts)
        self.timeline.group_empty(e.ts)
        self.timeline.end_episode(e.ts)
        for member in list(self.members):
            self._forget(member, e.ts)
        self.members.clear()
        self.pending_start = self.pending_reason = None


def missing_state_line(last_epoch: int | None, attributes: Mapping[str, Any]) -> bool:
    """A member's "new assignment state: epoch=E, previousEpoch=P" whose P is later than the epoch of the
    member's last state line in the input: the coordinator logs every change of a member's state
    (GroupMetadataManager.consumerGroupHeartbeat, 3.8+: `Member {} new assignment state: epoch=...,
    previousEpoch=...`), so its line at epoch P is missing (an excerpt, a lost line)."""
    previous = str(attributes.get("previous_epoch") or "")
    return last_epoch is not None and previous.isdigit() and int(previous) > last_epoch
