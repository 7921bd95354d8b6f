"""`rebalance-replay report`: the summary of an existing warehouse reprinted without Spark, its date,
group and scenario selection, one-line errors, and the HTML report's pages."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from jobs.cli import main as cli_main
from tests.cli.report_warehouse import LONG_GROUP, build_warehouse


@pytest.fixture(scope="module")
def warehouse(tmp_path_factory) -> Path:
    return build_warehouse(tmp_path_factory.mktemp("report") / "warehouse")


@pytest.fixture(scope="module")
def explained(tmp_path_factory) -> Path:
    """A warehouse whose rows carry episode causes and a rebalance_incidents table."""
    return build_warehouse(tmp_path_factory.mktemp("report") / "explained", with_causes=True)


@pytest.fixture(autouse=True)
def terminal_100_columns(monkeypatch):
    monkeypatch.setenv("COLUMNS", "100")  # rich's width when not on a terminal


def report(capsys, *args) -> str:
    assert cli_main(["report", *map(str, args)]) == 0
    return capsys.readouterr().out


def group_order(text: str) -> list[str]:
    """The groups of the summary's first table, in order."""
    return re.findall(r"^(prod/\S+)", text.split("worst rebalances")[0], flags=re.M)


def test_the_summary_is_reprinted_without_starting_spark(warehouse):
    code = (
        "import sys; from jobs.cli import main; "
        f"status = main(['report', '--warehouse', {str(warehouse)!r}]); "
        "assert 'pyspark' not in sys.modules, 'report imported pyspark'; sys.exit(status)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=_wide())
    assert done.returncode == 0, done.stderr
    assert "Rebalances by partition-unavailable time" in done.stdout


def test_groups_come_worst_first_and_a_what_if_scenario_is_not_counted(warehouse, capsys):
    text = report(capsys, "--warehouse", warehouse)
    first, long_name, last = group_order(text)
    assert (first, last) == ("prod/orders", "prod/broker-only")  # unknown unavailable time: last
    assert long_name.startswith("prod/orders-enrich") and long_name.endswith("eager") and "…" in long_name
    orders = next(line for line in text.splitlines() if line.startswith("prod/orders "))
    assert "2/0" in orders and "2.0m" in orders  # 90 s + 30 s over both days; not the what-if's rows


def test_date_selects_that_days_rows(warehouse, capsys):
    text = report(capsys, "--warehouse", warehouse, "--date", "2024-11-08")
    orders = next(line for line in text.splitlines() if line.startswith("prod/orders "))
    assert "1/0" in orders and "1.5m" in orders
    assert "prod/broker-only" not in text  # its rebalance is on the 9th
    text = report(capsys, "--warehouse", warehouse, "--from", "2024-11-09", "--to", "2024-11-09")
    assert "30.0s" in text and "1.5m" not in text


def test_group_selects_one_group_by_id_or_cluster_and_id(warehouse, capsys):
    for name in ("orders", "prod/orders"):
        text = report(capsys, "--warehouse", warehouse, "--group", name)
        assert set(group_order(text)) == {"prod/orders"}


def test_broker_only_group_without_partition_counts_is_said_once(warehouse, capsys):
    text = report(capsys, "--warehouse", warehouse)
    assert sum("replay.topics" in line for line in text.splitlines()) == 1


def test_a_warehouse_with_causes_shows_top_cause_and_triggers(explained, capsys):
    text = report(capsys, "--warehouse", explained)
    assert "top cause" in text and "session_timeout" in text and "orders-2" in text


def test_the_conf_names_the_warehouse(warehouse, tmp_path, capsys):
    conf = tmp_path / "conf.yaml"
    conf.write_text(f"warehouse: {warehouse}\n")
    assert "prod/orders" in report(capsys, "--conf", conf)


@pytest.mark.parametrize(
    "args, message",
    [
        (["--warehouse", "/nonexistent/wh"], "no warehouse at /nonexistent/wh"),
        (["--warehouse", "catalog.schema"], "is a metastore schema"),
        (["--date", "2024-11-08", "--from", "2024-11-08"], "give --date or --from/--to"),
        (["--from", "2024-11-09", "--to", "2024-11-08"], "is after --to"),
    ],
)
def test_bad_options_are_one_line_errors_with_exit_status_2(args, message, capsys):
    assert cli_main(["report", *args]) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1


def test_a_folder_that_is_no_warehouse_is_a_one_line_error(tmp_path, capsys):
    assert cli_main(["report", "--warehouse", str(tmp_path)]) == 2
    assert "no group_daily_summary table" in capsys.readouterr().err


def test_html_report_links_a_page_per_group_and_holds_its_pictures_inline(warehouse, tmp_path, capsys):
    out = tmp_path / "html"
    text = report(capsys, "--warehouse", warehouse, "--html", out)
    assert f"wrote {out / 'index.html'}" in text.replace("\n", "")
    index = (out / "index.html").read_text()
    pages = re.findall(r'href="(group-\d+\.html)"', index)
    assert sorted(set(pages)) == sorted(p.name for p in out.glob("group-*.html")) and len(set(pages)) == 3
    assert "http://" not in index.replace('xmlns="http://www.w3.org/2000/svg"', "")  # nothing fetched
    assert "rebalances per group per hour" in _pictures(index)
    assert "Incidents" not in index  # no rebalance_incidents table in this warehouse
    orders = (out / pages[0]).read_text()
    pictures = _pictures(orders)
    assert "ownership" in pictures and "stop-the-world per rebalance (seconds)" in pictures
    assert "rebalances by the reason Kafka logged" in pictures
    assert LONG_GROUP not in index.split("<body>")[1].split('title="')[0]  # shortened where shown


def test_html_report_shows_incidents_and_causes_when_the_warehouse_has_them(explained, tmp_path, capsys):
    out = tmp_path / "html"
    report(capsys, "--warehouse", explained, "--html", out)
    index = (out / "index.html").read_text()
    assert "Incidents" in index and "coordinator_move" in _pictures(index)
    assert "rebalances by cause" in _pictures((out / "group-001.html").read_text())


def _pictures(page: str) -> str:
    """The SVG markup of a page's images (base64 data URIs), decoded."""
    import base64

    return "".join(
        base64.b64decode(data).decode()
        for data in re.findall(r'src="data:image/svg\+xml;base64,([^"]+)"', page)
    )


def _wide() -> dict:
    import os

    return {**os.environ, "COLUMNS": "100"}


def test_only_the_worst_groups_get_a_page_and_the_index_lists_every_group(monkeypatch, tmp_path):
    import jobs.report_html as report_html
    from jobs.summary import build_summary

    monkeypatch.setattr(report_html, "MAX_GROUP_PAGES", 2)
    daily = [
        {
            "cluster": "c",
            "group_id": f"g{i}",
            "rebalances": 1,
            "partition_unavailable_ms": i * 1000,
            "stw_ms": 0,
        }
        for i in range(3)
    ]
    summary = build_summary(daily, [])
    index = report_html.write_html(tmp_path, report_html.ReportData("t", summary, episodes=[])).read_text()
    assert sorted(p.name for p in tmp_path.glob("group-*.html")) == ["group-001.html", "group-002.html"]
    assert 'href="group-001.html" title="c/g2"' in index and "c/g0</span>" in index


def test_a_warehouse_mid_run_is_said_with_the_tables_ahead_in_text_and_html(tmp_path, capsys):
    """A run whose record still says 'writing' (it stopped between two commits; jobs.run_state) and
    that committed `events`: the summary and the HTML report say so before any figure."""
    import datetime as dt
    import json

    import pyarrow as pa
    from deltalake import CommitProperties, write_deltalake

    from schemas.fields import arrow_schema
    from schemas.tables import TABLES

    root = build_warehouse(tmp_path / "warehouse")
    dead = CommitProperties(custom_metadata={"userMetadata": json.dumps({"run_id": "r-dead"})})
    record = {"run_id": "r-dead", "scenario": "actual", "event_date": dt.date(2024, 11, 9), "read": 1,
              "replayed": 1, "quarantined": 0, "duplicates": 0, "skipped": 0, "status": "writing"}  # fmt: skip
    for table, rows in (("run_accounting", [record]), ("events", [])):
        data = pa.Table.from_pylist(rows, schema=arrow_schema(TABLES[table]))
        write_deltalake(str(root / table), data, partition_by=["event_date"], commit_properties=dead)

    text = report(capsys, "--warehouse", root, "--html", tmp_path / "html")

    said = "run r-dead on 2024-11-09 (scenario actual) did not finish; tables ahead: events"
    assert (
        text.splitlines()[1]
        == f"warehouse mid-run: the {said}; the other tables hold the previous run's rows"
    )
    assert f"<b>Warehouse mid-run:</b> the {said};" in (tmp_path / "html" / "index.html").read_text()


def test_a_warehouse_whose_runs_all_finished_says_nothing_of_it(warehouse, capsys):
    assert "mid-run" not in report(capsys, "--warehouse", warehouse)
