"""Remote asset references and the local stand-ins ``mlpipe.toml`` maps them to.

A reference such as ``azureml:iris:1``, ``azureml://registries/azureml/components/x/labels/latest``
or ``https://host/data.csv`` cannot be read offline. Validation accepts it and
the plan lists it in ``ExecutionPlan.remote_assets`` so a run stops before any
step starts. An ``mlpipe.toml`` beside the pipeline YAML can map references to
local paths (relative to the toml file)::

    [assets]
    "azureml:iris:1" = "./data/iris"
    "azureml://registries/azureml/components/dataset_downloader/labels/latest" = "./downloader.yml"

    [outputs]
    allow_external = true   # outputs of the pipelines here may be written outside the runs folder
"""

from __future__ import annotations

import json
import os
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path

from mlpipe.compiler.containment import unusable_path
from mlpipe.diagnostics import Diagnostic, Location
from mlpipe.limits import InputLimitError, check_file_size
from mlpipe.runs import ASSETS_DIR, STAND_INS_ENV

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

ASSETS_FILE = "mlpipe.toml"
# Assets registered from Python (``ml_client.data.create_or_update(...)``), under the runs folder.
REGISTRY_FILE = Path(ASSETS_DIR) / "registry.json"
# ``git+https://host/repo.git@branch`` is a code snapshot azure-ai-ml takes from a git repository.
_REMOTE = re.compile(r"^(azureml:|https?://|wasbs?://|abfss?://|adl://|s3://|gs://|git\+)", re.I)
# A workspace resource's ARM id (``/subscriptions/<s>/resourceGroups/<g>/providers/
# Microsoft.MachineLearningServices/workspaces/<w>/data/<name>/versions/<v>``): an asset for
# azure-ai-ml (``is_ARM_id_for_resource``), never a local absolute path.
_ARM_ID = re.compile(r"^/subscriptions/[^/]+/resourceGroups/[^/]+/providers/"
                     r"Microsoft\.MachineLearningServices/workspaces/[^/]+/[^/]+/[^/]", re.I)


def is_remote(reference: object) -> bool:
    """True for ``azureml:``, ``azureml://``, ``http(s)://``, cloud-storage URIs, ``git+`` code
    and ARM ids."""
    if not isinstance(reference, str):
        return False
    text = reference.strip()
    return _REMOTE.match(text) is not None or _ARM_ID.match(text) is not None


def strip_file_prefix(reference: str) -> str:
    """``file:./x.yml`` -> ``./x.yml`` (the ``file:`` form of local component references)."""
    return reference[5:] if reference.startswith("file:") else reference


@dataclass
class AssetMap:
    """The ``[assets]`` table of an ``mlpipe.toml`` (empty when there is none), and its
    ``[outputs] allow_external`` switch."""

    base_dir: Path
    mapping: dict[str, str] = field(default_factory=dict)
    file: Path | None = None
    allow_external_outputs: bool = False

    def local(self, reference: str) -> Path | None:
        """The local path ``reference`` maps to, or ``None``."""
        target = self.mapping.get(reference.strip())
        if target is None:
            return None
        path = Path(target).expanduser()
        return path if path.is_absolute() else (self.base_dir / path).resolve()

    def locate(self, reference: str, base_dir: Path) -> tuple[Path | None, str | None]:
        """``(absolute local path, None)`` or ``(None, remote reference)`` for a path as written.

        Local paths (``file:`` prefix allowed) are relative to ``base_dir``; a remote
        reference mapped in ``[assets]`` becomes its local path.
        """
        raw = reference.strip()
        if is_remote(raw):
            local = self.local(raw)
            return (local, None) if local is not None else (None, raw)
        path = Path(strip_file_prefix(raw)).expanduser()
        path = path if path.is_absolute() else base_dir / path
        return Path(os.path.normpath(path.absolute())), None


