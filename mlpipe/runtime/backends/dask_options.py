"""Which Dask cluster a job uses, named as Dask names it: the dask backend's options.

``scheduler`` is an address (``tcp://host:8786``, ``tls://host:8786``), ``scheduler_file``
the JSON file ``dask scheduler --scheduler-file`` writes (its ``address``); the TLS
settings are those of Dask's :class:`distributed.security.Security` (``tls_ca_file``,
``tls_client_cert``, ``tls_client_key``, ``require_encryption``). They come, first found
first, from the command line (``--scheduler``, ``--scheduler-file``), from the ``[dask]``
table of the job's ``mlpipe.toml``, or from Python (``DaskBackend(address=...,
security=...)``); ``$MLPIPE_DASK_SCHEDULER`` is read once, as the default address. With
none of them, the job starts a LocalCluster of its own.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Mapping
from dataclasses import dataclass, fields, replace
from pathlib import Path
from typing import Any

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

from mlpipe.diagnostics import did_you_mean
from mlpipe.runtime.backends.errors import BackendError

SCHEDULER_ENV = "MLPIPE_DASK_SCHEDULER"
TOML_FILE = "mlpipe.toml"  # compiler.assets.ASSETS_FILE (the runtime does not import the compiler)
TLS_KEYS = ("tls_ca_file", "tls_client_cert", "tls_client_key")


class DaskOptionsError(BackendError):
    """A ``[dask]`` table, a scheduler file or an option that cannot be used (said with the
    file and the key)."""


@dataclass(frozen=True)
class DaskOptions:
    """The dask backend's options (see the module docstring); ``origin`` says where they
    came from, for messages."""

    scheduler: str | None = None
    scheduler_file: str | None = None
    tls_ca_file: str | None = None
    tls_client_cert: str | None = None
    tls_client_key: str | None = None
    require_encryption: bool = False
    origin: str = ""

    @classmethod
    def from_table(cls, table: Mapping[str, Any], where: str, base_dir: str | Path) -> DaskOptions:
        """The ``[dask]`` table of ``where`` (an ``mlpipe.toml``); relative files are read from
        ``base_dir``. Unknown keys and wrong types are refused with the key and a "did you
        mean"."""
        known = {field.name for field in fields(cls)} - {"origin"}
        values: dict[str, Any] = {}
        for key, value in table.items():
            if key not in known:
                hint = did_you_mean(key, sorted(known))
                raise DaskOptionsError(f"{where}: [dask] {key}: not a setting of the dask backend"
                                       f" (it takes {', '.join(sorted(known))})"
                                       + (f"; {hint}" if hint else ""))
            wanted = bool if key == "require_encryption" else str
            if not isinstance(value, wanted):
                raise DaskOptionsError(f"{where}: [dask] {key}: expected "
                                       f"{'true or false' if wanted is bool else 'a string'}, "
                                       f"got {value!r}")
            if isinstance(value, str) and key in (*TLS_KEYS, "scheduler_file") \
                    and not os.path.isabs(value):
                value = str(Path(base_dir) / value)
            values[key] = value
        return cls(**values, origin=where)

    def over(self, fallback: DaskOptions) -> DaskOptions:
        """These options where set, ``fallback``'s elsewhere (a scheduler given here replaces
        a scheduler file there, and the other way round)."""
        if self.scheduler or self.scheduler_file:
            fallback = replace(fallback, scheduler=None, scheduler_file=None)
        merged = {field.name: getattr(self, field.name) or getattr(fallback, field.name)
                  for field in fields(self)}
        return DaskOptions(**merged)

    @classmethod
    def given(cls, **values: Any) -> DaskOptions:
        """The options given to the backend (``--scheduler ...`` on the command line,
        ``backend_options={...}`` in Python): the ``read_options`` of the backends' table."""
        return cls(**values, origin="the dask backend's options")

    @classmethod
    def from_toml(cls, base_dir: str | Path) -> DaskOptions:
        """The ``[dask]`` table of ``<base_dir>/mlpipe.toml`` (the job's, beside its YAML);
        empty options when there is no such file or table."""
        path = Path(base_dir) / TOML_FILE
        if not path.is_file():
            return cls()
        try:
            data = tomllib.loads(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as error:
            raise DaskOptionsError(f"{path}: cannot read it: {error}") from None
        table = data.get("dask")
        if table is None:
            return cls()
        if not isinstance(table, dict):
            raise DaskOptionsError(f"{path}: [dask] must be a table (scheduler = \"tcp://...\")")
        return cls.from_table(table, f"{path} [dask]", path.parent)

    def address(self) -> str | None:
        """The scheduler's address: ``scheduler``, else the ``address`` in ``scheduler_file``
        (:class:`DaskOptionsError` naming the file when it cannot be read), else ``None``
        (a LocalCluster)."""
        if self.scheduler:
            return self.scheduler
        if not self.scheduler_file:
            return None
        path = Path(self.scheduler_file)
        try:
            address = json.loads(path.read_text(encoding="utf-8"))["address"]
        except FileNotFoundError:
            raise DaskOptionsError(
                f"scheduler file {path}: no such file (a scheduler started with `dask "
                f"scheduler --scheduler-file {path}` writes it)") from None
        except (OSError, ValueError, KeyError, TypeError) as error:
            raise DaskOptionsError(f"scheduler file {path}: no scheduler address in it "
                                   f"({type(error).__name__}: {error})") from None
        if not isinstance(address, str) or not address:
            raise DaskOptionsError(f"scheduler file {path}: no scheduler address in it")
        return address

    def security(self) -> Any:
        """Dask's ``Security`` for these TLS settings (``None`` when there are none: Dask's
        own configuration then applies)."""
        if not (self.require_encryption or any(getattr(self, key) for key in TLS_KEYS)):
            return None
        from distributed.security import Security  # noqa: PLC0415

        for key in TLS_KEYS:
            value = getattr(self, key)
            if value and not os.path.isfile(value):
                raise DaskOptionsError(f"{key} {value}: no such file"
                                       + (f" ({self.origin})" if self.origin else ""))
        return Security(require_encryption=self.require_encryption or None,
                        **{key: getattr(self, key) for key in TLS_KEYS if getattr(self, key)})


def chosen_options(given: DaskOptions | None = None,
                   base_dir: str | Path | None = None) -> DaskOptions:
    """The cluster a job uses: ``given`` (the command line, Python) over the ``[dask]`` table
    of the job's ``mlpipe.toml`` (in ``base_dir``) over ``$MLPIPE_DASK_SCHEDULER``, which is
    read here and nowhere else; :class:`DaskOptionsError` for a ``[dask]`` table that cannot
    be used."""
    from_toml = DaskOptions.from_toml(base_dir) if base_dir is not None else DaskOptions()
    address = os.environ.get(SCHEDULER_ENV) or None
    environment = DaskOptions(scheduler=address, origin=f"${SCHEDULER_ENV}" if address else "")
    return (given or DaskOptions()).over(from_toml.over(environment))


__all__ = ["SCHEDULER_ENV", "TOML_FILE", "DaskOptions", "DaskOptionsError", "chosen_options"]
