"""The whole command does not grow with the step: `mlpipe job create` (a child process, with
everything a user's job does: the listing, journal, reports, job.json, report.html while it
runs and at its end) peaks at nearly the same RSS for 5,000 and for 50,000 mini-batches.

Main once held ~750 bytes per mini-batch on that path (942 MB at a million: the report
read processed_mini-batches.csv whole, twice, with pandas imported for it), then 240-330
(report.html read the CSV back into compact columns); report.html now draws a large step
from what its reports keep (runtime/reports/run_chart.py) and the journal's index is ~100
bytes of the rest by design (docs/runtime.md). Peak RSS is the kernel's high-water
mark of the driver process alone (VmHWM), read until it exits."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest

SMALL, LARGE = 20_000, 100_000
BYTES_PER_MINI_BATCH = 180  # was ~750, then 240-330; measured 120-143; the journal: ~100

PIPELINE = """\
type: pipeline
settings:
  default_compute: azureml:cpu-cluster
inputs:
  data: {{type: uri_folder, path: {data}}}
jobs:
  echo:
    type: parallel
    inputs: {{data: '${{{{parent.inputs.data}}}}'}}
    outputs: {{out: {{type: uri_folder}}}}
    input_data: '${{{{inputs.data}}}}'
    mini_batch_size: "1"
    max_concurrency_per_instance: 2
    task:
      type: run_function
      code: ./src
      entry_script: echo.py
      environment: {{image: python}}
      append_row_to: '${{{{outputs.out}}}}'
"""


def peak_rss_kb(command: list[str], cwd: Path) -> int:
    """Run ``command``; the high-water mark of its own resident memory (not its children's)."""
    process = subprocess.Popen(command, cwd=cwd, stdout=subprocess.DEVNULL,
                               stderr=subprocess.PIPE)
    peak = [0]
    done = threading.Event()

    def sample() -> None:
        while not done.is_set():
            try:
                with open(f"/proc/{process.pid}/status", "rb") as handle:
                    for line in handle:
                        if line.startswith(b"VmHWM:"):
                            peak[0] = max(peak[0], int(line.split()[1]))
            except OSError:
                return
            done.wait(0.02)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    os.waitid(os.P_PID, process.pid, os.WEXITED | os.WNOWAIT)  # exited, not reaped: /proc stays
    done.set()
    sampler.join()
    _, stderr = process.communicate()
    assert process.returncode == 0, stderr.decode(errors="replace")[-3000:]
    return peak[0]


def job_peak(tmp_path: Path, count: int) -> int:
    data = tmp_path / f"data-{count}"
    data.mkdir()
    for n in range(count):
        os.close(os.open(data / f"f{n:07d}.dat", os.O_CREAT | os.O_WRONLY, 0o644))
    job = tmp_path / f"job-{count}"
    (job / "src").mkdir(parents=True)
    (job / "src" / "echo.py").write_text("def run(mini_batch):\n    return mini_batch\n")
    (job / "pipeline.yml").write_text(PIPELINE.format(data=data))
    peak = peak_rss_kb([sys.executable, "-m", "mlpipe", "job", "create", "--file",
                        "pipeline.yml", "--runs-dir", str(tmp_path / "runs"), "--name",
                        f"n{count}", "--no-progress", "-o", "none"], job)
    rows = job.parent / "runs" / f"n{count}" / "echo" / "outputs" / "out" / "parallel_run_step.txt"
    assert sum(1 for _ in rows.open("rb")) == count  # every mini-batch ran and was written
    return peak


@pytest.mark.slow
def test_the_command_keeps_under_180_bytes_per_mini_batch(tmp_path: Path) -> None:
    small = job_peak(tmp_path, SMALL)
    large = job_peak(tmp_path, LARGE)
    per_mini_batch = (large - small) * 1024 / (LARGE - SMALL)
    assert per_mini_batch < BYTES_PER_MINI_BATCH, (
        f"peak RSS {small // 1024} MB at {SMALL:,} and {large // 1024} MB at {LARGE:,}: "
        f"{per_mini_batch:.0f} bytes per mini-batch")
