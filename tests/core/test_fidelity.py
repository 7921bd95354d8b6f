"""The fidelity matrix on a fast subset: the fixed cases (conf/simulations, the writer tests' timelines),
30 seeded random workloads and 6 fleet groups, every view of them (the canonical events, each broker
wording era alone, the consumers' logs alone, both), replayed and compared with the simulator's truth
(benchmarks/fidelity.py; the full run and its matrix: docs/fidelity.md).

Asserted per (protocol, view, measure) where the view carries the information (`fidelity.carries`):
nothing silently wrong, i.e. every group exact, or flagged by the replay (null, inferred, a
coordinator-timed bound, a generation no line of the view shows). Outcomes the simulator itself calls
unobservable from the events are left out. Cells that fail today are expected failures naming what is
wrong; they turn into passes (XPASS) as the fixes land. Every view's log must parse without quarantine.
"""

from __future__ import annotations

import dataclasses
import itertools
from collections import defaultdict

import pytest

from benchmarks import fidelity as f
from rebalance_core.events import Event, TopicPartition

CASES = [c for c in f.case_ids(random_count=30, fleet_count=6) if not c.startswith("hand:")]
SECTIONS = ("classic", "consumer")

# (section, views, measures, why they fail today on these cases; the full run finds more: docs/fidelity.md)
KNOWN: list[tuple[str, tuple[str, ...], tuple[str, ...], str]] = []


def _known(section: str, view: str, measure: str) -> str | None:
    for known_section, views, measures, reason in KNOWN:
        if section == known_section and view in views and measure in measures:
            return reason
    return None


def _cells():
    for section in SECTIONS:
        consumer = section == "consumer"
        for view in f.VIEWS:
            if not view.applies(consumer):
                continue
            for measure in f.MEASURES:
                if not f.carries(view, measure, consumer):
                    continue
                reason = _known(section, view.name, measure)
                marks = [pytest.mark.xfail(reason=reason, strict=False)] if reason else []
                yield pytest.param(
                    section, view.name, measure, marks=marks, id=f"{section}-{view.name}-{measure}"
                )


@pytest.fixture(scope="module")
def rows() -> list[f.Row]:
    return f.run_cases(CASES)


@pytest.mark.parametrize(("section", "view", "measure"), list(_cells()))
def test_nothing_silently_wrong_where_the_view_carries_it(rows, section, view, measure):
    wrong = [
        r
        for r in rows
        if f.section_of(r) == section
        and r.view == view
        and r.measure == measure
        and r.cls == f.WRONG
        and not r.unobservable
    ]
    assert not wrong, "\n".join(f"{r.case_id}: {r.detail}" for r in wrong[:5])


def test_every_case_is_measured_in_every_view_that_applies(rows):
    """KIP-848 groups have no 0.10 or 2.x view; Connect worker groups (KIP-415, the `sessioned` and
    `compatible` protocols) have every classic view, their workers' logs in the Connect wording."""
    seen = {(r.case_id, r.view) for r in rows}
    cases = {c: f.build_case(c) for c in CASES}
    connect = {c for c, case in cases.items() if case.assignor in f.CONNECT_ASSIGNORS}
    expected = {
        (c, v.name) for c, case in cases.items() for v in f.VIEWS if v.applies(case.consumer_protocol)
    }
    assert {"sim:03_kip415_bounce", "sim:04_kip415_leaves", "sim:06_kip415_join"} <= connect
    assert any(c.startswith("random:") for c in connect)
    assert seen == expected


def test_identical_tables_compare_exact():
    case = f.build_case("sim:01_eager_join")
    outcomes = f.compare(case, f.VIEW_BY_NAME["events"], case.truth, case.truth)
    assert {o.cls for o in outcomes.values()} == {f.EXACT}


def test_a_number_without_any_assignment_behind_it_is_silently_wrong():
    """A replay that knows no assignment must say null, not 0 moves (issue 12 point 3)."""
    case = f.build_case("sim:01_eager_join")
    blind = {**case.truth, "assignments": [], "group_daily_summary": []}
    outcomes = f.compare(case, f.VIEW_BY_NAME["broker-2.x"], case.truth, blind)
    assert outcomes["moved"].cls == f.WRONG and "no assignment known" in outcomes["moved"].detail


