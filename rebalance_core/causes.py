"""Why a rebalance happened: one `cause` per rebalance episode, the raw reason beside it, and the member
that triggered it (its client id and host where a log names them).

Two sources; the first that says something specific wins:

1. the episode's reason (its first round's): the coordinator's `prepareRebalance` reason, or a member's
   "Request joining group due to: R" in member-only logs. Every Kafka version's wording is classified by
   `rebalance_reasons.classify_reason` (its rules cite where Kafka prints them);
2. the evidence the group's events left around the episode's start (`CauseTracker`): a member the
   coordinator removed (session timeout, LeaveGroup, fenced static member), a member's own poll timeout
   or LeaveGroup, a static member replaced, a new process joining, a partition-count change, the
   group's coordinator moving.

Evidence refines a reason that cannot tell on its own: a LeaveGroup sent because the member's poll
timeout expired is `poll_timeout`; a heartbeat expiry or a failed rejoin right after the group's
coordinator moved is `coordinator_moved`; a leader rejoining right after a partition-count change is
`metadata_changed`. What none of this explains is `unknown`, never a guess.

Pure: no I/O, no clock. A `CauseTracker` is fed every event of one group (`observe`) and annotates that
group's `rebalance_episodes` rows (`annotate`); `snapshot()` is JSON-able and resumes it.
"""

from __future__ import annotations

from collections import OrderedDict, deque
from dataclasses import dataclass
from typing import Any

from rebalance_core.events import Event, classic_member_owner
from rebalance_core.rebalance_reasons import Cause, classify_client_reason, classify_reason
from schemas.events import EventType, RemovalReason


# ----------------------------------------------------------------------------------------- evidence
@dataclass(frozen=True)
class CauseSettings:
    # evidence up to this long before an episode's start explains it (a partition-count change shows
    # after the leader's metadata refresh; a coordinator move's session expiries after a session timeout)
    lookback_ms: int = 60_000
    # ... and this long after it: the 3.x Scala coordinator logs "has left" after the Preparing it caused
    grace_ms: int = 1_000
    evidence_kept: int = 512  # per group (bounded state)
    members_kept: int = 4_096


_EVIDENCE_TYPES = frozenset(
    {
        EventType.MEMBER_REMOVED.value,
        EventType.STATIC_MEMBER_REPLACED.value,
        EventType.POLL_TIMEOUT_EXPIRED.value,
        EventType.LEAVE_SENT.value,
        EventType.JOIN_REQUESTED.value,
        EventType.JOIN_SENT.value,
        EventType.JOIN_RECEIVED.value,
        EventType.TOPIC_METADATA_CHANGED.value,
        EventType.GROUP_LOADED.value,
        EventType.GROUP_UNLOADED.value,
        EventType.COORDINATOR_UNAVAILABLE.value,
    }
)
_COORDINATOR_MOVES = frozenset(
    {EventType.GROUP_LOADED.value, EventType.GROUP_UNLOADED.value, EventType.COORDINATOR_UNAVAILABLE.value}
)
_REMOVAL_CAUSES = {
    RemovalReason.SESSION_TIMEOUT.value: Cause.SESSION_TIMEOUT,
    RemovalReason.LEAVE_GROUP.value: Cause.MEMBER_LEFT,
    RemovalReason.FENCED_STATIC.value: Cause.STATIC_MEMBER_REPLACED,
    RemovalReason.PENDING_SYNC_TIMEOUT.value: Cause.SYNC_TIMEOUT,
    # not rejoining within the rebalance timeout (= max.poll.interval.ms): a slow poll loop
    RemovalReason.REBALANCE_TIMEOUT.value: Cause.POLL_TIMEOUT,
}
# Evidence strength: a coordinator's removal says most, a coordinator move least (it explains only what
# nothing else does).
_RANK = {
    EventType.MEMBER_REMOVED.value: 0,
    EventType.STATIC_MEMBER_REPLACED.value: 1,
    EventType.POLL_TIMEOUT_EXPIRED.value: 2,
    EventType.LEAVE_SENT.value: 3,
    EventType.JOIN_REQUESTED.value: 4,
    EventType.TOPIC_METADATA_CHANGED.value: 5,
    EventType.JOIN_SENT.value: 6,
    EventType.JOIN_RECEIVED.value: 7,
}


@dataclass(frozen=True)
class Evidence:
    ts: int
    event_type: str
    cause: str | None  # Cause value, None: none on its own (a coordinator move)
    member_id: str | None
    detail: str | None  # raw reason / attribute text


