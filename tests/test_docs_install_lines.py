"""Every ``pip install`` line of README.md and docs/ installs this project (its own
distribution name, not the index's unrelated ``mlpipe``) with extras that exist."""

from __future__ import annotations

import re
import shlex
import sys
from pathlib import Path

if sys.version_info >= (3, 11):
    import tomllib
else:  # Python 3.10: the tomli backport, a dependency there
    import tomli as tomllib

REPO = Path(__file__).resolve().parents[1]
PROJECT = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]
DIST = PROJECT["name"]
EXTRAS = set(PROJECT["optional-dependencies"])
LOCAL = {".", "./"}  # the checkout itself (README's `pip install -e '.[test]'`)
# Other projects a page installs on purpose, each in a scratch environment of its own.
OTHERS = {"azure-ai-ml": "the reference the SDK mirrors (docs/sdk.md's signature check)"}
_REQUIREMENT = re.compile(r"^(?P<name>[A-Za-z0-9][A-Za-z0-9._-]*|\./?)(?:\[(?P<extras>[^\]]*)\])?$")
# A wheel built from the checkout (README: `python -m build`, then `pip install dist/...whl`).
_WHEEL = re.compile(r"^dist/(?P<dist>[A-Za-z0-9_]+)-(?:(?P<version>[^-*]+)-)?[^\[]*\.whl(?:\[(?P<extras>[^\]]*)\])?$")


def _normal(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def install_lines() -> list[tuple[str, str]]:
    """(where, command) of each ``pip install`` in README.md and docs/*.md."""
    found = []
    for doc in [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]:
        for number, line in enumerate(doc.read_text(encoding="utf-8").splitlines(), 1):
            assert not line.rstrip().endswith("pip install"), f"{doc}:{number}: keep it on one line"
            for match in re.finditer(r"pip install ([^`#&|;\n]+)", line):
                found.append((f"{doc.relative_to(REPO)}:{number}", match.group(1).strip()))
    return found


def requirements(command: str) -> list[str]:
    return [word for word in shlex.split(command) if not word.startswith("-")]


def test_the_distribution_has_its_own_name_and_the_extras_users_need() -> None:
    assert _normal(DIST) != "mlpipe"  # the index's `mlpipe` is an unrelated Django app
    dask = " ".join(PROJECT["optional-dependencies"]["dask"])
    assert "dask[distributed]" in dask and "bokeh" in dask  # the dashboard needs bokeh
    assert any("bokeh" in dep for dep in
               PROJECT["optional-dependencies"].get("report", []) + PROJECT["dependencies"])


def test_every_install_line_names_this_distribution_and_existing_extras() -> None:
    lines = install_lines()
    assert len(lines) >= 3, lines  # README's quickstart, README's index lines, docs/dask.md
    assert any(DIST in command for _, command in lines)
    for where, command in lines:
        for requirement in requirements(command):
            wheel = _WHEEL.match(requirement)
            if wheel:
                assert wheel.group("dist") == _normal(DIST).replace("-", "_"), f"{where}: {requirement}"
                assert wheel.group("version") in (None, PROJECT["version"]), \
                    f"{where}: {requirement} is not version {PROJECT['version']}"
                extras = {e.strip() for e in (wheel.group("extras") or "").split(",") if e.strip()}
                assert extras <= EXTRAS, f"{where}: unknown extra(s) {sorted(extras - EXTRAS)}"
                continue
            match = _REQUIREMENT.match(requirement)
            assert match, f"{where}: cannot read {requirement!r} in `pip install {command}`"
            name = match.group("name")
            if name in OTHERS:
                continue
            assert name in LOCAL or _normal(name) == _normal(DIST), \
                f"{where}: `pip install {command}` installs {name!r}, not {DIST!r}"
            extras = {e.strip() for e in (match.group("extras") or "").split(",") if e.strip()}
            assert extras <= EXTRAS, f"{where}: unknown extra(s) {sorted(extras - EXTRAS)}"


def test_the_install_hints_in_the_code_name_this_distribution() -> None:
    from mlpipe.runtime.backends.dask import INSTALL_HINT

    (requirement,) = requirements(INSTALL_HINT.removeprefix("pip install "))
    match = _REQUIREMENT.match(requirement)
    assert match and _normal(match.group("name")) == _normal(DIST)
    assert set((match.group("extras") or "").split(",")) <= EXTRAS
