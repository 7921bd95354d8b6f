"""The simulators' clock: timed callbacks in (time, insertion) order.

Shared by the classic simulator (`classic.simulator`, which also cancels timers and defers steps so that
one protocol step runs per millisecond) and the KIP-848 simulator (`consumer.simulate`, which only pushes
and pops). It models no Kafka class: it stands in for the passing of time between the coordinator's
request handlers (GroupCoordinator / GroupMetadataManager) and each member's poll loop and heartbeat thread.
"""

from __future__ import annotations

import heapq
from collections import deque
from collections.abc import Callable
from typing import Any


class EventQueue:
    """Timed callbacks in (time, insertion) order; `essential` ones keep the simulation running.

    One protocol step per millisecond (see `rebalance_core.classic.simulator`): `defer_through(last)` moves every callback
    due at or before `last` to `last + 1`, after everything already queued, exactly as if each were popped
    and pushed again (it takes a new place in the order, and its old token no longer cancels it). Deferred
    callbacks wait in a FIFO (`_deferred`, all due at `_deferred_ts`) instead of the heap, so k steps that
    fall on one millisecond cost O(k) moves in all, where pushing each one back cost O(k) per millisecond
    (O(k^2), most of the run time of a big group).
    """

    def __init__(self) -> None:
        self._heap: list[tuple[int, int, Callable, tuple]] = []
        self._seq = 0
        self._live: dict[int, bool] = {}  # token -> essential
        self._essential = 0  # live heap entries and deferred callbacks
        self._deferred: deque[tuple[Callable, tuple, bool]] = deque()
        self._deferred_ts = 0
        # Runs of `_deferred` moved at one time, oldest first: [seq, count]. All callbacks of a run take
        # the place of one push with that seq: after heap entries of `_deferred_ts` with a lower seq.
        self._runs: deque[list[int]] = deque()

    def push(self, ts: int, fn: Callable, *args: Any, essential: bool = True) -> int:
        self._seq += 1
        heapq.heappush(self._heap, (ts, self._seq, fn, args))
        self._live[self._seq] = essential
        self._essential += essential
        return self._seq

    def cancel(self, token: int | None) -> None:
        if token is not None:
            self._essential -= self._live.pop(token, False)

    def has_essential(self) -> bool:
        return self._essential > 0

    def _drop_cancelled(self) -> None:
        heap, live = self._heap, self._live
        while heap and heap[0][1] not in live:
            heapq.heappop(heap)

    def _deferred_first(self) -> bool:
        """Whether the next callback is the first deferred one rather than the heap's first entry."""
        self._drop_cancelled()
        if not self._deferred:
            return False
        heap = self._heap
        return not heap or (self._deferred_ts, self._runs[0][0]) < (heap[0][0], heap[0][1])

    def pop(self, until: int | None) -> tuple[int, Callable, tuple] | None:
        """The next callback (time, fn, args), or None if there is none due at or before `until`."""
        if self._deferred_first():
            if until is not None and self._deferred_ts > until:
                return None
            fn, args, essential = self._deferred.popleft()
            run = self._runs[0]
            run[1] -= 1
            if not run[1]:
                self._runs.popleft()
            self._essential -= essential
            return self._deferred_ts, fn, args
        if not self._heap or (until is not None and self._heap[0][0] > until):
            return None
        ts, seq, fn, args = heapq.heappop(self._heap)
        self._essential -= self._live.pop(seq)
        return ts, fn, args

    def _take_before(self, ts: int, seq: float) -> list[tuple[Callable, tuple, bool]]:
        """Remove and return the live heap entries ordered before (ts, seq), in order (still counted)."""
        taken = []
        heap = self._heap
        while True:
            self._drop_cancelled()
            if not heap or (heap[0][0], heap[0][1]) > (ts, seq):
                return taken
            _, token, fn, args = heapq.heappop(heap)
            taken.append((fn, args, self._live.pop(token)))

    def defer_through(self, last: int) -> None:
        """Move every callback due at or before `last` to `last + 1`, in (time, insertion) order, after
        every callback already queued (each as if pushed again now)."""
        heap = self._heap
        due_again = bool(self._deferred) and self._deferred_ts <= last
        if not due_again and not (heap and heap[0][0] <= last):
            return  # the usual case: nothing due
        if due_again:  # the deferred callbacks (due at `last`) merge with the heap's by (time, seq)
            if len(self._runs) == 1:  # usual case: heap entries go before or after the single run
                self._deferred.extendleft(reversed(self._take_before(self._deferred_ts, self._runs[0][0])))
            else:  # heap entries pushed between two runs go between them
                merged: deque[tuple[Callable, tuple, bool]] = deque()
                for seq, count in self._runs:
                    merged.extend(self._take_before(self._deferred_ts, seq))
                    merged.extend(self._deferred.popleft() for _ in range(count))
                self._deferred = merged
            self._runs.clear()
            moved = len(self._deferred)
        else:
            moved = 0
        after = self._take_before(last, float("inf"))
        if not moved and not after:
            return  # only cancelled entries were due
        self._deferred.extend(after)
        self._seq += 1
        self._runs.append([self._seq, moved + len(after)])
        self._deferred_ts = last + 1