def test_the_0_10_view_is_compared_with_the_history_as_0_10_numbers_it():
    """0.10.0 deletes an emptied group ("is dead and removed"): the emptied generation does not exist and
    the next group of that name counts from generation 0 again."""
    case = f.build_case("random:5")  # eager; its only member leaves on a poll timeout: the group empties
    observed = f.observe(case, f.VIEW_BY_NAME["broker-0.10"])
    truth = f.renumbered_truth(case.truth, observed.renumbering)
    assert observed.renumbering
    assert all(not g["ended_empty"] for g in truth["generations"])
    assert any("is dead and removed" in line.text for line in observed.lines)


def test_every_outcome_that_is_not_exact_names_its_kind(rows):
    unnamed = [r for r in rows if r.cls != f.EXACT and not r.mismatch]
    assert not unnamed, "\n".join(f"{r.case_id} {r.view} {r.measure}: {r.detail}" for r in unnamed[:5])


def test_the_rows_do_not_depend_on_the_number_of_processes():
    ids = ["sim:02_cooperative_join", "random:3", "random:4"]
    assert f.run_cases(ids, processes=1) == f.run_cases(ids, processes=2)


@pytest.mark.parametrize("built_before", [3, 9, 95, 998])
def test_a_hand_written_case_gives_the_same_rows_whatever_was_built_before_it(monkeypatch, built_before):
    """A process that ran other cases first (a pool worker, the matrix in another order) numbers a
    hand-written case's events from further on: its rows must not change (hand:static_restart's two
    joins of the same instant swapped when they were numbered e9 and e10, "e9" > "e10")."""
    from tests.core import replay_helpers

    for case_id in (c for c in f.case_ids(0, 0) if c.startswith("hand:")):
        monkeypatch.setattr(replay_helpers, "_ids", itertools.count())
        first = f.run_case(case_id)
        monkeypatch.setattr(replay_helpers, "_ids", itertools.count(built_before))
        assert f.run_case(case_id) == first, case_id


def test_a_null_total_is_flagged_not_wrong():
    """A replay that says it does not know a total (null) is flagged, as long as what it knows is not more
    than the truth."""
    case = f.build_case("sim:01_eager_join")
    summary = [{**r, "partitions_moved": None} for r in case.truth["group_daily_summary"]]
    outcomes = f.compare(
        case, f.VIEW_BY_NAME["broker-3.x"], case.truth, {**case.truth, "group_daily_summary": summary}
    )
    assert (outcomes["moved"].cls, outcomes["moved"].flag) == (f.FLAGGED, "null")


@pytest.mark.parametrize(
    ("truth_rounds", "replay_rounds", "kind"),
    [
        ([1, 2], [1, 1, 1], "rounds split into more rebalances"),
        ([1, 1, 1], [1, 2], "rebalances merged"),
        ([1, 1], [1], "missing rebalances"),
        ([1], [1, 1], "extra rebalances"),
        ([1, 1], [1, 2], "more rounds per rebalance"),
    ],
)
def test_a_rounds_mismatch_is_classified_by_how_the_episodes_differ(truth_rounds, replay_rounds, kind):
    case = f.build_case("sim:01_eager_join")

    def episodes(rounds):
        return [
            {
                "episode_id": f"e{i}",
                "started_at": i,
                "rounds": n,
                "first_generation_id": i,
                "last_generation_id": i,
            }
            for i, n in enumerate(rounds)
        ]

    truth = {**case.truth, "rebalance_episodes": episodes(truth_rounds)}
    replayed = {**case.truth, "rebalance_episodes": episodes(replay_rounds)}
    outcome = f.compare(case, f.VIEW_BY_NAME["broker-3.x"], truth, replayed)["rounds"]
    assert (outcome.cls, outcome.mismatch) == (f.WRONG, kind)


def test_the_report_tallies_each_mismatch_kind_with_an_example_case(rows):
    doc = f.render_doc(rows, "cmd")
    tallies = f.mismatch_tallies(rows)
    assert "## Mismatch kinds" in doc and tallies
    (view, measure, cls, kind), tally = next(iter(tallies.items()))
    assert f"| {measure} |" in doc and f"`{tally.example}`" in doc and kind in doc


def test_a_generation_the_replay_opened_twice_is_silently_wrong():
    case = f.build_case("sim:01_eager_join")
    first = case.truth["generations"][0]
    doubled = {**case.truth, "generations": case.truth["generations"] + [{**first, "members": []}]}
    outcome = f.compare(case, f.VIEW_BY_NAME["client-3.x"], case.truth, doubled)["generations"]
    assert (outcome.cls, outcome.mismatch) == (f.WRONG, "a generation in several rows")


