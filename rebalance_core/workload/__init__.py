"""Realistic workloads for benchmarks: a fleet of consumer groups over days, as simulator runs.

Pure and deterministic (no I/O, no clock): a seed gives the same fleet, the same timelines and, through
the seeded simulators, the same events. `jobs/generate.py` writes the files.

Two steps, one module each:
- `fleet`: planning. The groups of a fleet (`GroupPlan`: size, kind, assignor, topics, coordinator,
  timeouts) and what happens to each over the days (`Incident`: deploys, crashes, pauses, autoscaling,
  partition increases).
- `segments`: running a plan. The incidents laid out as simulator timelines in compressed time
  (`Segment`), each run through the classic or the KIP-848 simulator and moved back to real time,
  and the segments joined into one history per group (`GroupStream`).
"""
