"""The classic replayer's member list of a generation in members' logs only: whether the members whose own
lines name a generation are all of it, or a member whose log shows nothing of it may be in it (a JoinGroup
no line answered, a static member that did not rejoin, a host whose log is not in the input), and whether
the assignment its members' lines state is the whole one.

The rules are the coordinator's join phase and member removal (`GroupCoordinator` onCompleteJoin,
removeMemberAndUpdateGroup, setAndPropagateAssignment; `ClassicGroup` in 4.0), the client's
`AbstractCoordinator` / `ConsumerCoordinator` (JoinGroup, onLeaderElected) and Kafka's assignors; the
JoinGroups no line answered are tracked by `unanswered_joins.UnansweredJoins`. A mixin of
`classic.replayer.GroupReplayer`.
"""

from __future__ import annotations

from rebalance_core.assignors import CLIENT_ASSIGNORS
from rebalance_core.classic.replay_state import Round
from rebalance_core.events import classic_member_owner


class MemberList:
    """Members' logs only: whether a generation's logged members are its whole member list."""

    def _assignment_incomplete(self, rnd: Round, members: list[str] | None) -> bool:
        """Members' logs only: a member of the generation (its JoinGroup response names it) whose log states
        no assignment for it, and no leader's line listing it. Each consumer learns only its own partitions
        (ConsumerCoordinator.onJoinComplete logs them after its SyncGroup response); the leader's
        "Finished assignment for group at generation N" (ConsumerCoordinator.onLeaderElected, INFO 2.4+) is
        the one line naming everyone's. One that died or stalled between its JoinGroup response and its
        SyncGroup is still assigned partitions (the leader assigns every member of the JoinGroup response,
        the coordinator stores them: GroupCoordinator.setAndPropagateAssignment): the rows the others' lines
        give are not the generation's whole assignment, so it is `inferred`, not a confident partial one."""
        if self.has_coordinator or members is None or rnd.ended_empty or rnd.generation_id is None:
            return False
        stated = self.emitted if self.emitted_generation == rnd.generation_id else set()
        return not set(members) <= stated

    def _hidden_member_excluded(self, rnd: Round, members: list[str]) -> bool:
        """Members' logs only, no leader's line listing generation `rnd`: whether the assignment the
        logged members state for it rules out a member whose log is not in the input (a host not
        collected, a non-Java client). The leader assigns every member of the JoinGroup response
        (ConsumerCoordinator.onLeaderElected), and Kafka's assignors give each member subscribed to a
        topic at least one of its partitions when the topic has more partitions than members:
        RangeAssignor (floor(partitions / subscribers) each), RoundRobinAssignor (a topic's partitions
        are consecutive in its sorted order and go to its subscribers in turn), the sticky assignors
        (balanced: no subscriber holds none while another holds two). So when every partition of every
        known topic (`ReplaySettings.topics`; not the counts learned from the partitions lines name, a
        lower bound) is in the members' stated assignments and
        each topic has more partitions than the generation has stated members, no other member shares
        those topics. A custom assignor, unknown topics, or a gap: the list is inferred. (A member of
        topics no setting names stays undetectable from these logs.)"""
        protocol = rnd.protocol_name or self.protocol_name
        topics = self.settings.topics
        if protocol not in CLIENT_ASSIGNORS or not topics:
            return False
        if any(count <= len(members) for count in topics.values()):
            return False
        covered = set()
        gen = rnd.generation_id
        for row in reversed(self._out["assignments"]):
            if row["generation_id"] != gen:
                if row["generation_id"] is not None and gen is not None and row["generation_id"] < gen:
                    break
                continue
            if row["member_id"] in members:
                covered.add((row["topic"], row["partition"]))
        return all(
            (topic, partition) in covered
            for topic, count in self.topics.items()
            for partition in range(count)
        )

    def _silent_joiner_may_be_in(self, rnd: Round) -> bool:
        """Members' logs only, no leader's assignment line for the generation (a Connect leader logs none),
        so the members' own lines are the member list: whether a member whose log shows a JoinGroup and
        nothing answering it (it died or stalled after sending it) may be in generation `rnd`. A JoinGroup that reached the coordinator
        before the join phase completed is in the generation it completes (GroupCoordinator.onCompleteJoin
        / ClassicGroup: every member that joined): one sent before another the phase still awaited (a
        member of the generation sent it later), or more than twice the worker's own round trip
        (KIP-394's two JoinGroups) before the first response naming the generation (the coordinator answers every
        member at once on completion). One sent later may have missed it (its response, if logged,
        names the next generation). A dynamic member that does not rejoin is in that generation only: the
        next join phase's completion removes it (GroupCoordinator.onCompleteJoin), if its session did not
        expire first. A static one stays until its session expires (heartbeat expiration is scheduled at
        the join's completion, GroupCoordinator.completeAndScheduleNextHeartbeatExpiration):
        session.timeout.ms from the first generation it may be in (its config dump or
        `ReplaySettings.session_timeout_ms`; unknown: every later generation)."""
        formed = rnd.join_completed_at if rnd.join_completed_at is not None else rnd.stabilized_at
        if formed is None:
            return False
        views_may_be_in = self.unanswered_joins.views_may_be_in(
            self.views,
            rnd,
            formed,
            lambda member: self._configured_session_timeout(member) or self.settings.session_timeout_ms,
            self.settings.clock_skew_ms,
        )
        # every silent joiner's state advances with each generation, whatever the views say
        skew = self.settings.clock_skew_ms  # a silent joiner's log shows nothing of the generation
        infos = {m: self.group.members.get(m) for m in rnd.members or ()}
        named = [(m, i.client_id if i else None, self._instance_of(m)) for m, i in infos.items()]
        return (
            self.unanswered_joins.silent_joiners_may_be_in(rnd, formed, named, self.client_configs, skew)
            or views_may_be_in
        )

    def _unanswered_process_may_be_in(self, rnd: Round) -> bool:
        """Consumers' logs only: whether a process whose log shows a JoinGroup sent before generation
        `rnd` formed, and no response answering it, may be in it. The coordinator completes the join
        phase with every member whose JoinGroup reached it and answers them all at once
        (GroupCoordinator.onCompleteJoin; ClassicGroup in 4.0): such a process either missed the phase or
        is in it and died, stalled or left before logging the response: unless its lines named its member
        id and another member's response names that id (the leader: JoinGroupResponse.leader), or its
        lines name no id and a named member's own lines show nothing else of it, it may be a member no
        line of the generation names. Its LeaveGroup removes it
        (GroupCoordinator.removeMemberAndUpdateGroup) only if it reached the coordinator first: taken so
        when sent a full join round trip (the KIP-394 pair of JoinGroups, `MemberView.round_trip_ms`, the
        longest the logs show) before the formation. A JoinGroup sent earlier than that is in this
        generation, and the next join phase's completion removes the dynamic member that never rejoins
        (onCompleteJoin), so it is in no later one; one sent within it may be in the next instead."""
        formed = rnd.join_completed_at if rnd.join_completed_at is not None else rnd.stabilized_at
        if formed is None:
            return True
        return self.unanswered_joins.process_may_be_in(
            rnd, formed, self._longest_join_round_trip(), self.settings.clock_skew_ms
        )

    def _forget_unlisted_joins(self, rnd: Round) -> None:
        """Consumers' logs only, a generation the leader's assignment lists in full
        (ConsumerCoordinator.onLeaderElected: every member of the JoinGroup response): an unanswered
        JoinGroup (`UnansweredJoins.note_process_line`) that reached the coordinator before this join phase completed
        and whose member the list leaves out was answered in this or an earlier phase, and its member
        removed since (GroupCoordinator.onCompleteJoin, a session expiry, a LeaveGroup). Only a new
        JoinGroup, which its log would show, brings the process back, so the entry counts for no later
        generation. Reached it before: sent before the JoinGroup of a listed member the phase awaited
        (`Round.latest_member_join`, as `UnansweredJoins.join_may_be_in`), or a full join round trip
        (`MemberView.round_trip_ms`) before the formation."""
        formed = rnd.join_completed_at if rnd.join_completed_at is not None else rnd.stabilized_at
        if formed is None or rnd.members is None:
            return
        self.unanswered_joins.forget_unlisted(
            rnd, formed, self._longest_join_round_trip(), self.settings.clock_skew_ms
        )

    def _absent_static_member_may_be_in(self, rnd: Round, previous_members: list[str] | None) -> bool:
        """Members' logs only: whether a static member (KIP-345) whose log shows nothing of generation
        `rnd` may be in it. The completion of a join phase removes only the dynamic members that did not
        rejoin; a static one keeps its place, with its last metadata, until its session expires
        (GroupCoordinator.onCompleteJoin: `notYetRejoinedMembers.filterNot(_.isStaticMember)`; ClassicGroup
        in 4.0), and a static member's JoinGroup in a Stable group gets the current generation back
        without a rebalance (GroupCoordinator.updateStaticMemberAndRebalance), so the generation may have
        formed before the logs begin. Where the logs show static members, one no line shows may be in it,
        unless the members of the last generation the logs closed are known (`previous_members`: its
        leader's assignment listed them, or it ended Empty; None: not known): then this one formed within
        the logs, and a member no line of it names is one of those that did not rejoin, which only a
        static one survives (a member joining since sent a JoinGroup its log shows, answered with a
        generation the logs show or `_unanswered_process_may_be_in`). A static
        member keeps its group.instance.id, which begins its member id (GroupMetadata / ClassicGroup
        .generateMemberId): one whose instance a member of this generation has was replaced by it. A
        previous member with no log of its own (an uncollected host) may be static: its instance is
        unknown, and only a dynamic one is surely gone."""
        if not any(view.instance for view in self.views.values()):
            return False
        if previous_members is None:
            return True
        members = rnd.members or ()
        instances = {self._instance_of(m) or classic_member_owner(m) for m in members}
        for member in previous_members:
            if member in members:
                continue
            instance = self._instance_of(member)
            if instance is None and member not in self.views:
                # no line of its own: a static member's client prefixes each line with its instance
                # (KafkaConsumer's LogContext "instanceId="), so one whose log is missing may be static
                return True
            if instance is not None and instance not in instances:
                return True
        return False
