"""``mlpipe job report NAME`` (or ``-n NAME``): writes or rewrites ``<run>/report.html``."""

from __future__ import annotations

import argparse
import sys

from mlpipe.jobs.store import JobNotFound, JobStore
from mlpipe.runs import check_job_name
from mlpipe.runtime.faults import describe_fault

HELP = "write a job's report.html (task streams, throughput, errors, steps)"


def register(groups: dict[str, argparse._SubParsersAction]) -> None:
    parser = groups["job"].add_parser("report", help=HELP, description=HELP)
    parser.add_argument("name", nargs="?", help="the job's name")
    parser.add_argument("--name", "-n", dest="name_option", metavar="NAME",
                        help="the job's name (az style)")
    parser.add_argument("--runs-dir",
                        help="runs folder (default: $MLPIPE_RUNS_DIR or ./mlpipe-runs)")
    parser.set_defaults(handler=report_job, _parser=parser)


def report_job(args: argparse.Namespace) -> int:
    from mlpipe.runtime.reports.html import write_job_report  # noqa: PLC0415

    name = args.name or args.name_option
    if not name or (args.name and args.name_option and args.name != args.name_option):
        args._parser.print_usage(sys.stderr)
        print("mlpipe job report: error: give the job's name once, as NAME or -n NAME",
              file=sys.stderr)
        return 2
    problem = check_job_name(name)
    if problem:
        print(f"mlpipe: error: {problem}", file=sys.stderr)
        return 2
    store = JobStore(args.runs_dir)
    try:
        record = store.load(name)
    except JobNotFound:
        print(f"mlpipe: error: no job {name!r} in {store.runs_dir}", file=sys.stderr)
        return 1
    except (OSError, ValueError) as exc:
        print(f"mlpipe: error: cannot read the record of job {name!r} "
              f"({store.record_path(name)}): {exc}", file=sys.stderr)
        return 1
    try:
        print(write_job_report(store.job_dir(name), record))
    except OSError as exc:
        print(f"mlpipe: error: report.html of job {name!r} not written: {describe_fault(exc)}",
              file=sys.stderr)
        return 1
    return 0
