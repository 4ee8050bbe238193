"""run_plan with plans built in code: command steps, order, overlap, failures, cancel, resume."""

from __future__ import annotations

import importlib.metadata
import json
import platform
import sys
import threading
import time
from pathlib import Path

import psutil
import pytest

from mlpipe.diagnostics import Location
from mlpipe.frozen import freeze
from mlpipe.jobs import JobConflictError, RemoteAssetsError, run_plan
from mlpipe.plan import (
    CommandStep,
    EnvironmentInfo,
    ExecutionPlan,
    JobSettings,
    PlanOutput,
    RemoteAsset,
)


def command(run_dir: Path, name: str, cmd: str, **kw) -> CommandStep:
    outputs = kw.pop("outputs", {})
    return CommandStep(
        name=name, step_dir=str(run_dir / name), command=cmd,
        outputs=freeze({o: PlanOutput(name=o, path=str(run_dir / name / "outputs" / o))
                        for o in outputs}),
        **kw,
    )


def plan_of(tmp_path: Path, *steps: CommandStep, continue_on_failure: bool = False,
            **kw) -> ExecutionPlan:
    source = tmp_path / "pipeline.yml"
    source.write_text("type: pipeline\n")
    return ExecutionPlan(source=str(source), run_dir=str(tmp_path / "runs" / "job1"),
                         name="job1", steps=steps, settings=JobSettings(
                             continue_on_step_failure=continue_on_failure), **kw)


def record(plan: ExecutionPlan) -> dict:
    return json.loads((Path(plan.run_dir) / "job.json").read_text())


def test_command_step_runs_in_code_snapshot_with_env_and_logs(tmp_path: Path) -> None:
    code = tmp_path / "code"
    code.mkdir()
    (code / "hello.py").write_text(
        "import os, sys\n"
        "print('exe', sys.executable)\n"
        "print('foo', os.environ['FOO'])\n"
        "print('oops', file=sys.stderr)\n"
        "open(os.path.join(sys.argv[1], 'out.txt'), 'w').write('done')\n"
    )
    run_dir = tmp_path / "runs" / "job1"
    out = run_dir / "hello" / "outputs" / "result"
    step = command(run_dir, "hello", f"test -d {out} && python hello.py {out}; pwd",
                   outputs=["result"], code_dir=str(code),
                   environment_variables=freeze({"FOO": "bar"}))
    result = run_plan(plan_of(tmp_path, step))
    assert result.status == "completed" and result.ok
    user = run_dir / "hello" / "logs" / "user"
    stdout = (user / "stdout.txt").read_text().splitlines()
    assert stdout[0] == f"exe {sys.executable}"
    assert stdout[1] == "foo bar"
    assert Path(stdout[2]) == run_dir / "hello" / "code"  # the snapshot, not the live folder
    assert (user / "stderr.txt").read_text() == "oops\n"
    assert "oops" in (user / "std_log.txt").read_text() and "foo bar" in (user / "std_log.txt").read_text()
    assert (out / "out.txt").read_text() == "done"
    assert not (code / "out.txt").exists()
    rec = json.loads(Path(result.record_path).read_text())
    assert rec["status"] == "completed"
    assert rec["steps"]["hello"]["exit_code"] == 0
    assert rec["steps"]["hello"]["outputs"]["result"]["path"] == str(out)
    assert rec["source_yaml"] == "type: pipeline\n"


def test_exit_code_decides_status(tmp_path: Path) -> None:
    step = command(tmp_path / "runs" / "job1", "bad", "echo broken >&2; exit 3")
    result = run_plan(plan_of(tmp_path, step))
    assert result.status == "failed"
    assert result.steps["bad"].exit_code == 3
    assert "exited with code 3" in result.steps["bad"].error and "broken" in result.steps["bad"].error


def test_steps_run_in_dependency_order_and_independent_ones_overlap(tmp_path: Path) -> None:
    run_dir = tmp_path / "runs" / "job1"
    marks = tmp_path / "marks"
    marks.mkdir()
    # each step writes its own marker files (no shared file, no clock): a and b each wait
    # for the other to have started, which only ends if they run at the same time
    meet = ("python -c 'import pathlib,sys,time; m=pathlib.Path(sys.argv[1]); "
            "(m/(sys.argv[2]+\"-started\")).touch(); t=time.monotonic()+120\n"
            "while not (m/(sys.argv[3]+\"-started\")).exists():\n"
            "    assert time.monotonic()<t, \"never overlapped\"; time.sleep(0.05)\n"
            "(m/(sys.argv[2]+\"-done\")).touch()' " + str(marks) + " {} {}")
    after_both = ("python -c 'import pathlib,sys; m=pathlib.Path(sys.argv[1]); "
                  "(m/\"c-saw\").write_text(\" \".join(sorted(p.name for p in m.iterdir())))' "
                  + str(marks))
    plan = plan_of(
        tmp_path,
        command(run_dir, "a", meet.format("a", "b")),
        command(run_dir, "b", meet.format("b", "a")),
        command(run_dir, "c", after_both, depends_on=("a", "b")),
    )
    result = run_plan(plan, max_workers=2)
    assert result.ok, {n: s.error for n, s in result.steps.items()}  # a and b overlapped
    seen = (marks / "c-saw").read_text().split()
    assert {"a-done", "b-done"} <= set(seen)  # c waited for both


