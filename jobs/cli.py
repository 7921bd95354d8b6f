"""`rebalance-replay VERB ...`: one verb per job step (parse-logs, run, whatif, assign, simulate,
generate, report), each a thin module under `jobs/` with `configure(parser)` and `main(args) -> int`.

Each verb declares its own arguments (`configure`), once. Parsing a command line imports only the
module of the verb it names (the one about to run anyway): `rebalance-replay assign` does not load
pandas, Spark or the what-if to build its parser, and `--help`/`--version` load no verb at all.

Errors the user can fix (bad input, bad config, missing path, memory) are one line on stderr and exit
2; any other failure is one line naming the step and a log file with the details, exit 1 (jobs.failures);
never a traceback.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys

from jobs.usage import UsageError

# verb -> (module, one-line help). A module is imported only for the verb a command line names.
VERBS: dict[str, tuple[str, str]] = {
    "assign": ("jobs.assign_cmd", "run one assignor on a JSON group description (stdin -> stdout)"),
    "parse-logs": (
        "jobs.parse_logs",
        "Kafka broker/client logs -> canonical events (JSON lines) + quarantine",
    ),
    "run": ("jobs.replay", "replay canonical events (default: the packaged sample) into the Delta tables"),
    "whatif": ("jobs.whatif", "the same timelines under other assignors, protocols, settings; compared"),
    "simulate": ("jobs.simulate_cmd", "play a membership scenario (YAML) -> canonical events (JSON lines)"),
    "generate": ("jobs.generate", "realistic fleet rebalance history (events, Kafka logs) for benchmarks"),
    "report": ("jobs.report_cmd", "reprint a warehouse's summary without rerunning; --html: an HTML report"),
}

# verb -> the example that ends its --help
EXAMPLES: dict[str, str] = {
    "assign": 'echo \'{"assignor": "range", "topics": {"orders": 4}, "members": [{"member_id": "a", '
    '"subscription": ["orders"]}]}\' | rebalance-replay assign',
    "parse-logs": "rebalance-replay parse-logs /var/log/kafka/ --out parsed/ --cluster prod",
    "run": "rebalance-replay run --input /var/log/kafka/ --input-format kafka-log --warehouse ./warehouse",
    "whatif": "rebalance-replay whatif --scenario cooperative-sticky --date 2024-11-08",
    "simulate": "rebalance-replay simulate --scenario conf/simulations/02_cooperative_join.yaml --out events.jsonl",
    "generate": "rebalance-replay generate --groups 50 --days 2 --out fleet/",
    "report": "rebalance-replay report --warehouse ./warehouse --date 2024-11-08 --html report/",
}


def build_parser(argv: list[str] | None = None) -> argparse.ArgumentParser:
    """The CLI's parser. With `argv`, only the verb that command line names gets its arguments (the
    others stay listed with their help): enough to parse it, importing no other verb's module.
    Without, every verb's arguments (the whole CLI, e.g. for documentation)."""
    parser = argparse.ArgumentParser(
        prog="rebalance-replay",
        description="Replay Kafka consumer-group rebalance logs: generations, stop-the-world, churn, what-if.",
    )
    parser.add_argument("--version", action=_PrintVersion, help="show the installed version and exit")
    sub = parser.add_subparsers(dest="verb", metavar="VERB")
    sub.required = True
    named = _named_verb(argv) if argv is not None else None
    for verb, (module_name, help_text) in VERBS.items():
        sub_parser = sub.add_parser(
            verb, help=help_text, description=help_text, formatter_class=_HelpWithExample
        )
        sub_parser.set_defaults(_module=module_name)
        if argv is None or verb == named:
            importlib.import_module(module_name).configure(sub_parser)
            example = f"example:\n  {EXAMPLES[verb]}" if verb in EXAMPLES else None
            sub_parser.epilog = "\n\n".join(text for text in (sub_parser.epilog, example) if text)
    return parser


class _HelpWithExample(argparse.HelpFormatter):
    """argparse's help, but the epilog's indented lines (the example) are kept as written; its other
    paragraphs are wrapped as usual."""

    def _fill_text(self, text, width, indent):
        paragraphs = []
        for paragraph in text.split("\n\n"):
            lines = paragraph.splitlines()
            if any(line.startswith("  ") for line in lines):
                paragraphs.append("\n".join(indent + line for line in lines))
            else:
                paragraphs.append(super()._fill_text(paragraph, width, indent))
        return "\n\n".join(paragraphs)


def _named_verb(argv: list[str]) -> str | None:
    """The verb of a command line: its first word that is not an option (the top-level parser has no
    option that takes a value)."""
    return next((word for word in argv if not word.startswith("-")), None)


class _PrintVersion(argparse.Action):
    """argparse's "version" action, but reading the installed version only when asked (the package
    metadata costs more to load than the `assign` verb)."""

    def __init__(self, option_strings, dest, **kwargs):
        super().__init__(option_strings, dest, nargs=0, default=argparse.SUPPRESS, **kwargs)

    def __call__(self, parser, namespace, values, option_string=None):
        from importlib.metadata import PackageNotFoundError, version

        try:
            installed = version("rebalance-replay")
        except PackageNotFoundError:  # run from a checkout that was never installed
            installed = "(not installed)"
        print(f"{parser.prog} {installed}")
        parser.exit()


def main(argv: list[str] | None = None) -> int:
    if argv is None:
        argv = sys.argv[1:]
    if not sys.stdout.isatty():
        # a log or a pipe: tables 100 columns wide (rich assumes 80 without a terminal; COLUMNS still wins)
        os.environ.setdefault("COLUMNS", "100")
    parser = build_parser(argv)
    args = parser.parse_args(argv)
    module = importlib.import_module(args._module)
    try:
        return int(module.main(args) or 0)
    except UsageError as exc:
        from jobs.failures import discard_log

        discard_log()  # the line says it all
        print(f"rebalance-replay {args.verb}: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"rebalance-replay {args.verb}: interrupted", file=sys.stderr)
        return 130
    except Exception as exc:  # one line naming the step and the log file (jobs.failures)
        from jobs.failures import explain

        status, line = explain(args.verb, exc)
        print(line, file=sys.stderr)
        return status


if __name__ == "__main__":
    sys.exit(main())
