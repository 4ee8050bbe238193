"""The tests mirror the package: ``tests/<package path>/test_<what>.py``, with the helpers of a
folder in its ``support.py`` (or ``<topic>_support.py``) and shared fixtures in ``conftest.py``."""

from __future__ import annotations

from pathlib import Path

TESTS = Path(__file__).resolve().parent
PACKAGE = TESTS.parent / "mlpipe"
ACROSS_LAYERS = {"hostile"}  # hostile inputs and injected faults, end to end through every layer
# Data folders: published notebooks; the differential programs with their fixtures and
# make_fixtures.py (run with azure-ai-ml, or by test_differential.py in a child process).
DATA = {"notebooks", "differential", "__pycache__",
        "record_shapes"}  # job.json files earlier versions wrote (tests/jobs/test_record_shapes.py)
SCRIPTS = {"dump_signatures.py", "dump_component_schemas.py"}  # run in another interpreter, not imported


def test_every_test_folder_mirrors_a_package_folder() -> None:
    strays = []
    for folder in sorted(p for p in TESTS.rglob("*") if p.is_dir() and not DATA & set(p.parts)):
        relative = folder.relative_to(TESTS)
        if relative.parts[0] in ACROSS_LAYERS:
            continue
        if not (PACKAGE / relative / "__init__.py").is_file():
            strays.append(relative.as_posix())
    assert not strays, f"tests/ folders with no mlpipe/ package of the same path: {strays}"


def test_helper_modules_follow_one_name_convention() -> None:
    odd = [p.relative_to(TESTS).as_posix() for p in TESTS.rglob("*.py")
           if not DATA & set(p.parts)
           and not (p.name.startswith("test_") or p.name in ("conftest.py", "__init__.py")
                    or p.stem == "support" or p.stem.endswith("_support") or p.name in SCRIPTS)]
    assert not odd, f"helper modules must be named support.py or <topic>_support.py: {odd}"


def test_test_folders_are_packages() -> None:
    """Same-named test files in two folders (schema/test_corpus.py, jobs/test_corpus.py) need
    each folder to be a package."""
    missing = [p.relative_to(TESTS).as_posix() for p in TESTS.rglob("test_*.py")
               if not DATA & set(p.parts) and not (p.parent / "__init__.py").is_file()]
    assert not missing, missing