def _episodes(spec):
    """Episodes from (started_at, rounds, source) triples."""
    return [
        {"episode_id": f"e{i}", "started_at": at, "rounds": n, "source": source}
        for i, (at, n, source) in enumerate(spec)
    ]


@pytest.mark.parametrize(
    ("replay_spec", "cls"),
    [
        # an observed episode that matches its truth between two inferred ones (random:81 broker-0.10)
        ([(0, 1, "observed"), (10, 2, "inferred"), (30, 1, "observed"), (40, 2, "inferred")], f.FLAGGED),
        # the coordinator dates an episode a little later than the members did: still the same one
        ([(0, 1, "observed"), (10, 2, "inferred"), (32, 1, "observed"), (40, 2, "inferred")], f.FLAGGED),
        # an observed episode that swallowed a rebalance it does not say it missed
        ([(0, 1, "observed"), (10, 2, "inferred"), (30, 2, "observed"), (50, 1, "observed")], f.WRONG),
        # a truth episode before every replayed one is missing, not inferred
        ([(10, 2, "inferred"), (30, 1, "observed"), (40, 2, "inferred")], f.WRONG),
    ],
)
def test_episodes_are_paired_with_the_truth_by_time_not_by_rounds(replay_spec, cls):
    case = f.build_case("sim:01_eager_join")
    truth_spec = [(0, 1, "observed"), (10, 1, "observed"), (20, 1, "observed"), (30, 1, "observed")]
    truth_spec += [(40, 1, "observed"), (50, 1, "observed")]
    truth = {**case.truth, "rebalance_episodes": _episodes(truth_spec)}
    replayed = {**case.truth, "rebalance_episodes": _episodes(replay_spec)}
    assert f._differing_episodes_inferred(truth, replayed, tolerance_ms=2) == (cls == f.FLAGGED)


def test_what_remains_shows_apart_what_the_view_cannot_know():
    """The summary separates replay bugs from outcomes the simulator calls unobservable (u)."""

    def row(case_id, unobservable):
        return f.Row(
            case_id, "random", False, "client-3.x", "stw_ms", f.WRONG, "", "", "missed", unobservable
        )

    lines = f.render_remaining([row("random:1", False), row("random:2", True), row("random:3", True)])
    assert "| view | measure | kind | groups | replay wrong | u | example |" in lines
    assert "| client-3.x | stw_ms | missed | 3 | 1 | 2 | `random:1` |" in lines


def test_assignment_rows_of_a_generation_whose_members_the_replay_does_not_know_are_flagged():
    """A replay that reports a generation's members null says who was in it is unknown: its rows there
    are the members the view showed (hand:static_restart, client logs of one process). Flagged when each
    row is the truth's; a row that differs stays silently wrong."""
    case = f.build_case("sim:01_eager_join")
    truth = case.truth
    gen = max(r["generation_id"] for r in truth["assignments"])
    kept = min(r["member_id"] for r in truth["assignments"] if r["generation_id"] == gen)
    partial = {
        **truth,
        "generations": [
            {**r, "members": None} if r["generation_id"] == gen else r for r in truth["generations"]
        ],
        "assignments": [
            r for r in truth["assignments"] if r["generation_id"] != gen or r["member_id"] == kept
        ],
    }
    outcomes = f.compare(case, f.VIEW_BY_NAME["client-3.x"], truth, partial)
    assert outcomes["assignments"].cls == f.FLAGGED
    moved = [
        {**r, "partition": r["partition"] + 100} if (r["generation_id"], r["member_id"]) == (gen, kept) else r
        for r in partial["assignments"]
    ]
    outcomes = f.compare(case, f.VIEW_BY_NAME["client-3.x"], truth, {**partial, "assignments": moved})
    assert outcomes["assignments"].cls == f.WRONG


# -- justified or over-cautious flags (`fidelity.stated_by`, `_mark_over_cautious`) ------------------------
def _entry(n, side, event_type, ts, **fields):
    return Event(f"e{n}", ts, "sim", "g", side, event_type, **fields)


def _null_members_of(truth: dict, generation: int) -> dict:
    return {
        **truth,
        "generations": [
            {**r, "members": None} if r["generation_id"] == generation else r for r in truth["generations"]
        ],
    }


def _last_generation(truth: dict) -> dict:
    return max((r for r in truth["generations"] if r["members"]), key=lambda r: r["generation_id"])


