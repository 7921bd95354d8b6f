"""Partition counts: how many partitions each topic has and when that changed.

Counts come from the partitions the events name (assignments, revocations) and from KIP-848's topic
metadata lines; growth after a full assignment of the topic is a partition count change, which the
leader notices at its metadata refresh (ConsumerCoordinator: "cached metadata has changed").
"""

from __future__ import annotations

from rebalance_core.events import Event
from schemas.events import EventType


class TopicEvidence:
    """Partition counts learned from the events."""

    def _init_topics(self) -> None:
        """The state of partition counts (called by TimelineExtractor.__init__)."""
        self.topics: dict[str, int] = dict(self.replay_settings.topics)  # counts before any change
        self.topic_changes: list[tuple[int, str, int, bool]] = []  # (ts, topic, count, member-signalled)
        self.full_topics: set[str] = set()  # topics a full assignment has shown
        self.metadata_signal: int | None = None  # member logs: the leader saw changed metadata here
        self.topic_ids: dict[str, str] = {}  # KIP-848 subscription metadata: topic name -> topic id
        self.partition_topics: set[str] = set()  # topics as the events' partitions name them

    def _learn_partitions(self, e: Event) -> None:
        """Partition counts from the partitions events name. Growth after a full assignment of the topic
        was seen is a partition count change (at the leader's metadata signal when a member log shows
        one); before, the topic simply had that many."""
        full = e.assignment is not None
        owned_before = e.event_type in (EventType.PARTITIONS_REVOKED.value, EventType.PARTITIONS_LOST.value)
        for tps in (e.partitions or (), *(e.assignment or {}).values()):
            for tp in tps:
                self.partition_topics.add(tp.topic)
                if owned_before:
                    # a member gives up what it owned: the partition existed already (a cooperative
                    # assignment withholds a partition until its owner has revoked it: no growth)
                    self._existed(tp.topic, tp.partition + 1)
                elif tp.topic in self.full_topics:
                    signal = self.metadata_signal
                    self._topic_count(
                        e.ts if signal is None else signal, tp.topic, tp.partition + 1, signal is not None
                    )
                else:
                    self.topics[tp.topic] = max(self.topics.get(tp.topic, 0), tp.partition + 1)
        if full:
            self.full_topics.update(tp.topic for tps in e.assignment.values() for tp in tps)

    def _existed(self, topic: str, count: int) -> None:
        """The topic had at least `count` partitions as of the latest count known for it."""
        changes = [c for c in self.topic_changes if c[1] == topic]
        if not changes:
            self.topics[topic] = max(self.topics.get(topic, 0), count)
        elif changes[-1][2] < count:
            self.topic_changes[self.topic_changes.index(changes[-1])] = (
                *changes[-1][:2],
                count,
                changes[-1][3],
            )

    def _topic_count(self, ts: int, topic: str, count: int, signalled: bool = False) -> None:
        """The topic has `count` partitions from `ts` on (`signalled`: ts is a member's metadata signal,
        the change happened metadata_refresh_ms earlier)."""
        changes = [c for c in self.topic_changes if c[1] == topic]
        current = changes[-1][2] if changes else self.topics.get(topic, 0)
        if count <= current:
            return
        if topic not in self.topics and not changes:
            self.topics[topic] = count  # the first count the input shows: the topic's count
            if not signalled and ts > (self.first_ts or ts):
                self.notes.append(
                    f"topic {topic}: {count} partitions at {ts} after an unknown count: no change replayed"
                )
        elif changes and changes[-1][0] >= ts - 1:  # the same change, seen bigger
            self.topic_changes[self.topic_changes.index(changes[-1])] = (
                *changes[-1][:2],
                count,
                changes[-1][3],
            )
        else:
            self.topic_changes.append((ts, topic, count, signalled))

    def _one_key_per_topic(self) -> None:
        """A KIP-848 broker names a topic by its id in assignments (4.0: "assignedPartitions=[<id>-0]")
        and by name and id in its subscription metadata: one topic, counted once, under the key the
        events' partitions use (the replay's, unless replay settings map the id back)."""
        for name, topic_id in self.topic_ids.items():
            key, other = (topic_id, name) if topic_id in self.partition_topics else (name, topic_id)
            if other in self.topics:
                self.topics[key] = max(self.topics.get(key, 0), self.topics.pop(other))
            self.topic_changes = [
                (ts, key if topic == other else topic, count, signalled)
                for ts, topic, count, signalled in self.topic_changes
            ]
