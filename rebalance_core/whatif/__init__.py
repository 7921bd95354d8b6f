"""What-if replays: a group's own membership timeline under another assignor, protocol or setting.

"What would last night's deploy have cost with cooperative-sticky / static membership / a longer
session timeout / the new consumer protocol?" is answered from the group's actual canonical events in
four steps:

1. extract (`TimelineExtractor`, extract.py): the membership timeline the events show, as the simulator's
   `Timeline`: who joined, left, crashed, bounced, paused, changed subscription, and partition count
   changes, with their instants; plus the group's actual settings (assignor, protocol, timeouts, static
   ids: settings.py) and its latency model (`rebalance_core.latency`, fitted from the events). The
   extractor's parts: incarnations.py (member ids and join phases), coordinator_side.py,
   coordinator_kip848.py and member_side.py (what the broker's and each member's lines show), topics.py
   (partition counts), actions.py and transitions.py (incarnations -> timeline actions), view.py (what
   the input's view cannot show);
2. simulate: the timeline under a `Scenario` (the actual settings with some changed) through the
   classic simulator (`rebalance_core.simulate`) or the KIP-848 one (`rebalance_core.consumer`);
3. measure: the simulated events go through the same reconstructor as the actual ones, seen through the
   same lens: only the sides (coordinator / each member's own log) the actual input had, and nothing
   before the actual input's first event. So a scenario and the actual are measured by the same code
   with the same blind spots;
4. compare (`compare_daily`): per group and date, actual vs scenario for the measures of
   `schemas.tables.COMPARED_MEASURES`, with deltas = scenario - actual (WHATIF_COMPARISON rows).

From events to timeline actions (instants are the process's own: "when it happened", not "when the
coordinator noticed"; member-side events give them exactly, coordinator-side ones through the latency
model and the session timeout):

    event evidence                                                timeline action
    a new member id joins (member join_sent without id /          join (at the JoinGroup; the process started
      coordinator join_received of an unknown id; KIP-848         there); members already in the group when
      JOINING; a member new to a later full assignment; a        the input starts join during a warm-up
      member first listed by a generation whose rebalance the     (a dynamic member added by the coordinator
      input shows start, when who was in the group before is     joined 1.5 join round trips earlier:
      known: generation 1, or an earlier generation listed)       KIP-394's MEMBER_ID_REQUIRED first)
    LeaveGroup (member leave_sent / member_removed leave_group)   leave, or restart (graceful) when the same
                                                                  process joins again within bounce_window
    session expiry (member_removed session_timeout)               crash at expiry - session.timeout.ms (its
                                                                  last heartbeat), or restart (killed) when
                                                                  the process is back within that timeout
    expiry, then proof the process lived on (its own log:         pause kind gc from its last heartbeat to its
      partitions_lost, FENCED; its rejoin's client reason         revival
      "encountered UNKNOWN_MEMBER_ID")
    poll timeout (poll_timeout_expired; LeaveGroup or rejoin      pause kind poll from expiry -
      with client reason "poll timeout"; removal on the           max.poll.interval.ms to the rejoin
      rebalance timeout)
    removal on the rebalance timeout ("removed dynamic members    stall (its poll loop stalls for good just
      who haven't joined") and the process never back             after that join phase began; its heartbeat
                                                                  thread keeps its session)
    static replacement (static_member_replaced, KIP-345)          restart of that instance: from its graceful
                                                                  close when its log shows one, from the first
                                                                  rebalance it missed, else down 0 (the crash
                                                                  instant is in no log)
    a member missing from a later full assignment, no removal     leave (no log of its own) or crash (its log
      logged (member logs only, KIP-848 target assignments)       went silent) before that rebalance
    a rejoin with another subscription                            subscribe
    a rejoin with the client reason "rebalance enforced by user"  rebalance (KafkaConsumer.enforceRebalance)
    topic_metadata_changed / partitions beyond a known count      partitions

A process is a consumer across restarts: its group.instance.id when static, else its client id (the
simulator names processes the same way); two members with the same client id at the same time are two
processes (`client#2`). Everything extraction had to assume is in `ExtractedGroup.notes`.

What the events cannot show, a what-if cannot replay: a GC pause or slow poll that caused no event (it
stayed below the actual timeouts) is not in the timeline, so a scenario with *shorter* timeouts does
not see it; heartbeat.interval.ms is not logged (ExtractionOptions gives it); KIP-848 logs do not say
whose subscription changed. A what-if replays the run's input afresh (no state carried from an earlier
run), and simulates until the group settles, so a scenario's cost can fall on the day after the input.

Sanity anchor: the scenario equal to the actual settings (`Scenario("as-actual")`) reproduces the actual
measures: exactly (event for event) for simulator-produced input with both sides logged; with the
coordinator's log only, counts exactly and times within 5 % + 100 ms; a KIP-848 group within a heartbeat
interval per rebalance (tests/core/test_whatif_anchor.py). Member logs alone, and inputs that start
mid-life, are approximations (their first rebalance replays with unknown heartbeat phases).
Every group gets this model check on real input too (rebalance_core.whatif.compare: counts exactly, times
within max(50 ms, 5 %)); a group that fails it, or whose events name no member or span more than
extraction.max_span_ms, says so on its rows and is ranked by no report (tests/core/test_whatif_fixtures.py).
Where the input's view cannot support the check, the status is `not_comparable` with the reason, also
unranked: the coordinator counts members no line names; member logs only, none listing the group's
members, show a rebalance no logged member started; a cooperative group with no partition count known.
Where only some measures of the actual cannot check the model (a KIP-848 input opening at an epoch's target,
whose bump's cause is in no line; a member's state line a later previousEpoch proves missing, which makes
the actual's partition times upper bounds), those are left out, the rest must agree, and the status is
`not_comparable` naming them with the reason (ExtractedGroup.incomparable).

Scenario rules that follow Kafka rather than the actual run: KIP-415 (scheduled_rebalance_max_delay_ms)
is Kafka Connect's and not applicable to consumer groups; a Connect worker group (protocol compatible or
sessioned) runs Connect's IncrementalCooperativeAssignor in every scenario, with the largest delay its
assignments carried as its scheduled.rebalance.max.delay.ms, and gets no numbers for a consumer assignor,
the eager protocol or static membership; under KIP-848 a static member killed and
restarted at once is refused (UNRELEASED_INSTANCE_ID) until its old member's session expired.
"""

