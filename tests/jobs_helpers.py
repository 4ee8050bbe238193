"""Helpers for the job tests: run ``mlpipe job create`` once, read the record back."""

from __future__ import annotations

import json
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .conftest import run_cli


@dataclass
class Ran:
    """One ``mlpipe job create`` and the record ``mlpipe job show --output json`` gives."""

    proc: subprocess.CompletedProcess[str]
    record: dict[str, Any] | None

    def step(self, name: str) -> dict[str, Any]:
        assert self.record is not None, self.proc.stderr
        return self.record["steps"][name]

    def output(self, step: str, output: str) -> Path:
        return Path(self.step(step)["outputs"][output]["path"])

    def pipeline_output(self, name: str) -> Path:
        assert self.record is not None
        return Path(self.record["outputs"][name]["path"])

    def summary(self, step: str) -> dict[str, Any]:
        return self.step(step)["summary"]

    def append_lines(self, step: str) -> list[str]:
        """The lines of a parallel step's append_row file."""
        path = self.step(step).get("append_row_file")
        assert path, f"step {step} has no append_row file"
        return Path(path).read_text(encoding="utf-8").splitlines()


def create(yaml: Path, runs_dir: Path, name: str, *extra: str, cwd: Path | None = None,
           timeout: float = 600) -> Ran:
    proc = run_cli("job", "create", "--file", str(yaml), "--runs-dir", str(runs_dir),
                   "--name", name, "--no-progress", *extra, cwd=cwd, timeout=timeout)
    shown = run_cli("job", "show", name, "--runs-dir", str(runs_dir), "--output", "json")
    record = json.loads(shown.stdout) if shown.returncode == 0 else None
    return Ran(proc, record)


def run_here(yaml: Path, runs_dir: Path, name: str) -> Ran:
    """Compile and run in this process (no CLI start-up); the record as ``job show`` gives it."""
    from mlpipe.compiler import compile_pipeline
    from mlpipe.jobs import JobStore, run_plan

    plan = compile_pipeline(str(yaml), runs_dir=runs_dir, job_name=name)
    result = run_plan(plan)
    proc = subprocess.CompletedProcess(["run_plan", str(yaml)], 0 if result.ok else 1, "", "")
    return Ran(proc, JobStore(runs_dir).load(name))


def files_under(folder: Path, pattern: str = "*") -> list[Path]:
    return sorted(p for p in folder.rglob(pattern) if p.is_file())


def label_counts(lines: list[str]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for line in lines:
        label = line.split()[-1]
        counts[label] = counts.get(label, 0) + 1
    return counts
