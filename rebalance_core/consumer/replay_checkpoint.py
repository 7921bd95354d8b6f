"""The checkpoint of a KIP-848 replay (`ConsumerGroupReplayer.snapshot`, resumed by its `state` argument):
the replayer's own fields, its `MemberView`s, and the states of its `OwnershipTimeline` and `EpochTracker`
as JSON, under the header every replayer's snapshot opens with (`replay_common.checkpoint_header`).

What it saves is what the rules of the other parts keep between events: the coordinator's view of each
member (GroupMetadataManager.consumerGroupHeartbeat, CurrentAssignmentBuilder) and, with member-side
logs, each client's (ConsumerMembershipManager / MembershipManagerImpl). A mixin of
`consumer.replayer.ConsumerGroupReplayer`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

from rebalance_core.checkpoint_rows import row_from_json, row_to_json, tps_from_json, tps_to_json
from rebalance_core.consumer.replay_state import MemberView
from rebalance_core.events import TopicPartition
from rebalance_core.replay_common import check_checkpoint, checkpoint_header

STATE_VERSION = 1
GROUP_PROTOCOL_KEY = "consumer"  # snapshot()["group_protocol"]: which replayer resumes the state


class Checkpoint:
    """The replayer's state to JSON and back."""

    def snapshot(self) -> dict:
        return {
            **checkpoint_header(STATE_VERSION, GROUP_PROTOCOL_KEY, self.cluster, self.group_id),
            "timeline": self.timeline.snapshot(),
            "tracker": self.tracker.snapshot(),
            "members": {m: view_to_json(v) for m, v in self.members.items()},
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
            "skipped_members": {str(epoch): members for epoch, members in self.skipped_members.items()},
            "history_in_input": self.history_in_input,
            "partitions_seen": sorted(tps_to_json(self.partitions_seen)),
            "new_partitions_epoch": self.new_partitions_epoch,
            "emptied": self.emptied,
            "partition_counts": dict(self.partition_counts),
            "presumed_converged": self.presumed_converged,
            "presumed_target_at": self.presumed_target_at,
            "targets_logged": self.targets_logged,
            "reopened_epoch": self.reopened_epoch,
            "round_unknown_until": self.round_unknown_until,
            "client_configs": {key: dict(record) for key, record in self.client_configs.items()},
            "anomalies": [row_to_json(r) for r in self._anomalies],
        }

    def _restore(self, state: Mapping[str, Any]) -> tuple[dict, dict]:
        check_checkpoint(state, STATE_VERSION, GROUP_PROTOCOL_KEY, "consumer-protocol")
        self.members = {m: view_from_json(v) for m, v in state["members"].items()}
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
        self.skipped_members = {int(epoch): dict(m) for epoch, m in state.get("skipped_members", {}).items()}
        self.history_in_input = state.get("history_in_input", False)
        self.partitions_seen = set(tps_from_json(state.get("partitions_seen", ())))
        self.client_configs = {key: dict(record) for key, record in state.get("client_configs", {}).items()}
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


# a view's partition lists, written as [topic, partition] pairs; block_assigned (a tuple) is one too
_PARTITION_FIELDS = ("server_assigned", "server_started", "block_assigned")


def view_to_json(view: MemberView) -> dict:
    out = dataclasses.asdict(view)
    for key in _PARTITION_FIELDS:
        if out[key] is not None:
            out[key] = tps_to_json(getattr(view, key))
    out["server_started_each"] = [[tp.topic, tp.partition, at] for tp, at in view.server_started_each.items()]
    return out


def view_from_json(data: Mapping[str, Any]) -> MemberView:
    data = dict(data)
    for key in ("server_assigned", "server_started"):  # lists on the view
        if data.get(key) is not None:
            data[key] = list(tps_from_json(data[key]))
    data["block_assigned"] = tps_from_json(data.get("block_assigned", ()))  # a tuple on the view
    data["server_started_each"] = {
        TopicPartition(t, p): at for t, p, at in data.get("server_started_each", ())
    }
    return MemberView(**data)
