"""Kafka's classic group coordinator as data: the group states, the transitions between them, and the
bookkeeping the coordinator does on each coordinator-side event (generations, leader, members, static
membership).

Modelled on `ClassicGroupState` / `ClassicGroup` (group-coordinator module,
org.apache.kafka.coordinator.group.classic) and the Scala `GroupCoordinator` / `GroupMetadata` they
replaced. Unlike Kafka, which throws on an invalid transition, a replay must survive logs that are
truncated, merged from several brokers or start mid-rebalance: an event the model says cannot happen is
recorded as an `Anomaly` (named after the rule it breaks) and the model resynchronises on the facts the
event states (a `join_completed` with generation N puts the group in CompletingRebalance at N).

Anomaly rules raised here:
  invalid_transition   the event moves the group to a state whose valid previous states exclude the
                       current one (VALID_PREVIOUS_STATES)
  generation_mismatch  the event's generation is not the one the model expects (old+1 on join completion,
                       the current one otherwise)
  state_mismatch       a join_received logged the group in another state than the model's
  unknown_member       removal/replacement of a member id the (known) membership does not have
  leader_mismatch      the SyncGroup leader differs from the leader chosen at join completion
  member_count_mismatch the logged member count differs from the (known) membership
                       (raised by the membership part, `classic.group_membership`)

Membership is known once the model has seen the whole of it (a join_completed listing members, the group
starting Empty) and stays known while every change is logged. A line that states a count the model cannot
match makes it unknown (one anomaly); the next line that states the membership (a members list, or a count
the model's members, with or without its pending members, add up to) makes it known again: no single
anomaly switches the membership off for the rest of the input. A count between the members alone and the
members with all pending ones is Kafka's own (some KIP-394 members rejoined unlogged): no anomaly, the
membership is not known until a later line states it.
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass, field
from enum import Enum

from rebalance_core.classic.group_membership import ClassicGroupMembership, Member
from rebalance_core.classic.member_order import JAVA, MemberMapOrder, release_member_map
from rebalance_core.events import Event
from rebalance_core.kafka_logs.patterns import PATTERNS
from schemas.events import EventType, RemovalReason

# the Scala members map the releases printing a coordinator line imply (member_order.release_member_map);
# the Java coordinator's lines (`.java`) are a java.util.HashMap's whatever the release
_SCALA_MAP_BY_PATTERN = {
    p.name: impl
    for p in PATTERNS
    if p.name.startswith("broker.")
    and not p.name.endswith(".java")
    and (impl := release_member_map(p.versions)) is not None
}


class GroupState(str, Enum):
    """States of a classic group (ClassicGroupState). Values are Kafka's printed names."""

    EMPTY = "Empty"
    """Group has no members, but lingers until its offsets expire (also groups that only commit offsets).

    action: accept JoinGroup from new members; UNKNOWN_MEMBER_ID to SyncGroup, Heartbeat, LeaveGroup
    transition: JoinGroup from a new member => PREPARING_REBALANCE
                offsets expired / group deleted / partition emigration => DEAD
    """

    PREPARING_REBALANCE = "PreparingRebalance"
    """Group is preparing to rebalance (the join phase).

    action: answer heartbeats and SyncGroup with REBALANCE_IN_PROGRESS; remove members on LeaveGroup;
            park JoinGroup requests until all expected members have joined or the rebalance timeout
    transition: some members have joined by the timeout => COMPLETING_REBALANCE (generation + 1)
                all members have left => EMPTY (generation + 1 all the same)
                partition emigration => DEAD
    """

    COMPLETING_REBALANCE = "CompletingRebalance"
    """Group is awaiting the leader's assignment (the sync phase; called AwaitingSync in 0.11-1.0).

    action: answer heartbeats with REBALANCE_IN_PROGRESS; park followers' SyncGroup until the leader's
    transition: leader's SyncGroup with the assignment => STABLE
                JoinGroup from a new member or with new metadata, LeaveGroup, member failure
                => PREPARING_REBALANCE
                partition emigration => DEAD
    """

    STABLE = "Stable"
    """Group is stable: every member has its assignment for the current generation.

    action: answer heartbeats normally; SyncGroup from any member with its current assignment; JoinGroup
            from a follower with unchanged metadata with the current group metadata (no rebalance); a
            static member rejoining with an unknown member id replaces its old id (KIP-345, no rebalance)
    transition: member failure (session timeout), LeaveGroup, leader JoinGroup, follower JoinGroup with
                new metadata => PREPARING_REBALANCE
                partition emigration => DEAD
    """

    DEAD = "Dead"
    """Group has no members and its metadata is being removed (offsets expired or deleted).

    action: UNKNOWN_MEMBER_ID to everything
    transition: none in Kafka (the object is dropped); a later JoinGroup creates a new group in EMPTY
                with generation 0, which the model represents as leaving DEAD
    """

    @classmethod
    def parse(cls, name: str | None) -> GroupState | None:
        """A state from its printed name (any case); `AwaitingSync` is CompletingRebalance's old name."""
        if not name:
            return None
        return _STATES_BY_KEY.get(name.strip().replace("_", "").lower())


