"""``mlpipe schema export``: write the JSON Schemas editors use."""

from __future__ import annotations

import argparse
import sys

from mlpipe.schema.export import export_schemas


def register(groups: dict[str, argparse._SubParsersAction]) -> None:
    parser = groups["schema"].add_parser(
        "export", help="write the JSON Schemas (pipeline job, parallel and command component)",
        description="Write pipeline_job, parallel_component and command_component "
                    ".schema.json files generated from mlpipe's models.")
    parser.add_argument("--out", default="schemas", metavar="DIR",
                        help="folder to write into (default: schemas/)")
    parser.set_defaults(handler=run_export)


def run_export(args: argparse.Namespace) -> int:
    try:
        paths = export_schemas(args.out)
    except OSError as exc:
        print(f"mlpipe: cannot write schemas to {args.out}: {exc.strerror or exc}", file=sys.stderr)
        return 1
    for path in paths:
        print(f"wrote {path}")
    return 0
