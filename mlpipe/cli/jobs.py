"""``mlpipe job create|show|list|stream|cancel``: run pipelines and inspect their records."""

from __future__ import annotations

import argparse
import contextlib
import signal
import sys
import threading
import time
from typing import Any

from rich.table import Table

from mlpipe.cli.arguments import (
    add_backend,
    add_job_name,
    add_output_format,
    add_overrides,
    add_web,
    add_workspace_options,
    backend_choice,
    emit,
    machine_output,
    positive_count,
    runs_dir_option,
    web_note,
)
from mlpipe.cli.job_views import console, jobs_table, print_job, progress_lines, steps_table
from mlpipe.cli.validate import file_problem
from mlpipe.errors import MlpipeError, UsageError
from mlpipe.jobs.azure_view import azure_children, azure_record
from mlpipe.jobs.ownership import own_job, request_cancel
from mlpipe.jobs.record import JobRecord
from mlpipe.jobs.request import JobRequest
from mlpipe.jobs.store import JobStore, RecordError
from mlpipe.plan import ExecutionPlan
from mlpipe.runs import check_job_name, runs_dir_problem
from mlpipe.wording import plural

STREAM_POLL_SECONDS = 0.5


class RunnerGone(MlpipeError):
    """``job stream`` of a job whose record says it runs, but whose runner is gone."""


class CancelTimeout(MlpipeError):
    """``job cancel`` waited ``--timeout`` seconds and the job still runs."""


def _warn(message: str) -> None:
    print(f"mlpipe: {message}", file=sys.stderr)


def register(groups: dict[str, argparse._SubParsersAction[argparse.ArgumentParser]]) -> None:
    job = groups["job"]

    create = job.add_parser("create", help="run a pipeline job here",
                            description="Validate, compile and run a pipeline YAML locally "
                                        "(or a standalone command or sweep job, as its one "
                                        "step).",
                            epilog="exit codes: 0 the job completed; 1 invalid, failed, "
                                   "canceled or refused; 2 usage error")
    create.add_argument("--file", "-f", required=True,
                        help="the pipeline YAML (or a command or sweep job's)")
    create.add_argument("--name", "-n", help="job name (default: <display_name, experiment_name or "
                        "file/folder name>_<time>_<hex>); naming an unfinished job resumes it")
    runs_dir_option(create)
    add_overrides(create, "override a key of the YAML (repeatable)")
    add_backend(create)
    create.add_argument("--no-progress", dest="progress", action="store_false",
                        help="no progress bars")
    create.add_argument("--allow-external-outputs", action="store_true",
                        help="let outputs with a declared 'path' be written outside the runs "
                             "folder (kept by the job's resumes and reruns)")
    create.add_argument("--skip-step", dest="skip_steps", action="append", default=[],
                        metavar="NAME",
                        help="do not run step NAME (repeatable): its outputs are given with "
                             "--set jobs.NAME.outputs.OUTPUT.path=./local (for steps only Azure "
                             "runs: automl, data_transfer, import, Spark without pyspark)")
    create.add_argument("--stream", action="store_true",
                        help="accepted for az compatibility: the job runs here until it ends, "
                             "its progress on the terminal")
    create.add_argument("--skip-validation", action="store_true",
                        help="accepted for az compatibility (the job is always validated)")
    _az_conventions(create, web=True)
    create.set_defaults(handler=create_job)

    show = job.add_parser("show", help="show a job's record")
    add_job_name(show)
    runs_dir_option(show)
    _az_conventions(show, web=True)
    show.add_argument("--mini-batches", action="store_true",
                      help="list a parallel step's mini-batches: id, items, attempts, status, "
                           "first line of the error")
    show.add_argument("--step", metavar="STEP",
                      help="the parallel step for --mini-batches (needed when there are several)")
    show.add_argument("--failed", action="store_true",
                      help="with --mini-batches: only those whose last attempt failed, timed out "
                           "or returned fewer items than it was given")
    show.set_defaults(handler=show_job)

    listing = job.add_parser("list", help="list jobs, newest first")
    runs_dir_option(listing)
    listing.add_argument("--max-results", "-r", type=positive_count, metavar="N",
                         help="list at most N jobs (the newest)")
    listing.add_argument("--parent-job-name", "-p", metavar="NAME",
                         help="list the steps of this pipeline job (its child jobs), as az ml")
    listing.add_argument("--all-results", action="store_true",
                         help="accepted for az compatibility (every job is listed)")
    _az_conventions(listing)
    listing.set_defaults(handler=list_jobs)

    stream = job.add_parser("stream", help="follow a running job until it ends")
    add_job_name(stream)
    runs_dir_option(stream)
    _az_conventions(stream)
    stream.set_defaults(handler=stream_job)

    cancel = job.add_parser("cancel", help="stop a running job (finished work is kept)")
    add_job_name(cancel)
    runs_dir_option(cancel)
    _az_conventions(cancel)
    cancel.add_argument("--no-wait", dest="wait", action="store_false",
                        help="return at once instead of waiting for the job to stop")
    cancel.add_argument("--timeout", type=_seconds, default=120.0,
                        help="seconds to wait for the job to stop (default 120)")
    cancel.set_defaults(handler=cancel_job)

    rerun = job.add_parser("rerun", help="run a finished job again in place: all or some "
                                         "steps, or only its failed mini-batches")
    add_job_name(rerun)
    runs_dir_option(rerun)
    rerun.add_argument("--failed-only", action="store_true",
                       help="run again only the mini-batches whose last attempt failed, timed "
                            "out or returned fewer items (and what they feed)")
    rerun.add_argument("--step", dest="steps", action="append", default=[], metavar="STEP",
                       help="a step to run again (repeatable; default: every step)")
    add_overrides(rerun, "override a key of the pipeline, as job create --set")
    add_backend(rerun)
    rerun.add_argument("--no-progress", dest="progress", action="store_false",
                       help="no progress bars")
    rerun.set_defaults(handler=rerun_job)

    debug = job.add_parser("debug", help="run one mini-batch of a parallel step here, in the "
                                         "foreground (the job's files are not changed)")
    add_job_name(debug)
    runs_dir_option(debug)
    debug.add_argument("--step", metavar="STEP",
                       help="the parallel step (needed when the job has several)")
    debug.add_argument("--mini-batch", required=True, metavar="ID",
                       help="the mini-batch id, or the start of it that names one (mlpipe job "
                            "show NAME --mini-batches --failed lists them)")
    debug.add_argument("--pdb", action="store_true",
                       help="open the post-mortem debugger when init() or run() raises")
    debug.set_defaults(handler=debug_job)

    download = job.add_parser(
        "download", help="copy a finished job's outputs or logs, as az ml job download",
        description="Copy a finished job's files the way az ml lays them out: --output-name X "
                    "to DOWNLOAD_PATH/named-outputs/X, --all every output and the logs, else the "
                    "logs (the run folder) to DOWNLOAD_PATH/artifacts.")
    add_job_name(download)
    runs_dir_option(download)
    download.add_argument("--output-name", metavar="OUTPUT", help="the pipeline output to copy")
    download.add_argument("--download-path", default=".", metavar="PATH",
                          help="where to copy to (default: the current folder)")
    download.add_argument("--all", action="store_true", help="every output and the logs")
    _az_conventions(download)
    download.set_defaults(handler=download_job)


