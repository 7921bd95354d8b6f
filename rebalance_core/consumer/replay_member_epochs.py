"""The KIP-848 replayer with member-side logs only (no coordinator line): which group epochs there were
and which members each one counts, from the members' own (lagging) epochs alone: bumps explained by a join,
a leave or a fence and bumps no line explains (a crash, a metadata change), members removed unseen, static
members replaced, consumer processes restarted, epochs skipped and shown late.

The rules are GroupMetadataManager.consumerGroupHeartbeat (every bump has a cause; replaceMember and
throwIfInstanceIdIsUnreleased for static members; consumerGroupFenceMember and
consumerGroupStaticMemberGroupLeave for removals) as the client's ConsumerMembershipManager
(MembershipManagerImpl in 3.8: the epoch of the last heartbeat response, JOINING -> RECONCILING) shows it.
The epochs themselves are `epochs.EpochTracker`'s. A mixin of `consumer.replayer.ConsumerGroupReplayer`.
"""

from __future__ import annotations

from rebalance_core.consumer.replay_state import (
    CLIENT_LEAVING,
    CONSUMER_GROUP_MAX_SESSION_TIMEOUT_MS,
    MemberView,
)
from rebalance_core.consumer.states import CLIENT_REBALANCE_SIGNALS, ClientState, parse_client_state
from rebalance_core.events import Event

# member-only logs: how many of the latest epochs no line showed are remembered (see _skipped)
SKIPPED_EPOCHS_KEPT = 64


