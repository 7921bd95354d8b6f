"""Time per assignment of every assignor on Kafka's scale scenarios (not a test: it prints figures).

Scenarios (each: a fresh assignment, then a second one where the members report what they own, as
Kafka's tests do; member 0 reports nothing, like AbstractStickyAssignorTest's loops starting at 1):

  uniform-subscription   AbstractStickyAssignorTest.testLargeAssignmentAndGroupWithUniformSubscription:
                         500 topics x 2,000 partitions (1M), 2,000 consumers, all on every topic.
                         Goal: both assignments within Kafka's @Timeout(30) (Kafka's Java needs ~2 s).
  non-equal-subscription ...WithNonEqualSubscription: the same, but the last consumer subscribes to the
                         first topic only (the general algorithm). Goal: Kafka's @Timeout(90).
  kip848-10k-members     KIP-848 server-side scale: 10,000 members, 100 topics x 1,000 partitions (100k).
                         Goal: < 1 s per assignment.

Every assignor runs every scenario (the goal is the scenario's); an assignor that cannot be imported or
fails is reported and skipped. --quick shrinks every scenario 100x for a smoke run.

    PYTHONPATH=. python benchmarks/assignors.py [--quick] [--assignors sticky,uniform] [--scenarios ...]
"""

from __future__ import annotations

import argparse
import gc
import time
from dataclasses import dataclass

from rebalance_core.assignors import ASSIGNOR_NAMES, GroupSpec, MemberSubscription, get_assignor


@dataclass(frozen=True)
class Scenario:
    name: str
    topics: int
    partitions: int
    members: int
    goal_s: float
    goal_per_assignment: bool  # else the goal covers both assignments (a Kafka test's timeout)
    last_member_on_first_topic_only: bool = False


SCENARIOS = (
    Scenario("uniform-subscription", 500, 2_000, 2_000, 30.0, goal_per_assignment=False),
    Scenario("non-equal-subscription", 500, 2_000, 2_000, 90.0, False, last_member_on_first_topic_only=True),
    Scenario("kip848-10k-members", 100, 1_000, 10_000, 1.0, goal_per_assignment=True),
)


def quick(s: Scenario) -> Scenario:
    """100x fewer partitions (and 10x fewer members, each still owning several partitions)."""
    return Scenario(
        s.name, max(1, s.topics // 10), max(1, s.partitions // 10), max(2, s.members // 10), s.goal_s,
        s.goal_per_assignment, s.last_member_on_first_topic_only,
    )  # fmt: skip


def name(prefix: str, i: int, n: int) -> str:
    """AbstractStickyAssignorTest.getTopicName/getConsumerName: zero-padded to the width of n."""
    return f"{prefix}{i:0{len(str(n))}d}"


def group(s: Scenario, owned: dict | None = None) -> GroupSpec:
    topics = [name("t", i, s.topics) for i in range(s.topics)]
    members = []
    for i in range(s.members):
        member_id = name("c", i, s.members)
        subscription = tuple(
            topics[:1] if s.last_member_on_first_topic_only and i == s.members - 1 else topics
        )
        mine = tuple(owned[member_id]) if owned is not None and i > 0 else ()
        members.append(
            MemberSubscription(member_id, subscription, owned=mine, generation=1 if mine else None)
        )
    return GroupSpec(
        {t: s.partitions for t in topics}, tuple(members), topic_ids={t: f"id-{t}" for t in topics}
    )


def timed(assignor, spec: GroupSpec) -> tuple[float, float, dict]:
    """(wall seconds, this process's CPU seconds, assignment): on a shared machine the CPU time shows what
    the wall time would be without other load."""
    gc.collect()
    wall, cpu = time.perf_counter(), time.process_time()
    result = assignor.assign(spec)
    return time.perf_counter() - wall, time.process_time() - cpu, result


def run(scenario: Scenario, assignor_name: str) -> str:
    try:
        assignor = get_assignor(assignor_name)
    except Exception as exc:  # another helper's assignor may not exist yet
        return f"{assignor_name:<20} skipped: cannot load ({exc.__class__.__name__}: {exc})"
    try:
        fresh_s, fresh_cpu, first = timed(assignor, group(scenario))
        spec = group(scenario, owned=first)
        del first
        second_s, second_cpu, _ = timed(assignor, spec)
    except Exception as exc:
        return f"{assignor_name:<20} failed: {exc.__class__.__name__}: {exc}"
    measured = max(fresh_s, second_s) if scenario.goal_per_assignment else fresh_s + second_s
    what = "slowest" if scenario.goal_per_assignment else "both"
    return (
        f"{assignor_name:<20} fresh {fresh_s:7.3f} s (cpu {fresh_cpu:7.3f})   "
        f"with owned {second_s:7.3f} s (cpu {second_cpu:7.3f})   "
        f"{what} {measured:7.3f} s / goal {scenario.goal_s:4.1f} s = {measured / scenario.goal_s:6.3f}"
    )


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--quick", action="store_true", help="100x smaller groups, for a smoke run")
    parser.add_argument(
        "--assignors", default=",".join(ASSIGNOR_NAMES), help="comma-separated assignor names"
    )
    parser.add_argument(
        "--scenarios", default=",".join(s.name for s in SCENARIOS), help="comma-separated names"
    )
    args = parser.parse_args(argv)
    wanted = set(args.scenarios.split(","))
    for scenario in SCENARIOS:
        if scenario.name not in wanted:
            continue
        if args.quick:
            scenario = quick(scenario)
        total = scenario.topics * scenario.partitions
        goal = "per assignment" if scenario.goal_per_assignment else "for both assignments"
        print(
            f"\n{scenario.name}: {scenario.topics} topics x {scenario.partitions} partitions = {total:,}, "
            f"{scenario.members:,} members; goal {scenario.goal_s:g} s {goal}"
        )
        for assignor_name in args.assignors.split(","):
            print("  " + run(scenario, assignor_name), flush=True)


if __name__ == "__main__":
    main()
