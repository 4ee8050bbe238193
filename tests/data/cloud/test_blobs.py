"""The blob listing against Azurite: pages requested as the iteration needs them, in the
order the same files on disk are listed."""

from __future__ import annotations

from pathlib import Path

import pytest

from mlpipe.data.cloud import blobs
from mlpipe.data.cloud.access import StorageAccess
from mlpipe.data.listing import iter_files
from tests.azurite_support import KEY, Azurite

NAMES = [f"f{i:02d}.txt" for i in range(12)] + ["a.txt", "a/b.txt", "a-b/c.txt", ".hidden",
                                                 "MLTable", "z/MLTable"]


def _access(azurite: Azurite) -> StorageAccess:
    return StorageAccess(azurite.url(), "devstoreaccount1", "account_key", "the test's key", KEY)


def test_the_order_is_the_local_listings(tmp_path: Path, azurite: Azurite) -> None:
    container = azurite.container("order")
    for name in NAMES:
        container.upload_blob(f"in/{name}", b"x")
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_bytes(b"x")
    listed = [entry.name for entry in blobs.iter_blobs(_access(azurite),
                                                      container.container_name, "in")]
    on_disk = [Path(path).relative_to(tmp_path).as_posix() for path, _ in iter_files(str(tmp_path))]
    assert listed == on_disk
    assert "MLTable" not in listed and "z/MLTable" in listed and ".hidden" not in listed


def test_pages_are_requested_as_the_iteration_needs_them(
        azurite: Azurite, monkeypatch: pytest.MonkeyPatch) -> None:
    container = azurite.container("pages")
    for i in range(12):
        container.upload_blob(f"in/f{i:02d}.txt", b"x")
    monkeypatch.setattr(blobs, "PAGE", 5)
    name = container.container_name

    def lists() -> int:
        return len([r for r in azurite.requests("GET", f"/{name}?") if "comp=list" in r])

    entries = blobs.iter_blobs(_access(azurite), name, "in", sort_limit=1)  # streamed
    first = next(entries)
    assert first.name == "f00.txt" and lists() == 1
    rest = list(entries)
    assert len(rest) == 11 and lists() == 3
    assert all(entry.etag and entry.size == 1 for entry in rest)
