"""The classic simulator's coordinator receiving a JoinGroup (GroupCoordinator.handleJoinGroup).

Part of `rebalance_core.classic.simulator.ClassicSimulation`, modelled on the Scala GroupCoordinator of
2.x/3.x and the Java GroupMetadataManager / ClassicGroup of 4.0: the first member to join an empty group
leads; a known member whose metadata did not change gets the current generation back instead of a
rebalance (doCurrentMemberJoinGroup); a dynamic member's first JoinGroup only reserves its member id
(KIP-394: MEMBER_ID_REQUIRED, a pending member that the join phase waits for and that expires after its
session timeout if it never joins again); static membership (KIP-345): a known group.instance.id
rejoining with an unknown member id replaces the old id, without a rebalance when the group is Stable.
The rest of the coordinator (join phase, SyncGroup, heartbeats, removals) is
`rebalance_core.classic.sim_coordinator`.
"""

from __future__ import annotations

from rebalance_core.classic.sim_state import (
    COMPLETING,
    PREPARING,
    STABLE,
    UNKNOWN_MEMBER_ID,
    GroupMember,
    Process,
    client_reason,
)
from schemas.events import EventType, RemovalReason


class CoordinatorJoin:
    """The coordinator's JoinGroup handling (GroupCoordinator.handleJoinGroup; ClassicGroup)."""

    # --------------------------------------------------------------------------- coordinator side
    def _on_join(
        self, p, request, member_id, subscription, owned, owned_generation, worker_snapshot, reason
    ) -> None:
        """GroupCoordinator.handleJoinGroup."""
        state_before = self.state
        if member_id is None and p.instance_id is not None and p.instance_id in self.static_ids:
            self._replace_static_member(p, request, subscription, owned, owned_generation, reason)
            return
        if member_id is None and p.instance_id is None:
            self._add_pending_member(p, request, subscription, reason)
            return
        new = member_id is None or member_id in self.pending_members
        if not new and member_id not in self.members:
            back = self._latency(self.s.join_round_trip_ms, 1)
            self._deliver(p, back, self._on_join_error, request, UNKNOWN_MEMBER_ID)
            return
        if new:
            if member_id is None:  # a static member (KIP-394 asks dynamic members only for a second join)
                member_id = self._new_member_id(p.name)
            else:  # "Pending dynamic member with id X joins group ... Adding to the group now."
                self.queue.cancel(self.pending_members.pop(member_id))
            member = GroupMember(
                member_id, p.instance_id, p.name, p, subscription, owned, owned_generation, worker_snapshot
            )
            self.members[member_id] = member
            self.member_order.put(member_id)
            if p.instance_id is not None:
                self.static_ids[p.instance_id] = member_id
            if self.leader is None:
                self.leader = member_id
        else:
            member = self.members[member_id]
            if self._joined_with_same_metadata(
                member, subscription, owned, owned_generation, worker_snapshot
            ):
                self._answer_current_generation(p, request, member, reason)
                return
            member.process, member.subscription = p, subscription
            member.owned, member.owned_generation = owned, owned_generation
            member.worker_snapshot = worker_snapshot
        member.awaiting_join = True
        member.request = request
        member.last_seen = self.now
        self._join_received(
            EventType.JOIN_RECEIVED,
            p,
            member_id,
            subscription,
            reason,
            {"state": state_before},
            group_instance_id=p.instance_id,
        )
        if self.state == PREPARING:
            self.new_member_added = self.new_member_added or new
            self._try_complete_join()
        elif new:
            kind = f"group instance id {p.instance_id}" if p.instance_id else "group instance id None"
            self._prepare_rebalance(f"Adding new member {member_id} with {kind}{client_reason(reason)}")
        elif member_id == self.leader:
            self._prepare_rebalance(
                f"Leader {member_id} re-joining group during {state_before}{client_reason(reason)}"
            )
        else:
            self._prepare_rebalance(
                f"Updating metadata for member {member_id} during {state_before}{client_reason(reason)}"
            )

    def _joined_with_same_metadata(
        self, member: GroupMember, subscription, owned, owned_generation, worker_snapshot
    ) -> bool:
        """Whether a known member's JoinGroup changes nothing the group knows, so that the coordinator
        answers with the current generation instead of rebalancing: in CompletingRebalance for any member
        whose metadata matches, in Stable for a follower whose metadata matches (the leader's JoinGroup
        always rebalances: it may have seen a topic metadata change its metadata does not show).
        GroupCoordinator.doCurrentMemberJoinGroup (Scala, 2.x/3.x) and
        GroupMetadataManager.classicGroupJoinExistingMember (Java, 4.0), with MemberMetadata.matches /
        ClassicGroupMember.matches comparing the protocols' metadata bytes: the consumer's subscription
        (ConsumerCoordinator.metadata: topics, owned partitions, generation, the assignor's user data), here
        the subscribed topics, what it owns (cooperative) or its sticky user data (eager), and the
        generation of that; a Connect worker's (WorkerCoordinator.metadata, ExtendedWorkerState: its
        assignment snapshot with leader, revocations and delay, IncrementalCooperativeConnectProtocol
        .serializeMetadata)."""
        if self.state == STABLE and member.member_id == self.leader:
            return False
        if self.state not in (STABLE, COMPLETING):
            return False
        known = (sorted(member.subscription), member.owned, member.owned_generation, member.worker_snapshot)
        return known == (sorted(subscription), owned, owned_generation, worker_snapshot)

    def _answer_current_generation(self, p: Process, request: int, member: GroupMember, reason) -> None:
        """The JoinGroup response of the current generation: no rebalance; the member then sends its
        SyncGroup (Stable: answered with its assignment; CompletingRebalance: parked until the leader's).
        The leader gets the members' metadata again (CompletingRebalance only) and recomputes."""
        self._join_received(
            EventType.JOIN_RECEIVED,
            p,
            member.member_id,
            member.subscription,
            reason,
            {"state": self.state},
            group_instance_id=p.instance_id,
        )
        leader = member.member_id == self.leader
        self._join_response(p, request, member.member_id, list(self.members.values()) if leader else None)

    def _add_pending_member(self, p: Process, request: int, subscription, reason) -> None:
        """KIP-394 (GroupCoordinator.doDynamicNewMemberJoinGroup with requireKnownMemberId, JoinGroup v4+):
        a dynamic member's first JoinGroup only reserves a member id ("Dynamic member with unknown member id
        joins group ... Created a new member id X and request the member to rejoin with this id") and is
        answered MEMBER_ID_REQUIRED. The pending member is no member: it triggers no rebalance and is not
        counted, but a join phase waits for it (hasAllMembersJoined); it expires after its session
        timeout if it never comes back."""
        member_id = self._new_member_id(p.name)
        self.pending_members[member_id] = self._later(
            self.s.session_timeout_ms, self._pending_member_expired, member_id
        )
        self._join_received(
            EventType.JOIN_RECEIVED,
            p,
            member_id,
            subscription,
            reason,
            {"state": self.state, "pending": "true"},
        )
        back = self._latency(self.s.join_round_trip_ms, 1)
        self._deliver(p, back, self._on_member_id_required, request, member_id)

    def _pending_member_expired(self, member_id: str) -> None:
        """ "Pending member X in group G has been removed after session timeout expiration."""
        del self.pending_members[member_id]
        self._remove_pending(member_id, RemovalReason.SESSION_TIMEOUT)

    def _remove_pending(self, member_id: str, reason: RemovalReason) -> None:
        """removePendingMemberAndUpdateGroup: no rebalance; a join phase may now be complete."""
        self._coordinator_event(
            EventType.MEMBER_REMOVED,
            member_id=member_id,
            reason=reason.value,
            attributes={"pending": "true", "session_timeout_ms": self.s.session_timeout_ms},
        )
        self._try_complete_join()

    def _replace_static_member(self, p, request, subscription, owned, owned_generation, reason) -> None:
        """KIP-345 (GroupCoordinator.updateStaticMemberAndRebalance): the instance keeps its place and
        assignment under a new member id; a Stable group does not rebalance."""
        old_id = self.static_ids[p.instance_id]
        old = self.members.pop(old_id)
        self.queue.cancel(old.check_token)
        new_id = self._new_member_id(p.name)
        member = GroupMember(new_id, p.instance_id, p.name, p, subscription, owned, owned_generation)
        member.last_seen = self.now
        member.request = request
        self.members[new_id] = member
        self.member_order.remove(old_id)  # GroupMetadata / ClassicGroup.replaceStaticMember: remove, put
        self.member_order.put(new_id)
        self.static_ids[p.instance_id] = new_id
        if self.leader == old_id:
            self.leader = new_id
        if old_id in self.assignment:
            self.assignment[new_id] = self.assignment.pop(old_id)
        if old_id in self.held:
            self.held[new_id] = self.held.pop(old_id)
        if old_id in self.pending_sync:
            self.pending_sync.discard(old_id)
            self.pending_sync.add(new_id)
        state_before = self.state
        self._join_received(
            EventType.STATIC_MEMBER_REPLACED,
            p,
            new_id,
            subscription,
            reason,
            {"old_member_id": old_id, "state": state_before},
            group_instance_id=p.instance_id,
        )
        self._member_failed(old, "replaced by a restarted static member")
        if self.state == STABLE:
            self.truth.assignment_rows(
                self.generation, new_id, p.instance_id, self.assignment.get(new_id, ()), self.now
            )
            # KIP-814: the returning leader gets the members' metadata and skipAssignment
            leader = new_id == self.leader
            self._join_response(p, request, new_id, list(self.members.values()) if leader else None, leader)
            self._arm_session_check(member)  # completeAndScheduleNextHeartbeatExpiration
        elif self.state == COMPLETING:
            member.awaiting_join = True
            self._prepare_rebalance(
                f"Updating metadata for static member {new_id} with instance id {p.instance_id}"
                f"{client_reason(reason)}"
            )
        else:  # PreparingRebalance: it takes part in the join phase
            member.awaiting_join = True
            self._try_complete_join()

    def _join_received(
        self, event_type: EventType, p: Process, member_id, subscription, reason, attributes, **values
    ) -> None:
        """The coordinator's line for a JoinGroup it received (join_received, static_member_replaced):
        `attributes` first, then the member's session and rebalance timeouts."""
        self._coordinator_event(
            event_type,
            member_id=member_id,
            client_id=p.name,
            subscription=subscription,
            protocol_name=self.s.assignor,
            protocol_type=self.protocol_type,
            reason=reason,
            attributes={
                **attributes,
                "session_timeout_ms": self.s.session_timeout_ms,
                "rebalance_timeout_ms": self.s.max_poll_interval_ms,
            },
            **values,
        )

    def _join_response(
        self, p: Process, request: int, member_id: str, members: list | None, skip_assignment: bool = False
    ) -> None:
        """The JoinGroup response of the current generation (`members`: their metadata, for the leader)."""
        self._deliver(
            p,
            self._latency(self.s.join_round_trip_ms, 1),
            self._on_join_response,
            request,
            self.generation,
            member_id,
            self.leader,
            members,
            skip_assignment,
        )
