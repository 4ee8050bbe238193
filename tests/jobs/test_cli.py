"""``mlpipe job show|list|stream|cancel`` against real jobs run by a second process."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import psutil

from tests.conftest import REPO, run_cli
from tests.jobs.support import spawn_job, wait_for


def test_cancel_from_another_process_stops_the_command(tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    pid_file = tmp_path / "pid"
    sleeper = f"echo started; python -c 'import os,time; open(\"{pid_file}\",\"w\").write(str(os.getpid())); time.sleep(120)'"
    job = spawn_job(tmp_path, runs, "sleepy", [("prepare", "echo prepared"), ("wait", sleeper),
                                               ("never", "echo never")])
    wait_for(lambda: pid_file.exists() and pid_file.read_text())
    pid = int(pid_file.read_text())
    cancel = run_cli("job", "cancel", "sleepy", "--runs-dir", str(runs))
    assert cancel.returncode == 0, cancel.stderr
    assert "sleepy: canceled" in cancel.stdout
    assert job.wait(timeout=30) == 1
    record = json.loads((runs / "sleepy" / "job.json").read_text())
    assert record["status"] == "canceled"
    assert [s["status"] for s in record["steps"].values()] == ["completed", "canceled", "canceled"]
    assert not psutil.pid_exists(pid)
    assert (runs / "sleepy" / "wait" / "logs" / "user" / "stdout.txt").read_text() == "started\n"
    again = run_cli("job", "cancel", "sleepy", "--runs-dir", str(runs))
    assert again.returncode == 0 and "is canceled" in again.stdout


def test_stream_follows_a_running_job_until_it_ends(runs_dir: Path, tmp_path: Path) -> None:
    job = spawn_job(tmp_path, runs_dir, "streamed", [("one", "sleep 1"), ("two", "sleep 0.5")])
    wait_for(lambda: (runs_dir / "streamed" / "job.json").exists())
    stream = run_cli("job", "stream", "streamed")  # runs dir from $MLPIPE_RUNS_DIR
    assert job.wait(timeout=30) == 0
    assert stream.returncode == 0, stream.stderr
    assert "step two: completed" in stream.stdout
    assert stream.stdout.index("step one: completed") < stream.stdout.index("step two: completed")
    assert "job streamed: completed" in stream.stdout


def test_show_list_and_unknown_names(runs_dir: Path, tmp_path: Path) -> None:
    for name, cmd in (("older", "true"), ("newer", "exit 4")):
        assert spawn_job(tmp_path, runs_dir, name, [("only", cmd)]).wait(timeout=30) in (0, 1)
        time.sleep(0.01)
    shown = run_cli("job", "show", "newer", "--output", "json")
    assert shown.returncode == 0
    record = json.loads(shown.stdout)
    assert record["status"] == "Failed" and record["steps"]["only"]["exit_code"] == 4
    assert record["steps"]["only"]["logs_dir"] == str(runs_dir / "newer" / "only" / "logs")
    table = run_cli("job", "show", "newer")
    assert table.returncode == 0 and "exit code 4" in table.stdout
    listing = run_cli("job", "list", "--output", "json")
    assert [r["name"] for r in json.loads(listing.stdout)] == ["newer", "older"]
    assert run_cli("job", "list").stdout.index("newer") < run_cli("job", "list").stdout.index("older")
    missing = run_cli("job", "show", "nwer")
    assert missing.returncode == 1 and "did you mean 'newer'" in missing.stderr
    assert "Traceback" not in missing.stderr
    assert run_cli("job", "list", "--runs-dir", str(tmp_path / "empty")).stdout.startswith("no jobs")


def test_cancel_of_a_job_whose_runner_died_marks_it_canceled(tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    job = spawn_job(tmp_path, runs, "orphan", [("long", "sleep 60")])
    wait_for(lambda: (runs / "orphan" / "long" / "logs").exists())
    parent = psutil.Process(job.pid)
    children = parent.children(recursive=True)
    job.kill()
    job.wait()
    for child in children:
        child.kill()
    listing = run_cli("job", "list", "--runs-dir", str(runs))
    assert "runner gone" in listing.stdout
    cancel = run_cli("job", "cancel", "orphan", "--runs-dir", str(runs))
    assert cancel.returncode == 0, cancel.stderr
    assert json.loads((runs / "orphan" / "job.json").read_text())["status"] == "canceled"


PARALLEL_SCRIPT = """
import sys
from pathlib import Path
from mlpipe.frozen import freeze
from mlpipe.jobs import run_plan
from mlpipe.plan import CommandStep, ExecutionPlan, ParallelStep, PlanInput, PlanOutput
from mlpipe.sizes import parse_mini_batch_size