def _stabilized(gen: dict) -> Event:
    """The classic coordinator's "Stabilized group ... generation N ... with M members" (3.x+)."""
    at = gen["join_completed_at"] or gen["stabilized_at"]
    return _entry(
        99,
        "coordinator",
        "join_completed",
        at,
        generation_id=gen["generation_id"],
        member_count=len(gen["members"]),
    )


def test_classic_coordinator_lines_state_a_member_list_only_with_its_count():
    """A classic coordinator logs no line per member rejoining a join phase (only the member that triggers
    it, GroupCoordinator "Preparing to rebalance"): entries naming exactly the members, but neither counting
    nor listing them, leave a member of the previous generation unstated (hand:cooperative_two_rounds
    events-broker)."""
    case = f.build_case("sim:01_eager_join")
    gen = _last_generation(case.truth)
    named = [
        _entry(i, "coordinator", "join_received", gen["rebalance_started_at"], member_id=m)
        for i, m in enumerate(gen["members"])
    ]
    assert not f.stated_by(named, case.truth, False, case.slack_ms).states_members(
        gen["generation_id"], gen["members"]
    )
    assert f.stated_by([_stabilized(gen), *named], case.truth, False, case.slack_ms).states_members(
        gen["generation_id"], gen["members"]
    )


def test_a_null_member_list_is_over_cautious_when_each_member_wrote_a_line_of_that_generation():
    case = f.build_case("sim:01_eager_join")
    gen = _last_generation(case.truth)
    replayed = _null_members_of(case.truth, gen["generation_id"])
    entries = [
        _entry(
            i,
            "member",
            "join_response",
            gen["stabilized_at"],
            member_id=m,
            generation_id=gen["generation_id"],
        )
        for i, m in enumerate(gen["members"])
    ]
    view = f.VIEW_BY_NAME["client-3.x"]
    outcome = f.compare(case, view, case.truth, replayed, entries)["members"]
    assert (outcome.cls, outcome.over_cautious) == (f.FLAGGED, True)
    # one member wrote nothing in the view: the view cannot state the list, the null is justified
    outcome = f.compare(case, view, case.truth, replayed, entries[1:])["members"]
    assert (outcome.cls, outcome.over_cautious) == (f.FLAGGED, False)


def test_a_null_member_list_is_justified_when_the_lines_name_more_candidates_than_members():
    """The lines of a generation name every member and one more (a member removed in the join phase, or
    another that joined): which of them were in the generation is not stated, the null is justified."""
    case = f.build_case("sim:01_eager_join")
    gen = _last_generation(case.truth)
    replayed = _null_members_of(case.truth, gen["generation_id"])
    members = list(gen["members"]) + ["c9-0a1b2c3d-0000-4000-8000-000000000000"]
    entries = [
        _stabilized(gen),
        *(
            _entry(i, "coordinator", "join_received", gen["rebalance_started_at"], member_id=m)
            for i, m in enumerate(members)
        ),
    ]
    view = f.VIEW_BY_NAME["broker-3.x"]
    outcome = f.compare(case, view, case.truth, replayed, entries)["members"]
    assert (outcome.cls, outcome.over_cautious) == (f.FLAGGED, False)
    outcome = f.compare(case, view, case.truth, replayed, entries[:-1])["members"]
    assert (outcome.cls, outcome.over_cautious) == (f.FLAGGED, True)


def test_a_join_line_without_a_generation_names_its_member_for_the_generation_whose_join_phase_it_is_in():
    case = f.build_case("sim:01_eager_join")
    gen = _last_generation(case.truth)
    start = gen["rebalance_started_at"]
    inside = [
        _entry(i, "coordinator", "join_received", start, member_id=m) for i, m in enumerate(gen["members"])
    ]
    stated = f.stated_by([_stabilized(gen), *inside], case.truth, False, case.slack_ms)
    assert stated.states_members(gen["generation_id"], gen["members"])
    later = [dataclasses.replace(e, ts=gen["stabilized_at"] + 60_000) for e in inside]
    stated = f.stated_by([_stabilized(gen), *later], case.truth, False, case.slack_ms)
    assert not stated.states_members(gen["generation_id"], gen["members"])


