"""The classic replayer's rounds and episodes, opening: a round (one join/sync cycle, one generations
row) begins from the coordinator's PreparingRebalance or, in members' logs only, from a member's signal; its
cause, its episode (rounds back to back), and generations no line logged.

The rules are the coordinator's `GroupCoordinator` prepareRebalance / `ClassicGroup` transitionTo
(PreparingRebalance), the client's `AbstractCoordinator` requestRejoin, and the follow-up rounds of KIP-429
(`ConsumerCoordinator`) and KIP-415 (Connect's `IncrementalCooperativeAssignor`). A mixin of
`classic.replayer.GroupReplayer`.
"""

from __future__ import annotations

from rebalance_core.classic import coordinator as co
from rebalance_core.classic.replay_state import (
    REBALANCE_PREPARED,
    Round,
)
from rebalance_core.events import Event, EventType, format_ts, is_revoke_rejoin
from rebalance_core.rebalance_reasons import split_client_reason
from rebalance_core.replay_common import unlogged_generation_row

_ASSIGNMENT_RECEIVED = EventType.ASSIGNMENT_RECEIVED.value


# The client reasons AbstractCoordinator.requestRejoinIfNecessary sets (ConsumerCoordinator
# .rejoinNeededOrPending, 3.2+): never while a rejoin is pending, so never over a revoke-rejoin's reason.
REJOIN_IF_NECESSARY_REASONS = frozenset({"cached metadata has changed", "subscription has changed"})


