"""The classic group protocol (JoinGroup/SyncGroup/Heartbeat/LeaveGroup).

Modelled on Kafka's `group-coordinator/.../group/classic/` (ClassicGroup, ClassicGroupState,
ClassicGroupMember) and the 2.x/3.x Scala `GroupCoordinator`: the coordinator state machine
(`coordinator`, its members `group_membership`), the HashMap member order that picks a new leader,
Kafka Connect's KIP-415 delayed rebalance (`IncrementalCooperativeAssignor`), and the simulator of both
sides (`simulator`: its run loop, with its parts `sim_join` / `sim_coordinator` the coordinator,
`sim_member` / `sim_member_join` the member, `sim_worker` a Connect worker, `sim_state` their records;
its clock is `rebalance_core.sim_queue`), and the replayer
of a group's logged events (`replayer.GroupReplayer`: state, interface and routing, with its parts
`replay_coordinator` the coordinator's lines, `replay_members` / `replay_join` / `replay_sync` /
`replay_leave` a member's lines, `replay_rounds` / `replay_round_end` rounds and episodes,
`replay_member_list` a generation's member list in members' logs, `unanswered_joins` the JoinGroups no
line answered, `replay_ownership` assignments and ownership, `replay_state` its records and checkpoint codec).
"""
