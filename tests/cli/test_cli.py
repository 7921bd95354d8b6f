"""The `rebalance-replay` command itself: building its parser, --version, the verbs it lists."""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

import pytest

from jobs.cli import VERBS, build_parser, main

REPO = Path(__file__).resolve().parents[2]
# What only other verbs need: none of it may be loaded to parse (and run) `assign`.
HEAVY_MODULES = (
    "pandas",
    "pyspark",
    "pyarrow",
    "yaml",
    "jobs.replay",
    "jobs.whatif",
    "rebalance_core.whatif",
)


def loaded_modules_after(argv: list[str]) -> set[str]:
    """The modules a fresh interpreter holds after `jobs.cli.build_parser(argv).parse_args(argv)`."""
    code = (
        "import sys; from jobs.cli import build_parser; "
        f"build_parser({argv!r}).parse_args({argv!r}); print('\\n'.join(sys.modules))"
    )
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")])),
    }
    done = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        cwd=REPO,
        env=env,
        timeout=60,
        check=True,
    )
    return set(done.stdout.split())


def test_parsing_an_assign_command_loads_no_other_verb():
    loaded = loaded_modules_after(["assign", "--assignor", "sticky"])
    assert "jobs.assign_cmd" in loaded
    assert not loaded & set(HEAVY_MODULES)


def test_a_command_line_gets_the_arguments_of_its_verb_only():
    parser = build_parser(["simulate", "--scenario", "s.yaml", "--out", "-"])
    args = parser.parse_args(["simulate", "--scenario", "s.yaml", "--out", "-"])
    assert (args.verb, args.scenario, args.out) == ("simulate", "s.yaml", "-")


@pytest.mark.parametrize("verb", sorted(VERBS))
def test_the_whole_parser_declares_every_verbs_arguments(verb):
    subparsers = next(a for a in build_parser()._actions if a.dest == "verb")
    declared = [a for a in subparsers.choices[verb]._actions if not isinstance(a, argparse._HelpAction)]
    assert declared


@pytest.mark.parametrize("verb", sorted(VERBS))
def test_every_verbs_help_ends_with_an_example_of_that_verb(verb):
    subparsers = next(a for a in build_parser([verb])._actions if a.dest == "verb")
    lines = subparsers.choices[verb].format_help().rstrip().splitlines()
    assert lines[-2] == "example:" and f"rebalance-replay {verb}" in lines[-1]


def test_version_prints_the_installed_version(capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(["--version"])
    assert exit_info.value.code == 0
    assert capsys.readouterr().out.startswith("rebalance-replay ")
