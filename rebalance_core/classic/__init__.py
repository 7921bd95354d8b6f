"""The classic group protocol (JoinGroup/SyncGroup/Heartbeat/LeaveGroup).

Modelled on Kafka's `group-coordinator/.../group/classic/` (ClassicGroup, ClassicGroupState,
ClassicGroupMember) and the 2.x/3.x Scala `GroupCoordinator`: the coordinator state machine, the
HashMap member order that picks a new leader, Kafka Connect's KIP-415 delayed rebalance
(`IncrementalCooperativeAssignor`) and the simulator's event queue.
"""
