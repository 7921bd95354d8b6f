"""Hand-written Kafka log lines for the tests, written once: one builder per logger's line layout (the
2.x/3.x Scala GroupCoordinator's server.log, the classic consumer's ConsumerCoordinator, Kafka Connect's
WorkerCoordinator) and the messages several tests write (the member's `Generation{...}`, the Scala
GroupCoordinator's rebalance lines, a client's config dump, a Connect worker's join). `ts` is the log's
own time text, 'HH:MM:SS,mmm', on `day`."""

from __future__ import annotations

DAY = "2024-11-08"
SCALA_COORDINATOR = "kafka.coordinator.group.GroupCoordinator"
CONSUMER_COORDINATOR = "org.apache.kafka.clients.consumer.internals.ConsumerCoordinator"
WORKER_COORDINATOR = "org.apache.kafka.connect.runtime.distributed.WorkerCoordinator:605"
# The broker lines below are of group g1, whose coordinator is partition 12 of __consumer_offsets.
OFFSETS = "(__consumer_offsets-12)"


def scala_line(ts: str, message: str, broker: int = 1, day: str = DAY) -> str:
    """One 2.x/3.x Scala GroupCoordinator line in Kafka's shipped layout."""
    return f"[{day} {ts}] INFO [GroupCoordinator {broker}]: {message} ({SCALA_COORDINATOR})"


def consumer_line(
    ts: str,
    client: str,
    message: str,
    *,
    group: str = "g1",
    day: str = DAY,
    instance: str | None = None,
    logger: str = CONSUMER_COORDINATOR,
) -> str:
    """One line of a classic consumer's coordinator (AbstractCoordinator's logContext: "[Consumer
    instanceId=I, clientId=C, groupId=G] ", the instance only for a static member)."""
    prefix = f"instanceId={instance}, " if instance else ""
    return f"[{day} {ts}] INFO [Consumer {prefix}clientId={client}, groupId={group}] {message} ({logger})"


def worker_line(
    ts: str, worker: str, message: str, *, day: str = "2024-01-01", logger: str = WORKER_COORDINATOR
) -> str:
    """One line of a Connect worker of group g (WorkerCoordinator's logContext "[Worker clientId=W,
    groupId=G] ")."""
    return f"[{day} {ts}] INFO [Worker clientId={worker}, groupId=g] {message} ({logger})"


def generation_text(n: int, member: str, protocol: str = "range") -> str:
    """A member's generation as AbstractCoordinator.Generation.toString prints it."""
    return f"Generation{{generationId={n}, memberId='{member}', protocol='{protocol}'}}"


# The Scala GroupCoordinator's lines of group g1 (GroupCoordinator.prepareRebalance, onCompleteJoin,
# doSyncGroup, doNewMemberJoinGroup / doStaticNewMemberJoinGroup).


def prepare_rebalance(ts: str, old_generation: int, reason: str) -> str:
    return scala_line(
        ts,
        f"Preparing to rebalance group g1 in state PreparingRebalance with old generation {old_generation} "
        f"{OFFSETS} (reason: {reason})",
    )


def stabilized(ts: str, generation: int, members: int) -> str:
    return scala_line(ts, f"Stabilized group g1 generation {generation} {OFFSETS} with {members} members")


def assignment_received(ts: str, leader: str | None, generation: int, members: int, static: int = 0) -> str:
    """The leader's SyncGroup; 2.x names no leader (`leader` None)."""
    leader = f" {leader}" if leader is not None else ""
    return scala_line(
        ts,
        f"Assignment received from leader{leader} for group g1 for generation {generation}. The group has "
        f"{members} members, {static} of which are static.",
    )


def member_failed(ts: str, member: str) -> str:
    """A member's session expired (GroupCoordinator.onMemberFailure)."""
    return scala_line(ts, f"Member {member} in group g1 has failed, removing it from the group")


def pending_join(ts: str, member: str, state: str) -> str:
    """KIP-394: a dynamic member's first JoinGroup, without a member id."""
    return scala_line(
        ts,
        f"Dynamic member with unknown member id joins group g1 in {state} state. Created a new member id "
        f"{member} and request the member to rejoin with this id.",
    )


def static_join(ts: str, instance: str, member: str, state: str) -> str:
    """KIP-345: a static member's JoinGroup without a member id (a new instance or a restart)."""
    return scala_line(
        ts,
        f"Static member with groupInstanceId={instance} and unknown member id joins group g1 in {state} state. "
        f"Created a new member id {member} for this member and add to the group.",
    )


# A client's config dump (AbstractConfig.logAll): "ConsumerConfig values: " (or Connect's "DistributedConfig
# values: "), then one "\tkey = value" line per setting, keys sorted.
CONSUMER_CONFIG = "org.apache.kafka.clients.consumer.ConsumerConfig"
ASSIGNOR = "org.apache.kafka.clients.consumer.{}"


def config_dump(
    ts: str, config_class: str, settings: dict[str, str], logger: str | None = CONSUMER_CONFIG
) -> list[str]:
    """Kafka's shipped log4j layout (`[%d] %p %m (%c)%n`): the logger follows the dump's last line (None: a
    layout that prints no logger); `ts` is the whole date and time."""
    body = [f"\t{key} = {value}" for key, value in sorted(settings.items())]
    if logger is not None:
        body[-1] += f" ({logger})"
    return [f"[{ts}] INFO {config_class} values: ", *body]


def consumer_2x(client_id: str = "c-1", group_id: str = "g1", **more: str) -> dict[str, str]:
    """A 2.4 consumer's settings (partition.assignment.strategy set by class name: printed as given)."""
    return {
        "auto.offset.reset": "latest",
        "client.id": client_id,
        "group.id": group_id,
        "group.instance.id": "null",
        "heartbeat.interval.ms": "3000",
        "max.poll.interval.ms": "300000",
        "partition.assignment.strategy": f"[{ASSIGNOR.format('RoundRobinAssignor')}]",
        "session.timeout.ms": "10000",
        **more,
    }


def consumer_3x(client_id: str = "c-1", group_id: str = "g1", **more: str) -> dict[str, str]:
    """A 3.7+ consumer with its defaults (a Class list prints `class …`) and group.protocol."""
    return {
        "client.id": client_id,
        "group.id": group_id,
        "group.instance.id": "i-1",
        "group.protocol": "classic",
        "group.remote.assignor": "null",
        "heartbeat.interval.ms": "3000",
        "max.poll.interval.ms": "300000",
        "partition.assignment.strategy": f"[class {ASSIGNOR.format('RangeAssignor')}, "
        f"class {ASSIGNOR.format('CooperativeStickyAssignor')}]",
        "session.timeout.ms": "45000",
        **more,
    }


# A Connect worker's messages (WorkerCoordinator, DistributedHerder.onAssigned; protocol 'sessioned').


def worker_joined(
    generation_id: int, member: str, leader: str, leader_url: str, revoked_connectors: str = ""
) -> list[str]:
    """The worker's join and sync responses, then the assignment it got (KIP-415, protocol version 2)."""
    gen = generation_text(generation_id, member, "sessioned")
    return [
        f"Successfully joined group with generation {gen}",
        f"Successfully synced group in generation {gen}",
        f"Joined group at generation {generation_id} with protocol version 2 and got assignment: "
        f"Assignment{{error=0, leader='{leader}', leaderUrl='{leader_url}', offset=1, "
        f"connectorIds=[], taskIds=[], revokedConnectorIds=[{revoked_connectors}], revokedTaskIds=[], "
        "delay=0} with rebalance delay: 0",
    ]


WORKER_REJOINS = ["Rebalance started", "(Re-)joining group"]
