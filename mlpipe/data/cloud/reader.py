"""Worker side: the blobs of a mini-batch read to local files when it runs.

A streamed (``ro_mount``) cloud input's mini-batch carries a :class:`BlobFiles` payload:
the account's :class:`~mlpipe.data.cloud.access.StorageAccess` (URL and credential,
resolved on the driver), the container, the folder's prefix, and the blob names. Reading
needs nothing else (no runs folder, no registry), so any worker that can reach the account
reads it: a local worker, or a Dask worker on another machine (:class:`BlobReader`).

``run()`` gets local paths ``<root>/<name>``, whose file names are the blobs' names; each
file is read-only and nothing is ever written back to the account (the reader has no
write path). A worker keeps one mini-batch's blobs at a time: the next load removes them.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from mlpipe.data.cloud.access import StorageAccess
from mlpipe.data.cloud.uris import join
from mlpipe.data.errors import DataError


@dataclass(frozen=True)
class BlobSource:
    """A streamed input: where its blobs are, and the local folder ``run()`` sees them in."""

    access: StorageAccess
    container: str
    prefix: str  # the folder inside the container ("" the whole container)
    root: str  # the local folder standing for ``prefix`` (the input's path)


@dataclass(frozen=True)
class BlobFiles:
    """The payload of a streamed mini-batch: blob names relative to the source's prefix."""

    source: BlobSource
    names: tuple[str, ...]

    def __len__(self) -> int:
        return len(self.names)

    def paths(self, into: str | None = None) -> list[str]:
        """The local paths ``run()`` gets, in order: below the source's ``root``, or below
        ``into`` (a worker that cannot write the run folder)."""
        root = os.path.join(into or self.source.root, "")
        return [root + name for name in self.names]


class BlobReader:
    """Reads blobs of one account to local files; all it needs is the account's access."""

    def __init__(self, access: StorageAccess) -> None:
        self.access = access
        self._fs: Any = None

    @property
    def fs(self) -> Any:
        if self._fs is None:
            self._fs = self.access.filesystem()
        return self._fs

    def fetch(self, container: str, blobs: Sequence[str], targets: Sequence[str]) -> None:
        """Copy each blob (a name in ``container``) to the local file at the same position
        of ``targets`` (folders made), read-only; several at once."""
        for target in targets:
            os.makedirs(os.path.dirname(target) or ".", exist_ok=True)
            with contextlib.suppress(FileNotFoundError):
                os.unlink(target)  # an earlier, read-only copy
        self.fs.get([f"{container}/{name}" for name in blobs], list(targets))
        for target in targets:
            os.chmod(target, 0o444)


_readers: dict[StorageAccess, BlobReader] = {}
_held: list[str] = []  # the files of this process's last streamed mini-batch
_root: list[str | None] = [None]  # where this process reads blobs (None: the input's folder)


def read_into(folder: str | None) -> str | None:
    """Read this process's streamed blobs below ``folder`` from now on (a worker that does
    not see the run folder: a Dask worker on another machine reads them into a scratch
    folder of its own), or in the input's own folder again (``None``); the folder before."""
    before, _root[0] = _root[0], folder
    return before


def reader_for(access: StorageAccess) -> BlobReader:
    """This process's reader of ``access`` (one client per account)."""
    found = _readers.get(access)
    if found is None:
        found = _readers[access] = BlobReader(access)
    return found


def load_blob_files(payload: BlobFiles, into: str | None = None) -> list[str]:
    """Read a streamed mini-batch's blobs to their local paths (below ``into`` when given,
    else below this process's :func:`read_into` folder, else the input's folder; the
    previous mini-batch's files of this process are removed first) and return the paths."""
    release()
    source = payload.source
    paths = payload.paths(into or _root[0])
    try:
        reader_for(source.access).fetch(source.container,
                                        [join(source.prefix, n) for n in payload.names], paths)
    except Exception as error:  # noqa: BLE001 - a storage or network failure fails the batch
        from mlpipe.data.cloud.blobs import describe_error  # noqa: PLC0415
        from mlpipe.plan import CloudLocation  # noqa: PLC0415

        where = CloudLocation(uri="", account_name=source.access.account_name,
                              account_url=source.access.account_url, container=source.container,
                              path=join(source.prefix, payload.names[0]))
        text = describe_error(error, where, source.access).message if getattr(
            error, "status_code", None) or type(error).__name__.startswith("Service") \
            else source.access.scrub(f"{type(error).__name__}: {error}")
        raise DataError(f"cannot read blob '{where.path}' of container '{source.container}' "
                        f"at {source.access.account_url}: {text}", code="cloud-data") from None
    _held.extend(paths)
    return paths


def release() -> None:
    """Remove the files of this process's last streamed mini-batch."""
    while _held:
        with contextlib.suppress(OSError):
            os.unlink(_held.pop())


__all__ = ["BlobFiles", "BlobReader", "BlobSource", "load_blob_files", "read_into", "reader_for",
           "release"]
