"""The classic replayer's member side, joining: a member's rebalance signal, its JoinGroup and the
JoinGroup response that names its generation, leader and member id.

The rules are the client's `AbstractCoordinator` (joinGroupIfNeeded, JoinGroupResponseHandler,
requestRejoin) and, for what the response tells about the coordinator, `GroupCoordinator` onCompleteJoin /
`ClassicGroup` (4.0). A mixin of `classic.replayer.GroupReplayer`.
"""

from __future__ import annotations

from collections.abc import Iterable

from rebalance_core.classic.replay_state import (
    MemberView,
    Round,
    alias_of,
    process_of,
)
from rebalance_core.events import Event
from rebalance_core.replay_common import ordered_across_logs


class JoinLines:
    """Handlers of a member's JoinGroup lines (AbstractCoordinator) and what they say of its generation."""

    def _signal(self, e: Event, view: MemberView) -> None:
        if view.revoked_unsignalled:  # _unsignalled_rejoin's own test, first: a call less on most lines
            self._unsignalled_rejoin(view)
        if view.signal_ts is not None:
            return
        view.signal_ts = e.ts
        if not self.has_coordinator:
            self._member_round_signal(e.ts, e.reason)
        if self.protocol == "eager":
            # eager: onJoinPrepare revokes everything; the member stopped consuming at its first signal
            self._stop_member(view.member_id, e.ts, "revoked")

    _m_heartbeat_rebalancing = _signal
    _m_join_requested = _signal

    def _m_join_sent(self, e: Event, view: MemberView) -> None:
        self._rejoin_after_lost(view)
        fresh = self.fresh_join_sent.pop(alias_of(e), None)
        if fresh is not None:
            # KIP-394: the coordinator answers a JoinGroup without a member id at once
            # (MEMBER_ID_REQUIRED) and the member resends it with the id: one round trip
            view.round_trip_ms = e.ts - fresh
        self.unanswered_joins.view_join_sent(view, e.ts)
        self._signal(e, view)

    def _m_join_response(self, e: Event, view: MemberView) -> None:
        sent = view.join_sent_at if view.join_sent_at is not None else view.signal_ts
        if view.synced_generation is None and alias_of(e) in self.fresh_join_sent:
            view.joined_fresh = True
        self.unanswered_joins.view_answered(view)
        self._set_protocol(e.protocol_name)
        if e.protocol_type and self.group.protocol_type is None:
            # the broker's lines do not print it; a JoinGroup of another protocol type is refused
            # (INCONSISTENT_GROUP_PROTOCOL), so a member that joined has the group's
            self.group.protocol_type = e.protocol_type
        gen = e.generation_id
        if self.has_coordinator and gen is not None:
            self._member_in_generation(gen, (view.member_id, e.leader_id))
        self._settle_emptied(gen)
        if gen is not None and gen == view.synced_generation:
            self._same_generation_rejoin(view, e)
            return
        if self._replaced_while_stable(view, gen):
            self._static_replacement_joined(view, e)
            return
        if self._stale_join_response(view, gen):
            view.generation_id = gen
            self._unlogged_generation_seen(gen, e)
            return
        silent = self._silent_holders(view, gen)
        if silent:
            # each died unseen before the coordinator got this JoinGroup: stopped at its send, the latest
            # the stop can be (a KIP-394 first JoinGroup without a member id when it is the only one)
            at = sent if sent is not None else self.fresh_join_sent.get(alias_of(e), e.ts)
            for member in silent:
                self._stop_member(member, at, "member_failed", "inferred")
        if self._emptied_unseen(view, gen, sent):
            self.timeline.group_empty(self.timeline.latest_stop(), source="inferred")
        if (
            self.protocol != "cooperative"
            and view.generation_id != gen
            and self.timeline.partitions_of(view.member_id)
        ):
            # eager member whose rebalance signal was not logged: it revoked before this rejoin
            self._stop_member(view.member_id, view.signal_ts or e.ts, "revoked")
        view.generation_id = gen
        if view.revoked_unsignalled:  # _unsignalled_rejoin's own test, first
            self._unsignalled_rejoin(view)
        if view.signal_ts is None:
            view.signal_ts = e.ts
        rnd = (
            self._member_round(gen, view.signal_ts, e.ts)
            if not self.has_coordinator and gen is not None
            else None
        )
        if rnd is not None:
            if rnd.join_completed_at is None:
                rnd.join_completed_at, rnd.join_completed_by = e.ts, process_of(e)
            if sent is not None:
                rnd.latest_member_join = max(rnd.latest_member_join or sent, sent)
                self._rebalance_began_before_its_lines(rnd, sent)
            if e.leader_id:
                rnd.leader_id = e.leader_id
            if rnd.members is None:
                rnd.members = []
            # the JoinGroup response names the generation's leader, a member of it whether or not its
            # own log shows the generation (JoinGroupResponse.leader; AbstractCoordinator: a follower
            # learns the leader there)
            for member in (view.member_id, e.leader_id):
                if member and member not in rnd.members:
                    rnd.members.append(member)
            rnd.member_count = max(rnd.member_count or 0, len(rnd.members))

    def _member_in_generation(self, gen: int, members: Iterable[str | None]) -> None:
        """Both views: a member's JoinGroup response for generation `gen` (and the leader it names) is
        proof of membership: the coordinator answers every member of the generation at the join's
        completion (GroupCoordinator.onCompleteJoin; ClassicGroup in 4.0). Once as many are named as the
        broker's "Stabilized ... with N members" counts, they are the generation's members."""
        named = self._joined_generation.setdefault(gen, set())
        named.update([m for m in members if m])  # a list: a generator is resumed (a call) per member
        rnd = self.round
        if rnd is not None and rnd.generation_id == gen:
            if rnd.members is None and rnd.member_count == len(named):
                rnd.members = sorted(named)
            return
        for row in reversed(self._out["generations"]):
            if row["generation_id"] == gen:
                if row["members"] is None and not row["ended_empty"] and row["member_count"] == len(named):
                    row["members"] = sorted(named)
                return

    def _same_generation_rejoin(self, view: MemberView, e: Event) -> None:
        """A follower rejoined the Stable group with unchanged metadata and got its generation back: the
        coordinator answers it without a rebalance (GroupCoordinator.doCurrentMemberJoinGroup, Stable: "for
        followers with no actual change to their metadata, just return group information for the current
        generation"; GroupMetadataManager.classicGroupJoinExistingMember in 4.0). No new generation, no
        group-wide episode: a member-only rejoin, from its first signal to its sync. An eager member still
        revoked everything in onJoinPrepare (its partitions wait until the sync gives them back)."""
        view.rejoin_since = view.signal_ts if view.signal_ts is not None else e.ts
        self._discard_signal_round()

    def _discard_signal_round(self) -> None:
        """Member-side logs only: a join that got the current generation back started no rebalance, so
        the round its signal opened (nothing else in it yet) and that round's episode are dropped."""
        rnd, episode = self.round, self.timeline.episode
        opened_by_it = (
            not self.has_coordinator
            and rnd is not None
            and rnd.generation_id is None
            and rnd.timing_source == "member"
            and rnd.episode_round == 1
            and episode is not None
            and episode.episode_id == rnd.episode_id
        )
        if opened_by_it:  # its signal looked like the start of a rebalance
            self.round = None
            self.timeline.discard_episode()
            self.last_episode_id = self.previous_episode_id

    def _replaced_while_stable(self, view: MemberView, gen: int | None) -> bool:
        """Member-side logs only: a static member's new process (a member id it never synced with) got
        the generation that already completed. KIP-345: a known group.instance.id joining with an
        unknown member id replaces the old member; in a Stable group whose protocol is unchanged the
        coordinator answers with the current generation and triggers no rebalance
        (GroupCoordinator.updateStaticMemberAndRebalance; ClassicGroup.replaceStaticMember /
        GroupMetadataManager.updateStaticMemberThenRebalanceOrCompleteJoin in 4.0)."""
        return (
            not self.has_coordinator
            and bool(view.instance)
            and view.synced_generation is None
            and gen is not None
            and gen == self.closed_generation
            and (self.round is None or self.round.generation_id is None)
        )

    def _stale_join_response(self, view: MemberView, gen: int | None) -> bool:
        """Member-side logs only: a JoinGroup response for a generation older than the last one the
        group completed, which another member still in the group already joined or synced past (the
        generation ids of one group only grow, GroupMetadata / ClassicGroup.initNextGeneration; they
        restart only for a group deleted once Empty, which a member still in it rules out). The member
        logged it late (its process paused after sending the JoinGroup: AbstractCoordinator
        .JoinGroupResponseHandler runs at its next poll); the coordinator completed that join phase at the
        time with this member in it, so its generation ended already: no round of its own (its member
        list is the leader's assignment)."""
        rnd = self.round
        latest = (
            rnd.generation_id if rnd is not None and rnd.generation_id is not None else self.closed_generation
        )
        return (
            not self.has_coordinator
            and gen is not None
            and latest is not None
            and gen < latest
            and any(
                max(v.synced_generation or 0, v.generation_id or 0) > gen
                for v in self.views.values()
                if v is not view
            )
        )

    def _emptied_unseen(self, view: MemberView, gen: int | None, sent: int | None = None) -> bool:
        """Member-side logs only: `view` joined generation `gen`, more than one after the latest generation
        any member's log showed, while no partition is consumed and some stopped: a generation formed in
        which no member with a log took part and nothing was consumed. Every logged member had left
        (a dynamic member's LeaveGroup: GroupCoordinator.removeMemberAndUpdateGroup / ClassicGroup: the
        coordinator rebalances at once and, with no member left, completes the join Empty with a new
        generation), closed without one (a static member: KIP-345, removed when its session expires) or
        stalled past max.poll.interval.ms, so the group emptied. When is in no line of the view: taken at
        the latest stop, the earliest it can be (the stop-the-world until then is a lower bound, the rows
        it closes `inferred`); what stopped was not handed to anyone meanwhile.

        Not when another member's JoinGroup since the latest generation shown, sent before `view`'s
        (`sent`), is unanswered (`_pending_joiner`): the coordinator had it in a join phase, which
        completes with every member that joined (GroupCoordinator.onCompleteJoin;
        ClassicGroup.completeClassicGroupJoin in 4.0), so a generation in between may have had that member
        and the group never turned Empty (its JoinGroup response, logged late after a pause, names it).
        One sent after `view`'s is in `gen` at the earliest: it says nothing of the generations before."""
        if self.has_coordinator or gen is None or self.timeline.consuming() or not self.timeline.stopped():
            return False
        shown = [v.generation_id for v in self.views.values() if v.generation_id is not None]
        if self.closed_generation is not None:
            shown.append(self.closed_generation)
        if self.round is not None and self.round.generation_id is not None:
            shown.append(self.round.generation_id)
        if not shown or any(
            self._pending_joiner(v, max(shown), sent) for v in self.views.values() if v is not view
        ):
            return False
        return gen > max(shown) + 1 and self.timeline.latest_stop() is not None

    def _rebalance_began_before_its_lines(self, rnd: Round, sent: int) -> None:
        """Members' logs only: a JoinGroup answered with `rnd`'s generation was sent (`sent`) before the
        first line of its episode. The coordinator began that rebalance no later than the JoinGroup's
        arrival (a new member's JoinGroup prepares one: GroupCoordinator.handleJoinGroup ->
        addMemberAndRebalance; ClassicGroup in 4.0); the others learn it only with their next heartbeat
        (REBALANCE_IN_PROGRESS). A partition some member started since then (a clock-skew allowance
        before it: another host's clock) may have been started before or after the rebalance began:
        whether its handover in this episode counts as a move, no line says, so the episode is inferred."""
        episode = self.timeline.episode
        if (
            episode is not None
            and episode.episode_id == rnd.episode_id
            and episode.started_at is not None
            and sent < episode.started_at
            and self.timeline.started_since(sent - self.settings.clock_skew_ms)
        ):
            episode.source = "inferred"

    def _pending_joiner(self, view: MemberView, latest_shown: int, before: int | None) -> bool:
        """Members' logs only: `view`'s last JoinGroup, sent before `before` (None: any time), is
        unanswered and no generation shown so far counted it: it is new (no generation yet) or rejoined
        from the latest generation shown, and no leader's assignment listed it. An older one is stale: a
        dynamic member that did not rejoin is dropped when the next join phase completes
        (GroupCoordinator.onCompleteJoin), so it is in no later generation."""
        return (
            view.join_sent_at is not None
            # another member's log: only a JoinGroup surely after `before` is not before it
            and (
                before is None
                or not ordered_across_logs(before, view.join_sent_at, self.settings.clock_skew_ms)
            )
            and (view.generation_id is None or view.generation_id >= latest_shown)
            and view.member_id not in (self.leader_assignment or {})
        )

    def _silent_holders(self, view: MemberView, gen: int | None) -> list[str]:
        """Member-side logs only: `view` joined generation `gen`, more than one after the latest any member's
        log showed (`_emptied_unseen`), while the partitions still consumed are all held by dynamic members
        with a log of their own (not `view`) that logged none of the generations since. A live member logs
        its JoinGroup response for each generation it joins, and the coordinator drops a dynamic member
        that did not rejoin when the join phase completes (GroupCoordinator.onCompleteJoin;
        ClassicGroup.completeClassicGroupJoin in 4.0): so each left the group before generation
        max(shown) + 1 formed, without a LeaveGroup (killed, or stalled past its session/poll timeout),
        and that join phase completed before the coordinator got `view`'s JoinGroup (else `view` would have
        joined it). Returns those members (empty: the rule does not apply). A static member that does not
        rejoin stays in the group (KIP-345), so the rule is for dynamic members only."""
        if self.has_coordinator or gen is None:
            return []
        holders = set(self.timeline.consuming().values())
        shown = [v.generation_id for v in self.views.values() if v.generation_id is not None]
        if self.closed_generation is not None:
            shown.append(self.closed_generation)
        if self.round is not None and self.round.generation_id is not None:
            shown.append(self.round.generation_id)
        if not holders or not shown or gen <= max(shown) + 1:
            return []
        silent = []
        for member in sorted(holders):
            holder = self.views.get(member)
            if holder is None or holder is view or holder.instance or holder.generation_id is None:
                return []
            silent.append(member)
        return silent

    def _static_replacement_joined(self, view: MemberView, e: Event) -> None:
        """The replacing process of a static member joined the current generation (`_replaced_while_stable`):
        no new generation, no episode; it syncs the old member's assignment like any member."""
        view.generation_id = e.generation_id
        self._discard_signal_round()