def test_a_kip848_static_replacement_names_its_member_as_a_candidate_for_the_epoch_in_force():
    """KIP-848: a static member's replacement keeps the group epoch (GroupMetadataManager.replaceMember, no
    bump): the new member is a candidate for that epoch, which no 4.x broker line says had converged before
    (random:334 broker-4.x: epoch 2 of c4 and c5, then c4#2 replaces c4 at epoch 2)."""
    truth = {
        "generations": [
            {"generation_id": 2, "members": ["c4", "c5"], "rebalance_started_at": 2_000},
            {"generation_id": 3, "members": ["c4#2"], "rebalance_started_at": 90_000},
        ]
    }
    entries = [
        _entry(0, "coordinator", "join_received", 1_000, member_id="c4"),
        _entry(1, "coordinator", "join_received", 2_000, member_id="c5"),
        _entry(2, "coordinator", "group_epoch_bumped", 2_000, group_epoch=2),
    ]
    replaced = _entry(3, "coordinator", "static_member_replaced", 30_000, member_id="c4#2")
    stated = f.stated_by(entries, truth, True, 5_000)
    assert stated.states_members(2, ["c4", "c5"])
    stated = f.stated_by([*entries, replaced], truth, True, 5_000)
    assert not stated.states_members(2, ["c4", "c5"])


def test_inferred_assignments_are_over_cautious_only_when_every_member_of_the_generation_printed_its_own():
    case = f.build_case("sim:01_eager_join")
    truth = case.truth
    gen = max(r["generation_id"] for r in truth["assignments"])
    rows = [r for r in truth["assignments"] if r["generation_id"] == gen]
    replayed = {
        **truth,
        "assignments": [
            {**r, "source": "inferred", "partition": r["partition"] + 100} if r in rows else r
            for r in truth["assignments"]
        ],
    }
    owners = defaultdict(list)
    for r in rows:
        owners[r["member_id"]].append(TopicPartition(r["topic"], r["partition"]))
    entries = [
        _entry(i, "member", "sync_response", 0, member_id=m, generation_id=gen, partitions=tuple(tps))
        for i, (m, tps) in enumerate(sorted(owners.items()))
    ]
    view = f.VIEW_BY_NAME["client-3.x"]
    outcome = f.compare(case, view, truth, replayed, entries)["assignments"]
    assert (outcome.cls, outcome.flag, outcome.over_cautious) == (f.FLAGGED, "inferred", True)
    outcome = f.compare(case, view, truth, replayed, entries[:-1])["assignments"]
    assert (outcome.cls, outcome.over_cautious) == (f.FLAGGED, False)


def test_a_flag_in_a_measure_the_view_does_not_carry_or_that_the_simulator_calls_unobservable_is_justified():
    case = f.build_case("sim:01_eager_join")
    gen = _last_generation(case.truth)
    replayed = _null_members_of(case.truth, gen["generation_id"])
    entries = [
        _entry(i, "member", "join_response", 0, member_id=m, generation_id=gen["generation_id"])
        for i, m in enumerate(gen["members"])
    ]
    outcome = f.compare(case, f.VIEW_BY_NAME["broker-2.x"], case.truth, replayed, entries)["members"]
    assert (outcome.cls, outcome.over_cautious) == (f.FLAGGED, False)  # 2.x brokers do not carry members
    unobservable = dataclasses.replace(case, unobservable=["a member died silently"])
    summary = [{**r, "stw_ms": None} for r in case.truth["group_daily_summary"]]
    outcome = f.compare(
        unobservable, f.VIEW_BY_NAME["both-3.x"], case.truth, {**case.truth, "group_daily_summary": summary}
    )["stw_ms"]
    assert (outcome.cls, outcome.unobservable, outcome.over_cautious) == (f.FLAGGED, True, False)


def _churn_tables(truth_moves, replay_moves, replay_sources):
    """Tables of episodes at 0, 10, 20 (one generation each, 1-3) with these partitions_moved values."""

    def tables(moves, sources):
        episodes = [
            {
                "episode_id": f"e{i}",
                "started_at": 10 * i,
                "rounds": 1,
                "first_generation_id": i + 1,
                "last_generation_id": i + 1,
                "partitions_moved": n,
                "source": source,
            }
            for i, (n, source) in enumerate(zip(moves, sources, strict=True))
        ]
        summary = [{"partitions_moved": sum(moves)}]
        return {
            "rebalance_episodes": episodes,
            "group_daily_summary": summary,
            "partition_movements": [],
            "generations": [{"generation_id": g} for g in (1, 2, 3)],
        }

    return tables(truth_moves, ["observed"] * 3), tables(replay_moves, replay_sources)


