"""``mlpipe schema export``: write (or check) the JSON Schemas editors use."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from mlpipe.errors import MlpipeError, UsageError


class SchemasNotWritten(MlpipeError):
    """The JSON Schemas could not be written to ``--out``."""


def register(groups: dict[str, argparse._SubParsersAction[argparse.ArgumentParser]]) -> None:
    parser = groups["schema"].add_parser(
        "export", help="write the JSON Schemas (pipeline job; parallel, command and pipeline "
                          "component)",
        description="Write pipeline_job, parallel_component, command_component and "
                    "pipeline_component .schema.json files generated from mlpipe's models.")
    parser.add_argument("--out", default="schemas", metavar="DIR",
                        help="folder to write into (default: schemas/)")
    parser.add_argument("--check", action="store_true",
                        help="write nothing; exit 1 if the files in DIR are missing or stale")
    parser.set_defaults(handler=run_export)


def run_export(args: argparse.Namespace) -> int:
    if Path(args.out).exists() and not Path(args.out).is_dir():
        raise UsageError(f"--out {args.out} is a file, not a folder")
    if args.check:
        return _check(Path(args.out))
    from mlpipe.schema.export import export_schemas  # noqa: PLC0415 - builds every model

    try:
        paths = export_schemas(args.out)
    except OSError as exc:
        raise SchemasNotWritten(f"cannot write schemas to {args.out}: "
                                f"{exc.strerror or exc}") from exc
    for path in paths:
        print(f"wrote {path}")
    return 0


def _check(out: Path) -> int:
    from mlpipe.schema.export import SCHEMAS, render_schema  # noqa: PLC0415 - builds every model

    stale = []
    for name in SCHEMAS:
        path = out / f"{name}.schema.json"
        try:
            current = path.read_text(encoding="utf-8")
        except OSError:
            current = None
        if current != render_schema(name):
            stale.append(path)
    for path in stale:
        print(f"{path}: missing or stale: run 'mlpipe schema export --out {out}'", file=sys.stderr)
    if not stale:
        print(f"schemas in {out} are up to date")
    return 1 if stale else 0
