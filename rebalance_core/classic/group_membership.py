"""What the classic group coordinator knows of its members, and how it keeps that membership.

`Member` is ClassicGroupMember (Java group-coordinator, org.apache.kafka.coordinator.group.classic) /
MemberMetadata (Scala GroupCoordinator). `ClassicGroupMembership` is the part of `coordinator.ClassicGroup`
that adds, removes and replaces members (ClassicGroup.add / remove / replaceStaticMember, with the members
map order that picks a new leader) and resynchronises the membership on a logged member count (KIP-394
pending members joining unlogged): see the `coordinator` module docstring for when membership is known.
"""

from __future__ import annotations

from dataclasses import dataclass

from rebalance_core.events import Event

MEMBER_COUNT_MISMATCH = "member_count_mismatch"


@dataclass
class Member:
    """What the coordinator knows of a member (ClassicGroupMember / MemberMetadata)."""

    member_id: str
    group_instance_id: str | None = None
    client_id: str | None = None
    session_timeout_ms: int | None = None
    rebalance_timeout_ms: int | None = None
    subscription: list[str] | None = None


class ClassicGroupMembership:
    """The members of a `ClassicGroup` (its fields are the group's): adding, removing, replacing, counting."""

    def add_member(self, member: Member, *, with_previous: bool = False) -> None:
        """ClassicGroup.add: the first member to join an empty group becomes the leader; static ids are
        mapped. `with_previous`: added in an order no line shows relative to the previous addition."""
        pending = self.pending.pop(member.member_id, None)
        if pending is not None:  # the second JoinGroup of a KIP-394 member: keep what the first one said
            # each field by name (not a getattr loop: this runs for every JoinGroup)
            if member.group_instance_id is None:
                member.group_instance_id = pending.group_instance_id
            if member.client_id is None:
                member.client_id = pending.client_id
            if member.session_timeout_ms is None:
                member.session_timeout_ms = pending.session_timeout_ms
            if member.rebalance_timeout_ms is None:
                member.rebalance_timeout_ms = pending.rebalance_timeout_ms
            if member.subscription is None:
                member.subscription = pending.subscription
        if member.group_instance_id:
            old = self.static_members.get(member.group_instance_id)
            if old is not None and old != member.member_id and old in self.members:
                self.replace_static_member(member.group_instance_id, old, member.member_id)
                return
            self.static_members[member.group_instance_id] = member.member_id
        known = self.members.get(member.member_id)
        if known is None:
            if self.leader_id is None and self.membership_known and not self.members:
                self.leader_id, self.leader_by_order = member.member_id, False
            self.members[member.member_id] = member
            self.member_order.put(member.member_id, with_previous=with_previous)
        else:  # a rejoin: keep what the new JoinGroup does not say (each field by name, as above)
            if member.group_instance_id is not None:
                known.group_instance_id = member.group_instance_id
            if member.client_id is not None:
                known.client_id = member.client_id
            if member.session_timeout_ms is not None:
                known.session_timeout_ms = member.session_timeout_ms
            if member.rebalance_timeout_ms is not None:
                known.rebalance_timeout_ms = member.rebalance_timeout_ms
            if member.subscription is not None:
                known.subscription = member.subscription

    def remove_member(self, member_id: str, at: int | None = None) -> Member | None:
        """ClassicGroup.remove / GroupMetadata.remove: a leaving leader is replaced by the first key of
        the members map (`member_order`); None when that order is not known (no guess). Pending members
        (KIP-394) may have rejoined with their ids unlogged (the Scala coordinator logs "Pending dynamic
        member ... Adding to the group now" at DEBUG) and be in the map, maybe first: the leader is then
        not known, unless the removal was the join completion's (`leader_removed_at`, see
        `_on_join_completed`)."""
        removed = self.members.pop(member_id, None)
        self.member_order.remove(member_id)
        instance = removed.group_instance_id if removed is not None else None
        if instance and self.static_members.get(instance) == member_id:
            del self.static_members[instance]
        if self.leader_id == member_id:
            if self.pending:
                self.leader_id, self.leader_removed_at = None, at
            else:
                self.leader_id = self.member_order.first() if self.membership_known else None
                self.leader_by_order = self.leader_id is not None
        return removed

    def replace_static_member(self, instance_id: str, old_id: str, new_id: str | None) -> None:
        """ClassicGroup.replaceStaticMember (KIP-345): the new id takes the old one's place (and
        leadership); the old id is fenced. The map removes the old key and puts the new one; `new_id`
        None: the line did not name it, the old id stands for it until the replayer names the new one
        (`MemberIdentity._name_replacement`, replay_members.py)."""
        if new_id is None:
            self.member_order.remove(old_id)
            self.member_order.put(old_id, unhashed=True)
            return
        old = self.members.get(old_id)
        if old is None:
            member = Member(new_id, instance_id)
            self.members[new_id] = member
        else:
            old.member_id = new_id
            self.members = {(new_id if k == old_id else k): v for k, v in self.members.items()}
        if old_id in self.member_order.unhashed:
            self.member_order.rename(old_id, new_id)
        else:
            self.member_order.remove(old_id)
            self.member_order.put(new_id)
        if self.leader_id == old_id:
            self.leader_id = new_id
        self.static_members[instance_id] = new_id

    def member_for_instance(self, instance_id: str | None) -> str | None:
        return self.static_members.get(instance_id) if instance_id else None

    def session_timeout_of(self, member_id: str) -> int | None:
        member = self.members.get(member_id)
        return member.session_timeout_ms if member else None

    def _stated_count(self, e: Event, count: int | None) -> None:
        """A line states the group has `count` members (pending members not counted). The model resyncs
        on it: its members add up to it (membership known again), or its members and all its pending
        members do (they rejoined with their ids, a JoinGroup logged at DEBUG only); its members and some
        of its pending members: membership not known, no anomaly; else the membership is not known (one
        anomaly when the model thought it was)."""
        if count is None:
            return
        self.undetermined = None
        if count == len(self.members):
            self.membership_known = True
            return
        if self.pending and count == len(self.members) + len(self.pending):
            leader_before, batch = self.leader_id, list(self.pending.values())
            for i, member in enumerate(batch):
                self.add_member(member, with_previous=i > 0)  # their second JoinGroups: order not logged
            if leader_before is None and len(batch) > 1:
                self.leader_id = None  # the first of them into the empty map led (ClassicGroup.add): unknown
            self.membership_known = True
            return
        if len(self.members) < count < len(self.members) + len(self.pending):
            # some pending members rejoined with their ids, which ones no line says (the 3.x Scala
            # GroupCoordinator logs "Pending dynamic member with id X joins group ... Adding to the group
            # now." at DEBUG, and addMemberAndRebalance prints no "Preparing" in PreparingRebalance): the
            # count is Kafka's, the members are not known; a later stated count resynchronises, or later
            # lines showing which pending members were still pending then (`_still_pending`)
            self._membership_lost()
            self.undetermined = {
                "generation": self.generation_id,
                "members": list(self.members),
                "candidates": list(self.pending),
                "missing": count - len(self.members),
            }
            return
        if self.membership_known:
            self._anomaly(MEMBER_COUNT_MISMATCH, e, f"model has {len(self.members)}, logged {count}")
            self._membership_lost()

    def _still_pending(self, member_id: str) -> None:
        """A line shows pending member `member_id` still pending: its second JoinGroup is logged as
        "Adding new member" (it came in Stable, CompletingRebalance or Empty: addMemberAndRebalance ->
        maybePrepareRebalance; one in PreparingRebalance prints nothing at INFO), or it expired or left
        as a pending member (GroupCoordinator.onExpireHeartbeat "Pending member ... has been removed",
        "Pending member with memberId=... has left"; ClassicGroup in 4.0). A pending member joins only
        once, so it was not one of the members an `undetermined` count stated: once only as many
        candidates remain as the count missed, they are the ones, and the membership is known again."""
        pending = self.undetermined
        if pending is None or member_id not in pending["candidates"]:
            return
        pending["candidates"].remove(member_id)
        if len(pending["candidates"]) != pending["missing"]:
            return
        self.undetermined = None
        joined = [m for m in pending["candidates"] if m in self.pending]
        if len(joined) != pending["missing"]:
            return  # one of them was seen otherwise since: not resolved
        for i, member in enumerate(joined):
            # their second JoinGroups came in the join phase, after the logged ones, order not logged
            self.add_member(self.pending[member], with_previous=i > 0)
        self.membership_known = True
        self.resolved = (pending["generation"], pending["members"] + joined)

    def take_resolved(self) -> tuple[int | None, list[str]] | None:
        """The (generation, members) an `undetermined` count turned out to state, once; else None."""
        resolved, self.resolved = self.resolved, None
        return resolved

    def _membership_lost(self) -> None:
        """Changes were missed: the membership, and the members map's history, are not known; so is a
        leader the model picked from them by the map's order (a member that joined unlogged may precede)."""
        self.membership_known = False
        self.undetermined = None
        self.member_order.forget_history()
        if self.leader_by_order:
            self.leader_id, self.leader_by_order = None, False
