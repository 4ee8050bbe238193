"""Registered datastores: where each is, kept in the runs folder's asset store, and its
secret kept apart.

``<runs-dir>/assets/datastores.json`` holds each datastore's name, type, account,
container, endpoint and protocol, and which kind of secret it has (never the secret);
``<runs-dir>/assets/datastore_credentials.json`` (mode 0600) holds the account keys and
SAS tokens. Nothing else of mlpipe writes a secret anywhere: job records, plans, logs,
reports and messages name the datastore, never its credentials.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Literal

from mlpipe.data.cloud.uris import DEFAULT_SUFFIX
from mlpipe.runs import ASSETS_DIR

DATASTORES_FILE = Path(ASSETS_DIR) / "datastores.json"
CREDENTIALS_FILE = Path(ASSETS_DIR) / "datastore_credentials.json"
SECRET_KINDS = ("account_key", "sas_token")
DatastoreType = Literal["azure_blob", "azure_data_lake_gen2"]


@dataclass(frozen=True)
class DatastoreInfo:
    """A registered datastore, without its secret (``credential`` says which kind it has:
    ``account_key``, ``sas_token``, or ``None`` for identity-based access)."""

    name: str
    type: DatastoreType
    account_name: str
    container_name: str
    endpoint: str = DEFAULT_SUFFIX
    protocol: str = "https"
    credential: str | None = None
    description: str | None = None
    tags: dict[str, str] = field(default_factory=dict)

    @property
    def account_url(self) -> str:
        """The account's blob endpoint (ADLS Gen2 file systems are read through it too)."""
        return f"{self.protocol}://{self.account_name}.blob.{self.endpoint}"

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


class DatastoreStore:
    """The datastores registered under a runs folder."""

    def __init__(self, runs_dir: str | os.PathLike[str]) -> None:
        self.runs_dir = Path(runs_dir)
        self.path = self.runs_dir / DATASTORES_FILE
        self.credentials_path = self.runs_dir / CREDENTIALS_FILE

    def get(self, name: str) -> DatastoreInfo | None:
        fields = _read(self.path).get(name)
        return _info(fields) if isinstance(fields, dict) else None

    def list(self) -> list[DatastoreInfo]:
        found = (_info(fields) for _, fields in sorted(_read(self.path).items())
                 if isinstance(fields, dict))
        return [info for info in found if info is not None]

    def secret(self, name: str) -> tuple[str, str] | None:
        """``(kind, value)`` of the datastore's secret, or ``None``."""
        return secret_in(self.credentials_path, name)

    def register(self, info: DatastoreInfo, secret: tuple[str, str] | None) -> None:
        """Record ``info`` (replacing one of the same name) and its secret, if any."""
        if secret is not None and secret[0] not in SECRET_KINDS:
            raise ValueError(f"unknown secret kind {secret[0]!r}")
        info = DatastoreInfo(**{**info.to_dict(), "credential": secret[0] if secret else None})
        with _locked(self.path.parent):
            entries = _read(self.path)
            entries[info.name] = info.to_dict()
            _write(self.path, entries, mode=0o644)
            secrets = _read(self.credentials_path)
            if secret is None:
                secrets.pop(info.name, None)
            else:
                secrets[info.name] = {secret[0]: secret[1]}
            if secrets or self.credentials_path.exists():
                _write(self.credentials_path, secrets, mode=0o600)

    def delete(self, name: str) -> bool:
        with _locked(self.path.parent):
            entries = _read(self.path)
            found = entries.pop(name, None) is not None
            _write(self.path, entries, mode=0o644)
            secrets = _read(self.credentials_path)
            if secrets.pop(name, None) is not None:
                _write(self.credentials_path, secrets, mode=0o600)
            return found


def secret_in(credentials_file: str | os.PathLike[str], name: str) -> tuple[str, str] | None:
    """``(kind, value)`` of datastore ``name``'s secret in ``credentials_file``, or ``None``."""
    entry = _read(Path(credentials_file)).get(name)
    if isinstance(entry, dict):
        for kind in SECRET_KINDS:
            if isinstance(entry.get(kind), str):
                return kind, entry[kind]
    return None


def register_hint(account: str, container: str) -> str:
    """What to do about a container of ``account`` that cannot be read as it is (no
    datastore names it, and it is not public)."""
    return (f"register a datastore of account '{account}', container '{container}' with its "
            "credential (mlpipe datastore create --file datastore.yml), or map the URI to a "
            "local path in mlpipe.toml [assets]")


def _info(fields: dict[str, Any]) -> DatastoreInfo | None:
    try:
        return DatastoreInfo(**{k: v for k, v in fields.items()
                                if k in DatastoreInfo.__dataclass_fields__})
    except TypeError:  # a damaged entry is no datastore
        return None


def _read(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _write(path: Path, data: dict[str, Any], *, mode: int) -> None:
    """Atomically, the new file created with ``mode`` from its first byte (a secret file is
    never readable by others, not even for a moment)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    temp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    with contextlib.suppress(FileNotFoundError):
        temp.unlink()
    fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode)
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        handle.write(json.dumps(data, indent=2, sort_keys=True))
    os.chmod(temp, mode)  # the umask may have taken bits away; never added any
    os.replace(temp, path)


@contextlib.contextmanager
def _locked(folder: Path) -> Iterator[None]:
    folder.mkdir(parents=True, exist_ok=True)
    with open(folder / "datastores.lock", "a+b") as handle:
        if sys.platform == "win32":  # pragma: no cover
            yield
            return
        import fcntl

        fcntl.flock(handle.fileno(), fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle.fileno(), fcntl.LOCK_UN)


__all__ = ["CREDENTIALS_FILE", "DATASTORES_FILE", "SECRET_KINDS", "DatastoreInfo",
           "DatastoreStore", "DatastoreType", "register_hint", "secret_in"]
