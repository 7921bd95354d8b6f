"""The group coordinator's lines: what the broker's log says of the group's membership.

Joins, removals (LeaveGroup, session expiry, the rebalance timeout of a join or sync phase) and static
replacements (KIP-345), as either protocol's coordinator logs them; and the classic protocol's join
phases: GroupCoordinator (2.x/3.x Scala; ClassicGroup in the 4.x group-coordinator module)
PreparingRebalance and its reasons, completed join phases and assignments. The lines only KIP-848's
GroupMetadataManager writes (epochs, target assignments, member states) are in coordinator_kip848.py.
Each `_c_<event_type>` handler records its evidence on the incarnations.
"""

from __future__ import annotations

import re

from rebalance_core.classic.coordinator import members_named_in_reason
from rebalance_core.events import Event, is_revoke_rejoin
from rebalance_core.whatif.incarnations import (
    ENFORCED,
    EXPIRED,
    FAILED,
    JOIN_COMPLETED,
    LEFT,
    REPLACED,
    RESET,
    Incarnation,
    MembershipBook,
    client_key,
)
from schemas.events import RemovalReason

# "group instanceid Some(i)" in 2.3/2.4, "group instance id Some(i)" later, "... id None" for dynamic ones
_ADDED_MEMBER = re.compile(r"Adding new member (\S+) with group instance ?id (?:Some\()?([^;)\s]+)")
_LEADER_REJOIN_IN_STABLE = re.compile(r"\bleader \S+ re-joining group during Stable", re.IGNORECASE)
_LEAVE_REASON = re.compile(r"removing member (\S+) on LeaveGroup", re.IGNORECASE)  # GroupCoordinator reason
_PREPARED_KEPT = 10_000  # recent rebalance starts kept to date a static member's crash


