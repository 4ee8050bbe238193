"""The wheel carries every file the package reads: each non-Python file under ``mlpipe/``
matches a ``package-data`` pattern of pyproject.toml, and the sdist's MANIFEST.in names
what the README and the tests need (``.ci/package`` builds both and runs the quickstart
from the wheel)."""

from __future__ import annotations

import fnmatch
import sys
from pathlib import Path

if sys.version_info >= (3, 11):
    import tomllib
else:  # Python 3.10: the tomli backport, a dependency there
    import tomli as tomllib

REPO = Path(__file__).resolve().parents[1]
PYPROJECT = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))


def _matches(relative: str, patterns: list[str]) -> bool:
    name = relative.rsplit("/", 1)[-1]
    return any(fnmatch.fnmatch(relative, p) or (p.startswith("**/") and fnmatch.fnmatch(name, p[3:]))
               for p in patterns)


def test_every_data_file_of_the_package_goes_into_the_wheel() -> None:
    patterns = PYPROJECT["tool"]["setuptools"]["package-data"]["mlpipe"]
    package = REPO / "mlpipe"
    data = [p.relative_to(package).as_posix() for p in package.rglob("*")
            if p.is_file() and p.suffix not in {".py", ".pyc"} and "__pycache__" not in p.parts]
    assert "py.typed" in data
    missing = [f for f in data if not _matches(f, patterns)]
    assert not missing, f"not in the wheel (add a package-data pattern): {missing}"


def test_the_sdist_names_what_the_readme_and_the_tests_use() -> None:
    manifest = (REPO / "MANIFEST.in").read_text(encoding="utf-8")
    for needed in ("README.md", "CHANGELOG.md", "docs", "samples", "schemas", "tests"):
        assert needed in manifest, f"MANIFEST.in does not include {needed}"
    ci = (REPO / ".ci" / "run").read_text(encoding="utf-8")
    assert ".ci/package" in ci  # CI builds and installs the wheel
