"""Kafka Connect's worker group: incremental cooperative rebalancing (KIP-415) as the simulator runs it.

A Connect cluster is a classic group (protocol_type `connect`; protocols `sessioned`, KIP-507, and
`compatible`) whose work is connectors and their tasks. The group coordinator is the broker's ordinary
one; what differs is the member side (`WorkerCoordinator`, `DistributedHerder`) and the leader's assignor
(`IncrementalCooperativeAssignor`, modelled here from the 3.5+ source, i.e. with KAFKA-12495's backoff):

- a worker reports the connectors and tasks it runs in its JoinGroup metadata; the leader assigns
  *increments*: what each worker starts and what it stops (revokes), plus a `delay`;
- work that was assigned before but that no worker reports is *lost*: its worker left. The leader does
  not reassign it at once but waits up to scheduled.rebalance.max.delay.ms (default 5 min) for the
  worker to come back; every assignment carries the remaining delay and each worker rejoins when it
  expires (DistributedHerder: scheduledRebalance = receipt + delay). When the delay has expired, lost
  work goes to the workers that were seen empty meanwhile (returning or new ones), else is assigned as
  new, and load-balancing revocations happen in that same round;
- balancing revokes work from overloaded workers; they stop it and rejoin, and the next round hands it
  out (two rounds); a second revoking round right after one is postponed by an exponential backoff
  (KAFKA-12495: 40^n ms, capped at the max delay);
- the leader's view of the previous assignment is dropped when its own last completed generation is
  not the generation it last assigned (a new leader, or a round whose SyncGroup failed).

Representation, the same as the log parser's (`kafka_logs.values.connect_tasks`): task `c-3` of
connector `c` is `TopicPartition("c", 3)`, so tasks replay and are measured like partitions; connectors
are named in `sync_response` attributes only (`assigned_connectors`, `revoked_connectors`), as in the
"Joined group ... Assignment{...}" line. A timeline's `topics` (or a scenario's `connectors:`) map each
connector to its task count.

Java collection orders decide which worker keeps an extra connector or task and which ones a worker
gives up: they are reproduced (`java_string_order`: HashMap / HashSet iteration order of String keys; the
"serialized" order of a worker's metadata, ConnectProtocol.Assignment.asMap).

API
- `kip415_applies(protocol_type)`: whether scheduled.rebalance.max.delay.ms exists for a group (its
  JoinGroup protocol type is `connect`). A consumer group has no such setting: a what-if or simulation
  that asks for it on a consumer group is "not applicable" (`KIP415_NOT_APPLICABLE` says why), and
  `simulate.SimulationSettings` refuses a non-zero delay with a consumer assignor (SimulationError).
- Simulating a Connect group: `simulate.simulate(timeline, SimulationSettings(assignor="sessioned" or
  "compatible", scheduled_rebalance_max_delay_ms=..., session_timeout_ms=10_000,
  heartbeat_interval_ms=3_000, max_poll_interval_ms=60_000))`, the timeline's `topics` being connector ->
  task count (a scenario file says `connectors:`); actions join, leave, crash, restart. The events are
  what the parser reads from worker logs ("[Worker clientId=...]" lines: protocol_type `connect`, the
  sync_response's attributes carry the Assignment and its delay); the truth measures tasks as partitions.
  `scheduled_rebalance_max_delay_ms` None is Connect's default (5 min); 0 reassigns lost work at once.
- The assignor alone: `IncrementalCooperativeAssignor(max_delay_ms).assign(now, connectors, members,
  last_completed_generation, generation)` -> `ClusterAssignment` (per worker: `WorkerAssignment`
  increments and delay; `running`: what each worker runs once it applied them). The instance is the
  leader's memory (previous assignment, lost-work delay, candidates, revocation backoff): keep one per
  leader process and call it once per generation it leads. `WorkerState` is a worker's side (its running
  work, its JoinGroup metadata, `apply` of an assignment).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from rebalance_core.assignors.protocols import CONNECT_PROTOCOL_TYPE
from rebalance_core.events import TopicPartition
from rebalance_core.java_hash import java_string_order, table_size_of_copy

DEFAULT_MAX_DELAY_MS = 300_000  # DistributedConfig.SCHEDULED_REBALANCE_MAX_DELAY_MS_DEFAULT
KIP415_NOT_APPLICABLE = (
    "scheduled.rebalance.max.delay.ms (KIP-415) is Kafka Connect's IncrementalCooperativeAssignor;"
    " a consumer group has no such setting"
)

Task = TopicPartition


def kip415_applies(protocol_type: str | None) -> bool:
    """Whether a group with this JoinGroup protocol type can have a KIP-415 scheduled rebalance delay:
    only Connect's workers (DistributedConfig scheduled.rebalance.max.delay.ms); consumers, KIP-848
    members and Streams have none."""
    return protocol_type == CONNECT_PROTOCOL_TYPE


# ------------------------------------------------------------------------------------ Java orders


def serialized_order(connectors: Sequence[str], tasks: Sequence[Task]) -> tuple[list[str], list[Task]]:
    """Connectors and tasks as the receiving side deserializes them (ConnectProtocol.Assignment.asMap, a
    LinkedHashMap keyed by connector: first the connectors, in HashSet order, then each task under its
    connector, connectors in order of first appearance; ExtendedAssignment.extractConnectors/Tasks)."""
    order = java_string_order(connectors, table_size_of_copy(len(set(connectors))))
    for task in tasks:
        if task.topic not in order:
            order.append(task.topic)
    by_connector: dict[str, list[Task]] = {c: [] for c in order}
    for task in tasks:
        by_connector[task.topic].append(task)
    return [c for c in order if c in set(connectors)], [t for c in order for t in by_connector[c]]


def configured_work(connectors: Mapping[str, int]) -> tuple[list[str], list[Task]]:
    """The config snapshot: connector name -> task count, as sorted connectors and tasks."""
    names = sorted(connectors)
    return names, [Task(name, n) for name in names for n in range(connectors[name])]


# ------------------------------------------------------------------------------------ the assignor
@dataclass(frozen=True)
class WorkerAssignment:
    """ExtendedAssignment for one worker: what it starts and stops this round, and the delay."""

    connectors: tuple[str, ...] = ()
    tasks: tuple[Task, ...] = ()
    revoked_connectors: tuple[str, ...] = ()
    revoked_tasks: tuple[Task, ...] = ()
    delay_ms: int = 0

    @property
    def revokes(self) -> bool:
        return bool(self.revoked_connectors or self.revoked_tasks)


@dataclass(frozen=True)
class ClusterAssignment:
    workers: dict[str, WorkerAssignment]  # member id -> its increments
    running: dict[str, tuple[Task, ...]]  # member id -> the tasks it runs once it applied them
    delay_ms: int


@dataclass
class _Load:
    """WorkerCoordinator.WorkerLoad: a worker's connectors and tasks, in order."""

    worker: str
    connectors: list[str]
    tasks: list[Task]

    def is_empty(self) -> bool:
        return not self.connectors and not self.tasks


