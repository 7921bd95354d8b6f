"""KIP-415 scheduled rebalance delay (scheduled.rebalance.max.delay.ms), applied to partitions.

Kafka Connect's `IncrementalCooperativeAssignor` (the leader's assignor) keeps, between rebalances, the
previous assignment and the members it went to. Work that was assigned before but that no present
member reports owning is *lost*: its owner disappeared. Instead of handing it out at once, the leader
keeps it unassigned for up to scheduled.rebalance.max.delay.ms (the delay travels in every member's
assignment; the members rejoin when it expires), so that a bouncing member can come back and get it:

- lost and no delay running, but every previous member is still here: nothing really left (a member
  missed the previous assignment); the lost work is assigned as new, now;
- lost and no delay running: start the delay (max); keep lost work unassigned; no balancing revocations;
- delay running, not expired: keep waiting with the remaining delay; members that come back with no
  work are remembered as candidates;
- delay expired: lost work goes round-robin to the candidates still present, else is assigned as new.

Here the "work" is the group's partitions and "assigned as new" is the group's own cooperative assignor.
Like Connect, the bookkeeping lives in the leader: a new leader starts with no memory (no delay).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from rebalance_core.assignors import Assignor, GroupAssignment, GroupSpec
from rebalance_core.events import TopicPartition


@dataclass
class LostPartitionDelay:
    max_delay_ms: int
    leader_id: str | None = None
    previous: set[TopicPartition] = field(default_factory=set)  # previous assignment, lost included
    previous_members: set[str] = field(default_factory=set)
    scheduled_at: int = 0  # 0: no delayed rebalance scheduled
    delay_ms: int = 0
    candidates: set[str] = field(default_factory=set)

    def assign(
        self, now: int, leader_id: str, spec: GroupSpec, assignor: Assignor
    ) -> tuple[GroupAssignment, int]:
        """The leader's assignment at `now` and the delay (ms, 0: none) to send with it."""
        if leader_id != self.leader_id:  # IncrementalCooperativeAssignor: outdated previous assignment
            self.leader_id = leader_id
            self.previous, self.previous_members = set(), set()
            self._reset_delay()
        subscribed = {topic for m in spec.members for topic in m.subscription}
        configured = {tp for topic in subscribed for tp in spec.partitions_of(topic)}
        owned = {m.member_id: {tp for tp in m.owned if tp in configured} for m in spec.members}
        active = set().union(*owned.values()) if owned else set()
        members = set(owned)
        lost = (self.previous & configured) - active

        if not lost:
            self._reset_delay()
            assignment = assignor.assign(spec)
        elif self.scheduled_at == 0 and members >= self.previous_members:
            self._reset_delay()  # nobody left: the missing partitions are simply assigned as new
            assignment = assignor.assign(spec)
        elif self.scheduled_at and now >= self.scheduled_at:
            candidates = sorted(self.candidates & members)
            self._reset_delay()
            if candidates:
                assignment = {m: sorted(tps) for m, tps in owned.items()}
                for i, tp in enumerate(sorted(lost)):
                    assignment[candidates[i % len(candidates)]].append(tp)
                self._assign_new(assignment, spec, configured - self.previous - active)
            else:
                assignment = assignor.assign(spec)
        else:
            self.candidates |= {m for m, tps in owned.items() if not tps}
            self.delay_ms = self.scheduled_at - now if now < self.scheduled_at else self.max_delay_ms
            self.scheduled_at = now + self.delay_ms
            assignment = {m: sorted(tps) for m, tps in owned.items()}
            self._assign_new(assignment, spec, configured - self.previous - active)

        assignment = {m: sorted(tps) for m, tps in assignment.items()}
        self.previous = {tp for tps in assignment.values() for tp in tps} | lost
        self.previous_members = members
        return assignment, self.delay_ms

    def _reset_delay(self) -> None:
        self.scheduled_at, self.delay_ms = 0, 0
        self.candidates = set()

    @staticmethod
    def _assign_new(assignment: GroupAssignment, spec: GroupSpec, new: set[TopicPartition]) -> None:
        """Connect's assignTasks: each new partition to the least loaded subscribed member."""
        subscriptions = {m.member_id: set(m.subscription) for m in spec.members}
        for tp in sorted(new):
            eligible = [m for m in assignment if tp.topic in subscriptions[m]]
            if eligible:
                target = min(eligible, key=lambda m: (len(assignment[m]), m))
                assignment[target].append(tp)
