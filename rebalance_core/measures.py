"""The partition ownership timeline of docs/metrics.md, as one reusable class.

Both the reconstructor (`rebalance_core.replay`, from events) and the simulator (from its true
start/stop instants) drive an `OwnershipTimeline` with the same calls, so ground truth and
reconstruction are measured by the same code. The timeline knows nothing about events or the
coordinator: callers tell it when a member starts or stops consuming a partition and where rebalance
episodes begin, get new rounds, complete rounds and end.
This module keeps who consumes what (start, stop, restart, assume), stop-the-world and the queries; the
other parts of the class are beside it: its episode and round bookkeeping (`TimelineEpisodes`) in
`measure_episodes`, its movement, episode-drain and daily rows (`TimelineRows`) in `measure_rows`, its
checkpoint codec (`TimelineCheckpoint`) in `measure_checkpoint`; its records (owner, stop, episode, day)
and UTC-day dating are `measure_records`.

API (stable; a change is announced here):

    tl = OwnershipTimeline(cluster, group_id, scenario="actual", state=None)
    tl.begin_episode(episode_id, ts, reason=None, rebalance_protocol=None, timing_source=None,
                     source="observed", seen_at=None)  # ends the open episode first; round 1
    tl.next_round()                            # a further round of the open episode (KIP-429/KIP-415)
    tl.discard_episode()                       # the open episode was no rebalance (same-generation rejoin)
    tl.member_rejoined(ts, duration_ms)        # a member-only rejoin (day counters)
    tl.round_completed(generation_id, ts)      # a round ended: Stable (or Empty) at ts
    tl.end_episode(ts=None)                    # close the open episode -> rebalance_episodes row
    tl.episode                                 # the open EpisodeRecord (descriptive fields may be set)
    tl.start(tp, member, ts, *, instance=None, generation_id=None, source="observed") -> rule | None
    tl.start_all(tps, member, ts, *, instance=None, generation_id=None, source="observed",
                 infer_stops_of=())            # start of each: [(tp, rule, previous holder)] of those broken
    tl.stoppers_of_unowned(tps) -> set[member] # who stopped those of tps nobody consumes
    tl.stop(tp, member, ts, cause, *, instance=None, source="observed") -> rule | None  # ts None: unseen
    tl.restart(tp, member, ts, *, new_member=None, instance=None, generation_id=None, source="inferred")
                                               # a static member's new process holds tp again at ts
    tl.rename_member(old, new)                 # the member id a stand-in stood for became known
    tl.stops_inferred(member)                  # its open stops are at the latest instant: inferred
    tl.assume(tp, member, *, instance=None) -> bool  # consuming since before the input (no start row)
    tl.assume_all(tps, member, *, instance=None)      # assume of each
    tl.group_empty(ts, source="observed")      # all members gone: ends stop-the-world, closes open stops
    tl.latest_stop() -> ts | None              # when the last partition still stopped stopped
    tl.consumption_unseen_after_input()        # what is still consumed may stop after the input, in
                                               # no line of the view: the last episode is `inferred`
    tl.recount_backdated_stop(ts)              # stops were just placed back at ts: count the gap before
                                               # the partitions started since as stop-the-world
    tl.closed_episodes_inferred_after(ts)      # episode rows not drained that converged after ts: `inferred`
    tl.starts_inferred(member, tps, ts)        # its starts of tps at ts may never have happened: `inferred`
    tl.owners_unknown(); tl.owners_known()     # who owns what is unknown / known again: episodes (and
                                               # their days) with unknown owners have null partition measures
    tl.partitions_of(member) -> set[TopicPartition]; tl.owner_of(tp) -> member | None
    tl.consuming() -> {tp: member}; tl.stopped() -> {tp: member that stopped it, not started again}
    tl.day(date) -> DayTotals                  # per-UTC-day accumulation (callers add their counters)
    tl.drain() -> {"partition_movements": [...], "rebalance_episodes": [...]}
    tl.finish(final=True) -> drain() + open movements (final) ; tl.daily_rows() -> group_daily_summary rows
    tl.snapshot() -> JSON-serialisable dict; OwnershipTimeline(..., state=snapshot) resumes

`start`/`stop` return None, or the name of the rule the call broke (the caller records an anomaly):
`stop_not_owned` (the member was not consuming it: ignored), `double_ownership` (started while another
member consumed it: the other member's consumption stops at that instant, cause `lost`),
`start_before_stop` (start earlier than the stop it closes: unavailability counted as 0).

A stop whose instant no event shows (`ts` None: a static member's old process, seen by the broker only when
its new process replaces it) gives a movement row with `revoked_at` and `unavailable_ms` null: it adds
nothing to the episode's or day's unavailable time (a lower bound) and cannot start stop-the-world.

Attribution: a movement row, an unavailability and a stop-the-world interval belong to the episode open
at the instant that closes them (the start, or `group_empty`); with no open episode (a static member
restarting without a rebalance) they count only in the day of that instant. An episode's own counters
go to the day of its `stabilized_at` (or the instant it ended). So a day's totals = the sum of the
episodes that ended that day + what happened outside episodes that day.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Container, Iterable

from rebalance_core.events import TopicPartition
from rebalance_core.measure_checkpoint import TimelineCheckpoint
from rebalance_core.measure_episodes import TimelineEpisodes
from rebalance_core.measure_records import (
    DAY_MS,
    DayTotals,
    EpisodeRecord,
    Holder,
    Stop,
    date_of_day,
    utc_date,
)
from rebalance_core.measure_rows import TimelineRows

STOP_CAUSES = ("revoked", "lost", "member_failed", "member_left")

# The partition measures of episode and daily summary rows: null where who owned what is unknown.
PARTITION_MEASURE_COLUMNS = (
    "stw_ms",
    "partition_unavailable_ms",
    "max_partition_unavailable_ms",
    "partitions_moved",
    "partitions_revoked",
    "revocations_wasted",
)

# Rules the timeline reports (see the module docstring).
STOP_NOT_OWNED = "stop_not_owned"
DOUBLE_OWNERSHIP = "double_ownership"
START_BEFORE_STOP = "start_before_stop"


def _identity(member: str, instance: str | None) -> str:
    """Who a consumer is across restarts: its group.instance.id when static (KIP-345), else its member id."""
    return instance or member


class OwnershipTimeline(TimelineEpisodes, TimelineRows, TimelineCheckpoint):
    """Who consumes which partition when; produces partition_movements and rebalance_episodes rows and
    per-day totals (docs/metrics.md). Memory: current owners, open stops, the open episode, day counters."""

    def __init__(self, cluster: str, group_id: str, scenario: str = "actual", state: dict | None = None):
        self.key = {"cluster": cluster, "group_id": group_id, "scenario": scenario}
        self._consuming: dict[TopicPartition, Holder] = {}
        self._known: set[TopicPartition] = set()  # every partition ever started or assumed
        self._by_member: dict[str, set[TopicPartition]] = {}
        self._stopped: dict[TopicPartition, Stop] = {}
        self._stw_since: int | None = None  # all partitions stopped since then
        self._last_stop_ts: int | None = None  # latest stop instant since the last start
        # that latest stop is an estimate at the latest instant it can be (source `inferred`; no observed
        # stop at or after it): the group may have stopped as a whole earlier than `_stw_since` says
        self._last_stop_inferred = False
        self._stw_since_inferred = False
        # the stop-the-world intervals counted from observed stops some of which are still open: [start,
        # the episode it went to] (`stops_inferred` may later find those starting stops estimates)
        self._stw_counted: list[list] = []
        self._last_handover_stop: int | None = None  # latest stop instant of a partition started again since
        self._stw_recounted_to: int | None = None  # end of the latest gap recount_backdated_stop counted
        self._last_ts: int | None = None  # latest instant the timeline was told about
        self._owners_known = True  # False: the caller does not know who owns what (`owners_unknown`)
        self.episode: EpisodeRecord | None = None
        self._days: dict[dt.date, DayTotals] = {}
        self._day_cached: tuple[int, DayTotals] | None = None  # (epoch day, its totals): see day_at
        self._out: dict[str, list[dict]] = {"partition_movements": [], "rebalance_episodes": []}
        if state:
            self._restore(state)

    # ------------------------------------------------------------------------------------ queries
    def partitions_of(self, member: str) -> set[TopicPartition]:
        return set(self._by_member.get(member, ()))

    def owner_of(self, tp: TopicPartition) -> str | None:
        holder = self._consuming.get(tp)
        return holder.member if holder else None

    def consuming(self) -> dict[TopicPartition, str]:
        return {tp: h.member for tp, h in self._consuming.items()}

    def started_since(self, ts: int) -> bool:
        """Whether a partition consumed now was started at or after `ts`."""
        return any(h.since is not None and h.since >= ts for h in self._consuming.values())

    def stopper_of(self, tp: TopicPartition) -> str | None:
        """The member whose stop of `tp` is open (None: consumed, or never known)."""
        stop = self._stopped.get(tp)
        return stop.member if stop else None

    def stopped(self) -> dict[TopicPartition, str]:
        """Partitions stopped and not started again: tp -> the member that stopped it."""
        return {tp: s.member for tp, s in self._stopped.items()}

    def stopped_on_leave(self) -> set[TopicPartition]:
        """The `stopped` partitions whose member stopped them because it left the group (not a revocation)."""
        return {tp for tp, s in self._stopped.items() if s.cause == "member_left"}

    def day(self, date: dt.date) -> DayTotals:
        totals = self._days.get(date)
        if totals is None:
            totals = self._days[date] = DayTotals()
        return totals

    def day_at(self, ms: int) -> DayTotals:
        """`day` of the UTC date of instant `ms`; called for every event, most in the previous one's day."""
        cached = self._day_cached
        day = ms // DAY_MS
        if cached is not None and cached[0] == day:
            return cached[1]
        totals = self.day(date_of_day(day))
        self._day_cached = (day, totals)
        return totals

    # ----------------------------------------------------------------------------- start and stop
    def start(
        self,
        tp: TopicPartition,
        member: str,
        ts: int,
        *,
        instance: str | None = None,
        generation_id: int | None = None,
        source: str = "observed",
    ) -> str | None:
        """`member` starts consuming `tp` at `ts`. Keeping a partition it already consumes is a no-op."""
        problems = self.start_all(
            (tp,), member, ts, instance=instance, generation_id=generation_id, source=source
        )
        return problems[0][1] if problems else None

    def start_all(
        self,
        tps: Iterable[TopicPartition],
        member: str,
        ts: int,
        *,
        instance: str | None = None,
        generation_id: int | None = None,
        source: str = "observed",
        infer_stops_of: Container[str] = (),
    ) -> list[tuple[TopicPartition, str, str | None]]:
        """`member` starts consuming each of `tps` at `ts`, in order (one call per member's assignment; a
        partition it already consumes is kept, a no-op): (tp, rule broken, member consuming tp before) per
        start that broke a rule. Before a start of a partition nobody consumes whose open stop is by a
        member of `infer_stops_of`, that member's stops are `stops_inferred`. The handovers' movement rows
        are written after the loop, in the order of `tps` (`_movements`)."""
        problems = []
        handovers = []
        consuming, stopped, known = self._consuming, self._stopped, self._known
        owned = None
        for tp in tps:
            if ts is not None and (self._last_ts is None or ts > self._last_ts):  # self._saw(ts), inline
                self._last_ts = ts
            holder = consuming.get(tp)
            if infer_stops_of and holder is None:
                stop = stopped.get(tp)
                if stop is not None and stop.member in infer_stops_of:
                    self.stops_inferred(stop.member)
            known.add(tp)
            problem = None
            if holder is not None:
                if holder.member == member:
                    continue
                # the holder stopped at an instant no event showed, at the latest now: an estimate (`inferred`)
                self.stop(tp, holder.member, ts, "lost", instance=holder.instance, source="inferred")
                problem = DOUBLE_OWNERSHIP
            stop = stopped.pop(tp, None)
            if stop is not None:
                stop_ts = stop.ts
                if stop_ts is not None:
                    last_handover = self._last_handover_stop
                    if not last_handover or stop_ts > last_handover:
                        self._last_handover_stop = stop_ts
                    if ts < stop_ts:
                        problem = problem or START_BEFORE_STOP
                handovers.append((tp, stop))
            consuming[tp] = Holder(member, instance, ts, source)
            if owned is None:  # not setdefault(member, set()): no new set per call
                owned = self._by_member.get(member)
                if owned is None:
                    owned = self._by_member[member] = set()
            owned.add(tp)
            if self._stw_since is not None:
                self._add_stw(max(0, ts - self._stw_since), ts, lower_bound=self._stw_since_inferred)
                self._stw_since = None
            self._last_stop_ts, self._last_stop_inferred = None, False
            if problem:
                problems.append((tp, problem, holder.member if holder is not None else None))
        if handovers:
            self._movements(handovers, member, instance, ts, generation_id, source)
        return problems

    def stoppers_of_unowned(self, tps: Iterable[TopicPartition]) -> set[str]:
        """The members whose open stops are of those of `tps` nobody consumes."""
        consuming, stopped = self._consuming, self._stopped
        return {stopped[tp].member for tp in tps if tp in stopped and tp not in consuming}

    def assume(self, tp: TopicPartition, member: str, *, instance: str | None = None) -> bool:
        """`member` has been consuming `tp` since before the input began (a log starting mid-life shows
        it revoking a partition it was never seen to get). No start instant, no movement, no effect on
        stop-the-world. Only for a partition the timeline was never told about; returns whether it was."""
        if tp in self._known:
            return False
        self._known.add(tp)
        self._consuming[tp] = Holder(member, instance, None)
        if self.episode is not None:  # it was the owner when the open episode began
            self.episode.owners_before.setdefault(tp, _identity(member, instance))
        self._by_member.setdefault(member, set()).add(tp)
        return True

    def assume_all(self, tps: Iterable[TopicPartition], member: str, *, instance: str | None = None) -> None:
        """`assume` of each of `tps` (one call per line listing them; most are known already)."""
        known = self._known
        for tp in tps:
            if tp not in known:
                self.assume(tp, member, instance=instance)

    def stop(
        self,
        tp: TopicPartition,
        member: str,
        ts: int | None,
        cause: str,
        *,
        instance: str | None = None,
        source: str = "observed",
    ) -> str | None:
        """`member` stops consuming `tp` at `ts` for `cause` (one of STOP_CAUSES); `ts` None: at an
        instant no event shows."""
        problems = self.stop_all((tp,), member, ts, cause, instance=instance, source=source)
        return problems[0][1] if problems else None

    def stop_all(
        self,
        tps: Iterable[TopicPartition],
        member: str,
        ts: int | None,
        cause: str,
        *,
        instance: str | None = None,
        source: str = "observed",
    ) -> list[tuple[TopicPartition, str]]:
        """`member` stops consuming each of `tps` at `ts` for `cause` (one call per member's partitions):
        (tp, rule broken) per stop that broke one (`stop_not_owned`: not consumed by `member`, ignored)."""
        if cause not in STOP_CAUSES:
            raise ValueError(f"unknown stop cause {cause!r}")
        problems = []
        consuming, stopped = self._consuming, self._stopped
        by_member = self._by_member
        inferred = source == "inferred"
        for tp in tps:
            if ts is not None and (self._last_ts is None or ts > self._last_ts):  # self._saw(ts), inline
                self._last_ts = ts
            holder = consuming.get(tp)
            if holder is None or holder.member != member:
                problems.append((tp, STOP_NOT_OWNED))
                continue
            del consuming[tp]
            owned = by_member[member]
            owned.discard(tp)
            if not owned:
                del by_member[member]
            stopped[tp] = Stop(member, holder.instance or instance, ts, cause, source)
            if ts is None:
                continue  # when the group stopped as a whole is not known either
            if self._last_stop_ts is None or ts > self._last_stop_ts:
                self._last_stop_ts, self._last_stop_inferred = ts, inferred
            elif ts == self._last_stop_ts:
                self._last_stop_inferred = self._last_stop_inferred and inferred
            if not consuming and self._stw_since is None:
                # the group stopped as a whole at its latest stop (stops may be placed in the past)
                self._stw_since, self._stw_since_inferred = self._last_stop_ts, self._last_stop_inferred
        return problems

    def restart(
        self,
        tp: TopicPartition,
        member: str,
        ts: int,
        *,
        new_member: str | None = None,
        instance: str | None = None,
        generation_id: int | None = None,
        source: str = "inferred",
    ) -> str | None:
        """A static member restarted without a rebalance (KIP-345): its new process holds `tp`, which
        `member` (its old member id) held, again from `ts`; the old process stopped at an instant no
        event shows (row: revoked_at and unavailable_ms null, cause member_failed). `new_member` None:
        the new member id is not known yet; `member` stands for it until `rename_member`."""
        problem = self.stop(tp, member, None, "member_failed", instance=instance, source=source)
        if problem:
            return problem
        stop = self._stopped.pop(tp)
        self._saw(ts)
        self._movements([(tp, stop)], new_member, instance, ts, generation_id, source, same_identity=True)
        holder = new_member or member
        self._consuming[tp] = Holder(holder, stop.instance, ts, source)
        self._by_member.setdefault(holder, set()).add(tp)
        return None

    def stops_inferred(self, member: str) -> None:
        """The open stops of `member` were placed at the latest instant they can be: `inferred`. When they
        were the group's latest stops (no other stop at or after them), the group may have stopped as a
        whole earlier too: a stop-the-world that began (or begins) there is a lower bound (`_add_stw`)."""
        for stop in self._stopped.values():
            if stop.member == member:
                stop.source = "inferred"
        if self._last_stop_ts is not None:
            self._last_stop_inferred = self._all_inferred_at(self._last_stop_ts)
        if self._stw_since is not None:
            self._stw_since_inferred = self._all_inferred_at(self._stw_since)
        if self._stw_counted:
            starts = {stop.ts for stop in self._stopped.values() if stop.member == member}
            for since, episode_id in self._stw_counted:
                if since in starts and self._all_inferred_at(since):
                    # an interval already counted began at these stops: a lower bound, its episode inferred
                    self._episode_inferred(episode_id)

    def _all_inferred_at(self, ts: int) -> bool:
        """Whether every open stop at `ts` is an estimate (none observed there)."""
        return all(stop.source == "inferred" for stop in self._stopped.values() if stop.ts == ts)

    def rename_member(self, old: str, new: str) -> None:
        """The member id `old` stood for is `new` (no movement: the same consumer)."""
        owned = self._by_member.pop(old, None)
        if not owned:
            return
        for tp in owned:
            self._consuming[tp].member = new
        self._by_member.setdefault(new, set()).update(owned)

    def group_empty(self, ts: int, source: str = "observed") -> None:
        """The group has no members: stop-the-world ends here and open stops become open movements.
        Nobody owns anything now, so a partition started again in the open episode moved from no one.
        source `inferred`: `ts` is an estimate no event shows (`latest_stop`: a member-only log learns
        of the empty group only from a later generation); its rows and the open episode are inferred,
        the stop-the-world that ends here a lower bound."""
        self._saw(ts)
        if self._stw_since is not None:
            self._add_stw(max(0, ts - self._stw_since), ts, lower_bound=self._stw_since_inferred)
            self._stw_since = None
        self._close_open_stops(source)
        if self.episode is not None:
            self.episode.owners_before.clear()
            if source == "inferred":
                self.episode.source = "inferred"
        self._owners_known = True  # nobody owns anything now

    def recount_backdated_stop(self, ts: int) -> None:
        """Stops were just placed in the past at `ts` (a crashed member, known only at its session expiry, stopped
        at its last heartbeat), while partitions started since were counted as consumed beside its own. If
        every partition consumed now started after `ts` and none was consumed in between (no stop of another
        partition came later than `ts`), nothing was consumed from `ts` to the earliest of those starts: that
        gap is stop-the-world the running count could not see."""
        if not self._consuming or self._stw_since is not None:
            return  # nothing consumed now: the running count covers it
        starts = [h.since for h in self._consuming.values()]
        if any(t is None or t <= ts for t in starts):
            return
        later_stops = [s.ts for s in self._stopped.values() if s.ts is not None]
        # (a gap an earlier recount covered counts once)
        gap_start = max([ts, *later_stops, self._last_handover_stop or ts, self._stw_recounted_to or ts])
        gap_end = min(t for t in starts if t is not None)
        if gap_end > gap_start:
            self._add_stw(gap_end - gap_start, gap_end)
            self._stw_recounted_to = gap_end

    def starts_inferred(self, member: str, tps: Iterable[TopicPartition], ts: int) -> None:
        """`member`'s starts of `tps` at `ts` are an estimate: it may have started them later or never (a
        member whose poll loop was stuck). Their movement rows not drained yet, the episode rows not drained
        that converged since (they counted them as moved to it) and the open episode say inferred."""
        keys = {(tp.topic, tp.partition) for tp in tps}
        for row in self._out["partition_movements"]:
            if (
                row["to_member_id"] == member
                and row["assigned_at"] == ts
                and (row["topic"], row["partition"]) in keys
            ):
                row["source"] = "inferred"
        self.closed_episodes_inferred_after(ts - 1)  # converged at ts or later
        if self.episode is not None:
            self.episode.source = "inferred"

    def latest_stop(self) -> int | None:
        """The latest instant a partition still stopped was stopped at (None: none, or no instant shown)."""
        return max((s.ts for s in self._stopped.values() if s.ts is not None), default=None)

    # ---------------------------------------------------------------------------------- internals
    def _saw(self, ts: int | None) -> None:
        if ts is not None and (self._last_ts is None or ts > self._last_ts):
            self._last_ts = ts

    def _add_stw(self, ms: int, ts: int, lower_bound: bool = False) -> None:
        """`lower_bound`: the interval began at a stop placed at the latest instant it can be (a member
        removed on its session expiry whose own last consumption no line shows, an owner displaced by a
        double ownership): the group may have stopped earlier, so the episode's stop-the-world is `inferred`."""
        if ms and not lower_bound and self._stw_since is not None:
            still_open = {stop.ts for stop in self._stopped.values()}
            self._stw_counted = [c for c in self._stw_counted if c[0] in still_open]
            if self._stw_since in still_open:
                self._stw_counted.append([self._stw_since, self.episode.episode_id if self.episode else None])
        if self.episode is not None:
            self.episode.stw_ms += ms
            if lower_bound and ms:
                self.episode.source = "inferred"
        else:
            self.day(utc_date(ts)).stw_ms += ms


def plus_known(total: int | None, value: int | None) -> int | None:
    """A measure's sum that stays unknown (None) once one of its terms is (a null measure: no line shows
    who owned what, docs/metrics.md)."""
    return None if total is None or value is None else total + value
