"""What a run does about a run that did not finish (its run_accounting record still says 'writing'):
completes it when it rewrites all it wrote (its dates and scenarios), refuses to start when it would
read the group states it left half-written or replace part of its record, leaves others alone."""

from __future__ import annotations

import datetime as dt

import pytest

from jobs.run_state import Unfinished, judge

NOV = [dt.date(2024, 11, d) for d in (8, 9, 10)]


def unfinished(dates, scenario="actual", scenarios=("actual",)) -> Unfinished:
    return Unfinished("r1", scenario, list(dates), scenarios, None, ["events"])


@pytest.mark.parametrize(
    ("run_dates", "this_run", "verdict"),
    [
        ((NOV[0],), (NOV[0], NOV[0]), "completing"),  # the same date: rewrites all it wrote
        ((NOV[0],), (NOV[0], NOV[1]), "completing"),  # a wider run covers it
        ((NOV[0], NOV[1]), (NOV[1], NOV[1]), "blocking"),  # would replace its record of one date only
        ((NOV[0],), (NOV[1], NOV[1]), "blocking"),  # would start from group states it left half-written
        ((NOV[1],), (NOV[0], NOV[0]), "elsewhere"),  # an earlier date does not depend on it
    ],
)
def test_a_run_completes_an_unfinished_run_it_covers_and_refuses_one_it_builds_on(
    run_dates, this_run, verdict
):
    found = unfinished(run_dates)
    judged = judge([found], "actual", ("actual",), *this_run)
    assert getattr(judged, verdict) == [found]


def test_another_scenarios_unfinished_run_is_left_alone_and_a_what_if_run_needs_its_scenarios():
    other = unfinished([NOV[0]], scenario="cooperative", scenarios=("cooperative",))
    assert judge([other], "actual", ("actual",), NOV[0], NOV[2]).elsewhere == [other]
    whatif = unfinished([NOV[0]], scenarios=("actual", "cooperative"))
    assert judge([whatif], "actual", ("actual",), NOV[0], NOV[0]).blocking == [whatif]
    assert judge([whatif], "actual", ("actual", "cooperative"), NOV[0], NOV[0]).completing == [whatif]
