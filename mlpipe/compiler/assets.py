"""Remote asset references and the local stand-ins ``mlpipe.toml`` maps them to.

A reference such as ``azureml:iris:1``, ``azureml://registries/azureml/components/x/labels/latest``
or ``https://host/data.csv`` cannot be read offline. Validation accepts it and
the plan lists it in ``ExecutionPlan.remote_assets`` so a run stops before any
step starts. An ``mlpipe.toml`` beside the pipeline YAML can map references to
local paths (relative to the toml file)::

    [assets]
    "azureml:iris:1" = "./data/iris"
    "azureml://registries/azureml/components/dataset_downloader/labels/latest" = "./downloader.yml"
"""

from __future__ import annotations

import os
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path

from mlpipe.compiler.containment import unusable_path
from mlpipe.diagnostics import Diagnostic, Location
from mlpipe.limits import InputLimitError, check_file_size

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

ASSETS_FILE = "mlpipe.toml"
_REMOTE = re.compile(r"^(azureml:|https?://|wasbs?://|abfss?://|adl://|s3://|gs://)", re.I)


def is_remote(reference: object) -> bool:
    """True for ``azureml:``, ``azureml://``, ``http(s)://`` and cloud-storage URIs."""
    return isinstance(reference, str) and _REMOTE.match(reference.strip()) is not None


def strip_file_prefix(reference: str) -> str:
    """``file:./x.yml`` -> ``./x.yml`` (the ``file:`` form of local component references)."""
    return reference[5:] if reference.startswith("file:") else reference


@dataclass
class AssetMap:
    """The ``[assets]`` table of an ``mlpipe.toml`` (empty when there is none)."""

    base_dir: Path
    mapping: dict[str, str] = field(default_factory=dict)
    file: Path | None = None

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


def load_asset_map(yaml_dir: Path) -> tuple[AssetMap, list[Diagnostic]]:
    """Read ``<yaml_dir>/mlpipe.toml``; problems with it are diagnostics."""
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
    return AssetMap(yaml_dir, mapping, path), problems


__all__ = ["ASSETS_FILE", "AssetMap", "is_remote", "load_asset_map", "strip_file_prefix"]
