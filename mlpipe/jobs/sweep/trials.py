"""One trial of a sweep: its command step, and the table of every trial's outcome."""

from __future__ import annotations

import csv
import json
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from mlpipe.compiler.scope import StepValues
from mlpipe.compiler.values import literal_type
from mlpipe.frozen import freeze
from mlpipe.plan import CommandStep, PlanInput, PlanOutput, SweepStep


@dataclass
class Trial:
    """A trial's parameters and how it ended (``status``: queued, running, completed, failed,
    canceled, early_terminated or timed_out)."""

    number: int
    params: dict[str, Any]
    step: CommandStep
    status: str = "queued"
    metrics: list[float] = field(default_factory=list)  # the primary metric, as logged
    error: str | None = None

    @property
    def name(self) -> str:
        return f"trial_{self.number}"

    @property
    def folder(self) -> Path:
        return Path(self.step.step_dir)

    @property
    def final(self) -> float | None:
        """The trial's objective: the last value of the primary metric it logged."""
        return self.metrics[-1] if self.metrics else None


def trial_step(sweep: SweepStep, number: int, params: dict[str, Any]) -> CommandStep:
    """The command step of trial ``number``: the trial command with the sweep's fixed inputs
    and ``params`` substituted, its outputs and logs in ``<step>/trials/trial_<number>``."""
    folder = Path(sweep.step_dir) / "trials" / f"trial_{number}"
    inputs = dict(sweep.inputs)
    for name, value in params.items():
        kind = inputs[name].type if name in inputs else literal_type(value)
        inputs[name] = PlanInput(name, kind, value=value)
    outputs = {name: replace(out, path=str(_trial_output(folder, out)))
               for name, out in sweep.outputs.items()}
    values = StepValues(inputs, outputs)
    return CommandStep(  # a command step: its metrics land in its folder (jobs/step_metrics.py)
        name=f"{sweep.name}.trial_{number}", step_dir=str(folder),
        inputs=freeze(inputs), outputs=freeze(outputs),
        environment_variables=sweep.environment_variables,
        environment=sweep.environment, code_dir=sweep.code_dir, compute=sweep.compute,
        additional_includes=sweep.additional_includes,
        stand_ins=sweep.stand_ins, command=values.command(sweep.trial_command),
        distribution=sweep.distribution)


def _trial_output(folder: Path, out: PlanOutput) -> Path:
    """Where a trial writes output ``out`` (a ``uri_file`` keeps its file name)."""
    base = folder / "outputs" / out.name
    return base / Path(out.path).name if out.type == "uri_file" else base


def write_table(sweep: SweepStep, trials: list[Trial], best: Trial | None) -> Path:
    """``<step>/logs/sweep/trials.csv``: one row per trial (parameters, status, the primary
    metric's last value and how many times it was logged), and ``best_trial.json``."""
    folder = Path(sweep.logs_dir) / "sweep"
    folder.mkdir(parents=True, exist_ok=True)
    metric = sweep.objective.primary_metric
    names = list(dict.fromkeys(name for trial in trials for name in trial.params))
    path = folder / "trials.csv"
    with open(path, "w", newline="", encoding="utf-8") as out:
        writer = csv.writer(out)
        writer.writerow(["trial", "status", *names, metric, f"{metric}_reports", "best"])
        for trial in trials:
            writer.writerow([trial.name, trial.status, *(trial.params.get(n) for n in names),
                             "" if trial.final is None else trial.final, len(trial.metrics),
                             "yes" if trial is best else ""])
    summary = {"best_trial": best.name if best else None,
               "parameters": best.params if best else None,
               "primary_metric": metric, "goal": sweep.objective.goal,
               "value": best.final if best else None}
    (folder / "best_trial.json").write_text(json.dumps(summary, indent=2, default=str) + "\n",
                                            encoding="utf-8")
    return path


__all__ = ["Trial", "trial_step", "write_table"]
