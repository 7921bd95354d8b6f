"""Where a warehouse location points: a metastore schema (`catalog.schema`), a local folder, or a
remote URI. Read by the Delta I/O (jobs.delta_io), the run lock (jobs.run_state), the job's log file
(jobs.failures) and the verbs that treat a metastore warehouse apart. No Kafka class: the job's own
configuration.
"""

from __future__ import annotations

import os
from pathlib import Path


def is_metastore_schema(location: str) -> bool:
    """`catalog.schema` / `schema` (no slash, no scheme) names a metastore schema; anything else is a
    folder (write `./name` for a folder in the current directory)."""
    return "/" not in location and ":" not in location


def local_folder(location: str) -> Path | None:
    """The local folder of a warehouse location; None for a metastore schema or a remote URI."""
    if is_metastore_schema(location) or ("://" in location and not location.startswith("file://")):
        return None
    return Path(os.path.abspath(os.path.expanduser(location.removeprefix("file://"))))
