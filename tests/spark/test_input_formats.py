"""Parquet and Delta inputs (JSON lines is the other tests' input): a Delta table in the event schema
replays every event; a Parquet export whose columns have other types is cast to the event schema,
and a value that does not fit is quarantined with the column's name."""

from __future__ import annotations

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from deltalake import write_deltalake

from jobs.delta_io import open_warehouse, read_table
from schemas.events import event_arrow_schema
from tests.core import replay_scenarios as scenarios
from tests.spark.helpers import assert_same_rows, run_job

pytestmark = pytest.mark.spark


def test_parquet_and_delta_inputs(spark, tmp_path):
    events = scenarios.cooperative_two_rounds()
    canonical = pa.Table.from_pylist([e.to_row() for e in events], schema=event_arrow_schema())
    write_deltalake(str(tmp_path / "delta-input"), canonical)
    # A Parquet export with looser types: ts as ISO text, generation_id as text (one value is not a number).
    loose = canonical.set_column(
        canonical.schema.get_field_index("ts"), "ts", pa.array([e.to_json_dict()["ts"] for e in events])
    )
    generations = [None if g is None else str(g) for g in canonical.column("generation_id").to_pylist()]
    generations[1] = "two"
    loose = loose.set_column(
        loose.schema.get_field_index("generation_id"), "generation_id", pa.array(generations)
    )
    (tmp_path / "parquet-input").mkdir()
    pq.write_table(loose, tmp_path / "parquet-input" / "part-0.parquet")

    runs = {
        "delta": run_job(spark, tmp_path / "delta-input", tmp_path / "wh-delta"),
        "parquet": run_job(spark, tmp_path / "parquet-input", tmp_path / "wh-parquet"),
    }
    assert {name: result.input_format for name, result in runs.items()} == {n: n for n in runs}
    assert (runs["delta"].total.replayed, runs["delta"].total.quarantined) == (len(events), 0)
    assert (runs["parquet"].total.replayed, runs["parquet"].total.quarantined) == (len(events) - 1, 1)

    def table(name, run):
        return read_table(spark, open_warehouse(spark, str(tmp_path / f"wh-{run}")), name)

    assert_same_rows(
        table("events", "parquet"), table("events", "delta").where(f"event_id != '{events[1].event_id}'")
    )
    (reason,) = [r.reason for r in table("quarantine", "parquet").collect()]
    assert reason == "value of the wrong type in: generation_id"
