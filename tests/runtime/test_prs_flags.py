"""The PRS program arguments the runtime acts on: task_overhead_timeout, progress_update_timeout,
copy_logs_to_parent, profiling_module; elapsed seconds of lost attempts; resumed reports."""

from __future__ import annotations

import csv
import io
import pstats
import re
import time
from pathlib import Path

import pytest

from mlpipe.frozen import freeze
from mlpipe.plan import PrsOptions
from mlpipe.runtime import run_parallel_step
from mlpipe.runtime.reports.observer import parent_logs_dir
from mlpipe.runtime.reports.progress_bar import ProgressDisplay
from mlpipe.runtime.timeouts import progress_update_timeout
from tests.compiler.support import PARALLEL_STEP, compile_result, make_project, pipeline
from tests.runtime.support import LOADER, SLOW_LOADER, Recorder, file_mini_batches, make_step

# run() sleeps RUN_SECONDS on the first attempt at the files named in SLOW_RUN, returns
# SlowText objects (their str() sleeps STR_SECONDS) for those in SLOW_STR, exits for DIE.
SCRIPT = """
    import os, time
    MARKS = os.environ["MARKS"]

    def _first(name, what):
        mark = os.path.join(MARKS, name + "." + what)
        if os.path.exists(mark):
            return False
        open(mark, "w").close()
        return True

    class SlowText:
        def __init__(self, text):
            self.text = text
        def __str__(self):
            time.sleep(float(os.environ.get("STR_SECONDS", "0")))
            return self.text

    def init():
        pass

    def run(mini_batch):
        name = os.path.basename(mini_batch[0])
        if name in os.environ.get("SLOW_RUN", "").split(",") and _first(name, "run"):
            time.sleep(float(os.environ["RUN_SECONDS"]))
        if name in os.environ.get("DIE", "").split(",") and _first(name, "die"):
            time.sleep(0.5)
            os._exit(3)
        if name in os.environ.get("SLOW_STR", "").split(",") and _first(name, "str"):
            return [SlowText(name)]
        return [name]
"""


def _step(tmp_path: Path, *, workers: int = 1, **env_and_settings):  # type: ignore[no-untyped-def]
    marks = tmp_path / "marks"
    marks.mkdir()
    settings = {k: env_and_settings.pop(k) for k in list(env_and_settings)
                if k in ("prs", "timeout", "max_retries")}
    env = {"MARKS": str(marks), **{k: str(v) for k, v in env_and_settings.items()}}
    return make_step(tmp_path, SCRIPT, workers=workers, environment_variables=freeze(env),
                     **settings)


def _run(tmp_path: Path, step, count: int = 2, loader: str = SLOW_LOADER, **kwargs):  # type: ignore[no-untyped-def]
    recorder = Recorder()
    summary = run_parallel_step(step, mini_batches=file_mini_batches(tmp_path / "d", count),
                                loader=loader, observers=[recorder], **kwargs)
    return summary, recorder


def _attempts(recorder: Recorder, mini_batch_id: str) -> list[tuple[int, str, str | None]]:
    return [(a.picked_count, a.status, a.error_category) for a in recorder.attempts
            if a.mini_batch_id == mini_batch_id]


