"""The run summary (jobs.summary): rows of group_daily_summary and rebalance_episodes in, a table sorted
by what consumers felt out; no Spark."""

from __future__ import annotations

import io

from rich.console import Console

from jobs.summary import WIDTH, build_summary, print_summary, shorten_middle

T0 = 1_731_024_000_000  # 2024-11-08 00:00:00 UTC


def day(group, cluster="prod", **measures):
    row = {
        "cluster": cluster,
        "group_id": group,
        "rebalances": 1,
        "rebalances_open": 0,
        "rebalances_started_before_input": 0,
        "stw_ms": 0,
        "partition_unavailable_ms": 0,
        "partitions_moved": 0,
        "timing_source": "member",
    }
    row.update(measures)
    return row


def episode(group, start, cluster="prod", **fields):
    row = {
        "cluster": cluster,
        "group_id": group,
        "episode_id": f"{group}@{start}",
        "started_at": T0 + start,
        "stabilized_at": T0 + start + 3000,
        "rebalance_ms": 3000,
        "stw_ms": 0,
        "partition_unavailable_ms": 0,
        "reason": "member joined",
    }
    row.update(fields)
    return row


def rendered(summary, width=WIDTH) -> str:
    out = io.StringIO()
    print_summary(Console(file=out, width=width, color_system=None), summary)
    return out.getvalue()


def test_groups_are_sorted_by_partition_unavailable_time_not_stop_the_world():
    # the run: three groups tie at 74 ms of stop-the-world, the costliest for consumers is last
    summary = build_summary(
        [
            day("a", stw_ms=74, partition_unavailable_ms=6_600),
            day("b", stw_ms=74, partition_unavailable_ms=90_000),
            day("c", stw_ms=74, partition_unavailable_ms=95_000),
            day("d", stw_ms=0, partition_unavailable_ms=115_000),
        ],
        [],
    )
    assert [g.group_id for g in summary.groups] == ["d", "c", "b", "a"]


def test_days_add_up_per_group_and_the_longest_rebalance_comes_from_the_episodes():
    summary = build_summary(
        [
            day("g", rebalances=2, rebalances_open=1, stw_ms=10, partitions_moved=3),
            day("g", rebalances=1, rebalances_started_before_input=1, stw_ms=5, partitions_moved=2),
        ],
        [
            episode("g", 0, rebalance_ms=4000),
            episode("g", 60_000, rebalance_ms=9000),
            episode("g", 90_000, rebalance_ms=None),
        ],
    )
    (g,) = summary.groups
    assert (g.rebalances, g.rebalances_open, g.started_before_input) == (3, 1, 1)
    assert (g.stw_ms, g.partitions_moved, g.longest_rebalance_ms) == (15, 5, 9000)
    text = rendered(summary)
    assert "3/1" in text and "9.0s" in text
    assert "1 rebalances had begun before the input" in text


def test_long_group_names_are_shortened_in_the_middle_and_every_line_fits_100_columns():
    long_name = "orders-" + "x" * 120 + "-eager"
    summary = build_summary(
        [day(long_name, cluster="default", partition_unavailable_ms=1000)],
        [episode(long_name, 0, cluster="default", partition_unavailable_ms=1000, reason="y" * 200)],
    )
    text = rendered(summary)
    assert max(len(line) for line in text.splitlines()) <= WIDTH
    assert max(len(line) for line in rendered(summary, width=80).splitlines()) <= 80
    assert "default/orders-x" in text and "x-eager" in text and "…" in text
    assert shorten_middle("default/orders-eager", 12) == "defaul…eager"
    assert shorten_middle("short", 12) == "short"


