"""`GroupReplayer`: replays one classic-protocol group (JoinGroup/SyncGroup) from canonical events
(docs/events.md) into the replay tables (schemas/tables.py) with the measures of docs/metrics.md.

The coordinator side drives the classic state machine (`classic.coordinator.ClassicGroup`, Kafka's
`ClassicGroup` / Scala `GroupCoordinator`), member-side events (`AbstractCoordinator` /
`ConsumerCoordinator` lines) give member timings, and an `OwnershipTimeline` (`measures`) turns starts and
stops into partition movements, episodes and daily totals. Any subset of events works (broker log only,
one client's log, both, a log starting mid-rebalance); where no event carries the assignment, the group's
assignor is rerun on the known membership and topics (rows marked `inferred`). Invalid input never raises:
it becomes an `anomalies` row.

This module holds the state, the public interface (feed / drain / finish / snapshot) and the routing of
each event to its handler; the handlers and rules are in the mixins, by responsibility:
  replay_coordinator  the coordinator's lines          replay_members    member identity (KIP-394/345)
  replay_join         a member's JoinGroup lines       replay_sync       assignment and SyncGroup lines
  replay_leave        callbacks, poll timeout, leave   replay_rounds     rounds and episodes opening
  replay_round_end    rounds stabilizing and ending    replay_ownership  assignments, ownership, anomalies
  replay_member_list  members' logs: a generation's member list complete or not
  replay_state        vocabulary, records, checkpoint codec
and the JoinGroups no line answered, whether each may be in a generation, are one tracker
(`unanswered_joins.UnansweredJoins`) the mixins share.

Anomaly rules raised here (the coordinator model's are in `coordinator`, the timeline's in `measures`):
  wrong_group          an event of another cluster/group was fed to this replayer (skipped)
  unknown_event_type   event_type is not an EventType (counted, skipped)
  out_of_order         an event older than the previous one (replayed anyway)
  assignment_conflict  one partition assigned to two members in one assignment
  assignment_mismatch  a member's synced partitions differ from the leader's assignment
  inference_failed     the assignor could not be run to infer a missing assignment
"""

from __future__ import annotations

from collections.abc import Iterable

from rebalance_core import client_config
from rebalance_core.classic import coordinator as co
from rebalance_core.classic.member_order import MemberMapOrder
from rebalance_core.classic.replay_coordinator import CoordinatorLines
from rebalance_core.classic.replay_join import JoinLines
from rebalance_core.classic.replay_leave import LeaveLines
from rebalance_core.classic.replay_member_list import MemberList
from rebalance_core.classic.replay_members import MemberIdentity
from rebalance_core.classic.replay_ownership import Ownership
from rebalance_core.classic.replay_round_end import RoundEnds
from rebalance_core.classic.replay_rounds import RoundStarts
from rebalance_core.classic.replay_state import (
    CALLBACKS,
    CLIENT_CONFIG,
    COORDINATOR_SIDE,
    JOIN_REQUESTED,
    PROCESS_JOIN_LINES,
    SIGNALS,
    MemberView,
    Round,
    decode_state,
    encode_state,
    process_of,
)
from rebalance_core.classic.replay_sync import SyncLines
from rebalance_core.classic.unanswered_joins import UnansweredJoins
from rebalance_core.events import Event, TopicPartition, is_revoke_rejoin
from rebalance_core.measures import OwnershipTimeline
from rebalance_core.replay_common import (
    ReplaySettings,
    add_rows,
    admit,
    check_checkpoint,
    checkpoint_header,
    empty_tables,
    event_handlers,
)

STATE_VERSION = 1
GROUP_PROTOCOL_KEY = "classic"  # snapshot()["group_protocol"]: which replayer resumes the state