def _az_conventions(parser: argparse.ArgumentParser, *, web: bool = False) -> None:
    """az's conventions every job verb takes: ``-o``/``--query``, the workspace selectors,
    and ``--web`` where az has it."""
    add_output_format(parser)
    add_workspace_options(parser)
    if web:
        add_web(parser)


def _seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number of seconds, got {text!r}") from None
    if not value > 0:
        raise argparse.ArgumentTypeError(f"must be greater than 0, got {text}")
    return value


def create_job(args: argparse.Namespace) -> int:
    """``mlpipe job create``: 0 when the job completed; 1 when it failed or was canceled
    (an invalid or refused job raises). With ``-o``/``--query`` the progress goes to stderr
    and stdout gets the job as ``job show`` gives it (``--query name -o tsv``: its name)."""
    problem = file_problem(args.file)
    if problem:
        raise UsageError(problem)
    if not machine_output(args):
        return _create(args)
    with contextlib.redirect_stdout(sys.stderr):
        code = _create(args)
    emit(args, lambda: azure_record(JobStore(args.runs_dir).load(args.created)))
    return code


def _create(args: argparse.Namespace) -> int:
    from mlpipe.jobs.front_door import JobHooks, Submission, submit  # noqa: PLC0415

    out = console()

    def on_start(submission: Submission) -> None:
        decision = submission.decision
        print(f"job: {decision.name}")
        if decision.action == "rerun":
            print(f"rerunning job {decision.name} in place (attempt {decision.attempt}): "
                  f"{', '.join(args.rerun_steps)}")
        elif decision.resuming:
            status = decision.previous.status if decision.previous is not None else "?"
            print(f"resuming the {status} job {decision.name}: completed steps are kept "
                  f"(attempt {decision.attempt})")
        print(f"run folder: {submission.plan.run_dir}", flush=True)

    def warn(plan: ExecutionPlan) -> None:
        for warning in plan.warnings:
            print(warning.format(), file=sys.stderr)

    cancel = threading.Event()
    hooks = JobHooks(cancel=cancel, echo=lambda line: print(line, flush=True),
                     on_compiled=warn, on_start=on_start, owner=getattr(args, "owner", None))
    previous_sigterm = _install_sigterm(cancel)
    try:
        submission = submit(job_request(args), hooks)
    finally:
        _restore_sigterm(previous_sigterm)
    assert submission.result is not None
    args.created = submission.name
    print_job(JobStore(args.runs_dir).load(submission.name), out)
    if submission.result.report:  # written by the runner (a warning was said otherwise)
        print(f"report:     {submission.result.report}", flush=True)
    web_note(args, submission.result.report)
    return 0 if submission.result.ok else 1


