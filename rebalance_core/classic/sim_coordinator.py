"""The classic simulator's group coordinator: join phase, SyncGroup, heartbeats, leaving and expiry.

Part of `rebalance_core.classic.simulator.ClassicSimulation`, modelled on the Scala GroupCoordinator /
GroupMetadata of 2.x/3.x and the Java GroupMetadataManager / ClassicGroup of 4.0: states Empty,
PreparingRebalance, CompletingRebalance, Stable; the leader is kept while it rejoins; a leader that
leaves or does not rejoin is replaced by the first member in the iteration order of the coordinator's
members HashMap (`coordinator_member_map`, rebalance_core.classic.member_order), not the join order; the
join phase completes when every member has rejoined or at the rebalance timeout (max.poll.interval.ms),
dropping dynamic members that did not rejoin; an Empty group waits group.initial.rebalance.delay.ms
(InitialDelayedJoin, extended while new members keep arriving, up to the rebalance timeout); session
expiry at last heartbeat + session.timeout.ms, except for members parked in the join or sync phase;
pending-sync expiry. Receiving a JoinGroup is `rebalance_core.classic.sim_join`.
"""

from __future__ import annotations

from rebalance_core.classic.sim_state import (
    COMPLETING,
    EMPTY,
    ILLEGAL_GENERATION,
    PREPARING,
    REBALANCE_IN_PROGRESS,
    REJOINING,
    STABLE,
    UNKNOWN_MEMBER_ID,
    GroupMember,
    LeaderAssignment,
    Process,
    client_reason,
)
from rebalance_core.events import format_ts
from schemas.events import EventType, RemovalReason


