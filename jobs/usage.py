"""What every verb tells its user about their own input: `UsageError`, a problem the user can fix (bad
input, bad config, missing path), printed by `jobs.cli` as one line with exit status 2; and
`printable_name`, a file name as such lines and the rows show it. No Kafka class: the job's own
command-line contract, imported by the verbs and the modules under them, and by `jobs.cli` that
catches the error.
"""

from __future__ import annotations

import os


class UsageError(Exception):
    """A problem with the user's input or configuration: printed as one line, exit status 2."""


def printable_name(name: str) -> str:
    """A file name as text whatever its bytes (those that are not UTF-8 as \\xNN): what rows and
    messages carry of a name Python holds with surrogates (os.listdir of a name that is not UTF-8)."""
    return os.fsencode(name).decode("utf-8", errors="backslashreplace")
