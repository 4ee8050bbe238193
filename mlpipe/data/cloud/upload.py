"""Outputs on a datastore: written locally while the step runs, uploaded when it ends.

Each uploaded file is noted (blob name, size, MD5) in a manifest in the step's state
folder, so uploading again (a resume after a failed upload or a kill) sends only what was
not sent, or what changed since."""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass
from pathlib import Path

from mlpipe.data.cloud.access import StorageAccess
from mlpipe.data.cloud.uris import join
from mlpipe.plan import CloudLocation


class UploadError(Exception):
    """A file could not be uploaded: ``blob`` names where it was going."""

    def __init__(self, blob: str, reason: str) -> None:
        super().__init__(f"cannot upload blob '{blob}': {reason}")
        self.blob = blob
        self.reason = reason


@dataclass(frozen=True)
class UploadCount:
    uploaded: int
    unchanged: int


def upload_output(local: Path, location: CloudLocation, access: StorageAccess,
                  manifest: Path | None) -> UploadCount:
    """Upload the file ``local`` to the location's blob, or every file below the folder
    ``local`` to blobs below the location's prefix (names kept). :class:`UploadError` for
    the first one that fails; the ones before it are in the ``manifest`` (``None``: every
    file is sent, none noted)."""
    if local.is_file():
        files = [(local, location.path or local.name)]
    else:
        files = [(path, join(location.path, path.relative_to(local).as_posix()))
                 for path in sorted(local.rglob("*")) if path.is_file()]
    sent = _read_manifest(manifest) if manifest is not None else {}
    fs = access.filesystem()
    uploaded = unchanged = 0
    log = None
    if manifest is not None:
        manifest.parent.mkdir(parents=True, exist_ok=True)
        log = open(manifest, "a", encoding="utf-8")  # noqa: SIM115 - closed below
    try:
        for path, blob in files:
            stamp = {"size": path.stat().st_size, "md5": _md5(path)}
            if sent.get(blob) == stamp:
                unchanged += 1
                continue
            try:
                fs.put_file(str(path), f"{location.container}/{blob}", overwrite=True)
            except Exception as error:  # noqa: BLE001 - worded without the service's text
                from mlpipe.data.cloud.blobs import describe_error  # noqa: PLC0415

                raise UploadError(f"{location.container}/{blob}", describe_error(
                    error, location, access).message) from None
            if log is not None:
                log.write(json.dumps({"blob": blob, **stamp}) + "\n")
                log.flush()
                os.fsync(log.fileno())
            uploaded += 1
    finally:
        if log is not None:
            log.close()
    return UploadCount(uploaded, unchanged)


def _read_manifest(path: Path) -> dict[str, dict[str, object]]:
    sent: dict[str, dict[str, object]] = {}
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError:
        return sent
    for line in lines:
        try:
            entry = json.loads(line)
            sent[entry["blob"]] = {"size": entry["size"], "md5": entry["md5"]}
        except (ValueError, KeyError, TypeError):
            continue  # a line cut by a kill
    return sent


def _md5(path: Path) -> str:
    digest = hashlib.md5(usedforsecurity=False)
    with open(path, "rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


__all__ = ["UploadCount", "UploadError", "upload_output"]
