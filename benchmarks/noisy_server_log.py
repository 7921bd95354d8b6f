"""A busy broker's daily `server.log` of a chosen size: mostly lines that are not about groups, with the
group coordinator's lines of known rebalances mixed in (not a benchmark itself: benchmarks/noisy_log.py
measures reading it).

Kafka's default log4j configuration rolls `server.log` daily, so one file holds a day of everything the
broker logs, in the layout `[%d] %p %m (%c)%n` of `rebalance_core.kafka_logs.writer`:
- the group lines: the workload generator's groups (`rebalance_core.workload`: the fleet's plans,
  incidents and simulators) over one day, written by `KafkaLogWriter` as Kafka 3.9's coordinator logs
  them; only the broker side (a server.log holds no consumer lines). Groups are added until their
  lines make `GROUP_SHARE` of the file's estimated lines (at least one group), so the share stays below
  0.2% whatever the size;
- the rest, with wordings from Kafka 3.8's sources (UnifiedLog, LocalLog, ProducerStateManager,
  Partition, AbstractFetcherThread, FetchSessionHandler, GroupMetadataManager's offset expiry,
  KafkaController): segment rolls with their producer snapshot, retention deletes (the segment, the
  new log start offset, its files), ISR shrinks and expands, replica fetcher errors with multi-line
  Java stack traces, controller lines, and the coordinator's own non-group line (expired offsets
  removed every 10 minutes, logged by GroupMetadataManager: a cheap filter on that logger name alone
  keeps it, the parser must skip it).

The same size and seed give the same file. Written next to it, `<file>.truth.json`: the rebalances the
file shows (per group, the generations completed on the broker: classic "Stabilized group ..." and
KIP-848 group epochs), the groups' plans, the kafka-log options to read it with (cluster, topic ids),
and the counts (entries, lines, group lines, bytes).

    python -m benchmarks.noisy_server_log --size 2.2G --out /work/bench-data/noisy/server.log
"""

from __future__ import annotations

import argparse
import heapq
import json
import random
import sys
import time
from collections.abc import Iterator
from pathlib import Path

from rebalance_core.kafka_logs.writer import KafkaLogWriter
from rebalance_core.kafka_logs.writer_lines import BROKER, format_log_ts
from rebalance_core.measure_records import DAY_MS
from rebalance_core.workload.fleet import CONSUMER, plan_group, topic_id
from rebalance_core.workload.segments import GroupStream, group_segments, simulate_segment
from schemas.events import EventType

CLUSTER = "bench"
BROKER_ID = 1
START_MS = 1_704_067_200_000  # 2024-01-01T00:00:00Z: the file covers this UTC day
GROUP_SHARE = 0.0015  # of the file's lines about groups (the issue: < 0.2%)
MEAN_LINE_BYTES = 190  # measured on the noise mix below; only used to plan the number of groups
DATA_DIR = "/var/lib/kafka/data"
# Rebalances a broker's log shows: the generation (classic) or group epoch (KIP-848) each completes.
REBALANCE_TYPES = {
    EventType.JOIN_COMPLETED.value: "generation_id",
    EventType.GROUP_EPOCH_BUMPED.value: "group_epoch",
}

_TOPICS = ("orders", "payments", "clicks", "inventory", "audit-log", "shipments", "sessions", "metrics")
_PEERS = (2, 3)  # the other brokers of the cluster


def parse_size(text: str) -> int:
    """'2.2G', '500M', '64k' or a byte count -> bytes."""
    units = {"k": 2**10, "m": 2**20, "g": 2**30}
    text = text.strip().lower().removesuffix("b").removesuffix("i")
    if text and text[-1] in units:
        return int(float(text[:-1]) * units[text[-1]])
    return int(text)


