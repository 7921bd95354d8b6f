"""A member's own lines: what its client log says of its membership.

The classic consumer's AbstractCoordinator / ConsumerCoordinator (JoinGroup sent and answered, the
heartbeat's REBALANCE_IN_PROGRESS, the revocation callbacks, the poll timeout, LeaveGroup) and KIP-848's
membership manager states (ConsumerMembershipManager: JOINING, RECONCILING, FENCED, PREPARE_LEAVING).
A member's own instants are exact: they date its process's joins, rejoins and ends. Each
`_m_<event_type>` handler records its evidence; `_m_any` ties every member line to its incarnation.
"""

from __future__ import annotations

import re

from rebalance_core.events import REBALANCE_STARTED, Event
from rebalance_core.whatif.incarnations import (
    ENFORCED,
    KIP848_ANSWERED,
    LEFT,
    POLL,
    REPLACED,
    RESET,
    Incarnation,
    MembershipBook,
    client_key,
)
from schemas.events import EventType

# a member's own log: it learned of a rebalance it did not start (AbstractCoordinator heartbeat thread,
# 2.x "Attempt to heartbeat failed since group is rebalancing" is heartbeat_rebalancing; an offset commit
# refused with REBALANCE_IN_PROGRESS: ConsumerCoordinator "offset commit failed since group is already
# rebalancing")
_NOTICED_REBALANCE = re.compile(r"already rebalancing|group is rebalancing", re.IGNORECASE)
# AbstractCoordinator's rejoin after MEMBER_ID_REQUIRED: 2.x "... needs to have a valid member id before
# actually entering a consumer group", 3.x "need to re-join with the given member-id"
# AbstractCoordinator.HeartbeatThread's cause when no heartbeat response came within session.timeout.ms
_SESSION_TIMED_OUT = "session timed out without receiving a heartbeat response"
_MEMBER_ID_REQUIRED = re.compile(r"valid member id before|re-join with the given member-id", re.IGNORECASE)


