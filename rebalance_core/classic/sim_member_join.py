"""The classic simulator's member in a rebalance: the JoinGroup / SyncGroup exchange of a consumer.

Part of `rebalance_core.classic.simulator.ClassicSimulation`, modelled on AbstractCoordinator /
ConsumerCoordinator: requestRejoin; onJoinPrepare revokes everything (eager) or only unsubscribed topics
(cooperative, KIP-429); a MEMBER_ID_REQUIRED answer (KIP-394) makes it rejoin with the given id; the
leader computes the assignment (onLeaderElected / performAssignment; a static leader back without a
rebalance skips it, KIP-814 skipAssignment, keeping the metadata it sees on its return); onJoinComplete
assigns everything (eager) or revokes owned-minus-assigned, assigns assigned-minus-owned and rejoins when
it revoked anything (cooperative); a reset generation makes the partitions lost. A Connect worker's
differences are `rebalance_core.classic.sim_worker`.
"""

from __future__ import annotations

from rebalance_core.assignors import GroupSpec, MemberSubscription
from rebalance_core.classic.connect import WorkerAssignment
from rebalance_core.classic.sim_state import (
    JOINING,
    REBALANCE_IN_PROGRESS,
    REJOINING,
    STABLE_MEMBER,
    SYNCING,
    UNJOINED,
    UNKNOWN_MEMBER_ID,
    GroupMember,
    LeaderAssignment,
    Process,
    sorted_partitions,
)
from rebalance_core.events import REBALANCE_STARTED, REVOKE_REJOIN_REASON, format_ts
from schemas.events import EventType


