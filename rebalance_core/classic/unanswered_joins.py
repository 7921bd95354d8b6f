"""The classic replayer's JoinGroups no line answered, members' logs only: one question, "could this joiner
still be in the generation being formed?", asked of the three kinds of joiner the logs leave unanswered:
a member view whose JoinGroup no response of its log answered yet (`MemberView.join_sent_at` /
`unanswered_since`), a member no line named, or only its LeaveGroup (`SilentJoiner`), and a process's
JoinGroup lines no later line of its log answered (`processes`).

The rule is the coordinator's join phase (`GroupCoordinator` onCompleteJoin / `ClassicGroup` in 4.0, and
the client's `AbstractCoordinator` JoinGroup): every JoinGroup that reached the coordinator before the
phase completed is in the generation it forms, answered all at once; a dynamic member that does not rejoin
is removed by the next phase's completion, a static one (KIP-345) only when its session expires; a
LeaveGroup that arrived first removed its member (removeMemberAndUpdateGroup); a phase lasts at most the
group's rebalance timeout (DelayedJoin / InitialDelayedJoin). Used by the replay_* mixins of
`classic.replayer.GroupReplayer` (`RoundEnds` asks, `MemberIdentity`, `JoinLines`, `LeaveLines` tell).
"""

from __future__ import annotations

from collections.abc import Callable

from rebalance_core import client_config
from rebalance_core.classic.replay_state import (
    JOIN_SENT,
    LEAVE_SENT,
    MemberView,
    Round,
    SilentJoiner,
    decode_state,
    encode_state,
    process_of,
)
from rebalance_core.events import Event
from rebalance_core.replay_common import ordered_across_logs

# the broker's group.initial.rebalance.delay.ms default (GroupCoordinatorConfig): an Empty group's first join
# phase lasts at most max(it, the rebalance timeout) (InitialDelayedJoin); a members'-logs view cannot see it
KAFKA_INITIAL_REBALANCE_DELAY_MS = 3_000


