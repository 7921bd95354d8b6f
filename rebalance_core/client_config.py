"""Clients' own group settings, from their config dumps (`client_config` events, docs/events.md), as the
coordinator would see them. Pure functions over a plain dict (part of a replayer's saved state):
{key: record}, key = the client id, else the group.instance.id, else "" (a dump whose client the log
does not name: the group's members with no dump of their own), record = the event's settings as text.

Where members disagree the coordinator's view wins, as Kafka computes it:
* session timeout: per member (classic: each JoinGroup carries its own session.timeout.ms, the coordinator
  expires each member by its own, GroupCoordinator.completeAndScheduleNextHeartbeatExpiration); KIP-848
  groups use the broker's group.consumer.session.timeout.ms instead, never the client's.
* assignor: the protocol every member supports that most members prefer (GroupMetadata.selectProtocol /
  ClassicGroup.selectProtocol: candidates = the protocols all members offer, each member votes for its
  first candidate).
* rebalance protocol: a consumer revokes eagerly unless every assignor it has supports COOPERATIVE
  (ConsumerCoordinator's constructor), so one eager member makes the group's rebalances eager.
"""

from __future__ import annotations

from collections import Counter

from rebalance_core.events import Event, classic_member_owner

_KEPT_ATTRIBUTES = (
    "session_timeout_ms",
    "rebalance_timeout_ms",
    "max_poll_interval_ms",
    "heartbeat_interval_ms",
    "assignors",
    "rebalance_protocol",
    "group_protocol",
    "scheduled_rebalance_max_delay_ms",
)

ClientConfigs = dict[str, dict[str, str]]


def note(configs: ClientConfigs, e: Event) -> None:
    """Keep a client's settings (a later dump of the same client replaces the earlier: it restarted)."""
    attributes = e.attributes or {}
    record = {name: attributes[name] for name in _KEPT_ATTRIBUTES if attributes.get(name)}
    if e.protocol_name:
        record["protocol_name"] = e.protocol_name
        record.setdefault("assignors", e.protocol_name)
    if e.client_id:
        record["client_id"] = e.client_id
    if e.group_instance_id:
        record["group_instance_id"] = e.group_instance_id
    configs[e.client_id or e.group_instance_id or ""] = record


def of_member(
    configs: ClientConfigs, member_id: str | None, client_id: str | None = None, instance: str | None = None
) -> dict[str, str] | None:
    """A member's own settings: by its client id, its instance id, or the owner its classic member id
    names (`{client.id}-{UUID}`, `{group.instance.id}-{UUID}`); else the unnamed dump's, if any."""
    owner = classic_member_owner(member_id or "")
    for key in (client_id, instance, owner):
        if key and key in configs:
            return configs[key]
    for record in configs.values():  # a static member's id is made from its instance id, not its client id
        if record.get("group_instance_id") in {instance, owner} - {None}:
            return record
    return configs.get("")


def session_timeout_ms(
    configs: ClientConfigs, member_id: str | None, client_id: str | None = None, instance: str | None = None
) -> int | None:
    record = of_member(configs, member_id, client_id, instance)
    value = (record or {}).get("session_timeout_ms", "")
    return int(value) if value.isdigit() else None


def own_max_poll_interval_ms(
    configs: ClientConfigs, member_id: str | None, client_id: str | None = None, instance: str | None = None
) -> int | None:
    """A member's max.poll.interval.ms from a dump of its own (not the unnamed one, which may be another
    member's): the poll timer of its client (ConsumerConfig; the KIP-848 client's AbstractHeartbeatRequestManager
    leaves the group when it expires, and sends it as the member's rebalance timeout). None: no dump says."""
    record = of_member(configs, member_id, client_id, instance)
    if record is None or record is configs.get(""):
        return None
    value = record.get("max_poll_interval_ms", "")
    return int(value) if value.isdigit() else None


def selected_protocol(configs: ClientConfigs) -> str | None:
    """The protocol (assignor) the coordinator would select for these members, None when they offer no
    common one (Kafka refuses such a member: INCONSISTENT_GROUP_PROTOCOL) or none says."""
    offers = [record["assignors"].split(",") for record in configs.values() if record.get("assignors")]
    if not offers:
        return None
    candidates = set(offers[0]).intersection(*offers[1:])
    votes = Counter(next(p for p in offer if p in candidates) for offer in offers if candidates)
    if not votes:
        return None
    best = max(votes.values())
    return next(p for offer in offers for p in offer if votes.get(p) == best)  # ties: the first offered


def rebalance_protocol(configs: ClientConfigs) -> str | None:
    """eager when any member's assignors make it revoke eagerly; cooperative when every known one is."""
    said = {record.get("rebalance_protocol") for record in configs.values()} - {None}
    if "eager" in said:
        return "eager"
    return "cooperative" if said == {"cooperative"} else None


def group_rebalance_timeout_ms(
    configs: ClientConfigs, members: list[tuple[str | None, str | None, str | None]]
) -> int | None:
    """The longest join phase the group's members allow: the coordinator waits for the group's
    rebalanceTimeoutMs, the largest of its members' (GroupMetadata.rebalanceTimeoutMs; DelayedJoin), or
    for an Empty group max(group.initial.rebalance.delay.ms, it) (InitialDelayedJoin). `members` = (member
    id, client id, group.instance.id) of every member that may be in the group: None unless each has a dump
    of its own (not the unnamed one) stating it. The dumps present are not the group's: a long-running
    member's dump is usually rotated away, and its timeout may be the longest."""
    if not members:
        return None
    values = []
    for member_id, client_id, instance in members:
        record = of_member(configs, member_id, client_id, instance)
        value = (record or {}).get("rebalance_timeout_ms", "")
        if record is None or record is configs.get("") or not value.isdigit():
            return None
        values.append(int(value))
    return max(values)