runs, name, data, code = Path(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4]
run_dir = runs / name
score = ParallelStep(
    name="score", step_dir=str(run_dir / "score"), code_dir=code, entry_script="score.py",
    inputs=freeze({"data": PlanInput(name="data", type="uri_folder", path=data)}),
    input_data="data", mini_batch_size=parse_mini_batch_size("1"), max_concurrency_per_instance=2,
    outputs=freeze({"rows": PlanOutput(name="rows", type="uri_file",
                                       path=str(run_dir / "score" / "outputs" / "rows" / "rows.txt"))}),
    append_row_to="rows")
after = CommandStep(name="after", step_dir=str(run_dir / "after"), command="echo never",
                    depends_on=("score",))
source = runs.parent / "pipeline.yml"
source.write_text("type: pipeline\\n")
plan = ExecutionPlan(source=str(source), run_dir=str(run_dir), name=name,
                     steps=(score, after))
raise SystemExit(0 if run_plan(plan).ok else 1)
"""


def test_cancel_from_another_process_stops_parallel_workers_and_keeps_rows(tmp_path: Path) -> None:
    runs, data, code = tmp_path / "runs", tmp_path / "data", tmp_path / "code"
    data.mkdir()
    code.mkdir()
    for i in range(60):
        (data / f"item{i:02d}.txt").write_text(f"{i}\n")
    gate = tmp_path / "gate"  # never opened: items 4.. wait until the job is canceled
    (code / "score.py").write_text(
        "import os, time\n"
        "def init():\n    pass\n"
        "def run(mini_batch):\n"
        "    values = [open(p).read().strip() for p in mini_batch]\n"
        f"    while any(int(v) >= 4 for v in values) and not os.path.exists({str(gate)!r}):\n"
        "        time.sleep(0.05)\n"
        "    return values\n")
    script = tmp_path / "run_parallel.py"
    script.write_text(PARALLEL_SCRIPT)
    job = subprocess.Popen([sys.executable, str(script), str(runs), "scoring", str(data), str(code)],
                           env={**os.environ, "PYTHONPATH": str(REPO)},
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    record_path = runs / "scoring" / "job.json"

    def some_done() -> bool:
        if not record_path.exists():
            return False
        step = json.loads(record_path.read_text())["steps"]["score"]
        return (step.get("progress") or {}).get("mini_batches_done", 0) >= 4

    wait_for(some_done, timeout=60)
    workers = json.loads(record_path.read_text())["steps"]["score"]["workers"]
    pids = [w["pid"] for w in workers if w["pid"]]
    assert pids and all(psutil.pid_exists(pid) for pid in pids)
    cancel = run_cli("job", "cancel", "scoring", "--runs-dir", str(runs))
    assert cancel.returncode == 0, cancel.stdout + cancel.stderr
    assert job.wait(timeout=60) == 1  # the runs held on the gate are stopped, not awaited
    record = json.loads(record_path.read_text())
    assert record["status"] == "canceled"
    step = record["steps"]["score"]
    assert step["status"] == "canceled" and record["steps"]["after"]["status"] == "canceled"
    wait_for(lambda: not any(psutil.pid_exists(pid) for pid in pids), timeout=15)
    done = step["summary"]["items_succeeded"]
    assert done == 4  # items 0..3; a stopped run() is no failed attempt, nor a timeout
    assert step["summary"]["mini_batches_failed"] == 0 and step["summary"]["items_failed"] == 0
    rows = Path(step["append_row_file"]).read_text().split()
    assert len(rows) == done and len(set(rows)) == done
    assert set(rows) <= {str(i) for i in range(60)}
