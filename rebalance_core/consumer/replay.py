"""Reconstruct a KIP-848 consumer group (`group.protocol=consumer`) from canonical events.

Same interface as the classic `rebalance_core.classic.replayer.GroupReplayer` (feed / drain / finish /
snapshot, rows of `schemas.tables`), same measures (`OwnershipTimeline`, `EpochTracker`). Any subset of events:

- coordinator (new group coordinator, 3.6+): `group_epoch_bumped`, `target_assignment_computed` (with
  topic ids standing for topic names; `settings.topic_ids` maps them back), `member_epoch_updated`
  ("new assignment state": epoch, previousEpoch, state, assignedPartitions), `join_received`,
  `static_member_replaced`, `member_removed` (member_epoch -2: a static member left temporarily);
- member (AsyncKafkaConsumer): `member_state_changed`, `partitions_revoked` / `_assigned` / `_lost`, and
  `sync_response` for "Reconciling assignment" (attributes.owned: what the member already consumes).

Partition timing: a member with member-side events starts and stops partitions at its rebalance
callbacks (and stops everything when it is FENCED or LEAVING); a member seen only by the coordinator
starts a partition when its assigned partitions first include it and stops it when they no longer do.
Failures: a session timeout places the stop at the last heartbeat (removal - session timeout). What the
broker cannot see is inferred: partitions given to a member that leaves within max.poll.interval.ms (its
callback may never have run), revocations asked of a member whose session expires with no later line.

Convergence of group epoch E (generation stabilized_at): with the target known, every member of the
target reconciled to E (coordinator: epoch E in STABLE; member-only members: STABLE and consuming
exactly their target). Member-side logs only: all known members STABLE and no partition in flight,
provisionally (see `epochs`): a later member rebalance at an epoch not newer than E extends it.
Kafka 4.0 logs the target map and the members' assignment states at DEBUG: with the members' own logs,
the member-side rule applies (a member whose own line states the epoch is at it for the coordinator, even
while its callback is blocked; one whose epoch moved silently within a heartbeat interval makes the episode
inferred); with the broker's log alone, a lone joiner's epoch converges at its target
(computed in its joining heartbeat, which reconciles it), and any other is presumed converged one heartbeat
interval (two, when partitions must be revoked first) after its target, unless the next bump or a member's
failure comes first; either way the episode says inferred. Ownership there is unknown from such a target on (`OwnershipTimeline.owners_unknown`:
the episodes' partition measures null) until a target map is logged or the group empties.

Anomaly rules (besides the ownership timeline's stop_not_owned / double_ownership / start_before_stop):
  wrong_group, unknown_event_type, out_of_order   as in the classic replayer
  invalid_transition   a client state change its previous state does not allow (MemberState table)
  unknown_state        a client or member state name this model does not know
  stale_epoch          a target assignment for an epoch older than the current one (ignored)
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from rebalance_core.consumer.coordinator import (
    REASON_JOINED,
    REASON_LEFT,
    REASON_METADATA,
    REASON_REBALANCE_TIMEOUT,
    REASON_SESSION,
)
from rebalance_core.consumer.epochs import EpochTracker, row_from_json, row_to_json
from rebalance_core.consumer.states import (
    CLIENT_REBALANCE_SIGNALS,
    LEAVE_GROUP_MEMBER_EPOCH,
    LEAVE_GROUP_STATIC_MEMBER_EPOCH,
    ClientState,
    MemberState,
    is_valid_client_transition,
    parse_client_state,
    parse_member_state,
)
from rebalance_core.events import Event, TopicPartition, parse_partitions
from rebalance_core.measures import STOP_NOT_OWNED, OwnershipTimeline
from rebalance_core.replay_common import (
    ReplaySettings,
    add_rows,
    admit,
    check_checkpoint,
    checkpoint_header,
    empty_tables,
    event_anomaly_row,
    event_handlers,
)
from schemas.events import EventType, RemovalReason, Side

STATE_VERSION = 1
GROUP_PROTOCOL_KEY = "consumer"  # snapshot()["group_protocol"]: which replayer resumes the state

# Events that only a KIP-848 group produces: their presence selects this replayer for a group.
CONSUMER_PROTOCOL_EVENT_TYPES = frozenset(
    {
        EventType.GROUP_EPOCH_BUMPED.value,
        EventType.TARGET_ASSIGNMENT_COMPUTED.value,
        EventType.MEMBER_EPOCH_UPDATED.value,
        EventType.MEMBER_STATE_CHANGED.value,
    }
)

# GroupCoordinatorConfig.CONSUMER_GROUP_SESSION_TIMEOUT_MS_DEFAULT (group.consumer.session.timeout.ms): a
# KIP-848 member's session is the broker's setting, not the client's session.timeout.ms
DEFAULT_CONSUMER_SESSION_TIMEOUT_MS = 45_000
# GroupCoordinatorConfig.CONSUMER_GROUP_HEARTBEAT_INTERVAL_MS_DEFAULT (group.consumer.heartbeat.interval.ms):
# a member learns a new target assignment at its next heartbeat, at most this long after it was computed
DEFAULT_CONSUMER_HEARTBEAT_INTERVAL_MS = 5_000
# GroupCoordinatorConfig.CONSUMER_GROUP_MAX_SESSION_TIMEOUT_MS_DEFAULT (group.consumer.max.session.timeout.ms):
# the longest session a member can have on a broker with default settings
CONSUMER_GROUP_MAX_SESSION_TIMEOUT_MS = 60_000
# ConsumerConfig max.poll.interval.ms default: a member whose application thread (and so its rebalance
# callbacks) is blocked longer leaves the group (AbstractMembershipManager.transitionToSendingLeaveGroup
# on the expired poll timer); a member still in the group after it has polled, and run its callbacks
DEFAULT_MAX_POLL_INTERVAL_MS = 300_000
# bump causes after which no member has anything to revoke: each reconciles at its next heartbeat
_FREEING_REASONS = frozenset({REASON_LEFT, REASON_SESSION, REASON_REBALANCE_TIMEOUT})
# member-only logs: how many of the latest epochs no line showed are remembered (see _skipped)
_SKIPPED_EPOCHS_KEPT = 64

INVALID_TRANSITION = "invalid_transition"
UNKNOWN_STATE = "unknown_state"
STALE_EPOCH = "stale_epoch"

# client states in which a member is no longer (or not yet) part of the group's reconciliation
_CLIENT_OUT = frozenset({ClientState.UNSUBSCRIBED, ClientState.LEAVING, ClientState.STALE, ClientState.FATAL})
# client states of a member that is leaving or out: its process closes the consumer (a restart that overlaps
# a graceful close is no crash)
_CLIENT_LEAVING = _CLIENT_OUT | {ClientState.PREPARE_LEAVING}
# member-side logs only: client states of a member the coordinator does not count (yet): JOINING has sent
# its first heartbeat, the member exists at the coordinator only once it is answered with a member epoch
# (ConsumerMembershipManager.onHeartbeatSuccess: JOINING -> RECONCILING), and that epoch's bump is its own
_CLIENT_NOT_IN = _CLIENT_OUT | {ClientState.JOINING}
# client states that follow a heartbeat response stating the member's (new) epoch
_CLIENT_RECONCILING = frozenset(
    {ClientState.RECONCILING.value, ClientState.ACKNOWLEDGING.value, ClientState.STABLE.value}
)
_STOP_CAUSE_ON_REMOVAL = {
    RemovalReason.SESSION_TIMEOUT.value: "member_failed",
    RemovalReason.REBALANCE_TIMEOUT.value: "lost",
    RemovalReason.FENCED_STATIC.value: "lost",
    RemovalReason.LEAVE_GROUP.value: "member_left",
}
_REMOVAL_REASON_TEXT = {
    RemovalReason.SESSION_TIMEOUT.value: REASON_SESSION,
    RemovalReason.REBALANCE_TIMEOUT.value: "member failed to revoke within the rebalance timeout",
}


def is_consumer_protocol_event(e: Event) -> bool:
    """An event only a KIP-848 group produces (the log parser also tags KIP-848 lines with
    attributes.group_protocol = consumer): the group is replayed by ConsumerGroupReplayer."""
    return (
        e.event_type in CONSUMER_PROTOCOL_EVENT_TYPES
        or (e.attributes or {}).get("group_protocol") == "consumer"
    )


@dataclass
class MemberView:
    """What the replay knows of one member."""

    member_id: str
    instance: str | None = None
    joined: bool = False  # the coordinator knows it (a join, a target, an assignment state)
    server_lines: bool = False  # the coordinator logged its assignment state
    server_epoch: int | None = None
    server_state: str | None = None
    server_assigned: list[TopicPartition] | None = None
    # coordinator timing: the partitions its latest assignment-state line added, and that line's instant
    server_started: list[TopicPartition] | None = None
    server_started_at: int | None = None
    left_static: bool = False  # member epoch -2: gone for now, partitions reserved
    left_static_at: int | None = None  # when the coordinator saw it leave so (epoch -2)
    # member-side logs only: the group epoch when its own log showed it leave so (epoch -2)
    left_static_epoch: int | None = None
    # member-side logs only: a static member that closed while JOINING (its leave heartbeat, epoch -2, went
    # out before a response stated a member epoch): whether the coordinator created it from its join
    # heartbeat (then it holds the instance, reserved, until its session expires or a member of its instance
    # replaces it) no log of it shows; `unanswered_until_epoch`: the epoch its instance's successor was
    # answered with, after which it is surely out
    left_unanswered: bool = False
    unanswered_until_epoch: int | None = None
    member_timed: bool = False  # its own log is present: member-side timing
    client_state: str | None = None
    client_epoch: int | None = None  # the member epoch its own last state line states
    joined_in_input: bool = False  # its own log shows its join: all it consumes since is in the input
    process: str | None = None  # who logged its own lines (host or file, client id): the consumer process
    # member-side logs only: its process logged a join under another member id with no leave of this one (a
    # crashed consumer restarted), so this member is dead, but still in the group until the coordinator
    # fences it, one group.consumer.session.timeout.ms (the broker's setting) after its last heartbeat
    process_gone: bool = False
    replaces: str | None = None  # a static member's previous member id, out once this one has its epoch
    # member-side logs only: the group epoch when it logged leaving for good (epoch -1), until the next
    # epoch opens: its leave heartbeat may reach the coordinator after another member's join
    left_in_epoch: int | None = None
    # the instant of its own latest line stating the group's current epoch (a line at an older epoch, after
    # a pause, does not show it is still a member)
    current_at: int | None = None
    # the latest instant a coordinator line shows it heartbeating (its join, an assignment state of its own)
    heartbeat_seen_at: int | None = None


class ConsumerGroupReplayer:
    """Replays one KIP-848 group's events (in `event_order_key` order); see the module docstring."""

    def __init__(
        self,
        cluster: str,
        group_id: str,
        settings: ReplaySettings | None = None,
        state: dict | None = None,
    ):
        if settings is None:
            settings = ReplaySettings()
        self.cluster = cluster
        self.group_id = group_id
        self.settings = settings
        self.key = {"cluster": cluster, "group_id": group_id, "scenario": settings.scenario}
        self.topic_names = {topic_id: name for name, topic_id in settings.topic_ids.items()}
        self._anomalies: list[dict] = []
        timeline_state = tracker_state = None
        self.members: dict[str, MemberView] = {}
        self.gone: dict[str, int] = {}  # removed member -> removal instant (late callbacks are expected)
        self.has_coordinator = False
        self.has_member_side = False  # some member's own log is present: member-side timing
        self.last_ts: int | None = None
        self.pending_start: int | None = None  # a bump cause seen, its epoch not yet
        self.pending_reason: str | None = None
        self.member_signal: int | None = None  # member-only logs: first rebalance signal, its epoch not yet
        # member-only logs: bumps the members' own lines explain and no epoch has shown yet (a join, a leave,
        # a fence, a member found removed unseen), and how many bumps up to the current epoch no line
        # explains (see _epoch_unexplained)
        self.causes_seen = 0
        self.unexplained = 0
        self.shown_in_epoch: set[str] = set()  # members whose own line stated the current epoch (or a later)
        # member-only logs: counted members that may have been removed by a bump no line explains (see
        # _settle_unexplained), until their own line shows them at the group's epoch again
        self.doubtful: set[str] = set()
        # member-side logs only: the current epoch, when a new member's own join opened it right after an epoch
        # whose member list was known (see _member_only_epoch): that join was its only bump
        self.joined_epoch: int | None = None
        # member-only logs: epochs a member's line skipped (it showed a later one first) that no line has shown
        # yet: a member lagging behind may still show one (see _skipped_epoch_shown)
        self.skipped_epochs: set[int] = set()
        # member-only logs from the group's first epoch on: every partition it ever consumed (so one never
        # seen is a new one), and the last epoch whose bump such a partition explained
        self.history_in_input = False
        self.partitions_seen: set[TopicPartition] = set()
        self.new_partitions_epoch: int | None = None
        self.emptied = False  # the last known member was removed
        # topic -> partition count: configured, then as the coordinator's subscription metadata states it
        self.partition_counts: dict[str, int] = dict(settings.topics)
        # a 4.0 broker log alone (no assignment-state line, no member log): when the current epoch has
        # converged at the latest if nothing stops it (see _presume_convergence)
        self.presumed_converged: int | None = None
        # the target instant of the latest epoch whose convergence was presumed (see _settle_presumed)
        self.presumed_target_at: int | None = None
        # the broker's log states the targets it computes ("Computed a new target assignment for epoch N")
        self.targets_logged = False
        # with the broker's log: the epoch at which a member logged RECONCILING again (handed more partitions)
        self.reopened_epoch: int | None = None
        # a rebalance that opens at or before this instant may be a further round of the one before, which a
        # convergence the logs cannot confirm closed (see _round_unknown_until): its episode says inferred
        self.round_unknown_until: int | None = None
        # the member the event just replayed removed never had the current epoch (see _c_member_removed)
        self.removed_unreconciled = False
        if state is not None:
            timeline_state, tracker_state = self._restore(state)
        self.timeline = OwnershipTimeline(cluster, group_id, settings.scenario, state=timeline_state)
        if state is not None and state.get("assignment_seen") is False:
            self.timeline.owners_unknown()  # a state saved when the flag stood for this (no line stated one)
        self.tracker = EpochTracker(
            self.timeline,
            self._group_members,
            settings.default_assignor,
            state=tracker_state,
        )
        self.tracker.logs_own_lines = self._logs_own_lines

    # =============================================================================== public API
    def feed(self, events: Iterable[Event]) -> None:
        for e in events:
            self._replay_one(e)

    def drain(self) -> dict[str, list[dict]]:
        out = add_rows(
            empty_tables(), self.tracker.drain(), self.timeline.drain(), {"anomalies": self._anomalies}
        )
        self._anomalies = []
        return out

    def drain_reconciliations(self) -> list[dict]:
        """Per member and group epoch: target computed -> member reconciled (reconcile_ms). Not a
        schemas.tables table (yet): kept apart from drain() so the table writers are unaffected."""
        return self.tracker.drain_reconciliations()

    def finish(self) -> dict[str, list[dict]]:
        """End of input: emit what is still open (when settings.final) and the daily summary."""
        closing: dict[str, list[dict]] = {}
        if self.presumed_converged is not None and self.last_ts is not None:
            self._settle_presumed(self.last_ts)
        self._settle_unexplained()
        if self.settings.final:
            self.tracker.finish(final=True, last_ts=self.last_ts)
            closing = self.timeline.finish(final=True)  # returns (drains) the rows it closes
        out = add_rows(self.drain(), closing)
        out["group_daily_summary"] = self.timeline.daily_rows()
        return out

    def snapshot(self) -> dict:
        return {
            **checkpoint_header(STATE_VERSION, GROUP_PROTOCOL_KEY, self.cluster, self.group_id),
            "timeline": self.timeline.snapshot(),
            "tracker": self.tracker.snapshot(),
            "members": {m: _view_to_json(v) for m, v in self.members.items()},
            "gone": dict(self.gone),
            "has_coordinator": self.has_coordinator,
            "has_member_side": self.has_member_side,
            "last_ts": self.last_ts,
            "pending_start": self.pending_start,
            "pending_reason": self.pending_reason,
            "member_signal": self.member_signal,
            "causes_seen": self.causes_seen,
            "unexplained": self.unexplained,
            "shown_in_epoch": sorted(self.shown_in_epoch),
            "doubtful": sorted(self.doubtful),
            "joined_epoch": self.joined_epoch,
            "skipped_epochs": sorted(self.skipped_epochs),
            "history_in_input": self.history_in_input,
            "partitions_seen": sorted([tp.topic, tp.partition] for tp in self.partitions_seen),
            "new_partitions_epoch": self.new_partitions_epoch,
            "emptied": self.emptied,
            "partition_counts": dict(self.partition_counts),
            "presumed_converged": self.presumed_converged,
            "presumed_target_at": self.presumed_target_at,
            "targets_logged": self.targets_logged,
            "reopened_epoch": self.reopened_epoch,
            "round_unknown_until": self.round_unknown_until,
            "anomalies": [row_to_json(r) for r in self._anomalies],
        }

    # ================================================================================= dispatch
    def _replay_one(self, e: Event) -> None:
        if not admit(self, e):
            return
        coordinator = e.side == _COORDINATOR
        if coordinator:
            self.has_coordinator = True
            handler = _COORDINATOR_HANDLERS.get(e.event_type)
        else:
            handler = _MEMBER_HANDLERS.get(e.event_type)
            if not self.has_coordinator:
                self._skipped_epoch_shown(e)  # a removed member's late line too: it was in that epoch
            if e.member_id in self.gone:
                if not _rejoins(e):
                    handler = None  # a removed member's late callbacks: it no longer owned anything
                else:
                    del self.gone[e.member_id]
            if handler is not None and e.member_id:
                view = self._view(e.member_id, e.group_instance_id)
                view.member_timed = True
                view.process = view.process or _process_of(e)
                self.has_member_side = self.tracker.hold_for_member_lines = True
        if handler is not None:  # classic-protocol events of a consumer group carry nothing for this model
            handler(self, e)
            epoch = self.tracker.epoch
            if (
                not coordinator
                and e.member_id in self.members
                and e.member_epoch is not None
                and epoch is not None
                and e.member_epoch >= epoch
            ):
                self.members[e.member_id].current_at = e.ts
                self.shown_in_epoch.add(e.member_id)
                self.doubtful.discard(e.member_id)
            if e.member_id and (e.member_id in self.members) and self._in_group(e.member_id):
                # a member from before the input (or the epoch) shows itself: it is in the current epoch
                self.tracker.member_in_epoch(e.member_id, self.members[e.member_id].instance)
        self._flag_unknown_members()
        if not self.removed_unreconciled:
            self._check_convergence(e.ts)
        self.removed_unreconciled = False
        self.tracker.maybe_end_episode()

    # ========================================================================= coordinator side
    def _c_join_received(self, e: Event) -> None:
        if not e.member_id:
            return
        self.gone.pop(e.member_id, None)
        previous = self._left_static(e.group_instance_id)
        if previous is not None and previous.member_id != e.member_id:
            self._replace_static(previous, e.member_id, e.ts)
            return
        view = self._view(e.member_id, e.group_instance_id)
        view.joined, view.heartbeat_seen_at = True, e.ts
        self._cause(e.ts, REASON_JOINED)

    def _c_static_member_replaced(self, e: Event) -> None:
        old = (e.attributes or {}).get("old_member_id")
        previous = self.members.get(old) if old else self._left_static(e.group_instance_id)
        if previous is None:
            self._view(e.member_id, e.group_instance_id)
        elif e.member_id:
            self._replace_static(previous, e.member_id, e.ts)

    def _c_member_removed(self, e: Event) -> None:
        view = self.members.get(e.member_id or "")
        if e.member_epoch == LEAVE_GROUP_STATIC_MEMBER_EPOCH:
            # "temporarily left": stays a member with epoch -2, its partitions reserved (no new epoch)
            if view is not None:
                view.left_static, view.left_static_at = True, e.ts
                view.heartbeat_seen_at = e.ts  # its leave heartbeat: its session runs from here
                view.server_epoch = LEAVE_GROUP_STATIC_MEMBER_EPOCH
                self._stop_all(view, e.ts, "member_left")
            return
        reason = e.reason or RemovalReason.LEAVE_GROUP.value
        self._cause(e.ts, _REMOVAL_REASON_TEXT.get(reason, REASON_LEFT))  # a removal bumps the epoch
        if view is None:
            return
        stop_at, source = e.ts, "observed"
        if reason == RemovalReason.SESSION_TIMEOUT.value:
            # the member stopped at its last heartbeat, one session timeout before the fence. The fence
            # line does not state the timeout: without a configured one, assume the broker's default
            # group.consumer.session.timeout.ms (GroupCoordinatorConfig, 45 s) and say the stop is inferred
            timeout = self._session_timeout(e)
            if timeout is None:
                timeout, source = DEFAULT_CONSUMER_SESSION_TIMEOUT_MS, "inferred"
                # never before a heartbeat the coordinator logged (its join, an assignment state): then the
                # session was shorter than the default, and the last heartbeat is at least that one
                stop_at = max(e.ts - timeout, view.heartbeat_seen_at or e.ts - timeout)
            else:
                stop_at = e.ts - timeout
                # the stated session places its stop: an epoch closed since without a target had it
                # consuming nothing
                self.tracker.member_stopped_at(view.member_id, stop_at)
            if not view.member_timed and view.server_state == MemberState.UNREVOKED_PARTITIONS.value:
                # its last line asked it to revoke (CurrentAssignmentBuilder: UNREVOKED_PARTITIONS until a
                # heartbeat acknowledges) and no later one shows it did: it may have died first, so the
                # revocations this replay placed at that line are inferred (the broker cannot tell)
                self.timeline.stops_inferred(view.member_id)
            if self.presumed_converged is not None and stop_at < self.presumed_converged:
                # gone before its next heartbeat was surely due: no convergence is presumed. Known only when
                # its last heartbeat came before the target was computed (it never had this epoch, and the
                # group is not Stable until every member has: ConsumerGroup.maybeUpdateGroupState)
                target_at = self.tracker.current.target_at
                if source == "inferred" or target_at is None or stop_at >= target_at:
                    self._presumed_episode()
                self.presumed_converged = None
            if self.presumed_target_at is not None and stop_at < self.presumed_target_at:
                self._presumption_failed()
            cur = self.tracker.current
            # its last heartbeat came before the current epoch's target: it never had that epoch, and its
            # removal comes with the next bump (GroupMetadataManager.consumerGroupFenceMember writes both at
            # once), so the group was never Stable at this epoch without it: its leaving converges nothing
            self.removed_unreconciled = (
                cur is not None and cur.target_at is not None and stop_at < cur.target_at
            )
            if (
                cur is not None
                and not cur.closed
                and cur.stabilized_at is not None
                and stop_at < cur.stabilized_at
            ):
                # its own log looked reconciled, but its last heartbeat came before the (provisional)
                # convergence: the coordinator never had it at this epoch
                self.tracker.unconverged()
        elif reason == RemovalReason.REBALANCE_TIMEOUT.value:
            self.presumed_converged = None  # it never finished revoking: the epoch never converged
        cause = _STOP_CAUSE_ON_REMOVAL.get(reason, "member_left")
        if reason == RemovalReason.LEAVE_GROUP.value:
            self._unacted_starts_inferred(view, e.ts, cause)
            self._leaver_may_have_stalled(view, e.ts)
        # the removal bumps the epoch (consumerGroupFenceMember): an epoch provisionally converged before it
        # closes with what its members consumed, the removed one's partitions included, and so does its
        # episode (what the removed member stops now moves in the next rebalance)
        self.tracker.settle()
        self.tracker.maybe_end_episode()
        owned = bool(self.timeline.partitions_of(view.member_id))
        self._stop_all(view, stop_at, cause, source)
        if owned and stop_at < e.ts:
            # placed at its last heartbeat: partitions others started since were all that was consumed
            self.timeline.recount_backdated_stop(stop_at)
            # and a rebalance that converged since counted its partitions as consumed (moved to it) at its end
            self.timeline.closed_episodes_inferred_after(stop_at)
        del self.members[view.member_id]
        self._forget(view.member_id, e.ts)
        if not self._group_members():
            self.emptied = True

    def _c_group_epoch_bumped(self, e: Event) -> None:
        if e.group_epoch is None:
            return
        self._open_epoch(e.group_epoch, e.ts, e.reason, "observed")
        if self.emptied and not self._group_members():
            self.tracker.group_empty(e.ts)

    def _c_target_assignment_computed(self, e: Event) -> None:
        epoch = e.assignment_epoch
        if epoch is None:
            return
        self.targets_logged = True
        current = self.tracker.epoch
        if current is not None and epoch < current:
            self._anomaly(STALE_EPOCH, e, f"target for epoch {epoch} while at {current}")
            return
        recomputed = epoch == current and self.presumed_converged is not None
        if recomputed and self.presumed_converged < e.ts:
            # recomputed without a bump (a static member replaced): the epoch converged before, if due,
            # with the members it had then
            self._settle_presumed(e.ts)
        self._open_epoch(epoch, e.ts, None, "observed")
        if e.assignment is None:
            # 4.0+ logs the target map at DEBUG only (GroupMetadataManager.updateTargetAssignment): the
            # epoch's target was computed here, which members it covers is unknown
            self.tracker.target_computed(e.ts, None, e.protocol_name)
            if recomputed and self.presumed_converged is not None:
                self._settle_presumed(e.ts)  # converges now, with the replacement (see _replace_static)
            self._untimed_members_own_unknown()
            self._presume_convergence(e.ts)
            return
        # the whole target is logged (3.6-3.9 INFO, 4.0 DEBUG): who is assigned what is known from here
        self.timeline.owners_known()
        target = {m: self._names(tps) for m, tps in e.assignment.items()}
        for member in sorted(m for m, v in self.members.items() if v.joined and m not in target):
            # the target covers every member: one missing from it has left unseen
            view = self.members.pop(member)
            self._stop_all(view, e.ts, "member_left")
            self._forget(member, e.ts)
        for member in target:
            self._view(member, None).joined = True
        self.emptied = not target
        instances = {m: v.instance for m, v in self.members.items() if v.instance}
        self.tracker.target_computed(e.ts, target, e.protocol_name, instances)

    def _c_member_epoch_updated(self, e: Event) -> None:
        if not e.member_id or e.member_epoch is None:
            return
        view = self._view(e.member_id, e.group_instance_id)
        attributes = e.attributes or {}
        state = parse_member_state(attributes.get("state"))
        if state is MemberState.UNKNOWN and attributes.get("state") != MemberState.UNKNOWN.value:
            self._anomaly(UNKNOWN_STATE, e, f"member state {attributes.get('state')!r}")
        if self.tracker.epoch is None or e.member_epoch > self.tracker.epoch:
            # the first line showing this epoch: its target was computed before any member reached it
            # (GroupMetadataManager bumps the group epoch, computes the target, then reconciles members),
            # so this line is a member's reconciliation step, not the epoch's start
            self._open_epoch(e.member_epoch, None, None, "inferred", seen_at=e.ts)
        assigned = sorted(self._names(e.partitions or ()))
        if not view.member_timed:
            self._coordinator_timing(view, assigned, e.ts, _missing_state_line(view.server_epoch, attributes))
        view.joined = view.server_lines = True
        view.heartbeat_seen_at = e.ts  # the coordinator states an assignment in answer to its heartbeat
        view.server_epoch = e.member_epoch
        view.server_state = state.value
        view.server_assigned = assigned
        view.left_static = False
        if e.member_epoch == self.tracker.epoch:
            # the member's assignment as the coordinator states it (3.8+ "new assignment state ...
            # assignedPartitions=", 3.6-3.7 CurrentAssignment(assignedPartitions=, partitionsPendingRevocation=)):
            # observed, not inferred; STABLE at the epoch ends this member's reconciliation
            self.tracker.member_stated(view.member_id, tuple(assigned))
            if state is MemberState.STABLE:
                self.tracker.member_reconciled(view.member_id, e.ts, "coordinator")

    def _c_topic_metadata_changed(self, e: Event) -> None:
        """ "Computed new subscription metadata: {t=TopicMetadata(..., numPartitions=N ...)}": the partition
        counts of the subscribed topics (attributes topic.<name>), and a cause of the next bump."""
        for key, value in (e.attributes or {}).items():
            if key.startswith("topic.") and value.isdigit():
                self.partition_counts[key.removeprefix("topic.")] = int(value)
        self._cause(e.ts, REASON_METADATA)

    def _c_group_dead(self, e: Event) -> None:
        """The group was deleted: epochs start again from scratch."""
        self.tracker.restart(e.ts)
        self.timeline.group_empty(e.ts)
        self.timeline.end_episode(e.ts)
        for member in list(self.members):
            self._forget(member, e.ts)
        self.members.clear()
        self.pending_start = self.pending_reason = None

    # ============================================================================== member side
    def _m_member_state_changed(self, e: Event) -> None:
        view = self._view(e.member_id, e.group_instance_id)
        attributes = e.attributes or {}
        to_state = parse_client_state(attributes.get("to_state"))
        from_state = parse_client_state(attributes.get("from_state"))
        if to_state is None:
            self._anomaly(UNKNOWN_STATE, e, f"client state {attributes.get('to_state')!r}")
            return
        if from_state is not None and not is_valid_client_transition(from_state, to_state):
            self._anomaly(INVALID_TRANSITION, e, f"{from_state.value} -> {to_state.value}")
        # a static member closed before the coordinator answered it with a member epoch reserves nothing: its
        # leave heartbeat (epoch -2) finds the instance still held by its previous member, or no member
        # (GroupMetadataManager.consumerGroupStaticMemberGroupLeave: FENCED_INSTANCE_ID / UNKNOWN_MEMBER_ID)
        had_epoch = view.joined or (view.client_epoch or 0) > 0
        replacing = view.replaces is not None or bool(self._unanswered_of(view))
        view.client_state = to_state.value
        view.client_epoch = e.member_epoch
        self.tracker.member_at_epoch(view.member_id, e.member_epoch)
        if to_state is ClientState.FENCED and self._silent_since_epoch_opened(view):
            # removed at an instant no member log shows, since before the current epoch opened: its removal
            # may be the bump that opened it (one no line explained), else a later one
            self._bump_explained()
        elif _bumps_group_epoch(to_state, e.member_epoch):
            self.causes_seen += 1
        elif to_state is ClientState.FATAL and from_state is ClientState.JOINING:
            # a join refused (e.g. UNRELEASED_INSTANCE_ID: GroupMetadataManager.throwIfInstanceIdIsUnreleased)
            # creates no member: it bumps nothing, and no epoch counts it (a line of its process, such as the
            # previous member's callback, may have shown it first)
            self.causes_seen = max(0, self.causes_seen - 1)
            if not self.has_coordinator:
                self.tracker.member_out(view.member_id)
        if to_state is ClientState.JOINING:
            view.left_static = False
            view.joined_in_input = True
            previous = self._left_static(view.instance)
            if previous is not None and not self.has_coordinator:
                # member-side logs only (so far: the broker's lines of the same instants may follow):
                # the static member is back under a new member id. The old id is out, but its view
                # stays until forgotten: it says the old id's own log is present (member timing).
                previous.left_static = False
                self._forget(previous.member_id, e.ts)
                view.replaces = previous.member_id
            if not self.has_coordinator:
                self._process_restarted(view)
        elif to_state is ClientState.RECONCILING and from_state is ClientState.JOINING and view.replaces:
            replaced, view.replaces = view.replaces, None
            self._static_successor_answered(view, replaced, e.member_epoch)
        elif to_state is ClientState.LEAVING and e.member_epoch == LEAVE_GROUP_STATIC_MEMBER_EPOCH:
            # a static member leaving "temporarily": its partitions stay reserved
            view.left_static, view.left_static_at = had_epoch, e.ts
            view.left_static_epoch = self.tracker.epoch
            view.left_unanswered = not had_epoch and not self.has_coordinator
        elif to_state is ClientState.LEAVING and e.member_epoch == LEAVE_GROUP_MEMBER_EPOCH:
            view.left_in_epoch = self.tracker.epoch
        elif (
            to_state is ClientState.RECONCILING
            and from_state is ClientState.JOINING
            and not self.has_coordinator
        ):
            self._instance_taken_over(view, e.ts)
            for other in self._unanswered_of(view):
                other.unanswered_until_epoch = e.member_epoch
        if to_state is ClientState.PREPARE_LEAVING and not self._lags_converged_epoch(view, e):
            self._convergence_holds(view)
        if to_state is ClientState.FENCED:
            self._fenced_unseen(view)
            self._stop_all(view, e.ts, "lost")
        elif to_state in (ClientState.LEAVING, ClientState.UNSUBSCRIBED):
            self._stop_all(view, e.ts, "member_left")
        if to_state in (ClientState.FATAL, ClientState.UNSUBSCRIBED, ClientState.STALE) and not (
            view.joined or view.left_static
        ):
            # out of the group as far as we know (refused, or a leave only its own log shows; STALE: its poll
            # timer expired and it sent its leave heartbeat, AbstractMembershipManager.transitionToStale)
            self._forget(view.member_id, e.ts)
            self.emptied = not self._group_members()
            if self.emptied and not self.has_coordinator:
                self._settle_unexplained()
                self.unexplained = 0
                # member-side logs only: the last known member left
                self.tracker.group_empty(e.ts, emptied_unseen=True)
        if not self.has_coordinator:
            if to_state is ClientState.STABLE:
                self._idle_members_out(view, e.ts)
            self._member_only_epoch(view, to_state, e, replacing)
        elif to_state is ClientState.RECONCILING and from_state is not ClientState.JOINING:
            # (a join's own response, JOINING -> RECONCILING, is no further step of a converged epoch)
            # a provisional convergence did not hold: a member reconciles again at this epoch (a join, a
            # leave or a fence is the coordinator's own line, and its bump opens the next epoch)
            cur = self.tracker.current
            if cur is not None and not cur.closed and e.member_epoch == cur.epoch:
                self.reopened_epoch = cur.epoch
            self.tracker.unconverged()
        elif self._lags_converged_epoch(view, e):
            # its own line states an older epoch after the (provisional) convergence: the client logs the epoch
            # of the last heartbeat response it processed (ConsumerMembershipManager), so the coordinator had
            # not moved it to the current one yet, and the group is not Stable until it has
            # (ConsumerGroup.maybeUpdateGroupState)
            self.tracker.unconverged()

    def _convergence_holds(self, view: MemberView) -> None:
        """`view`, a member of the provisionally converged epoch, starts leaving: close() or unsubscribe()
        (PREPARE_LEAVING) revokes all it owns before its leave heartbeat, whose removal bumps the epoch
        (GroupMetadataManager.consumerGroupFenceMember). The group changes now, so the convergence held, and its
        episode ends here with what every member consumed when it converged (each member STABLE, its
        reconciliation done: ConsumerMembershipManager); what this member gives up now moves in the next
        rebalance. (Not so a member whose line states an older epoch: it never reached this one, which did not
        converge; nor a member learning it was FENCED: its removal came at an unseen earlier instant, which may
        be before the convergence the member-side lines suggest.)"""
        cur = self.tracker.current
        if cur is None or cur.closed or cur.stabilized_at is None:
            return
        if view.member_id not in (cur.target if cur.target is not None else (cur.members or {})):
            return
        self.tracker.settle()
        self.tracker.maybe_end_episode()

    def _lags_converged_epoch(self, view: MemberView, e: Event) -> bool:
        cur = self.tracker.current
        return (
            cur is not None
            and not cur.closed
            and cur.stabilized_at is not None
            and e.member_epoch is not None
            and 0 < e.member_epoch < cur.epoch
            and view.member_id in (cur.members or {})
        )

    def _member_only_epoch(self, view: MemberView, to_state: ClientState, e: Event, replacing: bool) -> None:
        """Member-side logs only: epochs come from the members' own (lagging) epochs, a rebalance starts
        at a member's first rebalance signal. `replacing`: `view` joined under the instance of a static member
        that left temporarily (it may be answered with an epoch another bump opened)."""
        current = self.tracker.current
        epoch = e.member_epoch
        if epoch is not None and epoch > 0 and (current is None or epoch > current.epoch):
            if current is not None:
                self._skipped(range(current.epoch + 1, epoch))
            joined = parse_client_state((e.attributes or {}).get("from_state")) is ClientState.JOINING
            self._epoch_unexplained(epoch, current.epoch if current is not None else None)
            # a new member is answered with the epoch its own join bumped (GroupMetadataManager
            # .consumerGroupHeartbeat: the member's epoch is the new group epoch's target epoch); when the
            # lines explain every bump since the epoch shown before (its join, leaves and joins logged before
            # it), none of them removed a member of that epoch unseen
            self.joined_epoch = (
                epoch
                if joined
                and not replacing
                and current is not None
                and not self.unexplained
                and current.members is not None
                and not current.members_unknown
                else None
            )
            self._open_epoch(epoch, e.ts, None, "inferred")
            self.shown_in_epoch = {view.member_id}
            cur = self.tracker.current
            self._leavers_processed_after(epoch if joined else None)
            if (
                joined
                and cur.epoch == epoch
                and list(cur.members or ()) == [view.member_id]
                and (epoch == 1 or self._others_seen(view.member_id))
            ):
                # a lone member's join (a new group, or every member seen before is out; a member from
                # before the input may be silent): the coordinator reconciled it in its joining heartbeat
                # (nothing it is assigned is owned by another), the epoch converged; provisionally, so the
                # epoch's row states what the member then consumes
                self.tracker.converged(e.ts, provisional=True)
        elif to_state in CLIENT_REBALANCE_SIGNALS:
            provisional = current is not None and not current.closed and current.stabilized_at is not None
            rejoined = parse_client_state((e.attributes or {}).get("from_state")) is ClientState.JOINING
            if provisional and to_state is ClientState.RECONCILING:
                # a later step of the same epoch's reconciliation; but a join answered with the current
                # epoch is a static member replaced, which bumps nothing (GroupMetadataManager:
                # staticMemberReplaced recomputes the target at the same epoch): the epoch stays converged
                if not rejoined:
                    self.tracker.unconverged()
            elif (current is None or current.closed or provisional) and self.member_signal is None:
                # a join, a leave or a fence: the cause of the next epoch's bump
                self.member_signal = e.ts

    def _skipped(self, epochs: range) -> None:
        """Member-side logs only: the group's epoch moved past `epochs` without a line showing them. Only the
        latest are remembered: a member lags by the epochs that opened while it did not heartbeat."""
        self.skipped_epochs.update(epochs)
        if len(self.skipped_epochs) > _SKIPPED_EPOCHS_KEPT:
            self.skipped_epochs = set(sorted(self.skipped_epochs)[-_SKIPPED_EPOCHS_KEPT:])

    def _skipped_epoch_shown(self, e: Event) -> None:
        """Member-side logs only: a member's line states an epoch the group had passed without a line showing
        it (a member lagging: the client logs the epoch of the last heartbeat response it processed,
        ConsumerMembershipManager, and a member keeps its epoch while it revokes, CurrentAssignmentBuilder
        UNREVOKED_PARTITIONS). Member epochs are group epochs, so that epoch was one, with this member in it:
        its row (see EpochTracker.epoch_shown_late)."""
        if e.member_epoch in self.skipped_epochs:
            self.skipped_epochs.discard(e.member_epoch)
            self.tracker.epoch_shown_late(e.member_epoch, e.ts, "member")

    def _epoch_unexplained(self, epoch: int, previous: int | None) -> None:
        """Member-side logs only: a member's line shows group epoch `epoch`, the latest shown was `previous`.
        Every bump has a cause (GroupMetadataManager: a member joined, left, was fenced, or the subscribed
        topics' metadata changed); the members' own logs show joins, leaves and fences, not a silent member
        whose session expired (a crash: the coordinator's consumerGroupFenceMember after
        group.consumer.session.timeout.ms) nor a metadata change. More bumps than the lines explain: the
        epochs they opened may no longer count a member whose log is silent, so the epoch that closes now
        and the new one are settled by _settle_unexplained (member list null unless every member counted
        stated the epoch)."""
        self._settle_unexplained()
        # the first epoch shown: one bump (the join that shows it, or one from before the input)
        bumps = epoch - previous if previous is not None else 1
        if previous is None:
            self.history_in_input = epoch == 1
        self.unexplained = max(0, bumps - self.causes_seen) if previous is not None else 0
        self.causes_seen = max(0, self.causes_seen - bumps)

    def _removed_unseen(self, member: str) -> None:
        """Member-side logs only: `member` turned out to have been removed unseen (its session expired): the
        removal bumped the group epoch, so it explains a bump (the current epoch's, or the next one's)."""
        self.tracker.member_out(member)
        self._bump_explained()

    def _bump_explained(self) -> None:
        """Member-side logs only: a cause of a bump no member line states was found (see _epoch_unexplained):
        the current epoch's unexplained bump, else the next one's."""
        if self.unexplained:
            self.unexplained -= 1
        else:
            self.causes_seen += 1

    def _settle_unexplained(self) -> None:
        """Member-side logs only: the current epoch closes (or the input ends). Opened by a bump no line
        explains, its member list is what its members' own lines state: one counted member that never
        stated the epoch may be the silent member whose removal bumped it, so the list is unknown (null). Such
        a member stays in doubt in the later epochs too (its removal may be that bump, or still to come), until
        its own line shows it at the group's epoch."""
        cur = self.tracker.current
        if not self.unexplained or self.has_coordinator or cur is None or cur.closed or cur.members is None:
            return
        unshown = {m for m in cur.members if m not in self.shown_in_epoch}
        if unshown:
            self.tracker.members_unknown()
            self.doubtful |= unshown

    def _leavers_processed_after(self, join_epoch: int | None) -> None:
        """Member-side logs only: a new epoch opened (`join_epoch`: a joiner's first epoch, else None). A
        member logs LEAVING -> UNSUBSCRIBED once its leave heartbeat (epoch -1) is sent; the coordinator
        removes it when that heartbeat arrives, and every removal bumps the group epoch
        (GroupMetadataManager.consumerGroupFenceMember). A joiner answered with the epoch right after the one
        the leaver left in was bumped by its own join alone: the leave was not processed yet, so the leaver
        is a member of that epoch (its own bump is a later one)."""
        for view in self.members.values():
            if view.left_in_epoch is None:
                continue
            if join_epoch is not None and join_epoch == view.left_in_epoch + 1:
                self.tracker.member_in_epoch(view.member_id, view.instance)
            view.left_in_epoch = None

    def _idle_members_out(self, view: MemberView, ts: int) -> None:
        """Member-side logs only: `view` is STABLE at the current epoch and consumes every partition anyone
        consumes, none in flight, at least one per member counted in the epoch. The broker's assignors give
        every member of a topic at least one partition when there are as many (UniformAssignor, RangeAssignor
        balance the partitions), so a counted member of the same subscription that joined within the input,
        consumes nothing and whose log never showed this epoch has no target: it is out of the group, removed
        unseen (its session expired while its log was silent, a crash). It owned nothing, so nothing stops. (A
        member that logged this epoch is in it: its subscription may differ; member logs do not state it. A
        member that logged leaving for good is not silent: it stays counted until its leave heartbeat reaches
        the coordinator, and that leave is its own bump, already counted; a static one that left temporarily,
        epoch -2, bumps nothing and keeps its target, so one without any was removed at its session expiry.)"""
        cur = self.tracker.current
        tl = self.timeline
        if cur is None or cur.closed or cur.members is None or view.client_epoch != cur.epoch:
            return
        mine = tl.partitions_of(view.member_id)
        if tl.stopped() or len(mine) < len(cur.members) or set(tl.consuming()) != set(mine):
            return
        for member in [m for m in cur.members if m != view.member_id]:
            other = self.members.get(member)
            if (
                other is not None
                and other.joined_in_input
                and other.client_epoch != cur.epoch  # its own log never showed it at this epoch
                and (other.left_static or parse_client_state(other.client_state) not in _CLIENT_LEAVING)
                and not tl.partitions_of(member)
            ):
                other.client_state = ClientState.FENCED.value
                self._forget(member, ts)
                self._removed_unseen(member)

    def _instance_taken_over(self, view: MemberView, ts: int) -> None:
        """Member-side logs only: `view` joined with a group.instance.id and was accepted (given a member
        epoch). The coordinator accepts a static member only once the instance's previous member left
        (epoch -2) or was removed (GroupMetadataManager.throwIfInstanceIdIsUnreleased: else
        UNRELEASED_INSTANCE_ID, fatal), so a previous member of that instance still counted (a crashed
        process, its log silent) is out, of the epoch this join opens too. What it consumed stops (inferred)
        once another member is assigned it (`_owner_removed_unseen`): when it stopped, no line shows."""
        if not view.instance:
            return
        taken = [
            v
            for v in self.members.values()
            if v.instance == view.instance and v.member_id != view.member_id and v.member_id not in self.gone
        ]
        for other in taken:
            other.client_state = ClientState.FENCED.value
            other.left_static = False
            self._forget(other.member_id, ts)
            self._bump_explained()  # its removal (session expired) bumped the epoch

    def _static_successor_answered(self, view: MemberView, replaced: str, epoch: int | None) -> None:
        """Member-side logs only: `view` joined under the group.instance.id of `replaced`, which left
        temporarily (epoch -2: kept in the group, its assignment reserved, until its session expires,
        GroupMetadataManager.consumerGroupStaticMemberGroupLeave), and is answered with member epoch `epoch`.

        - `epoch` not newer than the current one: `view` replaced it in place
          (GroupMetadataManager.consumerGroupHeartbeat -> replaceMember: no bump), so its JOINING is no cause
          of a bump, and the epoch's members are the replacement's from here (it joins the epoch as its line
          shows it); an epoch that converged before keeps the members it converged with.
        - newer: `replaced`'s session expired first, and that removal bumped an epoch R after the one it left
          in; the join bumped `epoch` itself. R <= `epoch` - 1, so if that is the current epoch (opened after
          the leave), `replaced` is no member of it; with more epochs between, R may be one no line showed:
          whether the current epoch still counted it is unknown (null). The epoch it left in counted it."""
        cur = self.tracker.current
        if cur is None or epoch is None:
            return
        if epoch <= cur.epoch:
            self.causes_seen = max(0, self.causes_seen - 1)
            if cur.stabilized_at is None:
                self.tracker.member_out(replaced)
            return
        previous = self.members.get(replaced)
        left_in = previous.left_static_epoch if previous is not None else None
        if replaced not in (cur.members or {}) or left_in is None or left_in >= cur.epoch:
            return
        if epoch == cur.epoch + 1:
            self.tracker.member_out(replaced)
        else:
            self.tracker.members_unknown()

    def _process_restarted(self, view: MemberView) -> None:
        """Member-side logs only: `view` joins from a consumer process that logged another member id before,
        which never logged leaving. A consumer keeps its member id for its lifetime (a fenced member rejoins
        under the same id: AbstractMembershipManager.transitionToJoining), so the other one's process is gone
        (a crash, then a restart): the coordinator still counts it until its session expires, one
        group.consumer.session.timeout.ms (a broker setting no member log states) after its last heartbeat.
        Which later epochs count it cannot be told (see _flag_unknown_members)."""
        if view.process is None:
            return
        for other in self.members.values():
            if (
                other.process == view.process
                and other.member_id != view.member_id
                and other.member_id not in self.gone
                and parse_client_state(other.client_state) not in _CLIENT_LEAVING
            ):
                other.process_gone = True

    def _fenced_unseen(self, view: MemberView) -> None:
        """Member-side logs only: `view` learns it was fenced (its heartbeat answered FENCED_MEMBER_EPOCH or
        UNKNOWN_MEMBER_ID after a pause, or its revocation overran the rebalance timeout). The coordinator
        removed it at an instant no member log shows, since its last line at the then current epoch: an epoch
        that opened after that line may or may not count it, so its member list is unknown (null)."""
        if self._silent_since_epoch_opened(view):
            self.tracker.members_unknown()

    def _silent_since_epoch_opened(self, view: MemberView) -> bool:
        """Member-side logs only: `view` is counted in the current epoch, and its own last line at the group's
        epoch came before that epoch opened."""
        cur = self.tracker.current
        if self.has_coordinator or cur is None or cur.closed or cur.members is None:
            return False
        opened, seen = cur.started_at, view.current_at
        return view.member_id in cur.members and seen is not None and opened is not None and opened > seen

    def _flag_unknown_members(self) -> None:
        """Member-side logs only: the current epoch counts a member whose process is gone (see
        _process_restarted) and whose own log never stated this epoch: it may have been fenced at it or
        before, or still be counted, so the epoch's member list is unknown (null), never a guess; except an
        epoch a new member's join opened alone (joined_epoch): it counts whom the epoch before counted. Likewise
        an epoch that may count a static member closed while JOINING (see _maybe_counted_unanswered)."""
        cur = self.tracker.current
        if self.has_coordinator or cur is None or cur.closed or cur.members is None or cur.members_unknown:
            return
        if self._maybe_counted_unanswered():
            self.tracker.members_unknown()
            return
        if self.joined_epoch == cur.epoch:
            return  # opened by a join alone: it counts whom the epoch before counted (see _member_only_epoch)
        for member in cur.members:
            view = self.members.get(member)
            if member in self.doubtful or (
                view is not None and view.process_gone and cur.epoch > (view.client_epoch or 0)
            ):
                self.tracker.members_unknown()
                return

    def _unanswered_of(self, view: MemberView) -> list[MemberView]:
        """Static members of `view`'s instance, other than it, that closed while JOINING (left_unanswered)."""
        if not view.instance:
            return []
        return [
            v
            for v in self.members.values()
            if v.left_unanswered and v.instance == view.instance and v.member_id != view.member_id
        ]

    def _maybe_counted_unanswered(self) -> bool:
        """Member-side logs only: the current epoch opened after a static member closed while JOINING and may
        count it. A JOINING member that closes sends its leave heartbeat (AbstractMembershipManager.leaveGroup:
        only UNSUBSCRIBED, FENCED, FATAL and STALE are out of the group) and ignores any response to its join
        heartbeat, so its log never shows whether the coordinator had processed that join. If it had, the join
        bumped the epoch and the leave (epoch -2) kept the member, reserved, until its session expired
        (GroupMetadataManager.consumerGroupStaticMemberGroupLeave) or a member of its instance replaced it at
        the same epoch (replaceMember): the epochs in between, the successor's included, count the old
        member id or not. Bounded by the broker's longest session (group.consumer.max.session.timeout.ms,
        60 s by default; the configured session timeout where given) and by the successor's epoch."""
        cur = self.tracker.current
        opened = cur.started_at if cur.started_at is not None else self.last_ts
        longest = self.settings.session_timeout_ms or CONSUMER_GROUP_MAX_SESSION_TIMEOUT_MS
        for view in self.members.values():
            if not view.left_unanswered or view.left_static_at is None or opened is None:
                continue
            if opened - view.left_static_at > longest:
                view.left_unanswered = False  # surely expired before any later epoch
                continue
            until = view.unanswered_until_epoch
            if cur.epoch > (view.left_static_epoch or 0) and (until is None or cur.epoch <= until):
                return True
        return False

    def _m_sync_response(self, e: Event) -> None:
        """KIP-848 client "Reconciling assignment with local epoch ..." (partitions = the new assignment,
        attributes.owned = what it consumes now, a comma list): partitions it owned since before the input
        become known (else a member-only log can look like a stop-the-world). The callbacks time the changes.
        With the coordinator's log the block adds nothing: its lines own the epochs and the owners, while the
        block names no member epoch (a member reconciling an earlier epoch's assignment logs it after the
        group moved on) and leaves out partitions the coordinator withholds until their owner released them
        (CurrentAssignmentBuilder: UNRELEASED_PARTITIONS), so it is not the epoch's assignment."""
        view = self._view(e.member_id, e.group_instance_id)
        owned = [item.strip() for item in (e.attributes or {}).get("owned", "").split(",") if item.strip()]
        self.tracker.member_assignment_line(
            view.member_id,
            view.client_epoch,
            self._names(e.partitions or ()),
            self._names(parse_partitions(owned) or ()),
            revoking=bool((e.attributes or {}).get("revoked")),
            target_epoch=self.tracker.epoch if self.has_coordinator else None,
        )
        if self.has_coordinator:
            return
        for tp in self._names(parse_partitions(owned) or ()):
            self._adopt(tp, view, e.ts)
        if e.partitions is not None:
            # "Assigned partitions:" is the member's whole target assignment (AbstractMembershipManager
            # .maybeReconcile; MembershipManagerImpl in 3.8): observed assignment rows for the epoch
            self.tracker.member_stated(view.member_id, self._names(e.partitions))

    def _m_partitions_assigned(self, e: Event) -> None:
        view = self._view(e.member_id, e.group_instance_id)
        for tp in self._names(e.partitions or ()):
            if not self.has_coordinator:
                self._owner_removed_unseen(tp, view, e.ts)
                self._new_partition(tp, view)
            self._start(tp, view, e.ts)

    def _new_partition(self, tp: TopicPartition, view: MemberView) -> None:
        """Member-side logs only, the group's whole history in the input: a partition no member ever consumed
        is new to the group (a topic's partition count grew, or a subscription added a topic): the
        coordinator bumps the group epoch when the subscribed topics' metadata changes
        (GroupMetadataManager.consumerGroupHeartbeat: subscription metadata refreshed), a cause no member log
        states; one such bump per epoch is explained. The partition came with the member's own epoch (the
        target it reconciled to): one assigned at epoch 1, or at an epoch older than the group's current one (a
        callback that ran after the next bump), explains no bump of the current epoch."""
        if tp in self.partitions_seen:
            return
        self.partitions_seen.add(tp)
        epoch = self.tracker.epoch
        if (
            self.history_in_input
            and epoch is not None
            and epoch > 1
            and view.client_epoch == epoch
            and self.new_partitions_epoch != epoch
        ):
            self.new_partitions_epoch = epoch
            self._bump_explained()

    def _owner_removed_unseen(self, tp: TopicPartition, view: MemberView, ts: int) -> None:
        """Member-side logs only: tp is assigned to `view` while another member consumes it and never
        revoked it. The coordinator assigns a partition only once its previous owner released it or was
        removed from the group (CurrentAssignmentBuilder: UNRELEASED_PARTITIONS until then), so that owner
        was fenced, its session expired while its log was silent (a crash): it is out of the group, and
        when it stopped no line shows (inferred: at the latest, now)."""
        owner = self.timeline.owner_of(tp)
        previous = self.members.get(owner) if owner is not None and owner != view.member_id else None
        if previous is None:
            # a static member that left "temporarily" (epoch -2) keeps its assigned partitions reserved until
            # its session expires (GroupMetadataManager.consumerGroupStaticMemberGroupLeave): one of them
            # assigned elsewhere at a later epoch says that session expired. The leave clears the partitions
            # pending its revocation, so at the epoch it left in (whose target had already given them to
            # others) they move at once: no sign of an expiry
            stopper = self.members.get(self.timeline.stopped().get(tp, ""))
            if (
                stopper is not None
                and stopper.left_static
                and stopper.member_id != view.member_id
                and (view.client_epoch or 0) > (stopper.left_static_epoch or 0)
            ):
                stopper.left_static = False
                self._forget(stopper.member_id, ts)
                self._removed_unseen(stopper.member_id)
            return
        self._stop_all(previous, ts, "member_failed", "inferred")
        previous.client_state = ClientState.FENCED.value
        self._forget(previous.member_id, ts)
        self._removed_unseen(previous.member_id)

    def _m_partitions_revoked(self, e: Event) -> None:
        view = self._view(e.member_id, e.group_instance_id)
        leaving = view.client_state in (ClientState.PREPARE_LEAVING.value, ClientState.LEAVING.value)
        for tp in self._names(e.partitions or ()):
            self._member_stop(view, tp, e.ts, "member_left" if leaving else "revoked", e)

    def _m_partitions_lost(self, e: Event) -> None:
        view = self._view(e.member_id, e.group_instance_id)
        for tp in self._names(e.partitions or ()):
            self._member_stop(view, tp, e.ts, "lost", e)

    def _m_leave_sent(self, e: Event) -> None:
        self._stop_all(self._view(e.member_id, e.group_instance_id), e.ts, "member_left")

    # ============================================================================= epochs, convergence
    def _cause(self, ts: int, reason: str | None) -> None:
        """Something that bumps the group epoch happened; the bump itself may not be logged."""
        if self.pending_start is None:
            self.pending_start = ts
        if reason and self.pending_reason is None:
            self.pending_reason = reason

    def _open_epoch(
        self, epoch: int, ts: int | None, reason: str | None, source: str, seen_at: int | None = None
    ) -> None:
        """Epoch `epoch` began at `ts` (None: before `seen_at`, the first line showing it), or at the
        cause seen before it."""
        cause = self.pending_start if self.has_coordinator else self.member_signal
        shown = ts if ts is not None else seen_at
        current = self.tracker.epoch
        if self.presumed_converged is not None and (current is None or epoch > current):
            self._settle_presumed(shown)
        self._reopened_unsettled(epoch)
        started = cause if cause is not None and cause <= shown else ts
        timing = "member" if self.has_member_side else "coordinator"
        episode_before = self.timeline.episode
        if self.tracker.open_epoch(
            epoch, started, reason or self.pending_reason, source, timing, seen_at=shown
        ):
            self.pending_start = self.pending_reason = self.member_signal = None
            episode = self.timeline.episode
            if episode is not None and episode is not episode_before:
                if self.round_unknown_until is not None and shown <= self.round_unknown_until:
                    episode.source = "inferred"
                if episode.started_at is not None:
                    self._young_starts_inferred(episode.started_at)
            self.round_unknown_until = None

    def _reopened_unsettled(self, epoch: int) -> None:
        """Epoch `epoch` opens while the current one, in which a member logged RECONCILING again at that same
        epoch, has not converged (again). That line answers a heartbeat that handed the member partitions at the same
        epoch: the coordinator hands them once their previous owners released them, and the member is then
        STABLE for it (CurrentAssignmentBuilder: UNRELEASED_PARTITIONS -> STABLE, no acknowledgement needed for
        added partitions), so the epoch may have converged right there, while the member's own callback (what
        its log times) had not run yet. Whether the new epoch is a further round or a rebalance of its own,
        no line tells: the episode says inferred."""
        cur = self.tracker.current
        reopened, self.reopened_epoch = self.reopened_epoch, None
        if cur is None or cur.closed or reopened != cur.epoch or epoch <= cur.epoch:
            return
        if cur.stabilized_at is None and self.timeline.episode is not None:
            self.timeline.episode.source = "inferred"

    def _young_starts_inferred(self, opened_at: int) -> None:
        """A rebalance opens at `opened_at` while a member timed by the coordinator alone was handed partitions
        less than a heartbeat interval before. The coordinator logs the assignment when it answers the
        heartbeat (CurrentAssignmentBuilder moves the member to STABLE at once); the member consumes them only
        once its onPartitionsAssigned has run, and it acknowledges that in a later heartbeat that no broker line
        shows (the member's state does not change: GroupMetadataManager logs a new assignment state only on a
        change). Whether it owned them before this rebalance, and so whether they move in it, is unknown: the
        episode's movement count is inferred (never an exact-looking count of moves it cannot see)."""
        episode = self.timeline.episode
        for view in self.members.values():
            if view.member_timed or not view.server_started or view.server_started_at is None:
                continue
            if opened_at - view.server_started_at >= DEFAULT_CONSUMER_HEARTBEAT_INTERVAL_MS:
                continue
            if set(view.server_started) & self.timeline.partitions_of(view.member_id):
                episode.source = "inferred"
                return

    def _check_convergence(self, ts: int) -> None:
        cur = self.tracker.current
        if cur is None or cur.closed:
            return
        if cur.target is not None:
            for member, tps in cur.target.items():
                view = self.members.get(member)
                if view is None or not self._reconciled(view, cur.epoch, tps, ts):
                    return
            self.tracker.converged(ts)
        elif self.has_coordinator:
            if self.targets_logged and cur.target_at is None:
                # the broker logs each target it computes, and none for this epoch yet: the group is
                # Assigning while its epoch is ahead of the target's (ConsumerGroup.maybeUpdateGroupState),
                # whatever its members' own lines say; the target comes with some member's next heartbeat
                return
            # no target map (4.0+: DEBUG): converged once every member the coordinator knows is STABLE at
            # the epoch (ConsumerGroup turns Stable when all members are reconciled to the target epoch).
            # A member with no assignment-state line (4.0 logs them at DEBUG) but its own log: STABLE with
            # no partition in flight, provisionally (its epoch moves silently when nothing changes for it)
            views = [self.members[m] for m in self._group_members()]
            if not views or (cur.stabilized_at is not None and not all(v.server_lines for v in views)):
                return
            if all(self._reconciled_without_target(v, cur.epoch) for v in views):
                by_member = not all(v.server_lines for v in views)
                # every member stated at the epoch (by the coordinator or its own line): what it consumes
                # says nothing more; otherwise a STABLE member's epoch may have moved silently. Not so when a
                # bump is on its way (a member left or joined: a removed member may never have reached the
                # epoch, and its unrevoked partitions kept the others UNRELEASED_PARTITIONS)
                told = self.pending_start is None and all(
                    v.server_lines or self._told_epoch(v, cur.epoch) for v in views
                )
                if not (by_member and not told and self._in_flight([v.member_id for v in views])):
                    if by_member and not told and self._silent_member_may_lag(views, cur.epoch, ts):
                        self._presumed_episode()
                        # until every member's next heartbeat is due, a bump may find the epoch unconverged:
                        # the rebalance it opens may be a further round of this one
                        self._round_unknown_until(self._heartbeat_due(ts))
                    self.tracker.converged(ts, provisional=by_member)
        elif cur.stabilized_at is None:
            active = [v for m in self._group_members() if (v := self.members[m]).member_timed]
            if (
                active
                and all(v.client_state == ClientState.STABLE.value for v in active)
                and not self._in_flight([v.member_id for v in active])
            ):
                self.tracker.converged(ts, provisional=True)

    def _silent_member_may_lag(self, views: list[MemberView], epoch: int, ts: int) -> bool:
        """A STABLE member whose own log never stated `epoch` (4.x logs no line when the coordinator moves a
        member's epoch without changing its assignment: ConsumerMembershipManager updates the epoch silently)
        may not have heartbeated since the target was computed: until one heartbeat interval has passed, the
        group may still be Reconciling (ConsumerGroup.maybeUpdateGroupState) and no line tells which."""
        target_at = self.tracker.current.target_at
        if target_at is not None and ts >= target_at + DEFAULT_CONSUMER_HEARTBEAT_INTERVAL_MS:
            return False
        return any(not v.server_lines and v.client_epoch != epoch for v in views)

    def _heartbeat_due(self, ts: int) -> int:
        """When every member has heartbeated since the current epoch's target (computed at the latest at `ts`):
        one group.consumer.heartbeat.interval.ms after it (GroupMetadataManager answers each heartbeat with the
        member's next assignment step)."""
        target_at = self.tracker.current.target_at
        return (target_at if target_at is not None else ts) + DEFAULT_CONSUMER_HEARTBEAT_INTERVAL_MS

    def _round_unknown_until(self, ts: int) -> None:
        """A rebalance opening at or before `ts` may be a further round of the current one (see
        round_unknown_until): whether the convergence presumed before it held, no line tells."""
        if self.round_unknown_until is None or ts > self.round_unknown_until:
            self.round_unknown_until = ts

    def _others_seen(self, member_id: str) -> bool:
        """Some other member was seen (in the group or gone): the input covers the group's membership, so a
        member alone in the epoch's snapshot is alone (else one from before the input may be silent)."""
        return bool(self.gone.keys() - {member_id}) or any(m != member_id for m in self.members)

    def _in_flight(self, members: list[str]) -> bool:
        """Member-side convergence cannot hold yet: a partition was revoked and is not consumed again, or a
        member consumes nothing while the group has a partition for each (the broker's assignors give every
        member one then: it waits for partitions another member has not revoked yet, UNRELEASED_PARTITIONS;
        the owner's revocation comes at its next heartbeat and its epoch moves silently until then)."""
        tl = self.timeline
        if tl.stopped():
            return True
        consuming = tl.consuming()
        if len(consuming) >= len(members) and any(not tl.partitions_of(m) for m in members):
            return True
        # a topic some member consumes is subscribed, and the broker's assignors (uniform, range) give every
        # partition of a subscribed topic to a subscriber: one of its partitions that nobody consumes (a new
        # partition, or one assigned to a member that has not taken it yet) is still on its way
        consumed: dict[str, int] = {}
        for tp in consuming:
            consumed[tp.topic] = consumed.get(tp.topic, 0) + 1
        return any(n < self.partition_counts.get(topic, 0) for topic, n in consumed.items())

    def _presume_convergence(self, ts: int) -> None:
        """The target of the current epoch was computed at `ts`, its map not logged (4.0: DEBUG). A lone
        member whose join bumped the epoch was reconciled in that very heartbeat (CurrentAssignmentBuilder:
        nothing it is assigned is owned by another member). With neither assignment-state lines nor
        member logs, the epoch is presumed converged once every member had its next heartbeat (after a
        leave or a fence: one interval) or a revocation round trip more (otherwise: two), unless the next
        bump or a member's failure comes first; such a convergence is marked inferred."""
        cur = self.tracker.current
        views = [self.members[m] for m in (cur.members or {}) if m in self.members]
        if not views or cur.closed or any(v.server_lines for v in views):
            return
        lone = len(views) == 1 and (cur.epoch == 1 or self._others_seen(views[0].member_id))
        if lone and cur.reason == REASON_JOINED:
            # a member from before the input may be silent (4.0 logs no line for a stable member): lone
            # only in a new group (epoch 1) or once every member seen before is out. The joiner's heartbeat
            # computes the target and reconciles it (GroupMetadataManager.consumerGroupHeartbeat:
            # updateTargetAssignment, then maybeReconcile). Not so the one member left after a leave or a
            # fence: it may still owe a revocation of the epoch before (CurrentAssignmentBuilder keeps it
            # UNREVOKED_PARTITIONS until it acknowledges), which no 4.0 INFO line shows. With its own log,
            # provisionally: the epoch's row then states what it consumes
            self.tracker.converged(ts, provisional=self.has_member_side)
            return
        if lone and cur.reason in _FREEING_REASONS and self._settled_alone(views[0]):
            # the one member left after a leave or a fence, its own log STABLE with nothing to revoke: the
            # target was computed in its heartbeat (no other member heartbeats), and there the coordinator
            # reconciled it at once (CurrentAssignmentBuilder.computeNextAssignment: nothing to revoke, and
            # what it is given no other member holds, a removed member's partitions being free:
            # GroupMetadataManager.consumerGroupFenceMember), whether or not its callback then ran
            self.tracker.converged(ts)
            return
        if self.has_member_side:
            return  # the members' own lines tell
        intervals = 1 if cur.reason in _FREEING_REASONS else 2
        self.presumed_converged = ts + intervals * DEFAULT_CONSUMER_HEARTBEAT_INTERVAL_MS

    def _settled_alone(self, view: MemberView) -> bool:
        """`view`, the group's one member, has nothing to revoke: its own log shows it STABLE (its previous
        reconciliation done, so it owns only what it was assigned), and as the lone member of its topics its
        new target holds every partition of them (UniformAssignor and RangeAssignor alike); a changed
        subscription would be a bump of its own, not a leave's or a fence's."""
        return view.member_timed and not view.left_static and view.client_state == ClientState.STABLE.value

    def _untimed_members_own_unknown(self) -> None:
        """A target computed with its map unlogged (4.0 INFO): a member of the epoch with neither its own log
        nor the coordinator's assignment-state lines (4.0: DEBUG) consumes what no line shows, from here on:
        the open episode's partition measures, and those of the next ones, are null (not 0) until the
        ownership is known again (a logged target map, or the group emptied: `OwnershipTimeline.group_empty`).
        """
        cur = self.tracker.current
        members = cur.members if cur.members is not None else self._group_members()
        views = [self.members[m] for m in members if m in self.members]  # (a removed one owns nothing)
        if any(not (v.member_timed or v.server_lines) for v in views):
            self.timeline.owners_unknown()

    def _settle_presumed(self, ts: int) -> None:
        """At `ts` (the next epoch, or the end of the input): the presumed convergence happened if it is due."""
        at, self.presumed_converged = self.presumed_converged, None
        cur = self.tracker.current
        if at is None or cur is None or cur.closed:
            return
        if at > ts:
            # bumped again (or the input ends) before every member's next heartbeat could be due: whether
            # they all reconciled first, no INFO line of a 4.0 broker tells; the merge is presumed
            self._presumed_episode()
            return
        away = [v.left_static_at for m in (cur.members or {}) if (v := self.members.get(m)) and v.left_static]
        if any(t is not None and t <= at for t in away):
            return  # a static member away (epoch -2) since before: never Stable (ConsumerGroup.maybeUpdateGroupState)
        self._presumed_episode()
        self.presumed_target_at = cur.target_at
        self.tracker.converged(at)

    def _leaver_may_have_stalled(self, view: MemberView, ts: int) -> None:
        """A member seen by the coordinator alone left at `ts`. The broker logs the same leave for a consumer
        closed and for one whose poll timer expired (AbstractMembershipManager.transitionToSendingLeaveGroup,
        epoch -1): its application thread blocked, in a rebalance callback say, since its last poll, up to
        max.poll.interval.ms before. A revocation asked of it since then was never acknowledged
        (CurrentAssignmentBuilder keeps it UNREVOKED_PARTITIONS), so a convergence presumed for a target
        computed since (less a heartbeat interval: the target reaches it at its next heartbeat) may never have
        happened, and the rebalance this leave opens may be a further round of that one: it says inferred.
        Not so for a member that joined less than max.poll.interval.ms before: it joins at a poll
        (AbstractMembershipManager.onConsumerPoll), so its poll timer cannot have expired yet."""
        if view.member_timed or view.server_lines:
            return  # its own log shows a poll timeout; the coordinator's states show its reconciliation
        last_poll = ts - DEFAULT_MAX_POLL_INTERVAL_MS
        joined = view.heartbeat_seen_at
        if joined is not None and joined > last_poll:
            return
        since = last_poll - DEFAULT_CONSUMER_HEARTBEAT_INTERVAL_MS
        cur = self.tracker.current
        settled = self.presumed_target_at is not None and self.presumed_target_at > since
        # presumed, not yet settled (the next bump settles it): the current epoch's
        pending = self.presumed_converged is not None and cur.target_at is not None and cur.target_at > since
        if settled:
            self._presumption_failed()
        if settled or pending:
            self._round_unknown_until(ts)

    def _presumption_failed(self) -> None:
        """A fenced member was silent since before the target of an epoch whose convergence was presumed: it
        never had that epoch, and the group is not Stable until every member has (ConsumerGroup
        .maybeUpdateGroupState), so that epoch converged only later, if at all, and the rebalances since may be
        rounds of that one. The presumed episode says inferred already; so does the open one, which the presumption
        made a separate rebalance (the rows emitted in between stay as they are)."""
        self.presumed_target_at = None
        if self.timeline.episode is not None:
            self.timeline.episode.source = "inferred"

    def _presumed_episode(self) -> None:
        """The current epoch's convergence (or not) was presumed: its generation and episode say inferred."""
        self.tracker.current.source = "inferred"
        if self.timeline.episode is not None:
            self.timeline.episode.source = "inferred"

    def _reconciled_without_target(self, view: MemberView, epoch: int) -> bool:
        if view.left_static:
            return False
        if view.server_lines:
            return view.server_epoch == epoch and view.server_state == MemberState.STABLE.value
        if view.member_timed:
            return view.client_state == ClientState.STABLE.value or self._told_epoch(view, epoch)
        return False  # known to the coordinator, no line says where its reconciliation stands

    @staticmethod
    def _told_epoch(view: MemberView, epoch: int) -> bool:
        """The member's own line states the group's current epoch while it reconciles: the coordinator moved it
        to that epoch, which it does only once the member has nothing left to revoke (CurrentAssignmentBuilder
        .computeNextAssignment: UNREVOKED_PARTITIONS keeps the member's epoch), so it is STABLE there, or
        UNRELEASED_PARTITIONS until a later heartbeat hands it the rest, which its next RECONCILING line at the
        same epoch shows. The client logs the epoch of the heartbeat response before it reconciles
        (ConsumerMembershipManager.onHeartbeatSuccess: updateMemberEpoch, then transitionTo(RECONCILING)), so
        a member whose rebalance callback is blocked is at the epoch for the coordinator, not for its log."""
        return view.client_epoch == epoch and view.client_state in _CLIENT_RECONCILING

    def _reconciled(self, view: MemberView, epoch: int, target: tuple[TopicPartition, ...], ts: int) -> bool:
        if view.left_static:
            return False
        if view.server_lines:
            return view.server_epoch == epoch and view.server_state == MemberState.STABLE.value
        reconciled = (
            view.member_timed
            and view.client_state == ClientState.STABLE.value
            and self.timeline.partitions_of(view.member_id) == set(target)
        )
        if reconciled:
            self.tracker.member_reconciled(view.member_id, ts, "member")
        return reconciled

    # ================================================================================= ownership
    def _coordinator_timing(
        self, view: MemberView, assigned: list[TopicPartition], ts: int, line_missing: bool = False
    ) -> None:
        """A member without its own log consumes what the coordinator says it is assigned. `line_missing`: a
        state line of the member between its last one and this is provably not in the input, so the changes
        this line shows happened at that line or this one: their instants are inferred (unavailable time an
        upper bound)."""
        before = set(view.server_assigned or ())
        now = set(assigned)
        source = "inferred" if line_missing else "observed"
        for tp in sorted(before - now):
            if self.timeline.owner_of(tp) == view.member_id:
                self.timeline.stop(tp, view.member_id, ts, "revoked", instance=view.instance, source=source)
        for tp in sorted(now - before):
            self._start(tp, view, ts, source)
        if now - before:
            view.server_started, view.server_started_at = sorted(now - before), ts

    def _unacted_starts_inferred(self, view: MemberView, removed_at: int, cause: str) -> None:
        """A member timed by the coordinator alone leaves within max.poll.interval.ms of the line that gave it
        partitions: whether its onPartitionsAssigned ever ran, no broker line tells (the member is STABLE for the
        coordinator as soon as nothing it is given is held by another, CurrentAssignmentBuilder), and a callback
        blocked by a busy poll loop ends in exactly such a leave (the poll timer's, which the broker logs as any
        leave). Its consumption of them, and so their movement, is inferred. (A session-timeout removal is a
        crash, whose stop is placed at its last heartbeat already.)"""
        if view.member_timed or not view.server_started or view.server_started_at is None:
            return
        if removed_at - view.server_started_at > DEFAULT_MAX_POLL_INTERVAL_MS:
            return  # it polled since (else it would have left sooner): its callback ran
        owned = self.timeline.partitions_of(view.member_id)
        for tp in view.server_started:
            if tp in owned:
                self.timeline.stop(
                    tp, view.member_id, removed_at, cause, instance=view.instance, source="inferred"
                )

    def _start(self, tp: TopicPartition, view: MemberView, ts: int, source: str = "observed") -> None:
        problem = self.timeline.start(
            tp, view.member_id, ts, instance=view.instance, generation_id=self.tracker.epoch, source=source
        )
        if problem:
            self._anomaly(problem, None, f"{tp} start by {view.member_id}", ts=ts)

    def _stop(self, tp: TopicPartition, view: MemberView, ts: int, cause: str) -> None:
        if self.timeline.owner_of(tp) == view.member_id:
            self.timeline.stop(tp, view.member_id, ts, cause, instance=view.instance)

    def _stop_all(self, view: MemberView, ts: int, cause: str, source: str = "observed") -> None:
        for tp in sorted(self.timeline.partitions_of(view.member_id)):
            self.timeline.stop(tp, view.member_id, ts, cause, instance=view.instance, source=source)

    def _member_stop(self, view: MemberView, tp: TopicPartition, ts: int, cause: str, e: Event) -> None:
        """A member says it stopped tp. Never seen before: it owned tp since before the input. A repeat
        (membership manager and listener both log a revocation) or a removed member's late callback: no-op."""
        tl = self.timeline
        self._adopt(tp, view, ts)
        owner = tl.owner_of(tp)
        if owner == view.member_id:
            tl.stop(tp, view.member_id, ts, cause, instance=view.instance)
        elif not (owner is None and tl.stopped()[tp] == view.member_id):
            self._anomaly(STOP_NOT_OWNED, e, f"{tp} stop by {view.member_id}, owned by {owner}")

    def _adopt(self, tp: TopicPartition, view: MemberView, ts: int) -> None:
        """A partition never seen before, that the member says it owns: it owned it since before the input."""
        tl = self.timeline
        if tl.owner_of(tp) is None and tp not in tl.stopped():
            tl.start(tp, view.member_id, ts, instance=view.instance)
            if tl.episode is not None:
                tl.episode.owners_before.setdefault(tp, view.instance or view.member_id)

    # ============================================================================ members, misc
    def _view(self, member_id: str | None, instance: str | None) -> MemberView:
        member_id = member_id or ""
        view = self.members.get(member_id)
        if view is None:
            view = self.members[member_id] = MemberView(member_id, instance)
            self.emptied = False
        elif instance and not view.instance:
            view.instance = instance
        return view

    def _group_members(self) -> dict[str, str | None]:
        """Members of the group: known to the coordinator, or (member-side logs only) not out of it.
        With the broker's log, a client that logged JOINING is no member until the coordinator has
        its first heartbeat (GroupMetadataManager.consumerGroupHeartbeat creates the member; the group
        is Empty while it has none, ConsumerGroup.maybeUpdateGroupState)."""
        return {
            m: v.instance
            for m, v in self.members.items()
            if v.joined
            or v.left_static
            or (
                not self.has_coordinator
                and m not in self.gone
                and parse_client_state(v.client_state) not in _CLIENT_NOT_IN
                # closed while JOINING (PREPARE_LEAVING at epoch 0): never answered with a member epoch
                and not (v.client_state == ClientState.PREPARE_LEAVING.value and not v.client_epoch)
            )
        }

    def _logs_own_lines(self, member_id: str) -> bool:
        """Whether the input has the member's own log (so its later lines can still state an epoch's
        assignment)."""
        view = self.members.get(member_id)
        return view is not None and view.member_timed

    def _in_group(self, member_id: str) -> bool:
        """Whether a member whose line was just replayed counts in the current epoch: with the broker's log,
        a member the coordinator stated at an epoch not newer than the current one (a join is not enough:
        the join's own bump opens the next epoch); member-side logs only, a member that got its member
        epoch (a JOINING client is no member yet: ConsumerMembershipManager leaves JOINING with the
        epoch of its first heartbeat response)."""
        view = self.members[member_id]
        if self.has_coordinator:
            return view.server_lines and view.server_epoch is not None and view.server_epoch > 0
        return member_id in self._group_members()

    def _left_static(self, instance: str | None) -> MemberView | None:
        if not instance:
            return None
        return next((v for v in self.members.values() if v.instance == instance and v.left_static), None)

    def _replace_static(self, previous: MemberView, member_id: str, ts: int) -> None:
        """The static member is back under a new member id (or the same one): it inherits the reserved
        assignment; no new epoch (GroupMetadataManager: staticMemberReplaced)."""
        # stopped already when its "temporarily left" (-2) was seen; else it stops consuming now
        self._stop_all(previous, ts, "member_left")
        away = previous.left_static_at
        if self.presumed_converged is not None and away is not None and away <= self.presumed_converged:
            target_at = self.tracker.current.target_at
            if target_at is not None and away >= target_at:
                # it left after the epoch's target was computed, before the others' heartbeats were surely
                # due: the epoch may have converged with it first (and a static member rejoining with epoch 0
                # then replaces it at the same epoch, GroupMetadataManager.consumerGroupHeartbeat: no bump),
                # or only with its replacement; no INFO line of a 4.0 broker tells which member id it counted
                self.tracker.members_unknown()
            # away (epoch -2) when the others' heartbeats were due: the group is not Stable while a member
            # is not at the target epoch (ConsumerGroup.maybeUpdateGroupState); the replacement is
            # reconciled in the heartbeat that recomputes the target (consumerGroupHeartbeat), so no sooner
            self.presumed_converged = max(self.presumed_converged, ts)
        del self.members[previous.member_id]
        if previous.member_id != member_id:
            self._forget(previous.member_id, ts)
        view = self._view(member_id, previous.instance)  # may exist already: its own log came first
        if previous.member_id == member_id:
            # the same process back under its own member id (the client keeps it across a rejoin): its own
            # log is still present
            view.member_timed = view.member_timed or previous.member_timed
            view.client_state = view.client_state or previous.client_state
        view.joined = True  # it inherits the reservation, but consumes nothing until it reconciles

    def _forget(self, member_id: str, ts: int) -> None:
        """The member is out of the group. Remembered for a day (late callbacks are expected), then
        dropped with its view, so the state stays bounded."""
        self.gone[member_id] = ts
        self.doubtful.discard(member_id)
        self.tracker.member_gone(member_id)
        horizon = ts - 86_400_000
        for member in [m for m, t in self.gone.items() if t < horizon]:
            del self.gone[member]
            view = self.members.get(member)
            if view is not None and not view.joined:
                del self.members[member]

    def _session_timeout(self, e: Event) -> int | None:
        """The session timeout a fence line states, else the configured one, else None (unknown)."""
        text = (e.attributes or {}).get("session_timeout_ms")
        if text and text.isdigit():
            return int(text)
        return self.settings.session_timeout_ms

    def _names(self, tps: Iterable[TopicPartition]) -> tuple[TopicPartition, ...]:
        """Topic ids (KIP-848 broker lines) -> topic names, where settings.topic_ids knows them."""
        names = self.topic_names
        if not names:
            return tuple(tps)
        return tuple(TopicPartition(names.get(tp.topic, tp.topic), tp.partition) for tp in tps)

    def _anomaly(self, rule: str, e: Event | None, detail: str, ts: int | None = None) -> None:
        cur = self.tracker.current
        self._anomalies.append(
            event_anomaly_row(
                self.timeline,
                self.key,
                rule,
                e,
                detail,
                ts,
                self.last_ts,
                f"epoch {cur.epoch}" if cur else None,
            )
        )

    # ================================================================================= snapshot
    def _restore(self, state: Mapping[str, Any]) -> tuple[dict, dict]:
        check_checkpoint(state, STATE_VERSION, GROUP_PROTOCOL_KEY, "consumer-protocol")
        self.members = {m: _view_from_json(v) for m, v in state["members"].items()}
        self.gone = dict(state["gone"])
        self.has_coordinator = state["has_coordinator"]
        self.has_member_side = state["has_member_side"]
        self.last_ts = state["last_ts"]
        self.pending_start = state["pending_start"]
        self.pending_reason = state["pending_reason"]
        self.member_signal = state["member_signal"]
        self.causes_seen = state.get("causes_seen", 0)
        self.unexplained = int(state.get("unexplained", 0))
        self.shown_in_epoch = set(state.get("shown_in_epoch", ()))
        self.doubtful = set(state.get("doubtful", ()))
        self.joined_epoch = state.get("joined_epoch")
        self.skipped_epochs = set(state.get("skipped_epochs", ()))
        self.history_in_input = state.get("history_in_input", False)
        self.partitions_seen = {TopicPartition(t, p) for t, p in state.get("partitions_seen", ())}
        self.new_partitions_epoch = state.get("new_partitions_epoch")
        self.emptied = state["emptied"]
        self.partition_counts = {**self.partition_counts, **state.get("partition_counts", {})}
        self.presumed_converged = state.get("presumed_converged")
        self.presumed_target_at = state.get("presumed_target_at")
        self.targets_logged = state.get("targets_logged", False)
        self.reopened_epoch = state.get("reopened_epoch")
        self.round_unknown_until = state.get("round_unknown_until")
        self._anomalies = [row_from_json(r) for r in state["anomalies"]]
        return state["timeline"], state["tracker"]