class UnansweredJoins:
    """The JoinGroups no line answered (silent joiners, processes' joins; member views carry their own) and
    whether each may be in a generation."""

    def __init__(
        self, silent_joiners: list[SilentJoiner] | None = None, processes: dict[str, list] | None = None
    ) -> None:
        # members' logs only: the members unnamed JoinGroup lines or a LeaveGroup left unanswered
        self.silent_joiners: list[SilentJoiner] = silent_joiners if silent_joiners is not None else []
        # members' logs only: process (`process_of`) -> [its JoinGroup no later line of its log answered,
        # its LeaveGroup since] (`process_may_be_in`)
        self.processes: dict[str, list] = processes if processes is not None else {}

    # ================================================================================ checkpoint
    def snapshot(self) -> dict:
        """The checkpoint's fields (their names those of the replayer's state before this class)."""
        return {
            "silent_joiners": encode_state(self.silent_joiners),
            "unanswered_processes": encode_state(self.processes),
        }

    @classmethod
    def from_snapshot(cls, state: dict) -> UnansweredJoins:
        """From a checkpoint; states written before a field existed lack it (empty)."""
        return cls(
            decode_state(state["silent_joiners"]) if "silent_joiners" in state else None,
            decode_state(state["unanswered_processes"]) if "unanswered_processes" in state else None,
        )

    # ============================================================================== member views
    @staticmethod
    def view_join_sent(view: MemberView, ts: int) -> None:
        if view.join_sent_at is None or view.unanswered_since is not None:
            # its first JoinGroup since its last response; or a later one after a generation may have
            # counted the earlier one: it rejoins the next join phase
            view.join_sent_at, view.unanswered_since = ts, None

    @staticmethod
    def view_answered(view: MemberView) -> None:
        view.join_sent_at = view.unanswered_since = None

    def views_may_be_in(
        self,
        views: dict[str, MemberView],
        rnd: Round,
        formed: int,
        session_timeout_of: Callable[[str], int | None],
        skew: int,
    ) -> bool:
        """`RoundEnds._silent_joiner_may_be_in` for the member views with a JoinGroup unanswered."""
        views_may_be_in = False
        for view in views.values():
            if view.join_sent_at is None or view.member_id in (rnd.members or ()):
                continue
            if view.unanswered_since is not None and formed > view.unanswered_since and not view.instance:
                # counted in an earlier generation and never rejoined: this join phase's completion removed
                # it (GroupCoordinator.onCompleteJoin: dynamic members not rejoined), if its session did
                # not expire first; a static member stays until its session expires
                continue
            timeout = session_timeout_of(view.member_id)
            if self.join_may_be_in(view, rnd, formed, timeout, skew):
                views_may_be_in = True
        return views_may_be_in

    @staticmethod
    def join_may_be_in(
        joiner: MemberView | SilentJoiner, rnd: Round, formed: int, timeout: int | None, skew: int
    ) -> bool:
        """`_silent_joiner_may_be_in` for one JoinGroup no line answered (`joiner.join_sent_at`). Its log
        is not the one of the instants it is compared with: within `skew` of them, it may be before, and
        may as well be after. Only a JoinGroup surely before (`ordered_across_logs`) is counted in this
        generation (`unanswered_since`, so that the next join phase's completion removes it); one within
        the allowance may be in this generation or the next, so it stays open."""
        if joiner.unanswered_since is None:
            awaited, rtt = rnd.latest_member_join, joiner.round_trip_ms
            sent = joiner.join_sent_at
            # its JoinGroup's way there and the response's way back, each bounded by a round trip
            completion_bound = None if rtt is None else formed - 2 * rtt
            bounds = [b for b in (awaited, completion_bound) if b is not None]
            if any(ordered_across_logs(sent, b, skew) for b in bounds):
                joiner.unanswered_since = formed
            else:
                return any(sent < b + skew for b in bounds)
        return timeout is None or formed <= joiner.unanswered_since + timeout

    # ============================================================================ silent joiners
    def new_process(self, alias: str) -> None:
        """A further JoinGroup without an id in `alias`'s log: a new process (`_note_unnamed_join`)."""
        for joiner in self.silent_joiners:
            if joiner.alias == alias:
                joiner.alias = None  # a new process: no later line of this log is the old member's

    def unnamed_member_joined(self, alias: str, first: int, second: int) -> None:
        """KIP-394's pair of JoinGroups without a member id in `alias`'s log (`_note_unnamed_join`)."""
        client_id, instance = alias.split("|")[-2:]
        self.silent_joiners.append(
            SilentJoiner(
                second,
                second - first,
                alias,
                client_id=client_id or None,
                instance=instance or None,
            )
        )

    def name(self, alias: str, e: Event) -> None:
        """A line of `alias` names its member id: its member is no longer unnamed. A LeaveGroup sent before
        any response reached it (AbstractCoordinator.maybeLeaveGroup) still leaves it in a generation
        formed before the request arrived (`_silent_joiner_may_be_in`); any other line follows a response."""
        for joiner in self.silent_joiners:
            if joiner.alias == alias:
                joiner.alias = None
                if e.event_type == LEAVE_SENT:
                    joiner.left_at = e.ts
                else:
                    self.silent_joiners.remove(joiner)
                return

    def left_unanswered(self, view: MemberView, e: Event) -> None:
        """`view` leaves with its JoinGroup unanswered: a generation formed before the LeaveGroup arrived
        counts it (`_silent_joiner_may_be_in`)."""
        self.silent_joiners.append(
            SilentJoiner(
                view.join_sent_at,
                view.round_trip_ms,
                None,
                e.ts,
                unanswered_since=view.unanswered_since,
                member_id=view.member_id,
                client_id=e.client_id,
                instance=view.instance,
            )
        )

    def silent_joiners_may_be_in(
        self,
        rnd: Round,
        formed: int,
        named: list[tuple[str, str | None, str | None]],
        client_configs: client_config.ClientConfigs,
        skew: int,
    ) -> bool:
        """`_silent_joiner_may_be_in` for the members no line named, or only their LeaveGroup
        (`SilentJoiner`); `named`: the generation's members as (member id, client id, group.instance.id).
        Such a member never rejoins: the join phase after the one that counted it removes
        it (GroupCoordinator.onCompleteJoin removes the dynamic members not rejoined; ClassicGroup in 4.0),
        if its session did not expire first. So it is in one generation at most: the first formed after its
        JoinGroup arrived; a JoinGroup sent within that bound of the formation may have made this one or
        the next. A LeaveGroup reaches the coordinator within a round trip of its line and removes the
        member (GroupCoordinator.removeMemberAndUpdateGroup): a generation formed later does not count it."""
        may_be_in, still_open = False, []
        for joiner in self.silent_joiners:
            if joiner.left_at is not None and formed >= joiner.left_at + (joiner.round_trip_ms or 0) + skew:
                continue  # its LeaveGroup arrived first
            rtt = joiner.round_trip_ms
            # every member the generation's lines name, and the joiner, must show its own dump: the group's
            # rebalance timeout is the largest of its members' (a rotated-away dump may hold it)
            longest_phase = client_config.group_rebalance_timeout_ms(
                client_configs, [*named, _joiner_member(joiner)]
            )
            if (
                longest_phase is not None
                and rtt is not None
                and ordered_across_logs(
                    joiner.join_sent_at + 2 * rtt + max(longest_phase, KAFKA_INITIAL_REBALANCE_DELAY_MS),
                    formed,
                    skew,
                )
            ):
                # the join phase its JoinGroup entered ended within the group's rebalance timeout
                # (DelayedJoin / InitialDelayedJoin): a generation no line shows counted it, and this one,
                # formed later, removed it (onCompleteJoin: dynamic members not rejoined)
                continue
            if joiner.join_sent_at >= formed + skew:
                still_open.append(joiner)
                continue
            may_be_in = True
            self.join_may_be_in(joiner, rnd, formed, None, skew)
            if joiner.unanswered_since is None:  # not surely before the formation
                joiner.unanswered_since = formed
                still_open.append(joiner)  # it may be in the next generation instead
        self.silent_joiners = still_open
        return may_be_in

    # ============================================================================ processes' joins
    def note_process_line(self, e: Event, rnd: Round | None) -> None:
        """Members' logs only: a process's JoinGroup, the response answering it, or its LeaveGroup
        (`process_may_be_in`); `rnd` the replayer's open round. A consumer sends one JoinGroup at a time and
        logs the response that names its generation (AbstractCoordinator.joinGroupIfNeeded /
        JoinGroupResponseHandler). A new member's first JoinGroup carries no id and only gets one (KIP-394,
        MEMBER_ID_REQUIRED); the second carries it. A JoinGroup without an id while one is unanswered, or
        with another id, is a new member's (a new process of the same client): the earlier one stays
        unanswered. Once a response answers a later JoinGroup, the earlier unanswered ones were a dead
        predecessor's: no later line (the live member's rejoin with its id, its LeaveGroup, its response)
        is theirs. Each entry: [sent, its LeaveGroup, the member id its lines name, superseded by an
        answered later JoinGroup]."""
        joins = self.processes.setdefault(process_of(e), [])
        waiting = joins[-1] if joins and joins[-1][1] is None and not _superseded(joins[-1]) else None
        if e.event_type == JOIN_SENT:
            if waiting is None or not e.member_id or waiting[2] not in (None, e.member_id):
                joins.append([e.ts, None, e.member_id, False])
            else:
                waiting[2] = e.member_id
        elif e.event_type == LEAVE_SENT:
            if waiting is not None:
                waiting[1] = e.ts
        else:
            answers = rnd is not None and rnd.generation_id == e.generation_id
            if answers and e.member_id and e.member_id not in rnd.answered:
                rnd.answered.append(e.member_id)
            if waiting is not None:
                if answers:
                    # a member of the generation sent it: the join phase awaited it (its member view has
                    # no JoinGroup of its own when the line named no id: a static member, KIP-394's first)
                    rnd.latest_member_join = max(rnd.latest_member_join or waiting[0], waiting[0])
                joins.pop()
                for earlier in joins:  # a dead predecessor's: the live member's lines are not theirs
                    earlier[3:] = [True]
            elif answers:
                # a response with no JoinGroup line before it: these logs do not show every JoinGroup,
                # so a member whose log shows nothing of the generation may have joined it
                rnd.join_unlogged = True

    def process_may_be_in(self, rnd: Round, formed: int, round_trip: int | None, skew_ms: int) -> bool:
        """`RoundEnds._unanswered_process_may_be_in` once generation `rnd` formed at `formed`: `round_trip`
        the longest join round trip the logs show, `skew_ms` the clock-skew allowance between logs."""
        members = rnd.members or ()
        may_be_in, unnamed, matched = False, 0, set()
        for process, joins in list(self.processes.items()):
            open_joins = []
            skew = _skew_from_formation(rnd, process, skew_ms)
            for entry in joins:
                sent, left, member = entry[:3]
                if sent >= formed + skew:
                    open_joins.append(entry)  # its response, if any, names a later generation
                    continue
                if left is not None and round_trip is not None and left + round_trip + skew <= formed:
                    continue  # its LeaveGroup arrived before the phase completed
                if member is None:
                    unnamed += 1
                elif member in members:
                    matched.add(member)
                else:
                    may_be_in = True  # a member the generation's lines do not name
                if round_trip is None or sent + round_trip + skew > formed:
                    open_joins.append(entry)  # it may have missed this phase for the next
            if open_joins:
                self.processes[process] = open_joins
            else:
                del self.processes[process]
        # a JoinGroup whose lines name no id is one member each: at most the members a response names
        # (the leader) whose own lines show neither a response nor their JoinGroup's id
        named_only = [m for m in members if m not in rnd.answered and m not in matched]
        return may_be_in or unnamed > len(named_only)

    def forget_unlisted(self, rnd: Round, formed: int, round_trip: int | None, skew_ms: int) -> None:
        """`RoundEnds._forget_unlisted_joins` once generation `rnd`, listed in full, formed at `formed`;
        `skew_ms` the clock-skew allowance between logs: only a JoinGroup surely before the awaited ones
        or the formation (`ordered_across_logs`; none from the formation's own process) is forgotten."""
        awaited = rnd.latest_member_join

        def reached_before(process: str, sent: int) -> bool:
            skew = _skew_from_formation(rnd, process, skew_ms)
            return (awaited is not None and ordered_across_logs(sent, awaited, skew_ms)) or (
                round_trip is not None and sent + round_trip + skew <= formed
            )

        for process, joins in list(self.processes.items()):
            kept = [
                entry for entry in joins if entry[2] in rnd.members or not reached_before(process, entry[0])
            ]
            if kept:
                self.processes[process] = kept
            else:
                del self.processes[process]


def _skew_from_formation(rnd: Round, process: str, skew_ms: int) -> int:
    """The clock-skew allowance between `process`'s log and the instant generation `rnd` formed
    (`ReplaySettings.clock_skew_ms`): none when that instant is its own JoinGroup response."""
    return 0 if rnd.join_completed_by == process else skew_ms


def _joiner_member(joiner: SilentJoiner) -> tuple[str | None, str | None, str | None]:
    """A silent joiner as (member id, client id, group.instance.id), as far as its lines name them."""
    return joiner.member_id, joiner.client_id, joiner.instance


def _superseded(entry: list) -> bool:
    """Whether an unanswered JoinGroup (`UnansweredJoins.note_process_line`) was followed by an answered
    JoinGroup of its process (entries of states written before the flag have three fields)."""
    return len(entry) > 3 and bool(entry[3])