@pytest.mark.parametrize(
    ("replay_moves", "sources", "excused"),
    [
        # the inferred episode is the one that differs: excused
        ([2, 5, 1], ["observed", "inferred", "observed"], True),
        # an inferred episode elsewhere does not excuse an observed episode's over-count (random:731)
        ([2, 3, 2], ["observed", "inferred", "observed"], False),
        ([3, 3, 1], ["observed", "observed", "observed"], False),
    ],
)
def test_an_inferred_episode_excuses_only_its_own_difference_in_a_total(replay_moves, sources, excused):
    truth, replayed = _churn_tables([2, 3, 1], replay_moves, sources)
    assert f._excused_by_inferred(truth, replayed, "moved", set(), tolerance_ms=2)[0] == excused


@pytest.mark.parametrize(("bound", "excused"), [(1, True), (0, False)])
def test_an_inferred_episode_and_a_coordinator_timing_bound_together_excuse_a_total(bound, excused):
    """One episode's difference is marked inferred, another's is within what coordinator timing may miss
    (random:519: a revocation stopped at its leave, minutes after the request, and a handover 18 ms off): each
    is flagged on its own, so is their sum; beyond the bound (0 here) the observed difference is silently wrong."""
    truth, replayed = _churn_tables([2, 3, 1], [2, 5, 2], ["observed", "inferred", "observed"])
    assert f._excused_by_inferred(truth, replayed, "moved", set(), tolerance_ms=2, bound=bound)[0] == excused


def test_an_inferred_assignment_excuses_the_episode_that_moves_its_partitions():
    """An episode's moves are of the generation before it: an inferred assignment there excuses it."""
    truth, replayed = _churn_tables([2, 3, 1], [2, 3, 4], ["observed"] * 3)
    assert f._excused_by_inferred(truth, replayed, "moved", {2}, tolerance_ms=2) == (True, {2, 3})
    assert f._excused_by_inferred(truth, replayed, "moved", {1}, tolerance_ms=2)[0] is False


def test_the_report_shows_over_cautious_flags_per_carried_cell_and_the_top_kinds():
    def row(case_id, view, measure, over_cautious):
        return f.Row(
            case_id, "random", False, view, measure, f.FLAGGED, "null", "", "null", False, over_cautious
        )

    rows = [row("random:1", "client-3.x", "members", True), row("random:2", "client-3.x", "members", False)]
    rows += [row("random:1", "broker-2.x", "members", False)]
    doc = f.render_doc(rows, "cmd")
    assert "**% over-cautious**" in doc
    assert "| client-3.x | members | null | 1 | `random:1` |" in doc
    cells = f.matrix(rows)
    assert f._over_cautious_cell(cells[("client-3.x", "members")], "client-3.x", "members", False) == "50.0"
    assert f._over_cautious_cell(cells[("broker-2.x", "members")], "broker-2.x", "members", False) == "·"


def test_episodes_the_view_dates_a_little_later_pair_with_the_nearest_truth_episode():
    """Client views date a crash's rebalance when a member noticed it (random:12 client-3.x): each replayed
    episode starts a little after its truth one, and each pairs with the truth episode nearest to it."""
    truth = {
        "rebalance_episodes": _episodes([(0, 1, "observed"), (100, 1, "observed"), (200, 1, "observed")])
    }
    replayed = {
        "rebalance_episodes": _episodes([(0, 1, "observed"), (101, 1, "inferred"), (201, 1, "inferred")])
    }
    pairs, unpaired = f._pair_episodes(truth, replayed, tolerance_ms=2)
    assert not unpaired
    assert [[t["started_at"] for t in ts] for _, ts in pairs] == [[0], [100], [200]]


def _with_generations(episodes, generations):
    for episode, (first, last) in zip(episodes, generations, strict=True):
        episode.update(first_generation_id=first, last_generation_id=last)
    return episodes


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        # the inferred episode skipped generation 2 (no member logged it): the truth's episode of it is its
        ("inferred", [[0], [100, 110]]),
        # an observed episode claims only its own generations: by time, the one before
        ("observed", [[0, 100], [110]]),
    ],
)
def test_a_truth_episode_of_generations_an_inferred_episode_skipped_pairs_with_it(source, expected):
    """Member-only logs learn of a generation no member logged (a silent crash emptied the group, random:10
    client-3.x) from the next generation id: the replayed episode that skipped it is dated by its first
    sight, after the unseen rebalance began, and the generation belongs to it, not to the episode before."""
    truth = {
        "rebalance_episodes": _with_generations(
            _episodes([(0, 1, "observed"), (100, 1, "inferred"), (110, 1, "observed")]),
            [(1, 1), (2, 2), (3, 3)],
        )
    }
    replayed = {
        "rebalance_episodes": _with_generations(
            _episodes([(0, 1, "observed"), (109, 1, source)]), [(1, 1), (3, 3)]
        )
    }
    pairs, unpaired = f._pair_episodes(truth, replayed, tolerance_ms=2)
    assert not unpaired
    assert [[t["started_at"] for t in ts] for _, ts in pairs] == expected


