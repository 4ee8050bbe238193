"""``mlpipe job advise NAME``: a parallel step's wall time at other settings, its cloud
duration on an Azure VM size, and the settings to use there (docs/advise.md)."""

from __future__ import annotations

import argparse
import difflib
import os
from typing import Any

from mlpipe.cli.arguments import (
    add_job_name,
    add_output_format,
    add_overrides,
    emit,
    positive_count,
    runs_dir_option,
)
from mlpipe.cli.job_views import console
from mlpipe.errors import MlpipeError, UsageError
from mlpipe.jobs.record import JobRecord, StepRecord
from mlpipe.jobs.store import JobStore
from mlpipe.runs import check_job_name
from mlpipe.wording import plural


class NothingToAdvise(MlpipeError):
    """The job has no parallel step, or its step recorded no attempt, to advise from."""


HELP = ("predict a parallel step's wall time at other settings and its duration in the cloud, "
        "and recommend its settings")


def register(groups: dict[str, argparse._SubParsersAction[argparse.ArgumentParser]]) -> None:
    parser = groups["job"].add_parser(
        "advise", help=HELP, description=HELP + " (from the job's recorded run; docs/advise.md)",
        epilog="exit codes: 0 advice given; 1 no such job or nothing measured; 2 usage error")
    add_job_name(parser)
    runs_dir_option(parser)
    parser.add_argument("--step", metavar="STEP", help="the parallel step (default: every one)")
    add_output_format(parser)
    add_overrides(parser, "a setting to predict for, e.g. jobs.score.mini_batch_size=20 "
                          "(repeatable: mini_batch_size, max_concurrency_per_instance, "
                          "resources.instance_count, retry_settings.max_retries/timeout)")
    parser.add_argument("--instance-type", metavar="VM_SIZE",
                        help="the Azure VM size of the cloud run (default: Standard_DS3_v2)")
    parser.add_argument("--instance-count", type=positive_count, metavar="N",
                        help="nodes of the cloud run (default: the step's instance_count)")
    parser.add_argument("--assume", action="append", default=[], metavar="KEY=VALUE",
                        help="change an assumption of the cloud prediction (node_start_s, "
                             "image_pull_s, schedule_s, schedule_rate, concat_mb_per_s, "
                             "core_speed)")
    parser.set_defaults(handler=advise_job)


def advise_job(args: argparse.Namespace) -> int:
    from mlpipe.runtime.step_logs import StepLogs, read_attempts  # noqa: PLC0415 - on demand
    from mlpipe.runtime.tuning.advice import advise  # noqa: PLC0415
    from mlpipe.runtime.tuning.cloud import Assumptions  # noqa: PLC0415
    from mlpipe.runtime.tuning.profile import read_profile  # noqa: PLC0415

    problem = check_job_name(args.name)
    if problem:
        raise UsageError(problem)
    store = JobStore(args.runs_dir)
    record = store.load(args.name)
    steps = record.steps
    parallel = record.parallel_steps()
    if args.step is not None and args.step not in parallel:
        close = difflib.get_close_matches(args.step, parallel, n=1)
        hint = f" (did you mean {close[0]!r}?)" if close else ""
        raise UsageError(f"--step {args.step!r} is not a parallel step of job {args.name!r}"
                         f"{hint}; its parallel steps: {', '.join(parallel) or 'none'}")
    if not parallel:
        raise NothingToAdvise(f"job {args.name!r} has no parallel step to advise on (job "
                              "advise reads a parallel step's profile)")
    chosen = [args.step] if args.step else parallel
    if len(chosen) > 1 and args.overrides:
        raise UsageError(f"job {args.name!r} has {plural(len(chosen), 'parallel step')}; name "
                         "the one --set is for with --step")
    assume = Assumptions().changed(args.assume) if args.assume else None
    siblings = [other for other in store.list() if other.name != record.name
                and other.source == record.source] if record.source else []
    advice: dict[str, Any] = {}
    for name in chosen:
        entry = steps[name]
        logs = StepLogs.of(entry.logs_dir or "")
        attempts = read_attempts(logs)
        profile = read_profile(logs, attempts=attempts)
        if profile is None or not profile.tally.attempts:
            raise NothingToAdvise(f"step {name} of job {args.name!r} recorded no attempt to "
                                  "advise from")
        advice[name] = advise(profile, name, overrides=args.overrides,
                              instance_type=args.instance_type,
                              instance_count=args.instance_count, assume=assume,
                              append_row_mb=_append_row_mb(entry),
                              others=other_runs(siblings, name, profile, attempts))

    def human() -> None:
        out = console()
        for step_advice in advice.values():
            for line in table_lines(step_advice):
                out.print(line, soft_wrap=True, markup=False, highlight=False)

    emit(args, {"job": args.name, "steps": {name: a.as_json() for name, a in advice.items()}},
         human)
    return 0


