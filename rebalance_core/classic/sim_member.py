"""The classic simulator's consumer process: its poll loop, heartbeat thread and life cycle.

Part of `rebalance_core.classic.simulator.ClassicSimulation`, modelled on the client (KafkaConsumer,
AbstractCoordinator and its HeartbeatThread): a member-side step runs unless the process is dead, frozen
by a GC pause (it runs at wake-up) or, for a poll-loop step, away in a slow poll (it runs when the poll
loop is back); the heartbeat thread learns of a rebalance at its next heartbeat; close() revokes and
sends LeaveGroup (a static member sends none and stays until its session times out); a poll loop stuck
past max.poll.interval.ms makes the heartbeat thread leave the group; the leader rejoins when the topic
metadata its assignment used has changed. The JoinGroup / SyncGroup exchange is
`rebalance_core.classic.sim_member_join`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from rebalance_core.classic.connect import WorkerState
from rebalance_core.classic.sim_state import (
    HEARTBEATING,
    ILLEGAL_GENERATION,
    JOINING,
    REBALANCE_IN_PROGRESS,
    REJOINING,
    STABLE_MEMBER,
    SYNCING,
    UNJOINED,
    UNKNOWN_MEMBER_ID,
    Process,
    sorted_partitions,
)
from rebalance_core.events import REBALANCE_STARTED, format_ts
from rebalance_core.timeline import STALLED_FOR_GOOD
from schemas.events import EventType

# KafkaConsumer.DEFAULT_REASON: enforceRebalance() without a reason (3.2+)
ENFORCED_REBALANCE_REASON = "rebalance enforced by user"


class MemberSide:
    """A consumer process (KafkaConsumer, AbstractCoordinator's poll loop and heartbeat thread)."""

    # ------------------------------------------------------------------------- member: plumbing
    def _on_member(self, p: Process, fn: Callable, *args: Any, poll_loop: bool = True) -> None:
        """Run a member-side step now, unless the process is dead (dropped), frozen by a GC pause (run
        at wake-up) or, for a poll-loop step, away in a slow poll (run when the poll loop is back)."""
        if not p.alive:
            return
        if p.frozen_until is not None:
            p.frozen_queue.append((fn, args, poll_loop))
        elif poll_loop and p.busy_until is not None:
            p.busy_queue.append((fn, args))
        else:
            fn(p, *args)

    def _member_later(self, delay: int, p: Process, fn: Callable, *args: Any, poll_loop: bool = True) -> int:
        """A member-side step `delay` ms from now (see _on_member)."""
        return self._later(delay, self._member_step, p, fn, args, poll_loop)

    def _member_step(self, p: Process, fn: Callable, args: tuple, poll_loop: bool) -> None:
        self._on_member(p, fn, *args, poll_loop=poll_loop)

    def _deliver(self, p: Process, delay: int, fn: Callable, *args: Any) -> None:
        """A coordinator response reaching the member `delay` ms from now."""
        self._member_later(delay, p, fn, *args)

    def _start_heartbeats(self, p: Process) -> None:
        self.queue.cancel(p.heartbeat_token)
        p.heartbeat_token = self._schedule_heartbeat(p)

    def _schedule_heartbeat(self, p: Process) -> int:
        """The next heartbeat, heartbeat.interval.ms from now (Heartbeat.sentHeartbeat / resetTimeouts),
        unless the timeline says the member's timer drifted to an instant less than two intervals away
        (a `heartbeat` action): then at that instant."""
        interval = self.s.heartbeat_interval_ms
        pinned = self.heartbeat_instants.get(p.name)
        while pinned and pinned[0] <= self.now:
            pinned.popleft()
        if pinned and pinned[0] < self.now + 2 * interval:
            return self.queue.push(pinned.popleft(), self._heartbeat, p, essential=False)
        return self._later(interval, self._heartbeat, p, essential=False)

    def _stop_heartbeats(self, p: Process) -> None:
        self.queue.cancel(p.heartbeat_token)
        p.heartbeat_token = None

    # ----------------------------------------------------------------------- member: life cycle
    def _restart_process(self, name: str, instance_id: str | None, topics: tuple[str, ...]) -> None:
        self.restarting.discard(name)
        self._start_process(name, instance_id, topics)

    def _start_process(self, name: str, instance_id: str | None, topics: tuple[str, ...]) -> None:
        p = Process(name=name, instance_id=instance_id, subscription=tuple(topics))
        self.processes[name] = p
        if self.connect:
            self._log_worker_config(p)
            p.worker = WorkerState(self.s.max_delay_ms)
            # WorkerCoordinator.onJoinPrepare logs "Rebalance started" before the first JoinGroup too
            self._member_event(p, EventType.JOIN_REQUESTED, reason=REBALANCE_STARTED)
        else:
            self._log_config(p)
        self._send_join(p, None)

    def _log_config(self, p: Process) -> None:
        """KafkaConsumer's constructor logs its whole config at INFO ("ConsumerConfig values:",
        AbstractConfig.logAll): the settings its membership runs with, session.timeout.ms among them (what
        dates a silent failure: the coordinator's removal minus it). Attributes as the parser reads them
        (`kafka_logs.extractors.client_config`)."""
        cooperative = self.cooperative
        self._member_event(
            p,
            EventType.CLIENT_CONFIG,
            protocol_type="consumer",
            protocol_name=self.s.assignor,
            attributes={
                "config_class": "ConsumerConfig",
                "session_timeout_ms": str(self.s.session_timeout_ms),
                "heartbeat_interval_ms": str(self.s.heartbeat_interval_ms),
                "max_poll_interval_ms": str(self.s.max_poll_interval_ms),
                "rebalance_timeout_ms": str(self.s.max_poll_interval_ms),
                "assignors": self.s.assignor,
                "rebalance_protocol": "cooperative" if cooperative else "eager",
            },
        )

    def _log_worker_config(self, p: Process) -> None:
        """A Connect worker logs its DistributedConfig at start (ConnectDistributed builds it,
        AbstractConfig.logAll: "DistributedConfig values:"): the group settings of WorkerCoordinator
        (session.timeout.ms, heartbeat.interval.ms, rebalance.timeout.ms) and of its assignor
        (connect.protocol; scheduled.rebalance.max.delay.ms, IncrementalCooperativeAssignor's KIP-415 delay).
        The simulator's worker rebalance timeout is `max_poll_interval_ms` (SimulationSettings)."""
        self._member_event(
            p,
            EventType.CLIENT_CONFIG,
            protocol_name=self.s.assignor,
            attributes={
                "config_class": "DistributedConfig",
                "session_timeout_ms": str(self.s.session_timeout_ms),
                "heartbeat_interval_ms": str(self.s.heartbeat_interval_ms),
                "rebalance_timeout_ms": str(self.s.max_poll_interval_ms),
                "scheduled_rebalance_max_delay_ms": str(self.s.max_delay_ms),
                "connect_protocol": self.s.assignor,
            },
        )

    def _close(self, p: Process) -> None:
        """KafkaConsumer.close() (AbstractCoordinator.close): onLeavePrepare gives up everything, then
        maybeLeaveGroup sends LeaveGroup for a dynamic member only. A static member never sends one
        (KIP-345, "Starting from 2.3, only dynamic members will send LeaveGroupRequest"): it stays in
        the group until its session times out, however the close was meant (a scale-down or a restart).
        Checked in Kafka's source: every release with group.instance.id (2.3.0 ... 3.9 trunk) has
        `isDynamicMember() && ...` in maybeLeaveGroup; `internal.leave.group.on.close` (Streams) only
        skips the whole step; a static member leaving for good needs KIP-1092's
        `close(CloseOptions.groupMembershipOperation(LEAVE_GROUP))` (4.1, opt-in; DEFAULT keeps a static
        member in the group) or an admin removeMembersFromConsumerGroup, neither modelled here."""
        reason = "the consumer is being closed"
        if self.connect:
            # DistributedHerder.halt stops the worker's connectors and tasks, then WorkerGroupMember.stop
            # closes the coordinator: no rebalance callback is logged, the LeaveGroup says it all
            self._truth_stop(p, p.owned, "member_left")
        elif p.owned:
            # ConsumerCoordinator.onLeavePrepare (2.6+): without a generation, or in the middle of a
            # rebalance (rebalanceInProgress: JoinGroup or SyncGroup in flight), the partitions may already
            # be someone else's: onPartitionsLost, not onPartitionsRevoked
            lost = p.generation < 0 or p.member_id is None or p.state in (JOINING, SYNCING)
            kind, cause = (
                (EventType.PARTITIONS_LOST, "lost") if lost else (EventType.PARTITIONS_REVOKED, "revoked")
            )
            self._member_event(p, kind, partitions=sorted_partitions(p.owned))
            self._truth_stop(p, p.owned, cause)
        if p.member_id is not None and p.state != UNJOINED and p.instance_id is None:
            self._member_event(p, EventType.LEAVE_SENT, reason=reason)
            self.queue.push(
                self.now + self._latency(self.s.join_round_trip_ms, 0), self._on_leave, p.member_id, reason
            )
        else:
            self._stopped_heartbeating(p)
        self._end_process(p)

    def _truth_stop(self, p: Process, tps, cause: str, source: str | None = None) -> None:
        if p.member_id is None:
            return
        if p.idle_since is not None:
            self._idle_stop(p, tps, cause)
        else:
            self.truth.stop(p.member_id, p.instance_id, tps, self.now, cause, source)

    def _idle_stop(self, p: Process, tps, cause: str) -> None:
        """`p` gives up `tps` without having consumed since `p.idle_since`: frozen by a GC pause (the whole
        JVM stops: no fetch, no poll, no heartbeat) or its poll loop stalled for good (records reach the
        application only through poll(); the heartbeat thread alone keeps the session, KIP-62). It stopped
        consuming them then, not when the group takes them away (the heartbeat thread's poll-timeout leave,
        AbstractCoordinator.HeartbeatThread / Heartbeat.pollTimeoutExpired; its removal; another member
        starting them). No line shows that instant: the poll-timeout line only says the last poll() was at
        least max.poll.interval.ms earlier, so the stop is `inferred` and unobservable."""
        held = set(tps) & self.truth.partitions_of(p.member_id)
        if not held:
            return
        self.truth.stop(p.member_id, p.instance_id, held, p.idle_since, cause, source="inferred")
        self.unobservable.append(
            f"{format_ts(self.now)}: member {p.member_id} gave up {len(held)} partition(s) ({cause}) it stopped "
            f"consuming at {format_ts(p.idle_since)}, when it froze or its poll loop stalled"
        )

    def _idle_holders_lose(self, p: Process, tps) -> None:
        """`p` starts `tps`: a holder that is frozen or stalled (a static member the join phase kept without
        its rejoin, KIP-345, never revoked them) stopped consuming them when it went idle (`_idle_stop`)."""
        for q in self.processes.values():
            if q is not p and q.idle_since is not None and q.member_id is not None:
                self._idle_stop(q, tps, "lost")

    def _die(self, p: Process) -> None:
        """Killed right after a heartbeat: no LeaveGroup; the coordinator's session timer runs out."""
        self._stopped_heartbeating(p)
        self._end_process(p)

    def _end_process(self, p: Process) -> None:
        p.alive = False
        p.owned = set()
        self._stop_heartbeats(p)

    def _stopped_heartbeating(self, p: Process) -> None:
        """The process sent its last heartbeat now (crash, freeze, close without leave, poll timeout
        of a static member): from here the coordinator's session timer runs."""
        p.failed_at = self.now
        member = self.members.get(p.member_id) if p.member_id else None
        if member is not None and member.process is p:
            if p.heartbeating:
                member.last_seen = self.now
            self._arm_session_check(member)

    def _freeze(self, p: Process, duration_ms: int) -> None:
        """A GC pause: nothing of the process runs, so it consumes nothing from now (`idle_since`)."""
        self._stopped_heartbeating(p)
        if p.idle_since is None:
            p.idle_since = self.now
        self._stop_heartbeats(p)
        p.frozen_until = self.now + duration_ms
        self._later(duration_ms, self._thaw, p, duration_ms)

    def _thaw(self, p: Process, duration_ms: int) -> None:
        if not p.alive:
            return
        p.frozen_until, p.failed_at = None, None
        queued, p.frozen_queue = p.frozen_queue, []
        if duration_ms > self.s.session_timeout_ms and p.member_id is not None and p.state in HEARTBEATING:
            self._session_timed_out(p)
        polled_out = (
            duration_ms > self.s.max_poll_interval_ms and p.member_id is not None and p.state in HEARTBEATING
        )
        if polled_out:
            self._poll_timeout(p)  # the heartbeat thread wakes up to an expired poll timer: gone unconsumed
        if not p.stalled:  # it runs again: what it gives up from here, it gives up at its own step
            p.idle_since = None
        if not polled_out and p.heartbeating:
            self._heartbeat(p)
        for fn, args, poll_loop in queued:  # each its own step, in order (see run())
            self._member_later(0, p, fn, *args, poll_loop=poll_loop)

    def _session_timed_out(self, p: Process) -> None:
        """The heartbeat thread wakes from a GC pause longer than session.timeout.ms: no heartbeat response
        within the session, so it takes the coordinator for unhealthy before anything else
        (AbstractCoordinator.HeartbeatThread.run: `heartbeat.sessionTimeoutExpired` ->
        markCoordinatorUnknown("session timed out without receiving a heartbeat response"), INFO "Group
        coordinator X is unavailable or invalid due to cause: ... Rediscovery will be attempted." from 2.7;
        checked before the poll timeout), then finds it again (lookupCoordinator ->
        FindCoordinatorResponseHandler: "Discovered group coordinator X"). The coordinator has not moved."""
        self._member_event(
            p,
            EventType.COORDINATOR_UNAVAILABLE,
            member_id=None,
            attributes={"cause": "session timed out without receiving a heartbeat response"},
        )
        self._member_event(p, EventType.COORDINATOR_DISCOVERED, member_id=None)

    def _slow_poll(self, p: Process, duration_ms: int) -> None:
        """The application spends `duration_ms` between two polls (STALLED_FOR_GOOD: it never polls
        again, timeline `stall`). Only a member with an assignment processes records; one in the middle
        of a rebalance starts its slow batch once stable. Meanwhile the heartbeat thread runs: a
        rebalance it learns of waits for the poll loop (the member does not rejoin, and the coordinator
        removes it when the join phase's rebalance timeout expires: GroupCoordinator.onCompleteJoin),
        and beyond max.poll.interval.ms the heartbeat thread leaves (AbstractCoordinator.HeartbeatThread,
        pollTimeoutExpired). A slow poll processes the records of its last poll() until it gives its
        partitions up; a stall processes nothing from its start (`idle_since`, `_idle_stop`)."""
        if p.state != STABLE_MEMBER or p.busy_until is not None:
            p.slow_poll_ms = duration_ms
            return
        p.busy_until = self.now + duration_ms
        if duration_ms == STALLED_FOR_GOOD:  # a hung application thread consumes nothing from here
            p.stalled = True
            if p.idle_since is None:
                p.idle_since = self.now
        if duration_ms > self.s.max_poll_interval_ms:
            self._member_later(self.s.max_poll_interval_ms, p, self._poll_timeout, poll_loop=False)
        if duration_ms != STALLED_FOR_GOOD:
            self._member_later(duration_ms, p, self._poll_returns, poll_loop=False)

    def _poll_returns(self, p: Process) -> None:
        p.busy_until = None
        queued, p.busy_queue = p.busy_queue, []
        for fn, args in queued:  # each its own step, in order (see run())
            self._member_later(0, p, fn, *args)

    def _poll_timeout(self, p: Process) -> None:
        """AbstractCoordinator heartbeat thread: "consumer poll timeout has expired": a dynamic member
        sends LeaveGroup (without revoking: callbacks run only in poll); its generation is reset, so the
        next poll finds its partitions lost and rejoins."""
        if p.member_id is None or p.state not in HEARTBEATING:
            return
        self._member_event(p, EventType.POLL_TIMEOUT_EXPIRED, reason="consumer poll timeout has expired")
        if p.state == REJOINING:
            # an eager stop at its rebalance signal that no JoinGroup followed (`_request_rejoin`): the lines
            # cannot tell a slow batch from a stall there, so a replay's stop is an estimate, and the truth's
            self.truth.timeline.stops_inferred(p.member_id)
        # a slow batch stopped here, a stall or a GC pause earlier (`_idle_stop`); the line cannot say which,
        # so a replay's stop here is an estimate (`inferred`), and the truth's row says so too
        self._truth_stop(p, p.owned, "member_left", source="inferred")
        if p.instance_id is None:
            self._member_event(p, EventType.LEAVE_SENT, reason="consumer poll timeout has expired")
            self.queue.push(
                self.now + self._latency(self.s.join_round_trip_ms, 0),
                self._on_leave,
                p.member_id,
                "consumer poll timeout has expired",
            )
        else:
            self._stopped_heartbeating(p)
        self._stop_heartbeats(p)
        p.generation, p.state = -1, UNJOINED
        # the poll loop finds the generation reset (next step; after a slow poll, when it returns)
        self._member_later(0, p, self._reset_and_rejoin, "consumer poll timeout has expired")

    def _enforce_rebalance(self, p: Process) -> None:
        """KafkaConsumer.enforceRebalance(): requestRejoin with the default reason (3.2+), the poll loop
        rejoins (an eager member revokes first). During a rebalance the member rejoins anyway: nothing
        more happens. Kafka's coordinator rebalances for a leader's JoinGroup in Stable, and for a
        follower's only when its metadata changed (GroupCoordinator.doCurrentMemberJoinGroup,
        `_joined_with_same_metadata`)."""
        if p.state == STABLE_MEMBER:
            self._request_rejoin(p, ENFORCED_REBALANCE_REASON, signal=True)

    def _change_subscription(self, p: Process, topics: tuple[str, ...]) -> None:
        if set(topics) == set(p.subscription):
            return  # SubscriptionState.subscribe: an unchanged subscription needs no rejoin
        p.subscription = tuple(topics)
        if p.state == STABLE_MEMBER:
            self._request_rejoin(p, "subscription changed", signal=True)
        # otherwise the rejoin happens when the current rebalance completes (joinedSubscription check)

    def _check_metadata(self, p: Process) -> None:
        if p.is_leader and p.state == STABLE_MEMBER and self._metadata_changed(p):
            self._request_rejoin(p, "cached metadata has changed", signal=True)

    def _metadata_changed(self, p: Process) -> bool:
        snapshot = p.metadata_snapshot or {}
        return any(self.topics.get(topic, 0) != count for topic, count in snapshot.items())

    # ----------------------------------------------------------------------- member: heartbeats
    def _heartbeat(self, p: Process) -> None:
        p.heartbeat_token = None
        if not p.heartbeating:
            return
        error = self._on_heartbeat(p.member_id, p.generation)
        if error is None:  # the usual case: nothing changed, the next heartbeat follows
            p.heartbeat_token = self._schedule_heartbeat(p)
            return
        if error == REBALANCE_IN_PROGRESS:
            if p.state == STABLE_MEMBER:
                self._member_event(p, EventType.HEARTBEAT_REBALANCING, generation_id=p.generation)
                self._request_rejoin(p, "group is already rebalancing", signal=True)
        elif error in (UNKNOWN_MEMBER_ID, ILLEGAL_GENERATION):
            # resetGenerationOnResponseError: the heartbeat thread stops; the poll loop rejoins
            self._stopped_heartbeating(p)
            p.generation, p.state = -1, UNJOINED
            self._member_later(
                0, p, self._reset_and_rejoin, f"encountered {error} from HEARTBEAT response", error
            )
        if p.heartbeating and p.heartbeat_token is None:
            p.heartbeat_token = self._schedule_heartbeat(p)