def test_a_truth_episode_of_generations_no_member_logged_pairs_with_the_inferred_removal_episode_before_them():
    """Member-only logs: a stalled member's "Lost previously assigned partitions" line dates the removal no
    line showed at the latest it can be; its join phase completed as a generation no member logged (an
    Empty one, random:411 client-3.x), so that inferred episode has no generation of its own. The truth's
    episode of the generations between the replayed ones around it is its, not the observed one before."""
    truth = {
        "rebalance_episodes": _with_generations(
            _episodes([(0, 1, "observed"), (100, 1, "inferred"), (110, 1, "observed")]),
            [(1, 1), (2, 2), (3, 3)],
        )
    }
    replayed = {
        "rebalance_episodes": _with_generations(
            _episodes([(0, 1, "observed"), (105, 1, "inferred"), (109, 1, "inferred")]),
            [(1, 1), (None, None), (3, 3)],
        )
    }
    pairs, unpaired = f._pair_episodes(truth, replayed, tolerance_ms=2)
    assert not unpaired
    assert [[t["started_at"] for t in ts] for _, ts in pairs] == [[0], [100], [110]]


def test_a_truth_episode_pairs_with_the_later_dated_observed_episode_of_the_same_generation():
    """A member notices a crash's rebalance a heartbeat after the coordinator began it (random:87
    client-3.x): the replayed episode of the same generation, dated later than the tolerance, is it."""
    truth = {
        "rebalance_episodes": _with_generations(
            _episodes([(0, 1, "observed"), (100, 1, "observed")]), [(1, 1), (2, 2)]
        )
    }
    replayed = {
        "rebalance_episodes": _with_generations(
            _episodes([(0, 1, "observed"), (105, 1, "observed")]), [(1, 1), (2, 2)]
        )
    }
    pairs, unpaired = f._pair_episodes(truth, replayed, tolerance_ms=2)
    assert not unpaired
    assert [[t["started_at"] for t in ts] for _, ts in pairs] == [[0], [100]]


def test_a_connect_groups_inferred_rounds_are_justified_where_no_worker_states_its_assignment():
    """KIP-415: whether a generation's episode waits for a delayed rebalance depends on the leader's delay
    (IncrementalCooperativeAssignor, from the work a departed worker held), which only the workers'
    "Joined group ... delay=D" lines state; a broker line naming the generation does not (random:33: the
    leader leaves, the group empties, no broker line settles whether a delay started)."""
    rows = f.run_case("random:33", ["broker-3.x"])
    rounds = next(r for r in rows if r.measure == "rounds")
    assert (rounds.cls, rounds.flag, rounds.over_cautious) == (f.FLAGGED, "inferred", False)


def test_a_kip848_movement_is_stated_only_where_the_new_owner_logs_its_start():
    """KIP-848: the coordinator moves a member to its new epoch with the partitions nobody releases at once
    (CurrentAssignmentBuilder), and with no listener the consumer's background thread reconciles without
    the poll loop: a broker line states the assignment, not that the member consumed it (random:74: c2's
    poll loop stalled at epoch 4, the broker shows it STABLE on u-2, it never consumed it)."""
    assignment = _entry(0, "coordinator", "member_assignment", 1_000, member_id="c2", member_epoch=4)
    own = _entry(1, "member", "partitions_assigned", 1_005, member_id="c2", member_epoch=4)
    truth = {"generations": []}
    assert not f.stated_by([assignment], truth, True, 5_000).states_start(4, ["c2"], True)
    assert f.stated_by([assignment, own], truth, True, 5_000).states_start(4, ["c2"], True)
    assert f.stated_by([assignment], truth, False, 5_000).states_start(4, ["c2"], False)
    rows = f.run_case("random:74", ["broker-3.x"])
    moved = next(r for r in rows if r.measure == "moved")
    assert (moved.cls, moved.flag, moved.over_cautious) == (f.FLAGGED, "inferred", False)


