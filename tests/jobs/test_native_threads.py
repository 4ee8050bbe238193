"""A job run from Python leaves no native thread pool in its process.

Arrow's thread pools are torn down badly when the interpreter exits while their threads are
alive: a script that ran a job could end in ``terminate called without an active
exception`` (exit -6) after the job had finished (apache/arrow#34314). The driver reads its
tables (processed_mini-batches.csv, partition columns) on one thread, so a job starts no
pool threads beyond the single I/O thread any Arrow read starts."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.conftest import REPO

PROBE = """
import json, os, sys
import numpy, pandas, pyarrow as pa, pyarrow.csv as pacsv  # their own threads start here

def native_threads():
    import threading
    return len(os.listdir("/proc/self/task")) - threading.active_count()

# the one I/O thread of any Arrow read, started before counting
pacsv.read_csv(pa.py_buffer(b"a\\n1\\n"), read_options=pacsv.ReadOptions(use_threads=False))
before = native_threads()
from mlpipe.jobs import JobRequest, submit
submission = submit(JobRequest(sys.argv[1], runs_dir=sys.argv[2], name="threads"))
print(json.dumps({"status": submission.result.status, "before": before,
                  "after": native_threads()}))
"""


def test_a_job_run_from_python_leaves_no_arrow_pool_threads(tmp_path: Path) -> None:
    pipeline = REPO / "samples" / "file-batch" / "pipeline.yml"
    proc = subprocess.run([sys.executable, "-c", PROBE, str(pipeline), str(tmp_path / "runs")],
                          cwd=tmp_path, capture_output=True, text=True, timeout=240,
                          env={"PYTHONPATH": str(REPO), "PATH": ""})
    assert proc.returncode == 0, proc.stderr[-2000:]
    counts = json.loads(proc.stdout.strip().splitlines()[-1])
    assert counts["status"] == "completed"
    assert counts["after"] == counts["before"], counts