class CoordinatorEvidence(MembershipBook):
    """The coordinator's membership and join-phase `_c_<event_type>` handlers of TimelineExtractor, with
    the state only they gather."""

    def _init_coordinator_side(self) -> None:
        """The state of what only the coordinator's lines show (called by TimelineExtractor.__init__)."""
        self.leave_reasons: dict[str, str] = {}  # member id -> client reason of its LeaveGroup

    def _c_join_received(self, e: Event) -> None:
        attrs = e.attributes or {}
        for key, counter in (
            ("session_timeout_ms", self.session_timeouts),
            ("rebalance_timeout_ms", self.rebalance_timeouts),
        ):
            if attrs.get(key, "").isdigit():
                counter[int(attrs[key])] += 1
        if e.protocol_name:
            self.offered_protocols[e.protocol_name] += 1
        if not e.member_id:
            return
        inc = self.current.get(e.member_id)
        if inc is None or inc.end_kind is not None:
            inc = self._new_incarnation(e, e.member_id)
            inc.join_reason = e.reason
            pending = self.pending_start.pop(client_key(e), None)
            inc.start, inc.start_exact = (pending, True) if pending is not None else (e.ts, False)
        inc.last_join_at = e.ts
        if e.group_instance_id:
            inc.instance_id = e.group_instance_id
        self._identify(inc, e)
        if e.subscription:
            topics = tuple(e.subscription)
            if inc.subscription is None:
                inc.subscription = topics
            else:
                self._subscription_seen(inc, e, topics)

    def _subscription_seen(self, inc: Incarnation, e: Event, topics: tuple[str, ...]) -> None:
        current = inc.changes[-1][2] if inc.changes else inc.subscription
        if current is not None and set(current) != set(topics):
            asked = self.pending_subscribe.pop(inc.member_id, None)
            inc.changes.append((asked, True, topics) if asked is not None else (e.ts, False, topics))

    def _c_member_removed(self, e: Event) -> None:
        if e.reason == RemovalReason.FENCED_STATIC.value:
            # a request of a static instance's old member id refused (GroupCoordinator
            # .validateCurrentMember): the instance was replaced before; nothing leaves the group here
            return
        member = e.member_id or self._member_of_instance(e.group_instance_id)
        if not member:
            return
        if (e.attributes or {}).get("pending") == "true":
            # KIP-394: a JoinGroup without member id creates a pending member only (MEMBER_ID_REQUIRED);
            # removed while still pending, it never was a member (its pending JoinGroup line, the only
            # one a 3.x broker logs, made an incarnation that is dropped here)
            pending = self.current.get(member)
            if pending is not None and pending.end_kind is None and pending.start is not None:
                self.incarnations.remove(pending)
                del self.current[member]
            return
        if member not in self.current:  # in the group before the input started
            self._known(member, e)
            self._identify(self.current[member], e)
        inc = self.current[member]
        inc.removed_at, inc.removal_reason = e.ts, e.reason
        if inc.end_kind not in (None, RESET):
            return  # its own log ended it already (more exact)
        # a removal after the process sent a JoinGroup without member id: a new process had replaced it
        # (a restart while the old member's session ran), not a reset of this one
        reason = e.reason
        attrs = e.attributes or {}
        if reason == RemovalReason.SESSION_TIMEOUT.value:
            timeout = (
                int(attrs["session_timeout_ms"]) if attrs.get("session_timeout_ms", "").isdigit() else None
            )
            if timeout is not None:
                self.session_timeouts[timeout] += 1
            else:
                timeout = self._session_timeout()
            # a member that stopped heartbeating did so at expiry - session timeout (docs/metrics.md)
            self._end(inc, EXPIRED, e.ts - timeout)
        elif reason == RemovalReason.LEAVE_GROUP.value:
            self._end(inc, LEFT, e.ts, exact=False)
        elif reason == RemovalReason.PENDING_SYNC_TIMEOUT.value and self.join_completed_at is not None:
            # GroupCoordinator.removePendingSyncMembers / ClassicGroup pending sync: the member was in the
            # join phase that completed and sent no SyncGroup within the rebalance timeout, while its
            # session (shorter, else it would have expired first) did not run out: its process stopped
            # right after its JoinGroup, when the join completed. The wait is the rebalance timeout
            # (max.poll.interval.ms of a consumer).
            self.expired_rebalance_timeouts[e.ts - self.join_completed_at] += 1
            if not inc.logged and self.closed_round is not None:
                # it rejoined that join phase by its end (a member first named by this removal)
                inc.heartbeats.append((self.join_completed_at, JOIN_COMPLETED, self.closed_round.started_at))
            self._end(inc, FAILED, self.join_completed_at, exact=False)
        else:  # rebalance timeout, fenced static member: stopped when removed
            if reason == RemovalReason.REBALANCE_TIMEOUT.value and self.round is not None:
                # GroupCoordinator.onCompleteJoin: not rejoined when the join phase's DelayedJoin expired
                self.expired_rebalance_timeouts[e.ts - self.round.started_at] += 1
                inc.missed_join_phase_at = self.round.started_at
            self._end(inc, FAILED, e.ts)

    def _c_static_member_replaced(self, e: Event) -> None:
        """KIP-345: a known group.instance.id joined with a new member id and took the old one's place."""
        old_id = (e.attributes or {}).get("old_member_id") or self._member_of_instance(e.group_instance_id)
        if not e.member_id:
            # 3.0+ "Replacing previously mapped member M with this groupInstanceId" names no new id: the
            # instance stays a member (no rebalance, it keeps its assignment); when its old process
            # stopped is in no broker line
            if old_id and old_id not in self.current:
                self._known(old_id, e)
                self._identify(self.current[old_id], e)
            return
        if old_id and old_id not in self.current:  # in the group before the input started
            self._known(old_id, e)
            self._identify(self.current[old_id], e)
        old = self.current.get(old_id) if old_id else None
        new = self.current.get(e.member_id)
        if new is old:
            return  # KIP-848: the member is back under its own id, already seen rejoining
        if new is None or new.end_kind is not None:
            new = self._new_incarnation(e, e.member_id)
            pending = self.pending_start.pop(client_key(e), None)
            new.start, new.start_exact = (pending, True) if pending is not None else (e.ts, False)
        new.instance_id = e.group_instance_id
        if old is not None:
            old.successor = e.member_id
            new.subscription = old.changes[-1][2] if old.changes else old.subscription
            if old.end_kind in (None, RESET):  # its own JoinGroup without id was the new process
                old.end_kind = REPLACED  # its end instant is decided at finish()

    def _c_rebalance_prepared(self, e: Event) -> None:
        named = members_named_in_reason(e.reason)
        if named is not None and not named[2] and named[0]:
            # a member already in the group rejoined or changed ("Leader X re-joining group during
            # Stable", "Updating metadata for member X"): in the group before the input if unseen
            self._known(named[0], e)
            if named[1] and not self.current[named[0]].instance_id:
                self.current[named[0]].instance_id = self.current[named[0]].hint = named[1]
        if named is not None and not named[2] and named[0] and ENFORCED.search(e.reason or ""):
            # "Leader X re-joining group during Stable; client reason: rebalance enforced by user" (3.2+)
            self.current[named[0]].enforced.append((e.ts, False))
        self.prepared_at.append(e.ts)
        del self.prepared_at[:-_PREPARED_KEPT]
        self._open_round(e.ts)
        if (
            named is not None
            and _LEADER_REJOIN_IN_STABLE.search(e.reason or "")
            and not ENFORCED.search(e.reason or "")
            and not is_revoke_rejoin(e.reason)
        ):
            self.round.leader_rejoin = named[0]  # its cause is in no line: decided when the round closes
        # the member the reason names rejoined of its own accord (joined, left, re-joined, expired)
        self.round.causes.update(m for m in self.round.members if m in (e.reason or ""))
        # GroupCoordinator.addMemberAndRebalance: "Adding new member M with group instance id I": a member
        # whose JoinGroup line is not in the input (2.x brokers log none) joined here
        added = _ADDED_MEMBER.search(e.reason or "")
        if added and (
            added.group(1) not in self.current or self.current[added.group(1)].end_kind is not None
        ):
            inc = self._new_incarnation(e, added.group(1))
            inc.start, inc.start_exact = e.ts, False
            if added.group(2) not in (None, "None"):
                inc.instance_id = inc.hint = added.group(2)
            else:
                # GroupCoordinator.doUnknownJoinGroup (2.2+, JoinGroup v4+): a dynamic member is added by
                # its second JoinGroup, the one carrying the member id MEMBER_ID_REQUIRED gave it (the
                # wording "with group instance id" is 2.3+, brokers that all ask for it)
                inc.start_after_member_id_required = True
        # "removing member M on LeaveGroup; client reason: consumer poll timeout has expired"
        leaving = _LEAVE_REASON.search(e.reason or "")
        if leaving:
            self.leave_reasons[leaving.group(1)] = e.reason
        # ConsumerCoordinator.onJoinComplete (cooperative only, KIP-429): a member that had to revoke on
        # its sync rejoins with the client reason "need to revoke partitions and re-join"
        if is_revoke_rejoin(e.reason):
            self.revoked_after_sync = True

    def _c_join_completed(self, e: Event) -> None:
        if e.protocol_name:
            self.protocol_names[e.protocol_name] += 1
        started = self.round.started_at if self.round is not None else None
        self._close_round(e.ts)
        # who was in the group when this rebalance started is known when it is the group's first
        # generation (GroupMetadata starts at generation 0: nobody was a member) or when the input listed
        # an earlier generation's members (its member list or full assignment): then a member first seen
        # here joined during this rebalance, not before the input (2.x brokers log no JoinGroup, and a
        # join while PreparingRebalance starts no new rebalance: GroupCoordinator.maybePrepareRebalance)
        membership_known = e.generation_id == 1 or self.members_listed or bool(self.generations)
        for member in e.members or ():
            if member not in self.current and started is not None and membership_known:
                self._known(member, e)
                inc = self.current[member]
                inc.start, inc.start_exact = started, False
                # no line named an instance id for it: a dynamic member, added by its second JoinGroup
                inc.start_after_member_id_required = True
            else:
                self._known(member, e)
        if e.members:
            self.members_listed = True

    def _c_assignment_received(self, e: Event) -> None:
        if e.leader_id:
            # "Assignment received from leader L" (3.x): the leader is a member (in the group before the
            # input when no earlier line named it)
            first_generation = e.generation_id == 1 and e.leader_id not in self.current
            self._known(e.leader_id, e)
            if first_generation and self.join_completed_at is not None:
                # generation 1: the group was Empty, so the leader joined in the join phase that just
                # completed, which an Empty group holds open group.initial.rebalance.delay.ms
                # (GroupCoordinator InitialDelayedJoin / ClassicGroupJoin): finish() dates its JoinGroup
                inc = self.current[e.leader_id]
                inc.start, inc.start_exact = self.join_completed_at, False
                inc.start_after_member_id_required = inc.joined_empty_group = True
        if e.assignment:
            self._assignment_seen(e, self.prepared_at[-1] if self.prepared_at else e.ts)
            for member, tps in e.assignment.items():
                self.current[member].owns = bool(tps)
