"""The blob listing against Azurite: pages requested as the iteration needs them, in the
order the same files on disk are listed."""

from __future__ import annotations

import http.server
import threading
from pathlib import Path

import pytest

from mlpipe.data.cloud import blobs
from mlpipe.data.cloud.access import StorageAccess, access_for
from mlpipe.data.listing import iter_files
from mlpipe.plan import CloudLocation
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


class _AzureAnswers(http.server.BaseHTTPRequestHandler):
    """Answers every request as Azure Storage answers an anonymous one it refuses: the
    status and ``x-ms-error-code`` the test sets (Azurite gives 403 for all of them)."""

    answer = (404, "ResourceNotFound")

    def _refuse(self) -> None:
        status, code = self.answer
        body = (f'<?xml version="1.0" encoding="utf-8"?><Error><Code>{code}</Code>'
                "<Message>refused</Message></Error>").encode()
        self.send_response(status)
        self.send_header("x-ms-error-code", code)
        self.send_header("Content-Type", "application/xml")
        self.send_header("Content-Length", str(len(body) if self.command != "HEAD" else 0))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    do_GET = do_HEAD = _refuse

    def log_message(self, *args: object) -> None:
        pass


@pytest.mark.parametrize(("status", "code", "want", "expected"), [
    (404, "ResourceNotFound", "folder", "cannot be read anonymously (HTTP 404 ResourceNotFound: "
                                        "a private container, or none of that name)"),
    (403, "AuthorizationFailure", "file", "is not public (HTTP 403 AuthorizationFailure: the "
                                          "account refused an anonymous request)"),
    (401, "NoAuthenticationInformation", "folder", "is not public (HTTP 401 "
                                                   "NoAuthenticationInformation"),
    (409, "PublicAccessNotPermitted", "folder", "account 'acct' allows no anonymous access "
                                                "(HTTP 409 PublicAccessNotPermitted)"),
    (404, "BlobNotFound", "file", "no blob 'in/x.csv' in the public container 'data'"),
])
def test_a_container_read_anonymously_is_refused_by_the_services_answer(
        status: int, code: str, want: str, expected: str) -> None:
    handler = type("Answers", (_AzureAnswers,), {"answer": (status, code)})
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}/acct"
        location = CloudLocation(uri="https://acct.blob.core.windows.net/data/in/x.csv",
                                 account_name="acct", account_url=url, container="data",
                                 path="in/x.csv", public=True)
        problem = blobs.probe(location, access_for(location), want)
    finally:
        server.shutdown()
        server.server_close()
    assert problem is not None and expected in problem.message
    if code != "BlobNotFound":
        assert "register a datastore of account 'acct', container 'data'" in problem.fix


def test_an_unreachable_public_account_says_how_to_say_where_it_is() -> None:
    location = CloudLocation(uri="https://acct.blob.core.windows.net/data/in/",
                             account_name="acct", account_url="http://127.0.0.1:9/acct",
                             container="data", path="in", public=True)
    problem = blobs.probe(location, access_for(location), "folder")
    assert problem is not None
    assert problem.message == "cannot reach the storage account at http://127.0.0.1:9/acct"
    assert '[datastores.<name>] account_name = "acct", account_url = "..."' in problem.fix
