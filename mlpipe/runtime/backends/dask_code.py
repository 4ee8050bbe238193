"""A step's code snapshot, sent to Dask workers that cannot see the run folder.

The driver packs the snapshot into one tar archive (:func:`pack_code`: entries sorted,
times and owners fixed, so the same code always gives the same bytes) named by its
SHA-256. A worker keeps each archive it received unpacked in a cache of its own
(:func:`cached_code`, :func:`unpack_code`: ``<Dask worker's local directory>/
mlpipe-code/<digest>/``), so a snapshot travels to a worker once, whatever the number
of steps, jobs or tasks that use it: a worker starts from its cache, and only one whose
cache lacks the snapshot answers so and is sent the archive.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import os
import shutil
import tarfile
import tempfile
import time
from pathlib import Path

CACHE_FOLDER = "mlpipe-code"
KEEP_UNUSED_SECONDS = 7 * 24 * 3600  # snapshots not used for a week leave the cache


def pack_code(snapshot_dir: str) -> tuple[str, bytes]:
    """``(digest, archive)`` of the folder ``snapshot_dir`` (links kept as links)."""
    buffer = io.BytesIO()
    root = Path(snapshot_dir)
    with tarfile.open(fileobj=buffer, mode="w", format=tarfile.PAX_FORMAT) as archive:
        for path in sorted(root.rglob("*"), key=lambda p: p.relative_to(root).as_posix()):
            info = archive.gettarinfo(str(path), path.relative_to(root).as_posix())
            info.mtime, info.uid, info.gid, info.uname, info.gname = 0, 0, 0, "", ""
            info.mode = 0o755 if info.isdir() or info.mode & 0o111 else 0o644
            if info.isreg():
                with open(path, "rb") as handle:
                    archive.addfile(info, handle)
            else:
                archive.addfile(info)
    data = buffer.getvalue()
    return hashlib.sha256(data).hexdigest(), data


def cache_root(local_directory: str) -> Path:
    return Path(local_directory) / CACHE_FOLDER


def cached_code(local_directory: str, digest: str) -> str | None:
    """The unpacked snapshot ``digest`` in this worker's cache, if it is there (it is then
    marked as used now)."""
    folder = cache_root(local_directory) / digest
    if not (folder / ".complete").is_file():
        return None
    with contextlib.suppress(OSError):
        os.utime(folder / ".complete")
    return str(folder)


def unpack_code(local_directory: str, digest: str, archive: bytes) -> str:
    """Unpack ``archive`` into the cache as ``digest`` (checked) and return its folder; two
    processes unpacking the same snapshot at once both end with one whole copy."""
    found = cached_code(local_directory, digest)
    if found is not None:
        return found
    if hashlib.sha256(archive).hexdigest() != digest:
        raise ValueError(f"the code snapshot arrived damaged (its SHA-256 is not {digest})")
    cache = cache_root(local_directory)
    cache.mkdir(parents=True, exist_ok=True)
    _forget_unused(cache)
    scratch = Path(tempfile.mkdtemp(prefix=f".{digest[:12]}-", dir=cache))
    try:
        with tarfile.open(fileobj=io.BytesIO(archive), mode="r") as tar:
            tar.extractall(scratch, filter="data")
        (scratch / ".complete").write_text(digest, encoding="ascii")
        final = cache / digest
        try:
            os.rename(scratch, final)
        except OSError:  # another process put it there first
            if cached_code(local_directory, digest) is None:
                raise
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return str(cache / digest)


def _forget_unused(cache: Path) -> None:
    """Remove the snapshots no step has used for :data:`KEEP_UNUSED_SECONDS`."""
    now = time.time()
    for folder in cache.iterdir():
        marker = folder / ".complete"
        with contextlib.suppress(OSError):
            if marker.is_file() and now - marker.stat().st_mtime > KEEP_UNUSED_SECONDS:
                shutil.rmtree(folder, ignore_errors=True)


__all__ = ["cached_code", "pack_code", "unpack_code"]
