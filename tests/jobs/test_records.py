"""Damaged ``job.json`` records: every reader gives a clear error naming the file and the key.

Readers: ``job show``, ``job list``, ``job cancel`` and the resume decision of
``job create --name`` (``JobStore.resumable`` then the runner's new record).
The hypothesis test damages a real record in generated ways; whatever it makes,
the readers answer with an exit code or a ``ValueError``, never a traceback.
"""

from __future__ import annotations

import contextlib
import copy
import io
import json
import os
import tempfile
import textwrap
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mlpipe.cli import main
from mlpipe.jobs import JobStore, run_plan
from mlpipe.jobs.runner import _new_record
from mlpipe.plan import CommandStep, ExecutionPlan
from tests.conftest import run_cli


def _failed_job(runs: Path, name: str) -> ExecutionPlan:
    source = runs.parent / "pipeline.yml"
    source.write_text("type: pipeline\n")
    plan = ExecutionPlan(source=str(source), run_dir=str(runs / name), name=name, steps=(
        CommandStep(name="ok", step_dir=str(runs / name / "ok"), command="true"),
        CommandStep(name="bad", step_dir=str(runs / name / "bad"), command="exit 3",
                    depends_on=("ok",)),
    ))
    assert run_plan(plan).status == "failed"
    return plan


@pytest.fixture(scope="module")
def failed_job(tmp_path_factory: pytest.TempPathFactory) -> tuple[ExecutionPlan, dict[str, Any]]:
    runs = tmp_path_factory.mktemp("records") / "runs"
    plan = _failed_job(runs, "base")
    return plan, json.loads((runs / "base" / "job.json").read_text())


def _cli(*args: str) -> tuple[int, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(list(args))
    return code, err.getvalue()


def _readers(runs: Path, name: str, plan: ExecutionPlan) -> list[str]:
    """Run every reader of job ``name``; return the errors they reported."""
    errors = []
    for args in (["job", "show", name], ["job", "show", name, "-o", "json"], ["job", "list"],
                 ["job", "list", "-o", "json"]):
        code, err = _cli(*args, "--runs-dir", str(runs))
        assert code in (0, 1), (args, err)
        assert "Traceback" not in err
        errors.append(err)
    try:
        previous = JobStore(runs).resumable(name)
    except ValueError as error:  # a damaged record: the CLI says so (see the tests below)
        errors.append(str(error))
    except Exception as error:  # noqa: BLE001 - JobConflictError: completed or running
        assert type(error).__name__ == "JobConflictError", error
    else:
        _new_record(plan, name, "local", previous)  # the resume reads the old steps and attempt
    code, err = _cli("job", "cancel", name, "--no-wait", "--runs-dir", str(runs))  # may write
    assert code in (0, 1) and "Traceback" not in err, err
    errors.append(err)
    return errors


def test_a_non_integer_attempt_is_named_on_create_and_show(tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    _failed_job(runs, "job1")
    record_file = runs / "job1" / "job.json"
    record = json.loads(record_file.read_text())
    record["attempt"] = "abc"
    record_file.write_text(json.dumps(record))
    (tmp_path / "p.yml").write_text(textwrap.dedent("""\
        type: pipeline
        jobs:
          hello:
            type: command
            command: echo hello
            environment: azureml:AzureML-sklearn-1.0-ubuntu20.04-py38-cpu@latest
        """))
    created = run_cli("job", "create", "-f", str(tmp_path / "p.yml"), "--runs-dir", str(runs),
                      "--name", "job1", "--no-progress")
    assert created.returncode == 1, created.stdout + created.stderr
    assert "Traceback" not in created.stderr
    assert str(record_file) in created.stderr and "'attempt'" in created.stderr
    shown = run_cli("job", "show", "job1", "--runs-dir", str(runs))
    assert shown.returncode == 1 and "Traceback" not in shown.stderr
    assert str(record_file) in shown.stderr and "'attempt'" in shown.stderr


def test_a_step_status_that_is_a_mapping_is_named_by_show(tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    _failed_job(runs, "job2")
    record_file = runs / "job2" / "job.json"
    record = json.loads(record_file.read_text())
    record["steps"]["bad"]["status"] = {"state": "failed"}
    record_file.write_text(json.dumps(record))
    shown = run_cli("job", "show", "job2", "--runs-dir", str(runs))
    assert shown.returncode == 1 and "Traceback" not in shown.stderr
    assert str(record_file) in shown.stderr and "'steps.bad.status'" in shown.stderr
    listed = run_cli("job", "list", "--runs-dir", str(runs))
    assert listed.returncode == 0 and "Traceback" not in listed.stderr
    assert str(record_file) in listed.stderr  # named as skipped


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner,
                                                                max_size=3),
    max_leaves=6,
)


def _paths(value: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every key path of a JSON value (the empty path is the value itself)."""
    found = [prefix]
    if isinstance(value, dict):
        for key, item in value.items():
            found += _paths(item, (*prefix, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            found += _paths(item, (*prefix, index))
    return found


def _damage(record: dict[str, Any], path: tuple[Any, ...], action: str, value: Any) -> Any:
    if not path:
        return value
    damaged = copy.deepcopy(record)
    parent = damaged
    for key in path[:-1]:
        parent = parent[key]
    if action == "delete":
        del parent[path[-1]]
    else:
        parent[path[-1]] = value
    return damaged


# a few hundred examples in CI; MLPIPE_HYPOTHESIS_EXAMPLES=5000 for a longer run by hand
EXAMPLES = int(os.environ.get("MLPIPE_HYPOTHESIS_EXAMPLES", "150"))


@pytest.mark.slow  # runs whole jobs: CI's second stage
@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), action=st.sampled_from(["replace", "delete"]), value=JSON)
def test_damaged_records_never_give_a_traceback(
        failed_job: tuple[ExecutionPlan, dict[str, Any]], data: st.DataObject, action: str,
        value: Any) -> None:
    plan, record = failed_job
    path = data.draw(st.sampled_from(_paths(record)))
    damaged = _damage(record, path, action, value)
    with tempfile.TemporaryDirectory() as folder:
        runs = Path(folder) / "runs"
        (runs / "base").mkdir(parents=True)
        (runs / "base" / "job.json").write_text(json.dumps(damaged))
        errors = _readers(runs, "base", plan)
    for error in errors:
        if "not a job record" in error:
            assert "job.json" in error or error.startswith("not a job record")


@pytest.mark.parametrize("text", ["", "{", "[" * 100_000, '{"status": "failed", "attempt": 1e999}',
                                  '{"status": "failed", "attempt": ' + "9" * 5000 + "}",
                                  b"\xff\xfe".decode("latin-1")])
def test_unparsable_records_are_named(tmp_path: Path, failed_job: tuple[ExecutionPlan, Any],
                                      text: str) -> None:
    runs = tmp_path / "runs"
    (runs / "base").mkdir(parents=True)
    (runs / "base" / "job.json").write_text(text, encoding="latin-1")
    errors = _readers(runs, "base", failed_job[0])
    assert any(str(runs / "base" / "job.json") in error for error in errors)
