"""The classic replayer's ownership and measuring: a generation's assignment (observed, or inferred by
rerunning the group's assignor), the partitions each member starts and stops in the `OwnershipTimeline`,
the group's protocol (eager or cooperative), and anomaly rows.

The assignments follow the client's `ConsumerCoordinator` (onJoinComplete: partitions added / revoked) and
the assignors of `rebalance_core.assignors`; the protocol the coordinator selects is `GroupCoordinator`
selectProtocol / `ClassicGroup` (4.0). A mixin of `classic.replayer.GroupReplayer`.
"""

from __future__ import annotations

from collections.abc import Iterable

from rebalance_core import client_config
from rebalance_core.assignors import CLIENT_ASSIGNORS
from rebalance_core.assignors.protocols import rebalance_protocol_of
from rebalance_core.classic.replay_state import (
    ASSIGNMENT_CONFLICT,
    ASSIGNMENT_MISMATCH,
    INFERENCE_FAILED,
    MemberView,
    Round,
)
from rebalance_core.events import Event, TopicPartition
from rebalance_core.measure_records import utc_date
from rebalance_core.measures import DOUBLE_OWNERSHIP
from rebalance_core.replay_common import anomaly_row, event_anomaly_row


class Ownership:
    """Assignments, partition ownership, the selected protocol and anomaly rows."""

    def _note_protocol(self) -> None:
        """The open episode's protocol: the one detected by its end (it may be named after it began)."""
        ep = self.timeline.episode
        if ep is not None:
            ep.rebalance_protocol = self.protocol or ep.rebalance_protocol

    # ============================================================================ assignments
    def _synced_partitions(self, e: Event, member: str) -> tuple[list[TopicPartition] | None, str]:
        """The member's new assignment: its sync's partitions, else the leader's for it (or None)."""
        if e.partitions is not None:
            synced = sorted(e.partitions)
            known = (self.leader_assignment or {}).get(member)
            if known is not None and sorted(known) != synced:
                self._anomaly(
                    ASSIGNMENT_MISMATCH, e, f"leader assigned {len(known)}, member synced {len(synced)}"
                )
            return synced, "observed"
        if self.leader_assignment is not None and member in self.leader_assignment:
            return sorted(self.leader_assignment[member]), self.assignment_source
        return None, "observed"

    def _emit_assignment(
        self, assignment: dict[str, list[TopicPartition]], gen, ts: int, source: str
    ) -> None:
        if gen is None:
            return
        if self.emitted_generation != gen:
            self.emitted_generation, self.emitted = gen, set()
        date = utc_date(ts)
        stand_ins = set(self.unnamed_replacements.values())
        rows = self._out["assignments"]
        for member in sorted(assignment):
            if member in self.emitted or member in stand_ins:  # rows once a line names the new id
                continue
            self.emitted.add(member)
            # the columns shared by the member's rows, made once per member rather than per partition
            of_member = {
                **self.key,
                "event_date": date,
                "generation_id": gen,
                "member_id": member,
                "group_instance_id": self._instance_of(member),
            }
            for tp in sorted(assignment[member]):
                rows.append({**of_member, "topic": tp.topic, "partition": tp.partition, "source": source})

    def _set_assignment(self, assignment: dict[str, list[TopicPartition]], gen, source: str) -> None:
        self.assignment = {m: list(tps) for m, tps in assignment.items()}
        self.assignment_generation = gen
        self.assignment_source = source

    def _check_assignment(self, assignment, e: Event) -> None:
        seen: dict[TopicPartition, str] = {}
        for member in sorted(assignment):
            for tp in assignment[member]:
                if tp in seen and seen[tp] != member:
                    self._anomaly(ASSIGNMENT_CONFLICT, e, f"{tp} assigned to {seen[tp]} and {member}")
                seen[tp] = member

    def _infer_assignment(self, rnd: Round) -> dict[str, list[TopicPartition]] | None:
        """Broker-only logs: rerun the group's assignor on the known membership and topics."""
        members = rnd.members
        if members is None and self.group.membership_known:
            members = list(self.group.members)
        protocol = (
            rnd.protocol_name or self.protocol_name or self.offered_protocol or self._configured_assignor()
        )
        if not members or not self.topics or protocol not in CLIENT_ASSIGNORS:
            return None
        if rnd.member_count is not None and rnd.member_count != len(members):
            return None  # the membership is not fully known
        from rebalance_core.assignors import GroupSpec, MemberSubscription, get_assignor

        subs = []
        for m in sorted(members):
            info = self.group.members.get(m)
            topics = tuple(info.subscription) if info and info.subscription else tuple(sorted(self.topics))
            subs.append(
                MemberSubscription(
                    member_id=m,
                    subscription=topics,
                    group_instance_id=info.group_instance_id if info else None,
                    owned=tuple(sorted(self.assignment.get(m, ()))),
                    generation=self.assignment_generation if m in self.assignment else None,
                )
            )
        try:
            spec = GroupSpec(
                topics=dict(self.topics), members=tuple(subs), topic_ids=dict(self.settings.topic_ids)
            )
            result = get_assignor(protocol).assign(spec)
        except Exception as exc:  # the assignor is optional input: a failure is reported, not raised
            self._anomaly(INFERENCE_FAILED, None, f"{protocol}: {type(exc).__name__}: {exc}")
            return None
        rnd.protocol_name = rnd.protocol_name or protocol
        return {m: sorted(result.get(m, [])) for m in sorted(members)}

    # ================================================================================ helpers
    def _start(self, tp, member, ts, instance, gen, source) -> None:
        self._start_all((tp,), member, ts, instance, gen, source)

    def _start_all(self, tps, member, ts, instance, gen, source) -> None:
        """`member` starts each of `tps` at `ts` (one timeline call per member's assignment)."""
        if not tps:
            return
        timeline = self.timeline
        # whether a stopper's stops are `_stop_never_acted_on` depends on the views only, which starting
        # does not change: asked once per stopper, before the starts
        stoppers = timeline.stoppers_of_unowned(tps)
        infer = {s for s in stoppers if self._stop_never_acted_on(s, gen)} if stoppers else ()
        problems = timeline.start_all(
            tps, member, ts, instance=instance, generation_id=gen, source=source, infer_stops_of=infer
        )
        for tp, problem, holder in problems:
            if problem == DOUBLE_OWNERSHIP and self._left_behind(holder, gen):
                continue  # the holder loses it here (cause lost), as Kafka's protocol allows
            self._anomaly(problem, None, f"{tp} start by {member} at {ts}")
        ep = timeline.episode
        if ep is not None and member in self.member_timed:  # self._timing_used(member), inline
            ep.timing_source = "member"

    def _stop_never_acted_on(self, stopper: str, gen: int | None) -> bool:
        """Whether `stopper` stopped at a rebalance signal (eager: `_signal`) and sent no JoinGroup since,
        and a generation it never joined now gives its partition away (`_left_behind`): its poll loop never
        got to onJoinPrepare (a stall, a GC pause, a death; AbstractCoordinator.ensureActiveGroup runs
        inside poll()), so it stopped consuming before the signal, at an instant no line shows. The stops
        placed at the signal are the latest they can be (`inferred`: the timeline's `stops_inferred`
        before the start), as when its removal or poll timeout says so (`_polled_out`, the coordinator's
        removal)."""
        view = self.views.get(stopper)
        return view is not None and view.signal_unanswered() and self._left_behind(stopper, gen)

    def _left_behind(self, holder: str | None, gen: int | None) -> bool:
        """Whether `holder`'s own log last showed it in a generation older than `gen`: it never joined
        the round that gave its partition away. A static member that does not rejoin (GC pause, stuck
        poll) stays in the group (KIP-345: GroupMetadataManager.completeClassicGroupJoin removes only
        dynamic members that did not rejoin), the leader's assignment moves its partitions without it
        revoking them, and it learns at its next heartbeat or poll (ILLEGAL_GENERATION, poll timeout)
        and calls onPartitionsLost (ConsumerRebalanceListener: lost partitions "may already be owned
        by some other members in the group"). The new owner's start is then no double_ownership."""
        view = self.views.get(holder) if holder is not None else None
        return view is not None and None not in (view.generation_id, gen) and view.generation_id < gen

    def _stop(self, tp, member, ts, cause, instance=None, source="observed") -> None:
        self._stop_all((tp,), member, ts, cause, instance, source)

    def _stop_all(self, tps, member, ts, cause, instance=None, source="observed") -> None:
        """`member` stops each of `tps` at `ts` (one call per member's partitions, not per partition)."""
        if not tps:
            return
        timeline = self.timeline
        for tp, problem in timeline.stop_all(tps, member, ts, cause, instance=instance, source=source):
            self._anomaly(problem, None, f"{tp} stop by {member} at {ts}")
        ep = timeline.episode
        if ep is not None and member in self.member_timed:  # self._timing_used(member), inline
            ep.timing_source = "member"

    def _stop_member(self, member: str, ts: int, cause: str, source: str = "observed") -> None:
        view = self.views.get(member)
        if view is not None:
            self._flush_pending(view)
        owned = self.timeline.partitions_of(member)
        if owned:
            self._stop_all(sorted(owned), member, ts, cause, self._instance_of(member), source)

    def _stop_unlogged_members(self, ts: int, source: str = "observed") -> None:
        """Eager, coordinator timing: members without a log of their own stop when the round starts (in
        member-only logs, at the first logged signal: an estimate, their own signal is in no line)."""
        for member in sorted(self._owners()):
            if not self._is_member_timed(member):
                self._stop_member(member, ts, "revoked", source)

    def _timing_used(self, member: str) -> None:
        ep = self.timeline.episode
        if ep is not None and member in self.member_timed:  # _is_member_timed(member)
            ep.timing_source = "member"

    def _flush_pending(self, view: MemberView) -> None:
        """The member's callbacks were not logged: its synced assignment applied at the sync."""
        pending = view.pending
        if pending is None:
            return
        view.pending = None
        self._stop_all(pending.to_stop, view.member_id, pending.sync_ts, "revoked", view.instance)
        self._start_all(
            pending.to_start,
            view.member_id,
            pending.sync_ts,
            view.instance,
            pending.generation_id,
            pending.source,
        )

    def _flush_all_pending(self) -> None:
        for member in sorted(self.views):
            self._flush_pending(self.views[member])

    def _owners(self) -> set[str]:
        return set(self.timeline.consuming().values())

    def _instance_of(self, member: str) -> str | None:
        info = self.group.members.get(member)
        if info is not None and info.group_instance_id:
            return info.group_instance_id
        view = self.views.get(member)
        return view.instance if view else None

    def _is_member_timed(self, member: str, instance: str | None = None) -> bool:
        return member in self.member_timed or bool(instance and instance in self.member_timed)

    @property
    def protocol(self) -> str | None:
        """The group's rebalance protocol, the one notion every rule consults: eager | cooperative as the
        log shows it (the selected protocol, else the members' first offered one, else a member revoking
        after its sync), else the members' config dumps', else the configured `default_assignor`'s; None
        when none says. Member timing stops everything at the first rebalance signal only when it is eager;
        coordinator timing treats None as eager (the classic consumer's default assignor, range, is)."""
        return (
            self.rebalance_protocol
            or client_config.rebalance_protocol(self.client_configs)
            or rebalance_protocol_of(self._configured_assignor())
        )

    def _configured_assignor(self) -> str | None:
        """The assignor the members' config dumps make the coordinator select, else ReplaySettings'."""
        return client_config.selected_protocol(self.client_configs) or self.settings.default_assignor

    def _configured_session_timeout(self, member: str) -> int | None:
        """The member's own session.timeout.ms, from its config dump (classic: each member's own)."""
        info = self.group.members.get(member)
        return client_config.session_timeout_ms(
            self.client_configs, member, info.client_id if info else None, self._instance_of(member)
        )

    def _set_protocol(self, name: str | None) -> None:
        if not name:
            return
        self.protocol_name = name
        if self.round is not None:
            self.round.protocol_name = name
        detected = rebalance_protocol_of(name)
        if detected:
            self.rebalance_protocol = detected

    def _learn_topics(self, tps: Iterable[TopicPartition]) -> None:
        """Topics grow to cover `tps`. Partitions learned before are skipped in one set operation (most
        assignments repeat the last one): `topics` only grows, except by a metadata line, which clears
        `_learned_partitions`."""
        new = set(tps)
        new -= self._learned_partitions
        if not new:
            return
        topics = self.topics
        for topic, partition in new:  # any order: a count only rises to the largest partition + 1
            if partition >= topics.get(topic, 0):
                topics[topic] = partition + 1
        self._learned_partitions |= new

    def _collect_model_anomalies(self) -> None:
        if not self.group.anomalies:
            return
        for a in self.group.anomalies:
            self._anomaly_row(a.rule, a.ts, a.event_id, a.event_type, a.group_state, a.detail)
        self.group.anomalies.clear()

    def _anomaly(self, rule: str, e: Event | None, detail: str, ts: int | None = None) -> None:
        """Record an anomaly about `e` (default: the event being replayed)."""
        e = e or self._event
        state = self.group.state.value if self.group.state else None
        self._out["anomalies"].append(
            event_anomaly_row(self.timeline, self.key, rule, e, detail, ts, self.last_ts, state)
        )

    def _anomaly_row(self, rule, ts, event_id, event_type, group_state, detail) -> None:
        self._out["anomalies"].append(
            anomaly_row(
                self.timeline, self.key, rule, ts, event_id, event_type, group_state, detail, self.last_ts
            )
        )