from __future__ import annotations

from rebalance_core.whatif.compare import compare_daily
from rebalance_core.whatif.config import (
    ACTUAL,
    PROTOCOLS,
    SERVER_ASSIGNORS,
    ExtractionOptions,
    Scenario,
    WhatIfConfig,
    WhatIfError,
    load_whatif,
)
from rebalance_core.whatif.extract import ExtractedGroup, TimelineExtractor
from rebalance_core.whatif.group import GroupWhatIf, ScenarioOutcome, whatif
from rebalance_core.whatif.plan import (
    ASSUMPTION,
    NOT_APPLICABLE,
    NotApplicable,
    ScenarioPlan,
    as_observed,
    plan,
    replay_events,
    run_scenario,
    simulate_plan,
)
from rebalance_core.whatif.settings import ActualSettings

__all__ = [
    "ACTUAL",
    "ASSUMPTION",
    "NOT_APPLICABLE",
    "PROTOCOLS",
    "SERVER_ASSIGNORS",
    "ActualSettings",
    "ExtractedGroup",
    "ExtractionOptions",
    "GroupWhatIf",
    "NotApplicable",
    "Scenario",
    "ScenarioOutcome",
    "ScenarioPlan",
    "TimelineExtractor",
    "WhatIfConfig",
    "WhatIfError",
    "as_observed",
    "compare_daily",
    "load_whatif",
    "plan",
    "replay_events",
    "run_scenario",
    "simulate_plan",
    "whatif",
]
