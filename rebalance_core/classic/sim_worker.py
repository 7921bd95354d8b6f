"""The classic simulator's Kafka Connect workers (settings.assignor `sessioned` / `compatible`).

A Connect worker group runs the same coordinator (rebalance_core.classic.sim_coordinator); the workers
(WorkerCoordinator / DistributedHerder) and the leader's IncrementalCooperativeAssignor with KIP-415's
scheduled.rebalance.max.delay.ms are `rebalance_core.classic.connect`. This part of
`rebalance_core.classic.simulator.ClassicSimulation` is where a worker differs from a consumer in the
join: the leader runs its own assignor (WorkerCoordinator.performAssignment), and a worker applies its
assignment (WorkerCoordinator.onJoinComplete, DistributedHerder.onAssigned / handleRebalanceCompleted):
it stops what is revoked, starts what is added, and rejoins after a revocation or when the delay expires.
"""

from __future__ import annotations

from rebalance_core.assignors.protocols import CONNECT_PROTOCOLS
from rebalance_core.classic.connect import WorkerAssignment
from rebalance_core.classic.sim_state import (
    STABLE_MEMBER,
    GroupMember,
    LeaderAssignment,
    Process,
    sorted_partitions,
)
from schemas.events import EventType


class ConnectWorkerSide:
    """A Connect worker's side of the join (WorkerCoordinator, DistributedHerder)."""

    def _lead_workers(self, p: Process, generation: int, members: list[GroupMember]) -> None:
        """IncrementalCooperativeAssignor.performAssignment, run by this worker's own assignor (its memory
        of the previous assignment and of the delay). Connect logs the result at DEBUG only: no
        assignment_computed."""
        result = p.worker.leader_assignor().assign(
            self.now,
            self.topics,
            [(m.member_id, *m.owned) for m in members],
            p.worker.last_completed_generation,
            generation,
        )
        self._send_sync(p, LeaderAssignment(result.running, result.delay_ms, result.workers))

    # ----------------------------------------------------------------- member: a Connect worker
    def _worker_synced(self, p: Process, generation: int, assignment: WorkerAssignment) -> None:
        """WorkerCoordinator.onJoinComplete: the worker stops what is revoked (onRevoked, "Finished
        stopping tasks in preparation for rebalance"), then DistributedHerder.onAssigned logs "Joined group
        at generation N ... got assignment: Assignment{...} with rebalance delay: D" and starts the new
        work. The events are the parser's reading of those lines: the sync_response carries the
        Assignment (attributes), partitions_revoked / partitions_assigned the tasks stopped / started."""
        self._member_event(
            p,
            EventType.SYNC_RESPONSE,
            generation_id=generation,
            leader_id=p.leader_id,
            attributes={
                "protocol_version": CONNECT_PROTOCOLS[self.s.assignor],
                "delay_ms": assignment.delay_ms,
                "assigned_connectors": ",".join(assignment.connectors),
                "revoked_connectors": ",".join(assignment.revoked_connectors),
                "added": ", ".join(str(t) for t in assignment.tasks),
                "revoked": ", ".join(str(t) for t in assignment.revoked_tasks),
            },
        )
        p.state = STABLE_MEMBER
        # WorkerCoordinator.onJoinComplete: the assignment snapshot its next JoinGroup carries
        p.worker_snapshot = (
            p.leader_id,
            assignment.revoked_connectors,
            assignment.revoked_tasks,
            assignment.delay_ms,
        )
        if assignment.revokes:
            self.truth.follow_up = True  # it rejoins once its work is started (same episode, KIP-415)
            self._member_later(self.s.revoke_callback_ms, p, self._worker_joined, generation, assignment)
        else:
            self._worker_joined(p, generation, assignment)

    def _worker_joined(self, p: Process, generation: int, assignment: WorkerAssignment) -> None:
        """The "Joined group" instant: revoked tasks are stopped, the new ones start; then
        DistributedHerder.handleRebalanceCompleted rejoins at once after a revocation, and schedules a
        rejoin when the delay expires (scheduledRebalance = now + delay, replaced by every assignment)."""
        if p.generation != generation:
            return
        revoked = set(assignment.revoked_tasks) & p.owned
        if revoked:
            self._member_event(p, EventType.PARTITIONS_REVOKED, partitions=sorted_partitions(revoked))
            self._truth_stop(p, revoked, "revoked")
            p.owned -= revoked
        added = set(assignment.tasks) - p.owned
        if added:
            self._member_event(p, EventType.PARTITIONS_ASSIGNED, partitions=sorted_partitions(added))
            p.owned |= added
            self.truth.start(p.member_id, p.instance_id, added, self.now, generation)
        p.worker.apply(assignment, generation)
        self.queue.cancel(p.worker.scheduled_rejoin)
        p.worker.scheduled_rejoin = None
        if assignment.delay_ms:
            p.worker.scheduled_rejoin = self._member_later(
                assignment.delay_ms, p, self._worker_delay_expired, poll_loop=False
            )
        if assignment.revokes:
            self._member_later(0, p, self._worker_rejoin_after_revocation)

    def _worker_rejoin_after_revocation(self, p: Process) -> None:
        self._request_rejoin(p, "revoked connectors or tasks", signal=False)

    def _worker_delay_expired(self, p: Process) -> None:
        """DistributedHerder: "Requesting rebalance because scheduled rebalance timeout has been reached"."""
        p.worker.scheduled_rejoin = None
        self._request_rejoin(p, "scheduled rebalance timeout has been reached", signal=False)
