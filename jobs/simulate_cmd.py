"""`rebalance-replay simulate`: play a scenario (membership timeline + settings, YAML) through the
protocol model and write the canonical events both sides would log, as JSON lines.

    rebalance-replay simulate --scenario conf/simulations/02_cooperative_join.yaml --out events.jsonl
    rebalance-replay simulate --scenario my.yaml --seed 7 --out -        # to stdout

The scenario format is documented in rebalance_core/timeline.py (timeline) and
rebalance_core/simulate.py (`settings:` = SimulationSettings fields). The same scenario and seed
always give the same events. `--truth FILE` also writes the tables a correct replay must produce
(JSON: table -> rows), the simulator's ground truth.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import sys
from pathlib import Path
from typing import Any

import yaml

from jobs.usage import UsageError
from rebalance_core.simulate import SimulationError, load_scenario, simulate
from rebalance_core.timeline import TimelineError


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--scenario", required=True, help="scenario YAML (timeline + settings)")
    parser.add_argument("--out", required=True, help="events as JSON lines ('-': stdout)")
    parser.add_argument("--seed", type=int, help="overrides the scenario's settings.seed")
    parser.add_argument("--truth", help="also write the ground-truth tables here (JSON)")


def main(args: argparse.Namespace) -> int:
    path = Path(args.scenario)
    try:
        doc = yaml.safe_load(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise UsageError(f"cannot read scenario {path}: {exc.strerror or exc}") from None
    except yaml.YAMLError as exc:
        raise UsageError(f"scenario {path} is not valid YAML: {' '.join(str(exc).split())}") from None
    try:
        timeline, settings = load_scenario(doc, seed=args.seed)
    except (TimelineError, SimulationError) as exc:
        raise UsageError(f"scenario {path}: {exc}") from None
    result = simulate(timeline, settings)
    lines = "".join(json.dumps(e.to_json_dict(), separators=(",", ":")) + "\n" for e in result.events)
    _write(args.out, lines)
    if args.truth:
        _write(args.truth, json.dumps(result.truth, default=_json_value, indent=1) + "\n")
    generations = len(result.truth["generations"])
    episodes = len(result.truth["rebalance_episodes"])
    where = "stdout" if args.out == "-" else args.out
    print(
        f"simulate: {len(result.events)} events, {generations} generations, {episodes} rebalance episodes -> {where}",
        file=sys.stderr,
    )
    for note in result.unobservable:
        print(f"simulate: note: not visible in the events: {note}", file=sys.stderr)
    return 0


def _write(target: str, text: str) -> None:
    if target == "-":
        sys.stdout.write(text)
        return
    try:
        Path(target).write_text(text, encoding="utf-8")
    except OSError as exc:
        raise UsageError(f"cannot write {target}: {exc.strerror or exc}") from None


def _json_value(value: Any) -> Any:
    if isinstance(value, dt.date):
        return value.isoformat()
    raise TypeError(f"not JSON serialisable: {type(value).__name__}")