# ------------------------------------------------------------------------------------------ group lines
def group_entries(target_lines: int, seed: int) -> tuple[list[tuple[int, str]], dict]:
    """(ts, entry) of the coordinator's lines for as many of the fleet's groups as make about
    `target_lines` lines over the day (at least one group), and the truth about them."""
    entries: list[tuple[int, str]] = []
    rebalances: dict[str, list[int]] = {}
    plans, topic_ids = [], {}
    index = 0
    while not plans or len(entries) < target_lines:
        plan = plan_group(index, seed)
        index += 1
        ids = {t: topic_id(CLUSTER, t) for t, _ in plan.topics}
        writer = KafkaLogWriter(consumer_protocol=plan.kind == CONSUMER, topic_ids=ids)
        stream = GroupStream()
        written: set[str] = set()
        completed: dict[str, int] = {}  # event id -> the generation/epoch it completes
        for segment in group_segments(plan, START_MS, 1):
            for event in stream.join(simulate_segment(segment)):
                if event.ts >= START_MS + DAY_MS:
                    continue
                field = REBALANCE_TYPES.get(event.event_type)
                if field is not None and event.side == "coordinator":
                    completed[event.event_id] = getattr(event, field)
                for line in writer.write(event):
                    if line.stream == BROKER:
                        entries.append((line.ts, line.text))
                        written.update(line.event_ids)
        for line in writer.flush():
            if line.stream == BROKER:
                entries.append((line.ts, line.text))
                written.update(line.event_ids)
        shown = sorted(g for eid, g in completed.items() if eid in written and g is not None)
        rebalances[plan.group_id] = shown
        plans.append({"group_id": plan.group_id, "kind": plan.kind, "members": plan.members})
        topic_ids.update(ids)
    entries.sort(key=lambda e: e[0])
    truth = {
        "cluster": CLUSTER,
        "groups": len(plans),
        "rebalances": sum(len(g) for g in rebalances.values()),
        "rebalances_by_group": rebalances,
        "plans": plans,
        "kafka_log_options": {"cluster": CLUSTER, "topic_ids": topic_ids},
    }
    return entries, truth