def _bumps_group_epoch(to_state: ClientState, member_epoch: int | None) -> bool:
    """A member's own state change that makes the coordinator bump the group epoch: its join (a new member,
    GroupMetadataManager.consumerGroupHeartbeat), its leave for good (epoch -1: consumerGroupFenceMember; a
    static member's epoch -2 keeps its place, no bump), or its fencing (the coordinator removed it)."""
    if to_state is ClientState.LEAVING:
        return member_epoch == LEAVE_GROUP_MEMBER_EPOCH
    return to_state in (ClientState.JOINING, ClientState.FENCED)


# _replay_one's dispatch tables: event type -> handler (no method name built and looked up per event)
_COORDINATOR_HANDLERS = event_handlers(ConsumerGroupReplayer, "_c_")
_MEMBER_HANDLERS = event_handlers(ConsumerGroupReplayer, "_m_")
_COORDINATOR = Side.COORDINATOR.value


def _rejoins(e: Event) -> bool:
    return (
        e.event_type == EventType.MEMBER_STATE_CHANGED.value
        and parse_client_state((e.attributes or {}).get("to_state")) is ClientState.JOINING
    )


def _process_of(e: Event) -> str | None:
    """The consumer process of a member-side line: its host (or file) and client id."""
    if not e.client_id:
        return None
    return f"{e.source or e.file or ''}/{e.client_id}"


def _view_to_json(view: MemberView) -> dict:
    out = dataclasses.asdict(view)
    for key in ("server_assigned", "server_started"):
        if out[key] is not None:
            out[key] = [[tp.topic, tp.partition] for tp in getattr(view, key)]
    return out


def _view_from_json(data: Mapping[str, Any]) -> MemberView:
    data = dict(data)
    for key in ("server_assigned", "server_started"):
        if data.get(key) is not None:
            data[key] = [TopicPartition(t, p) for t, p in data[key]]
    return MemberView(**data)


def _missing_state_line(last_epoch: int | None, attributes: Mapping[str, Any]) -> bool:
    """A member's "new assignment state: epoch=E, previousEpoch=P" whose P is later than the epoch of the
    member's last state line in the input: the coordinator logs every change of a member's state
    (GroupMetadataManager.consumerGroupHeartbeat, 3.8+: `Member {} new assignment state: epoch=...,
    previousEpoch=...`), so its line at epoch P is missing (an excerpt, a lost line)."""
    previous = str(attributes.get("previous_epoch") or "")
    return last_epoch is not None and previous.isdigit() and int(previous) > last_epoch
