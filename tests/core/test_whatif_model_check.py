"""The what-if model check (rebalance_core.whatif.compare.model_check) on measures the actual replay
does not know: a null total (no line shows who owned what) is left out of the check and never read as 0."""

from __future__ import annotations

from rebalance_core.whatif.compare import FAILED, NOT_COMPARABLE, PASSED, compare_daily, model_check


def daily(**measures):
    row = {
        "cluster": "c",
        "group_id": "g",
        "event_date": "2024-11-05",
        "rebalances": 2,
        "generations": 2,
        "partitions_moved": 3,
        "partitions_revoked": 3,
        "revocations_wasted": 0,
        "stw_ms": 100,
        "partition_unavailable_ms": 900,
    }
    row.update(measures)
    return row


def test_equal_known_measures_pass():
    assert model_check([daily()], [daily(stw_ms=120)]).status == PASSED


def test_a_measure_the_actual_replay_does_not_know_is_named_as_not_checked_never_compared_as_0():
    unknown = dict(stw_ms=None, partition_unavailable_ms=None, partitions_moved=None)
    check = model_check([daily(**unknown), daily()], [daily(), daily()])
    assert check.status == PASSED
    assert check.detail.startswith("not checked: partitions_moved, stw_ms, partition_unavailable_ms")


def test_a_known_measure_that_differs_still_fails_beside_unknown_ones():
    check = model_check([daily(stw_ms=None, rebalances=2)], [daily(rebalances=3)])
    assert check.status == FAILED and "rebalances 2 actual vs 3 as-actual" in check.detail


BOUND = "X's state line at epoch 5 is not in the input: the actual's partition times are upper bounds"


def test_a_measure_whose_actual_is_a_bound_is_left_out_and_the_group_is_not_comparable_with_the_reason():
    check = model_check(
        [daily(partition_unavailable_ms=90_000)],
        [daily()],
        incomparable=[("partition_unavailable_ms", BOUND)],
    )
    assert check.status == NOT_COMPARABLE
    assert check.detail == f"not comparable: partition_unavailable_ms: {BOUND}"


def test_the_measures_still_comparable_beside_a_bound_must_agree():
    check = model_check(
        [daily(partition_unavailable_ms=90_000, rebalances=1)],
        [daily()],
        incomparable=[("partition_unavailable_ms", BOUND)],
    )
    assert check.status == FAILED and check.detail == "rebalances 1 actual vs 2 as-actual"


def test_a_kip848_input_opening_at_a_target_and_missing_a_state_line_names_both_reasons():
    """06 (3.8 broker excerpt): its first line is epoch 4's target (the bump's cause is before the input),
    and gjWz's epoch-6 line says previousEpoch=5 while no epoch-5 line of gjWz is in the input."""
    from rebalance_core.whatif import TimelineExtractor
    from rebalance_core.whatif.config import ExtractionOptions
    from tests.logs.kafka_log_fixtures import REAL_LOGS, parse_fixture

    (path,) = [p for p in REAL_LOGS if p.name.startswith("06_")]
    extractor = TimelineExtractor("test", "avro-consumer2", ExtractionOptions())
    extractor.feed(parse_fixture(path).events)
    reasons = dict(extractor.finish().incomparable)
    assert "previousEpoch=5" in reasons["partition_unavailable_ms"] == reasons["generations"]
    assert "epoch 4's target assignment, bumped for a cause in no line" in reasons["partitions_moved"]


def test_comparison_rows_keep_an_unknown_actual_null_with_a_null_delta():
    (row,) = compare_daily("c", "g", "eager", [daily(stw_ms=None)], [daily(stw_ms=40)])
    assert (row["stw_ms_actual"], row["stw_ms_scenario"], row["stw_ms_delta"]) == (None, 40, None)
    assert row["partitions_moved_delta"] == 0


def test_a_rebalance_the_input_leaves_open_matches_one_the_as_actual_completes_after_the_input():
    # the input stops between "Stabilized" and the leader's SyncGroup: the actual replay leaves the
    # episode open, the as-actual (simulated until the group settles) completes it after the last line
    actual = daily(rebalances=1, rebalances_open=1, stw_ms=100, partitions_moved=3)
    as_actual = daily(rebalances=2, stw_ms=180, partitions_moved=5)
    after = {"started_at": 2_000, "stabilized_at": 9_000, "stw_ms": 80, "partitions_moved": 2}
    assert model_check([actual], [as_actual], completed_after_input=[after]).status == PASSED
    # without it, or when the actual saw every rebalance complete, the extra one still fails the check
    assert model_check([actual], [as_actual]).status == FAILED
    closed = daily(rebalances=1, stw_ms=100, partitions_moved=3)
    check = model_check([closed], [as_actual], completed_after_input=[after])
    assert check.status == FAILED and "rebalances 1 actual vs 2 as-actual" in check.detail