def test_the_five_worst_episodes_by_partition_unavailable_time_with_cause_and_trigger():
    episodes = [
        episode(
            "g",
            i * 60_000,
            partition_unavailable_ms=i * 1000,
            cause="session_timeout" if i == 7 else "member_joined",
            cause_raw_reason="removing member c-1 on heartbeat expiration",
            trigger_member_id="consumer-1-5f2c2f0e-7d55-4a59-9d1e-3c4b2a1f0e9d",
            trigger_client_id="consumer-1" if i == 7 else None,
            trigger_host="/10.0.0.7" if i == 7 else None,
        )
        for i in range(8)
    ]
    daily = [day("g", rebalances=8, causes={"member_joined": 7, "session_timeout": 1})]
    summary = build_summary(daily, episodes)
    assert [e.partition_unavailable_ms for e in summary.worst] == [7000, 6000, 5000, 4000, 3000]
    worst = summary.worst[0]
    assert (worst.cause, worst.trigger) == ("session_timeout", "consumer-1@/10.0.0.7")
    assert summary.worst[1].trigger == "consumer-1"  # the member id without Kafka's UUID suffix
    assert summary.groups[0].top_cause == "member_joined"
    text = rendered(summary)
    assert "top cause" in text and "session_timeout" in text and "trigger" in text


def test_rows_without_cause_columns_give_a_summary_without_causes_showing_the_logged_reason():
    summary = build_summary([day("g")], [episode("g", 0, partition_unavailable_ms=5, reason="member left")])
    assert not summary.with_causes and summary.groups[0].top_cause is None
    text = rendered(summary)
    assert "top cause" not in text and "reason logged" in text and "member left" in text


def test_null_causes_of_rows_written_before_causes_existed_give_no_cause_column():
    summary = build_summary([day("g", causes=None)], [episode("g", 0, cause=None, trigger_member_id=None)])
    assert not summary.with_causes
    assert "reason logged" in rendered(summary)


def test_causes_read_back_from_arrow_as_key_value_pairs_count():
    summary = build_summary([day("g", causes=[("leader_rejoined", 2), ("member_left", 1)])], [])
    assert summary.groups[0].top_cause == "leader_rejoined"


def test_broker_only_groups_without_partition_counts_are_named_once_with_the_setting():
    summary = build_summary(
        [day("broker-only", timing_source="coordinator"), day("with-clients", partition_unavailable_ms=10)],
        [episode("broker-only", 0, timing_source="coordinator")],
        assigned_groups={("prod", "with-clients")},
    )
    unknown = next(g for g in summary.groups if g.group_id == "broker-only")
    assert unknown.partition_unavailable_ms is None and unknown.partitions_moved is None
    assert unknown.stw_ms is None  # no partition known to be consumed: no stop-the-world either
    assert summary.groups[-1] is unknown  # unknown is not "least"
    assert summary.no_partition_counts == ["prod/broker-only"]
    lines = [line for line in rendered(summary).splitlines() if "replay.topics" in line]
    assert len(lines) == 1 and "without partition counts" in lines[0]


def test_broker_only_groups_whose_assignment_was_inferred_are_not_flagged():
    summary = build_summary([day("g", timing_source="coordinator")], [], assigned_groups={("prod", "g")})
    assert summary.no_partition_counts == [] and summary.groups[0].partition_unavailable_ms == 0


def test_a_group_without_coordinator_timed_rebalances_is_not_called_broker_only():
    summary = build_summary([day("quiet", rebalances=0, timing_source=None)], [], assigned_groups=set())
    assert summary.no_partition_counts == [] and summary.groups[0].stw_ms == 0


def test_no_rows_says_so_in_one_line():
    assert rendered(build_summary([], [])).strip() == "No rebalance recorded for these dates."


def test_a_day_whose_owners_were_unknown_makes_the_groups_partition_totals_unknown_not_zero():
    # group_daily_summary nulls the partition measures of a day with an episode of unknown owners
    # (docs/metrics.md, "Unknown owners"): the run's total over the days is unknown too
    summary = build_summary(
        [
            day("g", stw_ms=10, partition_unavailable_ms=500, partitions_moved=2),
            day("g", stw_ms=None, partition_unavailable_ms=None, partitions_moved=None),
        ],
        [episode("g", 0, stw_ms=None, partition_unavailable_ms=None)],
    )
    (g,) = summary.groups
    assert (g.stw_ms, g.partition_unavailable_ms, g.partitions_moved) == (None, None, None)
    assert summary.worst[0].stw_ms is None