class MemberJoin:
    """A member's JoinGroup / SyncGroup exchange (AbstractCoordinator / ConsumerCoordinator)."""

    # ------------------------------------------------------------------------ member: rebalance
    def _request_rejoin(self, p: Process, reason: str, *, signal: bool, logged: bool = False) -> None:
        """requestRejoin: log the reason (unless `logged` already); eager members stop consuming at this
        first signal (the poll loop revokes everything before the JoinGroup); the poll loop then prepares
        and rejoins."""
        if p.state != STABLE_MEMBER:
            return
        if not logged:
            # a Connect worker logs its reasons at DEBUG, and "Rebalance started" (onJoinPrepare) at INFO
            shown = REBALANCE_STARTED if self.connect else reason
            self._member_event(p, EventType.JOIN_REQUESTED, reason=shown)
        if signal and not self.cooperative:
            self._truth_stop(p, p.owned, "revoked")
        p.state = REJOINING
        self._on_member(p, self._join_prepare, reason)

    def _join_prepare(self, p: Process, reason: str) -> None:
        """ConsumerCoordinator.onJoinPrepare, then the JoinGroup after the revocation callback."""
        if not p.alive or p.state != REJOINING:
            return
        if self.connect:  # WorkerCoordinator.onJoinPrepare keeps everything "until it's explicitly revoked"
            revoked = set()
        elif self.cooperative:
            revoked = {tp for tp in p.owned if tp.topic not in p.subscription}
        else:
            revoked = set(p.owned)
        if revoked:
            self._member_event(p, EventType.PARTITIONS_REVOKED, partitions=sorted_partitions(revoked))
            self._truth_stop(p, revoked, "revoked")
            p.owned -= revoked
            self._member_later(self.s.revoke_callback_ms, p, self._send_join_if_rejoining, reason)
        else:
            self._send_join(p, reason)

    def _send_join_if_rejoining(self, p: Process, reason: str) -> None:
        if p.state == REJOINING:
            self._send_join(p, reason)

    def _reset_and_rejoin(self, p: Process, reason: str, error: str = UNKNOWN_MEMBER_ID) -> None:
        """A reset generation (error, or our own poll-timeout leave): onJoinPrepare finds no generation
        and calls onPartitionsLost (by default onPartitionsRevoked, so it takes revoke_callback_ms);
        then JoinGroup, with an empty member id after UNKNOWN_MEMBER_ID."""
        if not p.alive or p.state == JOINING:
            return
        callback_ms = 0
        if self.connect:
            if p.owned:  # WorkerCoordinator keeps running its work through a reset: not modelled
                self.unobservable.append(
                    f"{format_ts(self.now)}: Connect worker {p.member_id} was dropped by the group while running "
                    "tasks; it keeps running them (not modelled)"
                )
            self._member_event(p, EventType.JOIN_REQUESTED, reason=REBALANCE_STARTED)
        elif p.owned:
            self._member_event(p, EventType.PARTITIONS_LOST, partitions=sorted_partitions(p.owned))
            self._truth_stop(p, p.owned, "lost")
            p.owned = set()
            callback_ms = self.s.revoke_callback_ms
        if error == UNKNOWN_MEMBER_ID:
            p.member_id = None
        p.generation, p.state = -1, UNJOINED
        self._stop_heartbeats(p)
        self._member_later(callback_ms, p, self._join_if_unjoined, reason)

    def _join_if_unjoined(self, p: Process, reason: str) -> None:
        if p.state == UNJOINED:
            self._send_join(p, reason)

    def _send_join(self, p: Process, reason: str | None) -> None:
        p.state = JOINING
        p.is_leader = False
        p.joined_subscription = p.subscription
        self._stop_heartbeats(p)
        if self.connect:
            reason = None  # WorkerCoordinator.requestRejoin does not set AbstractCoordinator's rejoinReason
        self._member_event(p, EventType.JOIN_SENT, reason=reason)
        if self.connect:  # the worker's running work, as the leader will read it (ExtendedWorkerState)
            owned, owned_generation = p.worker.metadata(), None
        elif self.cooperative:
            owned, owned_generation = (
                sorted_partitions(p.owned),
                (p.generation if p.generation >= 0 else None),
            )
        else:  # eager StickyAssignor user data: the previous assignment and its generation
            owned, owned_generation = p.last_assignment, p.last_assignment_generation
        self._later(
            self._latency(self.s.join_round_trip_ms, 0),
            self._on_join,
            p,
            self._next_request(p),
            p.member_id,
            p.subscription,
            owned,
            owned_generation,
            p.worker_snapshot,
            reason,
        )

    def _on_join_response(
        self,
        p: Process,
        request: int,
        generation: int,
        member_id: str,
        leader: str,
        members: list | None,
        skip_assignment: bool = False,
    ) -> None:
        if p.state != JOINING or request != p.request:
            return
        p.member_id, p.generation, p.state = member_id, generation, SYNCING
        p.is_leader, p.leader_id = leader == member_id, leader
        self._member_event(
            p,
            EventType.JOIN_RESPONSE,
            generation_id=generation,
            protocol_name=self.s.assignor,
            protocol_type=self.protocol_type,
            leader_id=leader,
        )
        self._start_heartbeats(p)
        if members is not None and skip_assignment:
            self._skip_assignment(p, members)
            self._send_sync(p, None)
        elif members is not None:  # the leader computes the assignment
            self._member_later(self.s.assignment_ms, p, self._lead, generation, members)
        else:
            self._send_sync(p, None)

    def _skip_assignment(self, p: Process, members: list[GroupMember]) -> None:
        """KIP-814, a static leader back in a Stable group (JoinGroup v9 skipAssignment): the coordinator
        keeps the group's assignment; ConsumerCoordinator.onLeaderElected runs no assignor but, after
        updateGroupSubscription (which refreshes the metadata), sets assignmentSnapshot = metadataSnapshot,
        so rejoinNeededOrPending notices partition changes from now on. Changes made while the leader was
        down are in that snapshot already: nobody notices them ("Note that any metadata changes happening
        while the static leader is down won't be noticed", GroupCoordinator.updateStaticMemberAndRebalance)."""
        subscribed = sorted({topic for m in members for topic in m.subscription})
        p.metadata_snapshot = {topic: self.topics.get(topic, 0) for topic in subscribed}

    def _on_member_id_required(self, p: Process, request: int, member_id: str) -> None:
        """AbstractCoordinator.JoinGroupResponseHandler, MEMBER_ID_REQUIRED: keep the given member id and
        rejoin at once with it (requestRejoin: "need to re-join with the given member-id: X")."""
        if p.state != JOINING or request != p.request:
            return
        p.member_id = member_id
        reason = f"need to re-join with the given member-id: {member_id}"
        if not self.connect:  # WorkerCoordinator.requestRejoin logs it at DEBUG
            self._member_event(p, EventType.JOIN_REQUESTED, reason=reason)
        self._send_join(p, reason)

    def _on_join_error(self, p: Process, request: int, error: str) -> None:
        if p.state == JOINING and request == p.request:
            p.state = UNJOINED
            self._reset_and_rejoin(p, f"encountered {error} from JOIN_GROUP response", error)

    def _lead(self, p: Process, generation: int, members: list[GroupMember]) -> None:
        """ConsumerCoordinator.onLeaderElected / performAssignment (Connect: WorkerCoordinator's)."""
        if p.state != SYNCING or p.generation != generation:
            return
        if self.connect:
            self._lead_workers(p, generation, members)
            return
        subscribed = sorted({topic for m in members for topic in m.subscription})
        p.metadata_snapshot = {topic: self.topics.get(topic, 0) for topic in subscribed}
        spec = GroupSpec(
            topics={topic: self.topics[topic] for topic in subscribed if topic in self.topics},
            members=tuple(
                MemberSubscription(
                    member_id=m.member_id,
                    subscription=m.subscription,
                    group_instance_id=m.instance_id,
                    owned=m.owned,
                    generation=m.owned_generation,
                )
                for m in members
            ),
        )
        assignment = self.assignor.assign(spec)
        full = {m.member_id: tuple(sorted(assignment.get(m.member_id, ()))) for m in members}
        self._member_event(p, EventType.ASSIGNMENT_COMPUTED, generation_id=generation, assignment=full)
        self._send_sync(p, LeaderAssignment(full))

    def _send_sync(self, p: Process, assignment: LeaderAssignment | None) -> None:
        self._later(
            self._latency(self.s.sync_round_trip_ms, 0),
            self._on_sync,
            p,
            self._next_request(p),
            p.member_id,
            p.generation,
            assignment,
        )

    def _on_sync_error(self, p: Process, request: int, error: str) -> None:
        if p.state != SYNCING or request != p.request:
            return
        if error == REBALANCE_IN_PROGRESS:
            p.state = STABLE_MEMBER  # still a member of the group: rejoin without losing anything
            self._request_rejoin(
                p, "rebalance failed due to REBALANCE_IN_PROGRESS from SYNC_GROUP", signal=False
            )
        else:
            p.state = UNJOINED
            self._reset_and_rejoin(p, f"encountered {error} from SYNC_GROUP response", error)

    def _on_sync_response(
        self,
        p: Process,
        request: int,
        generation: int,
        partitions: tuple,
        worker_assignment: WorkerAssignment | None,
    ) -> None:
        """onJoinComplete: eager assigns everything; cooperative revokes owned - assigned first, then
        assigns assigned - owned, and rejoins if it revoked anything (KIP-429)."""
        if p.state != SYNCING or request != p.request or p.generation != generation:
            return
        if self.connect:
            self._worker_synced(p, generation, worker_assignment)
            return
        self._member_event(p, EventType.SYNC_RESPONSE, generation_id=generation, partitions=partitions)
        p.state = STABLE_MEMBER
        p.last_assignment, p.last_assignment_generation = partitions, generation
        assigned = set(partitions)
        revoked = p.owned - assigned if self.cooperative else set()
        if revoked:
            self._member_event(p, EventType.PARTITIONS_REVOKED, partitions=sorted_partitions(revoked))
            self._truth_stop(p, revoked, "revoked")
            self.truth.follow_up = True  # it rejoins at once: the next round is this episode's (KIP-429)
            p.owned -= revoked
            self._member_later(self.s.revoke_callback_ms, p, self._assigned, generation, assigned, True)
        else:
            self._assigned(p, generation, assigned, False)

    def _assigned(self, p: Process, generation: int, assigned: set, revoked_any: bool) -> None:
        if p.generation != generation:
            return
        added = assigned - p.owned
        if revoked_any and p.state == STABLE_MEMBER:
            # ConsumerCoordinator.onJoinComplete calls requestRejoin ("Request joining group due to: need
            # to revoke partitions ...") right after onPartitionsRevoked, before onPartitionsAssigned; the
            # JoinGroup follows at the next poll (_after_assignment)
            self._member_event(p, EventType.JOIN_REQUESTED, reason=REVOKE_REJOIN_REASON)
        self._member_event(
            p,
            EventType.PARTITIONS_ASSIGNED,
            partitions=sorted_partitions(assigned if not self.cooperative else added),
        )
        p.owned |= added
        self._idle_holders_lose(p, added)
        self.truth.start(p.member_id, p.instance_id, added, self.now, generation)
        # the poll loop's next iteration (ConsumerCoordinator.rejoinNeededOrPending)
        self._member_later(0, p, self._after_assignment, generation, revoked_any)

    def _after_assignment(self, p: Process, generation: int, revoked_any: bool) -> None:
        if p.state != STABLE_MEMBER or p.generation != generation:
            return
        if revoked_any:
            self._request_rejoin(p, REVOKE_REJOIN_REASON, signal=False, logged=True)
        elif p.subscription != p.joined_subscription:
            self._request_rejoin(p, "subscription changed", signal=True)
        elif p.is_leader and self._metadata_changed(p):
            self._request_rejoin(p, "cached metadata has changed", signal=True)
        elif p.slow_poll_ms is not None:
            duration, p.slow_poll_ms = p.slow_poll_ms, None
            self._slow_poll(p, duration)
