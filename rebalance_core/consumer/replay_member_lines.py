"""The KIP-848 replayer's member side: a consumer's own lines (AsyncKafkaConsumer), its state changes,
"Reconciling assignment", its rebalance callbacks and its leave, and what they tell of partitions it owned
before the input or of an owner removed unseen.

The rules are the client's ConsumerMembershipManager (MembershipManagerImpl in 3.8; AbstractMembershipManager:
MemberState transitions, maybeReconcile, leaveGroup) and, for what a line implies about the coordinator,
GroupMetadataManager.consumerGroupHeartbeat and CurrentAssignmentBuilder (UNRELEASED_PARTITIONS,
UNREVOKED_PARTITIONS). A mixin of `consumer.replayer.ConsumerGroupReplayer`.
"""

from __future__ import annotations

from rebalance_core.consumer.replay_state import INVALID_TRANSITION, UNKNOWN_STATE, MemberView
from rebalance_core.consumer.states import (
    LEAVE_GROUP_MEMBER_EPOCH,
    LEAVE_GROUP_STATIC_MEMBER_EPOCH,
    ClientState,
    is_valid_client_transition,
    parse_client_state,
)
from rebalance_core.events import Event, TopicPartition, parse_partitions
from schemas.events import EventType


class MemberLines:
    """Handlers of a member's own lines (ConsumerMembershipManager) and what they tell of ownership."""

    def _m_member_state_changed(self, e: Event) -> None:
        view = self._view(e.member_id, e.group_instance_id)
        attributes = e.attributes or {}
        to_state = parse_client_state(attributes.get("to_state"))
        from_state = parse_client_state(attributes.get("from_state"))
        if to_state is None:
            self._anomaly(UNKNOWN_STATE, e, f"client state {attributes.get('to_state')!r}")
            return
        if from_state is not None and not is_valid_client_transition(from_state, to_state):
            self._anomaly(INVALID_TRANSITION, e, f"{from_state.value} -> {to_state.value}")
        # a static member closed before the coordinator answered it with a member epoch reserves nothing: its
        # leave heartbeat (epoch -2) finds the instance still held by its previous member, or no member
        # (GroupMetadataManager.consumerGroupStaticMemberGroupLeave: FENCED_INSTANCE_ID / UNKNOWN_MEMBER_ID)
        had_epoch = view.joined or (view.client_epoch or 0) > 0
        replacing = view.replaces is not None or bool(self._unanswered_of(view))
        view.client_state = to_state.value
        view.client_epoch = e.member_epoch
        if to_state is ClientState.PREPARE_LEAVING and from_state is ClientState.STABLE:
            view.stable_epoch = e.member_epoch
        self.tracker.member_at_epoch(view.member_id, e.member_epoch)
        if to_state is ClientState.FENCED and self._silent_since_epoch_opened(view):
            # removed at an instant no member log shows, since before the current epoch opened: its removal
            # may be the bump that opened it (one no line explained), else a later one
            self._bump_explained()
        elif bumps_group_epoch(to_state, e.member_epoch):
            self.causes_seen += 1
        elif to_state is ClientState.FATAL and from_state is ClientState.JOINING:
            # a join refused (e.g. UNRELEASED_INSTANCE_ID: GroupMetadataManager.throwIfInstanceIdIsUnreleased)
            # creates no member: it bumps nothing, and no epoch counts it (a line of its process, such as the
            # previous member's callback, may have shown it first)
            self.causes_seen = max(0, self.causes_seen - 1)
            if not self.has_coordinator:
                self.tracker.member_out(view.member_id)
        if to_state is ClientState.JOINING:
            view.left_static = False
            view.joined_in_input = True
            previous = self._left_static(view.instance)
            if previous is not None and not self.has_coordinator:
                # member-side logs only (so far: the broker's lines of the same instants may follow):
                # the static member is back under a new member id. The old id is out, but its view
                # stays until forgotten: it says the old id's own log is present (member timing).
                previous.left_static = False
                self._forget(previous.member_id, e.ts)
                view.replaces = previous.member_id
            if not self.has_coordinator:
                self._process_restarted(view)
        elif to_state is ClientState.RECONCILING and from_state is ClientState.JOINING and view.replaces:
            replaced, view.replaces = view.replaces, None
            self._static_successor_answered(view, replaced, e.member_epoch)
        elif to_state is ClientState.LEAVING and e.member_epoch == LEAVE_GROUP_STATIC_MEMBER_EPOCH:
            # a static member leaving "temporarily": its partitions stay reserved
            view.left_static, view.left_static_at = had_epoch, e.ts
            view.left_static_epoch = self.tracker.epoch
            view.left_unanswered = not had_epoch and not self.has_coordinator
        elif to_state is ClientState.LEAVING and e.member_epoch == LEAVE_GROUP_MEMBER_EPOCH:
            view.left_in_epoch = self.tracker.epoch
        elif (
            to_state is ClientState.RECONCILING
            and from_state is ClientState.JOINING
            and not self.has_coordinator
        ):
            self._instance_taken_over(view, e.ts)
            for other in self._unanswered_of(view):
                other.unanswered_until_epoch = e.member_epoch
        if to_state is ClientState.PREPARE_LEAVING and not self._lags_converged_epoch(view, e):
            self._convergence_holds(view)
        if to_state is ClientState.FENCED:
            self._fenced_unseen(view)
            self._stop_all(view, e.ts, "lost")
        elif to_state in (ClientState.LEAVING, ClientState.UNSUBSCRIBED):
            self._stop_all(view, e.ts, "member_left")
        if to_state in (ClientState.FATAL, ClientState.UNSUBSCRIBED, ClientState.STALE) and not (
            view.joined or view.left_static
        ):
            # out of the group as far as we know (refused, or a leave only its own log shows; STALE: its poll
            # timer expired and it sent its leave heartbeat, AbstractMembershipManager.transitionToStale)
            self._forget(view.member_id, e.ts)
            self.emptied = not self._group_members()
            if self.emptied and not self.has_coordinator:
                self._settle_unexplained()
                self.unexplained = 0
                # member-side logs only: the last known member left
                self.tracker.group_empty(e.ts, emptied_unseen=True)
        if not self.has_coordinator:
            if to_state is ClientState.STABLE:
                self._idle_members_out(view, e.ts)
            self._member_only_epoch(view, to_state, e, replacing)
        elif to_state is ClientState.RECONCILING and from_state is not ClientState.JOINING:
            # (a join's own response, JOINING -> RECONCILING, is no further step of a converged epoch)
            # a provisional convergence did not hold: a member reconciles again at this epoch (a join, a
            # leave or a fence is the coordinator's own line, and its bump opens the next epoch)
            cur = self.tracker.current
            if cur is not None and not cur.closed and e.member_epoch == cur.epoch:
                self.reopened_epoch = cur.epoch
            self.tracker.unconverged()
        elif self._lags_converged_epoch(view, e):
            # its own line states an older epoch after the (provisional) convergence: the client logs the epoch
            # of the last heartbeat response it processed (ConsumerMembershipManager), so the coordinator had
            # not moved it to the current one yet, and the group is not Stable until it has
            # (ConsumerGroup.maybeUpdateGroupState)
            self.tracker.unconverged()

    def _convergence_holds(self, view: MemberView) -> None:
        """`view`, a member of the provisionally converged epoch, starts leaving: close() or unsubscribe()
        (PREPARE_LEAVING) revokes all it owns before its leave heartbeat, whose removal bumps the epoch
        (GroupMetadataManager.consumerGroupFenceMember). The group changes now, so the convergence held, and its
        episode ends here with what every member consumed when it converged (each member STABLE, its
        reconciliation done: ConsumerMembershipManager); what this member gives up now moves in the next
        rebalance. (Not so a member whose line states an older epoch: it never reached this one, which did not
        converge; nor a member learning it was FENCED: its removal came at an unseen earlier instant, which may
        be before the convergence the member-side lines suggest.)"""
        cur = self.tracker.current
        if cur is None or cur.closed or cur.stabilized_at is None:
            return
        if view.member_id not in (cur.target if cur.target is not None else (cur.members or {})):
            return
        # member-side logs only: the epoch closes here, not at the next bump, so what its bump left unexplained
        # is settled now (a silent member it counts may be the one whose removal opened it: null, not a guess)
        self._settle_unexplained()
        self.tracker.settle()
        self.tracker.maybe_end_episode()

    def _lags_converged_epoch(self, view: MemberView, e: Event) -> bool:
        cur = self.tracker.current
        return (
            cur is not None
            and not cur.closed
            and cur.stabilized_at is not None
            and e.member_epoch is not None
            and 0 < e.member_epoch < cur.epoch
            and view.member_id in (cur.members or {})
        )

    def _m_sync_response(self, e: Event) -> None:
        """KIP-848 client "Reconciling assignment with local epoch ..." (partitions = the new assignment,
        attributes.owned = what it consumes now, a comma list): partitions it owned since before the input
        become known (else a member-only log can look like a stop-the-world). The callbacks time the changes.
        With the coordinator's log the block adds nothing: its lines own the epochs and the owners, while the
        block names no member epoch (a member reconciling an earlier epoch's assignment logs it after the
        group moved on) and leaves out partitions the coordinator withholds until their owner released them
        (CurrentAssignmentBuilder: UNRELEASED_PARTITIONS), so it is not the epoch's assignment."""
        view = self._view(e.member_id, e.group_instance_id)
        assigned, owned, revoking = self._block_partitions(e)
        # the group epoch whose target the block steps to: the newest one the input showed (the coordinator's
        # bump line; member-side logs only: the newest epoch a member's line stated), where newer than the
        # member's own (one rule for both paths: EpochTracker.member_assignment_line)
        self.tracker.member_assignment_line(
            view.member_id,
            view.client_epoch,
            assigned,
            owned,
            revoking=revoking,
            target_epoch=self.tracker.epoch,
        )
        epoch = self.tracker.epoch
        toward_unseen = revoking and None not in (view.client_epoch, epoch) and view.client_epoch >= epoch
        if toward_unseen:
            # a revocation at the group epoch the member is at is a step towards a later one no line has shown
            # yet (the coordinator sends a revocation only for a newer target: CurrentAssignmentBuilder
            # .computeNextAssignment, UNREVOKED_PARTITIONS keeps the member's epoch). What it owns is its
            # whole assignment at its epoch: it reconciled it before this one started (maybeReconcile runs one
            # reconciliation at a time); a partition withheld from it there is checked when the rows are
            # written (another member's revocation towards the epoch)
            self.tracker.member_assignment_line(
                view.member_id, view.client_epoch, owned, owned, revoking=False
            )
        view.block_epoch, view.block_assigned = view.client_epoch, assigned
        if self.has_coordinator:
            return
        for tp in owned:
            self._adopt(tp, view, e.ts)
        if e.partitions is not None:
            # "Assigned partitions:" is the member's whole target assignment (AbstractMembershipManager
            # .maybeReconcile; MembershipManagerImpl in 3.8): observed assignment rows for the epoch; a step
            # towards an epoch not shown yet states what it owns at the current one
            self.tracker.member_stated(view.member_id, owned if toward_unseen else assigned)

    def _block_partitions(
        self, e: Event
    ) -> tuple[tuple[TopicPartition, ...], tuple[TopicPartition, ...], bool]:
        """A "Reconciling assignment" block's assigned and owned partitions, and whether it revokes."""
        owned_text = (e.attributes or {}).get("owned", "")
        owned = tuple(
            self._names(parse_partitions([i.strip() for i in owned_text.split(",") if i.strip()]) or ())
        )
        return tuple(self._names(e.partitions or ())), owned, bool((e.attributes or {}).get("revoked"))

    def _late_block_line(self, e: Event) -> bool:
        """A line of a member the coordinator fenced (it is in `gone`), at a member epoch whose rows are still
        held for it: its process was frozen (a GC pause) past its session, and logs on waking what its last
        heartbeat response brought before the freeze. ConsumerMembershipManager moves it to RECONCILING at
        that epoch and logs the "Reconciling assignment" block (AbstractMembershipManager.maybeReconcile); the
        block names what the coordinator sent it at that epoch (CurrentAssignmentBuilder, withheld partitions
        left out), so it states the member's assignment there as a punctual block would. Its next heartbeat
        is answered FENCED_MEMBER_EPOCH / UNKNOWN_MEMBER_ID (transitionToFenced): the FENCED line, or any
        other line of it, ends the wait (the caller releases it). True: the line belongs to the late block
        (the block itself is taken as the member's line at that epoch; nothing else of it is replayed: the
        member owns nothing since its fence)."""
        if not self.tracker.late_block_awaited(e.member_id, e.member_epoch):
            return False
        self.tracker.member_at_epoch(e.member_id, e.member_epoch)  # nothing more of its older epochs
        if e.event_type == EventType.SYNC_RESPONSE.value:
            assigned, owned, revoking = self._block_partitions(e)
            # a revocation is a step towards a target no line of the fenced member will show: it states
            # nothing of the epoch (member_assignment_line ignores it without a target epoch)
            self.tracker.member_assignment_line(e.member_id, e.member_epoch, assigned, owned, revoking)
            return True
        if e.event_type == EventType.MEMBER_STATE_CHANGED.value:
            to_state = parse_client_state((e.attributes or {}).get("to_state"))
            return to_state is not None and to_state is not ClientState.FENCED
        return False

    def _m_partitions_assigned(self, e: Event) -> None:
        view = self._view(e.member_id, e.group_instance_id)
        for tp in self._names(e.partitions or ()):
            if not self.has_coordinator:
                self._owner_removed_unseen(tp, view, e.ts)
                self._new_partition(tp, view)
            self._start(tp, view, e.ts)

    def _new_partition(self, tp: TopicPartition, view: MemberView) -> None:
        """Member-side logs only, the group's whole history in the input: a partition no member ever consumed
        is new to the group (a topic's partition count grew, or a subscription added a topic): the
        coordinator bumps the group epoch when the subscribed topics' metadata changes
        (GroupMetadataManager.consumerGroupHeartbeat: subscription metadata refreshed), a cause no member log
        states; one such bump per epoch is explained. The partition came with the member's own epoch (the
        target it reconciled to): one assigned at epoch 1, or at an epoch older than the group's current one (a
        callback that ran after the next bump), explains no bump of the current epoch."""
        if tp in self.partitions_seen:
            return
        self.partitions_seen.add(tp)
        epoch = self.tracker.epoch
        if (
            self.history_in_input
            and epoch is not None
            and epoch > 1
            and view.client_epoch == epoch
            and self.new_partitions_epoch != epoch
        ):
            self.new_partitions_epoch = epoch
            self._bump_explained()

    def _owner_removed_unseen(self, tp: TopicPartition, view: MemberView, ts: int) -> None:
        """Member-side logs only: tp is assigned to `view` while another member consumes it and never
        revoked it. The coordinator assigns a partition only once its previous owner released it or was
        removed from the group (CurrentAssignmentBuilder: UNRELEASED_PARTITIONS until then), so that owner
        was fenced, its session expired while its log was silent (a crash): it is out of the group, and
        when it stopped no line shows (inferred: at the latest, now)."""
        owner = self.timeline.owner_of(tp)
        previous = self.members.get(owner) if owner is not None and owner != view.member_id else None
        if previous is None:
            # a static member that left "temporarily" (epoch -2) keeps its assigned partitions reserved until
            # its session expires (GroupMetadataManager.consumerGroupStaticMemberGroupLeave): one of them
            # assigned elsewhere at a later epoch says that session expired. The leave clears the partitions
            # pending its revocation, so at the epoch it left in (whose target had already given them to
            # others) they move at once: no sign of an expiry
            stopper = self.members.get(self.timeline.stopped().get(tp, ""))
            if (
                stopper is not None
                and stopper.left_static
                and stopper.member_id != view.member_id
                and (view.client_epoch or 0) > (stopper.left_static_epoch or 0)
            ):
                stopper.left_static = False
                self._forget(stopper.member_id, ts)
                self._removed_unseen(stopper.member_id)
            return
        self._stop_all(previous, ts, "member_failed", "inferred")
        previous.client_state = ClientState.FENCED.value
        self._forget(previous.member_id, ts)
        self._removed_unseen(previous.member_id)

    def _m_partitions_revoked(self, e: Event) -> None:
        view = self._view(e.member_id, e.group_instance_id)
        leaving = view.client_state in (ClientState.PREPARE_LEAVING.value, ClientState.LEAVING.value)
        for tp in self._names(e.partitions or ()):
            self._member_stop(view, tp, e.ts, "member_left" if leaving else "revoked", e)

    def _m_partitions_lost(self, e: Event) -> None:
        view = self._view(e.member_id, e.group_instance_id)
        for tp in self._names(e.partitions or ()):
            self._member_stop(view, tp, e.ts, "lost", e)

    def _m_leave_sent(self, e: Event) -> None:
        self._stop_all(self._view(e.member_id, e.group_instance_id), e.ts, "member_left")


def bumps_group_epoch(to_state: ClientState, member_epoch: int | None) -> bool:
    """A member's own state change that makes the coordinator bump the group epoch: its join (a new member,
    GroupMetadataManager.consumerGroupHeartbeat), its leave for good (epoch -1: consumerGroupFenceMember; a
    static member's epoch -2 keeps its place, no bump), or its fencing (the coordinator removed it)."""
    if to_state is ClientState.LEAVING:
        return member_epoch == LEAVE_GROUP_MEMBER_EPOCH
    return to_state in (ClientState.JOINING, ClientState.FENCED)