# GroupState.parse's table (one dict look-up per broker line instead of a loop over the states)
_STATES_BY_KEY: dict[str, GroupState] = {
    **{state.value.lower(): state for state in GroupState},
    "awaitingsync": GroupState.COMPLETING_REBALANCE,
}

# ClassicGroupState's static table: the states a group must be in to move to each state.
VALID_PREVIOUS_STATES: dict[GroupState, frozenset[GroupState]] = {
    GroupState.EMPTY: frozenset({GroupState.PREPARING_REBALANCE}),
    GroupState.PREPARING_REBALANCE: frozenset(
        {GroupState.STABLE, GroupState.COMPLETING_REBALANCE, GroupState.EMPTY}
    ),
    GroupState.COMPLETING_REBALANCE: frozenset({GroupState.PREPARING_REBALANCE}),
    GroupState.STABLE: frozenset({GroupState.COMPLETING_REBALANCE}),
    GroupState.DEAD: frozenset(GroupState),
}

INVALID_TRANSITION = "invalid_transition"
GENERATION_MISMATCH = "generation_mismatch"
STATE_MISMATCH = "state_mismatch"
UNKNOWN_MEMBER = "unknown_member"
LEADER_MISMATCH = "leader_mismatch"


@dataclass
class Anomaly:
    """An event the model says cannot happen, and the state the model was in."""

    rule: str
    ts: int | None
    event_id: str | None
    event_type: str | None
    group_state: str | None
    detail: str = ""


def int_attribute(event: Event, key: str) -> int | None:
    """An integer attribute of an event; None when absent or not a number."""
    value = event.attributes.get(key) if event.attributes else None
    try:
        return int(value) if value not in (None, "") else None
    except ValueError:
        return None


# Members a "Preparing to rebalance" reason names as being in the group (GroupCoordinator 2.1-3.9 and the
# Java GroupMetadataManager: addMemberAndRebalance, updateMemberAndRebalance, the leader's rejoin, a static
# member replaced during CompletingRebalance). Wordings per release in TEMPLATES.md §1.1.
_NEW_MEMBER_REASON = re.compile(
    r"Adding new member (?P<member>[^\s;]+)"
    r"(?: with group instance ?id (?:Some\((?P<some>[^)]*)\)|None|null|(?P<bare>[^\s;]+)))?"
)
_PRESENT_MEMBER_REASON = re.compile(
    r"(?:[Ll]eader|Member|Updating metadata for member) (?P<member>[^\s;]+)(?: |$)"
    r"|Updating metadata for static member (?P<static>[^\s;]+) with instance id (?P<instance>[^\s;]+)"
)


def members_named_in_reason(reason: str | None) -> tuple[str, str | None, bool] | None:
    """(member id, group.instance.id, whether it is a new member) of the member a rebalance reason says
    is in the group, or None."""
    if not reason:
        return None
    new = _NEW_MEMBER_REASON.match(reason)
    if new:
        return new["member"], new["some"] or new["bare"], True
    present = _PRESENT_MEMBER_REASON.match(reason)
    if present:
        return present["member"] or present["static"], present["instance"], False
    return None


def _member_of(e: Event) -> Member:
    """The member a JoinGroup describes."""
    return Member(
        member_id=e.member_id,
        group_instance_id=e.group_instance_id,
        client_id=e.client_id,
        session_timeout_ms=int_attribute(e, "session_timeout_ms"),
        rebalance_timeout_ms=int_attribute(e, "rebalance_timeout_ms"),
        subscription=list(e.subscription) if e.subscription is not None else None,
    )