@dataclass
class _Work:
    """ConnectorsAndTasks (LinkedHashSets: insertion order, no duplicates)."""

    connectors: dict[str, None] = field(default_factory=dict)
    tasks: dict[Task, None] = field(default_factory=dict)

    def add(self, connectors: Iterable[str] = (), tasks: Iterable[Task] = ()) -> _Work:
        self.connectors.update(dict.fromkeys(connectors))
        self.tasks.update(dict.fromkeys(tasks))
        return self

    def is_empty(self) -> bool:
        return not self.connectors and not self.tasks


def _diff(base: _Work, *subtract: _Work) -> _Work:
    """IncrementalCooperativeAssignor.diff: a TreeSet difference (sorted)."""
    connectors, tasks = set(base.connectors), set(base.tasks)
    for sub in subtract:
        connectors -= set(sub.connectors)
        tasks -= set(sub.tasks)
    return _Work().add(sorted(connectors), sorted(tasks))


class IncrementalCooperativeAssignor:
    """The leader's assignor (one per worker process: its memory is the leader's own, lost with it)."""

    def __init__(self, max_delay_ms: int):
        self.max_delay = max_delay_ms
        self.previous = _Work()  # previousAssignment
        self.previous_revocation = _Work()
        self.revoked_in_previous = False
        self.candidates: dict[str, None] = {}  # candidateWorkersForReassignment (LinkedHashSet)
        self.scheduled_rebalance = 0
        self.delay = 0
        self.previous_generation_id = -1
        self.previous_members: set[str] = set()
        self.successive_revoking_rebalances = 0

    def backoff(self, attempts: int) -> int:
        """ExponentialBackoff(1, 40, maxDelay, 0).backoff (KAFKA-12495): 40^attempts ms, capped."""
        if self.max_delay == 0:
            return 0
        initial = min(self.max_delay, 1)
        if self.max_delay <= initial:
            return initial
        exp = min(attempts, math.log(self.max_delay / initial) / math.log(40))
        return min(int(initial * 40**exp), self.max_delay)

    def assign(
        self,
        now: int,
        connectors: Mapping[str, int],
        members: Sequence[tuple[str, Sequence[str], Sequence[Task]]],
        last_completed_generation: int,
        generation: int,
    ) -> ClusterAssignment:
        """performTaskAssignment. `members`: (member id, connectors, tasks) in the JoinGroup response's
        order, each worker's work as it deserialized from its metadata."""
        if self.previous_generation_id != last_completed_generation:
            self.previous = _Work()  # "Clearing the view of previous assignments due to generation mismatch"
        configured = _Work().add(*configured_work(connectors))
        order = java_string_order(m for m, _, _ in members)  # memberAssignments is a HashMap
        given = {m: (list(c), list(t)) for m, c, t in members}
        assignments = {m: _Work().add(*given[m]) for m in order}
        active = _Work()
        for m in order:
            active.add(assignments[m].connectors, assignments[m].tasks)

        if not self.previous_revocation.is_empty():  # a previous revocation did not take effect
            if any(c in active.connectors for c in self.previous_revocation.connectors) or any(
                t in active.tasks for t in self.previous_revocation.tasks
            ):
                self.previous = _Work().add(active.connectors, active.tasks)
            self.previous_revocation = _Work()

        deleted = _diff(self.previous, configured)
        duplicated = self._duplicated(assignments)
        lost = _diff(self.previous, active, deleted)
        created = _diff(configured, self.previous, active)
        current = {m: self._without(assignments[m], deleted) for m in order}  # currentWorkerAssignment

        to_revoke: dict[str, _Work] = {}
        for excluded in (deleted, duplicated):
            for m in order:
                part = _Work().add(
                    [c for c in assignments[m].connectors if c in excluded.connectors],
                    [t for t in assignments[m].tasks if t in excluded.tasks],
                )
                to_revoke.setdefault(m, _Work()).add(part.connectors, part.tasks)
        loads = [
            _Load(m, [c for c in assignments[m].connectors], [t for t in assignments[m].tasks]) for m in order
        ]
        self._remove(loads, to_revoke)

        lost_to_reassign = self._handle_lost(now, lost, loads)

        if self.delay == 0:  # no revocations while a delayed rebalance is active
            balancing = self._balancing_revocations(configured, loads)
            if self.revoked_in_previous and balancing:
                self.successive_revoking_rebalances += 1
                self.delay = self.backoff(self.successive_revoking_rebalances)
                if self.delay:
                    self.scheduled_rebalance = now + self.delay  # skip revocations this round
                else:
                    self._add_all(to_revoke, balancing)
                    self._remove(loads, balancing)
            elif balancing:
                self._add_all(to_revoke, balancing)
                self._remove(loads, balancing)
                self.revoked_in_previous = True
            elif self.revoked_in_previous:  # converged: reset the backoff
                self.revoked_in_previous = False
                self.successive_revoking_rebalances = 0
        else:
            self.revoked_in_previous = False

        to_assign = (
            _Work()
            .add(created.connectors, created.tasks)
            .add(lost_to_reassign.connectors, lost_to_reassign.tasks)
        )
        self._assign_round_robin(loads, list(to_assign.connectors), "connectors")
        self._assign_round_robin(loads, list(to_assign.tasks), "tasks")

        revoked = {m: w for m, w in to_revoke.items() if not w.is_empty()}
        self._remember(revoked, loads, lost)
        self.previous_generation_id = generation
        self.previous_members = set(order)

        by_worker = {load.worker: load for load in loads}
        workers, running = {}, {}
        for m, _, _ in members:
            load, cur, rev = by_worker[m], current[m], revoked.get(m, _Work())
            workers[m] = WorkerAssignment(
                connectors=tuple(c for c in load.connectors if c not in cur.connectors),
                tasks=tuple(t for t in load.tasks if t not in cur.tasks),
                revoked_connectors=tuple(rev.connectors),
                revoked_tasks=tuple(rev.tasks),
                delay_ms=self.delay,
            )
            running[m] = tuple(sorted(t for t in load.tasks if t not in rev.tasks))
        return ClusterAssignment(workers, running, self.delay)

    # ------------------------------------------------------------------------------- the steps
    def _handle_lost(self, now: int, lost: _Work, loads: list[_Load]) -> _Work:
        """handleLostAssignments: what of the lost work is reassigned as new this round (lost work given
        to candidate workers goes straight into their loads)."""
        reassign = _Work()
        if lost.is_empty() and not self.revoked_in_previous:
            self._reset_delay()
            return reassign
        active = {load.worker for load in loads}
        if self.scheduled_rebalance <= 0 and active >= self.previous_members:
            # nobody departed: workers missed the previous assignment; reassign as new
            return reassign.add(lost.connectors, lost.tasks)
        if self.max_delay == 0:
            return reassign.add(lost.connectors, lost.tasks)
        if self.scheduled_rebalance > 0 and now >= self.scheduled_rebalance:
            # "Delayed rebalance expired. Reassigning lost tasks"
            by_worker = {load.worker: load for load in loads}
            candidates = [by_worker[w] for w in self.candidates if w in by_worker]
            if candidates:
                for i, connector in enumerate(lost.connectors):
                    candidates[i % len(candidates)].connectors.append(connector)
                for i, task in enumerate(lost.tasks):
                    candidates[i % len(candidates)].tasks.append(task)
            else:
                reassign.add(lost.connectors, lost.tasks)
            self._reset_delay()
            self.revoked_in_previous = False
            return reassign
        empty = java_string_order(load.worker for load in loads if load.is_empty())  # Collectors.toSet()
        self.candidates.update(dict.fromkeys(empty))
        if now < self.scheduled_rebalance:  # still waiting: the remaining delay
            remaining = self.scheduled_rebalance - now
            self.delay = min(remaining, self.max_delay) if remaining > 0 else 0
        else:  # scheduledRebalance == 0: start the delay
            self.delay = self.max_delay
        self.scheduled_rebalance = now + self.delay
        return reassign

    def _reset_delay(self) -> None:
        self.candidates.clear()
        self.scheduled_rebalance = 0
        self.delay = 0

    def _balancing_revocations(self, configured: _Work, loads: list[_Load]) -> dict[str, _Work]:
        """performLoadBalancingRevocations: revoke from every worker above its fair share."""
        if all(load.is_empty() for load in loads) or configured.is_empty():
            return {}
        result: dict[str, _Work] = {}
        for kind, total in (("connectors", len(configured.connectors)), ("tasks", len(configured.tasks))):
            for worker, items in self._revocations_of(kind, total, loads).items():
                work = result.setdefault(worker, _Work())
                work.add(items, ()) if kind == "connectors" else work.add((), items)
        return result

    @staticmethod
    def _revocations_of(kind: str, total: int, loads: list[_Load]) -> dict[str, list]:
        workers = len(loads)
        minimum, extra = divmod(total, workers)
        sizes = [len(getattr(load, kind)) for load in loads]
        at_minimum = sum(1 for n in sizes if n == minimum)
        at_extra = sum(1 for n in sizes if n == minimum + 1)
        if at_extra == extra and at_minimum + at_extra == workers:
            return {}  # balanced
        result, given_extra = {}, 0
        for load, size in zip(loads, sizes, strict=True):
            if size <= minimum:
                continue
            if given_extra < extra:
                given_extra += 1
                if size == minimum + 1:
                    continue
                allowed = minimum + 1
            else:
                allowed = minimum
            result[load.worker] = list(getattr(load, kind)[: size - allowed])
        return result

    @staticmethod
    def _assign_round_robin(loads: list[_Load], items: list, kind: str) -> None:
        """assignConnectors / assignTasks: sort by load (then worker id) once, then hand items to the
        workers as loaded as the first one, widening as the first one's load grows."""
        if not items:
            return
        loads.sort(key=lambda load: (len(getattr(load, kind)), load.worker))
        first = loads[0]
        pending = iter(items)
        remaining = len(items)
        while remaining:
            first_load = len(getattr(first, kind))
            up_to = next(
                (i for i, load in enumerate(loads) if len(getattr(load, kind)) > first_load), len(loads)
            )
            for load in loads[:up_to]:
                getattr(load, kind).append(next(pending))
                remaining -= 1
                if not remaining:
                    break

    def _remember(self, revoked: dict[str, _Work], loads: list[_Load], lost: _Work) -> None:
        """computePreviousAssignment: the next assignment minus revocations, plus lost work."""
        previous = _Work()
        for load in loads:
            previous.add(load.connectors, load.tasks)
        for work in revoked.values():
            for c in work.connectors:
                previous.connectors.pop(c, None)
            for t in work.tasks:
                previous.tasks.pop(t, None)
            self.previous_revocation.add(work.connectors, work.tasks)
        self.previous = previous.add(lost.connectors, lost.tasks)

    @staticmethod
    def _duplicated(assignments: dict[str, _Work]) -> _Work:
        seen_c: dict[str, int] = {}
        seen_t: dict[Task, int] = {}
        for work in assignments.values():
            for c in work.connectors:
                seen_c[c] = seen_c.get(c, 0) + 1
            for t in work.tasks:
                seen_t[t] = seen_t.get(t, 0) + 1
        return _Work().add([c for c, n in seen_c.items() if n > 1], [t for t, n in seen_t.items() if n > 1])

    @staticmethod
    def _without(work: _Work, excluded: _Work) -> _Work:
        return _Work().add(
            [c for c in work.connectors if c not in excluded.connectors],
            [t for t in work.tasks if t not in excluded.tasks],
        )

    @staticmethod
    def _remove(loads: list[_Load], removed: dict[str, _Work]) -> None:
        for load in loads:
            work = removed.get(load.worker)
            if work is not None:
                load.connectors[:] = [c for c in load.connectors if c not in work.connectors]
                load.tasks[:] = [t for t in load.tasks if t not in work.tasks]

    @staticmethod
    def _add_all(base: dict[str, _Work], added: dict[str, _Work]) -> None:
        for worker, work in added.items():
            base.setdefault(worker, _Work()).add(work.connectors, work.tasks)


