"""Azurite, Microsoft's Azure Storage emulator (the npm package ``azurite``), as the tests'
storage account: a real HTTP server speaking the Blob API, started once per test session on
a free port with its own temporary folder.

It is found at ``$MLPIPE_AZURITE`` (the ``azurite-blob`` program), in the checkout's
``.azurite/`` (where ``.ci/run`` installs it: ``npm install --prefix .azurite azurite``), or
on ``PATH``. Without it the tests that need it are skipped, except in CI (``$CI`` set),
where they fail.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import signal
import subprocess
import tempfile
import time
import urllib.error
import urllib.request
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
# Azurite's well-known development key, and the extra accounts the published programs name
KEY = "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="
ACCOUNTS = ("devstoreaccount1", "pipelinedata", "automlsamplenotebookdata", "azuremlexamples")
INSTALL = "npm install --prefix .azurite azurite"


def azurite_program() -> str | None:
    """The ``azurite-blob`` program to run, or ``None``."""
    given = os.environ.get("MLPIPE_AZURITE")
    if given:
        return given
    local = REPO / ".azurite" / "node_modules" / ".bin" / "azurite-blob"
    if local.is_file():
        return str(local)
    return shutil.which("azurite-blob")


@dataclass
class Azurite:
    """A running Azurite: its blob endpoint, account key and access log."""

    process: subprocess.Popen[bytes]
    host: str
    folder: Path
    log: Path
    _made: list[str] = field(default_factory=list)

    def url(self, account: str = "devstoreaccount1") -> str:
        return f"{self.host}/{account}"

    def connection_string(self, account: str = "devstoreaccount1") -> str:
        return (f"DefaultEndpointsProtocol=http;AccountName={account};AccountKey={KEY};"
                f"BlobEndpoint={self.url(account)};")

    def service(self, account: str = "devstoreaccount1") -> Any:
        from azure.storage.blob import BlobServiceClient

        return BlobServiceClient.from_connection_string(self.connection_string(account))

    def container(self, prefix: str = "c", account: str = "devstoreaccount1",
                  public: bool = False) -> Any:
        """A new, empty container (a unique name) of ``account``."""
        name = f"{prefix}{len(self._made)}x{os.getpid()}"[:63].lower().replace("_", "-")
        self._made.append(name)
        client = self.service(account).get_container_client(name)
        client.create_container(public_access="container" if public else None)
        return client

    def requests(self, method: str, fragment: str) -> list[str]:
        """The access log's request lines of ``method`` whose path contains ``fragment``."""
        pattern = re.compile(rf'"{method} (\S+) HTTP')
        lines = self._settled_log()
        return [m.group(1) for m in map(pattern.search, lines) if m and fragment in m.group(1)]

    def _settled_log(self) -> list[str]:
        """The access log once every request answered so far is in it.

        Azurite writes a request's line after answering it, so a line may still be missing
        just after the client got its answer: send a marker request and wait for its line.
        """
        marker = f"mlpipe-sync-{uuid.uuid4().hex}"
        # any answer will do (an error status too): it is the log line that is waited for
        with contextlib.suppress(urllib.error.URLError, OSError):
            urllib.request.urlopen(f"{self.host}/{marker}", timeout=10).close()
        deadline = time.monotonic() + 10
        while True:
            lines = self.log.read_text(errors="replace").splitlines()
            if any(marker in line for line in lines) or time.monotonic() > deadline:
                return lines
            time.sleep(0.02)

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        shutil.rmtree(self.folder, ignore_errors=True)


def start_azurite(program: str, *options: str) -> Azurite:
    """Start ``azurite-blob`` on a free loopback port, in a folder of its own (``options``:
    more of its options, such as ``--inMemoryPersistence``)."""
    folder = Path(tempfile.mkdtemp(prefix="mlpipe-azurite-"))
    log = folder / "access.log"
    env = {**os.environ,
           "AZURITE_ACCOUNTS": ";".join(f"{account}:{KEY}" for account in ACCOUNTS)}
    with open(log, "wb") as out:
        process = subprocess.Popen(
            [program, "--skipApiVersionCheck", "--loose", "--disableTelemetry",
             *(() if "--inMemoryPersistence" in options else ("--location", str(folder / "data"))),
             "--blobHost", "127.0.0.1", "--blobPort", "0", *options],
            stdout=out, stderr=subprocess.STDOUT, env=env, start_new_session=True)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        found = re.search(r"listens on (http://127\.0\.0\.1:\d+)", log.read_text(errors="replace"))
        if found:
            return Azurite(process, found.group(1), folder, log)
        if process.poll() is not None:
            break
        time.sleep(0.1)
    text = log.read_text(errors="replace")
    process.kill()
    shutil.rmtree(folder, ignore_errors=True)
    raise RuntimeError(f"Azurite did not start: {text[-2000:]}")