class MemberOnlyEpochs:
    """Member-side logs only: who is in which group epoch (GroupMetadataManager seen from the clients)."""

    def _member_only_epoch(self, view: MemberView, to_state: ClientState, e: Event, replacing: bool) -> None:
        """Member-side logs only: epochs come from the members' own (lagging) epochs, a rebalance starts
        at a member's first rebalance signal. `replacing`: `view` joined under the instance of a static member
        that left temporarily (it may be answered with an epoch another bump opened)."""
        current = self.tracker.current
        epoch = e.member_epoch
        if epoch is not None and epoch > 0 and (current is None or epoch > current.epoch):
            if current is not None:
                self._skipped(range(current.epoch + 1, epoch))
            joined = parse_client_state((e.attributes or {}).get("from_state")) is ClientState.JOINING
            causes_before = self.causes_seen
            self._epoch_unexplained(epoch, current.epoch if current is not None else None)
            if joined and not replacing and current is not None:
                self._skipped_by_one_leave(view, epoch, causes_before)
            # a new member is answered with the epoch its own join bumped (GroupMetadataManager
            # .consumerGroupHeartbeat: the member's epoch is the new group epoch's target epoch); when the
            # lines explain every bump since the epoch shown before (its join, leaves and joins logged before
            # it), none of them removed a member of that epoch unseen
            self.joined_epoch = (
                epoch
                if joined
                and not replacing
                and current is not None
                and not self.unexplained
                and current.members is not None
                and not current.members_in_doubt
                else None
            )
            self._open_epoch(epoch, e.ts, None, "inferred")
            self.shown_in_epoch = {view.member_id}
            cur = self.tracker.current
            self._leavers_processed_after(epoch if joined else None)
            if (
                joined
                and cur.epoch == epoch
                and list(cur.members or ()) == [view.member_id]
                and (epoch == 1 or self._others_seen(view.member_id))
            ):
                # a lone member's join (a new group, or every member seen before is out; a member from
                # before the input may be silent): the coordinator reconciled it in its joining heartbeat
                # (nothing it is assigned is owned by another), the epoch converged; provisionally, so the
                # epoch's row states what the member then consumes
                self.tracker.converged(e.ts, provisional=True)
        elif to_state in CLIENT_REBALANCE_SIGNALS:
            provisional = current is not None and not current.closed and current.stabilized_at is not None
            rejoined = parse_client_state((e.attributes or {}).get("from_state")) is ClientState.JOINING
            if provisional and to_state is ClientState.RECONCILING:
                # a later step of the same epoch's reconciliation; but a join answered with the current
                # epoch is a static member replaced, which bumps nothing (GroupMetadataManager:
                # staticMemberReplaced recomputes the target at the same epoch): the epoch stays converged
                if not rejoined:
                    self.tracker.unconverged()
            elif (current is None or current.closed or provisional) and self.member_signal is None:
                # a join, a leave or a fence: the cause of the next epoch's bump
                self.member_signal = e.ts

    def _skipped_by_one_leave(self, joiner: MemberView, epoch: int, causes: int) -> None:
        """Member-side logs only: `joiner`'s join is answered with `epoch`, two after the current one, and the
        lines explain exactly two bumps: a member's leave for good (epoch -1, logged while the current epoch
        was the group's) and this join. The joiner's epoch is the one its own join bumped
        (GroupMetadataManager.consumerGroupHeartbeat), so the leave bumped the epoch between
        (consumerGroupFenceMember): that skipped epoch counts the current epoch's members but the leaver. Kept
        for a lagging member's line that shows it later (_skipped_epoch_shown)."""
        cur = self.tracker.current
        if (
            epoch != cur.epoch + 2
            or causes != 2
            or self.unexplained
            or cur.members is None
            or cur.members_in_doubt
        ):
            return
        leavers = [v.member_id for v in self.members.values() if v.left_in_epoch == cur.epoch]
        if len(leavers) != 1 or leavers[0] not in cur.members:
            return
        self.skipped_members[cur.epoch + 1] = {
            m: i for m, i in cur.members.items() if m not in (leavers[0], joiner.member_id)
        }

    def _skipped(self, epochs: range) -> None:
        """Member-side logs only: the group's epoch moved past `epochs` without a line showing them. Only the
        latest are remembered: a member lags by the epochs that opened while it did not heartbeat."""
        self.skipped_epochs.update(epochs)
        if len(self.skipped_epochs) > SKIPPED_EPOCHS_KEPT:
            self.skipped_epochs = set(sorted(self.skipped_epochs)[-SKIPPED_EPOCHS_KEPT:])
            self.skipped_members = {k: v for k, v in self.skipped_members.items() if k in self.skipped_epochs}

    def _skipped_epoch_shown(self, e: Event) -> None:
        """Member-side logs only: a member's line states an epoch the group had passed without a line showing
        it (a member lagging: the client logs the epoch of the last heartbeat response it processed,
        ConsumerMembershipManager, and a member keeps its epoch while it revokes, CurrentAssignmentBuilder
        UNREVOKED_PARTITIONS). Member epochs are group epochs, so that epoch was one, with this member in it:
        its row (see EpochTracker.epoch_shown_late)."""
        if e.member_epoch in self.skipped_epochs:
            self.skipped_epochs.discard(e.member_epoch)
            members = self.skipped_members.pop(e.member_epoch, None)
            if members is not None and e.member_id not in members:
                members = None  # the line contradicts the count: no list, not a guess
            self.tracker.epoch_shown_late(e.member_epoch, e.ts, "member", members)

    def _epoch_unexplained(self, epoch: int, previous: int | None) -> None:
        """Member-side logs only: a member's line shows group epoch `epoch`, the latest shown was `previous`.
        Every bump has a cause (GroupMetadataManager: a member joined, left, was fenced, or the subscribed
        topics' metadata changed); the members' own logs show joins, leaves and fences, not a silent member
        whose session expired (a crash: the coordinator's consumerGroupFenceMember after
        group.consumer.session.timeout.ms) nor a metadata change. More bumps than the lines explain: the
        epochs they opened may no longer count a member whose log is silent, so the epoch that closes now
        and the new one are settled by _settle_unexplained (member list null unless every member counted
        stated the epoch)."""
        self._settle_unexplained()
        # the first epoch shown: one bump (the join that shows it, or one from before the input)
        bumps = epoch - previous if previous is not None else 1
        if previous is None:
            self.history_in_input = epoch == 1
        self.unexplained = max(0, bumps - self.causes_seen) if previous is not None else 0
        self.causes_seen = max(0, self.causes_seen - bumps)

    def _removed_unseen(self, member: str) -> None:
        """Member-side logs only: `member` turned out to have been removed unseen (its session expired): the
        removal bumped the group epoch, so it explains a bump (the current epoch's, or the next one's)."""
        self.tracker.member_out(member)
        self._bump_explained()

    def _bump_explained(self) -> None:
        """Member-side logs only: a cause of a bump no member line states was found (see _epoch_unexplained):
        the current epoch's unexplained bump, else the next one's."""
        if self.unexplained:
            self.unexplained -= 1
        else:
            self.causes_seen += 1

    def _settle_unexplained(self) -> None:
        """Member-side logs only: the current epoch closes (or the input ends). Opened by a bump no line
        explains, its member list is what its members' own lines state: one counted member that never
        stated the epoch may be the silent member whose removal bumped it, so the list is unknown (null). Such
        a member stays in doubt in the later epochs too (its removal may be that bump, or still to come), until
        its own line shows it at the group's epoch."""
        cur = self.tracker.current
        if not self.unexplained or self.has_coordinator or cur is None or cur.closed or cur.members is None:
            return
        unshown = {m for m in cur.members if m not in self.shown_in_epoch}
        if unshown:
            self.tracker.members_unknown()
            self.doubtful |= unshown

    def _leavers_processed_after(self, join_epoch: int | None) -> None:
        """Member-side logs only: a new epoch opened (`join_epoch`: a joiner's first epoch, else None). A
        member logs LEAVING -> UNSUBSCRIBED once its leave heartbeat (epoch -1) is sent; the coordinator
        removes it when that heartbeat arrives, and every removal bumps the group epoch
        (GroupMetadataManager.consumerGroupFenceMember). A joiner answered with the epoch right after the one
        the leaver left in was bumped by its own join alone: the leave was not processed yet, so the leaver
        is a member of that epoch (its own bump is a later one)."""
        for view in self.members.values():
            if view.left_in_epoch is None:
                continue
            if join_epoch is not None and join_epoch == view.left_in_epoch + 1:
                self.tracker.member_in_epoch(view.member_id, view.instance)
            view.left_in_epoch = None

    def _idle_members_out(self, view: MemberView, ts: int) -> None:
        """Member-side logs only: `view` is STABLE at the current epoch and consumes every partition anyone
        consumes, none in flight, at least one per member counted in the epoch. The broker's assignors give
        every member of a topic at least one partition when there are as many (UniformAssignor, RangeAssignor
        balance the partitions), so a counted member of the same subscription that joined within the input,
        consumes nothing and whose log never showed this epoch has no target: it is out of the group, removed
        unseen (its session expired while its log was silent, a crash). It owned nothing, so nothing stops. (A
        member that logged this epoch is in it: its subscription may differ; member logs do not state it. A
        member that logged leaving for good is not silent: it stays counted until its leave heartbeat reaches
        the coordinator, and that leave is its own bump, already counted; a static one that left temporarily,
        epoch -2, bumps nothing and keeps its target, so one without any was removed at its session expiry.)"""
        cur = self.tracker.current
        tl = self.timeline
        if cur is None or cur.closed or cur.members is None or view.client_epoch != cur.epoch:
            return
        mine = tl.partitions_of(view.member_id)
        if tl.stopped() or len(mine) < len(cur.members) or set(tl.consuming()) != set(mine):
            return
        for member in [m for m in cur.members if m != view.member_id]:
            other = self.members.get(member)
            if (
                other is not None
                and other.joined_in_input
                and other.client_epoch != cur.epoch  # its own log never showed it at this epoch
                and (other.left_static or parse_client_state(other.client_state) not in CLIENT_LEAVING)
                and not tl.partitions_of(member)
            ):
                other.client_state = ClientState.FENCED.value
                self._forget(member, ts)
                self._removed_unseen(member)

    def _instance_taken_over(self, view: MemberView, ts: int) -> None:
        """Member-side logs only: `view` joined with a group.instance.id and was accepted (given a member
        epoch). The coordinator accepts a static member only once the instance's previous member left
        (epoch -2) or was removed (GroupMetadataManager.throwIfInstanceIdIsUnreleased: else
        UNRELEASED_INSTANCE_ID, fatal), so a previous member of that instance still counted (a crashed
        process, its log silent) is out, of the epoch this join opens too. What it consumed stops (inferred)
        once another member is assigned it (`_owner_removed_unseen`): when it stopped, no line shows."""
        if not view.instance:
            return
        taken = [
            v
            for v in self.members.values()
            if v.instance == view.instance and v.member_id != view.member_id and v.member_id not in self.gone
        ]
        for other in taken:
            other.client_state = ClientState.FENCED.value
            other.left_static = False
            self._forget(other.member_id, ts)
            self._bump_explained()  # its removal (session expired) bumped the epoch

    def _static_successor_answered(self, view: MemberView, replaced: str, epoch: int | None) -> None:
        """Member-side logs only: `view` joined under the group.instance.id of `replaced`, which left
        temporarily (epoch -2: kept in the group, its assignment reserved, until its session expires,
        GroupMetadataManager.consumerGroupStaticMemberGroupLeave), and is answered with member epoch `epoch`.

        - `epoch` not newer than the current one: `view` replaced it in place
          (GroupMetadataManager.consumerGroupHeartbeat -> replaceMember: no bump), so its JOINING is no cause
          of a bump, and the epoch's members are the replacement's from here (it joins the epoch as its line
          shows it); an epoch that converged before keeps the members it converged with.
        - newer: `replaced`'s session expired first, and that removal bumped an epoch R after the one it left
          in; the join bumped `epoch` itself. R <= `epoch` - 1, so if that is the current epoch (opened after
          the leave), `replaced` is no member of it; with more epochs between, R may be one no line showed:
          whether the current epoch still counted it is unknown (null). The epoch it left in counted it."""
        cur = self.tracker.current
        if cur is None or epoch is None:
            return
        if epoch <= cur.epoch:
            self.causes_seen = max(0, self.causes_seen - 1)
            if cur.stabilized_at is None:
                self.tracker.member_out(replaced)
            return
        previous = self.members.get(replaced)
        left_in = previous.left_static_epoch if previous is not None else None
        if replaced not in (cur.members or {}) or left_in is None or left_in >= cur.epoch:
            return
        if epoch == cur.epoch + 1:
            self.tracker.member_out(replaced)
        else:
            self.tracker.members_unknown()

    def _process_restarted(self, view: MemberView) -> None:
        """Member-side logs only: `view` joins from a consumer process that logged another member id before,
        which never logged leaving. A consumer keeps its member id for its lifetime (a fenced member rejoins
        under the same id: AbstractMembershipManager.transitionToJoining), so the other one's process is gone
        (a crash, then a restart): the coordinator still counts it until its session expires, one
        group.consumer.session.timeout.ms (a broker setting no member log states) after its last heartbeat.
        Which later epochs count it cannot be told (see _flag_unknown_members)."""
        if view.process is None:
            return
        for other in self.members.values():
            if (
                other.process == view.process
                and other.member_id != view.member_id
                and other.member_id not in self.gone
                and parse_client_state(other.client_state) not in CLIENT_LEAVING
            ):
                other.process_gone = True

    def _fenced_unseen(self, view: MemberView) -> None:
        """Member-side logs only: `view` learns it was fenced (its heartbeat answered FENCED_MEMBER_EPOCH or
        UNKNOWN_MEMBER_ID after a pause, or its revocation overran the rebalance timeout). The coordinator
        removed it at an instant no member log shows, since its last line at the then current epoch: an epoch
        that opened after that line may or may not count it, so its member list is unknown (null)."""
        if self._silent_since_epoch_opened(view):
            self.tracker.members_unknown()

    def _silent_since_epoch_opened(self, view: MemberView) -> bool:
        """Member-side logs only: `view` is counted in the current epoch, and its own last line at the group's
        epoch came before that epoch opened."""
        cur = self.tracker.current
        if self.has_coordinator or cur is None or cur.closed or cur.members is None:
            return False
        opened, seen = cur.started_at, view.current_at
        return view.member_id in cur.members and seen is not None and opened is not None and opened > seen

    def _flag_unknown_members(self) -> None:
        """Member-side logs only: the current epoch counts a member whose process is gone (see
        _process_restarted) and whose own log never stated this epoch: it may have been fenced at it or
        before, or still be counted, so the epoch's member list is unknown (null), never a guess, unless a later
        line shows that member out of the epoch (OpenEpoch.members_doubted); except an
        epoch a new member's join opened alone (joined_epoch): it counts whom the epoch before counted. Likewise
        an epoch that may count a static member closed while JOINING (see _maybe_counted_unanswered)."""
        cur = self.tracker.current
        if self.has_coordinator or cur is None or cur.closed or cur.members is None or cur.members_unknown:
            return
        if self._maybe_counted_unanswered():
            self.tracker.members_unknown()
            return
        if self.joined_epoch == cur.epoch:
            return  # opened by a join alone: it counts whom the epoch before counted (see _member_only_epoch)
        for member in list(cur.members):
            view = self.members.get(member)
            if member in self.doubtful or (
                view is not None and view.process_gone and cur.epoch > (view.client_epoch or 0)
            ):
                # in doubt until a line shows it out of this epoch: a partition it never revoked handed to
                # another member at this epoch (_owner_removed_unseen: CurrentAssignmentBuilder withholds a
                # partition until its owner released it or was removed), or its instance taken over
                self.tracker.member_doubted(member)

    def _unanswered_of(self, view: MemberView) -> list[MemberView]:
        """Static members of `view`'s instance, other than it, that closed while JOINING (left_unanswered)."""
        if not view.instance:
            return []
        return [
            v
            for v in self.members.values()
            if v.left_unanswered and v.instance == view.instance and v.member_id != view.member_id
        ]

    def _maybe_counted_unanswered(self) -> bool:
        """Member-side logs only: the current epoch opened after a static member closed while JOINING and may
        count it. A JOINING member that closes sends its leave heartbeat (AbstractMembershipManager.leaveGroup:
        only UNSUBSCRIBED, FENCED, FATAL and STALE are out of the group) and ignores any response to its join
        heartbeat, so its log never shows whether the coordinator had processed that join. If it had, the join
        bumped the epoch and the leave (epoch -2) kept the member, reserved, until its session expired
        (GroupMetadataManager.consumerGroupStaticMemberGroupLeave) or a member of its instance replaced it at
        the same epoch (replaceMember): the epochs in between, the successor's included, count the old
        member id or not. Bounded by the broker's longest session (group.consumer.max.session.timeout.ms,
        60 s by default; the configured session timeout where given) and by the successor's epoch."""
        cur = self.tracker.current
        opened = cur.started_at if cur.started_at is not None else self.last_ts
        longest = self.settings.session_timeout_ms or CONSUMER_GROUP_MAX_SESSION_TIMEOUT_MS
        for view in self.members.values():
            if not view.left_unanswered or view.left_static_at is None or opened is None:
                continue
            if opened - view.left_static_at > longest:
                view.left_unanswered = False  # surely expired before any later epoch
                continue
            until = view.unanswered_until_epoch
            if cur.epoch > (view.left_static_epoch or 0) and (until is None or cur.epoch <= until):
                return True
        return False
