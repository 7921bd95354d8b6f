"""The tests' hook into a running job: `checkpoint(name)`, called at the steps where a run may be
killed (reading, replaying in a Python worker, staging and committing each Delta table). With
REBALANCE_REPLAY_PAUSE_AT=name the job writes REBALANCE_REPLAY_PAUSE_FILE at that point and waits until
the file is deleted, so that a test can kill it, or start another run, at a known step (see
`jobs.run_state` for what the next run then finds). No Kafka class: the job's own test seam.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

PAUSE_AT = "REBALANCE_REPLAY_PAUSE_AT"
PAUSE_FILE = "REBALANCE_REPLAY_PAUSE_FILE"

_paused = False


def checkpoint(name: str) -> None:
    """Pause at `name` the first time the process reaches it, when the tests ask for it (see the module
    docstring); otherwise nothing. (Once only: run_accounting, for one, is committed twice.)"""
    global _paused
    if _paused or os.environ.get(PAUSE_AT) != name:
        return
    _paused = True
    marker = Path(os.environ[PAUSE_FILE])
    marker.write_text(f"{name} {os.getpid()}\n")
    deadline = time.monotonic() + 600
    while marker.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
