"""``download`` inputs: every blob copied once into a cache keyed by its etag, then linked
into the local folder the step reads. A blob whose etag is in the cache is not downloaded
again (a rerun, a resume, another job over the same runs folder)."""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import time
from collections.abc import Callable, Iterator
from pathlib import Path

from mlpipe.data.cloud.access import StorageAccess
from mlpipe.data.cloud.blobs import BlobEntry, blob_properties, iter_blobs
from mlpipe.data.cloud.reader import reader_for
from mlpipe.data.cloud.uris import join
from mlpipe.plan import CloudLocation

BATCH = 64  # blobs downloaded at once
Progress = Callable[[int, int, bool], None]  # (blobs done, bytes done, finished)


def cache_file(cache_root: Path, location: CloudLocation, name: str, etag: str) -> Path:
    """Where the blob ``name`` (in the location's container) at ``etag`` is kept."""
    tag = re.sub(r"[^A-Za-z0-9_.-]", "", etag) or hashlib.sha256(etag.encode()).hexdigest()[:16]
    return cache_root / location.account_name / location.container / tag / name


def materialize(location: CloudLocation, access: StorageAccess, target: Path, cache_root: Path,
                *, single_file: bool, progress: Progress | None = None,
                prune: bool = True) -> int:
    """Make ``target`` hold the location's blob (``single_file``) or every blob below it (a
    folder: hidden ones and an MLTable file too; the listing of the copy leaves out what it
    leaves out on disk), downloading through the cache; with ``prune``, files of an earlier
    copy that are no longer in the account are removed.
    Returns how many blobs were downloaded (not found in the cache)."""
    if single_file:
        entry = blob_properties(access, location.container, location.path)
        entries: Iterator[BlobEntry] = iter([BlobEntry(Path(location.path).name, entry.size,
                                                       entry.etag)])
        prefix = location.path.rpartition("/")[0]
        folder = target.parent
    else:
        entries = iter_blobs(access, location.container, location.path, every=True)
        prefix, folder = location.path, target
    folder.mkdir(parents=True, exist_ok=True)
    kept: set[str] = set()
    pending: list[tuple[BlobEntry, Path]] = []
    downloaded = done = done_bytes = 0
    last = time.monotonic()
    for entry in entries:
        cached = cache_file(cache_root, location, join(prefix, entry.name), entry.etag)
        kept.add(entry.name)
        if cached.exists():
            _link(cached, folder / entry.name)
        else:
            pending.append((entry, cached))
        if len(pending) >= BATCH:
            downloaded += _download(access, location, prefix, pending, folder)
            pending = []
        done += 1
        done_bytes += entry.size
        if progress is not None and time.monotonic() - last > 2:
            progress(done, done_bytes, False)
            last = time.monotonic()
    downloaded += _download(access, location, prefix, pending, folder)
    if prune and not single_file:
        _remove_others(folder, kept)
    if progress is not None:
        progress(done, done_bytes, True)
    return downloaded


def _download(access: StorageAccess, location: CloudLocation, prefix: str,
              pending: list[tuple[BlobEntry, Path]], folder: Path) -> int:
    if not pending:
        return 0
    temps = [cached.with_name(f".{cached.name}.{os.getpid()}.part") for _, cached in pending]
    reader_for(access).fetch(location.container, [join(prefix, e.name) for e, _ in pending],
                             [str(t) for t in temps])
    for (entry, cached), temp in zip(pending, temps, strict=True):
        os.replace(temp, cached)
        _link(cached, folder / entry.name)
    return len(pending)


def _link(cached: Path, dest: Path) -> None:
    """``dest`` becomes the cached file (a hard link; a copy across file systems), atomically."""
    if dest.exists() and os.path.samefile(cached, dest):
        return
    dest.parent.mkdir(parents=True, exist_ok=True)
    temp = dest.with_name(f".{dest.name}.{os.getpid()}.link")
    with contextlib.suppress(FileNotFoundError):
        temp.unlink()
    try:
        os.link(cached, temp)
    except OSError:
        import shutil  # noqa: PLC0415

        shutil.copyfile(cached, temp)
    os.replace(temp, dest)


def _remove_others(folder: Path, kept: set[str]) -> None:
    for path in sorted(folder.rglob("*"), reverse=True):
        relative = path.relative_to(folder).as_posix()
        if path.is_file() and relative not in kept:
            path.unlink()
        elif path.is_dir() and not any(path.iterdir()):
            path.rmdir()


__all__ = ["cache_file", "materialize"]