@pytest.mark.parametrize("keep_going", [True, False])
def test_continue_on_step_failure(tmp_path: Path, keep_going: bool) -> None:
    run_dir = tmp_path / "runs" / "job1"
    plan = plan_of(
        tmp_path,
        command(run_dir, "fails", "exit 1"),
        command(run_dir, "independent", "echo ok"),
        command(run_dir, "downstream", "echo never", depends_on=("fails",)),
        continue_on_failure=keep_going,
    )
    result = run_plan(plan, max_workers=1)  # one at a time: "independent" starts after the failure
    assert result.status == "failed"
    status = {n: s.status for n, s in result.steps.items()}
    assert status["fails"] == "failed"
    assert status["downstream"] == "skipped"
    assert status["independent"] == ("completed" if keep_going else "skipped")
    assert record(plan)["steps"]["independent"]["status"] == status["independent"]


def test_cancel_kills_the_command_and_marks_the_job_canceled(tmp_path: Path) -> None:
    run_dir = tmp_path / "runs" / "job1"
    pid_file = tmp_path / "pid"
    plan = plan_of(tmp_path,
                   command(run_dir, "sleepy", f"python -c 'import os,time; open(\"{pid_file}\",\"w\").write(str(os.getpid())); time.sleep(60)'"),
                   command(run_dir, "after", "echo after", depends_on=("sleepy",)))
    cancel = threading.Event()
    timer = threading.Thread(target=lambda: (_wait_for(pid_file), cancel.set()))
    timer.start()
    started = time.monotonic()
    result = run_plan(plan, cancel=cancel)
    timer.join()
    assert time.monotonic() - started < 20
    assert result.status == "canceled"
    assert result.steps["sleepy"].status == "canceled"
    assert result.steps["after"].status == "canceled"
    assert not psutil.pid_exists(int(pid_file.read_text())) or \
        psutil.Process(int(pid_file.read_text())).status() == psutil.STATUS_ZOMBIE
    assert record(plan)["status"] == "canceled"


def _wait_for(path: Path, timeout: float = 20) -> None:
    """Until ``path`` has content (it exists, empty, between its open() and write())."""
    deadline = time.monotonic() + timeout
    while not (path.exists() and path.stat().st_size) and time.monotonic() < deadline:
        time.sleep(0.05)


def test_remote_assets_refuse_the_job_before_any_step(tmp_path: Path) -> None:
    run_dir = tmp_path / "runs" / "job1"
    marker = tmp_path / "ran"
    asset = RemoteAsset(key_path="jobs.fetch.component",
                        reference="azureml://registries/azureml/components/dataset_downloader/labels/latest",
                        kind="component", location=Location(str(tmp_path / "pipeline.yml"), 7, 16))
    plan = plan_of(tmp_path, command(run_dir, "a", f"touch {marker}"), remote_assets=(asset,))
    with pytest.raises(RemoteAssetsError) as err:
        run_plan(plan)
    text = str(err.value)
    assert "remote asset not available offline" in text
    assert "dataset_downloader" in text and "jobs.fetch.component" in text
    assert "pipeline.yml:7:16" in text and "--set" in text and "mlpipe.toml" in text
    assert not marker.exists() and not run_dir.exists()


def test_a_failed_job_resumes_and_skips_completed_steps(tmp_path: Path) -> None:
    run_dir = tmp_path / "runs" / "job1"
    count, gate = tmp_path / "count", tmp_path / "gate"
    plan = plan_of(tmp_path,
                   command(run_dir, "first", f"echo x >> {count}"),
                   command(run_dir, "second", f"test -f {gate}", depends_on=("first",)))
    assert run_plan(plan).status == "failed"
    gate.touch()
    again = run_plan(plan)
    assert again.status == "completed"
    assert count.read_text() == "x\n"  # "first" did not run twice
    rec = record(plan)
    assert rec["attempt"] == 2 and rec["steps"]["first"]["reused"] is True
    with pytest.raises(JobConflictError, match="already exists and completed"):
        run_plan(plan)


