"""What a group's log text needs that its events do not carry, as the writer remembers it: the broker's
record of each classic member from its JoinGroup (`MemberMetadata`: client id, timeouts, protocol) and the
members pending since KIP-394's first JoinGroup (`GroupMetadata.pendingMembers`), the generation a 0.10
coordinator prints after deleting an emptied group, each consumer's own view (`ConsumerCoordinator`: its
owned partitions, last revocation, joined subscription), members' KIP-848 epochs and topic partition counts.

`KafkaLogWriter` is one; the wordings (`writer_broker`, `writer_client`, `writer_connect`) read it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from rebalance_core.events import Event, TopicPartition
from schemas.events import EventType

E = EventType


@dataclass
class MemberRecord:
    """What the broker knows about a classic member from its JoinGroup (MemberMetadata)."""

    client_id: str | None
    instance_id: str | None
    session_timeout_ms: str
    rebalance_timeout_ms: str
    protocol: str | None


@dataclass
class ClientRecord:
    """A consumer process as its own log knows it."""

    protocol: str | None = None
    owned: set[TopicPartition] = field(default_factory=set)
    last_revoked: tuple[TopicPartition, ...] = ()
    joined_subscription: tuple[str, ...] = ()  # topics of its last JoinGroup (from the broker's side)
    assignment_counts: dict[str, int] = field(default_factory=dict)  # leader: counts its assignment used


class GroupLogMemory:
    """What the lines written so far told about the group (module docstring); `_note` records each event
    after its lines are written. `deletes_empty_groups`: the broker era deletes an emptied group (0.10.0)."""

    def __init__(self, topic_ids: Mapping[str, str] | None, deletes_empty_groups: bool):
        self.topic_ids = dict(topic_ids or {})
        self.deletes_empty_groups = deletes_empty_groups
        self.members: dict[str, MemberRecord] = {}
        self.pending: set[str] = set()  # KIP-394: member ids created by a JoinGroup without one
        self.leave_reasons: dict[str, str] = {}
        self.clients: dict[str, ClientRecord] = {}
        self.epochs: dict[str, int] = {}
        self.topics: dict[str, int] = {}  # partition counts as the group's events show them
        self.coordinator = 0  # broker id of the group's coordinator, as its events name it
        # 0.10: an emptied group is deleted and recreated at generation 0, so the printed generation is
        # the simulated one minus `generation_base`; (first simulated generation, base) per change
        self.generation_base = 0
        self.renumbering: list[tuple[int, int]] = []
        self.joined: dict[
            int | None, tuple[int, str | None]
        ] = {}  # generation -> (members, leader) at its join
        # write_all's look-ahead: a subscription change's new topics (the member's next JoinGroup)
        self.next_subscription: dict[str, tuple[str, ...]] = {}

    def client_state(self, event: Event) -> ClientRecord:
        return self.clients.setdefault(event.client_id or event.source or "", ClientRecord())

    def printed_generation(self, generation: int | None) -> int | None:
        return generation - self.generation_base if generation is not None else None

    def _note(self, event: Event) -> None:
        """What later lines need to know of this event (after its own lines are written)."""
        kind = event.event_type
        if kind == E.JOIN_RECEIVED.value:
            self._note_join(event)
        elif kind == E.STATIC_MEMBER_REPLACED.value:
            old = self.members.get(event.attributes.get("old_member_id", ""))
            if event.member_id and old is not None:
                self.members[event.member_id] = old
            if event.client_id and event.subscription is not None:
                self.clients.setdefault(event.client_id, ClientRecord()).joined_subscription = tuple(
                    sorted(event.subscription)
                )
        elif kind == E.MEMBER_REMOVED.value:
            self.pending.discard(event.member_id or "")
        elif kind == E.JOIN_COMPLETED.value:
            # a member of a generation is no longer pending (events that model one JoinGroup per new
            # member: that one event stood for both)
            self.pending.difference_update(event.members or ())
            count = event.member_count if event.member_count is not None else len(event.members or ())
            self.joined = {event.generation_id: (count, event.leader_id)}
        elif kind == E.GROUP_DEAD.value:  # deleted: the next group of that name starts at generation 0
            self.generation_base = 0
        elif kind == E.TOPIC_METADATA_CHANGED.value:
            for key, value in event.attributes.items():
                if key.startswith("topic.") and value.isdigit():
                    self.topics[key.removeprefix("topic.")] = int(value)
        elif kind == E.GROUP_EMPTY.value and self.deletes_empty_groups:
            generation = event.generation_id or 0
            self.generation_base = generation
            self.renumbering.append((generation + 1, generation))
        elif kind == E.MEMBER_EPOCH_UPDATED.value and event.member_id and event.member_epoch is not None:
            self.epochs[event.member_id] = event.member_epoch
        elif kind == E.LEAVE_SENT.value and event.member_id:
            self.leave_reasons[event.member_id] = event.reason or "not provided"
        self._note_client(event)

    def _note_join(self, event: Event) -> None:
        member_id = event.member_id or ""
        if member_id in self.pending and event.attributes.get("pending") != "true":
            self.pending.discard(member_id)  # KIP-394's second JoinGroup, with the id: added now
        elif member_id not in self.members and not event.group_instance_id:
            self.pending.add(member_id)  # KIP-394: told to rejoin with this id
        if member_id not in self.members:
            attributes = event.attributes
            self.members[member_id] = MemberRecord(
                event.client_id,
                event.group_instance_id,
                attributes.get("session_timeout_ms", "45000"),
                attributes.get("rebalance_timeout_ms", "300000"),
                event.protocol_name,
            )
        if event.client_id and event.subscription is not None:
            self.clients.setdefault(event.client_id, ClientRecord()).joined_subscription = tuple(
                sorted(event.subscription)
            )

    def _note_client(self, event: Event) -> None:
        kind = event.event_type
        if event.is_coordinator:
            return
        client = self.client_state(event)
        if kind == E.JOIN_SENT.value and not event.member_id:
            client.owned.clear()  # a new process (or one whose member id was reset) owns nothing
        elif kind == E.JOIN_RESPONSE.value:
            client.protocol = event.protocol_name
        elif kind == E.ASSIGNMENT_COMPUTED.value:
            for partitions in (event.assignment or {}).values():
                for tp in partitions:
                    self.topics[tp.topic] = max(self.topics.get(tp.topic, 0), tp.partition + 1)
            client.assignment_counts = dict(self.topics)
        elif kind == E.PARTITIONS_REVOKED.value:
            client.owned -= set(event.partitions or ())
            client.last_revoked = tuple(sorted(event.partitions or ()))
        elif kind == E.PARTITIONS_ASSIGNED.value:
            client.owned |= set(event.partitions or ())
        elif kind == E.PARTITIONS_LOST.value:
            client.owned.clear()