def job_request(args: argparse.Namespace) -> JobRequest:
    """The one request ``job create`` (and ``job rerun``, with the record it resumes from)
    makes of its arguments."""
    return JobRequest(
        source=args.file, runs_dir=args.runs_dir, name=args.name,
        overrides=tuple(args.overrides), backend=backend_choice(args),
        allow_external_outputs=getattr(args, "allow_external_outputs", False),
        skip_steps=tuple(getattr(args, "skip_steps", ()) or ()),
        rerun_of=getattr(args, "rerun_of", None), progress=args.progress)


def _install_sigterm(cancel: threading.Event) -> Any:
    if threading.current_thread() is not threading.main_thread():
        return None
    return signal.signal(signal.SIGTERM, lambda _sig, _frame: cancel.set())


def _restore_sigterm(previous: Any) -> None:
    if previous is not None:
        signal.signal(signal.SIGTERM, previous)


def _store_for(args: argparse.Namespace) -> JobStore:
    """The job store of ``args``; :class:`UsageError` for an unusable runs folder or a name
    that is no job name."""
    store = JobStore(args.runs_dir)
    problem = runs_dir_problem(store.runs_dir)
    name = getattr(args, "name", None)
    if problem is None and name is not None:
        problem = check_job_name(name)
    if problem:
        raise UsageError(problem)
    return store


def _job_for(args: argparse.Namespace) -> tuple[JobStore, JobRecord]:
    """The store and the record of job ``args.name``."""
    store = _store_for(args)
    return store, store.load(args.name)


def rerun_job(args: argparse.Namespace) -> int:
    """``mlpipe job rerun``: 0 when the rerun completed (or had nothing to do), else 1."""
    from mlpipe.jobs.rerun import plan_rerun  # noqa: PLC0415

    store = _store_for(args)
    with own_job(store, args.name) as owner:  # what runs again is decided by the owner only
        previous, steps = plan_rerun(store, args.name, failed_only=args.failed_only,
                                     steps=args.steps)
        if not steps:
            print(f"job {args.name}: nothing to rerun (no mini-batch failed"
                  f"{' in ' + ', '.join(args.steps) if args.steps else ''})")
            return 0
        if not previous.source:
            raise RecordError(f"job {args.name!r} cannot be rerun: its record names no "
                              "pipeline file")
        args.file, args.rerun_of, args.rerun_steps = previous.source, previous, steps
        args.owner = owner
        return create_job(args)


def debug_job(args: argparse.Namespace) -> int:
    """``mlpipe job debug``: 0 when run() returned, 1 when the user's code raised."""
    store = _store_for(args)
    with own_job(store, args.name, doing="debug"):  # no run replaces its code snapshot
        record = store.load(args.name)
        from mlpipe.jobs.debug import debug_mini_batch  # noqa: PLC0415 - the runtime on demand

        return debug_mini_batch(record, args.step, args.mini_batch, post_mortem=args.pdb,
                                echo=lambda line: print(line, flush=True))


def show_job(args: argparse.Namespace) -> int:
    _, record = _job_for(args)
    if args.mini_batches or args.step or args.failed:
        return _show_mini_batches(args, record)
    view = azure_record(record)
    web_note(args, view.get("services", {}).get("Studio", {}).get("endpoint"))
    emit(args, view, human=lambda: print_job(record))
    return 0