def test_environment_warning_names_missing_packages(tmp_path: Path) -> None:
    conda = tmp_path / "conda.yml"
    conda.write_text("dependencies:\n  - python=3.11\n  - pip\n  - pandas\n"
                     "  - pip:\n      - not-a-real-package-xyz==1.0\n      - psutil\n")
    run_dir = tmp_path / "runs" / "job1"
    step = command(run_dir, "a", "true", environment=EnvironmentInfo(conda_file=str(conda)),
                   compute="azureml:cpu-cluster")
    lines: list[str] = []
    assert run_plan(plan_of(tmp_path, step), echo=lines.append).ok
    warnings = [line for line in lines if line.startswith("warning:")]
    assert len(warnings) == 1
    assert "not-a-real-package-xyz" in warnings[0]
    assert "pandas" not in warnings[0] and "python" not in warnings[0]
    assert any(line.startswith("compute azureml:cpu-cluster") for line in lines)


def test_environment_warning_names_pins_this_python_does_not_meet(tmp_path: Path) -> None:
    """The cloud builds the environment as pinned (azureml-examples' iris model was pickled
    by scikit-learn 0.20, which Python 3.7 runs): a local run with other versions is told."""
    conda = tmp_path / "conda.yml"
    conda.write_text("dependencies:\n  - python=2.7\n  - pip=1.0\n  - numpy\n  - pip:\n"
                     "      - pandas<1\n      - psutil>=1\n      - 'pyarrow<1; python_version<\"3\"'\n")
    step = command(tmp_path / "runs" / "job1", "a", "true",
                   environment=EnvironmentInfo(conda_file=str(conda)))
    lines: list[str] = []
    assert run_plan(plan_of(tmp_path, step), echo=lines.append).ok
    [warning] = [line for line in lines if line.startswith("warning:")]
    assert warning == (
        f"warning: step a: its environment pins python=2.7 (here {platform.python_version()}), "
        f"pandas<1 (here {importlib.metadata.version('pandas')}); the step runs with this "
        "Python's versions (environments are never built locally), so it may fail or give "
        "other results than in Azure ML")


def test_a_command_that_installs_packages_is_named(tmp_path: Path) -> None:
    """azureml-examples' sweep component runs ``pip install 'mlflow<2.19' -q && python ...``:
    in the cloud that changes the job's container, here the runner's own Python."""
    step = command(tmp_path / "runs" / "job1", "a",
                   "true || pip install 'not-a-real-package-xyz<2' -q && echo ran")
    lines: list[str] = []
    assert run_plan(plan_of(tmp_path, step), echo=lines.append).ok
    [warning] = [line for line in lines if line.startswith("warning:")]
    assert warning == (
        "warning: step a: its command runs pip install 'not-a-real-package-xyz<2' -q, which "
        f"installs into this Python ({sys.prefix}) for every later job too; Azure ML installs "
        "into the job's own container (install the packages once yourself, or run the job "
        "in a virtual environment of its own)")


def test_no_warning_when_every_package_imports(tmp_path: Path) -> None:
    step = command(tmp_path / "runs" / "job1", "a", "true",
                   environment=EnvironmentInfo(conda_dependencies=("pandas>=2", "numpy", "pip")))
    lines: list[str] = []
    assert run_plan(plan_of(tmp_path, step), echo=lines.append).ok
    assert not [line for line in lines if line.startswith("warning:")]


def test_unknown_backend_is_refused_before_anything_runs(tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    plan = plan_of(tmp_path, command(tmp_path / "runs" / "job1", "a", f"touch {marker}"))
    with pytest.raises(ValueError, match="unknown backend 'nope'"):
        run_plan(plan, backend="nope")
    assert not marker.exists() and not Path(plan.run_dir).exists()


def test_a_daemon_a_command_step_starts_ends_with_the_step(tmp_path: Path) -> None:
    pid_file = tmp_path / "daemon.pid"
    daemon = (f"setsid sh -c 'echo $$ > {pid_file}; exec sleep 300' "
              "> /dev/null 2>&1 < /dev/null &")
    run_dir = tmp_path / "runs" / "job1"
    plan = plan_of(tmp_path, command(run_dir, "a", f"{daemon} while [ ! -s {pid_file} ]; do "
                                                    "sleep 0.05; done"))
    assert run_plan(plan).status == "completed"
    pid = int(pid_file.read_text())

    def running() -> bool:
        try:
            return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
        except psutil.NoSuchProcess:
            return False

    deadline = time.monotonic() + 10
    while running():
        assert time.monotonic() < deadline, f"daemon {pid} still runs"
        time.sleep(0.05)
    log = (run_dir / "a" / "logs" / "user" / "std_log.txt").read_text()
    assert f"mlpipe: ended process {pid} (sleep 300), started by the step's command" in log
