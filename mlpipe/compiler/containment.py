"""Where local paths of a YAML may point: the entry script inside ``code``, the rest near home.

* ``entry_script`` must lie inside the ``code`` folder: Azure uploads only that folder,
  so an absolute entry script, or one that climbs out with ``..``, is an error
  (:func:`entry_script_escape`).
* ``code``, component files and ``mltable`` input paths may point to parent folders
  (azureml-examples write ``code: ../src``), but one that leaves the *project* of the
  YAML file, or leaves it through a symbolic link, is worth a warning
  (:func:`escape_warning`): it is probably not the folder meant, and Azure would upload
  whatever it points to.

The project is the git work tree holding the YAML file (found by walking up to a
``.git`` folder or file). Without one, it is the folder above the YAML file's folder:
one ``..`` is allowed, as in the Azure SDK's own test configurations.
"""

from __future__ import annotations

import os
from functools import lru_cache
from pathlib import Path, PurePosixPath, PureWindowsPath


@lru_cache(maxsize=256)
def project_root(yaml_dir: Path) -> tuple[Path, bool]:
    """``(root, is_git)``: the git work tree holding ``yaml_dir``, else its parent folder."""
    folder = Path(os.path.abspath(yaml_dir))
    for candidate in (folder, *folder.parents):
        if (candidate / ".git").exists():
            return candidate, True
    return folder.parent, False


def _within(path: Path, root: Path) -> bool:
    return path == root or root in path.parents


def escape_warning(target: Path, yaml_dir: Path, what: str, raw: str) -> str | None:
    """Why ``target`` (``raw`` as written in a YAML file in ``yaml_dir``) lies outside the
    YAML's project, or ``None`` when it lies inside."""
    base = Path(os.path.abspath(yaml_dir))
    lexical = Path(os.path.normpath(target if target.is_absolute() else base / target))
    root, is_git = project_root(base)
    project = "the git work tree" if is_git else "the folder above the YAML file's folder"
    if not _within(lexical, root):
        return (f"{what} '{raw}' is outside {project} ({root}); it is used (and Azure would "
                "upload it) from there")
    real, real_root = Path(os.path.realpath(lexical)), Path(os.path.realpath(root))
    if not _within(real, real_root):
        return f"{what} '{raw}' leaves {project} ({root}) through a symbolic link, to {real}"
    return None


def mltable_path_warnings(folder: Path) -> list[str]:
    """Escape warnings for the local ``paths`` of the MLTable file in ``folder`` (checked
    against the MLTable file's own project). An unreadable MLTable file gives none here:
    reading the data reports it."""
    from mlpipe.data.errors import DataError
    from mlpipe.data.mltable_spec import MLTABLE_FILE, REMOTE_PREFIXES, load_spec

    if not (folder / MLTABLE_FILE).is_file():
        return []
    try:
        spec = load_spec(str(folder))
    except DataError:
        return []
    base = Path(spec.file).parent
    warnings = []
    for entry in spec.paths:
        value = entry.value.removeprefix("file://").removeprefix("file:")
        if value.startswith(REMOTE_PREFIXES) or unusable_path(value):
            continue
        fixed = value.split("*")[0].split("?")[0].split("[")[0] if entry.kind == "pattern" \
            else value
        warning = escape_warning(Path(fixed or "."), base, "MLTable path",
                                 f"{entry.kind}: {entry.value}")
        if warning:
            warnings.append(f"{warning} (in {spec.file})")
    return warnings


MAX_NAME_BYTES = 255
MAX_PATH_BYTES = 4096


def unusable_path(raw: str) -> str | None:
    """Why the path ``raw`` cannot name a file on any usual file system (``None`` if it can):
    checked before it is looked up, as the look-up itself would fail with an OS error."""
    try:
        encoded = raw.encode("utf-8")
    except UnicodeEncodeError:
        return "it is not valid Unicode text"
    if b"\0" in encoded:
        return "it contains a NUL character"
    if len(encoded) > MAX_PATH_BYTES:
        return f"it is longer than {MAX_PATH_BYTES} bytes"
    if any(len(part) > MAX_NAME_BYTES for part in encoded.replace(b"\\", b"/").split(b"/")):
        return f"a name in it is longer than {MAX_NAME_BYTES} bytes"
    return None


def entry_script_escape(entry: str) -> str | None:
    """Why ``entry`` (an ``entry_script`` as written) is not a path inside the code folder."""
    if PurePosixPath(entry).is_absolute() or PureWindowsPath(entry).is_absolute() \
            or PureWindowsPath(entry).drive:
        return "it is an absolute path"
    depth = 0
    for part in entry.replace("\\", "/").split("/"):
        if part == "..":
            depth -= 1
            if depth < 0:
                return "it climbs out of the code folder with '..'"
        elif part not in ("", "."):
            depth += 1
    return None


__all__ = ["entry_script_escape", "escape_warning", "mltable_path_warnings", "project_root",
           "unusable_path"]
