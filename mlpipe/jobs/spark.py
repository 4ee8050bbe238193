"""Spark steps, run here when ``pyspark`` is installed: ``spark-submit --master local[*]``
in a snapshot of the step's code folder, with the step's ``py_files``, ``jars``, ``files``,
``archives`` and ``conf``; logged and stopped like a command step (:mod:`mlpipe.jobs.command`).
"""

from __future__ import annotations

import importlib.util
import shlex
import sys
import threading
from pathlib import Path

from mlpipe.frozen import freeze
from mlpipe.jobs.command import CommandOutcome, run_command_step
from mlpipe.plan import CommandStep, SparkStep


def spark_submit() -> str:
    """The ``spark-submit`` of the installed pyspark."""
    spec = importlib.util.find_spec("pyspark")
    folders = list(spec.submodule_search_locations or []) if spec is not None else []
    if not folders:
        raise FileNotFoundError("pyspark is not installed: Spark steps cannot run here")
    return str(Path(folders[0]) / "bin" / "spark-submit")


def spark_command(step: SparkStep) -> str:
    """The shell command running ``step`` with local Spark."""
    words = [spark_submit(), "--master", "local[*]"]
    for flag, items in (("--py-files", step.py_files), ("--jars", step.jars),
                        ("--files", step.files), ("--archives", step.archives)):
        if items:
            words += [flag, ",".join(items)]
    for key, value in step.conf.items():
        words += ["--conf", f"{key}={value}"]
    if step.entry_class:
        words += ["--class", step.entry_class]
    words.append(step.entry_file or "")
    return " ".join(shlex.quote(word) for word in words + list(step.args))


def run_spark_step(step: SparkStep, *, cancel: threading.Event | None = None) -> CommandOutcome:
    """Run ``step`` to its end (or until ``cancel`` is set)."""
    env = dict(step.environment_variables)
    env.setdefault("PYSPARK_PYTHON", sys.executable)
    command = CommandStep(name=step.name, step_dir=step.step_dir, inputs=step.inputs,
                          outputs=step.outputs, environment_variables=freeze(env),
                          environment=step.environment, code_dir=step.code_dir,
                          additional_includes=step.additional_includes,
                          compute=step.compute, stand_ins=step.stand_ins,
                          command=spark_command(step))
    return run_command_step(command, cancel=cancel)


__all__ = ["run_spark_step", "spark_command"]
