"""``mlpipe datastore create|show|list|delete``: ``az ml datastore`` over the runs folder's
datastore store.

``create --file ds.yml`` registers Azure's datastore YAML (``type: azure_blob`` or
``azure_data_lake_gen2``); its account key or SAS token goes to the store's credentials file
(mode 0600) and is never printed. Jobs over the same runs folder then read the datastore's
URIs from its storage account (docs/data.md). Exit codes: 0 done, 1 the file is not a usable
datastore or the datastore is not registered, 2 usage error (no such file).
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from mlpipe.cli.arguments import add_output_format, add_workspace_options, emit
from mlpipe.diagnostics import ValidationError
from mlpipe.errors import MlpipeError, UsageError


class DatastoreRefused(MlpipeError):
    """The file is not a usable datastore, or no datastore of that name is registered."""


def register(groups: dict[str, argparse._SubParsersAction[argparse.ArgumentParser]]) -> None:
    """Add ``create``, ``show``, ``list`` and ``delete`` to the ``datastore`` group."""
    group = groups["datastore"]
    create = group.add_parser("create", help="register a datastore YAML file",
                              description="Register a datastore from Azure's datastore YAML, "
                                          "as 'az ml datastore create' does; its secret is "
                                          "kept in a file of its own, never printed.",
                              epilog="exit codes: 0 registered; 1 not a usable datastore; "
                                     "2 usage error")
    create.add_argument("--file", "-f", required=True, metavar="FILE",
                        help="the datastore YAML file")
    create.add_argument("--name", "-n", help="the datastore's name (default: the file's)")
    show = group.add_parser("show", help="show a registered datastore (without its secret)")
    show.add_argument("name_arg", nargs="?", metavar="NAME")
    show.add_argument("--name", "-n", dest="name")
    listing = group.add_parser("list", help="list the registered datastores")
    delete = group.add_parser("delete", help="forget a registered datastore and its secret")
    delete.add_argument("name_arg", nargs="?", metavar="NAME")
    delete.add_argument("--name", "-n", dest="name")
    for verb, parser, handler in (("create", create, run_create), ("show", show, run_show),
                                  ("list", listing, run_list), ("delete", delete, run_delete)):
        parser.add_argument("--runs-dir", help="runs folder whose asset store holds the "
                                               "datastores (default: $MLPIPE_RUNS_DIR or "
                                               "./mlpipe-runs)")
        add_output_format(parser)
        add_workspace_options(parser)
        parser.set_defaults(handler=handler, error_prefix=f"mlpipe datastore {verb}")


def _view(datastore: Any) -> dict[str, Any]:
    """A datastore as ``az ml datastore show`` prints it (no secret)."""
    view: dict[str, Any] = datastore._to_dict()
    credentials = getattr(datastore, "credentials", None)
    view["credentials"] = {"type": _credential_word(credentials)}
    return view


def _credential_word(credentials: Any) -> str:
    kind = type(credentials).__name__
    return {"AccountKeyConfiguration": "account_key",
            "SasTokenConfiguration": "sas_token"}.get(kind, "none")


def run_create(args: argparse.Namespace) -> int:
    from mlpipe.sdk.datastores import DatastoreOperations, load_datastore  # noqa: PLC0415

    path = Path(args.file)
    if not path.is_file():
        raise UsageError(f"{args.file}: {'not a file' if path.exists() else 'no such file'}")
    try:
        datastore = load_datastore(path)
        if args.name:
            datastore.name = args.name
        made = DatastoreOperations(args.runs_dir).create_or_update(datastore)
    except ValidationError as error:
        raise error.about(args.file, "not registered") from None
    except (MlpipeError, ValueError) as error:
        raise DatastoreRefused(f"{args.file}: {error}") from error
    view = _view(made)
    container = view.get("container_name") or view.get("filesystem")
    emit(args, view, lambda: print(
        f"registered datastore {made.name} ({made.type}: account {made.account_name}, "
        f"container {container}, credentials: {view['credentials']['type']}) from {args.file}"))
    return 0


def _name(args: argparse.Namespace) -> str:
    name: str | None = args.name or args.name_arg
    if not name:
        raise UsageError("give the datastore's name (NAME or --name)")
    return name


def _registered(args: argparse.Namespace) -> Any:
    from mlpipe.sdk.datastores import DatastoreOperations  # noqa: PLC0415

    try:
        return DatastoreOperations(args.runs_dir).get(_name(args))
    except LookupError as error:
        raise DatastoreRefused(str(error)) from None


def run_show(args: argparse.Namespace) -> int:
    view = _view(_registered(args))
    emit(args, view, lambda: print("\n".join(f"{k}: {v}" for k, v in view.items())))
    return 0


def run_list(args: argparse.Namespace) -> int:
    from mlpipe.sdk.datastores import DatastoreOperations  # noqa: PLC0415

    views = [_view(found) for found in DatastoreOperations(args.runs_dir).list()]
    emit(args, views, lambda: print("\n".join(
        f"{v['name']}\t{v['type']}\t{v['account_name']}\t"
        f"{v.get('container_name') or v.get('filesystem')}" for v in views)))
    return 0


def run_delete(args: argparse.Namespace) -> int:
    from mlpipe.sdk.datastores import DatastoreOperations  # noqa: PLC0415

    found = _registered(args)
    DatastoreOperations(args.runs_dir).delete(found.name)
    return 0


__all__ = ["run_create", "run_delete", "run_list", "run_show"]
