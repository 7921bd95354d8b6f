"""Canonical events -> Kafka log text: what a broker's server.log and the consumers' logs would show,
in the wording of one Kafka era per side (see /work/shared/kafka-logs/TEMPLATES.md, checked against
Kafka's source at the tags named below).

Broker eras (`BROKER_ERAS`), classic groups:
    0.10   Scala `kafka.coordinator.GroupCoordinator` of 0.10.0: "Preparing to restabilize", "Stabilized
           group G generation N", "Group G generation N is dead and removed" (an emptied group is deleted
           and recreated at generation 0); no joins, leaves or failures at INFO, no reasons, no member ids
    2.x    Scala `kafka.coordinator.group.GroupCoordinator` of 2.8: reasons without client reason,
           "Member[group.instance.id …, member.id …] … has left", static members' own lines; a new
           dynamic member's JoinGroups log at DEBUG; "Assignment received" names no leader
    3.x    Scala GroupCoordinator of 3.9 (the default until 4.0)
    4.x    Java `org.apache.kafka.coordinator.group.GroupMetadataManager` (trunk of the 4.0 line): the new
           coordinator's classic-group lines, KIP-394's second JoinGroup at INFO
  consumer groups (KIP-848; only the Java coordinator has them): 3.x = 3.9, 4.x = 4.0 (the target
  assignment's map and the members' "new assignment state" moved to DEBUG).
Client eras (`CLIENT_ERAS`), the Java consumer:
    2.x    2.8: AbstractCoordinator's own logger, "Attempt to heartbeat failed since group is
           rebalancing", "Need to revoke partitions … and re-join the group", no "Request joining group"
    3.x    3.9: `ConsumerCoordinator` / `ConsumerRebalanceListenerInvoker`, KIP-848 membership manager
    4.x    3.9's wording with the bracketed partition lists observed from 4.1 clients, KIP-848 state
           transitions at INFO
  a Kafka Connect worker (member events of protocol type `connect`), same eras: `writer_connect`
  (WorkerCoordinator / DistributedHerder of 2.8 and trunk), in connect-log4j's `(%c:%L)` layout
in Kafka's shipped log4j layout `[%d] %p %m (%c)%n`, `%d` = `yyyy-MM-dd HH:mm:ss,SSS` (here UTC).
The wordings themselves live in `writer_broker`, `writer_client` and `writer_connect`, one class per era;
the pieces they share (`LogLine`, the streams, timestamps, hosts) in `writer_lines`.

Pure: events in, `LogLine`s out. One writer per group, fed the group's events in order; it remembers what
the text needs and the event does not carry (a member's client id and timeouts for the LeaveGroup line,
a client's owned partitions for "Updating assignment with", a member's epoch, topic partition counts).
The writer renders every event for both sides; a view (broker-only, client-only) keeps one stream.

Events an era does not log at INFO produce no line; `carried(event)` says what the text of a written
event carries back (its type as the parser will read it, and the fields), `fields_carried(type)` the
same per type. Lines Kafka logs around an event without an event of their own are written as context
(no event ids). KIP-394's second JoinGroup: the client's "Request joining group due to: need to re-join
with the given member-id: X" is a `join_requested` with that reason, the second "(Re-)joining group" a
`join_sent`, and the broker's "Pending dynamic member … joins" (4.x) a `join_received` of a member id the
writer saw created as pending (its first JoinGroup): a simulator that emits these events gets those lines.
Order: like the 3.x Scala coordinator, a LeaveGroup's "Preparing to rebalance" line precedes its "has
left" line there (same millisecond); members dropped at the rebalance timeout share one line.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import replace
from typing import Any

from rebalance_core.assignors.protocols import CONNECT_PROTOCOL_TYPE
from rebalance_core.events import Event
from rebalance_core.kafka_logs import writer_broker, writer_client, writer_connect
from rebalance_core.kafka_logs.writer_lines import (
    LogLine,
    broker_id,
    is_pending_sync_removal,
    is_timeout_removal,
)
from rebalance_core.kafka_logs.writer_memory import GroupLogMemory
from schemas.events import EventType

E = EventType
BROKER_ERAS = ("0.10", "2.x", "3.x", "4.x")
CLIENT_ERAS = ("2.x", "3.x", "4.x")
CONSUMER_PROTOCOL_ERAS = ("3.x", "4.x")  # KIP-848 exists from 3.6 (early access) on


class WriterError(ValueError):
    """An era / protocol combination Kafka never had (e.g. a KIP-848 group in 2.x)."""


class KafkaLogWriter(GroupLogMemory):
    """One group's canonical events -> log entries (see the module docstring). `consumer_protocol`: the
    group uses KIP-848. `topic_ids` (topic -> id) is needed for KIP-848 broker lines, which print topic
    ids. `broker_era` / `client_era`: the wording of each side (`BROKER_ERAS`, `CLIENT_ERAS`)."""

    def __init__(
        self,
        *,
        consumer_protocol: bool = False,
        topic_ids: Mapping[str, str] | None = None,
        broker_era: str = "3.x",
        client_era: str = "3.x",
        record_carried: bool = False,
    ):
        if broker_era not in BROKER_ERAS:
            raise WriterError(f"unknown broker era {broker_era!r}; one of {', '.join(BROKER_ERAS)}")
        if client_era not in CLIENT_ERAS:
            raise WriterError(f"unknown client era {client_era!r}; one of {', '.join(CLIENT_ERAS)}")
        if consumer_protocol and (
            broker_era not in CONSUMER_PROTOCOL_ERAS or client_era not in CONSUMER_PROTOCOL_ERAS
        ):
            raise WriterError("KIP-848 consumer groups exist from Kafka 3.6 on: eras 3.x and 4.x only")
        self.consumer_protocol = consumer_protocol
        self.broker_era, self.client_era = broker_era, client_era
        self.broker = writer_broker.wording(broker_era, consumer_protocol)
        self.client = writer_client.wording(client_era, consumer_protocol)
        self.worker = writer_connect.wording(client_era)  # a Connect worker's member events
        super().__init__(topic_ids, self.broker.deletes_empty_groups)
        self._held: list[Event] = []  # coordinator events whose line waits for the next event
        self.record_carried = record_carried  # keep `carried` of each written event (tests)
        self._carried: dict[str, tuple[str, dict[str, Any]]] = {}

    # -- driving -------------------------------------------------------------------------------
    def write(self, event: Event) -> list[LogLine]:
        """The entries for one event (and for any event held back before it), in log order."""
        out: list[LogLine] = []
        if self._held:
            first = self._held[0]
            same_kind = is_timeout_removal(event) == is_timeout_removal(first)
            if event.ts == first.ts and same_kind and self.broker.holds(event):
                self._held.append(event)
                return out
            if event.event_type == E.REBALANCE_PREPARED.value and event.ts == first.ts:
                out.extend(self._render_preparing(event))
                out.extend(self._release_held())
                return out
            out.extend(self._release_held())
        if self.broker.holds(event):
            self._held.append(event)
            return out
        out.extend(self._render(event))
        return out

    def write_all(self, events: Iterable[Event]) -> list[LogLine]:
        events = list(events)
        self._look_ahead(events)
        out: list[LogLine] = []
        for event in events:
            out.extend(self.write(event))
        out.extend(self.flush())
        return out

    def flush(self) -> list[LogLine]:
        """Entries still held back (call at the end of the group's events)."""
        return self._release_held() + self.worker.flush()

    def _release_held(self) -> list[LogLine]:
        """The coordinator events held back, written."""
        held, self._held = self._held, []
        if not held:
            return []
        if is_timeout_removal(held[0]):
            lines = self.broker.timeout_removals(self, held)
            for event in held:
                self._keep_carried(event, self.broker)
                self._note(event)
            return lines
        return [line for event in held for line in self._render(event)]

    def _render_preparing(self, event: Event) -> list[LogLine]:
        """The Preparing line after held removals of its instant: members dropped for not syncing in
        time are named in its reason (GroupCoordinator.removePendingSyncMembers), so it renders them."""
        lines = self._render(event)
        named = tuple(e.event_id for e in self._held if is_pending_sync_removal(e))
        if lines and named:
            lines[0] = replace(lines[0], event_ids=lines[0].event_ids + named)
        return lines

    def _render(self, event: Event) -> list[LogLine]:
        if event.is_coordinator:
            self.coordinator = broker_id(event.source)
        wording = self.member_wording(event.protocol_type) if not event.is_coordinator else self.broker
        lines = wording.render(self, event)
        self._keep_carried(event, wording)
        self._note(event)
        return lines

    def _keep_carried(self, event: Event, wording) -> None:
        if self.record_carried:
            self._carried[event.event_id] = wording.carried(self, event)

    def _look_ahead(self, events: list[Event]) -> None:
        """The subscription a member changes to is printed when it asks to rejoin, before its JoinGroup
        (the only event that carries it) is written: find each such JoinGroup."""
        waiting: dict[str, str] = {}  # client id -> event id of its "subscription changed"
        for event in events:
            if event.event_type == E.JOIN_REQUESTED.value and event.reason == "subscription changed":
                waiting[event.client_id or ""] = event.event_id
            elif event.event_type in _JOINS and event.client_id in waiting:
                self.next_subscription[waiting.pop(event.client_id)] = tuple(sorted(event.subscription or ()))

    # -- what the text carries -------------------------------------------------------------------
    def carried(self, event: Event) -> tuple[str, dict[str, Any]]:
        """(event type the parser reads the event's line as, {field: value the text carries}) for an
        event this writer wrote, besides ts, side, group_id and a client line's client and instance ids.
        Needs `record_carried` (the text depends on what the writer knew when it wrote the event)."""
        if not self.record_carried:
            raise WriterError("carried() needs KafkaLogWriter(record_carried=True)")
        return self._carried[event.event_id]

    def fields_carried(self, event_type: str, side: str, protocol_type: str | None = None) -> tuple[str, ...]:
        """The fields `carried` gives for lines read back as `event_type` on a side (coordinator/member;
        a member's `protocol_type` `connect`: a Connect worker's lines)."""
        wording = self.broker if side == "coordinator" else self.member_wording(protocol_type)
        return wording.fields.get(EventType(event_type), ())

    def member_wording(self, protocol_type: str | None):
        """A member's wording: a Connect worker's (its events' protocol type `connect`) or the consumer's."""
        return self.worker if protocol_type == CONNECT_PROTOCOL_TYPE else self.client


_JOINS = (E.JOIN_RECEIVED.value, E.STATIC_MEMBER_REPLACED.value)
