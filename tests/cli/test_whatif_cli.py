"""`rebalance-replay whatif`: the verb's options and one-line errors (no Spark needed: checked before
Spark starts), and one run on the packaged sample that prints the comparison and writes the report."""

from __future__ import annotations

import datetime as dt

import pytest

from jobs.cli import build_parser
from jobs.cli import main as cli_main
from jobs.report import Segment, build_report, ownership_segments, print_comparison, write_report
from jobs.whatif import DEFAULT_SCENARIOS, load_scenarios


def test_the_verb_is_registered_with_its_own_scenario_option():
    args = build_parser().parse_args(["whatif", "--scenario", "a", "--scenario", "b", "--date", "2024-11-08"])
    assert args.scenario_names == ["a", "b"] and args.scenario is None and args.date == dt.date(2024, 11, 8)


def test_default_scenarios_are_conf_whatif_yaml():
    assert DEFAULT_SCENARIOS.name == "whatif.yaml"
    assert load_scenarios(None, ["consumer-protocol"]).scenarios[0].protocol == "consumer"


@pytest.mark.parametrize(
    "extra, message",
    [
        (["--scenario", "nope"], "unknown scenario(s) nope"),
        (["--scenarios", "/nonexistent/w.yaml"], "what-if file not found"),
        (["--date", "2024-11-08", "--from", "2024-11-08"], "give --date or --from/--to"),
    ],
)
def test_bad_options_are_one_line_errors_with_exit_status_2(extra, message, capsys):
    assert cli_main(["whatif", *extra]) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1


def test_a_what_if_file_with_a_bad_scenario_names_the_file(tmp_path, capsys):
    bad = tmp_path / "w.yaml"
    bad.write_text("scenarios:\n  - {name: x, protocol: fancy}\n")
    assert cli_main(["whatif", "--scenarios", str(bad)]) == 2
    assert f"{bad}: scenario 'x': protocol must be one of" in capsys.readouterr().err


def test_report_without_spark(tmp_path):
    """The report's pure part: totals, the best scenario, ownership segments, the terminal and HTML."""
    day = dt.date(2024, 11, 8)
    row = {"cluster": "k", "group_id": "g", "event_date": day}
    values = {"rebalances": (3, 3), "stw_ms": (900, 0), "partition_unavailable_ms": (5000, 1200),
              "partitions_moved": (4, 2), "revocations_wasted": (6, 0)}  # fmt: skip
    comparison = [
        {**row, "scenario": "coop", **{f"{k}_{s}": v for k, (a, b) in values.items() for s, v in (("actual", a), ("scenario", b), ("delta", b - a))}},
        {**row, "scenario": "broken", **{f"{k}_{s}": (a if s == "actual" else None) for k, (a, _b) in values.items() for s in ("actual", "scenario", "delta")}},
    ]  # fmt: skip
    move = {"cluster": "k", "group_id": "g", "scenario": "actual", "topic": "t", "partition": 0,
            "from_member_id": "c1-0f9eb754-e6b4-47b5-954d-3cfa09d53bcd", "to_member_id": "c2-7dfd6962-b848-4383-a596-82f349150d56",
            "revoked_at": 10_000, "assigned_at": 15_000}  # fmt: skip
    report = build_report("r1", day, day, ("coop", "broken"), comparison, movements=[move])
    (g,) = report.groups
    assert g.totals["actual"]["stw_ms"] == 900 and g.totals["broken"]["stw_ms"] is None and g.best == "coop"
    # c1 (its UUID dropped) until the revocation, nobody for 5 s, then c2
    segments = g.ownership["actual"]
    assert [s.owner for s in segments] == ["c1", None, "c2"] and segments[1] == Segment(
        "t-0", None, 10_000, 15_000
    )
    assert ownership_segments([move], [])[("k", "g", "actual")] == segments
    from rich.console import Console

    console = Console(record=True, width=120)
    print_comparison(console, report)
    text = console.export_text()
    assert "coop *" in text and "n/a" in text and "-900ms" in text
    page = write_report(tmp_path, report)
    assert "coop (best)" in page.read_text() and (page.parent / "group-01.png").stat().st_size > 0


