"""docs/architecture.md stays true: every module it names exists, and its table of YAML keys
points at files that define, resolve and apply each key (one hop each)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.conftest import REPO

ARCHITECTURE = REPO / "docs" / "architecture.md"
PACKAGE = REPO / "mlpipe"
CODE = re.compile(r"`([^`]+)`")
MODULE = re.compile(r"^[\w/]+\.py$")


def key_rows() -> list[list[str]]:
    """The rows of the "Each YAML key" table, as their four cells."""
    text = ARCHITECTURE.read_text(encoding="utf-8")
    section = text.split("### Each YAML key", 1)[1].split("\n#", 1)[0]
    rows = [line.strip().strip("|").split("|") for line in section.splitlines()
            if line.startswith("| ") and not line.startswith(("| YAML key", "| ---"))]
    return [[cell.strip() for cell in row] for row in rows if len(row) == 4]


def modules_in(cell: str) -> list[Path]:
    return [PACKAGE / name for name in CODE.findall(cell) if MODULE.match(name)]


def plan_fields(cell: str) -> list[str]:
    """``ParallelStep.retry`` -> ``retry``; ``.mini_batch_error_threshold`` too."""
    return [name.rsplit(".", 1)[1] for name in CODE.findall(cell)
            if "." in name and not name.endswith(".py")]


def key_names(cell: str) -> list[str]:
    return [name.rsplit(".", 1)[-1] for name in CODE.findall(cell)]


ROWS = key_rows()


def test_the_key_table_is_there() -> None:
    assert len(ROWS) >= 12
    assert any("mini_batch_size" in row[0] for row in ROWS)


@pytest.mark.parametrize("row", ROWS, ids=[row[0] for row in ROWS])
def test_each_key_is_defined_resolved_and_applied_where_the_table_says(row: list[str]) -> None:
    keys = key_names(row[0])
    fields = plan_fields(row[2]) or keys
    for column, names in ((1, keys), (2, keys), (3, fields + keys)):
        files = modules_in(row[column])
        assert files, f"{row[0]}: no module named in column {column + 1}"
        for path in files:
            assert path.is_file(), f"{row[0]}: {path.relative_to(REPO)} does not exist"
            text = path.read_text(encoding="utf-8")
            assert any(name in text for name in names), (
                f"{row[0]}: {path.relative_to(REPO)} names none of {names}")
    plan = (PACKAGE / "plan.py").read_text(encoding="utf-8")
    for name in plan_fields(row[2]):
        assert re.search(rf"^    {name}: ", plan, re.MULTILINE), f"plan.py has no field {name}"


def test_every_module_the_map_names_exists() -> None:
    text = ARCHITECTURE.read_text(encoding="utf-8")
    named = {name for name in CODE.findall(text) if MODULE.match(name)}
    missing = sorted(name for name in named
                     if not (PACKAGE / name).is_file() and not (REPO / name).is_file())
    assert not missing, f"docs/architecture.md names modules that do not exist: {missing}"
