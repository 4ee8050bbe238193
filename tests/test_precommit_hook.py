"""The ``mlpipe-validate`` hook through real ``pre-commit`` on a temporary git repository.

The hook repository is a copy of this checkout (package, pyproject, hook file) committed
to a temporary git repository. So that installing the hook environment works offline
and fast, the virtualenv sees the system site-packages (where mlpipe's dependencies are
installed) and pip neither uses an index nor builds in isolation; mlpipe's dependencies are
imported from the interpreter running the tests (``PYTHONPATH``), so a venv works too.
"""

from __future__ import annotations

import os
import shutil
import site
import subprocess
import sys
from pathlib import Path

import pytest

from .conftest import REPO

pytestmark = pytest.mark.slow


def _git(cwd: Path, *args: str) -> str:
    proc = subprocess.run(["git", "-c", "user.email=test@example.com", "-c", "user.name=test", *args],
                          cwd=cwd, capture_output=True, text=True, check=True)
    return proc.stdout.strip()


def _hook_repo(root: Path) -> str:
    root.mkdir()
    for name in ("pyproject.toml", "README.md", ".pre-commit-hooks.yaml"):
        shutil.copy(REPO / name, root / name)
    shutil.copytree(REPO / "mlpipe", root / "mlpipe", ignore=shutil.ignore_patterns("__pycache__"))
    _git(root, "init", "-q")
    _git(root, "add", "-A")
    _git(root, "commit", "-qm", "hooks")
    return _git(root, "rev-parse", "HEAD")


def _pre_commit() -> str | None:
    """The ``pre-commit`` of the interpreter running the tests (its venv's scripts folder,
    which need not be on PATH), else the one on PATH."""
    beside = Path(sys.executable).parent / ("pre-commit.exe" if os.name == "nt" else "pre-commit")
    return str(beside) if beside.is_file() else shutil.which("pre-commit")


BUILD_TOOLS = ("setuptools", "pkg_resources", "_distutils_hack", "pip", "wheel", "distutils-precedence")


def _dependencies_view(folder: Path) -> Path:
    """A folder of links to the packages of the interpreter running the tests, build tools
    left out (the hook environment builds mlpipe with its own setuptools)."""
    folder.mkdir()
    for site_dir in map(Path, site.getsitepackages()):
        for entry in site_dir.iterdir() if site_dir.is_dir() else ():
            if entry.name.startswith(BUILD_TOOLS) or entry.suffix == ".pth" or \
                    entry.name.startswith(("mlpipe", "__editable__")):
                continue
            if not (folder / entry.name).exists():
                (folder / entry.name).symlink_to(entry)
    return folder


def test_hook_rejects_the_bad_file_and_accepts_the_good_one(tmp_path: Path) -> None:
    pre_commit = _pre_commit()
    if pre_commit is None or shutil.which("git") is None:
        pytest.skip("pre-commit and git are needed")
    sha = _hook_repo(tmp_path / "hooks")
    user = tmp_path / "user"
    (user / "src").mkdir(parents=True)
    (user / "src" / "prep.py").write_text("print('hi')\n")
    (user / ".pre-commit-config.yaml").write_text(
        f"repos:\n  - repo: {tmp_path / 'hooks'}\n    rev: {sha}\n    hooks:\n      - id: mlpipe-validate\n")
    (user / "good.yml").write_text("type: command\nname: good\ncode: ./src\ncommand: python prep.py\n"
                                   "environment: azureml:env:1\n")
    (user / "bad.yml").write_text("type: command\nname: bad\ncode: ./src\ncommand: python prep.py ${{inputs.nope}}\n"
                                  "environment: azureml:env:1\n")
    (user / "environment.yml").write_text("name: env\ndependencies:\n  - pandas\n")
    _git(user, "init", "-q")
    _git(user, "add", "-A")
    env = {**os.environ, "PRE_COMMIT_HOME": str(tmp_path / "cache"), "VIRTUALENV_SYSTEM_SITE_PACKAGES": "1",
           "PIP_NO_INDEX": "1", "PIP_NO_BUILD_ISOLATION": "0"}
    # mlpipe's dependencies come from the interpreter running the tests (a venv's packages
    # are not the system's): the hook environment installs mlpipe alone and imports them here
    env["PIP_NO_DEPS"] = "1"
    env["PYTHONPATH"] = str(_dependencies_view(tmp_path / "deps"))
    run = subprocess.run([pre_commit, "run", "--all-files"], cwd=user, env=env, capture_output=True,
                         text=True, timeout=240)
    assert run.returncode == 1, run.stdout + run.stderr
    assert "bad.yml:4:1: command: ${{inputs.nope}} names no input of this step" in run.stdout
    assert "good.yml: OK (command component)" in run.stdout
    assert "environment.yml: skipped" in run.stdout
    run = subprocess.run([pre_commit, "run", "--files", "good.yml", "environment.yml"], cwd=user, env=env,
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "Passed" in run.stdout
