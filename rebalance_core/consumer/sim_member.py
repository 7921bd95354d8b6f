"""The member side of the KIP-848 simulator (`simulate._Simulation`): one consumer process's
incarnation and what its `ConsumerMembershipManager` (AbstractMembershipManager) and
`ConsumerHeartbeatRequestManager` do: heartbeats, the coordinator's responses, fencing, the poll timer,
and reconciliation (revoke first, then assign, then acknowledge) with its rebalance callbacks on the
application thread. The run loop, the timeline's actions and the coordinator side stay in `simulate`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from rebalance_core.consumer.coordinator import (
    FENCED_MEMBER_EPOCH,
    UNKNOWN_MEMBER_ID,
    UNRELEASED_INSTANCE_ID,
    HeartbeatResponse,
)
from rebalance_core.consumer.states import ClientState
from rebalance_core.events import TopicPartition
from schemas.events import EventType, Side


@dataclass
class ClientIncarnation:
    """One incarnation of a consumer process (a restart is a new incarnation with a new member id)."""

    name: str
    member_id: str
    instance_id: str | None
    topics: tuple[str, ...]
    state: ClientState = ClientState.UNSUBSCRIBED
    epoch: int = 0
    owned: frozenset[TopicPartition] = frozenset()
    # AbstractMembershipManager.currentAssignment: the partitions of the last completed reconciliation
    # (not those of one in progress), and how many reconciliations completed (its local epoch)
    reconciled: frozenset[TopicPartition] = frozenset()
    reconciled_count: int = 0
    # AbstractMembershipManager.currentTargetAssignment.localEpoch: one more per target assignment it
    # starts reconciling (-1: none yet; transitionToJoining resets it)
    local_epoch: int = -1
    # one more per reconciliation started, never reset: a callback step of one abandoned since (fenced, its
    # poll timer expired) finds another number and does nothing (transitionToFenced drops the reconciliation)
    reconciliation: int = 0
    reported_count: int | None = None  # reconciled_count when `reconciled` was last sent
    alive: bool = True
    frozen_until: int = 0  # gc pause: nothing runs before
    app_busy_until: int = 0  # poll pause: rebalance callbacks wait for the application thread
    poll_deadline: int | None = None  # max.poll.interval.ms expiry during a poll pause
    stalled: bool = False  # the application thread hangs for good (timeline `stall`)
    reconciling: bool = False
    in_flight: bool = False
    request: int = 0  # id of the heartbeat whose response is awaited (answers to older ones, e.g. sent
    # before a leave, are dropped)
    resyncing: bool = False  # just woke from a gc freeze: callbacks wait for a heartbeat response
    resync_after: int = 0  # ... to a heartbeat sent after waking (a request id above this)
    hb_wanted: bool = False  # a heartbeat became due while one was in flight
    hb_token: int = 0  # invalidates scheduled periodic heartbeats
    leaving_epoch: int | None = None
    dies_after_heartbeat: bool = False
    freeze_after_heartbeat: int = 0  # gc pause length to start right after the next heartbeat


class MemberSide:
    """The member-side steps of `simulate._Simulation` (a mixin: the simulation holds the clock, the
    settings, the ownership truth and the coordinator)."""

    def _poll_pause(self, ts: int, client: ClientIncarnation, duration: int) -> None:
        """The application thread is busy: callbacks wait; beyond max.poll.interval.ms the member leaves."""
        client.app_busy_until = max(client.app_busy_until, ts + duration)
        if duration > self.settings.max_poll_interval_ms:
            deadline = ts + self.settings.max_poll_interval_ms
            client.poll_deadline = deadline
            self._client_step(deadline, client, self._poll_timer_expired, deadline, ts + duration)

    def _poll_timer_expired(self, ts: int, client: ClientIncarnation, deadline: int, resume_at: int) -> None:
        """AbstractMembershipManager.transitionToSendingLeaveGroup(dueToExpiredPollTimer): the member
        leaves at once (no callback first), STALE; onPartitionsLost runs when the application polls again."""
        if client.poll_deadline != deadline or client.state not in (
            ClientState.STABLE,
            ClientState.RECONCILING,
            ClientState.ACKNOWLEDGING,
            ClientState.JOINING,
        ):
            return
        client.poll_deadline = None
        client.reconciling = False
        self._member_event(ts, client, EventType.POLL_TIMEOUT_EXPIRED)
        self._transition(ts, client, ClientState.PREPARE_LEAVING)
        lost = client.owned
        for tp in sorted(lost):
            self.truth.stop(tp, client.member_id, ts, "member_left", instance=client.instance_id)
        client.owned = frozenset()
        client.reconciled = frozenset()  # AbstractMembershipManager: currentAssignment = NONE
        self._send_leave(ts, client, stale=True)
        if not client.stalled:
            self._client_step(resume_at, client, self._rejoin_after_stale, lost, app_thread=True)

    def _rejoin_after_stale(
        self, ts: int, client: ClientIncarnation, lost: frozenset[TopicPartition]
    ) -> None:
        if client.state is not ClientState.STALE:
            return
        if lost:
            self._member_event(ts, client, EventType.PARTITIONS_LOST, partitions=tuple(sorted(lost)))
        client.epoch = 0
        client.leaving_epoch = None
        self._transition(ts, client, ClientState.JOINING)
        self._send_heartbeat(ts, client)

    def _client_step(
        self,
        ts: int,
        client: ClientIncarnation,
        fn: Callable[..., None],
        *args: Any,
        app_thread: bool = False,
    ) -> None:
        """Run fn(ts, client, *args) at `ts` in this client's process: not once it is gone, and not before
        a gc freeze (or, for rebalance callbacks, the application thread) lets it run."""
        self._at(ts, self._run_client_step, client, fn, args, app_thread)

    def _run_client_step(self, ts: int, client: ClientIncarnation, fn, args: tuple, app_thread: bool) -> None:
        if not client.alive:
            return
        ready = max(client.frozen_until, client.app_busy_until if app_thread else 0)
        if ts < ready:
            self._at(ready, self._run_client_step, client, fn, args, app_thread)
            return
        if app_thread and client.resyncing:
            self._at(ts + self.settings.network_ms, self._run_client_step, client, fn, args, app_thread)
            return
        fn(ts, client, *args)

    def _thaw(self, ts: int, client: ClientIncarnation) -> None:
        """End of a gc freeze: the first thing the consumer does is heartbeat (it may have been fenced
        meanwhile), and rebalance callbacks wait for that heartbeat's answer. The answer to the request
        sent before the freeze is not lost: it waited in the socket and is read now (then the heartbeat
        follows). Dropping it would leave the member a step behind the coordinator: its next heartbeat
        would carry the previous epoch without owned partitions (unchanged since sent), which
        GroupMetadataManager.throwIfConsumerGroupMemberEpochIsInvalid fences (isSubset(null) is false)."""
        client.resyncing = True
        client.resync_after = client.request
        self._send_heartbeat(ts, client)

    # ============================================================================ heartbeats
    def _schedule_heartbeat(self, ts: int, client: ClientIncarnation) -> None:
        """The next heartbeat, an interval from now, unless the timeline says the member's timer drifted to
        an instant less than two intervals away (a `heartbeat` action): then at that instant."""
        client.hb_token += 1
        interval = self.settings.heartbeat_interval_ms
        due = ts + interval
        pinned = self.heartbeat_instants.get(client.name)
        while pinned and pinned[0] <= ts:
            pinned.popleft()
        if pinned and pinned[0] < ts + 2 * interval:
            due = pinned.popleft()
        self._client_step(due, client, self._periodic_heartbeat, client.hb_token)

    def _periodic_heartbeat(self, ts: int, client: ClientIncarnation, token: int) -> None:
        if token == client.hb_token:
            self._send_heartbeat(ts, client)

    def _send_heartbeat(self, ts: int, client: ClientIncarnation) -> None:
        if not client.alive or client.state in (
            ClientState.FATAL,
            ClientState.UNSUBSCRIBED,
            ClientState.STALE,
        ):
            return
        if client.in_flight:
            client.hb_wanted = True
            return
        client.in_flight = True
        client.hb_wanted = False
        client.request += 1
        epoch = client.leaving_epoch if client.leaving_epoch is not None else client.epoch
        # ConsumerHeartbeatRequestManager.HeartbeatState.buildRequestData: the owned partitions are sent
        # when joining or when the reconciled assignment changed since the last heartbeat, else omitted
        # (null), which CurrentAssignmentBuilder.ownsRevokedPartitions takes as "still owns them". So a
        # heartbeat sent mid-reconciliation (a gc freeze's, a periodic one) does not tell the coordinator
        # "owns nothing": it must not release a partition this member's reconciliation is about to start.
        owned: frozenset[TopicPartition] | None = None
        if client.state is ClientState.JOINING or client.reported_count != client.reconciled_count:
            owned = client.reconciled
            client.reported_count = client.reconciled_count
        if client.state is ClientState.ACKNOWLEDGING:
            # AbstractMembershipManager.onHeartbeatRequestGenerated: the acknowledgement is on its way
            self._transition(ts, client, ClientState.STABLE)
        self._at(
            ts + self.settings.network_ms,
            self._arrive,
            client,
            client.request,
            epoch,
            client.topics,
            owned,
        )
        if client.dies_after_heartbeat:
            client.alive = False
        elif client.freeze_after_heartbeat:
            client.frozen_until = ts + client.freeze_after_heartbeat
            client.freeze_after_heartbeat = 0
            self._client_step(client.frozen_until, client, self._thaw)

    # ============================================================================= responses
    def _response(
        self, ts: int, client: ClientIncarnation, request: int, response: HeartbeatResponse
    ) -> None:
        if request != client.request:
            return  # the answer to a request sent before a leave
        client.in_flight = False
        if request > client.resync_after:
            client.resyncing = False
        if response.error is None and response.member_epoch < 0:  # the leave heartbeat's answer
            if client.hb_wanted:
                self._send_heartbeat(ts, client)
            return
        if client.state in (ClientState.LEAVING, ClientState.UNSUBSCRIBED, ClientState.STALE):
            return
        if response.error in (FENCED_MEMBER_EPOCH, UNKNOWN_MEMBER_ID):
            self._fenced(ts, client)
            return
        if response.error == UNRELEASED_INSTANCE_ID:
            self._transition(ts, client, ClientState.FATAL)
            client.alive = False
            return
        client.epoch = response.member_epoch
        settled = client.state is not ClientState.JOINING and response.assignment == client.owned
        if client.state is not ClientState.PREPARE_LEAVING and not client.reconciling and not settled:
            self._reconcile(ts, client, response.assignment)
        if client.hb_wanted:
            self._send_heartbeat(ts, client)
        elif not client.in_flight:
            self._schedule_heartbeat(ts, client)

    def _fenced(self, ts: int, client: ClientIncarnation) -> None:
        """FENCED: onPartitionsLost, then JOINING with epoch 0 (AbstractMembershipManager.transitionToFenced).
        The rejoin waits for the callback, which runs on the application thread: a member whose
        application thread hangs for good stays FENCED (its partitions are lost to it all the same)."""
        self._transition(ts, client, ClientState.FENCED)
        client.epoch = 0
        client.reconciling = False
        if client.stalled:
            for tp in sorted(client.owned):  # the callback (and its log line) never runs
                self.truth.stop(tp, client.member_id, ts, "lost", instance=client.instance_id)
            client.owned = client.reconciled = frozenset()
            return
        if client.owned:
            self._member_event(ts, client, EventType.PARTITIONS_LOST, partitions=tuple(sorted(client.owned)))
            for tp in sorted(client.owned):
                self.truth.stop(tp, client.member_id, ts, "lost", instance=client.instance_id)
            client.owned = frozenset()
        client.reconciled = frozenset()  # AbstractMembershipManager: currentAssignment = NONE
        self._transition(ts, client, ClientState.JOINING)
        self._send_heartbeat(ts, client)

    def _reconcile(self, ts: int, client: ClientIncarnation, assignment: frozenset[TopicPartition]) -> None:
        """ConsumerMembershipManager reconciliation: revoke first, then assign, then acknowledge."""
        client.reconciling = True
        self._transition(ts, client, ClientState.RECONCILING)
        client.local_epoch += 1
        client.reconciliation += 1
        self._client_step(ts + 1, client, self._reconciliation_started, assignment)
        revoked = client.owned - assignment
        if revoked:
            self._client_step(
                ts + self.settings.revoke_callback_ms,
                client,
                self._revoke_step,
                revoked,
                assignment,
                client.reconciliation,
                app_thread=True,
            )
        else:
            self._client_step(
                ts + self.settings.assign_callback_ms,
                client,
                self._assign_step,
                assignment,
                client.reconciliation,
                app_thread=True,
            )

    def _reconciliation_started(
        self, ts: int, client: ClientIncarnation, assignment: frozenset[TopicPartition]
    ) -> None:
        """The reconciliation's start, logged at INFO (AbstractMembershipManager.maybeReconcile, 3.8+:
        "Reconciling assignment with local epoch ..." with the assigned, currently owned, added and revoked
        partitions) on the background thread's next loop after the RECONCILING transition (the real 4.x
        client logs it 1-3 ms later; callbacks take >= 1 ms, so it precedes them): the member's event
        `sync_response` as the parser reads that block (attributes.owned: what it consumes now)."""
        if not client.reconciling:
            return
        self._member_event(
            ts,
            client,
            EventType.SYNC_RESPONSE,
            member_epoch=client.epoch,
            partitions=tuple(sorted(assignment)),
            attributes={
                "local_epoch": str(client.local_epoch),
                "owned": _comma_list(client.owned),
                "added": _comma_list(assignment - client.owned),
                "revoked": _comma_list(client.owned - assignment),
            },
        )

    def _revoke_step(
        self, ts: int, client: ClientIncarnation, revoked, assignment, reconciliation: int
    ) -> None:
        if not client.reconciling or reconciliation != client.reconciliation:
            return
        self._member_event(ts, client, EventType.PARTITIONS_REVOKED, partitions=tuple(sorted(revoked)))
        for tp in sorted(revoked):
            self.truth.stop(tp, client.member_id, ts, "revoked", instance=client.instance_id)
        client.owned = client.owned - revoked
        self._client_step(
            ts + self.settings.assign_callback_ms,
            client,
            self._assign_step,
            assignment,
            reconciliation,
            app_thread=True,
        )

    def _assign_step(
        self, ts: int, client: ClientIncarnation, assignment: frozenset[TopicPartition], reconciliation: int
    ) -> None:
        if not client.reconciling or reconciliation != client.reconciliation:
            return
        added = assignment - client.owned
        self._member_event(ts, client, EventType.PARTITIONS_ASSIGNED, partitions=tuple(sorted(added)))
        for tp in sorted(added):
            self.truth.start(
                tp, client.member_id, ts, instance=client.instance_id, generation_id=self.tracker.epoch
            )
        client.owned = client.owned | added
        client.reconciled = client.owned
        client.reconciled_count += 1
        client.reconciling = False
        self._transition(ts, client, ClientState.ACKNOWLEDGING)
        self._send_heartbeat(ts, client)
        self.tracker.maybe_end_episode()

    # ================================================================================ events
    def _transition(
        self, ts: int, client: ClientIncarnation, to_state: ClientState, epoch: int | None = None
    ) -> None:
        from_state = client.state
        client.state = to_state
        if to_state is ClientState.JOINING:  # clearPendingAssignmentsAndLocalNamesCache: target NONE
            client.local_epoch = -1
        self._member_event(
            ts,
            client,
            EventType.MEMBER_STATE_CHANGED,
            member_epoch=client.epoch if epoch is None else epoch,
            attributes={"from_state": from_state.value, "to_state": to_state.value},
        )

    def _member_event(self, ts: int, client: ClientIncarnation, event_type: EventType, **fields: Any) -> None:
        self._event(
            ts,
            Side.MEMBER,
            event_type,
            source=client.name,
            member_id=client.member_id,
            group_instance_id=client.instance_id,
            client_id=client.name,
            **fields,
        )


def _comma_list(partitions: Iterable[TopicPartition]) -> str:
    """A partition set as the parser carries it in string attributes (`t-0,t-1`, sorted)."""
    return ",".join(str(tp) for tp in sorted(partitions))