@dataclass
class ClassicGroup(ClassicGroupMembership):
    """One classic group as the coordinator holds it.

    `state` None and `generation_id` None mean "not known yet" (the log started mid-life): any event is
    then accepted and sets them. `membership_known` is False until the model has seen the whole
    membership (module docstring); only then are unknown-member and member-count checks made.

    `pending` are KIP-394 pending members: a JoinGroup without a member id is answered MEMBER_ID_REQUIRED
    with a new id (GroupCoordinator.doDynamicNewMemberJoinGroup with requireKnownMemberId, Java
    GroupMetadataManager classicGroupJoinNewDynamicMember): the id is only remembered, the member is not
    in the group, triggers nothing and is not counted ("The group has N members") until its second
    JoinGroup carries the id (addMemberAndRebalance).
    """

    state: GroupState | None = None
    generation_id: int | None = None
    protocol_type: str | None = None
    protocol_name: str | None = None
    leader_id: str | None = None
    members: dict[str, Member] = field(default_factory=dict)  # insertion order = join order
    static_members: dict[str, str] = field(default_factory=dict)  # group.instance.id -> member id
    membership_known: bool = False
    pending: dict[str, Member] = field(default_factory=dict)  # KIP-394 pending member ids
    anomalies: list[Anomaly] = field(default_factory=list)
    # whether a logged join or removal explains the current rebalance (lines of 0.9-2.0 name no reason)
    change_logged: bool = False
    # the coordinator's members map's iteration order (which member leads after the leader leaves)
    member_order: MemberMapOrder = field(default_factory=MemberMapOrder)
    # the instant the leader was removed while KIP-394 pending members may have been members already
    # (their second JoinGroup is logged at DEBUG): the new leader is not known then (`remove_member`)
    leader_removed_at: int | None = None
    # the leader is the model's pick by the map order (no line named it): void if the membership it was
    # picked from turns out not to be known (`_membership_lost`)
    leader_by_order: bool = False
    # a stated count some (not all) pending members made up, unlogged: which of them, later lines tell
    # (`_stated_count`, `_still_pending`): {"generation", "members", "candidates", "missing"}
    undetermined: dict | None = None
    # (generation, its members) once `undetermined` is resolved; the replayer takes it (`take_resolved`)
    resolved: tuple[int | None, list[str]] | None = None

    # ------------------------------------------------------------------------------- the machine
    def transition(self, target: GroupState, event: Event | None = None) -> bool:
        """Move to `target`; an invalid move is recorded (invalid_transition) and made anyway, since the
        event states the new state. Returns whether the move was valid."""
        valid = self.state is None or self.state in VALID_PREVIOUS_STATES[target]
        if not valid:
            self._anomaly(INVALID_TRANSITION, event, f"{self.state.value} -> {target.value}")
        self.state = target
        return valid

    def apply(self, event: Event) -> None:
        """Apply one coordinator-side event (other event types are ignored)."""
        pattern = event.attributes.get("log_pattern", "") if event.attributes else ""
        if pattern.endswith(".java") and self.member_order.impl != JAVA:
            # the Java group coordinator (3.6+) logged it: its members map is a java.util.HashMap
            self.member_order.use(JAVA)
        elif pattern in _SCALA_MAP_BY_PATTERN:
            # a Scala coordinator line only releases built for Scala 2.10-2.12 print (member_order)
            self.member_order.follow_release(_SCALA_MAP_BY_PATTERN[pattern])
        handler = _HANDLERS.get(event.event_type)
        if handler is not None:
            handler(self, event)

    # -------------------------------------------------------------------------------- snapshot
    def snapshot(self) -> dict:
        """JSON-serialisable state (pending anomalies are the caller's to drain first)."""
        return {
            "state": self.state.value if self.state else None,
            "generation_id": self.generation_id,
            "protocol_type": self.protocol_type,
            "protocol_name": self.protocol_name,
            "leader_id": self.leader_id,
            "members": [asdict(m) for m in self.members.values()],
            "static_members": dict(self.static_members),
            "membership_known": self.membership_known,
            "pending": [asdict(m) for m in self.pending.values()],
            "change_logged": self.change_logged,
            "member_order": self.member_order.snapshot(),
            "leader_removed_at": self.leader_removed_at,
            "leader_by_order": self.leader_by_order,
            "undetermined": self.undetermined,
        }

    @classmethod
    def from_snapshot(cls, state: dict) -> ClassicGroup:
        group = cls(
            state=GroupState.parse(state["state"]),
            generation_id=state["generation_id"],
            protocol_type=state["protocol_type"],
            protocol_name=state["protocol_name"],
            leader_id=state["leader_id"],
            static_members=dict(state["static_members"]),
            membership_known=state["membership_known"],
        )
        group.members = {m["member_id"]: Member(**m) for m in state["members"]}
        group.pending = {m["member_id"]: Member(**m) for m in state.get("pending", ())}
        group.change_logged = state.get("change_logged", False)
        group.leader_removed_at = state.get("leader_removed_at")
        group.leader_by_order = state.get("leader_by_order", False)
        group.undetermined = state.get("undetermined")
        if "member_order" in state:
            group.member_order = MemberMapOrder.from_snapshot(state["member_order"])
        else:
            group.member_order.fresh(group.members)
            group.member_order.forget_history()
        return group

    # ------------------------------------------------------------------------------- internals
    def _anomaly(self, rule: str, event: Event | None, detail: str) -> None:
        self.anomalies.append(
            Anomaly(
                rule=rule,
                ts=event.ts if event else None,
                event_id=event.event_id if event else None,
                event_type=event.event_type if event else None,
                group_state=self.state.value if self.state else None,
                detail=detail,
            )
        )

    def _check_generation(self, expected: int | None, event: Event) -> None:
        got = event.generation_id
        if got is not None and expected is not None and got != expected:
            self._anomaly(GENERATION_MISMATCH, event, f"expected generation {expected}, got {got}")
        if got is not None:
            self.generation_id = got

    def _recreate_if_dead(self) -> None:
        """A group deleted (Dead) and joined again is a new group: Empty, generation 0 (EXPECTED 04)."""
        if self.state is GroupState.DEAD:
            self.state = GroupState.EMPTY
            self.generation_id = 0
            self.leader_id = None
            self.protocol_name = None
            self.members.clear()
            self.static_members.clear()
            self.pending.clear()
            self.member_order.fresh()
            self.membership_known = True

    # ------------------------------------------------------------------------------- handlers
    def _on_join_received(self, e: Event) -> None:
        self._recreate_if_dead()
        logged = GroupState.parse(e.attributes.get("state")) if e.attributes else None
        if logged is not None and logged is not GroupState.DEAD:
            if self.state is not None and logged is not self.state:
                self._anomaly(STATE_MISMATCH, e, f"logged {logged.value}")
            self.state = logged
            if logged is GroupState.EMPTY and not self.members:
                self.membership_known = True
        if e.protocol_type and not self.protocol_type:
            self.protocol_type = e.protocol_type
        if not e.member_id:
            return
        if (e.attributes or {}).get("pending") == "true" and e.member_id not in self.members:
            self.pending[e.member_id] = _member_of(e)  # KIP-394: not a member yet, triggers nothing
            return
        self.change_logged = True
        self.add_member(_member_of(e))

    def _on_rebalance_prepared(self, e: Event) -> None:
        if self.state is GroupState.DEAD and e.generation_id in (None, 0):
            self._recreate_if_dead()  # the join that recreated the group was not logged
        state_before = self.state
        self._note_named_member(e)
        self._first_member_of_new_group(e, state_before)
        if e.generation_id == 0 and self.state in (GroupState.EMPTY, None) and self.membership_known:
            # the group's first rebalance: its members map was created empty (any earlier member would
            # have left through a rebalance that consumed a generation)
            self.member_order.fresh()
            for i, member in enumerate(self.members):
                self.member_order.put(member, with_previous=i > 0)
        if self.state is not GroupState.PREPARING_REBALANCE:
            if not e.reason and not self.change_logged:
                # 0.9-2.0 print no reason, and a new member's JoinGroup is not logged: someone joined
                self._membership_lost()
            self.change_logged = False
        self.transition(GroupState.PREPARING_REBALANCE, e)
        self._check_generation(self.generation_id, e)  # generation_id = OLD generation

    def _first_member_of_new_group(self, e: Event, state_before: GroupState | None) -> None:
        """A rebalance prepared at old generation 0 from Empty, for "Adding new member X": the group never
        completed a join phase (each completion consumes a generation, even to Empty), so its members map
        was empty until X's JoinGroup, which moved it out of Empty (addMemberAndRebalance ->
        maybePrepareRebalance; a later joiner finds it PreparingRebalance and prints no Preparing). X is
        its first member and leader (ClassicGroup.add / GroupMetadata.add: the first member of an empty
        group leads). Only the leader is taken from this: the members map's order is not (which of its
        other members joined unlogged, and in which order, no line says), so neither is a later leader
        picked by that order (`remove_member`)."""
        named = members_named_in_reason(e.reason)
        if (
            e.generation_id != 0
            or state_before not in (None, GroupState.EMPTY)
            or named is None
            or not named[2]
            or set(self.members) - {named[0]}
        ):
            return
        if self.leader_id is None and named[0] in self.members:
            self.leader_id, self.leader_by_order = named[0], False

    def _note_named_member(self, e: Event) -> None:
        """The member a rebalance reason names is in the group (the one that joins, rejoins or is
        updated): it belongs to the next generation's member list."""
        named = members_named_in_reason(e.reason)
        if named is None:
            return
        member_id, instance, new = named
        if e.reason.lower().startswith("leader "):
            self.leader_id, self.leader_by_order = (
                member_id,
                False,
            )  # "Leader X re-joining group during Stable"
        if member_id in self.members:
            return
        if member_id in self.pending:
            self._still_pending(member_id)
            self.add_member(self.pending[member_id])
            return
        if not new and self.membership_known:
            self._anomaly(UNKNOWN_MEMBER, e, f"member {member_id} is not in the group")
            self._membership_lost()  # something was missed; the next stated count resynchronises
        self.add_member(Member(member_id, instance))

    def _on_join_completed(self, e: Event) -> None:
        expected = self.generation_id + 1 if self.generation_id is not None else None
        self.transition(GroupState.COMPLETING_REBALANCE, e)
        self._check_generation(expected, e)
        if e.members is not None:
            # authoritative membership: keep known details, drop members that did not rejoin
            listed = list(e.members)
            for gone in [m for m in self.members if m not in listed]:
                self.remove_member(gone)
            for m in listed:
                if m not in self.members:
                    self.add_member(self.pending.get(m) or Member(m))
            self.membership_known = True
        else:
            self._stated_count(e, e.member_count)
            if self.membership_known and not self.members:
                self._membership_lost()  # a generation has members: their joins were not logged
        if self.leader_id is None and self.leader_removed_at == e.ts and self.membership_known:
            # the leader was removed at this join completion (GroupCoordinator.onCompleteJoin removes the
            # members that did not rejoin, then completes): every member of the generation had joined, so
            # the map held exactly them: its first key leads (`members.keys.headOption`)
            self.leader_id = self.member_order.first()
            self.leader_by_order = self.leader_id is not None
        self.leader_removed_at = None
        if self.leader_id is None and self.membership_known and len(self.members) == 1:
            # a generation's leader is one of its members (ClassicGroup.add / maybeElectNewJoinedLeader,
            # GroupMetadata in the Scala coordinator): the only member leads it
            self.leader_id, self.leader_by_order = next(iter(self.members)), False
        if e.leader_id:
            self.leader_id, self.leader_by_order = e.leader_id, False
        if e.protocol_name:
            self.protocol_name = e.protocol_name
        if e.protocol_type:
            self.protocol_type = e.protocol_type

    def _on_assignment_received(self, e: Event) -> None:
        self.transition(GroupState.STABLE, e)
        self._check_generation(self.generation_id, e)
        if e.leader_id:
            if self.leader_id is not None and e.leader_id != self.leader_id:
                self._anomaly(LEADER_MISMATCH, e, f"model leader {self.leader_id}, logged {e.leader_id}")
            self.leader_id, self.leader_by_order = e.leader_id, False
            if e.leader_id not in self.members:
                self.add_member(self.pending.get(e.leader_id) or Member(e.leader_id))
        if e.assignment:
            for m in e.assignment:
                if m not in self.members:
                    self.add_member(self.pending.get(m) or Member(m))
        self._stated_count(e, e.member_count)

    def _on_group_stable(self, e: Event) -> None:
        if self.state is not GroupState.STABLE:
            self.transition(GroupState.STABLE, e)
        self._check_generation(self.generation_id, e)

    def _on_member_removed(self, e: Event) -> None:
        member_id = e.member_id or self.member_for_instance(e.group_instance_id)
        if member_id is None:
            return
        if (e.attributes or {}).get("pending") == "true":
            self._still_pending(member_id)  # a pending member expired or left: it never was in the group
            self.pending.pop(member_id, None)
            return
        if self.pending.pop(member_id, None) is not None:
            # a member the model had as pending: it joined unlogged (when, no line says)
            self.undetermined = None
            return
        self.change_logged = True
        if member_id not in self.members:
            if self.membership_known and e.reason != RemovalReason.FENCED_STATIC.value:
                self._anomaly(UNKNOWN_MEMBER, e, f"member {member_id} is not in the group")
            return
        timeout = int_attribute(e, "session_timeout_ms")
        if timeout is not None:
            self.members[member_id].session_timeout_ms = timeout
        self.remove_member(member_id, e.ts)

    def _on_static_member_replaced(self, e: Event) -> None:
        instance = e.group_instance_id
        old = (e.attributes or {}).get("old_member_id") or self.member_for_instance(instance)
        if not instance:
            return
        if not e.member_id:  # the 3.x line names the old id only: it stands for the new one
            if old in self.members:
                self.replace_static_member(instance, old, None)
            return
        if old is None or old not in self.members:
            if self.membership_known:
                self._anomaly(UNKNOWN_MEMBER, e, f"no member {old} for instance {instance}")
        else:
            self.replace_static_member(instance, old, e.member_id)
        self.add_member(_member_of(e))  # the rejoin's own metadata (subscription, timeouts)

    def _on_group_empty(self, e: Event) -> None:
        expected = self.generation_id + 1 if self.generation_id is not None else None
        self.transition(GroupState.EMPTY, e)
        self._check_generation(expected, e)
        for member in list(self.members):
            self.member_order.remove(member)  # the map keeps its table
        self.members.clear()
        self.static_members.clear()
        self.leader_id = None
        self.protocol_name = None
        self.membership_known = True
        self.change_logged = False

    def _on_group_dead(self, e: Event) -> None:
        self.transition(GroupState.DEAD, e)
        if e.generation_id is not None:
            self.generation_id = e.generation_id
        self.members.clear()
        self.static_members.clear()
        self.pending.clear()
        self.leader_id = None

    def _on_group_loaded(self, e: Event) -> None:
        """A coordinator took the group over (GroupMetadataManager.loadGroup): Empty without members,
        else Stable, at the logged generation."""
        if e.generation_id is not None:
            self.generation_id = e.generation_id
        self._stated_count(e, e.member_count)  # Java: "Loaded classic group g with N members."
        # a new GroupMetadata / ClassicGroup, its members added in the stored record's order
        self.member_order.fresh(self.members)
        if not self.membership_known:
            self.member_order.forget_history()
        if self.membership_known:
            self.state = GroupState.STABLE if self.members else GroupState.EMPTY
        else:
            self.state = None

    def _on_leader_elected(self, e: Event) -> None:
        """GroupMetadata / ClassicGroup.maybeElectNewJoinedLeader: the leader did not rejoin before the join
        phase ended, the first member in the members map that did leads the generation about to complete
        (the line names it: no map order needed)."""
        if e.leader_id:
            self.leader_id, self.leader_by_order = e.leader_id, False

    def _on_group_unloaded(self, e: Event) -> None:
        self.state = None  # another coordinator owns it now; its next event tells the state


_HANDLERS = {
    EventType.JOIN_RECEIVED.value: ClassicGroup._on_join_received,
    EventType.REBALANCE_PREPARED.value: ClassicGroup._on_rebalance_prepared,
    EventType.JOIN_COMPLETED.value: ClassicGroup._on_join_completed,
    EventType.ASSIGNMENT_RECEIVED.value: ClassicGroup._on_assignment_received,
    EventType.GROUP_STABLE.value: ClassicGroup._on_group_stable,
    EventType.LEADER_ELECTED.value: ClassicGroup._on_leader_elected,
    EventType.MEMBER_REMOVED.value: ClassicGroup._on_member_removed,
    EventType.STATIC_MEMBER_REPLACED.value: ClassicGroup._on_static_member_replaced,
    EventType.GROUP_EMPTY.value: ClassicGroup._on_group_empty,
    EventType.GROUP_DEAD.value: ClassicGroup._on_group_dead,
    EventType.GROUP_LOADED.value: ClassicGroup._on_group_loaded,
    EventType.GROUP_UNLOADED.value: ClassicGroup._on_group_unloaded,
}
