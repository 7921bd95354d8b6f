"""The classic replayer's member side, syncing: the leader's computed assignment and each member's
SyncGroup response, checked against each other, turned into the partitions a member starts and stops.

The rules are the client's `AbstractCoordinator` (SyncGroupResponseHandler, onJoinComplete) and
`ConsumerCoordinator` (onLeaderElected / performAssignment, onJoinComplete: eager vs cooperative, KIP-429),
and the coordinator's `GroupCoordinator` doSyncGroup / `ClassicGroup` (4.0). A mixin of
`classic.replayer.GroupReplayer`.
"""

from __future__ import annotations

from rebalance_core.assignors.protocols import KIP415_PROTOCOLS
from rebalance_core.classic import coordinator as co
from rebalance_core.classic.replay_state import (
    MemberView,
    PendingApply,
    Round,
    connect_tasks,
)
from rebalance_core.events import Event, TopicPartition, classic_member_owner


class SyncLines:
    """Handlers of the leader's assignment and a member's SyncGroup response (ConsumerCoordinator)."""

    def _m_assignment_computed(self, e: Event, view: MemberView) -> None:
        gen = e.generation_id if e.generation_id is not None else view.generation_id
        if not e.assignment:
            return
        if self._superseded(gen):
            self._late_leader_named(gen, view.member_id, e.assignment)
            return
        self._check_assignment(e.assignment, e)
        assignment = {m: sorted(tps) for m, tps in e.assignment.items()}
        for member in assignment:
            if member not in self.member_timed:
                self._claim_logged_join(member, classic_member_owner(member))
        self._learn_topics([tp for tps in assignment.values() for tp in tps])
        rnd = (
            self._member_round(gen, view.signal_ts, e.ts)
            if not self.has_coordinator and gen is not None
            else None
        )
        if rnd is not None:
            rnd.members = sorted(set(rnd.members or []) | set(assignment))
            rnd.member_count = len(rnd.members)
            rnd.leader_id = rnd.leader_id or view.member_id
            rnd.members_listed = True
            self._left_out_members_removed(assignment)
        elif self.round is not None and self.round.generation_id == gen:
            # a broker line that names neither the leader nor the members (2.x "Assignment received from
            # leader for group G for generation N"): only the leader runs the assignor
            # (AbstractCoordinator.onJoinLeader), over every member of the generation
            # (ConsumerCoordinator.onLeaderElected assigns each member, partitions or none)
            self.round.leader_id = self.round.leader_id or view.member_id
            if self.round.members is None:
                self.round.members = sorted(assignment)
                self.round.member_count = self.round.member_count or len(assignment)
        elif not self.has_coordinator:  # a generation whose round closed already (the next one is open)
            self._late_leader_named(gen, view.member_id, assignment)
        self.leader_assignment = assignment  # rows when the group turns Stable: the SyncGroup may fail

    def _late_leader_named(self, gen: int | None, leader: str | None, assignment: dict) -> None:
        """A leader logged its assignment for generation `gen` after the replay wrote that generation's
        row: a leader that paused after its JoinGroup (members' logs only: the followers' JoinGroup
        responses do not name the leader at INFO), or one whose generation a rebalance interrupted in
        CompletingRebalance (refused at SyncGroup). The line still states who led `gen` and its members:
        the coordinator answers exactly one member of a generation as its leader, and only that member
        runs the assignor (AbstractCoordinator.onJoinLeader -> ConsumerCoordinator.onLeaderElected,
        "Finished assignment for group at generation N"), over every member of the generation, each
        listed, with partitions or none. Its row, while it is still unwritten (not drained yet), gets
        the leader and the member list it lacked; a row flushed already keeps its nulls, and a row whose
        stated count differs keeps them too."""
        if gen is None or leader is None:
            return
        row = next((r for r in reversed(self._out["generations"]) if r["generation_id"] == gen), None)
        if row is None or row["ended_empty"] or row["member_count"] not in (None, len(assignment)):
            return
        if row["leader_member_id"] is None and leader in assignment:
            row["leader_member_id"] = leader
        if row["members"] is None:
            row["members"] = sorted(assignment)
            row["member_count"] = len(assignment)

    def _left_out_members_removed(self, assignment: dict[str, list[TopicPartition]]) -> None:
        """Members' logs only: the leader's assignment lists every member of the new generation. A dynamic
        member of the previous generation it leaves out had not rejoined when the join phase completed,
        and the coordinator removed it then (GroupCoordinator.onCompleteJoin: "remove dynamic members who
        haven't joined the group yet"; GroupMetadataManager.completeClassicGroupJoin in 4.0): a member
        whose log stopped after a rebalance signal (it stalled or died) is no longer awaited, so its
        signal does not hold the episode open (`_maybe_end_episode`). Should its process go on, its
        next request finds its member id unknown (its log: lost partitions, a JoinGroup without id)."""
        previous = self.remaining_members
        if not previous:
            return
        for view in self.views.values():
            member = view.member_id
            if (
                view.signal_ts is not None
                and not view.instance
                and member in previous
                and member not in assignment
            ):
                if view.signal_unanswered():
                    # nor did it send the JoinGroup its signal asked for: its poll loop never got to
                    # onJoinPrepare, so a stop at its signal is the latest it can be (`_stop_never_acted_on`)
                    self.timeline.stops_inferred(member)
                view.signal_ts = None

    def _claim_logged_join(self, member: str, client_id: str | None) -> None:
        """`member` is the member id the coordinator gave the JoinGroup of `client_id`, whose own log showed
        that join without a member id: member timing for it from now on. Its own log names the id only in
        its JoinGroup response when KIP-394's MEMBER_ID_REQUIRED round is not at INFO (2.x clients:
        AbstractCoordinator.JoinGroupResponseHandler logs it at DEBUG), which can come after the leader's
        assignment and another member's sync turned the group Stable; coordinator timing would start its
        partitions there and its own join response revoke them again. The leader's assignment names it
        first: a dynamic member id is `{client.id}-{UUID}` (GroupMetadata / ClassicGroup.generateMemberId)."""
        if client_id is not None and client_id in self.joining_clients:
            self.joining_clients.remove(client_id)
            self.member_timed.add(member)
            self.claimed_new.add(member)

    def _superseded(self, gen: int | None) -> bool:
        """The broker's log shows the group already left generation `gen` (or is rebalancing again):
        a leader's assignment computed for it is refused at SyncGroup (REBALANCE_IN_PROGRESS). Members'
        logs only: a later generation was already logged (a leader that handled its JoinGroup response
        late, random:497): its SyncGroup gets ILLEGAL_GENERATION (GroupCoordinator.handleSyncGroup /
        ClassicGroup.validateSyncGroup), and that generation's row is out already: no round of its own."""
        group = self.group
        if not self.has_coordinator:
            rnd = self.round
            latest = rnd.generation_id if rnd is not None and rnd.generation_id is not None else None
            latest = latest if latest is not None else self.closed_generation
            return gen is not None and latest is not None and gen < latest
        if gen is None or group.generation_id is None or group.state is None:
            return False
        syncing = group.state in (co.GroupState.COMPLETING_REBALANCE, co.GroupState.STABLE)
        return gen != group.generation_id or not syncing

    def _late_worker_leader_named(self, gen: int | None, leader: str) -> None:
        """A Connect worker's "Joined group at generation N ... Assignment{leader='L'}" line came after the
        replay wrote generation N's row: another worker's JoinGroup opened the next round before this one
        synced. The line still states N's leader: the assignment a worker gets in N is the one N's leader
        computed, and names it (WorkerCoordinator.onJoinLeader -> ConnectProtocol / IncrementalCooperative
        ConnectProtocol Assignment.leader, the JoinGroup response's leader). The row, while still unwritten
        (not drained yet), gets the leader it lacked unless its member list leaves the leader out."""
        if gen is None:
            return
        row = next((r for r in reversed(self._out["generations"]) if r["generation_id"] == gen), None)
        if row is None or row["ended_empty"] or row["leader_member_id"] is not None:
            return
        if row["members"] is None or leader in row["members"]:
            row["leader_member_id"] = leader

    def _m_sync_response(self, e: Event, view: MemberView) -> None:
        gen = e.generation_id if e.generation_id is not None else view.generation_id
        synced_before = view.synced_generation is not None
        view.generation_id = gen
        view.signal_ts = None
        member = view.member_id
        rejoined = view.rejoin_since is not None and gen == view.synced_generation
        if rejoined:
            self.timeline.member_rejoined(e.ts, e.ts - view.rejoin_since)
        view.rejoin_since = None
        view.synced_generation = gen
        rnd = self._member_round(gen, None, e.ts) if not (self.has_coordinator or rejoined) else None
        if e.leader_id:
            # Connect's assignment line names the leader (DistributedHerder "Joined group at generation N
            # ... Assignment{leader='...'}", ConnectProtocol.Assignment): it fills the generation's leader
            # (not the round a revoking worker's follow-up rejoin opened while this generation's other
            # workers still log their assignments: that one's leader is the next generation's)
            named = rnd if rnd is not None else self.round
            of_closed = named is self.round and self._next_round_open(gen)
            if (
                named is not None
                and named.generation_id in (None, gen)
                and named.leader_id is None
                and not of_closed
            ):
                named.leader_id = e.leader_id
            elif not self.has_coordinator:  # the generation's round closed already (the next one is open)
                self._late_worker_leader_named(gen, e.leader_id)
        replacing = False  # `view` may have replaced an earlier process of its instance (KIP-345)
        if rnd is not None:
            if rnd.members is None:
                rnd.members = [member]
            elif member not in rnd.members:
                rnd.members.append(member)
            rnd.member_count = max(rnd.member_count or 0, len(rnd.members))
            if not rnd.stable:
                self._stabilize(e.ts, "observed")  # the group is Stable once its first member synced
            rnd.stabilized_at = max(rnd.stabilized_at or e.ts, e.ts)
            self.timeline.round_completed(rnd.generation_id, rnd.stabilized_at)
            replacing = not synced_before and self._may_replace_unlogged_instance(view, rnd)
            if replacing:
                episode = self.timeline.episode
                if episode is not None and episode.episode_id == rnd.episode_id:
                    episode.source = "inferred"
        assigned, source = self._synced_partitions(e, member)
        attributes = e.attributes or {}
        if rnd is not None:
            if "revoked" in attributes:
                rnd.revocations_stated_by.add(member)
            else:
                rnd.revocations_unstated = True
        delay = attributes.get("delay_ms", "")
        if delay.isdigit() and int(delay) > 0:
            self.follow_up_due = True  # KIP-415: the delayed rebalance belongs to this episode
        revoking = attributes.get("revoked") or attributes.get("revoked_connectors")
        if revoking and not self._next_round_open(gen):
            # Connect: revoked connectors or tasks -> the worker rejoins (KIP-415,
            # DistributedHerder.handleRebalanceCompleted); a consumer's "Revoked partitions" -> it
            # rejoins (KIP-429): the round after, unless already open
            self.follow_up_due = True
        if "owned" in attributes and e.protocol_type == "consumer" and self.rebalance_protocol is None:
            # ConsumerCoordinator.onJoinComplete logs "Updating assignment with" (owned / added / revoked)
            # under the COOPERATIVE protocol only (2.4+, KIP-429): the group is cooperative even where no
            # line names the protocol and what the member owned before the log is unknown
            self.rebalance_protocol = "cooperative"
        if assigned is None:
            self._emit_incremental_assignment(e, member, gen, synced_before)
            return
        self._learn_topics(assigned)
        self._emit_assignment({member: assigned}, gen, e.ts, source)
        self._replaced_assignment(member, assigned, gen, e.ts)
        self.assignment[member] = assigned
        if replacing and view.joined_fresh:
            self._earlier_process_unseen(view, assigned)
        owned = self.timeline.partitions_of(member)
        to_stop = sorted(owned - set(assigned))
        to_start = sorted(set(assigned) - owned)
        if to_stop:
            # KIP-429: the member revokes and rejoins at once (the round after, unless already open)
            self.follow_up_due = self.follow_up_due or not self._next_round_open(gen)
            if self.rebalance_protocol is None:
                self.rebalance_protocol = "cooperative"
        view.pending = PendingApply(e.ts, gen, to_start, to_stop, source)
        if not to_start and not to_stop and e.protocol_type == "connect":
            # a Connect worker logs no callback for an assignment that starts and stops nothing: its
            # "Joined group" line is all of it, applied now (DistributedHerder.onAssigned)
            view.pending = None

    def _may_replace_unlogged_instance(self, view: MemberView, rnd: Round) -> bool:
        """Members' logs only: a static member's process syncs its first generation, led by a member
        whose log the view lacks (it computed no assignment here) and which no other logged member
        joined. Its JoinGroup may have replaced the instance's earlier process in a Stable group (KIP-345:
        GroupCoordinator.updateStaticMemberAndRebalance, ClassicGroup.replaceStaticMember: the new
        member id takes the old one's assignment in the same generation, no rebalance), whose log the
        view lacks too: what that process consumed and when it stopped is in no line, so the episode's
        partition measures are a guess (`inferred`), not a rebalance of a group that owned nothing."""
        return (
            not self.has_coordinator
            and bool(view.instance)
            and rnd.leader_id != view.member_id
            and rnd.leader_id not in self.views
            and not any(v.generation_id == rnd.generation_id for v in self.views.values() if v is not view)
        )

    def _earlier_process_unseen(self, view: MemberView, assigned: list[TopicPartition]) -> None:
        """`view`, a new process (its JoinGroup without a member id is in the input), may have replaced its
        instance's earlier process (`_may_replace_unlogged_instance`), which then held what `view` syncs (KIP-345: the new member id takes the old one's assignment in
        the same generation, GroupMetadata.replaceStaticMember / ClassicGroup.replaceStaticMember). No
        line of the view names that process or shows when it stopped: each partition the timeline never
        saw gets a movement row from it, with `from_member_id`, `revoked_at` and `unavailable_ms` null
        and `source` `inferred` (as a broker-only static restart, `OwnershipTimeline.restart`): the idle
        time is unknown, not 0. Not moved: the same instance."""
        for tp in assigned:
            if self.timeline.assume(tp, None, instance=view.instance):
                self.timeline.stop(tp, None, None, "member_failed", instance=view.instance, source="inferred")

    def _emit_incremental_assignment(self, e: Event, member: str, gen, synced_before: bool) -> None:
        """Connect's incremental cooperative protocol (KIP-415): a worker's assignment line prints what it
        is given and what it must revoke (IncrementalCooperativeAssignor sends the increments in the
        ExtendedAssignment; DistributedHerder logs it), not all it runs. What it runs after this generation
        = what it ran - revoked + added: known when its log showed every generation since its first
        JoinGroup without a member id (a new worker runs nothing), else not emitted. The rows are
        `inferred`: rebuilt from increments, and no line lists the generation's workers (the leader logs
        no assignment), so a worker that died after its JoinGroup is in none of them."""
        if self.protocol_name not in KIP415_PROTOCOLS:
            return
        attributes = e.attributes or {}
        new_process = member in self.claimed_new
        self.claimed_new.discard(member)
        if synced_before:
            previous = self.assignment.get(member)
        else:
            # a new worker runs nothing; its log shows its JoinGroup without a member id, and the
            # coordinator's line for it may have claimed that join already (a 4.x broker logs the
            # KIP-394 second JoinGroup, the worker's "need to re-join with the given member-id" is
            # WorkerCoordinator.requestRejoin's DEBUG: its second "(Re-)joining group" looks fresh too)
            previous = [] if e.client_id in self.joining_clients or new_process else None
        if previous is None:
            return
        revoked, added = (connect_tasks(attributes.get(key)) for key in ("revoked", "added"))
        now = sorted((set(previous) - revoked) | added)
        self.assignment[member] = now
        self._emit_assignment({member: now}, gen, e.ts, "inferred")

    def _await_replaced_assignment(self, instance: str | None, old: str, new: str | None) -> None:
        """A static member replaced while Stable whose old id's assignment no line of the view showed
        (its process logged nothing, and a broker line prints no assignment): the new id's SyncGroup in
        the same generation will show it (`_replaced_assignment`). Keyed by the new id, or by the
        instance until a line names the new id (`_name_replacement`)."""
        key = new or instance
        if key:
            self.stable_replacements[key] = [old, self.group.generation_id]

    def _replaced_assignment(self, member: str, assigned: list[TopicPartition], gen, ts: int) -> None:
        """KIP-345: replacing a static member while Stable moves its member metadata, assignment
        included, to the new member id (GroupMetadata.replaceStaticMember / ClassicGroup.replaceStaticMember)
        and the new id's SyncGroup in that generation answers with it (GroupCoordinator.doSyncGroup,
        Stable: the stored assignment). So what the new id synced is what the old id held in the same
        generation: its rows, `inferred` (no line of the view printed them)."""
        replaced = self.stable_replacements.pop(member, None)
        if replaced is not None and replaced[1] == gen:
            self._emit_assignment({replaced[0]: assigned}, gen, ts, "inferred")

    def _next_round_open(self, gen: int | None) -> bool:
        """Whether a round after generation `gen` is open already: a member's SyncGroup response for
        `gen` logged after another member's rejoin opened the next round. Its revoke-rejoin
        (ConsumerCoordinator.onJoinComplete -> requestRejoin) joins that rebalance, which is the
        follow-up; no further round is due because of it."""
        rnd = self.round
        return (
            gen is not None and gen == self.closed_generation and rnd is not None and rnd.generation_id != gen
        )
