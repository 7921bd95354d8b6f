"""The cause a rebalance reason names: Kafka's own wording of why a group rebalances, classified.

The coordinator's `prepareRebalance` reason (Scala `GroupCoordinator` 2.1-3.9, Java `GroupMetadataManager`
3.6+, with the member's "; client reason: R" of KIP-800 from 3.2) and a member's own reason
(`AbstractCoordinator.requestRejoin` / `ConsumerCoordinator`, "Request joining group due to: R", and
`maybeLeaveGroup`'s LeaveGroup reasons) to a `Cause`, with the member and static instance it names.
`causes.CauseTracker` adds the evidence around an episode's start to what the reason says.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import Enum


class Cause(str, Enum):
    """What started a rebalance episode (the `cause` column)."""

    MEMBER_JOINED = "member_joined"  # a new member (scale-out, deploy, a restarted or expelled member)
    MEMBER_LEFT = "member_left"  # graceful LeaveGroup (close, unsubscribe)
    SESSION_TIMEOUT = "session_timeout"  # heartbeats stopped: crash, GC pause, network
    POLL_TIMEOUT = "poll_timeout"  # max.poll.interval.ms exceeded: slow processing
    STATIC_MEMBER_REPLACED = "static_member_replaced"  # KIP-345 instance fenced or replaced
    LEADER_REJOINED = "leader_rejoined"  # the leader rejoined (Stable/CompletingRebalance), reason not logged
    SUBSCRIPTION_CHANGED = "subscription_changed"  # a member rejoined with other metadata
    METADATA_CHANGED = "metadata_changed"  # partitions added, topic created or deleted
    COORDINATOR_MOVED = "coordinator_moved"  # the group's coordinator failed over
    ASSIGNMENT_STORE_FAILED = "assignment_store_failed"  # "error when storing group assignment"
    SYNC_TIMEOUT = "sync_timeout"  # members removed for not sending SyncGroup (pending sync expiry)
    ENFORCED = "enforced"  # the application called enforceRebalance (Streams, Connect)
    GROUP_CONVERTED = "group_converted"  # KIP-848 group converted between consumer and classic
    UNKNOWN = "unknown"


@dataclass(frozen=True)
class ReasonCause:
    cause: Cause
    member_id: str | None = None
    instance_id: str | None = None


# Kafka's prepareRebalance reasons. Scala GroupCoordinator (2.1-3.9; no reason before 2.1), Java
# group-coordinator GroupMetadataManager (3.6+). "; client reason: R" is appended from 3.2 (KIP-800).
_MEMBER = r"(?P<member>[^\s;,]+?)"
_COORDINATOR_RULES: tuple[tuple[re.Pattern, Cause], ...] = tuple(
    (re.compile(regex, re.IGNORECASE), cause)
    for regex, cause in (
        # doSyncGroup: the leader's assignment could not be written to __consumer_offsets
        (
            rf"error(?: \S+)? when storing group assignment during SyncGroup \(member: {_MEMBER}\)",
            Cause.ASSIGNMENT_STORE_FAILED,
        ),
        # onExpireHeartbeat -> removeMemberAndUpdateGroup (Java: "...expiration." with a dot)
        (rf"removing member {_MEMBER}\.? on heartbeat expiration", Cause.SESSION_TIMEOUT),
        # handleLeaveGroup (Scala 2.1-3.9)
        (rf"removing member {_MEMBER} on LeaveGroup", Cause.MEMBER_LEFT),
        # Java classicGroupLeaveMembers: "explicit `LeaveGroup` request for (m1, m2) members."
        (r"explicit `?LeaveGroup`? request for \((?P<member>[^)]*)\) members", Cause.MEMBER_LEFT),
        # KAFKA-13113 (3.1+): members that did not SyncGroup in time
        (r"Removing (?P<member>.+?) on pending sync request expiration", Cause.SYNC_TIMEOUT),
        # updateStaticMemberAndRebalance (2.4+)
        (
            rf"Updating metadata for static member {_MEMBER} with instance id (?P<instance>[^\s;]+)",
            Cause.STATIC_MEMBER_REPLACED,
        ),
        (
            rf"selectedProtocol will change because static member {_MEMBER} with instance id "
            r"(?P<instance>[^\s;]+)",
            Cause.STATIC_MEMBER_REPLACED,
        ),
        # handleJoinGroup in Stable/CompletingRebalance: the leader rejoins (2.1-2.x "leader", 3.x "Leader")
        (rf"Leader {_MEMBER} re-joining group", Cause.LEADER_REJOINED),
        # ... a member rejoins with metadata (subscription, owned partitions, user data) that differs
        (rf"Updating metadata for member {_MEMBER}(?: during|;|$)", Cause.SUBSCRIPTION_CHANGED),
        # addMemberAndRebalance ("instanceid" in 2.3, "instance id" from 2.4, none before)
        (
            rf"Adding new member {_MEMBER}(?: with group instance ?id (?P<instance>[^\s;]+))?(?:;|$)",
            Cause.MEMBER_JOINED,
        ),
        # a known (pending) member's JoinGroup in Empty/PreparingRebalance (2.5+)
        (rf"Member {_MEMBER} joining group during", Cause.MEMBER_JOINED),
        # onGroupLoaded: a group loaded over group.max.size is rebalanced to shed members
        (r"Freshly-loaded group .*over capacity", Cause.COORDINATOR_MOVED),
        # KIP-848 online migration (3.9+ Java GroupMetadataManager)
        (r"(?:Downgrade|Upgrade) group \S+ from \w+ to \w+", Cause.GROUP_CONVERTED),
    )
)

# A member's own reasons: requestRejoin(reason) in AbstractCoordinator / ConsumerCoordinator (3.0+,
# "Request joining group due to: R"), LeaveGroup reasons (maybeLeaveGroup, 3.2+ also in the broker's
# "client reason"). None: the reason names no cause (another member's rebalance, a KIP-394 handshake,
# a cooperative follow-up round).
_COORDINATOR_LOST = (
    r"NOT_COORDINATOR|COORDINATOR_NOT_AVAILABLE|NotCoordinator|CoordinatorNotAvailable|"
    r"coordinator is not (?:available|aware)|Disconnect"
)
_CLIENT_RULES: tuple[tuple[re.Pattern, Cause | None], ...] = tuple(
    (re.compile(regex, re.IGNORECASE), cause)
    for regex, cause in (
        (r"poll timeout (?:has )?expired|max\.poll\.interval", Cause.POLL_TIMEOUT),
        (r"consumer is being closed|pro-actively leaving|unsubscribe|closing|shutdown", Cause.MEMBER_LEFT),
        (r"metadata has changed|cached metadata", Cause.METADATA_CHANGED),
        (r"subscription has changed|does not match the current subscription", Cause.SUBSCRIPTION_CHANGED),
        (rf"rebalance failed due to .*(?:{_COORDINATOR_LOST})", Cause.COORDINATOR_MOVED),
        (rf"encountered (?:{_COORDINATOR_LOST})", Cause.COORDINATOR_MOVED),
        (r"FENCED_INSTANCE_ID|FencedInstanceId", Cause.STATIC_MEMBER_REPLACED),
        # the member was expelled (UNKNOWN_MEMBER_ID, ILLEGAL_GENERATION): it rejoins as a new member
        (r"UNKNOWN_MEMBER_ID|ILLEGAL_GENERATION|UnknownMemberId|IllegalGeneration", Cause.MEMBER_JOINED),
        (r"rebalance enforced by user|enforceRebalance|enforce", Cause.ENFORCED),
        # KIP-848 logs no reason: the replay names the epoch bump's cause (consumer.coordinator)
        (r"^member joined$", Cause.MEMBER_JOINED),
        (r"^member left$", Cause.MEMBER_LEFT),
        (r"^member session expired$", Cause.SESSION_TIMEOUT),
        (r"^member failed to revoke within the rebalance timeout$", Cause.POLL_TIMEOUT),
        (r"^subscription changed$", Cause.SUBSCRIPTION_CHANGED),
        (r"^topic metadata changed$", Cause.METADATA_CHANGED),
        (
            r"group is already rebalancing|need to re-join with the given member-id|revoke partitions|"
            r"rebalance failed|not provided",
            None,
        ),
    )
)
_CLIENT_REASON = re.compile(r";\s*client reason:\s*(?P<client>.*)$", re.IGNORECASE | re.DOTALL)
# Coordinator causes a client reason may make precise (the broker only saw a rejoin or a leave).
_REFINABLE = frozenset({Cause.LEADER_REJOINED, Cause.SUBSCRIPTION_CHANGED, Cause.MEMBER_LEFT})
_NO_INSTANCE = frozenset({"None", "null", "Optional.empty", ""})


def split_client_reason(reason: str | None) -> tuple[str, str | None]:
    """A coordinator's rebalance reason and the member's own reason it quotes: the broker appends the
    JoinGroup's or LeaveGroup's reason as "; client reason: R" (3.2+, KIP-800: GroupCoordinator,
    GroupMetadataManager); R is "not provided" for a client that sends none (2.x-3.1) and "" for one that
    sends an empty one (a Connect worker). (head, R); R None when the reason quotes none (an older broker,
    or a cause of the coordinator's own)."""
    if not reason:
        return reason or "", None
    m = _CLIENT_REASON.search(reason)
    if m is None:
        return reason, None
    return reason[: m.start()], m.group("client").strip()


def classify_client_reason(reason: str | None) -> Cause | None:
    """The cause a member's own reason names; None when it names none (or says nothing)."""
    if not reason:
        return None
    for pattern, cause in _CLIENT_RULES:
        if pattern.search(reason):
            return cause
    return None


def classify_reason(reason: str | None) -> ReasonCause | None:
    """The cause a rebalance reason names (coordinator wording of any version, or a member's own
    reason), with the member and static instance it names; None when it names none."""
    if not reason:
        return None
    head, client = split_client_reason(reason)
    for pattern, cause in _COORDINATOR_RULES:
        m = pattern.search(head)
        if not m:
            continue
        groups = m.groupdict()
        member = (groups.get("member") or "").strip() or None
        instance = _instance(groups.get("instance"))
        refined = classify_client_reason(client) if cause in _REFINABLE else None
        return ReasonCause(refined or cause, member, instance)
    own = classify_client_reason(reason)
    return ReasonCause(own) if own is not None else None


def _instance(text: str | None) -> str | None:
    """`Some(pod-1)` / `Optional[pod-1]` / `pod-1` -> pod-1; `None`, `null`, `Optional.empty` -> None."""
    if text is None:
        return None
    text = text.strip().rstrip(".;")
    m = re.fullmatch(r"(?:Some\((.*)\)|Optional\[(.*)\])", text)
    if m:
        text = m.group(1) or m.group(2)
    return None if text in _NO_INSTANCE else text
