"""``mlpipe job report NAME`` (or ``-n NAME``): writes or rewrites ``<run>/report.html``."""

from __future__ import annotations

import argparse

from mlpipe.cli.arguments import add_job_name, runs_dir_option
from mlpipe.errors import MlpipeError, UsageError
from mlpipe.jobs.store import JobStore
from mlpipe.runs import check_job_name
from mlpipe.runtime.faults import describe_fault

HELP = "write a job's report.html (task streams, throughput, errors, steps)"


class ReportNotWritten(MlpipeError):
    """The job's report.html could not be written (its folder refuses the write)."""


def register(groups: dict[str, argparse._SubParsersAction[argparse.ArgumentParser]]) -> None:
    parser = groups["job"].add_parser("report", help=HELP, description=HELP)
    add_job_name(parser)
    runs_dir_option(parser)
    parser.set_defaults(handler=report_job)


def report_job(args: argparse.Namespace) -> int:
    from mlpipe.jobs.report import write_job_report  # noqa: PLC0415 - the page's code

    problem = check_job_name(args.name)
    if problem:
        raise UsageError(problem)
    store = JobStore(args.runs_dir)
    record = store.load(args.name)
    try:
        print(write_job_report(store.job_dir(args.name), record))
    except OSError as exc:
        raise ReportNotWritten(f"report.html of job {args.name!r} not written: "
                               f"{describe_fault(exc)}") from exc
    return 0