class CoordinatorSide:
    """The group coordinator's rebalance, SyncGroup, heartbeat and removal handling (GroupCoordinator)."""

    def _prepare_rebalance(self, reason: str) -> None:
        if self.state == COMPLETING:  # resetAndPropagateAssignmentError(REBALANCE_IN_PROGRESS)
            for member in self.members.values():
                if member.awaiting_sync:
                    member.awaiting_sync = False
                    self._deliver(
                        member.process,
                        self._latency(self.s.sync_round_trip_ms, 1),
                        self._on_sync_error,
                        member.request,
                        REBALANCE_IN_PROGRESS,
                    )
        self.pending_sync.clear()
        self.queue.cancel(self.sync_timer)
        self.queue.cancel(self.join_timer)
        was_empty = self.state == EMPTY
        if self.state == STABLE and self.implied_follow_up != self.truth.follow_up:
            # a broker log shows only the assignment: whether this round follows the last one (KIP-429)
            # depends on members really revoking, which only their own logs show
            self.unobservable_from_coordinator.append(
                f"{format_ts(self.now)}: the members' revocations after generation {self.generation} differ from "
                "what its assignment implies"
            )
        self.state = PREPARING
        self._coordinator_event(EventType.REBALANCE_PREPARED, generation_id=self.generation, reason=reason)
        self.truth.rebalance_prepared(self.now, self.generation, reason)
        rebalance_timeout = self.s.max_poll_interval_ms
        if was_empty:  # InitialDelayedJoin
            delay = min(self.s.group_initial_rebalance_delay_ms, rebalance_timeout)
            self.initial_delay_active = True
            self.initial_last_delay_ms = delay
            self.initial_remaining_ms = max(rebalance_timeout - self.s.group_initial_rebalance_delay_ms, 0)
            self.new_member_added = False
            self.join_timer = self._later(delay, self._initial_delay_expired)
        else:
            self.initial_delay_active = False
            self.join_timer = self._later(rebalance_timeout, self._complete_join)
            self._try_complete_join()

    def _initial_delay_expired(self) -> None:
        self.join_timer = None
        if self.new_member_added and self.initial_remaining_ms != 0:
            self.new_member_added = False
            delay = min(self.s.group_initial_rebalance_delay_ms, self.initial_remaining_ms)
            self.initial_remaining_ms = max(self.initial_remaining_ms - self.initial_last_delay_ms, 0)
            self.initial_last_delay_ms = delay
            self.join_timer = self._later(delay, self._initial_delay_expired)
        else:
            self.initial_delay_active = False
            self._complete_join()

    def _try_complete_join(self) -> None:
        if (
            self.state == PREPARING
            and not self.initial_delay_active
            and not self.pending_members  # hasAllMembersJoined waits for KIP-394 pending members too
            and all(m.awaiting_join for m in self.members.values())
        ):
            self._complete_join()

    def _complete_join(self) -> None:
        """GroupCoordinator.onCompleteJoin."""
        if self.state != PREPARING:
            return
        self.queue.cancel(self.join_timer)
        self.join_timer = None
        for member in [m for m in self.members.values() if not m.awaiting_join and m.instance_id is None]:
            self._remove_member(member, RemovalReason.REBALANCE_TIMEOUT, None)
        joined = [m for m in self.members.values() if m.awaiting_join]
        if self.members and not joined:  # only static members that did not rejoin: wait again
            self.join_timer = self._later(self.s.max_poll_interval_ms, self._complete_join)
            return
        self.generation += 1
        if not self.members:
            self.state = EMPTY
            self.leader = None
            self.assignment = {}
            self._coordinator_event(EventType.GROUP_EMPTY, generation_id=self.generation)
            self.truth.group_empty(self.now, self.generation)
            return
        if self.leader not in self.members or not self.members[self.leader].awaiting_join:
            # maybeElectNewJoinedLeader: the first member in the members map's order that rejoined; a leader
            # still in the group (static, not rejoined) is replaced with an INFO line naming both
            previous = self.leader
            self.leader = self._first_in_member_order([m.member_id for m in joined])
            if previous in self.members and previous != self.leader:
                self._coordinator_event(
                    EventType.LEADER_ELECTED,
                    leader_id=self.leader,
                    attributes={"previous_leader_id": previous},
                )
        self.state = COMPLETING
        self.assignment = {}
        members = list(self.members.values())
        self._coordinator_event(
            EventType.JOIN_COMPLETED,
            generation_id=self.generation,
            leader_id=self.leader,
            members=tuple(m.member_id for m in members),
            member_count=len(members),
            protocol_name=self.s.assignor,
            protocol_type=self.protocol_type,
        )
        self.truth.join_completed(self.now, self.generation, self.leader, [m.member_id for m in members])
        for member in members:
            was_waiting = member.awaiting_join
            member.awaiting_join = False
            member.last_seen = self.now
            self.pending_sync.add(member.member_id)
            if was_waiting:
                metadata = members if member.member_id == self.leader else None
                self._join_response(member.process, member.request, member.member_id, metadata)
            if not member.process.heartbeating:
                self._arm_session_check(member)
        self.sync_timer = self._later(
            self.s.max_poll_interval_ms, self._pending_sync_expired, self.generation
        )

    def _on_sync(self, p: Process, request: int, member_id: str, generation: int, leader_assignment) -> None:
        """GroupCoordinator.handleSyncGroup."""
        member = self.members.get(member_id)
        back = self._latency(self.s.sync_round_trip_ms, 1)
        if member is None or self.state == EMPTY:
            self._deliver(p, back, self._on_sync_error, request, UNKNOWN_MEMBER_ID)
            return
        if generation != self.generation:
            self._deliver(p, back, self._on_sync_error, request, ILLEGAL_GENERATION)
            return
        if self.state == PREPARING:
            self._deliver(p, back, self._on_sync_error, request, REBALANCE_IN_PROGRESS)
            return
        member.last_seen = self.now
        member.request = request
        self.pending_sync.discard(member_id)
        if self.state == STABLE:
            self._send_assignment(member, back)
        else:  # CompletingRebalance: park until the leader's assignment arrives
            member.awaiting_sync = True
            if member_id == self.leader and leader_assignment is not None:
                self._stabilize(leader_assignment)
        if not self.pending_sync:
            self.queue.cancel(self.sync_timer)
            self.sync_timer = None

    def _stabilize(self, leader: LeaderAssignment) -> None:
        self.assignment = {m: tuple(leader.full.get(m, ())) for m in self.members}
        self.assignment_delay_ms = delay_ms = leader.delay_ms
        self.worker_assignments = dict(leader.workers or {})
        self.state = STABLE
        members = list(self.members.values())
        self._coordinator_event(
            EventType.ASSIGNMENT_RECEIVED,
            generation_id=self.generation,
            leader_id=self.leader,
            member_count=len(members),
            assignment=dict(self.assignment),
            attributes={"static_member_count": sum(1 for m in members if m.instance_id)},
        )
        for member in members:
            if self.assignment[member.member_id] and member.member_id not in self.logged_members:
                self.unobservable.append(
                    f"{format_ts(self.now)}: member {member.member_id} is assigned partitions before its own log "
                    "mentions it: a replay times it from the coordinator"
                )
        instances = {m.member_id: m.instance_id for m in members}
        self.truth.stabilized(self.now, self.generation, self.assignment, instances, delay_ms > 0)
        # what a replay of the broker's log alone concludes: a member assigned less than it held (in a
        # topic it still subscribes to) revokes and rejoins (KIP-429)
        self.implied_follow_up = self.cooperative and any(
            tp.topic in m.subscription
            for m in members
            for tp in set(self.held.get(m.member_id, ())) - set(self.assignment[m.member_id])
        )
        self.held = dict(self.assignment)
        back = self._latency(self.s.sync_round_trip_ms, 1)
        for member in members:
            if member.awaiting_sync:
                member.awaiting_sync = False
                member.last_seen = self.now
                self._send_assignment(member, back)
                if not member.process.heartbeating:
                    self._arm_session_check(member)

    def _send_assignment(self, member: GroupMember, delay: int) -> None:
        partitions = self.assignment.get(member.member_id, ())
        self._deliver(
            member.process,
            delay,
            self._on_sync_response,
            member.request,
            self.generation,
            partitions,
            self.worker_assignments.get(member.member_id),
        )

    def _pending_sync_expired(self, generation: int) -> None:
        self.sync_timer = None
        if generation != self.generation or self.state not in (COMPLETING, STABLE) or not self.pending_sync:
            return
        late = [self.members[m] for m in self.members if m in self.pending_sync]
        for member in late:
            self._remove_member(member, RemovalReason.PENDING_SYNC_TIMEOUT, None)
        # GroupCoordinator.removePendingSyncMembers prints the Scala Set of ids: "Removing Set(a, b) on ..."
        ids = ", ".join(m.member_id for m in late)
        self._prepare_rebalance(f"Removing Set({ids}) on pending sync request expiration")

    def _on_heartbeat(self, member_id: str, generation: int) -> str | None:
        """GroupCoordinator.handleHeartbeat (3.x Scala) / GroupMetadataManager.classicGroupHeartbeat (4.x):
        the member and its generation are validated first (validateHeartbeat: UNKNOWN_MEMBER_ID, then
        ILLEGAL_GENERATION, without resetting the session timer); only a valid heartbeat sees the state
        (Empty: UNKNOWN_MEMBER_ID, PreparingRebalance: REBALANCE_IN_PROGRESS) and keeps the member alive."""
        member = self.members.get(member_id)
        if member is None:
            return UNKNOWN_MEMBER_ID
        if generation != self.generation:
            return ILLEGAL_GENERATION
        if self.state == EMPTY:
            return UNKNOWN_MEMBER_ID
        member.last_seen = self.now
        return REBALANCE_IN_PROGRESS if self.state == PREPARING else None

    def _on_leave(self, member_id: str, reason: str) -> None:
        if member_id in self.pending_members:  # "Pending member X is leaving group G."
            self.queue.cancel(self.pending_members.pop(member_id))
            self._remove_pending(member_id, RemovalReason.LEAVE_GROUP)
            return
        member = self.members.get(member_id)
        if member is not None:
            self._remove_member(
                member,
                RemovalReason.LEAVE_GROUP,
                f"removing member {member_id} on LeaveGroup{client_reason(reason)}",
            )

    def _arm_session_check(self, member: GroupMember) -> None:
        self.queue.cancel(member.check_token)
        member.check_token = self.queue.push(
            member.last_seen + self.s.session_timeout_ms, self._session_check, member
        )

    def _session_check(self, member: GroupMember) -> None:
        """onExpireHeartbeat: members parked in the join or sync phase satisfy their heartbeats."""
        member.check_token = None
        if self.members.get(member.member_id) is not member or member.process.heartbeating:
            return
        if member.awaiting_join or member.awaiting_sync:
            return
        if self.now < member.last_seen + self.s.session_timeout_ms:
            self._arm_session_check(member)
            return
        self._remove_member(
            member,
            RemovalReason.SESSION_TIMEOUT,
            f"removing member {member.member_id} on heartbeat expiration",
        )

    def _remove_member(
        self, member: GroupMember, reason: RemovalReason, rebalance_reason: str | None
    ) -> None:
        """removeMemberAndUpdateGroup (rebalance_reason None: removal inside onCompleteJoin)."""
        self.queue.cancel(member.check_token)
        self._coordinator_event(
            EventType.MEMBER_REMOVED,
            member_id=member.member_id,
            group_instance_id=member.instance_id,
            client_id=member.client_id,
            reason=reason.value,
            attributes={"session_timeout_ms": self.s.session_timeout_ms},
        )
        if member.awaiting_join:
            back = self._latency(self.s.join_round_trip_ms, 1)
            self._deliver(member.process, back, self._on_join_error, member.request, UNKNOWN_MEMBER_ID)
        del self.members[member.member_id]
        self.member_order.remove(member.member_id)
        if member.member_id == self.leader:
            # GroupMetadata.remove: `members.keys.headOption`; ClassicGroup.remove: the first key of the
            # members HashMap (not the first to have joined)
            self.leader = self._first_in_member_order(list(self.members)) if self.members else None
        self.held.pop(member.member_id, None)
        if member.instance_id is not None and self.static_ids.get(member.instance_id) == member.member_id:
            del self.static_ids[member.instance_id]
        self.pending_sync.discard(member.member_id)
        if reason != RemovalReason.LEAVE_GROUP:
            self._member_failed(member, f"removed ({reason.value})", reason)
            if not self.members and not member.process.alive:
                # the last member died without a line of its own: only the coordinator logs its removal
                # and the rebalance that empties the group (GroupCoordinator.onExpireHeartbeat ->
                # removeMemberAndUpdateGroup); no member is left to log anything, so members' logs end as
                # they would with a member consuming quietly to the end of the input
                self.unobservable_from_members.append(
                    f"{format_ts(self.now)}: the last member {member.member_id} was removed ({reason.value}) after "
                    "dying silently; no member's log shows that rebalance or its stop-the-world"
                )
        if rebalance_reason is None:
            return
        if self.state in (STABLE, COMPLETING):
            self._prepare_rebalance(rebalance_reason)
        elif self.state == PREPARING:
            self._try_complete_join()

    def _first_in_member_order(self, candidates: list[str]) -> str:
        """The first of `candidates` in the coordinator's members map (`member_order`; the simulator knows
        the map's whole history, so the order is known; join order only where it is not modelled)."""
        if len(candidates) > 1:
            self.leader_by_member_order = True
        first = self.member_order.first(candidates)
        return first if first is not None else candidates[0]

    def _member_failed(self, member: GroupMember, how: str, reason: RemovalReason | None = None) -> None:
        """Ground truth for a member that is gone without telling: whatever it still consumed stopped at
        its last heartbeat, or earlier when it froze or its poll loop stalled (`Process.idle_since`). The
        events show that instant only as session-timeout removal - timeout."""
        p = member.process
        if p.state == REJOINING:  # an eager stop at a signal no JoinGroup followed: a replay's is a bound
            self.truth.timeline.stops_inferred(member.member_id)
        held = self.truth.partitions_of(member.member_id)
        if not held:
            return
        stopped_at = next((t for t in (p.idle_since, p.failed_at) if t is not None), self.now)
        self.truth.stop(member.member_id, member.instance_id, held, stopped_at, "member_failed")
        visible = (
            reason == RemovalReason.SESSION_TIMEOUT and self.now - self.s.session_timeout_ms == stopped_at
        )
        if not visible:
            self.unobservable.append(
                f"{format_ts(self.now)}: member {member.member_id} {how}; it stopped consuming at {format_ts(stopped_at)}"
            )
