"""From incarnations to timeline actions: how each process joined, noticed rebalances, and ended.

Incarnations are chained into processes (a static member's replacement, KIP-345; the same member id
rejoining, KIP-848; else the same client identity); each end and return becomes the timeline's action:
a leave, a crash, a restart, a GC or poll pause, a stall. A member's heartbeat instants come from the
evidence of when it learned of each rebalance (AbstractCoordinator's heartbeat thread; KIP-848's
heartbeat that got a new epoch or started a reconciliation), corrected by the fitted latencies.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from rebalance_core.events import format_ts
from rebalance_core.latency import kip848_one_way_ms
from rebalance_core.timeline import (
    Action,
    Crash,
    EnforceRebalance,
    Heartbeat,
    Join,
    Leave,
    Pause,
    Restart,
    Stall,
    Subscribe,
)
from rebalance_core.whatif.incarnations import (
    EXPIRED,
    FAILED,
    HEARTBEAT_ANSWERED,
    JOIN_COMPLETED,
    JOIN_RESPONDED,
    KIP848_ARRIVED,
    LEFT,
    POLL,
    REPLACED,
    RESET,
    Incarnation,
)
from rebalance_core.whatif.settings import ActualSettings
from schemas.events import EventType, RemovalReason

_SAME_HEARTBEAT_MS = 50  # two instants of evidence this close are one heartbeat


class TimelineActions:
    """Timeline actions from the incarnations, at finish(); reads what the other parts gathered (the incarnations,
    prepared_at, leave_reasons, the options)."""

    def _processes(self) -> dict[str, list[Incarnation]]:
        """Incarnations chained into processes: a static replacement or the same member id rejoining links
        directly; otherwise the latest ended incarnation with the same identity, if it ended before."""
        by_member_successor = {inc.successor: inc for inc in self.incarnations if inc.successor}
        processes: dict[str, list[Incarnation]] = {}
        owner: dict[int, str] = {}  # id(incarnation) -> process name
        # members already in the group when the input started come first, then by their joins
        ordered = sorted(
            self.incarnations, key=lambda i: (i.start is not None, i.start or i.first_seen, i.first_seen)
        )
        previous_of_member: dict[str, Incarnation] = {}
        for inc in ordered:
            linked = by_member_successor.get(inc.member_id)
            if linked is None:
                same_id = previous_of_member.get(inc.member_id)
                if same_id is not None and same_id.end_kind is not None:
                    linked = same_id
            if linked is None:
                linked = self._free_process(inc, processes)
            name = owner.get(id(linked)) if linked is not None else None
            if name is None:
                name = _unique_name(inc.hint or "member", processes)
                processes[name] = []
            processes[name].append(inc)
            owner[id(inc)] = name
            previous_of_member[inc.member_id] = inc
        return processes

    def _free_process(self, inc: Incarnation, processes: dict[str, list[Incarnation]]) -> Incarnation | None:
        if inc.start is None:
            return None
        best = None
        for chain in processes.values():
            last = chain[-1]
            if last.hint != inc.hint or last.end_kind in (None, REPLACED) or last.end is None:
                continue
            if last.end <= inc.start and (best is None or last.end > best.end):
                best = last
        return best

    def _actions(self, processes, actual: ActualSettings) -> tuple[list[Action], set[str], set[str]]:
        """Timeline actions per process (absolute instants; pre-existing joins have at=None)."""
        actions: list = []
        member_logged: set[str] = set()
        pre_existing: set[str] = set()
        for name, chain in processes.items():
            if any(inc.logged for inc in chain):
                member_logged.add(name)
            first = chain[0]
            if first.start is None:
                pre_existing.add(name)
            actions.append(
                Join(at=first.start, member=name, topics=first.subscription, instance_id=first.instance_id)
            )
            # a member in the group before the input acts from the input's start on, where the JoinGroup
            # behind the input's first line left its process up to a round trip and a callback earlier
            input_start = (
                self.first_ts - actual.latency.join_round_trip_ms - actual.latency.revoke_callback_ms
            )
            busy_until = first.start if first.start is not None else input_start
            for index, inc in enumerate(chain):
                actions.extend(
                    Heartbeat(at=at, member=name)
                    for at in self._heartbeat_instants(inc, actual)
                    if (inc.start is None or at > inc.start) and (inc.end is None or at < inc.end)
                )
                for ts, _exact, topics in inc.changes:
                    at = max(ts, busy_until or ts, inc.start or ts)
                    if inc.end is not None and at >= inc.end:
                        continue
                    actions.append(Subscribe(at=at, member=name, topics=topics))
                actions.extend(
                    EnforceRebalance(at=ts, member=name)
                    for ts, _exact in inc.enforced
                    if ts > max(busy_until or ts - 1, inc.start or ts - 1)
                    and (inc.end is None or ts < inc.end)
                )
                following = chain[index + 1] if index + 1 < len(chain) else None
                step, busy_until = self._transition(name, inc, following, actual, busy_until)
                actions.extend(step)
        return actions, member_logged, pre_existing

    def _heartbeat_instants(self, inc: Incarnation, actual: ActualSettings) -> list[int]:
        """When the member's heartbeats went out, from the evidence (see the kinds above), so that the
        replayed member learns of each rebalance when the real one did. A member that had to rejoin by
        the end of a join phase it did not cause sent its JoinGroup half a round trip before, after its
        revocation callback (eager: onJoinPrepare revokes everything), learning of the rebalance at its
        heartbeat before that; such an instant before the rebalance began says nothing (it rejoined of its
        own accord)."""
        latency = actual.latency
        rtt = latency.join_round_trip_ms
        prepare = latency.revoke_callback_ms if actual.protocol == "eager" and inc.owns is not False else 0
        network = kip848_one_way_ms(rtt)
        instants = []
        for ts, kind, started in inc.heartbeats:
            if kind == HEARTBEAT_ANSWERED:
                at = ts
            elif kind == JOIN_COMPLETED:
                at = ts - rtt // 2 - prepare
            elif kind == JOIN_RESPONDED:
                at = ts - rtt - prepare
            elif kind == KIP848_ARRIVED:
                at = ts - network
            else:  # KIP848_ANSWERED: sent, arrived, answered
                at = ts - 2 * network
            if (
                kind in (JOIN_COMPLETED, JOIN_RESPONDED)
                and started is not None
                and started - rtt < at <= started
            ):
                # rejoined within a round trip of the round's start: told at its first heartbeat after the
                # start (the fitted latencies are medians; this phase was as fast as a round trip allows)
                at = started + 1
            if started is None or at > started:
                instants.append(at)
        kept: list[int] = []
        for at in sorted(instants):  # one heartbeat seen from both sides is one heartbeat
            if not kept or at - kept[-1] > _SAME_HEARTBEAT_MS:
                kept.append(at)
        return kept

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


def _unique_name(base: str, taken: Mapping[str, Any]) -> str:
    if base not in taken:
        return base
    n = 2
    while f"{base}#{n}" in taken:
        n += 1
    return f"{base}#{n}"
