"""How a KIP-848 group epoch ends, and with it the rebalance episode: convergence (every member reconciled to
the epoch: ConsumerGroup state Stable), a provisional convergence that holds or does not, the group emptied
(ConsumerGroup state Empty), and the episode's end once its last epoch converged and its target is consumed.

Models ConsumerGroup's state (group-coordinator `modern/consumer/ConsumerGroup.maybeUpdateGroupState`:
ASSIGNING / RECONCILING until every member is reconciled to the target's epoch, then STABLE; EMPTY without
members) on the ownership timeline's episodes. A mixin of `consumer.epochs.EpochTracker`, which closes the
epoch's generations row.
"""

from __future__ import annotations

from collections.abc import Collection

from rebalance_core.events import TopicPartition


class EpochConvergence:
    """The open epoch converging (for good or provisionally), emptying, and its episode ending."""

    def converged(self, ts: int, provisional: bool = False) -> None:
        """Every member is reconciled to the current epoch at `ts`."""
        cur = self.current
        if cur is None or cur.closed:
            return
        cur.stabilized_at = ts
        self.timeline.round_completed(cur.epoch, ts)
        if not provisional:
            self._close_generation(cur, closed_at=ts)

    def settle(self) -> None:
        """A provisional convergence holds for good: the group changes now (a member is removed, which bumps
        the epoch), so the epoch's row is closed with what its members consume before the change."""
        cur = self.current
        if cur is not None and not cur.closed and cur.stabilized_at is not None:
            self._close_generation(cur, closed_at=cur.stabilized_at)

    def unconverged(self) -> None:
        """A provisional convergence did not hold (a member started reconciling again at this epoch)."""
        cur = self.current
        if cur is not None and not cur.closed and cur.stabilized_at is not None:
            cur.stabilized_at = None
            if self.timeline.episode is not None:
                self.timeline.episode.stabilized_at = None

    def group_empty(self, ts: int, emptied_unseen: bool = False) -> None:
        """No members left: the current epoch ends Empty, and so does its episode. emptied_unseen: the removal
        that emptied the group bumped the epoch to one no event shows (member-side logs only: the last member's
        leave heartbeat is answered after its last line, and the removal bumps the group epoch,
        GroupMetadataManager.consumerGroupFenceMember): the current epoch, the one that member's line stated,
        had members; the Empty one has no row (its number is not shown: another bump may have come between)."""
        cur = self.current
        tl = self.timeline
        if cur is not None and not cur.closed and cur.stabilized_at is not None:
            # it converged (provisionally) with its members: the epoch that emptied the group is a later one
            self._close_generation(cur, closed_at=cur.stabilized_at)
        elif cur is not None and not cur.closed:
            self._close_generation(cur, closed_at=ts, ended_empty=not emptied_unseen)
            tl.round_completed(cur.epoch, ts)
        tl.group_empty(ts)
        tl.end_episode(ts)

    def maybe_end_episode(self, awaited_by_nobody: Collection[TopicPartition] = ()) -> None:
        """End the episode once its last epoch converged and the target is consumed by its owners. Without
        the target: once every partition stopped is consumed again, but those the caller knows no member
        will take (`awaited_by_nobody`: of a topic the group no longer subscribes)."""
        cur = self.current
        tl = self.timeline
        if cur is None or not cur.closed or tl.episode is None or tl.episode.episode_id != cur.episode_id:
            return
        if cur.target is not None:
            for member, tps in cur.target.items():
                if any(tl.owner_of(tp) != member for tp in tps):
                    return
        elif any(tp not in awaited_by_nobody for tp in tl.stopped()):
            return
        tl.end_episode()