# ------------------------------------------------------------------------------- a worker's state
@dataclass
class WorkerState:
    """What a Connect worker process keeps between rebalances (WorkerCoordinator / DistributedHerder)."""

    max_delay_ms: int
    connectors: list[str] = field(default_factory=list)  # its assignment snapshot, in order
    tasks: list[Task] = field(default_factory=list)
    last_completed_generation: int = -1  # WorkerCoordinator.lastCompletedGenerationId
    assignor: IncrementalCooperativeAssignor | None = None  # created when it first leads
    scheduled_rejoin: int | None = None  # DistributedHerder.scheduledRebalance timer

    def metadata(self) -> tuple[list[str], list[Task]]:
        """The work its JoinGroup reports, in the order the leader reads it back."""
        return serialized_order(self.connectors, self.tasks)

    def leader_assignor(self) -> IncrementalCooperativeAssignor:
        if self.assignor is None:
            self.assignor = IncrementalCooperativeAssignor(self.max_delay_ms)
        return self.assignor

    def apply(self, assignment: WorkerAssignment, generation: int) -> None:
        """WorkerCoordinator.onJoinComplete: the new increments first, then what it kept."""
        connectors, tasks = serialized_order(assignment.connectors, assignment.tasks)
        revoked_c, revoked_t = set(assignment.revoked_connectors), set(assignment.revoked_tasks)
        self.connectors = connectors + [
            c for c in self.connectors if c not in revoked_c and c not in connectors
        ]
        self.tasks = tasks + [t for t in self.tasks if t not in revoked_t and t not in tasks]
        self.last_completed_generation = generation
