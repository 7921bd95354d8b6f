"""Incarnations and rounds: the extraction's record of the group's membership.

An incarnation is one member id of one process, from its JoinGroup (or the input's start) to the way
it ended (a LeaveGroup, a session expiry, a poll timeout, a removal on the rebalance timeout, a static
replacement of KIP-345, a reset of its member id); a round is one join phase of the classic protocol
(AbstractCoordinator's JoinGroup round, GroupCoordinator's PreparingRebalance until tryCompleteJoin
completes it), with who was in it and who caused it. `MembershipBook` holds the bookkeeping both the
coordinator's and the members' lines use: new and known incarnations, their ends, rounds opening and
closing, full assignments as the evidence of joins.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from rebalance_core.events import Event
from schemas.events import Side

# Kinds of evidence of a member's heartbeat instant (converted by heartbeat_instants at finish):
HEARTBEAT_ANSWERED = "answered"  # its own log: the heartbeat's answer (REBALANCE_IN_PROGRESS), exact
JOIN_COMPLETED = "join_completed"  # the coordinator completed a join phase it had to rejoin: at the latest
JOIN_RESPONDED = "join_responded"  # member logs only: the first JoinGroup response of that phase
KIP848_ARRIVED = "kip848_arrived"  # KIP-848 coordinator: its heartbeat got a new member epoch
KIP848_ANSWERED = "kip848_answered"  # KIP-848 client: the heartbeat's answer started a reconciliation
# KafkaConsumer.DEFAULT_REASON of enforceRebalance() (3.2+), as the client and the coordinator log it
ENFORCED = re.compile(r"rebalance enforced by user", re.IGNORECASE)
GENERATIONS_KEPT = 64  # recent full assignments' member lists kept to find joins and departures
# How an incarnation (one member id of one process) ended.
LEFT, EXPIRED, POLL, FAILED, REPLACED, RESET = "left", "expired", "poll", "failed", "replaced", "reset"


@dataclass
class Incarnation:
    """One member id of one process: how it joined, the evidence of what it did, and how it ended."""

    member_id: str
    first_seen: int
    hint: str  # process identity: instance id, client id, source or member id
    instance_id: str | None = None
    start: int | None = None  # the process joined at (None: before the input)
    start_exact: bool = False  # from its own log (else coordinator instant, latency-corrected later)
    # the coordinator instant `start` is its second JoinGroup's (KIP-394: a dynamic member's first one,
    # without member id, is answered MEMBER_ID_REQUIRED; finish() takes that round trip off too)
    start_after_member_id_required: bool = False
    # its JoinGroup started a rebalance that other members' logs show they noticed at `start`: it joined
    # before (finish() places it so that the rebalance began before the first of them noticed)
    joined_before_notice: bool = False
    subscription: tuple[str, ...] | None = None
    changes: list[tuple[int, bool, tuple[str, ...]]] = field(default_factory=list)  # (ts, exact, topics)
    end: int | None = None
    end_kind: str | None = None
    end_exact: bool = True  # False: a LeaveGroup seen by the coordinator (latency-corrected later)
    removed_at: int | None = None
    reset_by_join: int | None = None  # the JoinGroup without member id (its own log) that ended it
    alive_after_end: bool = False
    revived_at: int | None = None  # its first own event after the group dropped it (end of a pause)
    # KIP-848: that event is its FENCED transition, logged on the answer to the heartbeat it sent on waking
    revived_on_answer: bool = False
    lost_at: int | None = None  # it logged partitions_lost (its membership was reset while it ran)
    logged: bool = False  # its own log is in the input
    client_key: str | None = None  # its member-side events' sender (see client_key)
    poll_timeout_at: int | None = None  # its own log: max.poll.interval.ms expired here
    removal_reason: str | None = None
    # its application's KafkaConsumer.enforceRebalance() calls: (ts, exact: its own log, else the
    # coordinator's instant of its JoinGroup)
    enforced: list[tuple[int, bool]] = field(default_factory=list)
    # its JoinGroups as the leader of a Stable group that started a round for a cause in no line: (the
    # round's start, the previous round's end or None, the round's end)
    leader_rejoins: list[tuple[int, int | None, int]] = field(default_factory=list)
    # the start of the join phase whose rebalance timeout removed it (it kept its session, never rejoined)
    missed_join_phase_at: int | None = None
    last_member_event: str | None = None
    last_member_ts: int | None = None
    successor: str | None = None  # member id that replaced it (static replacement, KIP-345)
    join_reason: str | None = None  # the client reason of its first JoinGroup
    owns: bool | None = None  # its latest assignment had partitions (None: no assignment seen)
    last_join_at: int | None = None  # its latest JoinGroup at the coordinator
    # evidence of its heartbeat instants (see Round, _heartbeat_instants): (instant, kind of evidence,
    # the instant the rebalance it noticed started, or None)
    heartbeats: list[tuple[int, str, int | None]] = field(default_factory=list)
    noticed: bool = False  # its own log showed a rebalance signal since its last sync
    joined_empty_group: bool = False  # `start` is the first join phase's end: the initial delay before


@dataclass
class Round:
    """A join phase the group's members had to notice (a rebalance round), from its start until it
    completes: who was in the group, who caused it (named by the coordinator's reason), who showed in its
    own log when it noticed. A member learns of a rebalance at its next heartbeat (AbstractCoordinator:
    the heartbeat thread gets REBALANCE_IN_PROGRESS), at an instant its own drifting heartbeat timer
    decides; the join phase ends when the last member has rejoined (GroupCoordinator.tryCompleteJoin)."""

    started_at: int
    members: frozenset[str]  # member ids in the group when it started
    causes: set[str] = field(default_factory=set)  # member ids that rejoined of their own accord
    # the leader whose JoinGroup in Stable started it for a cause no line gives ("Leader X re-joining group
    # during Stable" without an enforced or revoking client reason)
    leader_rejoin: str | None = None


class MembershipBook:
    """The incarnations and rounds of one group, and the steps every handler uses on them."""

    def _init_membership(self) -> None:
        """The state of the group's membership (called by TimelineExtractor.__init__)."""
        self.incarnations: list[Incarnation] = []
        self.current: dict[str, Incarnation] = {}  # member id -> its latest incarnation
        self.pending_start: dict[str, int] = {}  # client key -> join_sent without member id
        self.pending_subscribe: dict[str, int] = {}  # member id -> "subscription changed" instant
        # member logs only: client key -> the static member its new process replaces
        self.awaiting_successor: dict[str, Incarnation] = {}
        self.generations: list[tuple[int, frozenset[str]]] = []  # full assignments: (round start, members)
        self.members_listed = False  # a completed join phase's member list was in the input
        self.prepared_at: list[int] = []  # recent rebalance starts (PreparingRebalance)
        self.round: Round | None = None  # the join phase in progress (classic)
        self.closed_round: Round | None = None  # the last join phase that completed
        self.join_completed_at: int | None = None  # when the last join phase completed (classic)

    # --------------------------------------------------------------------------------- helpers
    def _new_incarnation(self, e: Event, member_id: str) -> Incarnation:
        hint = (
            e.group_instance_id
            or e.client_id
            or (e.source if e.side == Side.MEMBER.value else None)
            or member_id
        )
        previous = self.current.get(member_id)
        if previous is not None and e.group_instance_id is None and previous.hint:
            hint = previous.hint  # the same member id rejoining (KIP-848) is the same process
        inc = Incarnation(member_id=member_id, first_seen=e.ts, hint=hint, instance_id=e.group_instance_id)
        self.incarnations.append(inc)
        self.current[member_id] = inc
        return inc

    def _noticed(self, inc: Incarnation | None, ts: int) -> None:
        """Its own log shows it learned of a rebalance (the heartbeat's REBALANCE_IN_PROGRESS, or an
        offset commit refused for it): the first such signal since its last sync is its heartbeat instant."""
        if inc is None:
            return
        if not self.has_coordinator:
            self._open_round(ts)
        if not inc.noticed:
            inc.noticed = True
            inc.heartbeats.append((ts, HEARTBEAT_ANSWERED, None))

    def _open_round(self, ts: int) -> None:
        if self.round is None:
            members = frozenset(m for m, inc in self.current.items() if inc.end_kind is None)
            self.round = Round(ts, members)

    def _close_round(self, ts: int, response: bool = False) -> None:
        """The join phase completed at `ts` (`response`: a member's JoinGroup response, member logs only).
        A member without a log of its own that was in the group and did not cause the round rejoined last
        at the latest: replayed as noticing the rebalance in time to rejoin by then (finish() subtracts
        the rejoin's own latency)."""
        since = self.join_completed_at
        found, self.round, self.join_completed_at = self.round, None, ts
        if found is None:
            return
        self.closed_round = found
        if found.leader_rejoin is not None and found.leader_rejoin in self.current:
            # GroupCoordinator (Stable, the leader's JoinGroup) rebalances so that the leader can reassign
            # for changes its metadata does not carry (a topic's partitions: ConsumerCoordinator's "cached
            # metadata has changed"), or for enforceRebalance(): a cause in no line when the client gave no
            # reason. With the membership unchanged by the round's end, the leader's rejoin is the round's
            # only cause: replayed as the leader rejoining then (the timeline action `rebalance`), unless
            # finish() finds the cause in the timeline (_unexplained). When a member joined or left during
            # it, that change is a cause the timeline has already (it starts the replayed round, later
            # than the leader did)
            still_in = frozenset(m for m, inc in self.current.items() if inc.end_kind is None)
            if still_in == found.members:
                self.current[found.leader_rejoin].leader_rejoins.append((found.started_at, since, ts))
        for member in found.members - found.causes:
            inc = self.current.get(member)
            if inc is not None and inc.end_kind is None and not inc.logged:
                inc.heartbeats.append((ts, JOIN_RESPONDED if response else JOIN_COMPLETED, found.started_at))

    def _identify(self, inc: Incarnation, e: Event) -> None:
        """A member first known by its id alone gets its process identity from a later event."""
        if e.group_instance_id and not inc.instance_id:
            inc.instance_id = inc.hint = e.group_instance_id
        if inc.hint == inc.member_id and not inc.instance_id:
            better = e.client_id or (e.source if e.side == Side.MEMBER.value else None)
            if better:
                inc.hint = better

    def _assignment_seen(self, e: Event, started: int) -> None:
        """A full assignment lists the members of a rebalance that started at `started`. Where no join
        or leave of a member is logged (member logs only, KIP-848 target assignments), the membership
        change between two assignments is the evidence: a member new to a later one joined when that
        rebalance started; one missing from it had left (see _departures_from_assignments)."""
        members = frozenset(e.assignment)
        member_logs_only = not self.has_coordinator and e.side == Side.MEMBER.value
        # the input's first assignment: its unknown members were there before, unless the logged members
        # all learned of this rebalance from the coordinator (someone else's JoinGroup started it)
        noticed = member_logs_only and self.closed_round is not None and not self.closed_round.causes
        for member in members - set(self.current):
            self._known(member, e)
            if self.generations or noticed:  # it joined in this rebalance
                inc = self.current[member]
                inc.start, inc.start_exact = started, True
                inc.joined_before_notice = member_logs_only
        self.generations.append((started, members))
        del self.generations[:-GENERATIONS_KEPT]

    def _known(self, member_id: str, e: Event) -> None:
        """A member the coordinator lists: one already in the group when the input started if unseen."""
        if member_id not in self.current:
            inc = Incarnation(member_id=member_id, first_seen=e.ts, hint=member_id)
            self.incarnations.append(inc)
            self.current[member_id] = inc

    def _end(self, inc: Incarnation, kind: str, ts: int, exact: bool = True) -> None:
        inc.end_kind, inc.end, inc.end_exact = kind, ts, exact

    def _member_of_instance(self, instance: str | None) -> str | None:
        if not instance:
            return None
        for inc in reversed(self.incarnations):
            if inc.instance_id == instance:
                return inc.member_id
        return None


def client_key(e: Event) -> str:
    """Who sent a JoinGroup, across member ids: instance id and client id (member log: its source)."""
    client = e.client_id or (e.source if e.side == Side.MEMBER.value else None) or ""
    return f"{e.group_instance_id or ''}|{client}"
