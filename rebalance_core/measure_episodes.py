"""The rebalance episodes an `OwnershipTimeline` (rebalance_core.measures) measures: the part `TimelineEpisodes`.

An episode is one group-wide rebalance from its start (the coordinator leaving Stable for
PreparingRebalance: GroupCoordinator.prepareRebalance / ClassicGroup, or a KIP-848 group epoch bump,
GroupMetadataManager) to the round that ends it (Stable again, or Empty), with its further rounds
(KIP-429 cooperative, KIP-415 delayed) and generations. This part opens, counts and closes episodes,
builds their rebalance_episodes rows and adds each to its UTC day's totals, and marks episode rows
`inferred` when the view cannot show their end. Both protocols' replayers and the simulators call it.
"""

from __future__ import annotations

from rebalance_core.measure_records import EpisodeRecord, utc_date


class TimelineEpisodes:
    """Episode and round bookkeeping of `OwnershipTimeline` (its begin/end_episode, rounds, row marks)."""

    def begin_episode(
        self,
        episode_id: str,
        ts: int | None,
        reason: str | None = None,
        rebalance_protocol: str | None = None,
        timing_source: str | None = None,
        source: str = "observed",
        seen_at: int | None = None,
    ) -> EpisodeRecord:
        """Open an episode at `ts` (None: it began before the input, which first showed it at `seen_at`).
        Ends the open one first."""
        if self.episode is not None:
            self.end_episode()
        self._saw(ts if ts is not None else seen_at)
        # `_identity`, inline (a call per partition and episode otherwise)
        before = {tp: h.instance or h.member for tp, h in self._consuming.items()}
        # a partition already stopped (a crashed member's, stopped at its last heartbeat) still had its owner
        before.update({tp: s.instance or s.member for tp, s in self._stopped.items()})
        self.episode = EpisodeRecord(
            episode_id=episode_id,
            started_at=ts,
            reason=reason,
            rebalance_protocol=rebalance_protocol,
            timing_source=timing_source,
            source=source,
            owners_before=before,
            partitions_known=self._owners_known,
        )
        return self.episode

    def owners_unknown(self) -> None:
        """The caller does not know who owns which partition from here (a generation whose assignment
        no event shows and none could be inferred): the open episode's and the next episodes' partition
        measures are null until `owners_known`, and so are the totals of the days they end in."""
        self._owners_known = False
        if self.episode is not None:
            self.episode.partitions_known = False

    def owners_known(self) -> None:
        """Ownership is known again (a whole assignment applied, or the group emptied). The open
        episode stays unknown if it was: who owned what when it began is still unknown."""
        self._owners_known = True

    def discard_episode(self) -> None:
        """The open episode was no rebalance after all (a member's rejoin the coordinator answered with
        the same generation): forget it. Called before any movement or stop-the-world was attributed to it."""
        self.episode = None

    def member_rejoined(self, ts: int, duration_ms: int | None) -> None:
        """One member rejoined and got its generation back at `ts` (no group-wide rebalance)."""
        day = self.day(utc_date(ts))
        day.member_rejoins += 1
        day.member_rejoin_ms += duration_ms or 0

    def next_round(self) -> None:
        if self.episode is not None:
            self.episode.rounds += 1

    def round_completed(self, generation_id: int | None, ts: int) -> None:
        """A round of the open episode ended (Stable, or Empty) at `ts` with `generation_id`."""
        self._saw(ts)
        ep = self.episode
        if ep is None:
            return
        if generation_id is not None:
            if ep.first_generation_id is None:
                ep.first_generation_id = generation_id
            ep.last_generation_id = generation_id
        ep.stabilized_at = ts

    def end_episode(self, ts: int | None = None) -> dict | None:
        """Close the open episode; its row is dated by its stabilized_at (else `ts`, else started_at)."""
        ep = self.episode
        if ep is None:
            return None
        self.episode = None
        closed_at = next(
            (t for t in (ep.stabilized_at, ts, ep.started_at, self._last_ts) if t is not None), None
        )
        after = {tp: h.instance or h.member for tp, h in self._consuming.items()}  # `_identity`, inline
        moved = sum(
            1 for tp, owner in ep.owners_before.items() if after.get(tp) is not None and after[tp] != owner
        )
        known = ep.partitions_known
        rebalance_ms = (
            ep.stabilized_at - ep.started_at
            if ep.stabilized_at is not None and ep.started_at is not None
            else None
        )
        row = {
            **self.key,
            "event_date": utc_date(closed_at) if closed_at is not None else None,
            "episode_id": ep.episode_id,
            "rounds": ep.rounds,
            "first_generation_id": ep.first_generation_id,
            "last_generation_id": ep.last_generation_id,
            "started_at": ep.started_at,
            "stabilized_at": ep.stabilized_at,
            "rebalance_ms": rebalance_ms,
            "stw_ms": ep.stw_ms if known else None,
            "partition_unavailable_ms": ep.partition_unavailable_ms if known else None,
            "max_partition_unavailable_ms": ep.max_partition_unavailable_ms if known else None,
            "partitions_moved": moved if known else None,
            "partitions_revoked": ep.partitions_revoked if known else None,
            "revocations_wasted": ep.revocations_wasted if known else None,
            "reason": ep.reason,
            "rebalance_protocol": ep.rebalance_protocol,
            "timing_source": ep.timing_source,
            "source": ep.source,
        }
        self._out["rebalance_episodes"].append(row)
        if closed_at is not None:
            day = self.day(row["event_date"])
            # an episode the input shows whole is a rebalance; one whose start is before the input, or
            # that it never shows complete, is counted apart (issue 13: real logs start and end mid-way)
            if ep.started_at is None:
                day.rebalances_started_before_input += 1
            elif ep.stabilized_at is None:
                day.rebalances_open += 1
            else:
                day.rebalances += 1
            day.stw_ms += ep.stw_ms
            day.partition_unavailable_ms += ep.partition_unavailable_ms
            day.max_partition_unavailable_ms = max(
                day.max_partition_unavailable_ms, ep.max_partition_unavailable_ms
            )
            day.partitions_moved += moved
            day.partitions_revoked += ep.partitions_revoked
            day.revocations_wasted += ep.revocations_wasted
            if ep.reason:
                day.reasons[ep.reason] = day.reasons.get(ep.reason, 0) + 1
            day.add_episode_timing(ep.timing_source)
            day.partitions_known = day.partitions_known and known
        return row

    def _episode_inferred(self, episode_id: str | None) -> None:
        """The open episode, or a closed row not drained yet, with `episode_id` is `inferred`."""
        if self.episode is not None and self.episode.episode_id == episode_id:
            self.episode.source = "inferred"
            return
        for row in self._out["rebalance_episodes"]:
            if row["episode_id"] == episode_id:
                row["source"] = "inferred"

    def consumption_unseen_after_input(self) -> None:
        """The input ends while partitions are still consumed, in a view that would not show their end
        (the consumers' logs alone: a consumer that dies silently logs nothing, and the session-timeout
        rebalance the coordinator then starts is in no consumer's log). The stop-the-world and unavailable
        time counted are lower bounds: the open episode, else the group's last episode row not yet
        drained, is `inferred`. Nothing consumed at the end (the group left or emptied): nothing to say,
        unless a stop-the-world is still running with no episode open (a static member's close() sends no
        LeaveGroup, KIP-345, AbstractCoordinator.maybeLeaveGroup: the group stands still until the
        session-timeout rebalance after the input, GroupCoordinator.onExpireHeartbeat): the same mark."""
        if not self._consuming and self._stw_since is None:
            return
        if self.episode is not None:
            self.episode.source = "inferred"
        elif self._out["rebalance_episodes"]:
            self._out["rebalance_episodes"][-1]["source"] = "inferred"

    def closed_episodes_inferred_after(self, ts: int) -> None:
        """Stops were just placed in the past at `ts` (see recount_backdated_stop): an episode closed since
        (its row not drained yet) that converged after `ts` counted those partitions as consumed at its end,
        and its movement counts with them: its row says inferred (it cannot be reopened)."""
        for row in self._out["rebalance_episodes"]:
            if row["stabilized_at"] is not None and row["stabilized_at"] > ts:
                row["source"] = "inferred"
