"""Shared fixtures: the acceptance corpus, a runs folder, the CLI as a subprocess."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

from tests.azurite_support import INSTALL, Azurite, azurite_program, start_azurite

# The suite draws the same examples on every run (a CI run never turns red on an example
# no earlier run drew); HYPOTHESIS_PROFILE=explore draws new ones, to hunt by hand.
settings.register_profile("repeatable", derandomize=True, database=None)
settings.register_profile("explore", derandomize=False, database=None, deadline=None,
                          max_examples=300, suppress_health_check=[
                              HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
settings.load_profile("explore" if os.environ.get("HYPOTHESIS_PROFILE") in ("explore", "long")
                      else "repeatable")

REPO = Path(__file__).resolve().parents[1]
CORPUS = Path(os.environ.get("MLPIPE_CORPUS", REPO.parent / "shared" / "corpus")).resolve()


@pytest.fixture(scope="session")
def corpus() -> Path:
    """``../shared/corpus``; tests that use it are skipped when it is absent."""
    if not (CORPUS / "MANIFEST.md").is_file():
        pytest.skip(f"acceptance corpus not found at {CORPUS}")
    return CORPUS


@pytest.fixture(scope="session")
def azurite() -> Iterator[Azurite]:
    """One Azurite (the Azure Storage emulator) for the test session (tests/azurite_support.py):
    skipped when it is not installed, except in CI, which installs it (.ci/run)."""
    program = azurite_program()
    if program is None:
        if os.environ.get("CI"):
            pytest.fail(f"Azurite is not installed; CI installs it with: {INSTALL}")
        pytest.skip(f"Azurite (the Azure Storage emulator) is not installed: {INSTALL}")
    server = start_azurite(program)
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def runs_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "runs"
    monkeypatch.setenv("MLPIPE_RUNS_DIR", str(path))
    return path


def run_cli(*args: str, cwd: Path | None = None, env: dict[str, str] | None = None,
            timeout: float = 300) -> subprocess.CompletedProcess[str]:
    """Run ``python -m mlpipe ARGS`` in a real subprocess and capture its output."""
    full_env = {**os.environ, "PYTHONPATH": str(REPO), **(env or {})}
    return subprocess.run(
        [sys.executable, "-m", "mlpipe", *args],
        cwd=cwd, env=full_env, capture_output=True, text=True, timeout=timeout,
    )
