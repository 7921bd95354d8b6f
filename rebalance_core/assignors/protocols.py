"""The rebalance protocol behind each protocol name a classic group selects (Kafka's
`ConsumerPartitionAssignor.RebalanceProtocol`, KIP-429): the consumer's assignors
(`supportedProtocols`: only CooperativeStickyAssignor supports COOPERATIVE), Kafka Streams'
`StreamsPartitionAssignor` ("stream", cooperative) and Kafka Connect's protocols
(`ConnectProtocolCompatibility`: EAGER's protocol is named "default"; COMPATIBLE and SESSIONED run the
IncrementalCooperativeAssignor, KIP-415), and the protocol type Connect's workers join with. One
definition for the replayer, the log extractors, the simulator and the what-if.
"""

from __future__ import annotations

# the JoinGroup protocol type of Connect's workers (WorkerCoordinator.protocolType)
CONNECT_PROTOCOL_TYPE = "connect"
# Connect protocol name -> subprotocol version (ConnectProtocolCompatibility); the eager `default`
# (EagerAssignor) is not modelled
CONNECT_PROTOCOLS: dict[str, int] = {"compatible": 1, "sessioned": 2}
KIP415_PROTOCOLS = frozenset(CONNECT_PROTOCOLS)  # Connect's IncrementalCooperativeAssignor
# Protocol names whose rebalances are cooperative (KIP-429 consumer, KIP-415 Connect, Streams); the
# rest of the classic consumer assignors are eager. Connect's eager protocol is called "default".
COOPERATIVE_PROTOCOLS = frozenset({"cooperative-sticky", "sessioned", "compatible", "stream"})
EAGER_PROTOCOLS = frozenset({"range", "roundrobin", "sticky", "default"})


def rebalance_protocol_of(protocol_name: str | None) -> str | None:
    """eager | cooperative from a selected protocol name; None when the name says nothing."""
    if not protocol_name:
        return None
    if protocol_name in COOPERATIVE_PROTOCOLS:
        return "cooperative"
    if protocol_name in EAGER_PROTOCOLS:
        return "eager"
    return None