# ------------------------------------------------------------------------------------------ other lines
class NoiseLines:
    """Everything else a busy broker logs in a day, one entry at a time (an entry may span lines)."""

    def __init__(self, seed: int) -> None:
        self.rng = random.Random(f"{seed}:noise")
        self.partitions = [f"{t}-{p}" for t in _TOPICS for p in range(24)]
        self.offsets = {tp: self.rng.randrange(10**6, 10**9) for tp in self.partitions}
        self.isr_version = dict.fromkeys(self.partitions, 3)
        self.fetch_epoch = 1
        # (weight, maker): weights per 1000 entries of a busy broker's day
        self.kinds = [
            (420, self.segment_roll),
            (260, self.retention_delete),
            (150, self.isr_change),
            (40, self.fetcher_error),
            (60, self.fetch_session_error),
            (70, self.controller),
        ]
        self.cumulative = []
        total = 0
        for weight, maker in self.kinds:
            total += weight
            self.cumulative.append((total, maker))
        self.total_weight = total

    def entry(self, ts: int) -> list[str]:
        """The lines of one entry (or of a few entries logged together) at `ts`."""
        pick = self.rng.random() * self.total_weight
        for bound, maker in self.cumulative:
            if pick < bound:
                return maker(f"[{format_log_ts(ts)}]", ts)
        raise AssertionError("unreachable")

    def _partition(self) -> str:
        return self.partitions[self.rng.randrange(len(self.partitions))]

    def segment_roll(self, stamp: str, ts: int) -> list[str]:
        tp = self._partition()
        self.offsets[tp] += self.rng.randrange(10_000, 5_000_000)
        offset = self.offsets[tp]
        return [
            f"{stamp} INFO [ProducerStateManager partition={tp}] Wrote producer snapshot at offset {offset} "
            f"with {self.rng.randrange(0, 40)} producer ids in {self.rng.randrange(0, 9)} ms. "
            "(org.apache.kafka.storage.internals.log.ProducerStateManager)",
            f"{stamp} INFO [LocalLog partition={tp}, dir={DATA_DIR}] Rolled new log segment at offset {offset} "
            f"in {self.rng.randrange(0, 12)} ms. (kafka.log.LocalLog)",
        ]

    def retention_delete(self, stamp: str, ts: int) -> list[str]:
        tp = self._partition()
        base = self.offsets[tp] - self.rng.randrange(10**6, 10**7)
        size = self.rng.randrange(10**8, 1_073_741_824)
        modified = ts - 604_800_000 - self.rng.randrange(0, 3_600_000)
        segment = (
            f"LogSegment(baseOffset={base}, size={size}, lastModifiedTime={modified}, "
            f"largestRecordTimestamp=Some({modified - self.rng.randrange(0, 1000)}))"
        )
        name = f"{DATA_DIR}/{tp}/{base:020d}"
        prefix = f"{stamp} INFO [UnifiedLog partition={tp}, dir={DATA_DIR}]"
        return [
            f"{prefix} Deleting segment {segment} due to log retention time 604800000ms breach based on the "
            "largest record timestamp in the segment (kafka.log.UnifiedLog)",
            f"{prefix} Incremented log start offset to {base + self.rng.randrange(10**5, 10**6)} due to "
            "SegmentDeletion (kafka.log.UnifiedLog)",
            f"{stamp} INFO [LocalLog partition={tp}, dir={DATA_DIR}] Deleting segment files {segment} "
            "(kafka.log.LocalLog$)",
            f"{stamp} INFO Deleted log {name}.log.deleted. (kafka.log.LogSegment)",
            f"{stamp} INFO Deleted offset index {name}.index.deleted. (kafka.log.LogSegment)",
            f"{stamp} INFO Deleted time index {name}.timeindex.deleted. (kafka.log.LogSegment)",
        ]

    def isr_change(self, stamp: str, ts: int) -> list[str]:
        tp = self._partition()
        peer = _PEERS[self.rng.randrange(2)]
        full = f"{BROKER_ID},{_PEERS[0]},{_PEERS[1]}"
        rest = ",".join(str(b) for b in (BROKER_ID, *_PEERS) if b != peer)
        self.isr_version[tp] += 1
        end = self.offsets[tp]
        prefix = f"{stamp} INFO [Partition {tp} broker={BROKER_ID}]"
        if self.rng.random() < 0.5:
            first = (
                f"{prefix} Shrinking ISR from {full} to {rest}. Leader: (highWatermark: {end - 120}, "
                f"endOffset: {end}). Out of sync replicas: (brokerId: {peer}, endOffset: {end - 4000}, "
                f"lastCaughtUpTimeMs: {ts - 30_000 - self.rng.randrange(0, 5000)}). (kafka.cluster.Partition)"
            )
            isr = rest
        else:
            first = f"{prefix} Expanding ISR from {rest} to {full} (kafka.cluster.Partition)"
            isr = full
        return [
            first,
            f"{prefix} ISR updated to {isr}  and version updated to {self.isr_version[tp]} (kafka.cluster.Partition)",
        ]

    def fetcher_error(self, stamp: str, ts: int) -> list[str]:
        peer = _PEERS[self.rng.randrange(2)]
        tps = ", ".join(
            f"{tp}=PartitionData(topicId={topic_id(CLUSTER, tp.rsplit('-', 1)[0])}, fetchOffset={self.offsets[tp]}, "
            f"logStartOffset=0, maxBytes=1048576, currentLeaderEpoch=Optional[{self.rng.randrange(1, 40)}], "
            "lastFetchedEpoch=Optional.empty)"
            for tp in self.rng.sample(self.partitions, 3)
        )
        fetcher = (
            f"[ReplicaFetcher replicaId={BROKER_ID}, leaderId={peer}, fetcherId={self.rng.randrange(4)}]"
        )
        return [
            f"{stamp} WARN {fetcher} Error in response for fetch request (type=FetchRequest, replicaId="
            f"{BROKER_ID}, maxWait=500, minBytes=1, maxBytes=10485760, fetchData={{{tps}}}, "
            "isolationLevel=READ_UNCOMMITTED, removed=, replaced=, metadata=(sessionId=INVALID, "
            "epoch=INITIAL), rackId=) (kafka.server.ReplicaFetcherThread)",
            f"java.io.IOException: Connection to {peer} was disconnected before the response was read",
            "\tat org.apache.kafka.clients.NetworkClientUtils.sendAndReceive(NetworkClientUtils.java:99)",
            "\tat kafka.server.BrokerBlockingSender.sendRequest(BrokerBlockingSender.scala:113)",
            "\tat kafka.server.RemoteLeaderEndPoint.fetch(RemoteLeaderEndPoint.scala:79)",
            "\tat kafka.server.AbstractFetcherThread.processFetchRequest(AbstractFetcherThread.scala:317)",
            "\tat kafka.server.AbstractFetcherThread.$anonfun$maybeFetch$3(AbstractFetcherThread.scala:131)",
            "\tat kafka.server.AbstractFetcherThread.$anonfun$maybeFetch$3$adapted(AbstractFetcherThread.scala:130)",
            "\tat scala.Option.foreach(Option.scala:437)",
            "\tat kafka.server.AbstractFetcherThread.maybeFetch(AbstractFetcherThread.scala:130)",
            "\tat kafka.server.AbstractFetcherThread.doWork(AbstractFetcherThread.scala:113)",
            "\tat org.apache.kafka.server.util.ShutdownableThread.run(ShutdownableThread.java:131)",
        ]

    def fetch_session_error(self, stamp: str, ts: int) -> list[str]:
        peer = _PEERS[self.rng.randrange(2)]
        self.fetch_epoch += 1
        return [
            f"{stamp} INFO [ReplicaFetcher replicaId={BROKER_ID}, leaderId={peer}, fetcherId=0] Error sending "
            f"fetch request (sessionId={self.rng.randrange(10**8, 2**31)}, epoch={self.fetch_epoch}) to node "
            f"{peer}: (org.apache.kafka.clients.FetchSessionHandler)",
            "java.net.SocketTimeoutException: Failed to connect within 30000 ms",
            "\tat kafka.server.BrokerBlockingSender.sendRequest(BrokerBlockingSender.scala:109)",
            "\tat kafka.server.RemoteLeaderEndPoint.fetch(RemoteLeaderEndPoint.scala:79)",
            "\tat kafka.server.AbstractFetcherThread.processFetchRequest(AbstractFetcherThread.scala:317)",
            "\tat kafka.server.AbstractFetcherThread.$anonfun$maybeFetch$3(AbstractFetcherThread.scala:131)",
            "\tat kafka.server.AbstractFetcherThread.maybeFetch(AbstractFetcherThread.scala:130)",
            "\tat kafka.server.AbstractFetcherThread.doWork(AbstractFetcherThread.scala:113)",
            "\tat org.apache.kafka.server.util.ShutdownableThread.run(ShutdownableThread.java:131)",
        ]

    def controller(self, stamp: str, ts: int) -> list[str]:
        if self.rng.random() < 0.5:
            return [
                f"{stamp} INFO [Controller id={BROKER_ID}] Processing automatic preferred replica leader "
                "election (kafka.controller.KafkaController)",
            ]
        tps = ",".join(self.rng.sample(self.partitions, 4))
        return [
            f"{stamp} INFO [Controller id={BROKER_ID}] Starting replica leader election (PREFERRED) for "
            f"partitions {tps} triggered by AutoTriggered (kafka.controller.KafkaController)",
        ]


