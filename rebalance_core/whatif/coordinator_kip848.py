"""The KIP-848 group coordinator's lines: epochs, target assignments and member states.

GroupMetadataManager (group-coordinator module, 3.7+) bumps the group epoch and computes the target
assignment in the heartbeat that caused the change, logs every change of a member's assignment state
("new assignment state: epoch=E, previousEpoch=P", 3.8+) when that member's heartbeat arrives, and the
topic metadata its subscriptions resolve to. Each `_c_<event_type>` handler records its evidence on the
incarnations; joins, removals and static replacements, which both protocols log, are in coordinator_side.py.
"""

from __future__ import annotations

from rebalance_core.events import Event
from rebalance_core.whatif.incarnations import KIP848_ARRIVED, MembershipBook


class ConsumerGroupEvidence(MembershipBook):
    """The KIP-848 coordinator's `_c_<event_type>` handlers of TimelineExtractor, with the state only they
    gather."""

    def _init_consumer_group(self) -> None:
        """The state of what only KIP-848's coordinator lines show (called by TimelineExtractor.__init__)."""
        self.bumped_at: int | None = None  # the latest group epoch bump
        # the input opens with an epoch's target assignment, bumped for a cause in no line
        self.opening_target: tuple[int | None, int] | None = None
        # member -> epoch of its latest state line
        self.state_epochs: dict[str, int] = {}
        # (member, its epoch whose state line a later previousEpoch proves missing, the later line's epoch)
        self.missing_state_line: tuple[str, int, int | None] | None = None

    def _c_group_epoch_bumped(self, e: Event) -> None:
        self.bumped_at = e.ts

    def _c_target_assignment_computed(self, e: Event) -> None:
        if e.protocol_name:
            self.protocol_names[e.protocol_name] += 1
        if e.assignment and not self.generations and self.bumped_at is None and e.ts == self.first_ts:
            # GroupMetadataManager bumps the group epoch and computes its target in the heartbeat that
            # caused it: the input's first line being the target, that cause (a join, a leave, a
            # subscription or metadata change) is before the input, in no line
            self.opening_target = (e.assignment_epoch, e.ts)
        if e.assignment:
            self._assignment_seen(e, self.bumped_at if self.bumped_at is not None else e.ts)

    def _c_member_epoch_updated(self, e: Event) -> None:
        if e.member_id:
            self._known(e.member_id, e)
            # the coordinator logs every change of a member's state ("new assignment state: epoch=E,
            # previousEpoch=P", 3.8+): P later than the member's last line proves its line at P missing
            previous = str((e.attributes or {}).get("previous_epoch") or "")
            last = self.state_epochs.get(e.member_id)
            if (
                last is not None
                and previous.isdigit()
                and int(previous) > last
                and not self.missing_state_line
            ):
                self.missing_state_line = (e.member_id, int(previous), e.member_epoch)
            if e.member_epoch is not None:
                self.state_epochs[e.member_id] = e.member_epoch
            # the coordinator updates a member's assignment state when its heartbeat arrives
            self.current[e.member_id].heartbeats.append((e.ts, KIP848_ARRIVED, None))

    def _c_topic_metadata_changed(self, e: Event) -> None:
        attrs = e.attributes or {}
        for key, value in attrs.items():
            if key.startswith("topic.") and value.isdigit():
                name = key[len("topic.") :]
                self._topic_count(e.ts, name, int(value))
                if attrs.get(f"topic_id.{name}"):
                    self.topic_ids[name] = attrs[f"topic_id.{name}"]
