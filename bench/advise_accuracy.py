"""How close ``mlpipe job advise`` comes to reality: five workloads, each profiled once at a
baseline setting, then predicted and run for real at five what-ifs (concurrency 1, 2 and 4,
mini_batch_size x2 and x4), each what-if run ``--repeat`` times (default 2), every run through
``mlpipe job create`` as a child process and every prediction through ``mlpipe job advise -o
json``.

It prints, per case, the prediction with its 90 % interval, each measured wall time and its
error, whether it falls inside the interval; then the median and the largest error against
the targets (median under 5 %, every case under 10 %, every measured value inside its
interval), the time a local what-if takes, and the machine's load before and after.

The advisor predicts a step's wall time on this machine without other load. On a busy
machine each measured run is also given *quiet* (its wall less the run-delay its workers
and driver suffered from other processes, as the run measured it: ``quiet_wall_s`` of
``mlpipe job advise NAME -o json``), and the errors against those are printed too, with
each run's run-delay share and its attempts' CPU seconds over the profile's (the same work:
above 1, the load slowed the CPU itself, which no run-delay shows).

    python bench/advise_accuracy.py [--workloads uniform,skewed,...] [--repeat 2] [--keep DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from through_command import MLPIPE, user_environment  # noqa: E402

MEDIAN_TARGET = 0.05
CASE_TARGET = 0.10
WHAT_IF_SECONDS = 0.3
STEP = "work"

# -- the workloads ----------------------------------------------------------------------
SPIN = '''
def spin(units):
    """CPU work: ``units`` x 100,000 loop iterations (a unit: about 5 ms on a 2.6 GHz EPYC)."""
    x = 0
    for i in range(int(units * 100_000)):
        x += i * i
    return x
'''

FILE_SCRIPT = SPIN + '''
import os
import time

def init():
    pass

def run(mini_batch):
    out = []
    for path in mini_batch:
        kind, amount = open(path).read().split()
        if kind == "cpu":
            spin(float(amount))
        else:
            time.sleep(float(amount))
        out.append(os.path.basename(path))
    return out
'''

MANY_MODELS_SCRIPT = SPIN + '''
import os
import time

def init():
    spin(30)          # imports and set-up: CPU
    time.sleep(1.2)   # the model store: waiting, not computing

def run(mini_batch):
    out = []
    for path in mini_batch:
        spin(float(open(path).read().split()[1]))  # one small model per item
        out.append(os.path.basename(path))
    return out
'''

TABLE_SCRIPT = SPIN + '''
def init():
    pass

def run(mini_batch):
    spin(6)                       # a fixed cost per call
    spin(0.5 * len(mini_batch))   # and a cost per row
    return mini_batch
'''


@dataclass(frozen=True)
class Workload:
    name: str
    what: str
    script: str
    items: list[tuple[str, float]] = field(default_factory=list)  # files: (kind, amount)
    rows: int = 0  # tabular: rows of random length
    size: str = "4"  # the baseline mini_batch_size
    concurrency: int = 2

    @property
    def tabular(self) -> bool:
        return self.rows > 0


def workloads() -> list[Workload]:
    chance = random.Random(32)
    uniform = [("cpu", round(chance.uniform(1.0, 9.0), 2)) for _ in range(240)]
    skewed = [("cpu", 20.0 if chance.random() < 0.1 else 2.0) for _ in range(300)]
    return [
        Workload("uniform", "CPU work per item uniform in 1-9 units (a unit: 100,000 loop "
                 "iterations, about 5 ms)", FILE_SCRIPT, uniform),
        Workload("skewed", "10 % of items 10x slower (20 units of CPU, the rest 2)",
                 FILE_SCRIPT, skewed),
        Workload("sleep", "sleep-bound I/O: 50 ms of waiting per item", FILE_SCRIPT,
                 [("sleep", 0.05)] * 200),
        Workload("many-models", "init() 30 units of CPU + 1.2 s waiting; 3 units of CPU per item",
                 MANY_MODELS_SCRIPT, [("cpu", 3.0)] * 160),
        Workload("fixed", "fixed CPU work: 6 units per run() call + 0.5 per row; a table "
                 "cut by bytes", TABLE_SCRIPT, rows=1500, size="2kb"),
    ]


def what_ifs(workload: Workload) -> list[tuple[str, list[str]]]:
    """(label, --set items) of each what-if."""
    key = f"jobs.{STEP}"
    sizes = []
    for factor in (2, 4):
        if workload.tabular:
            value = f"{int(workload.size[:-2]) * factor}kb"
        else:
            value = str(int(workload.size) * factor)
        sizes.append((f"mini_batch_size x{factor} ({value})",
                      [f"{key}.mini_batch_size={value}"]))
    return [(f"concurrency {n}", [f"{key}.max_concurrency_per_instance={n}"])
            for n in (1, 2, 4)] + sizes


def write_workload(folder: Path, workload: Workload) -> Path:
    """The pipeline YAML, its entry script and its data, below ``folder``."""
    folder.mkdir(parents=True)
    (folder / "src").mkdir()
    (folder / "src" / "score.py").write_text(workload.script)
    data = folder / "data"
    data.mkdir()
    if workload.tabular:
        chance = random.Random(7)
        lines = ["id,text"] + [f"{n},{'x' * chance.randint(5, 120)}"
                               for n in range(workload.rows)]
        (data / "t.csv").write_text("\n".join(lines) + "\n")
        (data / "MLTable").write_text("paths:\n  - file: ./t.csv\ntransformations:\n"
                                      "  - read_delimited:\n      delimiter: ','\n")
        kind = "mltable"
    else:
        for n, (what, amount) in enumerate(workload.items):
            (data / f"item{n:04d}.txt").write_text(f"{what} {amount}\n")
        kind = "uri_folder"
    pipeline = folder / "pipeline.yml"
    pipeline.write_text(
        f"type: pipeline\njobs:\n  {STEP}:\n    type: parallel\n    inputs:\n"
        f"      data:\n        type: {kind}\n        path: ./data\n"
        f"    input_data: ${{{{inputs.data}}}}\n"
        f"    mini_batch_size: \"{workload.size}\"\n"
        f"    max_concurrency_per_instance: {workload.concurrency}\n"
        "    retry_settings:\n      max_retries: 2\n      timeout: 120\n"
        "    task:\n      type: run_function\n      code: ./src\n      entry_script: score.py\n")
    return pipeline


# -- running mlpipe --------------------------------------------------------------------
def mlpipe(*args: str) -> subprocess.CompletedProcess[str]:
    """``mlpipe ARGS`` as a user runs it (the installed script, bytecode cached:
    ``through_command.user_environment``)."""
    return subprocess.run([*MLPIPE, *args], capture_output=True, text=True, check=False,
                          env=user_environment())


def create(pipeline: Path, runs: Path, name: str, sets: list[str]) -> None:
    sets_args = [part for item in sets for part in ("--set", item)]
    done = mlpipe("job", "create", "--file", str(pipeline), "--name", name, "--runs-dir",
                  str(runs), "--no-progress", "-o", "none", *sets_args)
    if done.returncode != 0:
        raise SystemExit(f"job {name} failed:\n{done.stdout}\n{done.stderr}")


def advise(runs: Path, name: str, sets: list[str]) -> tuple[dict, float]:
    sets_args = [part for item in sets for part in ("--set", item)]
    began = time.perf_counter()
    done = mlpipe("job", "advise", name, "--runs-dir", str(runs), "-o", "json", *sets_args)
    took = time.perf_counter() - began
    if done.returncode != 0:
        raise SystemExit(f"job advise {name} failed:\n{done.stderr}")
    return json.loads(done.stdout)["steps"][STEP], took


def advise_here(runs: Path, name: str, sets: list[str]) -> float:
    """Seconds ``advise()`` takes in this process for a what-if (the profile read and the
    model imported beforehand): the answer's own cost, without a Python start-up, and less
    the time this thread waited for a core (a busy machine's share)."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from mlpipe.jobs.store import JobStore  # noqa: PLC0415
    from mlpipe.runtime.step_logs import StepLogs  # noqa: PLC0415
    from mlpipe.runtime.tuning.advice import advise as advise_step  # noqa: PLC0415
    from mlpipe.runtime.tuning.profile import read_profile  # noqa: PLC0415

    logs = StepLogs.of(str(JobStore(runs).load(name).steps[STEP].logs_dir))
    profile = read_profile(logs)
    assert profile is not None
    from mlpipe.runtime.tuning.schedstat import thread_delay  # noqa: PLC0415

    advise_step(profile, STEP, overrides=sets, cloud=False)  # warm: imports, caches
    waited, began = thread_delay() or 0.0, time.perf_counter()
    advise_step(profile, STEP, overrides=sets, cloud=False)
    return time.perf_counter() - began - ((thread_delay() or 0.0) - waited)


def uptime() -> str:
    return subprocess.run(["uptime"], capture_output=True, text=True,
                          check=False).stdout.strip()


# -- the benchmark ---------------------------------------------------------------------
@dataclass
class Case:
    workload: str
    label: str
    predicted: float
    low: float
    high: float
    measured: list[float] = field(default_factory=list)
    quiet: list[float] = field(default_factory=list)
    delay: list[float] = field(default_factory=list)  # run-delay share of each run
    cpu: list[float] = field(default_factory=list)  # its attempts' CPU over the profile's

    def errors(self, quiet: bool = False) -> list[float]:
        return [(self.predicted - m) / m for m in (self.quiet if quiet else self.measured)]

    def inside(self, quiet: bool = False) -> list[bool]:
        return [self.low <= m <= self.high for m in (self.quiet if quiet else self.measured)]


def run_workload(workload: Workload, root: Path, repeat: int
                 ) -> tuple[list[Case], list[tuple[float, float]], dict]:
    folder = root / workload.name
    pipeline = write_workload(folder, workload)
    runs = folder / "runs"
    create(pipeline, runs, "base", [])
    base, _ = advise(runs, "base", [])
    cases, timings = [], []
    for label, sets in what_ifs(workload):  # every prediction from the profile alone
        step, took = advise(runs, "base", sets)
        timings.append((took, advise_here(runs, "base", sets)))
        cases.append(Case(workload.name, label, step["predicted_wall_s"], step["low_s"],
                          step["high_s"]))
    for index, ((_label, sets), case) in enumerate(zip(what_ifs(workload), cases,
                                                        strict=True)):
        for attempt in range(repeat):
            name = f"w{index}r{attempt}"
            create(pipeline, runs, name, sets)
            measured, _ = advise(runs, name, [])
            case.measured.append(measured["measured_wall_s"])
            case.quiet.append(measured["quiet_wall_s"])
            case.delay.append(measured["profile"]["run_delay_share"])
            case.cpu.append(measured["profile"]["cpu_s"] / max(base["profile"]["cpu_s"], 1e-9))
        print(line(case), flush=True)
    return cases, timings, base


def line(case: Case) -> str:
    measured = ", ".join(f"{m:6.2f} s ({e:+5.1%}{'' if i else ' OUT'})"
                         for m, e, i in zip(case.measured, case.errors(), case.inside(),
                                            strict=True))
    quiet = ", ".join(f"{q:6.2f} ({e:+5.1%})" for q, e in zip(
        case.quiet, case.errors(quiet=True), strict=True))
    delay = "/".join(f"{d:.0%}" for d in case.delay)
    cpu = "/".join(f"{c:.2f}" for c in case.cpu)
    return (f"  {case.workload:12} {case.label:28} predicted {case.predicted:6.2f} s "
            f"[{case.low:6.2f}-{case.high:6.2f}]  measured {measured}  quiet {quiet}  "
            f"run-delay {delay}  CPU x{cpu}")


def summary(cases: list[Case], quiet: bool) -> list[str]:
    errors = [abs(e) for case in cases for e in case.errors(quiet)]
    inside = [i for case in cases for i in case.inside(quiet)]
    median, worst = statistics.median(errors), max(errors)
    what = "quiet-equivalent" if quiet else "measured"
    return [f"against the {what} wall times ({len(errors)} runs of {len(cases)} what-ifs):",
            f"  median error {median:.1%} (target < {MEDIAN_TARGET:.0%}): "
            f"{'PASS' if median < MEDIAN_TARGET else 'FAIL'}",
            f"  largest error {worst:.1%} (target: every case < {CASE_TARGET:.0%}): "
            f"{'PASS' if worst < CASE_TARGET else 'FAIL'}; within 10 %: "
            f"{sum(e < CASE_TARGET for e in errors)} of {len(errors)}",
            f"  inside the predicted interval: {sum(inside)} of {len(inside)}: "
            f"{'PASS' if all(inside) else 'FAIL'}"]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    names = [w.name for w in workloads()]
    parser.add_argument("--workloads", default=",".join(names),
                        help=f"comma-separated, of {', '.join(names)}")
    parser.add_argument("--repeat", type=int, default=2, help="runs of each what-if")
    parser.add_argument("--keep", metavar="DIR", help="keep the jobs in DIR (default: a "
                        "temporary folder, removed at the end)")
    args = parser.parse_args()
    chosen = [w for w in workloads() if w.name in args.workloads.split(",")]
    root = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="advise-accuracy-"))
    root.mkdir(parents=True, exist_ok=True)
    before = uptime()
    print(f"load before: {before}")
    began = time.perf_counter()
    cases: list[Case] = []
    timings: list[tuple[float, float]] = []
    try:
        for workload in chosen:
            print(f"{workload.name}: {workload.what}; baseline mini_batch_size "
                  f"{workload.size}, concurrency {workload.concurrency}", flush=True)
            found, took, base = run_workload(workload, root, args.repeat)
            profile = base.get("profile", {})
            print(f"  profile: measured {base['measured_wall_s']:.2f} s, replayed "
                  f"{base['predicted_wall_s']:.2f} s; load {profile.get('load', '?')}, "
                  f"run-delay {profile.get('run_delay_share', 0):.0%} of attempt time",
                  flush=True)
            cases += found
            timings += took
    finally:
        if not args.keep:
            shutil.rmtree(root, ignore_errors=True)
    after = uptime()
    print()
    for text in summary(cases, quiet=False) + summary(cases, quiet=True):
        print(text)
    commands, inside = [t[0] for t in timings], [t[1] for t in timings]
    slowest = max(inside)
    print(f"a local what-if: advise() (less its run-delay) median "
          f"{statistics.median(inside):.3f} s, slowest "
          f"{slowest:.3f} s (target < {WHAT_IF_SECONDS} s): "
          f"{'PASS' if slowest < WHAT_IF_SECONDS else 'FAIL'}; the whole command "
          f"(Python start-up, imports, reading the logs) median "
          f"{statistics.median(commands):.2f} s")
    print(f"load before: {before}")
    print(f"load after:  {after}")
    print(f"{time.perf_counter() - began:.0f} s in all; cores: {os.cpu_count()}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