def registered_references(runs_dir: Path | None) -> dict[str, str]:
    """``{"azureml:name:version": absolute path}`` of the assets registered under ``runs_dir``."""
    if runs_dir is None:
        return {}
    try:
        data = json.loads((runs_dir / REGISTRY_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    references = data.get("references") if isinstance(data, dict) else None
    if not isinstance(references, dict):
        return {}
    return {k: v for k, v in references.items() if isinstance(k, str) and isinstance(v, str)}


def load_asset_map(yaml_dir: Path, runs_dir: Path | None = None
                   ) -> tuple[AssetMap, list[Diagnostic]]:
    """Read ``<yaml_dir>/mlpipe.toml`` over the assets registered under ``runs_dir``;
    problems with the toml are diagnostics."""
    asset_map, problems = _read_toml(yaml_dir)
    asset_map.mapping = {**registered_references(runs_dir), **asset_map.mapping}
    return asset_map, problems


def _read_toml(yaml_dir: Path) -> tuple[AssetMap, list[Diagnostic]]:
    path = yaml_dir / ASSETS_FILE
    if not path.is_file():
        return AssetMap(yaml_dir), []
    try:
        check_file_size(path)
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except RecursionError:
        return AssetMap(yaml_dir, file=path), [
            Diagnostic(f"cannot read {ASSETS_FILE}: nested too deeply",
                       location=Location(str(path)), code="input-limit")]
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError, InputLimitError) as exc:
        return AssetMap(yaml_dir, file=path), [
            Diagnostic(f"cannot read {ASSETS_FILE}: {exc}", location=Location(str(path)),
                       code="assets")
        ]
    table = data.get("assets", {})
    problems: list[Diagnostic] = []
    if not isinstance(table, dict):
        problems.append(Diagnostic('[assets] must be a table of reference = "local path"',
                                   key_path="assets", location=Location(str(path)), code="assets"))
        table = {}
    mapping: dict[str, str] = {}
    for key, value in table.items():
        if isinstance(value, str) and unusable_path(value):
            problems.append(Diagnostic(f"not a usable path: {unusable_path(value)}",
                                       key_path=f"assets.{key}", location=Location(str(path)),
                                       code="assets"))
        elif isinstance(value, str):
            mapping[key] = value
        else:
            problems.append(Diagnostic("must be a local path (a string), got "
                                       f"{type(value).__name__}", key_path=f"assets.{key}",
                                       location=Location(str(path)), code="assets"))
    allow, outputs_problems = _outputs_table(data.get("outputs", {}), path)
    return AssetMap(yaml_dir, mapping, path, allow), problems + outputs_problems


def _outputs_table(table: object, path: Path) -> tuple[bool, list[Diagnostic]]:
    """``[outputs] allow_external`` (a boolean; the table's only key)."""
    where = Location(str(path))
    if not isinstance(table, dict):
        return False, [Diagnostic("[outputs] must be a table (allow_external = true)",
                                  key_path="outputs", location=where, code="assets")]
    problems = [Diagnostic(f"unknown key {key!r} (the table has allow_external)",
                           key_path=f"outputs.{key}", location=where, code="assets")
                for key in table if key != "allow_external"]
    allow = table.get("allow_external", False)
    if not isinstance(allow, bool):
        problems.append(Diagnostic(f"must be true or false, got {allow!r}",
                                   key_path="outputs.allow_external", location=where,
                                   code="assets"))
        allow = False
    return allow, problems


def stand_in(reference: str, *folders: Path) -> Path | None:
    """The local path ``mlpipe.toml`` maps ``reference`` (or a URL prefix of it) to, looking
    in ``folders``, the job's folder (:data:`STAND_INS_ENV`), then the working folder."""
    job_folder = os.environ.get(STAND_INS_ENV)
    for folder in (*folders, *([Path(job_folder)] if job_folder else []), Path.cwd()):
        if not (folder / ASSETS_FILE).is_file():
            continue
        asset_map, _ = load_asset_map(folder)
        found = _under(asset_map, reference)
        if found is not None:
            return found
    return None


def _under(asset_map: AssetMap, reference: str) -> Path | None:
    exact = asset_map.local(reference)
    if exact is not None:
        return exact
    for key in sorted(asset_map.mapping, key=len, reverse=True):
        prefix = key.rstrip("/") + "/"
        if reference.startswith(prefix):
            root = asset_map.local(key)
            if root is not None:
                return root / reference[len(prefix):]
    return None


__all__ = ["ASSETS_FILE", "REGISTRY_FILE", "STAND_INS_ENV", "AssetMap", "is_remote",
           "load_asset_map", "registered_references", "stand_in", "strip_file_prefix"]
