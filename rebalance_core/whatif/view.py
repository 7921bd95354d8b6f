"""What the input's view cannot show: the limits of the what-if's model check.

A broker log prints member ids only for some transitions (GroupCoordinator), member logs show only their
own members, a KIP-848 input may open at an epoch's target assignment whose cause is in no line, and a
member's state line (GroupMetadataManager "new assignment state") may be provably missing: then the
as-actual replay cannot check the model, in full (`not_comparable`) or for some measures (`incomparable`).
"""

from __future__ import annotations

from collections.abc import Mapping

from rebalance_core.events import format_ts
from rebalance_core.whatif.compare import MODEL_CHECK_COUNTS, MODEL_CHECK_TIMES
from rebalance_core.whatif.settings import ActualSettings


class ViewLimits:
    """Why the input's view cannot support the model check, in full or for some measures."""

    def _incomparable_measures(self) -> tuple[tuple[str, str], ...]:
        """Measures the actual replay cannot check the model with. A KIP-848 input opening with an epoch's
        target: the bump's cause is in no line, so the as-actual (whose members join in the unmeasured
        warm-up) has no such rebalance, and the lines of that epoch show who owned what where the
        as-actual's do not: no measure compares. A member state line provably missing: the actual's
        partition times around it are upper bounds (the replay marks them inferred), and whether the
        member's epoch converged before the next bump is unseen (the actual may join the two epochs in one
        rebalance of two rounds)."""
        out: dict[str, str] = {}
        if self.opening_target is not None:
            epoch, ts = self.opening_target
            why = (
                f"the input opens at {format_ts(ts)} with epoch {epoch}'s target assignment, bumped for a cause "
                "in no line: the as-actual cannot replay that rebalance, nor know who owned what before it"
            )
            out.update(dict.fromkeys((*MODEL_CHECK_COUNTS, *MODEL_CHECK_TIMES), why))
        if self.missing_state_line is not None:
            member, missing, later = self.missing_state_line
            why = (
                f"{member}'s state line at epoch {missing} is not in the input (its epoch-{later} line says "
                f"previousEpoch={missing}): the actual's partition times are upper bounds and that epoch's "
                "convergence is unseen"
            )
            out.update(
                dict.fromkeys(("rebalances", "generations", "stw_ms", "partition_unavailable_ms"), why)
            )
        return tuple(out.items())

    @staticmethod
    def _revocations_out_of_view(actual: ActualSettings, counts: Mapping[str, int]) -> str | None:
        """No partition count known (no assignment in the input, none configured) for a cooperative
        group: its follow-up rounds come from the partitions a member revokes (KIP-429,
        ConsumerCoordinator.onJoinComplete rejoins after a revocation), which a timeline with nothing to
        consume cannot have."""
        if counts or actual.protocol != "cooperative":
            return None
        return (
            "no partition counts known (no assignment in the input, none configured) for a cooperative "
            "group: its follow-up rounds come from revocations the replay cannot simulate"
        )

    def _members_out_of_view(self) -> str | None:
        """Member logs only, none listing the group's members, and a logged member took part in a
        rebalance someone else started: who joined, left or changed is in no line, so no timeline holds
        what the rest of the group did."""
        if self.has_coordinator or self.members_listed_by_member or self.rebalance_from_outside is None:
            return None
        ts, member = self.rebalance_from_outside
        return (
            f"member logs only: {member} took part at {format_ts(ts)} in a rebalance no logged member started, "
            "and no line lists the group's members (a leader's full assignment): the rest of the group is in no line"
        )

    def _unnamed_members(self) -> str | None:
        """A coordinator line counts more members than the input names at that instant: the others'
        joins, rejoins and departures are in no line (a broker log prints member ids only for some
        transitions), so no timeline can replay them and the as-actual replay misses what they did."""
        for ts, count in self.stated_counts:
            named = len(
                {
                    inc.instance_id or inc.member_id  # a static member replaced in place is one member
                    for inc in self.incarnations
                    if (inc.start is None or inc.start <= ts)
                    # a member until the coordinator removed it (its process may have stopped earlier)
                    and (inc.end is None or max(inc.end, inc.removed_at or inc.end) >= ts)
                }
            )
            if count > named:
                return (
                    f"the coordinator counts {count} members at {format_ts(ts)} where the input names "
                    f"{named}: the others' joins and departures are in no line"
                )
        return None
