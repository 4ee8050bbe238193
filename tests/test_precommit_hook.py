"""The ``mlpipe-validate`` hook through real ``pre-commit`` on a temporary git repository.

The hook repository is a copy of this checkout (package, pyproject, hook file) committed
to a temporary git repository and tagged ``v0.1.0``; the user's configuration is README.md's
snippet as written (only the URL is replaced). So that installing the hook environment
works offline and fast, pip neither uses an index nor builds in isolation, and mlpipe's
dependencies are imported from the interpreter running the tests (``PYTHONPATH``, build
tools left out), so a venv works too.
"""

from __future__ import annotations

import importlib.util
import os
import re
import shutil
import site
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO

pytestmark = pytest.mark.slow


def _git(cwd: Path, *args: str) -> str:
    proc = subprocess.run(["git", "-c", "user.email=test@example.com", "-c", "user.name=test", *args],
                          cwd=cwd, capture_output=True, text=True, check=True)
    return proc.stdout.strip()


def _hook_repo(root: Path) -> str:
    """A copy of this checkout's hook files, committed and tagged ``v0.1.0`` as the README's
    snippet expects; returns the commit."""
    root.mkdir()
    for name in ("pyproject.toml", "README.md", ".pre-commit-hooks.yaml"):
        shutil.copy(REPO / name, root / name)
    shutil.copytree(REPO / "mlpipe", root / "mlpipe", ignore=shutil.ignore_patterns("__pycache__"))
    _git(root, "init", "-q")
    _git(root, "add", "-A")
    _git(root, "commit", "-qm", "hooks")
    _git(root, "tag", "v0.1.0")
    return _git(root, "rev-parse", "HEAD")


def readme_snippet(repo: str) -> str:
    """The README's ``.pre-commit-config.yaml`` for ``repo: <repo>`` (as written)."""
    blocks = re.findall(r"```yaml\n(repos:\n.*?)```", (REPO / "README.md").read_text(), re.S)
    (block,) = [b for b in blocks if ("repo: local" in b) == (repo == "local")]
    return block


def _user_repo(root: Path, config: str, *, good: int = 1) -> Path:
    (root / "src").mkdir(parents=True)
    (root / "src" / "prep.py").write_text("print('hi')\n")
    (root / ".pre-commit-config.yaml").write_text(config)
    for index in range(good):
        (root / f"good{index}.yml").write_text(
            f"type: command\nname: good{index}\ncode: ./src\ncommand: python prep.py\n"
            "environment: azureml:env:1\n")
    (root / "bad.yml").write_text("type: command\nname: bad\ncode: ./src\ncommand: python prep.py ${{inputs.nope}}\n"
                                  "environment: azureml:env:1\n")
    (root / "environment.yml").write_text("name: env\ndependencies:\n  - pandas\n")
    _git(root, "init", "-q")
    _git(root, "add", "-A")
    return root


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


def _env(tmp_path: Path) -> dict[str, str]:
    env = {**os.environ, "PRE_COMMIT_HOME": str(tmp_path / "cache"), "VIRTUALENV_SYSTEM_SITE_PACKAGES": "1",
           "PIP_NO_INDEX": "1", "PIP_NO_BUILD_ISOLATION": "0"}
    # mlpipe's dependencies come from the interpreter running the tests (a venv's packages
    # are not the system's): the hook environment installs mlpipe alone and imports them here
    env["PIP_NO_DEPS"] = "1"
    env["PYTHONPATH"] = str(_dependencies_view(tmp_path / "deps"))
    return env


PRE_COMMIT = [sys.executable, "-m", "pre_commit"]  # the test extra's, on PATH or not


def _needs_tools() -> None:
    if importlib.util.find_spec("pre_commit") is None or shutil.which("git") is None:
        pytest.skip("pre-commit and git are needed")


def test_readme_snippet_rejects_the_bad_file_and_prints_one_total(tmp_path: Path) -> None:
    _needs_tools()
    _hook_repo(tmp_path / "hooks")
    config = readme_snippet("remote")
    assert "rev: v0.1.0" in config
    config = re.sub(r"repo: \S+", f"repo: {tmp_path / 'hooks'}", config)  # the URL only
    user = _user_repo(tmp_path / "user", config)
    env = _env(tmp_path)
    run = subprocess.run([*PRE_COMMIT, "run", "--all-files"], cwd=user, env=env, capture_output=True,
                         text=True, timeout=240)
    assert run.returncode == 1, run.stdout + run.stderr
    assert "bad.yml:4:1: command: ${{inputs.nope}} names no input of this step" in run.stdout
    assert "bad.yml: invalid: 1 error" in run.stdout
    assert "OK" not in run.stdout and "skipped:" not in run.stdout
    assert run.stdout.count(" checked: ") == 1
    assert "2 files checked: 1 valid, 1 invalid, 2 skipped (1 error, 0 warnings)" in run.stdout
    run = subprocess.run([*PRE_COMMIT, "run", "--files", "good0.yml", "environment.yml"], cwd=user, env=env,
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "Passed" in run.stdout


def test_readme_local_variant_with_many_files(tmp_path: Path) -> None:
    _needs_tools()
    user = _user_repo(tmp_path / "user", readme_snippet("local"), good=40)
    env = _env(tmp_path)
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"  # mlpipe here
    run = subprocess.run([*PRE_COMMIT, "run", "--all-files"], cwd=user, env=env, capture_output=True,
                         text=True, timeout=240)
    assert run.returncode == 1, run.stdout + run.stderr
    assert "bad.yml:4:1: command: ${{inputs.nope}} names no input of this step" in run.stdout
    assert "OK" not in run.stdout and run.stdout.count(" checked: ") == 1
    assert "41 files checked: 40 valid, 1 invalid, 2 skipped (1 error, 0 warnings)" in run.stdout
