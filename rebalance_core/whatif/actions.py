"""From incarnations to timeline actions: processes, their joins, heartbeats, subscriptions and ends.

Incarnations are chained into processes (a static member's replacement, KIP-345; the same member id
rejoining, KIP-848; else the same client identity); each end and return becomes the timeline's actions
(transitions.py). A member's heartbeat instants come from the evidence of when it learned of each
rebalance (AbstractCoordinator's heartbeat thread; KIP-848's heartbeat that got a new epoch or started a
reconciliation), corrected by the fitted latencies.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from rebalance_core.latency import kip848_one_way_ms
from rebalance_core.timeline import Action, EnforceRebalance, Heartbeat, Join, Subscribe
from rebalance_core.whatif.incarnations import (
    HEARTBEAT_ANSWERED,
    JOIN_COMPLETED,
    JOIN_RESPONDED,
    KIP848_ARRIVED,
    REPLACED,
    Incarnation,
)
from rebalance_core.whatif.settings import ActualSettings
from rebalance_core.whatif.transitions import Transitions

_SAME_HEARTBEAT_MS = 50  # two instants of evidence this close are one heartbeat


class TimelineActions(Transitions):
    """Timeline actions from the incarnations, at finish(); reads what the other parts gathered (the
    incarnations, the options)."""

    def _processes(self) -> dict[str, list[Incarnation]]:
        """Incarnations chained into processes: a static replacement or the same member id rejoining links
        directly; otherwise the latest ended incarnation with the same identity, if it ended before."""
        by_member_successor = {inc.successor: inc for inc in self.incarnations if inc.successor}
        processes: dict[str, list[Incarnation]] = {}
        owner: dict[int, str] = {}  # id(incarnation) -> process name
        # members already in the group when the input started come first, then by their joins
        ordered = sorted(
            self.incarnations, key=lambda i: (i.start is not None, i.start or i.first_seen, i.first_seen)
        )
        previous_of_member: dict[str, Incarnation] = {}
        for inc in ordered:
            linked = by_member_successor.get(inc.member_id)
            if linked is None:
                same_id = previous_of_member.get(inc.member_id)
                if same_id is not None and same_id.end_kind is not None:
                    linked = same_id
            if linked is None:
                linked = self._free_process(inc, processes)
            name = owner.get(id(linked)) if linked is not None else None
            if name is None:
                name = _unique_name(inc.hint or "member", processes)
                processes[name] = []
            processes[name].append(inc)
            owner[id(inc)] = name
            previous_of_member[inc.member_id] = inc
        return processes

    def _free_process(self, inc: Incarnation, processes: dict[str, list[Incarnation]]) -> Incarnation | None:
        if inc.start is None:
            return None
        best = None
        for chain in processes.values():
            last = chain[-1]
            if last.hint != inc.hint or last.end_kind in (None, REPLACED) or last.end is None:
                continue
            if last.end <= inc.start and (best is None or last.end > best.end):
                best = last
        return best

    def _actions(self, processes, actual: ActualSettings) -> tuple[list[Action], set[str], set[str]]:
        """Timeline actions per process (absolute instants; pre-existing joins have at=None)."""
        actions: list = []
        member_logged: set[str] = set()
        pre_existing: set[str] = set()
        for name, chain in processes.items():
            if any(inc.logged for inc in chain):
                member_logged.add(name)
            first = chain[0]
            if first.start is None:
                pre_existing.add(name)
            actions.append(
                Join(at=first.start, member=name, topics=first.subscription, instance_id=first.instance_id)
            )
            # a member in the group before the input acts from the input's start on, where the JoinGroup
            # behind the input's first line left its process up to a round trip and a callback earlier
            input_start = (
                self.first_ts - actual.latency.join_round_trip_ms - actual.latency.revoke_callback_ms
            )
            busy_until = first.start if first.start is not None else input_start
            for index, inc in enumerate(chain):
                actions.extend(
                    Heartbeat(at=at, member=name)
                    for at in self._heartbeat_instants(inc, actual)
                    if (inc.start is None or at > inc.start) and (inc.end is None or at < inc.end)
                )
                for ts, _exact, topics in inc.changes:
                    at = max(ts, busy_until or ts, inc.start or ts)
                    if inc.end is not None and at >= inc.end:
                        continue
                    actions.append(Subscribe(at=at, member=name, topics=topics))
                actions.extend(
                    EnforceRebalance(at=ts, member=name)
                    for ts, _exact in inc.enforced
                    if ts > max(busy_until or ts - 1, inc.start or ts - 1)
                    and (inc.end is None or ts < inc.end)
                )
                following = chain[index + 1] if index + 1 < len(chain) else None
                step, busy_until = self._transition(name, inc, following, actual, busy_until)
                actions.extend(step)
        return actions, member_logged, pre_existing

    def _heartbeat_instants(self, inc: Incarnation, actual: ActualSettings) -> list[int]:
        """When the member's heartbeats went out, from the evidence (see the kinds above), so that the
        replayed member learns of each rebalance when the real one did. A member that had to rejoin by
        the end of a join phase it did not cause sent its JoinGroup half a round trip before, after its
        revocation callback (eager: onJoinPrepare revokes everything), learning of the rebalance at its
        heartbeat before that; such an instant before the rebalance began says nothing (it rejoined of its
        own accord)."""
        latency = actual.latency
        rtt = latency.join_round_trip_ms
        prepare = latency.revoke_callback_ms if actual.protocol == "eager" and inc.owns is not False else 0
        network = kip848_one_way_ms(rtt)
        instants = []
        for ts, kind, started in inc.heartbeats:
            if kind == HEARTBEAT_ANSWERED:
                at = ts
            elif kind == JOIN_COMPLETED:
                at = ts - rtt // 2 - prepare
            elif kind == JOIN_RESPONDED:
                at = ts - rtt - prepare
            elif kind == KIP848_ARRIVED:
                at = ts - network
            else:  # KIP848_ANSWERED: sent, arrived, answered
                at = ts - 2 * network
            if (
                kind in (JOIN_COMPLETED, JOIN_RESPONDED)
                and started is not None
                and started - rtt < at <= started
            ):
                # rejoined within a round trip of the round's start: told at its first heartbeat after the
                # start (the fitted latencies are medians; this phase was as fast as a round trip allows)
                at = started + 1
            if started is None or at > started:
                instants.append(at)
        kept: list[int] = []
        for at in sorted(instants):  # one heartbeat seen from both sides is one heartbeat
            if not kept or at - kept[-1] > _SAME_HEARTBEAT_MS:
                kept.append(at)
        return kept


def _unique_name(base: str, taken: Mapping[str, Any]) -> str:
    if base not in taken:
        return base
    n = 2
    while f"{base}#{n}" in taken:
        n += 1
    return f"{base}#{n}"