class RoundStarts:
    """Open rounds and episodes (GroupCoordinator prepareRebalance / AbstractCoordinator requestRejoin)."""

    # ================================================================================== rounds
    def _member_round_signal(self, ts: int, reason: str | None, new_member: bool = False) -> None:
        """Member-only logs: a rebalance signal opens a round unless one is in its join phase. In the join
        phase of a group the last LeaveGroup emptied, or (a `new_member`'s JoinGroup) of a removal no
        line showed, it waits to know whether it joined that phase (`_settle_emptied`)."""
        rnd = self.round
        if rnd is None or rnd.generation_id is not None:
            self._begin_round(ts, reason, "member")
        elif rnd.signal_after_leave is None and (
            rnd.emptied_at is not None or (new_member and rnd.removal_unseen_at is not None)
        ):
            rnd.signal_after_leave = (ts, reason)

    def _member_round(self, gen: int | None, started_at: int | None, seen_at: int) -> Round | None:
        """Member-only logs: the round of generation `gen`, opened if needed (started_at None: its start
        is not in the log). None for a late member of the round that already ended, also when a signal
        opened the next round meanwhile: a join phase that has not completed yet can only become a newer
        generation (the coordinator increments the generation id at each completed join,
        GroupMetadata.initNextGeneration / ClassicGroup.initNextGeneration), so a line of the closed one
        (a member's SyncGroup response logged after the leader's revoke-rejoin) is not its generation."""
        rnd = self.round
        if gen is not None and gen == self.closed_generation and (rnd is None or rnd.generation_id is None):
            return None
        if rnd is not None and rnd.generation_id in (None, gen):
            if rnd.generation_id is None:
                self._note_unlogged_generations(rnd, gen)
            rnd.generation_id = gen
            return rnd
        if rnd is None and gen is not None and gen == self.closed_generation:
            return None
        self._begin_round(started_at, None, "member", first_seen=seen_at)
        self._note_unlogged_generations(self.round, gen)
        self.round.generation_id = gen
        return self.round

    def _note_unlogged_generations(self, rnd: Round, gen: int | None) -> None:
        """Members' logs only: `rnd` completed as generation `gen`, more than one after the last generation
        a member logged (none logged: more than 1 for a rebalance whose start the input shows; the
        coordinator increments the generation at every completed join phase, GroupMetadata /
        ClassicGroup.initNextGeneration). The generations between formed with no member logging them (its
        members paused, crashed or left before their JoinGroup response): whether they were rounds of
        this rebalance, of the one before, or rebalances of their own, no member's log says, so the
        episode's rounds are a guess (inferred)."""
        closed = self.closed_generation
        if gen is None or self.has_coordinator:
            return
        if closed is not None:
            skipped = gen > closed + 1
        else:
            skipped = gen > 1 and rnd.episode_round == 1 and rnd.started_at is not None
        episode = self.timeline.episode
        if skipped and episode is not None and episode.episode_id == rnd.episode_id:
            episode.source = "inferred"
        first = closed + 1 if closed is not None else 1
        if gen > first:
            self.unlogged_generations.append([first, gen - 1, rnd.episode_id])

    def _unlogged_generation_seen(self, gen: int, e: Event) -> None:
        """Members' logs only: a late JoinGroup response (`_stale_join_response`) names generation `gen`,
        which formed with no member logging it at the time (`_note_unlogged_generations`): the coordinator
        completed that join phase (GroupCoordinator.onCompleteJoin / ClassicGroup.completeClassicGroupJoin
        answer every member with the new generation id), so the generation existed; its row is written
        now, `inferred`. Who was in it, its leader (a follower's line does not print it), when it formed
        and whether it stabilized are in no line: null. Its episode is the one of the round that skipped
        it (the generation formed before that round completed)."""
        n = next((i for i, (lo, hi, _) in enumerate(self.unlogged_generations) if lo <= gen <= hi), None)
        if n is None:
            return  # its row is out already (or it is older than anything this replay saw)
        first, last, episode_id = self.unlogged_generations[n]
        rest = [[first, gen - 1, episode_id], [gen + 1, last, episode_id]]
        self.unlogged_generations[n : n + 1] = [r for r in rest if r[0] <= r[1]]
        self._out["generations"].append(
            unlogged_generation_row(
                self.timeline,
                self.key,
                e.ts,
                gen,
                group_protocol="classic",
                protocol_type=self.group.protocol_type,
                protocol_name=e.protocol_name or self.protocol_name,
                rebalance_protocol=self.protocol,
                leader_member_id=e.leader_id,
                episode_id=episode_id,
                timing_source="member",
            )
        )

    def _round_for_generation(self, gen: int | None, ts: int) -> Round:
        """Coordinator side: the open round, unless it already has another generation (then a round
        whose start the log did not show)."""
        rnd = self.round
        if rnd is not None and rnd.generation_id in (None, gen):
            return rnd
        self._begin_round(None, None, "coordinator", first_seen=ts)
        return self.round

    def _begin_round(
        self,
        ts: int | None,
        reason: str | None,
        timing: str,
        first_seen: int | None = None,
        change_logged: bool = False,
    ) -> None:
        episode = self.timeline.episode
        if self.follow_up_due:
            disowned = self._follow_up_disowned(reason)
            if disowned:
                self.follow_up_due = False
            elif disowned is None and episode is not None:
                episode.source = "inferred"  # the follow-up rests on the rerun, and no line confirms it
        caused = self.follow_up_due or bool(reason and "revoke" in reason.lower())
        interrupted = self.round is not None and not self.round.stable
        unknown_cause = self._rejoin_of_unknown_cause(reason, change_logged)
        # no reason at all after a cooperative round of unknown revocations: a new episode is a guess too
        guessed_new = (
            episode is not None and not unknown_cause and not change_logged and self._cause_not_logged(reason)
        )
        if episode is not None and not (caused or interrupted) and unknown_cause:
            caused = True  # taken for the follow-up round; the log cannot say: the episode is inferred
            episode.source = "inferred"
        if episode is not None and not (caused or interrupted) and self._connect_follow_up_unknown():
            # a Connect worker that revoked rejoins when it has stopped them, or once the KIP-415 delay
            # expires (IncrementalCooperativeAssignor, DistributedHerder.handleRebalanceCompleted): with
            # the revocations unknown, this round may be that follow-up, a removal joining it; both
            # episodes are a guess
            episode.source = "inferred"
            guessed_new = True
        if episode is None or not (caused or interrupted):
            # a new episode: what members synced before it applied before it (callbacks not logged)
            self._flush_all_pending()
        # A follow-up round of the same episode leaves a member's synced assignment pending: the member
        # applies it in its own thread after its SyncGroup response (ConsumerCoordinator.onJoinComplete /
        # WorkerCoordinator.onJoinComplete -> DistributedHerder's listener), whatever the coordinator does
        # meanwhile, so its callback lines logged after the broker prepares the next rebalance still give
        # the instants; without them it applies at its sync (`_flush_pending` at its next line).
        if self.round is not None:
            self._end_round(ts if ts is not None else first_seen)
        if episode is not None and (caused or interrupted):
            self.timeline.next_round()
            episode_round = episode.rounds
        else:
            self._end_episode()
            episode_id = self._episode_id(ts if ts is not None else first_seen, self.last_episode_id)
            self.previous_episode_id, self.last_episode_id = self.last_episode_id, episode_id
            episode = self.timeline.begin_episode(
                episode_id,
                ts,
                reason=reason,
                rebalance_protocol=self.protocol,
                timing_source=timing,
                seen_at=first_seen,
            )
            if guessed_new and not (caused or interrupted):
                episode.source = "inferred"
            episode_round = 1
        self.follow_up_due = False
        self.leader_assignment = None
        self.round = Round(ts, reason, timing, episode.episode_id, episode_round)
        if episode.reason is None:
            episode.reason = reason
        if self.protocol != "cooperative" and timing == "member":
            self._stop_unlogged_members(ts if ts is not None else first_seen, "inferred")  # member-only logs

    def _follow_up_disowned(self, reason: str | None) -> bool | None:
        """Coordinator side: the follow-up round due rests only on the replay's own rerun of the assignor
        (`computed_revokers`: no member line stated a revocation), and the round now opening is the
        rejoin of the one member that rerun says revoked, with a 3.2+ client reason (KIP-800: the
        JoinGroup carries AbstractCoordinator's rejoinReason, the broker prints it as "client reason")
        that is not the revoke one. A cooperative member that revokes requests its rejoin right after its
        sync with "need to revoke partitions and re-join" (ConsumerCoordinator.onJoinComplete ->
        requestRejoin). Only rejoinNeededOrPending's "cached metadata has changed" / "subscription has
        changed" are set through requestRejoinIfNecessary, a no-op while a rejoin is pending: with one of
        them, that member had no revoke-rejoin pending, so no follow-up was due and the rerun was wrong (it
        used the topic counts or subscriptions known at the start: random:131, the topic grew in between):
        True. Every other requestRejoin overwrites the reason unconditionally (resetStateAndRejoin on a
        heartbeat's or commit's error, "group is already rebalancing", "rebalance failed due to ..."), so
        a revoke-rejoin may have been pending under it: None, unknown. False: nothing disowned (a client of
        2.x-3.1 sends no reason, "not provided")."""
        rnd = self.round
        if (
            rnd is None
            or not rnd.stable
            or not self.has_coordinator
            or not rnd.computed_revokers
            or rnd.revocations_stated_by
            or rnd.revocations_unstated
            or self.kip415_delay_inferred
        ):
            return False
        named = co.members_named_in_reason(reason)
        if named is None or named[2]:  # not an existing member's rejoin
            return False
        _, client_reason = split_client_reason(reason)
        if client_reason in (None, "", "not provided") or is_revoke_rejoin(client_reason):
            return False
        if not set(rnd.computed_revokers) <= {named[0]}:
            return False
        return True if client_reason in REJOIN_IF_NECESSARY_REASONS else None

    def _next_reason_states_follow_up(self, rnd: Round) -> bool:
        """Broker's log only (no member logs): whether the Stable cooperative round `rnd`, whose revocations
        only the replay's rerun of the assignor gives (`Round.source` inferred: the topic counts and
        subscriptions it used are the ones known, maybe not the group's), is left open for the next
        round's reason, which states the follow-up: the broker prints each JoinGroup's client reason
        (3.2+, KIP-800), and a member that revoked rejoins at once with "need to revoke partitions and
        re-join" (ConsumerCoordinator.onJoinComplete; random:542, the rerun saw no revocation). A round
        whose own reason shows no client reason (a broker before 3.2, or a removal) keeps the rerun's
        word. A client reason "not provided" does not say the members send none: the broker prints it for
        any empty reason (JoinGroupRequest.joinReason), a 3.2+ client's first JoinGroup included (its
        rejoinReason starts "", and SyncGroup's success resets it to "", AbstractCoordinator), so a new
        member's round shows it while the members' revoke-rejoins state theirs (random:542)."""
        return (
            self.has_coordinator
            and not self.views
            and rnd.source == "inferred"
            and split_client_reason(rnd.reason)[1] is not None
        )

    def _end_held_episode(self, e: Event) -> None:
        """A coordinator line after a round held open for the next round's reason
        (`_next_reason_states_follow_up`): the round's own assignment line and the revoking member's
        rejoin ("need to revoke partitions and re-join", sent right after its sync, so the next
        Preparing line: `_begin_round` takes it as the follow-up) keep it open; any other line ends
        the episode before it applies, as if it had ended at the round's Stable (its partitions and
        moves measured then, not after a removal the line brings)."""
        rnd = self.round
        kind = e.event_type
        if kind == _ASSIGNMENT_RECEIVED and e.generation_id == rnd.generation_id:
            return
        if kind == REBALANCE_PREPARED and "revoke" in (e.reason or "").lower():
            return
        rnd.held_for_reason = False
        if self.timeline.episode is not None and rnd.stable and not self.follow_up_due:
            self._end_round()
            self._end_episode()

    def _rejoin_of_unknown_cause(self, reason: str | None, change_logged: bool = False) -> bool:
        """Whether a round is an existing member's rejoin whose cause no line states, right after a
        cooperative round whose revocations are unknown (the episode is still open for it, see
        `_maybe_end_episode`). Such a rejoin is what follows a revoking round (KIP-429
        ConsumerCoordinator.onJoinComplete; KIP-415 DistributedHerder.handleRebalanceCompleted: a worker
        that stopped revoked connectors or tasks rejoins at once), so the round is taken as its follow-up.
        A 3.2+ consumer states the cause ("need to revoke partitions and re-join", else another client
        reason); a Connect worker never does (WorkerCoordinator.requestRejoin does not set
        AbstractCoordinator's rejoinReason, so its JoinGroup carries "": GroupCoordinator prints
        "client reason: " empty), nor does a 2.x-3.1 client ("Leader X re-joining group during Stable",
        no client reason) or one that sends none ("not provided").
        A broker of 0.9-2.0 prints no reason at all ("Preparing to restabilize group G with old generation
        N") and logs no JoinGroup: a rejoin and a new member look the same. Unless a logged removal explains
        the round, it is taken as the follow-up of a first round whose members may have owned partitions
        (a follow-up round reassigns what the first one revoked and revokes nothing itself,
        ConsumerCoordinator.onJoinComplete / CooperativeStickyAssignor): inferred either way.
        A consumer group's first round from Empty revoked nothing, whatever the reason: its members joined
        owning nothing (a consumer reset by UNKNOWN_MEMBER_ID or ILLEGAL_GENERATION drops its partitions
        first, ConsumerCoordinator.onJoinPrepare -> onPartitionsLost), so the rejoin after it follows no
        revocation (random:681, broker-2.x). A Connect worker keeps running its work through a reset."""
        if not self._cooperative_round_unknown():
            return False
        first_from_empty = self.round.episode_round == 1 and not self.round.owned_before
        if not reason:
            return not change_logged and self.round.episode_round == 1 and self.round.owned_before
        if first_from_empty and not self._connect_follow_up_unknown():
            return False  # a consumer group's first round from Empty revoked nothing
        named = co.members_named_in_reason(reason)
        if named is None or named[2]:  # not a member's rejoin (a new member, a removal, a timeout)
            return False
        _, client_reason = split_client_reason(reason)
        return client_reason in (None, "", "not provided")

    def _cooperative_round_unknown(self) -> bool:
        """The last round is Stable, cooperative, and what it revoked is not known."""
        rnd = self.round
        return (
            rnd is not None
            and rnd.stable
            and not (rnd.assignment_known or self._revocations_logged(rnd))
            and self.protocol == "cooperative"
        )

    def _revocations_logged(self, rnd: Round) -> bool:
        """Members' logs only: every member of the round logged what it revoked at its sync, so whether a
        follow-up round is due is known (it is when one revoked something: `_m_sync_response`). A Connect
        worker's "Joined group at generation N ... Assignment{..., revokedConnectorIds=[...],
        revokedTaskIds=[...], delay=D}" (DistributedHerder.onAssigned, KIP-415 protocol) and a cooperative
        consumer's "Updating assignment with ... Revoked partitions" (ConsumerCoordinator.onJoinComplete,
        KIP-429) state it, even when nothing was revoked; the worker rejoins only after revoking or when
        the delay expires (DistributedHerder.handleRebalanceCompleted), the consumer only after revoking.
        The members are the leader's assignment line listing every member, else (a Connect leader logs
        no member list) every worker the generation's lines name."""
        if self.has_coordinator or rnd.revocations_unstated or not rnd.revocations_stated_by:
            return False
        members = rnd.members
        if members is None or not set(members) <= rnd.revocations_stated_by:
            return False
        # a Connect leader lists no members: every worker the generation's lines name must state its
        # revocations (a worker whose log is not in the input stays unseen: its generation is `inferred`,
        # `_hidden_member_excluded`)
        return rnd.members_listed or (rnd.protocol_type or self.group.protocol_type) == "connect"

    def _connect_follow_up_unknown(self) -> bool:
        """A Connect group's last round is Stable and what it revoked is not known."""
        rnd = self.round
        connect = (
            rnd is not None and rnd.protocol_type == "connect"
        ) or self.group.protocol_type == "connect"
        return self._cooperative_round_unknown() and (
            connect or (self.protocol_name or self.settings.default_assignor) in ("sessioned", "compatible")
        )

    def _cause_not_logged(self, reason: str | None) -> bool:
        """A round with no reason logged (0.9-2.0) after a cooperative round of unknown revocations."""
        return not reason and self._cooperative_round_unknown()

    def _episode_id(self, anchor: int | None, previous: str | None) -> str:
        """`group@ISO-instant` of the episode's start (or first sight); `#n` when the previous episode
        started at the same millisecond."""
        base = f"{self.group_id}@{format_ts(anchor)}" if anchor is not None else f"{self.group_id}@?"
        if previous == base:
            return f"{base}#2"
        if previous and previous.startswith(base + "#"):
            return f"{base}#{int(previous.rpartition('#')[2]) + 1}"
        return base

    def _adopt_coordinator_start(self, rnd: Round, ts: int, reason: str | None) -> None:
        """A round opened by member signals before the broker's log began: the broker's Preparing
        gives its start instant and reason (coordinator timing wins once present)."""
        rnd.started_at, rnd.reason, rnd.timing_source = ts, reason, "coordinator"
        episode = self.timeline.episode
        if episode is None or rnd.episode_round != 1:
            return
        episode_id = self._episode_id(ts, self.previous_episode_id)
        episode.episode_id = rnd.episode_id = self.last_episode_id = episode_id
        episode.started_at, episode.reason, episode.timing_source = ts, reason, "coordinator"