def test_the_report_ranks_no_scenario_of_a_group_that_fails_the_model_check():
    day = dt.date(2024, 11, 8)
    row = {"cluster": "k", "group_id": "g", "event_date": day, "model_check": "failed",
           "model_check_detail": "rebalances 2 actual vs 0 as-actual"}  # fmt: skip
    measures = ("rebalances", "stw_ms", "partition_unavailable_ms", "partitions_moved", "revocations_wasted")
    comparison = [
        {**row, "scenario": name, **{f"{k}_{s}": v for k in measures for s, v in (("actual", 900), ("scenario", would), ("delta", would - 900))}}
        for name, would in (("as-actual", 0), ("coop", 100))
    ]  # fmt: skip
    note = {"cluster": "k", "group_id": "g", "scenario": "coop", "rule": "whatif_model_check_failed",
            "detail": "model check failed: rebalances 2 actual vs 0 as-actual"}  # fmt: skip
    report = build_report(
        "r1", day, day, ("as-actual", "coop"), comparison, notes=[note], baselines={"as-actual"}
    )
    (g,) = report.groups
    assert g.best is None
    assert g.notes == ["model check failed, scenarios not ranked: rebalances 2 actual vs 0 as-actual"]


def test_the_report_says_a_group_is_not_comparable_and_ranks_nothing_while_a_passed_check_is_shown():
    day = dt.date(2024, 11, 8)
    measures = ("rebalances", "stw_ms", "partition_unavailable_ms", "partitions_moved", "revocations_wasted")
    why = "the coordinator counts 2 members at 2024-11-08T10:00:03.001Z where the input names 1"
    comparison = [
        {"cluster": "k", "group_id": group, "event_date": day, "scenario": name, "model_check": status,
         "model_check_detail": detail,
         **{f"{k}_{s}": v for k in measures for s, v in (("actual", 900), ("scenario", would), ("delta", would - 900))}}
        for group, status, detail in (("g", "not_comparable", why), ("h", "passed", None))
        for name, would in (("as-actual", 900), ("coop", 100))
    ]  # fmt: skip
    report = build_report("r1", day, day, ("as-actual", "coop"), comparison, baselines={"as-actual"})
    groups = {g.group_id: g for g in report.groups}
    assert groups["g"].best is None and groups["h"].best == "coop"
    assert groups["g"].notes == [f"model check not comparable: {why}; scenarios not ranked"]
    from rich.console import Console

    console = Console(record=True, width=200)
    print_comparison(console, report)
    text = console.export_text()
    assert "model check (as-actual vs actual): passed" in text and f"not comparable: {why}" in text


@pytest.mark.spark
def test_a_run_on_the_sample_prints_the_comparison_and_writes_the_report(spark, tmp_path, capsys):
    status = cli_main(
        [
            "whatif",
            "--warehouse",
            str(tmp_path / "wh"),
            "--scenario",
            "cooperative-sticky",
            "--date",
            "2024-11-08",
        ]
    )
    assert status == 0
    out = capsys.readouterr().out
    assert "what-if prod-eu/orders" in out and "cooperative-sticky" in out
    pages = list((tmp_path / "wh" / "_reports").glob("whatif-*/index.html"))
    assert len(pages) == 1 and "prod-eu/orders" in pages[0].read_text()


def test_an_actual_the_replay_does_not_know_is_unknown_in_the_report_not_0(tmp_path):
    """A broker-only day with unknown owners has null partition measures (docs/metrics.md): the report's
    actual total is unknown, the scenario shows no change against it, and the chart draws no bar."""
    day = dt.date(2024, 11, 8)
    row = {"cluster": "k", "group_id": "g", "event_date": day, "scenario": "coop"}
    values = {"rebalances": (3, 3), "stw_ms": (None, 0), "partition_unavailable_ms": (None, 1200),
              "partitions_moved": (None, 2), "revocations_wasted": (None, 0)}  # fmt: skip
    comparison = [
        {**row, **{f"{k}_{s}": v for k, (a, b) in values.items() for s, v in (("actual", a), ("scenario", b), ("delta", None if a is None else b - a))}},
    ]  # fmt: skip
    report = build_report("r1", day, day, ("coop",), comparison, movements=[])
    (g,) = report.groups
    assert g.totals["actual"]["stw_ms"] is None and g.totals["actual"]["rebalances"] == 3
    assert g.best is None  # nothing known to be better than
    from rich.console import Console

    console = Console(record=True, width=120)
    print_comparison(console, report)
    text = console.export_text()
    assert "n/a" in text and "coop *" not in text
    page = write_report(tmp_path, report)
    assert page.exists()