def _show_mini_batches(args: argparse.Namespace, record: JobRecord) -> int:
    """``job show NAME --mini-batches [--step STEP] [--failed]``."""
    from mlpipe.runtime.mini_batch_outcomes import read_outcomes  # noqa: PLC0415
    from mlpipe.runtime.step_logs import StepLogs  # noqa: PLC0415

    if not args.mini_batches:
        raise UsageError("--step and --failed go with --mini-batches")
    steps = record.steps
    parallel = record.parallel_steps()
    name = args.step or (parallel[0] if len(parallel) == 1 else None)
    if name is None:
        raise UsageError(f"job {record.name!r} has "
                         f"{plural(len(parallel), 'parallel step')}"
                         f"{': ' + ', '.join(parallel) if parallel else ''}; name one with --step")
    if name not in parallel:
        raise UsageError(f"--step {name!r} is not a parallel step of job "
                         f"{record.name!r} (parallel steps: "
                         f"{', '.join(parallel) or 'none'})")
    logs_dir = steps[name].logs_dir or ""
    outcomes = read_outcomes(logs_dir)
    if args.failed:
        outcomes = [outcome for outcome in outcomes if not outcome.ok]
    if machine_output(args):
        emit(args, [vars(outcome) for outcome in outcomes])
        return 0
    table = Table("id", "items", "attempts", "status", "detail", "error", box=None)
    for outcome in outcomes:
        status = outcome.status if outcome.ok or outcome.status != "Succeeded" else (
            f"Succeeded ({outcome.succeeded}/{outcome.items} items)")
        table.add_row(outcome.id, str(outcome.items), str(outcome.attempts), status,
                      outcome.detail, outcome.error)
    console().print(table)
    kind = "failed mini-batch" if args.failed else "mini-batch"
    print(f"{plural(len(outcomes), kind)} in step {name} "
          f"({StepLogs.of(logs_dir).processed})")
    return 0


def list_jobs(args: argparse.Namespace) -> int:
    store = _store_for(args)
    if args.parent_job_name is not None:
        return _list_children(args, store)
    records = store.list()[:args.max_results]
    if machine_output(args):
        emit(args, [azure_record(record) for record in records])
    elif not records:
        print(f"no jobs in {store.runs_dir}")
    else:
        console().print(jobs_table(records))
    if store.unreadable:  # a warning: the other jobs are listed
        _warn(f"skipped {plural(len(store.unreadable), 'unreadable record')}: "
             + ", ".join(str(store.record_path(name)) for name in sorted(store.unreadable)))
    return 0


def _list_children(args: argparse.Namespace, store: JobStore) -> int:
    """``job list --parent-job-name P``: the steps of job P, as az lists child jobs."""
    if (problem := check_job_name(args.parent_job_name)) is not None:
        raise UsageError(problem)
    record = store.load(args.parent_job_name)
    children = azure_children(record)[:args.max_results]
    emit(args, children, human=lambda: console().print(steps_table(record)))
    return 0


def download_job(args: argparse.Namespace) -> int:
    """``mlpipe job download``: 0 when the files were copied, 1 when the job has not ended
    or has no such output."""
    from mlpipe.jobs.download import download_job as download  # noqa: PLC0415

    store = _store_for(args)
    written = download(store, args.name, args.download_path, args.output_name, args.all)
    emit(args, None, human=lambda: print("\n".join(f"downloaded: {f}" for f in written)))
    return 0


def stream_job(args: argparse.Namespace) -> int:
    """Print each change of the job's record until the job ends; exit 0 if it completed."""
    store, record = _job_for(args)
    previous: JobRecord | None = None
    while True:
        for line in progress_lines(previous, record):
            print(f"{time.strftime('%H:%M:%S')} {line}", flush=True)
        if record.ended:
            break
        if record.stale:
            raise RunnerGone(f"job {args.name!r} says {record.status} but its runner "
                             f"(pid {record.pid}) is gone")
        previous = record
        time.sleep(STREAM_POLL_SECONDS)
        record = store.load(args.name)  # removed or damaged meanwhile: raised
    print_job(record)
    return 0 if record.status == "completed" else 1


def cancel_job(args: argparse.Namespace) -> int:
    """Ask a job to stop; by default wait until it has stopped. 0 when it ends canceled."""
    store, _ = _job_for(args)
    record = request_cancel(store, args.name)
    if record.ended:
        print(f"job {args.name} is {record.status}")
        return 0 if record.status == "canceled" else 1
    print(f"cancel requested for job {args.name}", flush=True)
    if not args.wait:
        return 0
    deadline = time.monotonic() + args.timeout
    while not record.ended:
        if time.monotonic() > deadline:
            raise CancelTimeout(f"job {args.name} is still {record.status} after "
                                f"{args.timeout:.0f}s")
        time.sleep(0.2)
        record = store.load(args.name)
    print(f"job {args.name}: {record.status}")
    return 0 if record.status == "canceled" else 1
