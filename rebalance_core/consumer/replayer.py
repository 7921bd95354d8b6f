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

The rules come from the new group coordinator (GroupMetadataManager.consumerGroupHeartbeat: bump, target,
reconcile; CurrentAssignmentBuilder: one member's step) and the client (ConsumerMembershipManager,
MembershipManagerImpl in 3.8: its MemberState and callbacks). This module holds the state, the public
interface (feed / drain / finish / snapshot) and the routing of each event to its handler; the handlers
and rules are in the mixins, by responsibility:
  replay_coordinator    the coordinator's lines           replay_member_lines  a member's own lines
  replay_member_epochs  member-side logs only: who is     replay_members       member identity, static
                        in which epoch                                         members, membership
  replay_convergence    epochs opening and converging     replay_presumed      convergence presumed from
                                                                               a 4.0 broker log alone
  replay_ownership      partitions started / stopped,     replay_checkpoint    snapshot and restore
                        anomaly rows                      replay_state         vocabulary, MemberView

Anomaly rules (besides the ownership timeline's stop_not_owned / double_ownership / start_before_stop):
  wrong_group, unknown_event_type, out_of_order   as in the classic replayer
  invalid_transition   a client state change its previous state does not allow (MemberState table)
  unknown_state        a client or member state name this model does not know
  stale_epoch          a target assignment for an epoch older than the current one (ignored)
"""

from __future__ import annotations

from collections.abc import Iterable

from rebalance_core import client_config
from rebalance_core.consumer.epochs import EpochTracker
from rebalance_core.consumer.replay_checkpoint import Checkpoint
from rebalance_core.consumer.replay_convergence import Convergence
from rebalance_core.consumer.replay_coordinator import CoordinatorLines
from rebalance_core.consumer.replay_member_epochs import MemberOnlyEpochs
from rebalance_core.consumer.replay_member_lines import MemberLines
from rebalance_core.consumer.replay_members import MemberIdentity
from rebalance_core.consumer.replay_ownership import Ownership
from rebalance_core.consumer.replay_presumed import PresumedConvergence
from rebalance_core.consumer.replay_state import MemberView
from rebalance_core.consumer.states import ClientState, parse_client_state
from rebalance_core.events import Event, TopicPartition
from rebalance_core.measures import OwnershipTimeline
from rebalance_core.replay_common import ReplaySettings, add_rows, admit, empty_tables, event_handlers
from schemas.events import EventType, Side

# Events that only a KIP-848 group produces: their presence selects this replayer for a group.
CONSUMER_PROTOCOL_EVENT_TYPES = frozenset(
    {
        EventType.GROUP_EPOCH_BUMPED.value,
        EventType.TARGET_ASSIGNMENT_COMPUTED.value,
        EventType.MEMBER_EPOCH_UPDATED.value,
        EventType.MEMBER_STATE_CHANGED.value,
    }
)


def is_consumer_protocol_event(e: Event) -> bool:
    """An event only a KIP-848 group produces (the log parser also tags KIP-848 lines with
    attributes.group_protocol = consumer): the group is replayed by ConsumerGroupReplayer."""
    return (
        e.event_type in CONSUMER_PROTOCOL_EVENT_TYPES
        or (e.attributes or {}).get("group_protocol") == "consumer"
    )


class ConsumerGroupReplayer(
    CoordinatorLines,
    MemberLines,
    MemberOnlyEpochs,
    MemberIdentity,
    Checkpoint,
    Convergence,
    PresumedConvergence,
    Ownership,
):
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
        # member-only logs: of those, the members the causes of the bumps around one tell (_skipped_by_one_leave)
        self.skipped_members: dict[int, dict[str, str | None]] = {}
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
        # clients' own settings from their config dumps (rebalance_core.client_config): max.poll.interval.ms
        self.client_configs: client_config.ClientConfigs = {}
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
                handler = None  # a removed member's late callbacks: it no longer owned anything
                if not self._late_block_line(e):
                    self.tracker.member_released(e.member_id)
                    if rejoins(e):
                        handler = _MEMBER_HANDLERS.get(e.event_type)
                        del self.gone[e.member_id]
            if handler is not None and e.member_id:
                view = self._view(e.member_id, e.group_instance_id)
                view.member_timed = True
                view.process = view.process or process_of(e)
                view.client_id = view.client_id or e.client_id
                if self.tracker.fenced_awaited and view.process and rejoins(e):
                    self.tracker.process_restarted(view.process, e.member_id)
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
                self.tracker.member_shown(e.member_id)
            if e.member_id and (e.member_id in self.members) and self._in_group(e.member_id):
                # a member from before the input (or the epoch) shows itself: it is in the current epoch
                self.tracker.member_in_epoch(e.member_id, self.members[e.member_id].instance)
        self._flag_unknown_members()
        if not self.removed_unreconciled:
            self._check_convergence(e.ts)
        self.removed_unreconciled = False
        self.tracker.maybe_end_episode(self._stops_awaited_by_nobody())


# _replay_one's dispatch tables: event type -> handler (no method name built and looked up per event)
_COORDINATOR_HANDLERS = event_handlers(ConsumerGroupReplayer, "_c_")
_MEMBER_HANDLERS = event_handlers(ConsumerGroupReplayer, "_m_")
_COORDINATOR = Side.COORDINATOR.value


def process_of(e: Event) -> str | None:
    """The consumer process of a member-side line: its host (or file) and client id."""
    if not e.client_id:
        return None
    return f"{e.source or e.file or ''}/{e.client_id}"


def rejoins(e: Event) -> bool:
    return (
        e.event_type == EventType.MEMBER_STATE_CHANGED.value
        and parse_client_state((e.attributes or {}).get("to_state")) is ClientState.JOINING
    )
