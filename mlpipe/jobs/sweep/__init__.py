"""Sweep steps run here: trials of a command component over a search space
(:mod:`~mlpipe.jobs.sweep.sampling`), stopped early by a policy
(:mod:`~mlpipe.jobs.sweep.termination`), judged by the metric they log
(:mod:`~mlpipe.jobs.sweep.metrics`); :func:`run_sweep_step` is the entry point."""

from mlpipe.jobs.sweep.run import SweepOutcome, run_sweep_step

__all__ = ["SweepOutcome", "run_sweep_step"]