class MemberEvidence(MembershipBook):
    """The `_m_<event_type>` handlers of TimelineExtractor, with the state only they gather."""

    def _init_member_side(self) -> None:
        """The state of what only the members' own lines show (called by TimelineExtractor.__init__)."""
        self.round_signal: int | None = None  # member logs: first rebalance signal since the last sync
        self.completed_generations: set[int] = set()  # member logs only: generations whose join phase ended
        # member logs: a line listing the group's members (a leader's "Finished assignment for group")
        self.members_listed_by_member = False
        # member logs: (ts, client) of the first rebalance a logged member took part in without causing it
        self.rebalance_from_outside: tuple[int, str] | None = None
        self.member_ids_seen: set[str] = set()

    def _member_view_gap(self, e: Event) -> None:
        """Member logs: whether a logged member took part in a rebalance it did not start (the heartbeat's
        or a commit's REBALANCE_IN_PROGRESS; its log opening inside a rebalance, or on Connect's
        "Rebalance started", which names no cause), and whether any line lists the group's members."""
        if e.assignment or e.members:
            self.members_listed_by_member = True
        first_line = bool(e.member_id) and e.member_id not in self.member_ids_seen
        if e.member_id:
            self.member_ids_seen.add(e.member_id)
        told = e.event_type == EventType.HEARTBEAT_REBALANCING.value or (
            e.event_type == EventType.JOIN_REQUESTED.value and _NOTICED_REBALANCE.search(e.reason or "")
        )
        opened_inside = first_line and (
            e.event_type in (EventType.JOIN_RESPONSE.value, EventType.SYNC_RESPONSE.value)
            or (e.event_type == EventType.JOIN_REQUESTED.value and e.reason == REBALANCE_STARTED)
        )
        if (told or opened_inside) and self.rebalance_from_outside is None:
            self.rebalance_from_outside = (e.ts, e.client_id or e.source or e.member_id)

    def _m_any(self, e: Event) -> Incarnation | None:
        """Every member event: the incarnation it belongs to (created when first seen)."""
        if not e.member_id:
            return None
        inc = self.current.get(e.member_id)
        if inc is None:
            inc = self._new_incarnation(e, e.member_id)
        replaced = self.awaiting_successor.get(client_key(e))
        if replaced is not None and replaced is not inc:
            replaced.successor = e.member_id
            del self.awaiting_successor[client_key(e)]
        if inc.reset_by_join is not None and inc.end == inc.reset_by_join:
            # the coordinator answered that JoinGroup with this same member id: it carried the id, the log
            # line did not print it (a JoinGroup without one always gets a new id): no new process
            if self.pending_start.get(client_key(e)) == inc.reset_by_join:
                del self.pending_start[client_key(e)]
            if self.awaiting_successor.get(client_key(e)) is inc:
                del self.awaiting_successor[client_key(e)]
            inc.end_kind = inc.end = inc.reset_by_join = None
        dropped = [t for t in (inc.end, inc.removed_at, inc.poll_timeout_at) if t is not None]
        if inc.end_kind not in (None, REPLACED) and inc.revived_at is None and e.ts > max(dropped):
            # still running after the group dropped it: a pause, not a crash, and it ended here
            inc.alive_after_end, inc.revived_at = True, e.ts
        if not inc.start_exact:
            pending = self.pending_start.pop(client_key(e), None)
            if pending is not None and (inc.start is None or pending <= inc.start):
                inc.start, inc.start_exact = pending, True
        inc.logged = True
        inc.client_key = client_key(e)
        self._identify(inc, e)
        inc.last_member_event, inc.last_member_ts = e.event_type, e.ts
        delay = (e.attributes or {}).get("delay_ms", "")
        if delay.isdigit():
            self.kip415_delay = max(self.kip415_delay, int(delay))
        return inc

    def _m_join_sent(self, e: Event) -> None:
        if e.member_id:
            inc = self._m_any(e)
            if inc is not None and not self.has_coordinator:
                self._open_round(e.ts)
                if not inc.noticed:
                    self.round.causes.add(inc.member_id)
            return
        # a JoinGroup without member id: a new process, or one whose membership was reset (its old
        # member id expired or it left on a poll timeout): the new incarnation starts here
        key = client_key(e)
        self.pending_start[key] = e.ts
        if not self.has_coordinator:
            self._open_round(e.ts)
        for inc in self.current.values():
            if inc.end_kind is None and inc.logged and inc.client_key == key:
                self._end(inc, RESET, e.ts)
                inc.reset_by_join = e.ts
                if self.round is not None:
                    self.round.causes.add(inc.member_id)  # it rejoins of its own accord
                if e.group_instance_id and not self.has_coordinator and inc.lost_at is None:
                    # KIP-345: a static member's new process takes over its instance id (no coordinator
                    # log to say so: assumed within the session timeout)
                    inc.end_kind = REPLACED
                    self.awaiting_successor[key] = inc

    def _m_join_response(self, e: Event) -> None:
        inc = self._m_any(e)
        if inc is not None:
            inc.noticed = False
        generation = e.generation_id
        if (
            not self.has_coordinator
            and generation is not None
            and generation not in self.completed_generations
        ):
            # member logs only: the first JoinGroup response of a generation is the join phase's end
            self.completed_generations.add(generation)
            self._close_round(e.ts, response=True)
        if e.protocol_name:
            self.protocol_names[e.protocol_name] += 1

    def _m_heartbeat_rebalancing(self, e: Event) -> None:
        self._noticed(self._m_any(e), e.ts)
        if self.round_signal is None:
            self.round_signal = e.ts

    def _m_assignment_computed(self, e: Event) -> None:
        self._m_any(e)
        if e.assignment:
            self._assignment_seen(e, self.round_signal if self.round_signal is not None else e.ts)

    def _m_sync_response(self, e: Event) -> None:
        inc = self._m_any(e)
        if inc is not None:
            inc.noticed = False
            if e.partitions is not None:  # its own assignment (a static rejoin gets it with no rebalance)
                inc.owns = bool(e.partitions)
        self.round_signal = self.metadata_signal = None

    def _m_coordinator_unavailable(self, e: Event) -> None:
        """The line names no member id: it revives the process's incarnation the group dropped when it is
        the heartbeat thread's wake-up from a pause past the session timeout
        (AbstractCoordinator.HeartbeatThread: markCoordinatorUnknown("session timed out without receiving
        a heartbeat response"), its first line after the pause, before the heartbeat that learns of the
        removal)."""
        if _SESSION_TIMED_OUT not in (e.attributes or {}).get("cause", ""):
            return
        key = client_key(e)
        # the process's latest incarnation (an earlier one of a restarted process is not this JVM's)
        inc = max(
            (i for i in self.current.values() if i.client_key == key),
            key=lambda i: i.first_seen,
            default=None,
        )
        if inc is None or inc.end_kind in (None, REPLACED) or inc.revived_at is not None:
            return
        dropped = [t for t in (inc.end, inc.removed_at, inc.poll_timeout_at) if t is not None]
        if e.ts > max(dropped):
            inc.alive_after_end, inc.revived_at = True, e.ts

    def _m_partitions_lost(self, e: Event) -> None:
        inc = self._m_any(e)
        if inc is not None and inc.lost_at is None:
            inc.lost_at = e.ts

    def _m_partitions_revoked(self, e: Event) -> None:
        inc = self.current.get(e.member_id or "")
        if inc is not None and inc.last_member_event == EventType.SYNC_RESPONSE.value:
            # revoking right after its SyncGroup response: ConsumerCoordinator.onJoinComplete under the
            # COOPERATIVE protocol (KIP-429); an eager member revokes in onJoinPrepare, before rejoining
            self.revoked_after_sync = True
        self._m_any(e)

    def _m_join_requested(self, e: Event) -> None:
        inc = self._m_any(e)
        if inc is not None and inc.start is None and _MEMBER_ID_REQUIRED.search(e.reason or ""):
            # KIP-394: its JoinGroup without member id was answered MEMBER_ID_REQUIRED: a new member, whose
            # process joined here (not one in the group before the input)
            inc.start, inc.start_exact = e.ts, False
        if inc is not None and ENFORCED.search(e.reason or "") and not self.has_coordinator:
            inc.enforced.append((e.ts, True))  # "Request joining group due to: rebalance enforced by user"
        if _NOTICED_REBALANCE.search(e.reason or ""):
            self._noticed(inc, e.ts)
        elif inc is not None and self.round is not None:
            self.round.causes.add(inc.member_id)  # it rejoins for its own reason
        if self.round_signal is None:
            self.round_signal = e.ts
        if inc is not None and "subscription" in (e.reason or "").lower():
            self.pending_subscribe[inc.member_id] = e.ts
        if "metadata" in (e.reason or "").lower() and not self.has_coordinator:
            self.metadata_signal = e.ts  # "cached metadata has changed": the leader's rejoin

    def _m_poll_timeout_expired(self, e: Event) -> None:
        inc = self.current.get(e.member_id or "")
        if inc is not None and inc.poll_timeout_at is None:
            inc.poll_timeout_at = e.ts  # before _m_any: this event is no sign of life after a removal
        inc = self._m_any(e)
        if inc is not None and inc.end_kind is None:
            self._end(inc, POLL, e.ts)

    def _m_leave_sent(self, e: Event) -> None:
        inc = self._m_any(e)
        if inc is not None and inc.end_kind is None:
            self._end(inc, LEFT, e.ts)

    def _m_member_state_changed(self, e: Event) -> None:
        """KIP-848 client states: UNSUBSCRIBED -> JOINING starts a process; PREPARE_LEAVING is close();
        FENCED -> JOINING with the same member id is a member the coordinator dropped while it was alive."""
        attrs = e.attributes or {}
        to_state, from_state = attrs.get("to_state"), attrs.get("from_state")
        inc = self.current.get(e.member_id or "")
        if to_state == "JOINING" and e.member_id and (inc is None or inc.end_kind is not None):
            alive = inc is not None and from_state in ("FENCED", "STALE")
            if inc is not None and alive:
                inc.alive_after_end = True
            new = self._new_incarnation(e, e.member_id)
            new.start, new.start_exact = e.ts, True
            if inc is not None:
                new.subscription = inc.changes[-1][2] if inc.changes else inc.subscription
        inc = self._m_any(e)
        if inc is None:
            return
        if to_state == "RECONCILING" and from_state == "STABLE":
            inc.heartbeats.append((e.ts, KIP848_ANSWERED, None))  # a heartbeat answered with a new assignment
        if to_state == "PREPARE_LEAVING" and inc.end_kind is None and inc.poll_timeout_at is None:
            self._end(inc, LEFT, e.ts)
        elif to_state == "FENCED" and inc.end_kind is None:
            self._end(inc, RESET, e.ts)
        if to_state == "FENCED" and inc.revived_at == e.ts:
            # AbstractHeartbeatRequestManager.onErrorResponse (FENCED_MEMBER_EPOCH, UNKNOWN_MEMBER_ID) calls
            # AbstractMembershipManager.transitionToFenced: the line is the answer to its first heartbeat
            # after the pause, a round trip after it woke
            inc.revived_on_answer = True
