"""Where in the user's Python code an SDK object was made or changed.

Diagnostics about SDK-built jobs point at these call sites when there is no
YAML line to point at.
"""

from __future__ import annotations

import functools
import itertools
import sys
from pathlib import Path
from types import FrameType

from mlpipe.diagnostics import Location

_PACKAGE_DIR = Path(__file__).resolve().parents[1]
_FRONT_MODULES = {
    str(_PACKAGE_DIR / name)
    for name in ("__init__.py", "parallel.py", "v1.py", "dsl.py", "entities.py", "constants.py",
                 "identity.py", "azure_ai_ml.py", "mldesigner.py")
}
_SDK_DIR = str(Path(__file__).resolve().parent)


@functools.lru_cache(maxsize=1024)  # called for every frame of every call site: resolve once
def _is_internal(filename: str) -> bool:
    try:
        resolved = str(Path(filename).resolve())
    except OSError:  # pragma: no cover - odd frame file names
        return False
    return resolved.startswith(_SDK_DIR) or resolved in _FRONT_MODULES


def user_frame() -> FrameType | None:
    """The innermost frame that is not part of the SDK itself."""
    frame: FrameType | None = sys._getframe(1)
    while frame is not None and _is_internal(frame.f_code.co_filename):
        frame = frame.f_back
    return frame


def frame_location(frame: FrameType | None) -> Location | None:
    """``file:line:col`` of the instruction ``frame`` is executing (col 1-based)."""
    if frame is None:
        return None
    column = None
    positions = getattr(frame.f_code, "co_positions", None)  # Python 3.11+
    if positions is not None and frame.f_lasti >= 0:
        here = next(itertools.islice(positions(), frame.f_lasti // 2, None), None)
        if here is not None and here[2] is not None:
            column = here[2] + 1
    return Location(file=frame.f_code.co_filename, line=frame.f_lineno, column=column)


def call_site() -> Location | None:
    """The user's code location that called into the SDK."""
    return frame_location(user_frame())


def caller_dir() -> Path:
    """The folder of the user's script that called into the SDK (cwd for a REPL)."""
    frame = user_frame()
    if frame is not None:
        path = Path(frame.f_code.co_filename)
        if path.is_file():
            return path.resolve().parent
    return Path.cwd()
