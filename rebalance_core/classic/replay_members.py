"""The classic replayer's member identity: which member a client's line is about when it names no member
id (a JoinGroup before the coordinator gave one, KIP-394), the pending members such joins make, and static
members (KIP-345) whose instance a new member id replaced.

The rules are the client's `AbstractCoordinator` (JoinGroup without a member id, MEMBER_ID_REQUIRED,
"Successfully joined group") and the coordinator's pending members and static instances (`GroupCoordinator`
doJoinGroup / updateStaticMemberAndRebalance; `ClassicGroup` pendingMembers / staticMembers in 4.0). A mixin
of `classic.replayer.GroupReplayer`.
"""

from __future__ import annotations

from rebalance_core.classic import coordinator as co
from rebalance_core.classic.replay_state import (
    COORDINATOR_SIDE,
    JOIN_SENT,
    REBALANCE_PREPARED,
    SIGNALS,
    alias_of,
    process_of,
)
from rebalance_core.events import Event


class MemberIdentity:
    """Resolve members of client lines; pending (KIP-394) and static (KIP-345) members."""

    def _resolve_member(self, e: Event) -> str | None:
        """The member id of a member-side event; events without one belong to the member id last seen
        from the same source and client (log lines of one consumer)."""
        alias = f"{e.source or e.file or ''}|{e.client_id or ''}|{e.group_instance_id or ''}"  # alias_of(e)
        if e.member_id:
            self.aliases[alias] = e.member_id
            if self.unnamed_joins.pop(alias, None) is not None:
                self.unanswered_joins.name(alias, e)
            return e.member_id
        fresh_join = e.event_type == JOIN_SENT
        if fresh_join:
            self._note_unnamed_join(alias, e.ts)
            # a JoinGroup without a member id: a new process (or one whose member id was reset)
            previous = self.views.get(self.aliases.pop(alias, None) or "")
            if previous is not None:
                # the client's previous member id will not rejoin: nothing is awaited from it (a signal
                # just resolved to it, such as Connect's "Rebalance started" before a new worker's first
                # JoinGroup, was this new process's)
                previous.signal_ts = None
                self._removed_member_rejoins(previous)
                self._rejoin_after_lost(previous)
            if e.client_id:
                self.joining_clients.add(e.client_id)
            self.fresh_join_sent[alias] = e.ts
            if e.group_instance_id:
                self.member_timed.add(e.group_instance_id)
                self._static_restart(e)
        unknown_signal = e.event_type in SIGNALS and alias not in self.aliases
        if (fresh_join or unknown_signal) and not self.has_coordinator:
            # a new member owns nothing yet, but its join is a rebalance signal once a later line shows
            # one follows (a Connect worker's "Rebalance started" precedes its first JoinGroup)
            self._defer_fresh_join(e)
            return None
        if fresh_join or unknown_signal:
            return None
        return self.aliases.get(alias)

    def _note_unnamed_join(self, alias: str, ts: int) -> None:
        """Members' logs only: a JoinGroup line no member id goes with. Since KIP-394 (2.2) a new member's
        first JoinGroup only gets MEMBER_ID_REQUIRED and makes a pending member, not counted; its second,
        at once, carries the given id and adds the member (GroupCoordinator.doNewMemberJoinGroup /
        doCurrentMemberJoinGroup; GroupMetadataManager.classicGroupJoinNewDynamicMember in 4.0). A Connect
        worker logs that id nowhere before the JoinGroup response (WorkerCoordinator.requestRejoin logs
        "need to re-join with the given member-id" at DEBUG): a worker that dies before it is a member
        no line names (`SilentJoiner`). A further JoinGroup without an id is a new process's: the last
        one's member stays in the group until its session expires."""
        if self.has_coordinator:
            return
        lines = self.unnamed_joins.setdefault(alias, [])
        if len(lines) >= 2:
            self.unanswered_joins.new_process(alias)
            lines.clear()
        lines.append(ts)
        if len(lines) == 2:
            self.unanswered_joins.unnamed_member_joined(alias, lines[0], lines[1])

    def _new_members_signal(self, e: Event) -> bool:
        """A member-side line of a member with no id yet that only signals its own join (its first
        JoinGroup, a Connect worker's "Rebalance started" before it): it tells nothing more about whether
        a rebalance followed a deferred fresh join (`_defer_fresh_join`)."""
        return (
            e.side != COORDINATOR_SIDE
            and not e.member_id
            and e.event_type in SIGNALS
            and (e.event_type == JOIN_SENT or alias_of(e) not in self.aliases)
        )

    def _defer_fresh_join(self, e: Event) -> None:
        """Members' logs only: a JoinGroup without a member id. Since KIP-394 (2.2) the coordinator only
        answers MEMBER_ID_REQUIRED and keeps a pending member, which triggers nothing
        (GroupCoordinator.doNewMemberJoinGroup / GroupMetadataManager.classicGroupJoinNewDynamicMember);
        the member's rejoin with its new id, at once, does. Its round still starts at this first line
        (the earliest instant of the rebalance it leads to), once any later line is replayed; when the
        input ends here, no rebalance followed it in the input (`finish`)."""
        if self.fresh_join is None:
            self.fresh_join = (e.ts, e.reason, [])
        # every process whose join waits here is a joiner of the round it opens (`_alone_in_join_phase`)
        self.fresh_join[2].append(process_of(e))

    def _signal_fresh_join(self) -> None:
        ts, reason, processes = self.fresh_join
        self.fresh_join = None
        if not self.has_coordinator:
            self._member_round_signal(ts, reason, new_member=True)
            for process in processes:
                self._note_joiner(process)

    def _note_joiner(self, process: str | None) -> None:
        """Members' logs only: a process's JoinGroup line during the open join phase (`_alone_in_join_phase`)."""
        rnd = self.round
        joining = not self.has_coordinator and rnd is not None and rnd.generation_id is None
        if joining and process and process not in rnd.joiners:
            rnd.joiners.append(process)

    def _name_replacement(self, instance: str, member: str) -> None:
        """The new member id of a replaced instance whose replacement line did not print it: the first
        one the instance's own log shows after the replacement, or a broker line naming an id the group
        does not have that is the instance's (_learn_member_ids). The old id stood for it until now."""
        old = self.unnamed_replacements[instance]
        if member == old:
            return  # a line of the old process, logged before its replacement
        del self.unnamed_replacements[instance]
        if self.stable_replacements.get(instance, [None])[0] == old:
            self.stable_replacements[member] = self.stable_replacements.pop(instance)
        if old in self.group.members and self.group.member_for_instance(instance) == old:
            self.group.replace_static_member(instance, old, member)
        self.timeline.rename_member(old, member)
        self._name_stand_in_rows(old, member)
        rnd = self.round
        if rnd is not None and old in rnd.stand_ins:
            rnd.stand_ins.remove(old)
            if rnd.members is not None:
                rnd.members = [member if m == old else m for m in rnd.members]
            if rnd.leader_id == old:
                rnd.leader_id = member
        if self.leader_assignment is not None and old in self.leader_assignment:
            self.leader_assignment[member] = self.leader_assignment.pop(old)
        if old in self.assignment:
            self.assignment[member] = self.assignment.pop(old)
            if (
                self.group.state is co.GroupState.STABLE
                and self.group.generation_id == self.assignment_generation
            ):
                self._emit_assignment(
                    {member: self.assignment[member]},
                    self.assignment_generation,
                    self._event.ts,
                    self.assignment_source,
                )

    def _name_stand_in_rows(self, old: str, member: str) -> None:
        """Generations that ended while `old` stood for its instance's unnamed new id (KIP-345: a static
        member replaced while Stable; GroupCoordinator.scala 3.x and GroupMetadataManager 4.x print
        "Replacing previously mapped member <old>" without the new id) had `member` in `old`'s place:
        their rows, still in this batch, get the members and leader once no other stand-in remains."""
        for entry in self._stand_in_rows:
            row, members, leader, stand_ins = entry
            if old not in stand_ins:
                continue
            stand_ins.remove(old)
            entry[1] = members = [member if m == old else m for m in members] if members is not None else None
            entry[2] = leader = member if leader == old else leader
            if stand_ins:
                continue
            row["members"] = sorted(members) if members is not None else row["members"]
            if row["leader_member_id"] is None and leader is not None and not row["ended_empty"]:
                row["leader_member_id"] = leader
        self._stand_in_rows = [entry for entry in self._stand_in_rows if entry[3]]

    def _learn_member_ids(self, e: Event) -> None:
        """A broker line naming a member id the group does not have, while an instance's replacement is
        unnamed: a static member's id is `{group.instance.id}-{UUID}` (ClassicGroup.generateMemberId,
        GroupMetadata.generateMemberId), so the id that starts with the instance's is its new one."""
        named = co.members_named_in_reason(e.reason) if e.event_type == REBALANCE_PREPARED else None
        ids = (e.member_id, e.leader_id, (e.attributes or {}).get("old_member_id"), named and named[0])
        for member in ids:
            if not member or member in self.group.members or member in self.group.pending:
                continue
            for instance in sorted(self.unnamed_replacements):
                if e.group_instance_id == instance or member.startswith(instance + "-"):
                    self._name_replacement(instance, member)
                    break

    def _static_restart(self, e: Event) -> None:
        """A static member's new process joins with an empty member id: its old incarnation crashed
        (KIP-345); the crash instant is in no log, so its partitions stop here: the latest it can be, the
        unavailable time a lower bound (`inferred`). A close() revoked them in its own log already
        (ConsumerCoordinator.onLeavePrepare), and sent no LeaveGroup (AbstractCoordinator.maybeLeaveGroup)."""
        old = self.group.member_for_instance(e.group_instance_id)
        if old is None:
            old = next((v.member_id for v in self.views.values() if v.instance == e.group_instance_id), None)
        if old is not None and self.timeline.partitions_of(old):
            self._stop_member(old, e.ts, "member_failed", "inferred")
