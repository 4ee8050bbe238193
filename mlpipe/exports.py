"""A package's public names, imported on first use.

A package ``__init__`` that imported its modules to re-export their names would make every
``import mlpipe.<package>.<module>`` pay for all of them (a command that only lists jobs
would build the YAML models, the compiler and the runtime). Instead it declares where each
name lives and gets them through PEP 562's module ``__getattr__``::

    _EXPORTS = {"compile_pipeline": "mlpipe.compiler.pipeline", ...}
    __getattr__ = exports_on_first_use(__name__, _EXPORTS)

(with the same names imported under ``if TYPE_CHECKING:`` for type checkers).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import Any


def exports_on_first_use(package: str, exports: Mapping[str, str]) -> Callable[[str], Any]:
    """The module ``__getattr__`` of ``package``: ``exports`` maps a name to its module."""

    def __getattr__(name: str) -> Any:
        module = exports.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        return getattr(importlib.import_module(module), name)

    return __getattr__


__all__ = ["exports_on_first_use"]