def test_a_line_states_a_members_assignment_only_with_the_partitions_the_truth_gives_it():
    """KIP-848: at its epoch a member reconciles only the partitions nobody else still owns (its target's
    others are UNRELEASED_PARTITIONS): its line at that epoch does not state its target assignment
    (test:writer_consumer_dynamic: c2 at epoch 2 logs none of its three partitions)."""
    target = {"c2": (("orders", 3), ("orders", 4), ("orders", 5))}
    partial = _entry(0, "member", "sync_response", 1_000, member_id="c2", member_epoch=2, partitions=())
    full = dataclasses.replace(
        partial,
        event_id="e1",
        ts=2_000,
        partitions=tuple(TopicPartition(t, p) for t, p in reversed(target["c2"])),
    )
    truth = {"generations": []}
    assert not f.stated_by([partial], truth, True, 5_000).states_assignment(2, target)
    assert f.stated_by([partial, full], truth, True, 5_000).states_assignment(2, target)
    computed = _entry(2, "member", "assignment_computed", 1_000, generation_id=2, assignment=target)
    assert f.stated_by([computed], truth, False, 5_000).states_assignment(2, target)


def test_kip848_workloads_draw_session_timeouts_a_broker_accepts():
    """A KIP-848 session timeout is the broker's (group.consumer.session.timeout.ms): a draw below its
    default minimum (45 s) states a broker that lowered group.consumer.min.session.timeout.ms."""
    from rebalance_core.consumer.simulate import BROKER_MAX_SESSION_TIMEOUT_MS, BROKER_MIN_SESSION_TIMEOUT_MS
    from rebalance_core.workload.fleet import CONSUMER, plan_group
    from rebalance_core.workload.segments import simulation_settings

    drawn = [f.random_workload(seed)[2] for seed in range(4, 200, len(f.RANDOM_KINDS))]
    drawn += [
        simulation_settings(plan, 0)
        for plan in (plan_group(i, 7) for i in range(200))
        if plan.kind == CONSUMER
    ]
    assert drawn and all(type(s).__name__ == "ConsumerSimSettings" for s in drawn)
    for s in drawn:
        assert s.min_session_timeout_ms <= min(s.session_timeout_ms, BROKER_MIN_SESSION_TIMEOUT_MS)
        assert s.session_timeout_ms <= s.max_session_timeout_ms == BROKER_MAX_SESSION_TIMEOUT_MS
    assert {s.session_timeout_ms for s in drawn} & {6_000, 10_000}  # below the default minimum: stated


def test_a_kip848_member_stays_a_candidate_of_later_epochs_until_a_line_says_it_left():
    """KIP-848: a member stays in the group until it leaves or is fenced. A member whose next line is at a
    later epoch was in the epochs between (random:59 client-4.x: c3 at epochs 2 then 5); one that died
    silently may or may not be in the next ones, which no member's line states (random:79 client-4.x:
    the bump to epoch 6 is c4's fencing); the broker logs every leave and fencing."""
    truth = {"generations": [{"generation_id": 4, "members": ["c1", "c3"], "rebalance_started_at": 10_000}]}

    def line(n, member, ts, epoch):
        return _entry(n, "member", "member_state_changed", ts, member_id=member, member_epoch=epoch)

    c1 = [line(0, "c1", 1_000, 2), line(1, "c1", 10_005, 4)]
    c3 = [line(2, "c3", 1_000, 2), line(3, "c3", 20_000, 5)]
    silent_c4 = [line(4, "c4", 1_000, 2)]
    left_c4 = [*silent_c4, line(5, "c4", 5_000, -1)]
    assert f.stated_by(c1 + c3, truth, True, 500).states_members(4, ["c1", "c3"])
    assert not f.stated_by(c1 + c3 + silent_c4, truth, True, 500).states_members(4, ["c1", "c3"])
    assert f.stated_by(c1 + c3 + left_c4, truth, True, 500).states_members(4, ["c1", "c3"])
    early_c3 = [line(2, "c3", 1_000, 2), line(3, "c3", 20_000, 3)]  # not shown at 4 or after: unstated
    assert not f.stated_by(c1 + early_c3, truth, True, 500).states_members(4, ["c1", "c3"])
    bump = _entry(9, "coordinator", "group_epoch_bumped", 10_000, group_epoch=4)
    stated = f.stated_by([bump, *c1, *silent_c4], truth, True, 500)  # with the broker's lines: c4 is in
    assert stated.states_members(4, ["c1", "c4"])
