"""Run a sweep step here: its trials as command steps, at most ``max_concurrent_trials`` at
once, with the early-termination policy applied as they log their primary metric; the best
trial's outputs are copied into the step's outputs, beside what is there and never over a
file the job did not write (:mod:`mlpipe.jobs.output_files`)."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from mlpipe.cores import core_count
from mlpipe.jobs.command import run_command_step
from mlpipe.jobs.output_files import OutputClashError, copy_beside, ledger_path
from mlpipe.jobs.sweep.metrics import read_metric
from mlpipe.jobs.sweep.sampling import suggest
from mlpipe.jobs.sweep.termination import should_stop
from mlpipe.jobs.sweep.trials import Trial, trial_step, write_table
from mlpipe.plan import SweepStep
from mlpipe.runtime.faults import describe_fault

POLL_SECONDS = 0.05


@dataclass
class SweepOutcome:
    """How a sweep ended: ``status`` completed, failed or canceled; the best trial."""

    status: str
    trials: list[Trial]
    best: Trial | None
    table: str
    error: str | None = None


def run_sweep_step(step: SweepStep, *, cancel: threading.Event | None = None,
                   say: Callable[[str], None] = lambda _line: None) -> SweepOutcome:
    """Run ``step``'s trials and copy the best one's outputs to the step's outputs."""
    cancel = cancel or threading.Event()
    limits = step.limits
    if step.sampling_algorithm == "bayesian":
        say(f"step {step.name}: bayesian sampling is drawn at random here")
    trials = [Trial(number, params, trial_step(step, number, params))
              for number, params in enumerate(
                  suggest(step.search_space, step.sampling_algorithm, step.seed,
                          limits.max_total_trials))]
    concurrency = max(1, limits.max_concurrent_trials or min(len(trials), core_count()))
    deadline = time.monotonic() + limits.timeout if limits.timeout else None
    running: dict[str, tuple[Trial, threading.Thread, threading.Event, float]] = {}
    queue = list(trials)
    while queue or running:
        if cancel.is_set() or (deadline is not None and time.monotonic() > deadline):
            for _trial, _thread, stop, _started in running.values():
                stop.set()
            for trial in queue:
                trial.status = "canceled"
            queue = []
        while queue and len(running) < concurrency:
            trial = queue.pop(0)
            stop = threading.Event()
            thread = threading.Thread(target=_run_trial, args=(trial, stop), daemon=True,
                                      name=f"mlpipe-{trial.step.name}")
            trial.status = "running"
            thread.start()
            running[trial.name] = (trial, thread, stop, time.monotonic())
        _watch(step, trials, running)
        for name, (trial, thread, _stop, _started) in list(running.items()):
            if not thread.is_alive():
                trial.metrics = read_metric(trial.folder, step.objective.primary_metric)
                del running[name]
        time.sleep(POLL_SECONDS)
    return _finish(step, trials, cancel)


def _run_trial(trial: Trial, stop: threading.Event) -> None:
    outcome = run_command_step(trial.step, cancel=stop)
    if trial.status == "running":  # not already early_terminated / timed_out
        trial.status = outcome.status
    trial.error = outcome.error


def _watch(step: SweepStep, trials: list[Trial],
           running: dict[str, tuple[Trial, threading.Thread, threading.Event, float]]) -> None:
    """Read the running trials' metrics; stop those the policy or the trial timeout ends."""
    metric = step.objective.primary_metric
    for trial, _thread, _stop, _started in running.values():
        trial.metrics = read_metric(trial.folder, metric)
    series = {t.name: t.metrics for t in trials if t.metrics}
    for trial, _thread, stop, started in running.values():
        if stop.is_set():
            continue
        timeout = step.limits.trial_timeout
        if timeout and time.monotonic() - started > timeout:
            trial.status = "timed_out"
            stop.set()
        elif step.early_termination is not None and trial.metrics and should_stop(
                step.early_termination, step.objective.goal, trial.name, series):
            trial.status = "early_terminated"
            stop.set()


def _finish(step: SweepStep, trials: list[Trial], cancel: threading.Event) -> SweepOutcome:
    done = [t for t in trials if t.status == "completed" and t.final is not None]
    sign = 1.0 if step.objective.goal == "maximize" else -1.0
    best = max(done, key=lambda t: sign * (t.final or 0.0)) if done else None
    table = write_table(step, trials, best)
    if best is None:
        status = "canceled" if cancel.is_set() else "failed"
        reason = (f"no trial completed and logged {step.objective.primary_metric} "
                  f"(trials: {', '.join(f'{t.name} {t.status}' for t in trials)})")
        return SweepOutcome(status, trials, None, str(table), reason)
    try:
        for name, output in step.outputs.items():
            copy_beside(Path(best.step.outputs[name].path), Path(output.path),
                        ledger_path(step, name), f"step {step.name} output '{name}'")
    except OSError as error:  # an OutputClashError names the files in the way itself
        why = str(error) if isinstance(error, OutputClashError) else describe_fault(error)
        return SweepOutcome("failed", trials, best, str(table),
                            f"the best trial ({best.name}) was not copied to the step's "
                            f"output: {why}")
    return SweepOutcome("completed", trials, best, str(table))


__all__ = ["SweepOutcome", "run_sweep_step"]
