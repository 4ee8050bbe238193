"""The project's own ``.pre-commit-config.yaml`` (ruff, the JSON Schemas, the samples, mypy)
is valid and its hooks pass on this checkout; ``.ci/run`` lints in the fast stage."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tests.conftest import REPO

CONFIG = REPO / ".pre-commit-config.yaml"


def test_the_config_is_valid_and_holds_the_projects_habits() -> None:
    proc = subprocess.run([sys.executable, "-m", "pre_commit", "validate-config", str(CONFIG)],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    hooks = {hook["id"]: hook for repo in yaml.safe_load(CONFIG.read_text())["repos"]
             for hook in repo["hooks"]}
    assert set(hooks) == {"ruff", "schemas-current", "samples-valid", "mypy"}
    assert "ruff check" in hooks["ruff"]["entry"]
    assert "schema export --check" in hooks["schemas-current"]["entry"]
    assert "ruff check" in (REPO / ".ci" / "run").read_text()


@pytest.mark.slow  # installs ruff into pre-commit's own environment, then lints the tree
@pytest.mark.skipif(not (REPO / ".git").exists(), reason="pre-commit needs a git checkout")
def test_the_projects_hooks_pass_on_this_checkout(tmp_path: Path) -> None:
    env = {**os.environ, "PRE_COMMIT_HOME": str(tmp_path / "pre-commit"),
           "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
           "PYTHONPATH": str(REPO)}
    for hook in ("ruff", "schemas-current", "samples-valid"):
        proc = subprocess.run([sys.executable, "-m", "pre_commit", "run", hook, "--all-files"],
                              cwd=REPO, env=env, capture_output=True, text=True, timeout=900)
        assert proc.returncode == 0, (hook, proc.stdout + proc.stderr)
