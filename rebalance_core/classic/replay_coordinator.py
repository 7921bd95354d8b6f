"""The classic replayer's coordinator side: what the group coordinator's own lines (JoinGroup received,
PreparingRebalance, join completed, assignment received, Stable, member removed, static member replaced,
Empty, Dead, topic metadata) do to the replay beyond the state machine of `classic.coordinator`.

The rules are the broker's: `GroupCoordinator` (Scala, 2.x/3.x: onCompleteJoin, removeMemberAndUpdateGroup,
onExpireHeartbeat, updateStaticMemberAndRebalance) and its Java successor `GroupMetadataManager` with
`ClassicGroup` (3.6+/4.0). A mixin of `classic.replayer.GroupReplayer`, whose state it reads and writes.
"""

from __future__ import annotations

from rebalance_core.assignors.protocols import KIP415_PROTOCOLS, rebalance_protocol_of
from rebalance_core.classic import coordinator as co
from rebalance_core.classic.replay_state import (
    LEAVE_REASON,
    POLL_TIMEOUT_REASON,
    Round,
    existing_members_rejoin,
    len_or_none,
    log_of,
)
from rebalance_core.events import Event
from schemas.events import RemovalReason


class CoordinatorLines:
    """Handlers `_c_<event_type>` of the coordinator's lines (GroupCoordinator / ClassicGroup)."""

    # ========================================================================= coordinator side
    def _c_join_received(self, e: Event) -> None:
        self.group.apply(e)
        if e.member_id and self.round is not None and not self.round.stable:
            self.round.joined.append(e.member_id)
        if e.member_id and e.client_id in self.joining_clients:
            # the JoinGroup of a process whose own log showed its join_sent: member timing for it,
            # even if its first line with the member id comes after the group turns Stable
            self._claim_logged_join(e.member_id, e.client_id)
        elif e.member_id and e.group_instance_id and e.group_instance_id in self.member_timed:
            # a static member's log is its instance's (KIP-345: one identity across restarts); the
            # broker's static join lines name the instance, not the client
            self.member_timed.add(e.member_id)
        if e.protocol_name and not self.offered_protocol:
            self.offered_protocol = e.protocol_name
            if self.rebalance_protocol is None:  # the members' first choice is what the vote selects
                self.rebalance_protocol = rebalance_protocol_of(e.protocol_name)

    def _c_rebalance_prepared(self, e: Event) -> None:
        change_logged = self.group.change_logged
        from_empty = e.generation_id == 0 or self.group.state in (co.GroupState.EMPTY, co.GroupState.DEAD)
        self.group.apply(e)
        reason = e.reason
        leaving = LEAVE_REASON.search(reason or "")
        if leaving and self.poll_timed_out.pop(leaving.group(1), None) is not None and "poll" not in reason:
            # the member's own log shows why it left; a 3.2+ broker would print it itself
            # (GroupCoordinator "...; client reason: consumer poll timeout has expired.")
            reason = f"{reason}; client reason: {POLL_TIMEOUT_REASON}"
        rnd = self.round
        if rnd is not None and rnd.generation_id is None and not rnd.stable:
            if rnd.timing_source != "member":
                return  # still the same join phase (the model noted the repeated Preparing)
            self._adopt_coordinator_start(rnd, e.ts, reason)
        else:
            self._begin_round(e.ts, reason, "coordinator", change_logged=change_logged)
            self.round.owned_before = not from_empty
        if self.kip415_delay_inferred and existing_members_rejoin(reason):
            self.kip415_delay_inferred = False  # the workers rejoin when the delay expires
        if leaving:
            self._stop_member(leaving.group(1), e.ts, "member_left")
        if self.protocol != "cooperative":  # eager, or unknown: the classic default (range) is eager
            self._stop_unlogged_members(e.ts)

    def _c_join_completed(self, e: Event) -> None:
        self.group.apply(e)
        gen = e.generation_id if e.generation_id is not None else self.group.generation_id
        rnd = self._round_for_generation(gen, e.ts)
        rnd.generation_id = gen
        rnd.join_completed_at = e.ts
        rnd.leader_id = e.leader_id or self._leader_if_rejoined(rnd, e)
        if e.members is not None:
            rnd.members = list(e.members)
        elif self.group.membership_known:
            rnd.members = list(self.group.members)
        rnd.member_count = e.member_count if e.member_count is not None else len_or_none(rnd.members)
        named = co.members_named_in_reason(rnd.reason)
        if gen is not None and named is not None and named[2] and named[0] in self.group.members:
            # the member whose JoinGroup opened this round joined it and was not removed before its
            # completion: a member of the generation, like those whose responses name it
            self._member_in_generation(gen, (named[0],))
        # replaced instances whose new ids no line printed yet: the old ids stand for them
        rnd.stand_ins = sorted(
            (set(rnd.members or ()) | {rnd.leader_id}) & set(self.unnamed_replacements.values())
        )
        rnd.protocol_type = e.protocol_type or self.group.protocol_type
        self._set_protocol(e.protocol_name)
        self.last_completion = [log_of(e), e.source, gen]

    def _members_resolved(self, gen: int | None, members: list[str]) -> None:
        """A count the model could not place when it was stated (some pending members had joined
        unlogged) turned out to state `members` (`ClassicGroup._still_pending`): generation `gen`'s
        list, if it is still open or its row not yet drained."""
        rnd = self.round
        if rnd is not None and rnd.generation_id == gen and gen is not None:
            if rnd.members is None:
                rnd.members = list(members)
            return
        for row in reversed(self._out["generations"]):
            if row["generation_id"] == gen and gen is not None:
                if row["members"] is None and row["member_count"] in (None, len(members)):
                    row["members"] = sorted(members)
                return

    def _leader_if_rejoined(self, rnd: Round, completion: Event) -> str | None:
        """The model's leader at join completion, unless it is a static member no line shows rejoining in
        this round: a leader that did not rejoin hands leadership to the first joined member of the
        members map (GroupMetadata.maybeElectNewJoinedLeader / ClassicGroup.maybeElectNewJoinedLeader;
        a dynamic one is removed first), and a known static member's JoinGroup is not logged at INFO.
        None then: the leader's assignment line, if the round gets one, names it."""
        leader = self.group.leader_id
        info = self.group.members.get(leader) if leader else None
        if info is None or not info.group_instance_id or leader in rnd.joined:
            return leader
        if self._election_absence_trusted(completion, rnd.generation_id):
            # every join completion runs maybeElectNewJoinedLeader (GroupCoordinator.onCompleteJoin, 2.3+;
            # static members exist from 2.3), which logs at INFO when the leader had not rejoined: the log
            # of this completion shows those lines (`_c_leader_elected`), and none came for this round, so
            # the leader rejoined
            return leader
        if self.group.membership_known and len(self.group.members) == 1:
            return leader  # a join phase completes only with a member that joined
        if rnd.removed_in_join_phase_at is not None and rnd.removed_in_join_phase_at == rnd.join_completed_at:
            # the phase completed at a member's removal: removing a member while PreparingRebalance
            # completes the join only once every remaining member has joined (GroupCoordinator.scala
            # removeMemberAndUpdateGroup -> checkAndComplete -> tryCompleteJoin / hasAllMembersJoined;
            # GroupMetadataManager.removeMemberAndUpdateClassicGroup in 4.0): the leader rejoined
            return leader
        named = co.members_named_in_reason(rnd.reason)
        return leader if named is not None and named[0] == leader else None

    def _election_absence_trusted(self, completion: Event, gen: int | None) -> bool:
        """No "Group leader ... failed to join before the rebalance timeout" line came for generation `gen`
        only means the leader rejoined when the log completing it is one that shows such lines, and the
        same log completed the group's previous generation: another broker's log (the coordinator moved to
        a broker whose log is missing or filtered) or a gap (log rotation, a missing file) may have held
        the line this one lacks. The previous completion must name the same broker too (one file may hold
        several brokers' lines)."""
        log = log_of(completion)
        if log is None or log not in self.election_logs or gen is None:
            return False
        previous = self.last_completion
        return previous is not None and list(previous) == [log, completion.source, gen - 1]

    def _c_leader_elected(self, e: Event) -> None:
        log = log_of(e)
        if log is not None:
            self.election_logs.add(log)
        self.group.apply(e)

    def _c_assignment_received(self, e: Event) -> None:
        self.group.apply(e)
        gen = e.generation_id if e.generation_id is not None else self.group.generation_id
        rnd = self._round_for_generation(gen, e.ts)
        rnd.generation_id = gen
        if e.leader_id:
            rnd.leader_id = e.leader_id
        if e.member_count is not None:
            rnd.member_count = e.member_count
        static = (e.attributes or {}).get("static_member_count")
        if static is not None and static.isdigit():
            rnd.static_member_count = int(static)
        if e.assignment:
            self._check_assignment(e.assignment, e)
            assignment = {m: sorted(tps) for m, tps in e.assignment.items()}
            self.leader_assignment = assignment
            self._learn_topics([tp for tps in assignment.values() for tp in tps])
        self._stabilize(e.ts, "observed")

    def _c_group_stable(self, e: Event) -> None:
        self.group.apply(e)
        if self.round is not None and not self.round.stable:
            if e.generation_id is not None and self.round.generation_id is None:
                self.round.generation_id = e.generation_id
            self._stabilize(e.ts, "observed")

    def _c_member_removed(self, e: Event) -> None:
        if e.reason == RemovalReason.FENCED_STATIC.value and self._name_fencing_member(e):
            self.group.apply(e)
            return
        member = e.member_id or self.group.member_for_instance(e.group_instance_id)
        rnd = self.round
        if (
            rnd is not None
            and self.group.state is co.GroupState.PREPARING_REBALANCE
            and e.reason in (RemovalReason.SESSION_TIMEOUT.value, RemovalReason.LEAVE_GROUP.value)
        ):
            rnd.removed_in_join_phase_at = e.ts
        if member:
            reason = e.reason
            if reason == RemovalReason.LEAVE_GROUP.value:
                if not self._is_member_timed(member):
                    self._stop_member(member, e.ts, "member_left")
            else:
                # it died or hung (a session timeout; no JoinGroup / SyncGroup for the whole rebalance or
                # pending-sync timeout, GroupCoordinator.onCompleteJoin / removePendingSyncMember; a static
                # member fenced by its instance's newer process) at an instant no line shows: the stop is
                # the latest it can be, an estimate (`inferred`)
                at = self._crash_instant(member, e) if reason == RemovalReason.SESSION_TIMEOUT.value else e.ts
                view = self.views.get(member)
                if view is not None and view.signal_unanswered():
                    # an eager stop at its rebalance signal that no JoinGroup followed: its poll loop never
                    # got to onJoinPrepare (a stall, a pause, a death), so that stop is a bound too
                    self.timeline.stops_inferred(member)
                self._stop_member(member, at, "member_failed", "inferred")
            self.views.pop(member, None)
            self.member_timed.discard(member)
            if self._kip415_lost(e, member):
                self.kip415_delay_inferred = True
        self.group.apply(e)

    def _name_fencing_member(self, e: Event) -> bool:
        """A request of a static instance's old member id was refused: the instance's current member id is
        the one the line names (GroupCoordinator.validateCurrentMember, FENCED_INSTANCE_ID). The old process
        is a zombie of a replacement already made: nothing stops here. The new id names a replacement whose
        line did not (3.x), or one no line showed; the old id stood for it until now."""
        current = (e.attributes or {}).get("current_member_id")
        instance = e.group_instance_id
        if not current or not instance or current == e.member_id:
            return False
        if (
            instance not in self.unnamed_replacements
            and self.group.member_for_instance(instance) == e.member_id
        ):
            self.unnamed_replacements[instance] = e.member_id  # replaced where no line of the input shows it
        if instance in self.unnamed_replacements:
            self._name_replacement(instance, current)
        return True

    def _kip415_lost(self, e: Event, member: str) -> bool:
        """Broker only, a Connect worker group with incremental cooperative rebalancing (KIP-415,
        `sessioned`/`compatible`): a worker that failed or left takes its connectors and tasks with it, and
        the leader postpones their reassignment by scheduled.rebalance.max.delay.ms (5 min by default):
        every round until the delay expires keeps it, and the workers rejoin when it does
        (IncrementalCooperativeAssignor.handleLostAssignments, "Delayed rebalance in progress"). No broker
        line shows the delay (the workers print it: `sync_response.attributes.delay_ms`), so those rounds
        are taken as one episode, inferred. A worker known to have run nothing loses nothing: no delay."""
        protocol = self.protocol_name or self.offered_protocol or self._configured_assignor()
        ran_nothing = self.group.generation_id == 0 or (
            self.assignment_generation is not None and not self.assignment.get(member)
        )
        return (
            protocol in KIP415_PROTOCOLS
            and not ran_nothing
            and not self.views
            and (e.attributes or {}).get("pending") != "true"
            and e.reason
            in (
                RemovalReason.SESSION_TIMEOUT.value,
                RemovalReason.LEAVE_GROUP.value,
                RemovalReason.REBALANCE_TIMEOUT.value,
            )
        )

    def _crash_instant(self, member: str, e: Event) -> int:
        """When a member removed on session expiry stopped consuming: an estimate, never a logged instant.
        The coordinator expires a member `session.timeout.ms` after its deadline was last reset
        (GroupCoordinator.completeAndScheduleNextHeartbeatExpiration; GroupMetadataManager
        rescheduleClassicGroupMemberHeartbeat in 4.0), by its heartbeat, JoinGroup or SyncGroup: expiry -
        session timeout is its last request, and it died within a heartbeat interval of it. Later than the
        crash, so the unavailable and stop-the-world time are lower bounds, when the session timeout is
        unknown (3.x lines print it only for a LeaveGroup; else `ReplaySettings.session_timeout_ms`): the
        stop is then at the removal, the latest it can be; or when the deadline was last reset by a join
        completion (onCompleteJoin / completeClassicGroupJoin reset every member's, also one that died in
        the join phase after its JoinGroup)."""
        timeout = (
            co.int_attribute(e, "session_timeout_ms")
            or self.group.session_timeout_of(member)
            or self._configured_session_timeout(member)
            or self.settings.session_timeout_ms
        )
        return e.ts - timeout if timeout else e.ts

    def _c_static_member_replaced(self, e: Event) -> None:
        """KIP-345 (GroupCoordinator.updateStaticMemberAndRebalance, ClassicGroup.replaceStaticMember): a
        known group.instance.id joined with an unknown member id; the new id takes the old one's place.
        In a Stable group with the same protocol there is no rebalance and the instance keeps its
        assignment. When the old process stopped is in no broker line (it crashed or closed without a
        LeaveGroup, and its session had not expired): without the instance's own log its partitions are
        back at the replacement, and the stop is at an unknown instant (docs/metrics.md)."""
        instance = e.group_instance_id
        old = (e.attributes or {}).get("old_member_id") or self.group.member_for_instance(instance)
        new = e.member_id
        stable = (e.attributes or {}).get("state", self.group.state and self.group.state.value) == "Stable"
        member_timed = self._is_member_timed(new or "", instance)
        owned = sorted(self.timeline.partitions_of(old)) if old else []
        if old:
            self.views.pop(old, None)
            if member_timed:  # its own log placed the stop already; else it died unseen, at the latest here
                self._stop_member(old, e.ts, "member_failed", "inferred")
            elif not stable:  # the new process takes part in the rebalance: its old partitions wait
                for tp in owned:
                    self._stop(tp, old, None, "member_failed", instance, "inferred")
        self.group.apply(e)
        if self.round is not None and not self.round.stable and (new or old):
            self.round.joined.append(new or old)  # the instance's new process joined (old: its stand-in)
        if not new and old and instance:
            # the 3.x line names the old member only; a later line names the new one (_learn_member_ids)
            self.unnamed_replacements[instance] = old
        if not old:
            return
        if stable and old not in self.assignment:
            self._await_replaced_assignment(instance, old, new)
        if new and old in self.assignment:
            self.assignment[new] = self.assignment.pop(old)
            if stable:  # the new id holds the old one's assignment in the same generation
                self._emit_assignment(
                    {new: self.assignment[new]}, self.assignment_generation, e.ts, self.assignment_source
                )
        if stable and not member_timed:
            for tp in owned:
                self.timeline.restart(
                    tp, old, e.ts, new_member=new, instance=instance, generation_id=self.assignment_generation
                )

    def _c_group_empty(self, e: Event) -> None:
        self._flush_all_pending()
        self.group.apply(e)
        for member in sorted(self._owners()):
            self._stop_member(member, e.ts, "member_left")
        rnd = self._round_for_generation(e.generation_id, e.ts)
        rnd.generation_id = e.generation_id if e.generation_id is not None else self.group.generation_id
        rnd.ended_empty = True
        rnd.members, rnd.member_count = [], 0
        rnd.ended_at = e.ts
        self.timeline.group_empty(e.ts)
        self.timeline.round_completed(rnd.generation_id, e.ts)
        self._set_assignment({}, rnd.generation_id, "observed")
        self.unnamed_replacements.clear()
        self.follow_up_due = self.kip415_delay_inferred = False
        self._end_round()
        self._end_episode(e.ts)

    def _c_group_dead(self, e: Event) -> None:
        """The group is removed. 0.9-0.10.0 remove it when its join phase ends with no member
        (GroupCoordinator.onCompleteJoin: "generation N is dead and removed", no generation consumed):
        that ends the open round and its episode at this line; 1.0+ only from Empty (offsets expired)."""
        self._flush_all_pending()
        self.group.apply(e)
        for member in sorted(self._owners()):
            self._stop_member(member, e.ts, "member_left")
        rnd = self.round
        if rnd is not None and not rnd.stable:
            rnd.ended_at = e.ts
            self.timeline.round_completed(rnd.generation_id, e.ts)
        self._end_round(e.ts)
        self.timeline.group_empty(e.ts)
        self._end_episode(e.ts)
        self._set_assignment({}, None, "observed")
        self.views.clear()
        self.member_timed.clear()
        self.aliases.clear()
        self.joining_clients.clear()
        self.claimed_new.clear()
        self.fresh_join_sent.clear()
        self.unnamed_joins.clear()
        self.unanswered_joins.silent_joiners.clear()
        self.unnamed_replacements.clear()
        self.poll_timed_out.clear()
        self.follow_up_due = self.kip415_delay_inferred = False

    def _c_topic_metadata_changed(self, e: Event) -> None:
        for key, value in (e.attributes or {}).items():
            if key.startswith("topic.") and value.isdigit():
                self.topics[key[len("topic.") :]] = int(value)
        self._learned_partitions.clear()  # a count set here may be lower: `_learn_topics` checks again
