"""The one import hook: Azure's module names resolved to mlpipe's mirrors.

:class:`MirrorFinder`, first on ``sys.meta_path``, answers ``import azureml.core``,
``azureml.*`` (``data``, ``pipeline.core``, ``pipeline.steps``, ``exceptions``, ...),
``azure.ai.ml`` (and its mirrored submodules), ``azure.identity``, ``mltable``,
``mldesigner`` and, where azure-core is
absent, ``azure.core.exceptions`` with the mlpipe module :data:`MIRRORS` names. It holds
the only copy of that mapping.

``MLPIPE_IMPORT_MIRRORS`` (:data:`ENV_FLAG`) chooses how, in every process mlpipe starts
(the driver, parallel workers local and on Dask, command steps):

- unset (``auto``): a family of names (v1 ``azureml``, ``azure.ai.ml``, ``azure.identity``)
  is mirrored only when its real package is not installed, so an entry script's
  ``from azureml.core import Run`` works wherever the job was started from;
- ``1`` (``force``, set by ``mlpipe run-script``): mirrored even when the real package is
  installed (a published script then runs here, not in the cloud);
- ``0`` (``off``): no hook; Azure's names import whatever is installed, or fail.

Importing ``mlpipe`` installs the hook (:func:`install_from_environment`); a Python that a
command step starts gets it through :data:`STARTUP_DIR`'s ``sitecustomize`` on
``PYTHONPATH`` (:func:`child_environment`).
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import os
import sys
import types
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

ENV_FLAG = "MLPIPE_IMPORT_MIRRORS"
Mode = Literal["auto", "force", "off"]
# A folder holding only ``sitecustomize.py``: on a child's PYTHONPATH, it installs the hook.
STARTUP_DIR = str(Path(__file__).resolve().parent / "startup")

_V1 = "mlpipe.v1"
# Imported name -> the mlpipe module whose public names it gets.
MIRRORS: dict[str, str] = {
    "azure.ai.ml": "mlpipe.azure_ai_ml",
    "azure.ai.ml._version": "mlpipe.azure_ai_ml",
    "azure.ai.ml.dsl": "mlpipe.dsl",
    "azure.ai.ml.entities": "mlpipe.entities",
    "azure.ai.ml.constants": "mlpipe.constants",
    **{f"azure.ai.ml.constants.{private}": "mlpipe.constants"
       for private in ("_common", "_component", "_job", "_compute")},
    "azure.ai.ml.parallel": "mlpipe.parallel",
    "azure.ai.ml.sweep": "mlpipe.sweep",
    "azure.ai.ml.automl": "mlpipe.automl",
    "azure.ai.ml.operations": "mlpipe.sdk.operations",
    "azure.identity": "mlpipe.identity",
    "azure.core.exceptions": "mlpipe.sdk.exceptions",
    "mltable": "mlpipe.sdk.mltable",
    "mldesigner": "mlpipe.mldesigner",
}
# Azure's programs a component's command runs -> the mlpipe module that stands in for it
# (``python -m``): a command step finds it first on its PATH (``jobs/command.py``), unless
# :data:`ENV_FLAG` is ``0``.
PROGRAMS: dict[str, str] = {"mldesigner": "mlpipe.sdk.mldesigner_exec"}
# azureml v1: these packages and every module below them are ``mlpipe.v1``'s names
# (``azureml.core.compute_target``, ``azureml.pipeline.core.graph``, ``azureml.exceptions``).
V1_PACKAGES = ("azureml.core", "azureml.data", "azureml.pipeline.core", "azureml.pipeline.steps",
               "azureml.contrib.pipeline.steps",  # 2019-2020: ParallelRunStep/Config
               "azureml.exceptions", "azureml.widgets")
# azureml's private telemetry and REST-client modules, which published scripts import to tag
# their runs: every name in them is :class:`Inert` (nothing is sent anywhere).
INERT = ("azureml._restclient", "azureml.telemetry", "azureml._base_sdk_common",
         "azureml._common")
# azureml v1 packages whose work runs in Azure ML only (AutoML, many-models training): each
# module below them imports as written and every name is
# :class:`~mlpipe.unavailable.Unavailable`, so a published notebook stops at its first use
# with one ``NotAvailableLocally`` line, not a ModuleNotFoundError.
CLOUD_ONLY = {prefix: ("AutoML trains its models in Azure ML only; run this part against a "
                       "workspace with azureml, or train the models in a ParallelRunStep of your "
                       "own (the many-models pattern) here")
              for prefix in ("azureml.train.automl", "azureml.automl",
                             "azureml.contrib.automl")}
# Mirrored only where the real package is not installed, also under ``force`` (azure-core's
# own modules use it).
FALLBACKS = frozenset({"azure.core.exceptions"})
# The real package whose presence turns a family of names off under ``auto``.
_FAMILIES = (("azure.ai.ml", "azure.ai.ml"), ("azure.identity", "azure.identity"),
             ("azure.core", "azure.core"), ("azureml", "azureml.core"), ("mltable", "mltable"),
             ("mldesigner", "mldesigner"))


def _under(name: str, prefix: str) -> bool:
    return name == prefix or name.startswith(prefix + ".")


def mirror_of(name: str) -> str | None:
    """The mlpipe module that module ``name`` is (``None``: not a mirrored name). Below the
    v1 packages only lower-case names are modules: ``from azureml.core import
    ScriptRunConfig`` of a name the mirror lacks is then Python's "cannot import name", not a
    module of that name."""
    if name in MIRRORS:
        return MIRRORS[name]
    for package in V1_PACKAGES:
        if _under(name, package) and name[len(package):] == name[len(package):].lower():
            return _V1
    return None


def _inert(name: str) -> bool:
    return any(_under(name, prefix) for prefix in INERT)


def _cloud_only(name: str) -> str | None:
    """The hint of the :data:`CLOUD_ONLY` package ``name`` is in (``None``: not one)."""
    return next((hint for prefix, hint in CLOUD_ONLY.items() if _under(name, prefix)), None)


_PARENTS = {".".join(name.split(".")[:i])
            for name in [*MIRRORS, *V1_PACKAGES, *INERT, *CLOUD_ONLY]
            for i in range(1, name.count(".") + 1)} - set(MIRRORS) - set(V1_PACKAGES)


def mode() -> Mode:
    """The mode :data:`ENV_FLAG` asks for (``auto`` unless it says ``1`` or ``0``)."""
    value = os.environ.get(ENV_FLAG, "").strip()
    return "force" if value == "1" else "off" if value == "0" else "auto"


class Inert:
    """A name of an :data:`INERT` module: takes any call and attribute, does nothing."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        pass

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        return Inert()

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return Inert()


class MirrorFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Finds mirrored names (and empty parent packages such as ``azureml``); ``forced``
    mirrors names whose real package is installed too."""

    def __init__(self, forced: bool = False) -> None:
        self.forced = forced
        self._installed: dict[str, bool] = {}

    def find_spec(self, fullname: str, path: Any = None,
                  target: types.ModuleType | None = None) -> importlib.machinery.ModuleSpec | None:
        mirrored = (mirror_of(fullname) is not None or _inert(fullname)
                    or _cloud_only(fullname) is not None)
        if not mirrored and fullname not in _PARENTS:
            self._refuse_unmirrored_child(fullname)
            return None
        if fullname in FALLBACKS or fullname in _PARENTS:
            if real_package_installed(fullname):
                return None  # a real package (azure-core's ``azure.core``): load it as is
        elif not self.forced and self._family_installed(fullname):
            return None
        return importlib.machinery.ModuleSpec(fullname, self, is_package=True)

    def _family_installed(self, fullname: str) -> bool:
        """Whether the real package of ``fullname``'s family is installed (``auto`` leaves
        the whole family to it)."""
        for prefix, root in _FAMILIES:
            if _under(fullname, prefix):
                if root not in self._installed:
                    self._installed[root] = real_package_installed(root)
                return self._installed[root]
        return False

    def _refuse_unmirrored_child(self, fullname: str) -> None:
        """A submodule of a mirrored package that has no mirror: say which ones do."""
        parent = fullname.rpartition(".")[0]
        if parent in MIRRORS and isinstance(sys.modules.get(parent), types.ModuleType) \
                and getattr(sys.modules[parent], "__mlpipe_mirror__", None):
            raise ModuleNotFoundError(
                f"{fullname} has no local mirror in mlpipe (mirrored: "
                f"{', '.join(sorted(n for n in MIRRORS if n.startswith(parent)))}); import the "
                "names from one of those, or install the real package and set "
                f"{ENV_FLAG}=0", name=fullname)

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> types.ModuleType | None:
        return None

    def exec_module(self, module: types.ModuleType) -> None:
        module.__path__ = []
        module.__mlpipe_mirror__ = True  # type: ignore[attr-defined]
        if _inert(module.__name__):
            module.__getattr__ = lambda name: Inert  # type: ignore[method-assign]
            return
        hint = _cloud_only(module.__name__)
        if hint is not None:
            from mlpipe.unavailable import unavailable_module  # noqa: PLC0415 - at first use

            module.__getattr__ = unavailable_module(  # type: ignore[method-assign]
                module.__name__, hint)
            return
        target = mirror_of(module.__name__)
        if target is None:  # a parent package (``azureml``) that is not installed
            return
        mirror = importlib.import_module(target)
        names = getattr(mirror, "__all__", None) or [n for n in vars(mirror) if
                                                     not n.startswith("_")]
        module.__all__ = list(names)  # type: ignore[attr-defined]
        module.__doc__ = f"mlpipe's local mirror of {module.__name__} (from {target})"
        for name, value in vars(mirror).items():
            if not name.startswith("_"):
                setattr(module, name, value)

        def __getattr__(name: str) -> Any:
            try:
                return getattr(mirror, name)
            except AttributeError:
                raise AttributeError(f"module {module.__name__!r} has no attribute {name!r} in "
                                     f"mlpipe's local mirror ({target})") from None

        module.__getattr__ = __getattr__  # type: ignore[method-assign]


def real_package_installed(name: str) -> bool:
    """Whether the real module ``name`` is installed: the other finders find it (its parents
    looked up the same way, nothing imported). ``importlib.util.find_spec`` cannot tell once
    the hook is installed: it finds the mirror."""
    path: Any = None
    parts = name.split(".")
    for depth in range(1, len(parts) + 1):
        current = ".".join(parts[:depth])
        loaded = sys.modules.get(current)
        if loaded is not None and not getattr(loaded, "__mlpipe_mirror__", False):
            path = getattr(loaded, "__path__", None)
        else:
            spec = None
            for finder in sys.meta_path:
                find = getattr(finder, "find_spec", None)
                if isinstance(finder, MirrorFinder) or find is None:
                    continue
                spec = find(current, path)
                if spec is not None:
                    break
            if spec is None:
                return False
            path = spec.submodule_search_locations
        if path is None and depth < len(parts):
            return False
    return True


def install(how: Mode = "auto") -> MirrorFinder | None:
    """Put the finder first on ``sys.meta_path`` (idempotent; ``force`` upgrades an ``auto``
    finder and forgets the real Azure modules already imported). ``off`` removes it."""
    current = next((f for f in sys.meta_path if isinstance(f, MirrorFinder)), None)
    if how == "off":
        if current is not None:
            sys.meta_path.remove(current)
        return None
    if current is not None and (current.forced or how == "auto"):
        return current
    if how == "force":
        for name in list(sys.modules):
            if (mirror_of(name) or _under(name, "azureml")) and name not in FALLBACKS:
                del sys.modules[name]
    if current is not None:
        sys.meta_path.remove(current)
    finder = MirrorFinder(forced=how == "force")
    sys.meta_path.insert(0, finder)
    return finder


def set_mode(how: Mode) -> None:
    """Make ``how`` this process's mode (:data:`ENV_FLAG`, inherited by its children)."""
    if how == "auto":
        os.environ.pop(ENV_FLAG, None)
    else:
        os.environ[ENV_FLAG] = "1" if how == "force" else "0"


def install_from_environment() -> MirrorFinder | None:
    """Install the hook the way :data:`ENV_FLAG` asks (``auto`` when it is unset)."""
    return install(mode())


def child_environment(env: Mapping[str, str]) -> dict[str, str]:
    """``env`` for a process mlpipe starts whose Python should resolve the mirrors too: the
    startup folder first on ``PYTHONPATH`` (unless :data:`ENV_FLAG` is ``0``)."""
    out = dict(env)
    if out.get(ENV_FLAG, "").strip() == "0":
        return out
    parts = [p for p in out.get("PYTHONPATH", "").split(os.pathsep) if p and p != STARTUP_DIR]
    out["PYTHONPATH"] = os.pathsep.join([STARTUP_DIR, *parts])
    return out


__all__ = ["CLOUD_ONLY", "ENV_FLAG", "FALLBACKS", "INERT", "MIRRORS", "PROGRAMS", "STARTUP_DIR",
           "V1_PACKAGES",
           "Inert",
           "MirrorFinder", "Mode", "child_environment", "install", "install_from_environment",
           "mirror_of", "mode", "real_package_installed", "set_mode"]
