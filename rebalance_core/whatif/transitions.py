"""How an incarnation ends and its process comes back, as timeline actions.

A member id's end (a LeaveGroup, a session expiry, a poll timeout, a removal on the rebalance timeout, a
static replacement of KIP-345, a reset of its member id) and the process's next incarnation become a
leave or crash and a new join, a restart (a graceful one within the bounce window, a killed one within
the session timeout), a GC pause the session timeout did not outlast, a poll pause of at least
max.poll.interval.ms (AbstractCoordinator's heartbeat thread leaves on it), or a stall for good
(GroupCoordinator.onCompleteJoin removes a member that did not rejoin within the rebalance timeout).
"""

from __future__ import annotations

from rebalance_core.events import format_ts
from rebalance_core.latency import kip848_one_way_ms
from rebalance_core.timeline import Crash, Join, Leave, Pause, Restart, Stall
from rebalance_core.whatif.incarnations import EXPIRED, FAILED, LEFT, POLL, REPLACED, RESET, Incarnation
from rebalance_core.whatif.settings import ActualSettings
from schemas.events import EventType, RemovalReason


class Transitions:
    """The actions between one incarnation of a process and its next, at finish(); reads what the other
    parts gathered (the rebalance starts, the LeaveGroup reasons, the options)."""

    def _transition(self, name: str, inc: Incarnation, nxt: Incarnation | None, actual: ActualSettings, busy):
        """The actions that end one incarnation of a process and bring back its next one (if any).
        Returns them and the instant from which the process may act again (Timeline validation)."""
        if inc.end_kind is None or (inc.end_kind == REPLACED and nxt is None):
            return [], busy
        floor = busy if busy is not None else self.first_ts
        end = max(inc.end if inc.end is not None else floor, floor)
        if nxt is None:
            if inc.end_kind == POLL or (inc.end_kind == LEFT and self._left_on_poll_timeout(inc, None)):
                self.notes.append(
                    f"{name} left on a poll timeout and did not rejoin in the input: replayed as a leave"
                )
            if inc.end_kind == EXPIRED and inc.instance_id and self._closed_static(inc):
                # a static member's close() for good: revoked, no LeaveGroup, removed a session later
                # (KIP-345): it left at its revocation, not at its last heartbeat
                return [Leave(at=max(inc.last_member_ts, floor), member=name)], end
            if inc.end_kind == FAILED and inc.missed_join_phase_at is not None:
                return [self._stalled_for_good(name, inc, floor)], end
            stop = Leave if inc.end_kind in (LEFT, POLL) else Crash
            return [stop(at=end, member=name)], end
        back = nxt.start if nxt.start is not None else nxt.first_seen
        if inc.revived_at is not None and inc.revived_at <= back:
            resume = inc.revived_at
            if inc.revived_on_answer:  # its heartbeat's way there and the answer's way back
                resume = max(resume - 2 * kip848_one_way_ms(actual.latency.join_round_trip_ms), end)
        elif inc.owns is not False:  # on its return it first ran onPartitionsLost, then sent the JoinGroup
            resume = max(back - actual.latency.revoke_callback_ms, end)
        else:
            resume = back
        # proof that the same process came back after the group dropped it: its own log after the
        # removal, or its rejoin's client reason (AbstractCoordinator: "encountered UNKNOWN_MEMBER_ID")
        fenced = "unknown_member_id" in (nxt.join_reason or "").lower()
        kind, paused = inc.end_kind, inc.alive_after_end or fenced or self.options.expired_rejoin == "pause"
        closed = self._closed_static(inc) and inc.last_member_ts <= back
        if kind in (EXPIRED, REPLACED, RESET) and closed:
            return self._bounce(name, inc.last_member_ts, back, True, floor, inc, nxt)
        if kind == REPLACED and self._left_on_poll_timeout(inc, nxt):
            # a static member back from a poll timeout (no LeaveGroup): stalled at least max.poll.interval.ms
            paused_at = max(resume - actual.max_poll_interval_ms - 1, floor + 1)
            return [Pause(at=paused_at, member=name, duration_ms=resume - paused_at, kind="poll")], resume + 1
        if kind == REPLACED:
            # KIP-345, killed: the crash instant is in no log. A rebalance it did not rejoin before its
            # replacement shows it was gone by then; else down 0 (the replayer stops it at the replacement)
            seen = max(t for t in (inc.last_join_at, inc.start, inc.first_seen) if t is not None)
            missed = next((p for p in self.prepared_at if seen < p < back), back)
            return self._bounce(name, missed, back, False, floor, inc, nxt)
        if inc.poll_timeout_at is not None:  # its poll loop was away for max.poll.interval.ms
            kind, end = POLL, max(inc.poll_timeout_at, floor)
        elif kind == LEFT and self._left_on_poll_timeout(inc, nxt):
            kind = POLL
        elif kind == FAILED and inc.removal_reason == RemovalReason.REBALANCE_TIMEOUT.value:
            kind = POLL  # it did not rejoin within the rebalance timeout: its poll loop was away as long
        if kind == RESET:
            # its own log only, then a JoinGroup without member id from its process: it was dropped while
            # alive (it lost its partitions: a pause of at least a session timeout), or it is a new process
            # (killed and restarted at an instant no log shows: down 0)
            if inc.lost_at is not None:
                kind, paused, resume = EXPIRED, True, inc.lost_at
                end = max(resume - actual.session_timeout_ms - 1, floor)
            else:
                return self._bounce(name, back, back, False, floor, inc, nxt)
        if kind == POLL:
            paused_at = end - actual.max_poll_interval_ms
            if floor < paused_at < resume:
                return [
                    Pause(at=paused_at, member=name, duration_ms=resume - paused_at, kind="poll")
                ], resume + 1
            self.notes.append(f"{name}: poll timeout of unknown start: replayed as a leave and a rejoin")
            kind = LEFT
        if kind == EXPIRED and paused and resume >= end + actual.session_timeout_ms:
            # a GC pause the session timeout did not outlast: frozen from its last heartbeat to its revival
            return [Pause(at=end, member=name, duration_ms=resume - end, kind="gc")], resume + 1
        return self._bounce(name, end, back, kind == LEFT, floor, inc, nxt)

    def _stalled_for_good(self, name: str, inc: Incarnation, floor: int) -> Stall:
        """Removed for not rejoining a join phase within its rebalance timeout, and never back: its
        heartbeats kept its session alive (else the session timeout would have removed it) while its
        poll loop, which sends the JoinGroup, never ran again (GroupCoordinator.onCompleteJoin removes
        such members; a crash would have been a session expiry, a rebalance more). Its poll timer had not
        expired by the removal (AbstractCoordinator.HeartbeatThread would have left on it first, and the
        rebalance timeout is max.poll.interval.ms), so the poll loop stalled after the join phase began."""
        self.notes.append(
            f"{name} did not rejoin the rebalance of {format_ts(inc.missed_join_phase_at)} within its rebalance "
            "timeout and never came back: replayed as its poll loop stalling for good"
        )
        return Stall(at=max(inc.missed_join_phase_at + 1, floor), member=name)

    @staticmethod
    def _closed_static(inc: Incarnation) -> bool:
        """Its own log ends with a revocation and no LeaveGroup: a static member's close() (KIP-345;
        AbstractCoordinator.maybeLeaveGroup sends LeaveGroup for dynamic members only)."""
        return inc.last_member_event == EventType.PARTITIONS_REVOKED.value

    def _bounce(
        self, name: str, end: int, back: int, graceful: bool, floor: int, inc: Incarnation, nxt: Incarnation
    ):
        """Down at `end`, back at `back`. A restart: closed and back within the bounce window (a static
        member that sent a LeaveGroup left for good: Kafka's static close sends none), or killed and back
        within its session timeout; otherwise a leave or crash and a new join. A restarted process rejoins
        with its old subscription, so a changed one is a new join too."""
        end = max(end, floor)
        back = max(back, end)
        before = inc.changes[-1][2] if inc.changes else inc.subscription
        same_topics = nxt.subscription is None or before is None or set(nxt.subscription) == set(before)
        if graceful:
            # a static member's LeaveGroup (classic) is for good, unless the instance came back as its
            # replacement (KIP-848's temporary leave, epoch -2)
            for_good = inc.instance_id and inc.end_kind == LEFT and not inc.successor
            restart = back - end <= self.options.bounce_window_ms and not for_good
        else:
            restart = back - end <= self._session_timeout()
        if restart and same_topics:
            return [Restart(at=end, member=name, down_ms=back - end, graceful=graceful)], back + 1
        stop = Leave(at=end, member=name) if graceful else Crash(at=end, member=name)
        join_at = max(back, end + 1)
        return [
            stop,
            Join(at=join_at, member=name, topics=nxt.subscription, instance_id=nxt.instance_id),
        ], join_at

    def _left_on_poll_timeout(self, inc: Incarnation, nxt: Incarnation | None) -> bool:
        """A LeaveGroup (or a rejoin) whose client reason is the poll timeout ("consumer poll timeout has
        expired", AbstractCoordinator's heartbeat thread)."""
        reasons = (self.leave_reasons.get(inc.member_id, ""), nxt.join_reason if nxt is not None else "")
        return any("poll timeout" in (reason or "").lower() for reason in reasons)
