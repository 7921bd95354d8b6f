"""The KIP-848 replayer's member identity: a member's view, who is in the group (for the coordinator,
or as the members' own logs tell), static members that left temporarily (epoch -2) and their replacement
under a new member id, members forgotten a day after they left, the session timeout of a fence, and topic
ids back to topic names.

The rules are GroupMetadataManager.consumerGroupHeartbeat (a member exists once its first heartbeat is
answered; replaceMember / staticMemberReplaced for a group.instance.id) and the client's
ConsumerMembershipManager (MembershipManagerImpl: JOINING until the first response states a member epoch).
A mixin of `consumer.replayer.ConsumerGroupReplayer`.
"""

from __future__ import annotations

from collections.abc import Iterable

from rebalance_core.consumer.replay_state import CLIENT_NOT_IN, MemberView
from rebalance_core.consumer.states import ClientState, parse_client_state
from rebalance_core.events import Event, TopicPartition
from rebalance_core.measure_records import DAY_MS


class MemberIdentity:
    """Member identity: views, group membership, static members (GroupMetadataManager)."""

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
                and parse_client_state(v.client_state) not in CLIENT_NOT_IN
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

    def _forget(self, member_id: str, ts: int, fenced: bool = False, process: str | None = None) -> None:
        """The member is out of the group. Remembered for a day (late callbacks are expected), then
        dropped with its view, so the state stays bounded. fenced: the coordinator removed it for a timeout
        and its own log is in the input (its process may wake and log its last epoch's assignment:
        EpochTracker.member_gone)."""
        self.gone[member_id] = ts
        self.doubtful.discard(member_id)
        self.tracker.member_gone(member_id, fenced=fenced, process=process)
        horizon = ts - DAY_MS
        for member in [m for m, t in self.gone.items() if t < horizon]:
            del self.gone[member]
            self.tracker.member_released(member)
            view = self.members.get(member)
            if view is not None and not view.joined:
                del self.members[member]

    def _session_timeout(self, e: Event) -> int | None:
        """The session timeout a fence line states, else the configured one, else None (unknown)."""
        stated = self._stated_session_timeout(e)
        return stated if stated is not None else self.settings.session_timeout_ms

    @staticmethod
    def _stated_session_timeout(e: Event) -> int | None:
        """The session timeout a fence line states (GroupMetadataManager's session expiry), else None."""
        text = (e.attributes or {}).get("session_timeout_ms")
        return int(text) if text and text.isdigit() else None

    def _names(self, tps: Iterable[TopicPartition]) -> tuple[TopicPartition, ...]:
        """Topic ids (KIP-848 broker lines) -> topic names, where settings.topic_ids knows them."""
        names = self.topic_names
        if not names:
            return tuple(tps)
        return tuple(TopicPartition(names.get(tp.topic, tp.topic), tp.partition) for tp in tps)