OTHER_RUNS = 3  # other runs of a step whose predictions the interval spans, at most


def other_runs(siblings: list[JobRecord], step: str, profile: Any,
               attempts: Any) -> list[Any]:
    """Other complete runs of ``step`` (all of its mini-batches, the same number of items),
    as profiles, newest first: the step's earlier runs in this job, then the same step of
    ``siblings`` (the other jobs of the same pipeline file in the runs folder, newest
    first). The advice's interval spans what each of them predicts."""
    from mlpipe.runtime.step_logs import StepLogs  # noqa: PLC0415
    from mlpipe.runtime.tuning.profile import read_profile  # noqa: PLC0415

    def complete(other: Any) -> bool:
        return (other is not None and other.status == "Completed" and not other.reused
                and other.tally.attempts > 0 and other.tally.items == profile.tally.items)

    found = [other for other in (read_profile(profile.logs, index, attempts=attempts)
                                 for index in range(profile.runs - 2, -1, -1))
             if complete(other)]
    for other_record in siblings:
        if len(found) >= OTHER_RUNS:
            break
        entry = other_record.steps.get(step)
        if entry is None or entry.kind != "parallel" or not entry.logs_dir:
            continue
        try:
            other = read_profile(StepLogs.of(entry.logs_dir))
        except (OSError, ValueError):
            continue
        if complete(other):
            found.append(other)
    return found[:OTHER_RUNS]


def _append_row_mb(step: StepRecord) -> float:
    path = step.append_row_file
    try:
        return os.path.getsize(path) / 2**20 if path else 0.0
    except OSError:
        return 0.0


def table_lines(advice: Any) -> list[str]:
    """The advice of one step for the terminal."""
    from mlpipe.runtime.tuning.brief import seconds  # noqa: PLC0415

    a = advice
    wall, quiet, fitted = a.profile.wall, a.profile.quiet_wall, a.fitted.wall
    change = (fitted - quiet) / quiet if quiet else 0.0
    measured = (f"measured {seconds(wall)}" if abs(quiet - wall) < 0.005
                else f"measured {seconds(wall)} ({seconds(quiet)} without other load)")
    lines = [f"step {a.step}: {measured}; the model replays this run in "
             f"{seconds(fitted)} ({change:+.0%})"]
    settings = ", ".join(f"{key}={value}" for key, value in a.settings.as_json().items()
                         if value is not None)
    p = a.predicted
    lines.append(f"  here with {settings}: predicted {seconds(p.wall)} "
                 f"(90% {seconds(p.low)}-{seconds(p.high)})")
    lines += [f"    {line}" for line in a.model]
    cloud = a.cloud
    if cloud is not None:
        lines.append(f"  cloud: {cloud.instance_count} x {cloud.vm.name} ({cloud.vm.vcpus} "
                     f"vCPUs, {cloud.vm.memory_gib:g} GiB): predicted "
                     f"{seconds(cloud.duration)} (90% {seconds(cloud.low)}-"
                     f"{seconds(cloud.high)})")
        lines.append("    " + "; ".join(cloud.terms))
        lines.append("    assumed: " + "; ".join(cloud.assumptions.words())
                     + " (change with --assume KEY=VALUE)")
    lines += [f"    note: {note}" for note in a.notes]
    if cloud is not None:
        lines.append("  nodes vs duration: " + ", ".join(f"{n}: {seconds(d)}"
                                                         for n, d in cloud.curve))
        lines.append("  recommended:")
        for recommendation in cloud.recommendations:
            lines.append(f"    {recommendation.key}: {recommendation.value}  "
                         f"({recommendation.why})")
    return lines