class GroupReplayer(
    CoordinatorLines,
    MemberIdentity,
    JoinLines,
    SyncLines,
    LeaveLines,
    RoundStarts,
    RoundEnds,
    MemberList,
    Ownership,
):
    """Replays one group's events (in `event_order_key` order) into the replay tables; see CORE_API."""

    def __init__(
        self,
        cluster: str,
        group_id: str,
        settings: ReplaySettings | None = None,
        state: dict | None = None,
    ):
        self.cluster = cluster
        self.group_id = group_id
        self.settings = settings or ReplaySettings()
        self.key = {"cluster": cluster, "group_id": group_id, "scenario": self.settings.scenario}
        self._out: dict[str, list[dict]] = {"generations": [], "assignments": [], "anomalies": []}
        # generation rows not drained yet whose members/leader an old id of a replaced instance stood for
        # (`_end_round`): [row, members, leader, stand-ins], completed once later lines name the new ids
        self._stand_in_rows: list[list] = []
        # both views: generation -> members whose own JoinGroup response named it (`_member_in_generation`)
        self._joined_generation: dict[int, set[str]] = {}
        self._event: Event | None = None  # the event being replayed (anomalies refer to it)
        # partitions `_learn_topics` has covered in `topics` (a cache, not state: empty after a restore)
        self._learned_partitions: set[TopicPartition] = set()
        if state is not None:
            self._restore(state)
            return
        self.group = co.ClassicGroup(member_order=MemberMapOrder(self.settings.coordinator_member_map))
        self.timeline = OwnershipTimeline(cluster, group_id, self.settings.scenario)
        self.topics: dict[str, int] = dict(self.settings.topics)
        self.protocol_name: str | None = None  # selected protocol (join_completed / join_response)
        self.offered_protocol: str | None = None  # a member's first supported protocol (join_received)
        self.rebalance_protocol: str | None = None  # as the log shows it; `protocol` adds the configured one
        self.has_coordinator = False  # coordinator-side events drive the rounds once seen
        self.last_ts: int | None = None
        self.round: Round | None = None
        self.follow_up_due = False  # the round revoked partitions (KIP-429) or left a KIP-415 delay
        self.last_episode_id: str | None = None
        self.previous_episode_id: str | None = None  # the one before (to re-key the last one)
        self.closed_generation: int | None = None  # generation of the last round ended
        self.assignment: dict[str, list[TopicPartition]] = {}  # the latest generation's assignment
        self.assignment_generation: int | None = None
        self.assignment_source = "observed"
        self.leader_assignment: dict[str, list[TopicPartition]] | None = None  # leader's, for the round
        self.emitted_generation: int | None = None
        # members whose rows of emitted_generation are out (a set: a static group's generation can see
        # thousands of member ids, each looked up at its sync)
        self.emitted: set[str] = set()
        self.views: dict[str, MemberView] = {}
        self.member_timed: set[str] = set()  # member ids and instance ids seen on the member side
        self.aliases: dict[str, str] = {}  # "source|client" -> member id (events without a member id)
        self.joining_clients: set[str] = set()  # client ids of member-side joins without a member id yet
        # member ids the coordinator gave such a join (`_claim_logged_join`), not synced yet: new processes
        self.claimed_new: set[str] = set()
        self.fresh_join_sent: dict[str, int] = {}  # alias -> its JoinGroup without a member id (KIP-394)
        # members' logs only: alias -> its JoinGroup lines since its last line naming a member id
        # (`_note_unnamed_join`)
        self.unnamed_joins: dict[str, list[int]] = {}
        # members' logs only: the JoinGroups no line answered (silent joiners, processes' joins)
        self.unanswered_joins = UnansweredJoins()
        self.unnamed_replacements: dict[str, str] = {}  # instance -> old id replaced by an id not logged
        # new member id -> [old id, generation] of a static replacement while Stable whose old id's
        # assignment no line showed (`_replaced_assignment`)
        self.stable_replacements: dict[str, list] = {}
        self.poll_timed_out: dict[str, int] = {}  # member -> its poll timeout, until the broker's Preparing
        self.kip415_delay_inferred = False  # broker only: a KIP-415 delay taken as pending (_kip415_lost)
        # the logs (`log_of`) that showed maybeElectNewJoinedLeader's lines, and the log and generation of
        # the group's last join completion: a round completing without such a line kept its leader only
        # when that log completed the group's previous generation too (`_election_absence_trusted`)
        self.election_logs: set[str] = set()
        self.last_completion: list | None = None  # [log, source, generation]
        self.closed_leader: str | None = None  # leader of the last round ended with a generation
        # members' logs only: the members of the last generation as the leader's assignment listed them,
        # less those whose LeaveGroup was logged since (None: not known)
        self.remaining_members: list[str] | None = None
        # members' logs only: a JoinGroup without a member id (instant, reason), a rebalance signal only
        # once a later line shows the member went on (`_defer_fresh_join`)
        self.fresh_join: tuple[int, str | None, list[str]] | None = None
        # clients' own settings from their config dumps (rebalance_core.client_config)
        self.client_configs: client_config.ClientConfigs = {}
        # members' logs only: [first, last, episode id] of generations that formed with no member logging
        # them (`_note_unlogged_generations`), until a late line names one (`_unlogged_generation_seen`)
        self.unlogged_generations: list[list] = []

    # =============================================================================== public API
    def feed(self, events: Iterable[Event]) -> None:
        dispatch = self._dispatch
        for e in events:  # the event being replayed is kept for anomalies (`_anomaly`)
            self._event = e
            try:
                dispatch(e)
            finally:
                self._event = None

    def drain(self) -> dict[str, list[dict]]:
        out = add_rows(empty_tables(), self._out, self.timeline.drain())
        self._out = {"generations": [], "assignments": [], "anomalies": []}
        self._stand_in_rows = []
        self._joined_generation = {}
        return out

    def finish(self) -> dict[str, list[dict]]:
        """End of input: emit what is still open (when settings.final) and the daily summary."""
        if self.settings.final:
            # KIP-394: a JoinGroup without a member id as the input's last member line only created a
            # pending member; the rebalance its member-id rejoin would start is not in the input
            self.fresh_join = None
            self._settle_emptied(None)
            self._flush_all_pending()
            self._join_phase_open_at_end()
            self._end_round()
            self._note_protocol()
            if not self.has_coordinator:
                # members' logs only: a consumer still consuming may be idle or may have died after its
                # last line (a killed process logs nothing); the coordinator then removes it after
                # session.timeout.ms and rebalances (GroupCoordinator.onExpireHeartbeat; ClassicGroup in
                # 4.0), the group stopped meanwhile, in no consumer's log: the counts are lower bounds
                self.timeline.consumption_unseen_after_input()
        closed = self.timeline.finish(final=self.settings.final)
        out = add_rows(self.drain(), closed)
        out["group_daily_summary"] = self.timeline.daily_rows()
        return out

    def _join_phase_open_at_end(self) -> None:
        """Members' logs only: the input ends in a join phase no JoinGroup response closed. Whether the
        coordinator completed it (AbstractCoordinator logs "Successfully joined group" only when the
        response arrives: a member that stopped after sending its JoinGroup logs nothing more), and the
        rounds that followed (its session timeout's rebalance, GroupCoordinator.onExpireHeartbeat /
        ClassicGroup in 4.0) are in no member's log: the episode's rounds are a lower bound (inferred)."""
        rnd, episode = self.round, self.timeline.episode
        if (
            not self.has_coordinator
            and rnd is not None
            and rnd.generation_id is None
            and episode is not None
            and episode.episode_id == rnd.episode_id
        ):
            episode.source = "inferred"

    def snapshot(self) -> dict:
        return {
            **checkpoint_header(STATE_VERSION, GROUP_PROTOCOL_KEY, self.cluster, self.group_id),
            "group": self.group.snapshot(),
            "timeline": self.timeline.snapshot(),
            "out": encode_state(self._out),
            **self.unanswered_joins.snapshot(),
            **{name: encode_state(getattr(self, name)) for name in _PLAIN_STATE},
        }

    # ================================================================================= dispatch
    def _dispatch(self, e: Event) -> None:
        if not admit(self, e):
            return
        kind = e.event_type
        coordinator = e.side == COORDINATOR_SIDE
        # set before a deferred fresh join is resolved: with the coordinator's lines there, they say
        # whether that JoinGroup started anything (a KIP-394 pending member triggers nothing)
        self.has_coordinator = self.has_coordinator or coordinator
        if self.fresh_join is not None and not self._new_members_signal(e):
            self._signal_fresh_join()
        if coordinator:
            if self.unnamed_replacements:
                self._learn_member_ids(e)
            if self.round is not None and self.round.held_for_reason:
                self._end_held_episode(e)
            handler = _COORDINATOR_HANDLERS.get(kind)
            if handler is not None:
                handler(self, e)
            else:
                self.group.apply(e)
            if self.group.resolved is not None:
                self._members_resolved(*self.group.take_resolved())
        elif kind == CLIENT_CONFIG:  # settings, not a step of the protocol
            client_config.note(self.client_configs, e)
        else:
            # a member's line: its member, its view, then its handler (inline: one call less per event)
            member = self._resolve_member(e)
            if member is not None:  # else before its first JoinGroup response: nothing to attribute yet
                instance = e.group_instance_id
                if instance in self.unnamed_replacements:
                    self._name_replacement(instance, member)
                view = self.views.get(member)
                if view is None:
                    view = self.views[member] = MemberView(member, instance)
                member_timed = self.member_timed  # tested first: most lines are of members already in it
                if instance:
                    view.instance = instance
                    if instance not in member_timed:
                        member_timed.add(instance)
                if member not in member_timed:
                    member_timed.add(member)
                if kind not in CALLBACKS and view.pending is not None and not self._between_callbacks(e):
                    self._flush_pending(view)
                handler = _MEMBER_HANDLERS.get(kind)
                if handler is not None:
                    handler(self, e, view)
            # _note_joiner's own test, first: the process key is a string built per call
            if kind in SIGNALS and not self.has_coordinator and self.round is not None:
                self._note_joiner(process_of(e))
            if kind in PROCESS_JOIN_LINES and not self.has_coordinator:
                self.unanswered_joins.note_process_line(e, self.round)
        if self.group.anomalies:  # checked here: a call per event costs more than the check
            self._collect_model_anomalies()
        rnd = self.round  # _maybe_end_episode's first test, here: most events come before a Stable round
        if rnd is not None and rnd.stable and not self.follow_up_due and self.timeline.episode is not None:
            self._maybe_end_episode()

    @staticmethod
    def _between_callbacks(e: Event) -> bool:
        """Whether `e` is the revoking member's requestRejoin, logged by ConsumerCoordinator.onJoinComplete
        after its onPartitionsRevoked and before its onPartitionsAssigned ("Adding newly assigned
        partitions", the instant the added partitions start): the member's pending synced assignment stays
        pending for the callback line that follows, instead of being applied at the sync. Its wording:
        "Request joining group due to: need to revoke partitions [...] as indicated by the current
        assignment and re-join" (3.x), "Need to revoke partitions [...] and re-join the group" (2.4-2.8)."""
        return e.event_type == JOIN_REQUESTED and is_revoke_rejoin(e.reason)

    # =============================================================================== snapshot
    def _restore(self, state: dict) -> None:
        check_checkpoint(state, STATE_VERSION, GROUP_PROTOCOL_KEY, "classic")
        self.group = co.ClassicGroup.from_snapshot(state["group"])
        self.timeline = OwnershipTimeline(
            self.cluster, self.group_id, self.settings.scenario, state=state["timeline"]
        )
        self._out = decode_state(state["out"])
        self.unanswered_joins = UnansweredJoins.from_snapshot(state)
        for name in _PLAIN_STATE:
            setattr(self, name, decode_state(state[name]) if name in state else _STATE_DEFAULTS[name]())
        self.emitted = set(self.emitted)  # a list in the checkpoints written before it was a set
        for topic, count in self.settings.topics.items():
            self.topics.setdefault(topic, count)