def offsets_expiry(ts: int) -> str:
    """GroupMetadataManager.cleanupGroupMetadata, every offsets.retention.check.interval.ms (10 min)."""
    return (
        f"[{format_log_ts(ts)}] INFO [GroupMetadataManager brokerId={BROKER_ID}] Removed 0 expired offsets "
        "in 1 milliseconds. (kafka.coordinator.group.GroupMetadataManager)"
    )


# ------------------------------------------------------------------------------------------ the file
def write_log(out: Path, size: int, seed: int = 0) -> dict:
    """Write about `size` bytes of server.log to `out` and its truth to `<out>.truth.json`; the truth."""
    started = time.monotonic()
    estimated_lines = size // MEAN_LINE_BYTES
    group, truth = group_entries(int(estimated_lines * GROUP_SHARE), seed)
    noise = NoiseLines(seed)
    entries_per_ms = max(1.0, estimated_lines / 4.5) / DAY_MS  # ~4.5 lines per noise entry
    step = 1 / entries_per_ms
    expiries = iter(range(START_MS + 600_000, START_MS + DAY_MS, 600_000))

    def noise_entries() -> Iterator[tuple[int, str]]:
        written, clock = 0, float(START_MS)
        while written < size:
            clock += step * noise.rng.random() * 2
            ts = min(int(clock), START_MS + DAY_MS - 1)
            text = "\n".join(noise.entry(ts))
            written += len(text) + 1
            yield ts, text

    merged = heapq.merge(
        noise_entries(), group, ((ts, offsets_expiry(ts)) for ts in expiries), key=lambda e: e[0]
    )
    counts = {"entries": 0, "lines": 0, "bytes": 0}
    out.parent.mkdir(parents=True, exist_ok=True)
    with out.open("w", encoding="utf-8", buffering=8 * 2**20) as handle:
        chunk: list[str] = []
        for _, text in merged:
            chunk.append(text)
            if len(chunk) >= 20_000:
                _flush(handle, chunk, counts)
        _flush(handle, chunk, counts)
    truth.update(
        file=str(out),
        size_asked=size,
        bytes=counts["bytes"],
        entries=counts["entries"],
        lines=counts["lines"],
        group_lines=len(group),
        group_share=round(len(group) / counts["lines"], 6),
        seconds=round(time.monotonic() - started, 1),
    )
    truth_path(out).write_text(json.dumps(truth, indent=1) + "\n", encoding="utf-8")
    return truth


def _flush(handle, chunk: list[str], counts: dict) -> None:
    if not chunk:
        return
    text = "\n".join(chunk) + "\n"
    handle.write(text)
    counts["entries"] += len(chunk)
    counts["lines"] += text.count("\n")
    counts["bytes"] += len(text.encode("utf-8"))
    chunk.clear()


def truth_path(log: Path) -> Path:
    return log.with_name(log.name + ".truth.json")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--out", required=True, type=Path, help="the server.log to write")
    parser.add_argument(
        "--size", default="2.2G", help="about this many bytes, e.g. 2.2G, 300M (default 2.2G)"
    )
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    truth = write_log(args.out, parse_size(args.size), args.seed)
    print(
        f"{args.out}: {truth['bytes']:,} bytes, {truth['lines']:,} lines ({truth['entries']:,} entries), "
        f"{truth['group_lines']:,} about groups ({truth['group_share']:.3%}), {truth['rebalances']:,} "
        f"rebalances of {truth['groups']} groups, in {truth['seconds']} s",
        file=sys.stderr,
    )


if __name__ == "__main__":
    main()
