"""Shared fixtures. `spark` is the suite's ONE SparkSession (starting Spark costs seconds): local[2],
UI off, 2 shuffle partitions, built by the jobs' own session builder. Tests that use it are slow-ish;
mark them `@pytest.mark.spark` (tests/spark does it for its whole folder). Tests marked `cluster`
(Spark's local-cluster master: minutes each) run only with `pytest --cluster`.

Hypothesis runs derandomized by default (profile `suite`): the suite is deterministic, so CI and a fresh
clone see the same examples and a red run is never a new random draw. `HYPOTHESIS_PROFILE=explore` draws
fresh examples (and keeps failures in `.hypothesis/`) to search for bugs; a failure found that way becomes
a named regression test."""

from __future__ import annotations

import os

import pytest
from hypothesis import HealthCheck, settings

# The suite asserts behaviour, never speed: Hypothesis' timing checks (the per-example deadline and the
# "input generation is slow" health check) are off, so a loaded machine cannot turn a run red.
settings.register_profile(
    "suite",
    derandomize=True,
    database=None,
    print_blob=True,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.register_profile("explore", print_blob=True)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "suite"))


def pytest_addoption(parser):
    parser.addoption(
        "--cluster", action="store_true", help="also run the tests marked cluster (local-cluster master)"
    )


def pytest_collection_modifyitems(config, items):
    if config.getoption("--cluster"):
        return
    skip = pytest.mark.skip(reason="local-cluster run (minutes): pass --cluster")
    for item in items:
        if item.get_closest_marker("cluster"):
            item.add_marker(skip)


@pytest.fixture(scope="session")
def spark():
    from jobs.config import SparkOptions
    from jobs.spark_session import get_spark

    session = get_spark(
        SparkOptions(master="local[2]", shuffle_partitions=2), app_name="rebalance-replay-tests"
    )
    yield session
    session.stop()
