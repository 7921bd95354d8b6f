"""The run's accounting line tells log lines skipped as not about groups from rows outside the run's dates."""

from __future__ import annotations

import datetime as dt

import pytest
from rich.console import Console

from jobs.replay import Accounting, RunResult, print_summary

DAY = dt.date(2024, 5, 6)


def accounting_line(skipped: int, not_group_lines: int) -> str:
    counts = Accounting(read=10 + skipped, replayed=8, quarantined=2, skipped=skipped)
    result = RunResult(
        run_id="r", scenario="actual", input="in", input_format="kafka-log", warehouse="wh", writer="delta-rs",
        date_from=DAY, date_to=DAY, accounting={DAY: counts}, table_rows={}, not_group_lines=not_group_lines,
    )  # fmt: skip
    console = Console(record=True, width=400)
    print_summary(console, result, 1.0)
    [line] = [line for line in console.export_text().splitlines() if line.startswith("read ")]
    return line


@pytest.mark.parametrize(
    ("skipped", "not_group_lines", "expected"),
    [
        (0, 0, "read 10 = replayed 8 + quarantined 2 + duplicates 0"),
        (5, 5, "read 15 = replayed 8 + quarantined 2 + duplicates 0 + skipped 5 (5 not about groups)"),
        (3, 0, "read 13 = replayed 8 + quarantined 2 + duplicates 0 + skipped 3 (3 outside the run's dates)"),
        (
            7,
            4,
            "read 17 = replayed 8 + quarantined 2 + duplicates 0 + skipped 7 (4 not about groups, 3 outside the run's dates)",
        ),
    ],
)
def test_skipped_lines_are_split_by_why(skipped, not_group_lines, expected):
    assert accounting_line(skipped, not_group_lines) == expected