@dataclass
class MemberInfo:
    client_id: str | None = None
    host: str | None = None
    instance_id: str | None = None


EPISODE_CAUSE_COLUMNS = (
    "cause",
    "cause_raw_reason",
    "trigger_member_id",
    "trigger_client_id",
    "trigger_host",
)


# event types compared with every event, as plain strings (an enum member's .value is a Python-level property)
_JOIN_RECEIVED = EventType.JOIN_RECEIVED.value
_JOIN_REQUESTED = EventType.JOIN_REQUESTED.value
_JOIN_SENT = EventType.JOIN_SENT.value
_LEAVE_SENT = EventType.LEAVE_SENT.value
_MEMBER_REMOVED = EventType.MEMBER_REMOVED.value
_POLL_TIMEOUT_EXPIRED = EventType.POLL_TIMEOUT_EXPIRED.value
_STATIC_MEMBER_REPLACED = EventType.STATIC_MEMBER_REPLACED.value
_TOPIC_METADATA_CHANGED = EventType.TOPIC_METADATA_CHANGED.value


class CauseTracker:
    """One group's cause evidence and member directory; annotates its episode rows."""

    def __init__(self, settings: CauseSettings | None = None, state: dict | None = None):
        self.settings = settings or CauseSettings()
        self.evidence: deque[Evidence] = deque(maxlen=self.settings.evidence_kept)
        self.members: OrderedDict[str, MemberInfo] = OrderedDict()
        self.known_members: OrderedDict[str, None] = OrderedDict()  # member ids seen joining (bounded)
        self.day_counts: dict[Any, dict[str, int]] = {}
        if state:
            self._restore(state)

    # ------------------------------------------------------------------------------------ observe
    def observe(self, e: Event) -> None:
        self._learn_member(e)
        if e.event_type not in _EVIDENCE_TYPES:
            return
        cause = self._cause_of(e)
        if cause is None and e.event_type not in _COORDINATOR_MOVES:
            return
        detail = e.reason or _attribute_text(e)
        self.evidence.append(
            Evidence(e.ts, e.event_type, cause.value if cause else None, e.member_id, detail)
        )

    def _cause_of(self, e: Event) -> Cause | None:
        t = e.event_type
        if t == _MEMBER_REMOVED:
            if e.member_epoch == -2:  # KIP-848 static member temporarily left: not removed
                return None
            return _REMOVAL_CAUSES.get(e.reason or "")
        if t == _STATIC_MEMBER_REPLACED:
            return Cause.STATIC_MEMBER_REPLACED
        if t == _POLL_TIMEOUT_EXPIRED:
            return Cause.POLL_TIMEOUT
        if t in (_LEAVE_SENT,):
            return classify_client_reason(e.reason) or Cause.MEMBER_LEFT
        if t == _JOIN_REQUESTED:
            return classify_client_reason(e.reason)
        if t == _TOPIC_METADATA_CHANGED:
            return Cause.METADATA_CHANGED
        if t == _JOIN_SENT:
            # a JoinGroup without a member id: a new process (or one whose id was reset)
            return Cause.MEMBER_JOINED if not e.member_id else None
        if t == _JOIN_RECEIVED:
            if e.member_id and e.member_id not in self.known_members:
                self.known_members[e.member_id] = None
                while len(self.known_members) > self.settings.members_kept:
                    self.known_members.popitem(last=False)
                return Cause.MEMBER_JOINED
            return None
        return None

    def _learn_member(self, e: Event) -> None:
        if not e.member_id:
            return
        info = self.members.get(e.member_id)
        if info is None:
            info = self.members[e.member_id] = MemberInfo()
            while len(self.members) > self.settings.members_kept:
                self.members.popitem(last=False)
        if e.client_id and not info.client_id:
            info.client_id = e.client_id
        host = (e.attributes or {}).get("client_host")
        if host:
            info.host = host.lstrip("/")
        if e.group_instance_id:
            info.instance_id = e.group_instance_id

    # ----------------------------------------------------------------------------------- annotate
    def explain(self, reason: str | None, started_at: int | None, ended_at: int | None) -> dict[str, Any]:
        """The cause columns of an episode whose first round's reason is `reason`."""
        from_reason = classify_reason(reason)
        cause = from_reason.cause if from_reason else None
        member = from_reason.member_id if from_reason else None
        instance = from_reason.instance_id if from_reason else None
        window = self._window(started_at, ended_at)
        specific = [ev for ev in window if ev.cause is not None]
        if cause is not None and member is None:
            # the reason names the cause, not the member (KIP-848, member-only logs): the evidence does
            same = [ev for ev in specific if ev.cause == cause.value and ev.member_id]
            if same:
                member = min(same, key=lambda ev: abs(ev.ts - (started_at or 0))).member_id
        if cause is None and specific:
            best = min(
                specific, key=lambda ev: (_RANK.get(ev.event_type, 99), abs(ev.ts - (started_at or 0)))
            )
            cause, member = Cause(best.cause), best.member_id
        elif cause is Cause.MEMBER_LEFT:
            # a LeaveGroup the member sent because its poll timeout expired (pre-3.2 brokers do not say)
            if any(ev.cause == Cause.POLL_TIMEOUT.value and _same(ev.member_id, member) for ev in specific):
                cause = Cause.POLL_TIMEOUT
        elif cause is Cause.LEADER_REJOINED and any(
            ev.cause == Cause.METADATA_CHANGED.value for ev in specific
        ):
            cause = Cause.METADATA_CHANGED
        if cause in (None, Cause.SESSION_TIMEOUT, Cause.LEADER_REJOINED) and self._coordinator_moved(
            started_at
        ):
            cause = Cause.COORDINATOR_MOVED
        cause = cause or Cause.UNKNOWN
        info = self.members.get(member) if member else None
        if info is not None and instance is None:
            instance = info.instance_id
        client = info.client_id if info and info.client_id else None
        if client is None and member and instance is None:
            client = classic_member_owner(member)  # a dynamic classic member id is {client.id}-{UUID}
        return {
            "cause": cause.value,
            "cause_raw_reason": reason,
            "trigger_member_id": member,
            "trigger_client_id": client,
            "trigger_host": info.host if info else None,
        }

    def annotate(self, rows: list[dict]) -> list[dict]:
        """Add the cause columns to `rebalance_episodes` rows (in place) and count them per day."""
        for row in rows:
            started = row.get("started_at")
            ended = row.get("stabilized_at")
            row.update(self.explain(row.get("reason"), started, ended))
            counts = self.day_counts.setdefault(row["event_date"], {})
            counts[row["cause"]] = counts.get(row["cause"], 0) + 1
        return rows

    def add_to_summary(self, rows: list[dict]) -> list[dict]:
        """Put the counts per cause into the `group_daily_summary` rows of their days (the `causes`
        column); a run's counts go out once (like the rest of a run's summary contribution)."""
        for row in rows:
            row["causes"] = self.day_counts.pop(row["event_date"], None) or {}
        return rows

    def _window(self, started_at: int | None, ended_at: int | None) -> list[Evidence]:
        if started_at is None:
            return []
        lo = started_at - self.settings.lookback_ms
        hi = started_at + self.settings.grace_ms
        if ended_at is not None:
            hi = min(hi, max(ended_at, started_at))
        return [ev for ev in self.evidence if lo <= ev.ts <= hi]

    def _coordinator_moved(self, started_at: int | None) -> bool:
        if started_at is None:
            return False
        lo = started_at - self.settings.lookback_ms
        return any(lo <= ev.ts <= started_at and ev.event_type in _COORDINATOR_MOVES for ev in self.evidence)

    # ----------------------------------------------------------------------------------- snapshot
    def snapshot(self) -> dict:
        return {
            "evidence": [[ev.ts, ev.event_type, ev.cause, ev.member_id, ev.detail] for ev in self.evidence],
            "members": [[m, i.client_id, i.host, i.instance_id] for m, i in self.members.items()],
            "known_members": list(self.known_members),
        }

    def _restore(self, state: dict) -> None:
        for item in state.get("evidence", []):
            self.evidence.append(Evidence(*item))
        for member, client, host, instance in state.get("members", []):
            self.members[member] = MemberInfo(client, host, instance)
        self.known_members = OrderedDict.fromkeys(state.get("known_members", []))


def _same(a: str | None, b: str | None) -> bool:
    return a is None or b is None or a == b


def _attribute_text(e: Event) -> str | None:
    attributes = e.attributes or {}
    coordinator = attributes.get("coordinator") or attributes.get("coordinator_id")
    if coordinator:
        return f"coordinator {coordinator}"
    topics = [f"{k[6:]}={v}" for k, v in sorted(attributes.items()) if k.startswith("topic.")]
    return ", ".join(topics) or None
