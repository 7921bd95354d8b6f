"""Shared fixtures. `spark` is the suite's ONE SparkSession (starting Spark costs seconds): local[2],
UI off, 2 shuffle partitions, built by the jobs' own session builder. Tests that use it are slow-ish;
mark them `@pytest.mark.spark` (tests/spark does it for its whole folder)."""

from __future__ import annotations

import pytest


@pytest.fixture(scope="session")
def spark():
    from jobs.config import SparkOptions
    from jobs.spark_session import get_spark

    session = get_spark(
        SparkOptions(master="local[2]", shuffle_partitions=2), app_name="rebalance-replay-tests"
    )
    yield session
    session.stop()