# Dispatch tables, event_type -> handler (`_c_<type>` for the coordinator's lines, `_m_<type>` for a
# member's): one dict lookup per event instead of a name built for getattr.
_COORDINATOR_HANDLERS = event_handlers(GroupReplayer, "_c_")
_MEMBER_HANDLERS = event_handlers(GroupReplayer, "_m_")

_PLAIN_STATE = (
    "topics",
    "protocol_name",
    "offered_protocol",
    "rebalance_protocol",
    "has_coordinator",
    "last_ts",
    "round",
    "follow_up_due",
    "last_episode_id",
    "previous_episode_id",
    "closed_generation",
    "assignment",
    "assignment_generation",
    "assignment_source",
    "leader_assignment",
    "emitted_generation",
    "emitted",
    "views",
    "member_timed",
    "aliases",
    "joining_clients",
    "claimed_new",
    "fresh_join_sent",
    "unnamed_joins",
    "unnamed_replacements",
    "stable_replacements",
    "poll_timed_out",
    "kip415_delay_inferred",
    "election_logs",
    "last_completion",
    "closed_leader",
    "remaining_members",
    "fresh_join",
    "client_configs",
    "unlogged_generations",
)
_STATE_DEFAULTS = {
    "unnamed_replacements": dict,
    "stable_replacements": dict,
    "fresh_join_sent": dict,
    "unnamed_joins": dict,
    "poll_timed_out": dict,
    "kip415_delay_inferred": bool,
    "election_logs": set,
    "last_completion": lambda: None,
    "closed_leader": lambda: None,
    "remaining_members": lambda: None,
    "fresh_join": lambda: None,
    "client_configs": dict,
    "claimed_new": set,
    "unlogged_generations": list,
}  # fields added after STATE_VERSION 1 states were written
