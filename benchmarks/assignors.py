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
  grid-2000-members-100k 2,000 members, 100 topics x 1,000 partitions (100k), all on every topic.
                         Goal (ours): < 10 s per assignment.

Every assignor runs every scenario (the goal is the scenario's); an assignor that cannot be imported or
fails is reported and skipped. --quick shrinks every scenario 100x for a smoke run.

Through the CLI (`rebalance-replay assign`, a process per run, the group as JSON on stdin; --no-cli
skips it), the figures a user of the command sees:
  start-up               a one-partition group; baseline: the bare interpreter (`python -c pass`).
  sticky 10k/200         `assign --assignor sticky`, 10 topics x 1,000 partitions, 200 members (fresh,
                         then with owned partitions), CPU time of the whole process against kafka-python's
                         sticky on the same inputs (in-process CPU time). Goal (issue 16): >= 10x faster,
                         i.e. ours/peer <= 0.1.

Peer: the same two inputs (the second with the partitions OUR first assignment gave) through
kafka-python's assignors of the same name (range, roundrobin, sticky, cooperative-sticky), in the same
run, with the ratio ours / kafka-python. kafka-python is not a project dependency: install it in the
benchmark's environment (`pip install kafka-python`); without it the peer is skipped with a message.
Each peer run is a child process, stopped at --peer-timeout seconds or --peer-memory-gb of RSS
(kafka-python's sticky assignor keeps a list of candidate consumers per partition: 1M partitions x
2,000 consumers does not fit in memory).

    python -m benchmarks.assignors [--quick] [--assignors sticky,uniform] [--scenarios ...]
        [--no-peer] [--peer-timeout 120] [--peer-memory-gb 6]
"""

from __future__ import annotations

import argparse
import gc
import json
import multiprocessing
import resource
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from types import SimpleNamespace

from rebalance_core.assignors import ASSIGNOR_NAMES, GroupSpec, MemberSubscription, get_assignor
from rebalance_core.events import TopicPartition


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
    # A grid at the scale of a big production group (our own goal: no Kafka test has it); small enough
    # for kafka-python's assignors, so the peer ratio is measured on every assignor here.
    Scenario("grid-2000-members-100k", 100, 1_000, 2_000, 10.0, goal_per_assignment=True),
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


def run(scenario: Scenario, assignor_name: str, peer: PeerLimits | None = None) -> list[str]:
    """Lines to print: ours, then kafka-python's on the same two inputs (when `peer`)."""
    try:
        assignor = get_assignor(assignor_name)
    except Exception as exc:  # another helper's assignor may not exist yet
        return [f"{assignor_name:<20} skipped: cannot load ({exc.__class__.__name__}: {exc})"]
    try:
        fresh = group(scenario)
        fresh_s, fresh_cpu, first = timed(assignor, fresh)
        with_owned = group(scenario, owned=first)
        del first
        second_s, second_cpu, _ = timed(assignor, with_owned)
    except Exception as exc:
        return [f"{assignor_name:<20} failed: {exc.__class__.__name__}: {exc}"]
    measured = max(fresh_s, second_s) if scenario.goal_per_assignment else fresh_s + second_s
    what = "slowest" if scenario.goal_per_assignment else "both"
    lines = [
        f"{assignor_name:<20} fresh {fresh_s:7.3f} s (cpu {fresh_cpu:7.3f})   "
        f"with owned {second_s:7.3f} s (cpu {second_cpu:7.3f})   "
        f"{what} {measured:7.3f} s / goal {scenario.goal_s:4.1f} s = {measured / scenario.goal_s:6.3f}"
    ]
    if peer is not None and assignor_name in PEER_ASSIGNORS:
        lines.append(run_peer(assignor_name, fresh, with_owned, (fresh_cpu, second_cpu), peer))
    return lines


# -------------------------------------------------------------------------------- through the CLI
CLI_STICKY = Scenario("cli-sticky-10k-200", 10, 1_000, 200, 0.0, goal_per_assignment=True)
CLI_GOAL = 0.1  # ours/peer: 10x faster than kafka-python's sticky


def cli_command() -> list[str]:
    """The installed console script next to this interpreter, else the same entry point as a module."""
    script = Path(sys.executable).with_name("rebalance-replay")
    return [str(script)] if script.exists() else [sys.executable, "-m", "jobs.cli"]


def spec_json(spec: GroupSpec) -> str:
    """A GroupSpec as `rebalance-replay assign`'s stdin document."""
    members = [
        {"member_id": m.member_id, "subscription": list(m.subscription), "generation": m.generation,
         "owned": [[tp.topic, tp.partition] for tp in m.owned]}
        for m in spec.members
    ]  # fmt: skip
    return json.dumps({"topics": dict(spec.topics), "members": members})


def timed_process(command: list[str], stdin: str, repeat: int) -> tuple[float, float, str]:
    """Best (wall seconds, CPU seconds of the process) of `repeat` runs, and the last run's stdout."""
    best_wall = best_cpu = float("inf")
    out = ""
    for _ in range(repeat):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        started = time.perf_counter()
        done = subprocess.run(command, input=stdin, capture_output=True, text=True, check=True)
        wall = time.perf_counter() - started
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
        best_wall, best_cpu, out = min(best_wall, wall), min(best_cpu, cpu), done.stdout
    return best_wall, best_cpu, out


def cli_lines(peer: PeerLimits | None, repeat: int = 5) -> list[str]:
    """Start-up of `assign`, and the sticky assignment of 10k partitions / 200 members through it."""
    one = GroupSpec({"t": 1}, (MemberSubscription("c", ("t",)),))
    bare_wall, bare_cpu, _ = timed_process([sys.executable, "-c", "pass"], "", repeat)
    wall, cpu, _ = timed_process([*cli_command(), "assign", "--assignor", "range"], spec_json(one), repeat)
    lines = [
        f"start-up: assign, one partition   {wall:7.3f} s (cpu {cpu:6.3f})   bare interpreter "
        f"{bare_wall:6.3f} s (cpu {bare_cpu:6.3f})   the command's own {wall - bare_wall:6.3f} s",
    ]
    fresh = group(CLI_STICKY)
    fresh_wall, fresh_cpu, out = timed_process(
        [*cli_command(), "assign", "--assignor", "sticky"], spec_json(fresh), repeat
    )
    first = {m: [TopicPartition(t, p) for t, p in tps] for m, tps in json.loads(out)["assignment"].items()}
    with_owned = group(CLI_STICKY, owned=first)
    owned_wall, owned_cpu, _ = timed_process(
        [*cli_command(), "assign", "--assignor", "sticky"], spec_json(with_owned), repeat
    )
    lines.append(
        f"sticky 10k/200 through the CLI     fresh {fresh_wall:7.3f} s (cpu {fresh_cpu:6.3f})   "
        f"with owned {owned_wall:7.3f} s (cpu {owned_cpu:6.3f})"
    )
    if peer is not None:
        lines.append(run_peer("sticky", fresh, with_owned, (fresh_cpu, owned_cpu), peer))
    return lines


# ------------------------------------------------------------------------- kafka-python as the peer
# Our assignor name -> kafka-python's class (kafka.coordinator.assignors).
PEER_ASSIGNORS = {
    "range": "kafka.coordinator.assignors.range:RangePartitionAssignor",
    "roundrobin": "kafka.coordinator.assignors.roundrobin:RoundRobinPartitionAssignor",
    "sticky": "kafka.coordinator.assignors.sticky.sticky_assignor:StickyPartitionAssignor",
    "cooperative-sticky": "kafka.coordinator.assignors.cooperative_sticky:CooperativeStickyAssignor",
}


@dataclass(frozen=True)
class PeerLimits:
    timeout_s: float
    memory_bytes: int


def peer_missing() -> str | None:
    """Why kafka-python cannot be the peer here (None: it can)."""
    try:
        import kafka.coordinator.assignors.sticky.sticky_assignor  # noqa: F401
    except ImportError as exc:
        return f"kafka-python is not installed ({exc}); `pip install kafka-python` to compare with it"
    return None


class _PeerCluster:
    """The two ClusterMetadata methods kafka-python's assignors call."""

    def __init__(self, topics: dict[str, int]):
        self._topics = topics

    def topics(self):
        return set(self._topics)

    def partitions_for_topic(self, topic: str):
        count = self._topics.get(topic)
        return None if count is None else set(range(count))


def peer_members(spec: GroupSpec) -> list:
    """Our GroupSpec as kafka-python's JoinGroup members (member_id, group_instance_id, decoded
    ConsumerProtocolSubscription): what a member owns goes where kafka-python's assignor reads it,
    the sticky user data (KIP-54) and the owned_partitions field (KIP-429)."""
    from kafka.coordinator.assignors.sticky.user_data import StickyAssignorUserData

    members = []
    for m in spec.members:
        owned: dict[str, list[int]] = {}
        for tp in m.owned:
            owned.setdefault(tp.topic, []).append(tp.partition)
        generation = m.generation if m.generation is not None else -1
        metadata = SimpleNamespace(
            topics=list(m.subscription),
            user_data=StickyAssignorUserData(list(owned.items()), generation) if owned else b"",
            owned_partitions=[SimpleNamespace(topic=t, partitions=ps) for t, ps in owned.items()],
            generation_id=generation,
        )
        members.append(
            SimpleNamespace(member_id=m.member_id, group_instance_id=m.group_instance_id, metadata=metadata)
        )
    return members


def _peer_child(target: str, specs: tuple[GroupSpec, GroupSpec], memory_bytes: int, conn) -> None:
    """Sends [fresh CPU s, with-owned CPU s], or the peer's error as text. Its address space may grow by
    `memory_bytes` beyond what it inherited (a MemoryError here rather than the machine's OOM killer
    between two of the parent's RSS checks)."""
    import importlib
    import resource

    import psutil

    _, hard = resource.getrlimit(resource.RLIMIT_AS)
    resource.setrlimit(resource.RLIMIT_AS, (psutil.Process().memory_info().vms + memory_bytes, hard))
    module_name, class_name = target.split(":")
    peer_class = getattr(importlib.import_module(module_name), class_name)
    times = []
    try:
        for spec in specs:
            cluster, members = _PeerCluster(dict(spec.topics)), peer_members(spec)
            gc.collect()
            started = time.process_time()
            peer_class().assign(cluster, members)
            times.append(time.process_time() - started)
            del members
    except MemoryError:
        conn.send(f"stopped: out of its memory limit ({memory_bytes / 2**30:.1f} GiB, --peer-memory-gb)")
    except Exception as exc:
        conn.send(f"failed: {exc.__class__.__name__}: {exc}")
        return
    conn.send(times)


def run_peer(
    name: str, fresh: GroupSpec, with_owned: GroupSpec, ours_cpu: tuple[float, float], limits: PeerLimits
) -> str:
    """kafka-python's assignor on the same two inputs, in a child process (forked: it inherits the
    specs) stopped at the limits. CPU seconds on both sides: the ratio does not depend on the load of
    a shared machine."""
    import psutil

    label = f"  vs kafka-python {name:<19}"
    receiver, sender = multiprocessing.Pipe(duplex=False)
    child = multiprocessing.get_context("fork").Process(
        target=_peer_child,
        args=(PEER_ASSIGNORS[name], (fresh, with_owned), limits.memory_bytes, sender),
        daemon=True,
    )
    child.start()
    sender.close()
    watched, peak, started, stopped = psutil.Process(child.pid), 0, time.monotonic(), None
    while child.is_alive() and not receiver.poll(0.2):
        try:
            peak = max(peak, watched.memory_info().rss)
        except psutil.NoSuchProcess:
            break
        if peak > limits.memory_bytes:
            stopped = f"stopped at {peak / 2**30:.1f} GiB RSS (limit {limits.memory_bytes / 2**30:.1f})"
        elif time.monotonic() - started > limits.timeout_s:
            stopped = f"stopped after {limits.timeout_s:g} s (--peer-timeout)"
        if stopped:
            child.kill()
            break
    result = receiver.recv() if stopped is None and receiver.poll(1) else None
    child.join()
    if stopped:
        return f"{label} {stopped}"
    if not isinstance(result, list):
        return f"{label} {result or f'failed (exit code {child.exitcode})'}"
    (fresh_s, second_s), (ours_fresh, ours_second) = result, ours_cpu
    return (
        f"{label} fresh cpu {fresh_s:7.3f} s   with owned cpu {second_s:7.3f} s   "
        f"ours/peer {ours_fresh / fresh_s:6.3f} and {ours_second / second_s:6.3f}"
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
    parser.add_argument("--no-peer", action="store_true", help="do not run kafka-python's assignors")
    parser.add_argument(
        "--no-cli", action="store_true", help="do not measure through `rebalance-replay assign`"
    )
    parser.add_argument(
        "--peer-timeout", type=float, default=120.0, help="seconds per peer run (default 120)"
    )
    parser.add_argument(
        "--peer-memory-gb", type=float, default=6.0, help="RSS limit of a peer run (default 6)"
    )
    args = parser.parse_args(argv)
    peer = None
    if not args.no_peer:
        missing = peer_missing()
        if missing:
            print(f"peer skipped: {missing}")
        else:
            peer = PeerLimits(args.peer_timeout, int(args.peer_memory_gb * 2**30))
    if not args.no_cli:
        print(
            f"\nthrough the CLI ({' '.join(cli_command())}); best of 5 runs; goal: sticky ours/peer <= {CLI_GOAL}"
        )
        for line in cli_lines(peer):
            print("  " + line, flush=True)
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
            for line in run(scenario, assignor_name, peer):
                print("  " + line, flush=True)


if __name__ == "__main__":
    main()