def _csv_rows(step) -> list[dict[str, str]]:  # type: ignore[no-untyped-def]
    path = Path(step.logs_dir) / "sys" / "job_report" / "processed_mini-batches.csv"
    with open(path, newline="", encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


# -- task_overhead_timeout vs retry_settings.timeout ------------------------------------------

def test_load_and_run_are_bounded_separately(tmp_path: Path) -> None:
    """1.5 s of loading (limit 3) plus 1 s in run() (limit 2): each within its own limit,
    though the sum is over retry_settings.timeout, which bounded both before."""
    step = _step(tmp_path, timeout=2, prs=PrsOptions(task_overhead_timeout=3), SLOW_LOAD="f0000.txt",
                 LOAD_SECONDS=1.5, SLOW_RUN="f0000.txt", RUN_SECONDS=1)
    summary, recorder = _run(tmp_path, step)
    assert summary.status == "Completed", summary.reason
    assert _attempts(recorder, "mb-0000") == [(1, "Succeeded", None)]
    first = recorder.attempts[0]
    assert first.elapsed_seconds >= 2.5 and 0.9 <= first.run_method_seconds < 1.5


def test_slow_loading_is_a_task_overhead_timeout(tmp_path: Path) -> None:
    step = _step(tmp_path, timeout=10, prs=PrsOptions(task_overhead_timeout=1),
                 SLOW_LOAD="f0001.txt", LOAD_SECONDS=30)
    started = time.monotonic()
    summary, recorder = _run(tmp_path, step)
    assert time.monotonic() - started < 15
    assert summary.status == "Completed", summary.reason
    assert _attempts(recorder, "mb-0001") == [(1, "Timeout", "TaskOverheadTimeout"),
                                              (2, "Succeeded", None)]
    lost = recorder.attempts[1]
    assert "Loading the mini-batch took longer than --task_overhead_timeout = 1 seconds" in (
        lost.error_message or "")
    assert 1.0 <= lost.elapsed_seconds < 5 and lost.run_method_seconds == 0.0


def test_slow_result_handling_is_a_task_overhead_timeout(tmp_path: Path) -> None:
    """str() of run()'s results (append_row formatting) happens outside run()."""
    step = _step(tmp_path, timeout=10, prs=PrsOptions(task_overhead_timeout=1),
                 SLOW_STR="f0000.txt", STR_SECONDS=30)
    summary, recorder = _run(tmp_path, step, loader=LOADER)
    assert summary.status == "Completed", summary.reason
    assert _attempts(recorder, "mb-0000") == [(1, "Timeout", "TaskOverheadTimeout"),
                                              (2, "Succeeded", None)]
    assert "Handing back run()'s result" in (recorder.attempts[0].error_message or "")
    assert Path(summary.append_row_file).read_text().splitlines() == ["f0000.txt", "f0001.txt"]


def test_run_timeout_is_its_own_category_with_elapsed_seconds(tmp_path: Path) -> None:
    step = _step(tmp_path, timeout=1, prs=PrsOptions(task_overhead_timeout=30),
                 SLOW_RUN="f0000.txt", RUN_SECONDS=30)
    summary, recorder = _run(tmp_path, step)
    assert summary.status == "Completed", summary.reason
    assert _attempts(recorder, "mb-0000") == [(1, "Timeout", "Timeout"), (2, "Succeeded", None)]
    lost = recorder.attempts[0]
    assert "run() did not finish within retry_settings.timeout = 1 seconds" in (
        lost.error_message or "")
    assert 1.0 <= lost.elapsed_seconds < 5 and 1.0 <= lost.run_method_seconds < 5
    row = next(r for r in _csv_rows(step) if r["Status"] == "Timeout")
    assert float(row["Elapsed Seconds"]) >= 1.0 and row["Error Category"] == "Timeout"
    with open(Path(step.logs_dir) / "sys" / "job_report" / "process_summary.csv") as handle:
        busy = next(csv.DictReader(handle))
    assert float(busy["Busy Seconds"]) >= 1.0


def test_died_worker_attempt_has_elapsed_seconds(tmp_path: Path) -> None:
    step = _step(tmp_path, DIE="f0000.txt")
    summary, recorder = _run(tmp_path, step, loader=LOADER)
    assert summary.status == "Completed", summary.reason
    died = recorder.attempts[0]
    assert (died.status, died.picked_count) == ("ProcessDied", 1)
    assert 0.5 <= died.elapsed_seconds < 5
    assert recorder.attempts[1].elapsed_seconds < 0.5  # a healthy attempt is not inflated


# -- progress_update_timeout --------------------------------------------------------------------

def test_no_progress_for_progress_update_timeout_fails_the_step(tmp_path: Path) -> None:
    step = _step(tmp_path, timeout=60, prs=PrsOptions(progress_update_timeout=1),
                 SLOW_RUN="f0000.txt", RUN_SECONDS=30)
    started = time.monotonic()
    summary, recorder = _run(tmp_path, step, loader=LOADER)
    assert time.monotonic() - started < 15
    assert summary.status == "Failed"
    result = (Path(step.logs_dir) / "job_result.txt").read_text()
    first = result.splitlines()[0]
    assert first.startswith("Failed: No progress for ") and \
        "more than --progress_update_timeout = 1 s" in first
    assert "2 were on workers and 0 waiting" in result  # one running, one queued behind it
    assert [a.error_category for a in recorder.attempts] == ["ProgressTimeout"]


def test_steady_progress_within_progress_update_timeout_completes(tmp_path: Path) -> None:
    """Each attempt takes 0.7 s and the limit is 2 s: 3 s in all, never 2 s without progress."""
    step = _step(tmp_path, timeout=60, prs=PrsOptions(progress_update_timeout=2),
                 SLOW_RUN="f0000.txt,f0001.txt,f0002.txt,f0003.txt", RUN_SECONDS=0.7)
    summary, _ = _run(tmp_path, step, count=4, loader=LOADER)
    assert summary.status == "Completed", summary.reason
    assert "progress_update_timeout: 2 s" in (Path(step.logs_dir) / "job_result.txt").read_text()


def test_default_progress_update_timeout_is_computed_and_reported(tmp_path: Path) -> None:
    step = make_step(tmp_path, "def run(mb): return mb\n", timeout=60, max_retries=2)
    assert progress_update_timeout(step) == (3 * 60 + 600, True)
    fixed = make_step(tmp_path, "def run(mb): return mb\n", prs=PrsOptions(progress_update_timeout=5))
    assert progress_update_timeout(fixed) == (5, False)
    summary = run_parallel_step(step, mini_batches=file_mini_batches(tmp_path / "d", 1),
                                loader=LOADER)
    assert summary.status == "Completed"
    assert ("progress_update_timeout: 780 s (computed: (max_retries 2 + 1) x timeout 60 + "
            "task_overhead_timeout 600)") in (Path(step.logs_dir) / "job_result.txt").read_text()


# -- copy_logs_to_parent ------------------------------------------------------------------------

@pytest.mark.parametrize("copy", [True, False])
def test_copy_logs_to_parent(tmp_path: Path, copy: bool) -> None:
    step = make_step(tmp_path, "def run(mb): raise ValueError('no')\n", max_retries=0,
                     prs=PrsOptions(copy_logs_to_parent=copy))
    summary = run_parallel_step(step, mini_batches=file_mini_batches(tmp_path / "d", 2),
                                loader=LOADER)
    parent = parent_logs_dir(step)
    assert parent == Path(step.step_dir).parent / "logs" / "step"
    if not copy:
        assert not parent.exists()
        return
    logs = Path(step.logs_dir)
    copied = sorted(p.relative_to(parent).as_posix() for p in parent.rglob("*") if p.is_file())
    overview = [p.name for p in logs.glob("job_progress_overview.*.txt")]
    assert copied == sorted(["job_result.txt", "readme.txt", "user/error.txt", *overview])
    for name in copied:
        assert (parent / name).read_text() == (logs / name).read_text()
    assert summary.mini_batches_failed == 2


def test_a_resume_without_failures_leaves_no_error_txt_here_or_in_the_parent(
        tmp_path: Path) -> None:
    """user/error.txt is the final state's: the fixed resume (a rerun of the failed
    mini-batches) removes the first run's, and its copy in the job's logs folder."""
    batches = file_mini_batches(tmp_path / "d", 4)
    step = make_step(tmp_path, FAIL_ODD, max_retries=0,
                     prs=PrsOptions(copy_logs_to_parent=True, resource_monitor_interval=0))
    assert run_parallel_step(step, mini_batches=batches, loader=LOADER).mini_batches_failed == 2
    here, there = (Path(step.logs_dir) / "user" / "error.txt",
                   parent_logs_dir(step) / "user" / "error.txt")
    assert here.is_file() and there.is_file()
    fixed = make_step(tmp_path, FAIL_ODD, max_retries=0,
                      environment_variables=freeze({"FIXED": "1"}),
                      prs=PrsOptions(copy_logs_to_parent=True, resource_monitor_interval=0))
    again = run_parallel_step(fixed, mini_batches=batches, loader=LOADER, resume=True)
    assert (again.mini_batches_failed, again.mini_batches_reused) == (0, 2)
    assert not here.exists() and not there.exists()
    assert "Errors: none" in (Path(step.logs_dir) / "job_result.txt").read_text()


# -- profiling_module ---------------------------------------------------------------------------

PROFILED = """
    def busy_function(n):
        return sum(i * i for i in range(n))

    def run(mini_batch):
        busy_function(2000)
        return mini_batch
"""


@pytest.mark.parametrize("module", ["cProfile", "profile"])
def test_profiling_module_writes_pstats_per_worker(tmp_path: Path, module: str) -> None:
    step = make_step(tmp_path, PROFILED, prs=PrsOptions(profiling_module=module))
    summary = run_parallel_step(step, mini_batches=file_mini_batches(tmp_path / "d", 6),
                                loader=LOADER)
    assert summary.status == "Completed" and summary.mini_batches_failed == 0, summary.reason
    logs = Path(step.logs_dir)
    dumps = sorted(p.relative_to(logs).as_posix() for p in (logs / "sys" / "profile").rglob("*"))
    assert dumps == ["sys/profile/0", "sys/profile/0/process000.prof",
                     "sys/profile/0/process001.prof"]
    calls = 0
    for dump in dumps[1:]:
        stats = pstats.Stats(str(logs / dump))
        calls += sum(value[1] for key, value in stats.stats.items()  # type: ignore[attr-defined]
                     if key[2] == "busy_function")
    assert calls == 6
    assert "sys/profile/0/process000.prof" in (logs / "readme.txt").read_text()


def test_without_profiling_module_nothing_is_profiled(tmp_path: Path) -> None:
    step = make_step(tmp_path, PROFILED)
    run_parallel_step(step, mini_batches=file_mini_batches(tmp_path / "d", 2), loader=LOADER)
    assert not (Path(step.logs_dir) / "sys" / "profile").exists()


@pytest.mark.parametrize("value, ok", [("cProfile", True), ("yappi", False)])
def test_compiler_checks_profiling_module(tmp_path: Path, value: str, ok: bool) -> None:
    project = make_project(tmp_path / "p")
    text = PARALLEL_STEP.replace("--label ${{inputs.label}}",
                                 f"--profiling_module {value} --label ${{{{inputs.label}}}}")
    result = compile_result(pipeline(project, text), tmp_path)
    if ok:
        assert not result.errors
        assert result.plan is not None and result.plan.step("score").prs.profiling_module == value
        return
    messages = [d.message for d in result.errors]
    assert any("profiling_module" in m and "cProfile, profile" in m and "'yappi'" in m
               for m in messages), messages


# -- resume keeps the report history ----------------------------------------------------------

FAIL_ODD = """
    import os
    def run(mini_batch):
        name = os.path.basename(mini_batch[0])
        if int(name[1:5]) % 2 and not os.environ.get("FIXED"):
            raise ValueError("odd " + name)
        return [name]
"""


def test_resumed_step_appends_processed_csv_and_reports_the_whole_step(tmp_path: Path) -> None:
    batches = file_mini_batches(tmp_path / "d", 6)
    step = make_step(tmp_path, FAIL_ODD, max_retries=0)
    first = run_parallel_step(step, mini_batches=batches, loader=LOADER)
    assert (first.mini_batches_succeeded, first.mini_batches_failed) == (3, 3)
    fixed = make_step(tmp_path, FAIL_ODD, max_retries=0, environment_variables=freeze({"FIXED": "1"}))
    shown = io.StringIO()
    second = run_parallel_step(fixed, mini_batches=batches, loader=LOADER, resume=True,
                               observers=[ProgressDisplay(fixed, shown, interval=0)])
    assert (second.mini_batches_succeeded, second.mini_batches_reused) == (6, 3)
    # the reused mini-batches are done from the start, not as the listing reaches them
    fractions = re.findall(r"\] step: (\d+)/(\d+|\?) \((\d+) reused\)", shown.getvalue())
    assert fractions and all(int(done) >= 3 and reused == "3"
                             for done, _total, reused in fractions), shown.getvalue()
    path = Path(step.logs_dir) / "sys" / "job_report" / "processed_mini-batches.csv"
    assert path.read_text().count("Mini-batch Id") == 1
    rows = _csv_rows(step)
    assert sorted((r["Mini-batch Id"], r["Status"]) for r in rows[:6]) == [
        (f"mb-{i:04d}", "Failed" if i % 2 else "Succeeded") for i in range(6)]
    assert sorted((r["Mini-batch Id"], r["Status"]) for r in rows[6:]) == [
        ("mb-0001", "Succeeded"), ("mb-0003", "Succeeded"), ("mb-0005", "Succeeded")]
    result = (Path(step.logs_dir) / "job_result.txt").read_text().splitlines()
    assert result[0] == "Succeeded"
    assert "Mini-batches: 6 total, 6 succeeded, 0 failed, 0 not processed" in result
    assert any(line.startswith("Resumed: 3 mini-batches reused from an earlier run")
               for line in result)
    overview = max(Path(step.logs_dir).glob("job_progress_overview.*.txt")).read_text()
    assert "Mini-batches reused from an earlier run: 3 (resume)" in overview
    assert "0 not processed" in overview
    assert "user/error/0/" in "\n".join(p.as_posix() for p in (Path(step.logs_dir) / "user")
                                        .rglob("*.txt"))  # the first run's tracebacks are kept


def test_fresh_run_restarts_processed_csv(tmp_path: Path) -> None:
    batches = file_mini_batches(tmp_path / "d", 2)
    step = make_step(tmp_path, FAIL_ODD, max_retries=0)
    run_parallel_step(step, mini_batches=batches, loader=LOADER)
    again = run_parallel_step(step, mini_batches=batches, loader=LOADER)
    assert again.mini_batches_reused == 0 and len(_csv_rows(step)) == 2
    assert not any(line.startswith("Resumed:") for line in
                   (Path(step.logs_dir) / "job_result.txt").read_text().splitlines())


@pytest.mark.parametrize("module", ["cProfile", "profile"])
def test_replacement_worker_adds_to_its_predecessors_profile(tmp_path: Path, module: str) -> None:
    from mlpipe.runtime.worker import RunProfiler

    def profiled_twice() -> int:
        return 1

    path = tmp_path / "sys" / "profile" / "0" / "process000.prof"
    first = RunProfiler(module, path)
    first.call(profiled_twice)
    first.dump()  # then the process dies
    second = RunProfiler(module, path)
    second.call(profiled_twice)
    second.dump()
    stats = pstats.Stats(str(path)).stats  # type: ignore[attr-defined]
    assert sum(v[1] for k, v in stats.items() if k[2] == "profiled_twice") == 2
    assert sorted(p.name for p in path.parent.iterdir()) == ["process000.prof"]
