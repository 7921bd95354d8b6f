"""The KIP-848 replayer's ownership: partitions started and stopped on the `OwnershipTimeline`, timed by
the coordinator's assignment-state lines for a member without its own log (CurrentAssignmentBuilder: what
GroupMetadataManager.consumerGroupHeartbeat hands it) or by its rebalance callbacks
(ConsumerMembershipManager / MembershipManagerImpl: onPartitionsAssigned / Revoked / Lost), partitions owned
since before the input, and the anomaly rows. A mixin of `consumer.replayer.ConsumerGroupReplayer`.
"""

from __future__ import annotations

from collections.abc import Iterable

from rebalance_core.consumer.replay_state import MemberView
from rebalance_core.consumer.states import MemberState
from rebalance_core.events import Event, TopicPartition
from rebalance_core.measures import STOP_NOT_OWNED
from rebalance_core.replay_common import event_anomaly_row


class Ownership:
    """Partitions started and stopped per member, and anomaly rows."""

    def _coordinator_timing(
        self, view: MemberView, assigned: list[TopicPartition], ts: int, line_missing: bool = False
    ) -> None:
        """A member without its own log consumes what the coordinator says it is assigned. `line_missing`: a
        state line of the member between its last one and this is provably not in the input, so the changes
        this line shows happened at that line or this one: their instants are inferred (unavailable time an
        upper bound)."""
        before = set(view.server_assigned or ())
        now = set(assigned)
        source = "inferred" if line_missing else "observed"
        tl = self.timeline
        owned = [tp for tp in sorted(before - now) if tl.owner_of(tp) == view.member_id]
        tl.stop_all(owned, view.member_id, ts, "revoked", instance=view.instance, source=source)
        self._start_all(sorted(now - before), view, ts, source)
        if now - before:
            view.server_started, view.server_started_at = sorted(now - before), ts
            view.server_started_each.update(dict.fromkeys(now - before, ts))

    def _unacted_starts_inferred(self, view: MemberView, removed_at: int, cause: str) -> None:
        """A member timed by the coordinator alone leaves within max.poll.interval.ms of lines that gave it
        partitions: whether its onPartitionsAssigned ever ran for them, no broker line tells (the member is
        STABLE for the coordinator as soon as nothing it is given is held by another, CurrentAssignmentBuilder),
        and a callback blocked by a busy poll loop ends in exactly such a leave (the poll timer's, which the
        broker logs as any leave; a static member's poll-timer leave is its "temporarily left", epoch -2,
        ConsumerMembershipManager.leaveGroupEpoch). Its heartbeats go on from the background thread meanwhile,
        so lines keep handing it partitions: every line within the interval counts, not only the latest. Its
        consumption of them, and so their movement, is inferred: the stop now and the start at each line, with
        the episodes that counted them as moved to it. (A session-timeout removal is a crash, whose stop is
        placed at its last heartbeat already.) Only a stated max.poll.interval.ms proves a later leave came
        after a poll: the client's setting has no upper bound, so without one every line since its callbacks
        last provably ran counts."""
        if view.member_timed:
            return
        max_poll = self._max_poll_interval_ms(view)  # its line's, its own config dump's, or the user's
        earliest = view.callbacks_ran_at
        if max_poll is not None:
            # a line longer ago: it polled since (else it would have left sooner), so its callback ran
            earliest = max(earliest or 0, removed_at - max_poll)
        owned = self.timeline.partitions_of(view.member_id)
        handed: dict[int, list[TopicPartition]] = {}
        for tp, at in sorted(view.server_started_each.items()):
            if tp in owned and (earliest is None or at >= earliest):
                handed.setdefault(at, []).append(tp)
        for at, tps in sorted(handed.items()):
            self.timeline.stop_all(
                tps, view.member_id, removed_at, cause, instance=view.instance, source="inferred"
            )
            # and the rebalance that handed them over counted them as moved to it
            self.timeline.starts_inferred(view.member_id, tps, at)

    def _callbacks_ran(self, view: MemberView, state: MemberState, ts: int) -> None:
        """The coordinator's line moving a member on from UNREVOKED_PARTITIONS: its heartbeat no longer owns the
        revoked partitions, so its onPartitionsRevoked ran on its application thread, and so did every callback
        of the reconciliations before (ConsumerMembershipManager reconciles one assignment at a time, the
        callbacks on the application thread when a listener is set). The partitions lines handed it before
        this one it surely consumed."""
        if (
            view.server_state == MemberState.UNREVOKED_PARTITIONS.value
            and state is not MemberState.UNREVOKED_PARTITIONS
        ):
            view.callbacks_ran_at = ts

    def _died_before_acknowledging(
        self, view: MemberView, last_heartbeat: int, stated_session_timeout_ms: int | None
    ) -> bool:
        """A member timed by the coordinator alone, fenced on its session expiry, whose last heartbeat came
        less than a heartbeat interval after the line that handed it partitions: it sent no regular heartbeat
        since, and its acknowledgement (the heartbeat with the partitions it owns, sent once its
        onPartitionsAssigned ran: ConsumerMembershipManager ACKNOWLEDGING) no broker line shows, so whether it
        ever consumed them is unknown. Their start (movement and the episode that counted it) is inferred, and
        so are its stops (returns whether so). The interval as stated, else below the session timeout the
        fence line states (_longest_heartbeat_interval_ms); neither: any start may be so."""
        started_at = view.server_started_at
        if view.member_timed or not view.server_started or started_at is None:
            return False
        longest_interval = self._longest_heartbeat_interval_ms(stated_session_timeout_ms)
        if longest_interval is not None and last_heartbeat - started_at >= longest_interval:
            return False
        return self._infer_unacted_starts(view)

    def _infer_unacted_starts(self, view: MemberView) -> bool:
        """The partitions the member's latest assignment line started that it still owns, which it may never
        have consumed: their start (their movement, and the episode that counted it) inferred. Returns whether
        there were any."""
        owned = self.timeline.partitions_of(view.member_id)
        unacted = [tp for tp in view.server_started or () if tp in owned]
        if unacted and view.server_started_at is not None:
            # and the rebalance that handed them over counted them as moved to it
            self.timeline.starts_inferred(view.member_id, unacted, view.server_started_at)
        return bool(unacted)

    def _revocations_acknowledged(self, view: MemberView, ts: int) -> None:
        """The coordinator's next line of a member it asked to revoke (its last state UNREVOKED_PARTITIONS): a
        new state, a leave, a fence, at `ts`. The member revokes in its onPartitionsRevoked and acknowledges in a
        heartbeat sent at once (ConsumerMembershipManager: ACKNOWLEDGING), which moves it on (CurrentAssignmentBuilder);
        a member that leaves first revokes, or, its poll loop stuck, leaves on its poll timer having revoked
        nothing. So the stops, placed at the request, lie between it and this line: beyond a heartbeat interval
        apart, where is unknown (the stops say inferred; their unavailable time an upper bound). Without a
        stated interval, any later line: the interval can be as short as 1 ms (GroupCoordinatorConfig), so
        Kafka's default (5 s) bounds nothing."""
        if view.member_timed or view.server_state != MemberState.UNREVOKED_PARTITIONS.value:
            return
        asked_at = view.heartbeat_seen_at  # its latest coordinator line: the request
        interval = self.settings.consumer_heartbeat_interval_ms or 0
        if asked_at is not None and ts - asked_at > interval:
            self.timeline.stops_inferred(view.member_id)

    def _stops_awaited_by_nobody(self) -> frozenset[TopicPartition]:
        """Partitions stopped that no member of the group will take: of a topic no member consumes, nor names
        in its "Reconciling assignment" block at the current epoch (the whole assignment the coordinator
        handed it, ConsumerMembershipManager.maybeReconcile), so no member subscribes it any more and the
        target has none of them (the broker's assignors hand a topic's partitions to its subscribers only).
        Known only when every member has its own log with a block at the epoch (the target map is not logged,
        4.0+ at DEBUG; an older block may predate the target handing it more) and no bump is on its way (a
        leaver's partitions wait for the epoch its leave makes). And only where the coordinator's log names
        every member (GroupMetadataManager keeps each member that heartbeats): the members' logs alone do not show
        a member whose host log is missing, which may subscribe the topic and take them."""
        stopped = self.timeline.stopped()
        if not stopped or self.pending_start is not None or not self.has_coordinator:
            return frozenset()
        views = [self.members[m] for m in self._group_members()]
        if not views or not all(v.member_timed and v.block_epoch == self.tracker.epoch for v in views):
            return frozenset()
        subscribed = {tp.topic for tp in self.timeline.consuming()}
        subscribed.update(tp.topic for v in views for tp in v.block_assigned)
        return frozenset(tp for tp in stopped if tp.topic not in subscribed)

    def _start(self, tp: TopicPartition, view: MemberView, ts: int, source: str = "observed") -> None:
        self._start_all((tp,), view, ts, source)

    def _start_all(
        self, tps: Iterable[TopicPartition], view: MemberView, ts: int, source: str = "observed"
    ) -> None:
        """`view`'s member starts each of `tps` at `ts` (one timeline call per member's partitions)."""
        problems = self.timeline.start_all(
            tps, view.member_id, ts, instance=view.instance, generation_id=self.tracker.epoch, source=source
        )
        for tp, problem, _holder in problems:
            self._anomaly(problem, None, f"{tp} start by {view.member_id}", ts=ts)

    def _stop_all(self, view: MemberView, ts: int, cause: str, source: str = "observed") -> None:
        tl = self.timeline
        tl.stop_all(
            sorted(tl.partitions_of(view.member_id)),
            view.member_id,
            ts,
            cause,
            instance=view.instance,
            source=source,
        )

    def _member_stop(self, view: MemberView, tp: TopicPartition, ts: int, cause: str, e: Event) -> None:
        """A member says it stopped tp. Never seen before: it owned tp since before the input. A repeat
        (membership manager and listener both log a revocation) or a removed member's late callback: no-op."""
        tl = self.timeline
        self._adopt(tp, view, ts)
        owner = tl.owner_of(tp)
        if owner == view.member_id:
            tl.stop(tp, view.member_id, ts, cause, instance=view.instance)
        elif not (owner is None and tl.stopped()[tp] == view.member_id):
            self._anomaly(STOP_NOT_OWNED, e, f"{tp} stop by {view.member_id}, owned by {owner}")

    def _adopt(self, tp: TopicPartition, view: MemberView, ts: int) -> None:
        """A partition never seen before, that the member says it owns: it owned it since before the input."""
        tl = self.timeline
        if tl.owner_of(tp) is None and tp not in tl.stopped():
            tl.start(tp, view.member_id, ts, instance=view.instance)
            if tl.episode is not None:
                tl.episode.owners_before.setdefault(tp, view.instance or view.member_id)

    def _anomaly(self, rule: str, e: Event | None, detail: str, ts: int | None = None) -> None:
        cur = self.tracker.current
        self._anomalies.append(
            event_anomaly_row(
                self.timeline,
                self.key,
                rule,
                e,
                detail,
                ts,
                self.last_ts,
                f"epoch {cur.epoch}" if cur else None,
            )
        )
