"""``mlpipe component create``, ``mlpipe data create``, ``mlpipe model create``: ``az ml
<asset> create --file F`` as published CLI walkthroughs run it before ``job create``.

The asset is registered in the local asset store (``<runs-dir>/assets/registry.json``, the
one ``ml_client.<group>.create_or_update`` writes), so a job compiled over the same runs
folder reads ``azureml:name:version``, ``azureml:name@latest`` and ``azureml:name`` as the
registered file or folder. ``--name`` and ``--version`` override the file's. The result is
printed as one line, or as ``az`` prints it with ``-o``/``--query`` (``name``, ``version``,
``id``, ``type``, and the ``path`` or component ``source``). Exit codes: 0 registered, 1 the
file is not a usable asset (no name, not valid), 2 usage error (no such file).
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from mlpipe.cli.arguments import add_output_format, add_workspace_options, emit
from mlpipe.diagnostics import ValidationError, errors_of
from mlpipe.errors import MlpipeError, UsageError


class AssetRefused(MlpipeError):
    """The file is not a usable asset (no name, not valid, its path unusable)."""


KINDS = {"component": "component", "data": "data asset", "model": "model"}  # kind -> noun


def register(groups: dict[str, argparse._SubParsersAction[argparse.ArgumentParser]]) -> None:
    """Add ``create`` to the ``component``, ``data`` and ``model`` groups."""
    for kind in KINDS:
        parser = groups[kind].add_parser(
            "create", help=f"register a {kind} YAML file in the local asset store",
            description=f"Register a {kind} from its YAML file, as 'az ml {kind} create' "
                        "does; jobs run over the same runs folder then read azureml:"
                        "name:version (and @latest) as it.",
            epilog="exit codes: 0 registered; 1 not a usable asset; 2 usage error")
        parser.add_argument("--file", "-f", required=True, metavar="FILE",
                            help=f"the {kind} YAML file")
        parser.add_argument("--name", "-n", help="the asset's name (default: the file's)")
        parser.add_argument("--version", "-v", help="the version (default: the file's, else "
                                                    "the next one)")
        parser.add_argument("--runs-dir",
                            help="runs folder whose asset store it joins (default: "
                                 "$MLPIPE_RUNS_DIR or ./mlpipe-runs)")
        add_output_format(parser)
        add_workspace_options(parser)
        parser.set_defaults(handler=run_create, asset_kind=kind,
                            error_prefix=f"mlpipe {kind} create")


def run_create(args: argparse.Namespace) -> int:
    """Register ``--file`` and print what was registered."""
    kind: str = args.asset_kind
    path = Path(args.file)
    if not path.is_file():
        raise UsageError(f"{args.file}: {'not a file' if path.exists() else 'no such file'}")
    try:
        result = _register(kind, path.resolve(), args)
    except ValidationError as error:
        raise error.about(args.file, "not registered") from None
    except (MlpipeError, ValueError, LookupError, OSError) as error:
        raise AssetRefused(f"{args.file}: {error}") from error
    emit(args, result, lambda: print(f"registered {kind} {result['name']}:{result['version']} "
                                     f"({result['id']}) from {args.file}"))
    return 0


def _register(kind: str, path: Path, args: argparse.Namespace) -> dict[str, Any]:
    from mlpipe.sdk.assets import AssetStore, Data, Model, asset_fields, reference  # noqa: PLC0415
    from mlpipe.sdk.loading import load_component  # noqa: PLC0415
    from mlpipe.sdk.operations import (  # noqa: PLC0415
        ComponentOperations,
        DataOperations,
        ModelOperations,
    )

    if kind == "component":
        _check_component(path, args.name)
        component = load_component(path)
        if args.name:
            component.name = args.name
        name = str(component.name)  # validated: the file's or --name
        version = args.version or (getattr(component, "data", None) or {}).get("version")
        ComponentOperations(args.runs_dir, base_dir=path.parent).create_or_update(
            component, version=args.version)
        stored = AssetStore(args.runs_dir).get("component", name,
                                               str(version) if version else None)
        fields = {"name": stored["name"], "version": stored["version"],
                  "type": stored.get("type"), "source": stored.get("source")}
    else:
        values = asset_fields(path)
        values.update({key: value for key, value in
                       (("name", args.name), ("version", args.version)) if value})
        if not values.get("name"):
            raise ValueError(f"a {KINDS[kind]} needs a 'name' to be registered (or give --name)")
        entity_type, ops_type = ((Data, DataOperations) if kind == "data"
                                 else (Model, ModelOperations))
        entity = entity_type(**{k: v for k, v in values.items() if k in entity_type._fields})
        made = ops_type(args.runs_dir, base_dir=path.parent).create_or_update(entity)
        fields = {"name": made.name, "version": made.version, "type": getattr(made, "type", None),
                  "path": getattr(made, "path", None)}
    fields["id"] = reference(fields["name"], fields["version"])
    return fields


def _check_component(path: Path, name: str | None) -> None:
    """Refuse a component ``az ml`` would not register (``name``: the ``--name`` given)."""
    from mlpipe.compiler import validate_component  # noqa: PLC0415
    from mlpipe.schema import load_component, load_yaml_file  # noqa: PLC0415

    doc = load_yaml_file(path)
    if name and isinstance(doc.data, dict):
        doc.data["name"] = name
    problems = errors_of(validate_component(load_component(doc)))
    if problems:
        raise ValidationError(problems)


__all__ = ["run_create"]
