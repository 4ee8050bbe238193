"""The ``mlpipe`` command line: a thin front over the library.

Each command group lives in its own module with a ``register(groups)``
function that adds its sub-commands to the argparse groups below. A command
handler takes the parsed namespace and returns its outcome's exit code (0 ok, 1 the job
failed or a file is invalid); everything else it raises, and the one error handler
around every command (:mod:`mlpipe.cli.error_handler`) says it and picks the code:
1 an error, 2 a usage error (argparse's own too), 3 an unexpected error (its traceback
in a log file), 130 interrupted.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import sys
from collections.abc import Sequence
from typing import Any

from mlpipe.cli.arguments import CommandParser
from mlpipe.cli.error_handler import Handler, run_handler
from mlpipe.version import __version__

# Modules that add commands; each defines
# ``register(groups: dict[str, argparse._SubParsersAction[argparse.ArgumentParser]])``.
COMMAND_MODULES: tuple[str, ...] = (
    "mlpipe.cli.schema_cmd",
    "mlpipe.cli.validate",
    "mlpipe.cli.jobs",
    "mlpipe.cli.job_report",
    "mlpipe.cli.job_advise",
    "mlpipe.cli.assets_cmd",
    "mlpipe.cli.datastore_cmd",
)

# Modules that add top-level commands; each defines ``register_top(subparsers)``.
TOP_COMMAND_MODULES: tuple[str, ...] = ("mlpipe.cli.run_script",)

GROUPS = {
    "job": "validate, run and inspect pipeline jobs",
    "component": "validate and register component files",
    "data": "register data assets",
    "model": "register models",
    "datastore": "register Azure Blob and ADLS Gen2 datastores",
    "schema": "JSON Schemas for editors",
}

def build_parser() -> argparse.ArgumentParser:
    parser = CommandParser(
        prog="mlpipe",
        description="Validate and run Azure ML v2 pipelines with parallel steps locally.",
    )
    parser.add_argument("--version", action="version", version=f"mlpipe {__version__}")
    top = parser.add_subparsers(dest="group", metavar="{" + ",".join([*GROUPS, "run-script"]) + "}")
    groups: dict[str, argparse._SubParsersAction[Any]] = {}  # of CommandParsers
    for name, help_text in GROUPS.items():
        group_parser = top.add_parser(name, help=help_text, description=help_text)
        groups[name] = group_parser.add_subparsers(dest="command", metavar="COMMAND")
        group_parser.set_defaults(_group_parser=group_parser)
    for module_name in COMMAND_MODULES:
        importlib.import_module(module_name).register(groups)
    for module_name in TOP_COMMAND_MODULES:
        importlib.import_module(module_name).register_top(top)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    handler: Handler | None = getattr(args, "handler", None)
    if handler is None:
        (getattr(args, "_group_parser", None) or parser).print_help(sys.stderr)
        return 2
    _tolerant_streams()
    return run_handler(handler, args, None if argv is None else list(argv))


def _tolerant_streams() -> None:
    """Undecodable file names on the console print as ``\\udcXX`` escapes, not tracebacks."""
    for stream in (sys.stdout, sys.stderr):
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is not None:
            with contextlib.suppress(OSError, ValueError):
                reconfigure(errors="backslashreplace")


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
