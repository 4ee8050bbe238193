"""``logs/readme.txt``: describes the files a step actually wrote (docs/logs.md has the same
text)."""

from __future__ import annotations

from fnmatch import fnmatchcase
from pathlib import Path

from mlpipe.runtime.step_logs import LAYOUT, StepLogs
from mlpipe.runtime.textio import write_text

_ = LAYOUT.relative  # a file's name below logs/, as StepLogs lays them out
# (pattern relative to logs/, description); the first pattern a file matches describes it.
DESCRIPTIONS: tuple[tuple[str, str], ...] = (
    (_(LAYOUT.readme), "This file: what each file in this folder holds."),
    (_(LAYOUT.job_result),
     "The result of the step. First line: 'Succeeded' or 'Failed: <reason>'; then the counts of "
     "mini-batches, attempts and items, each threshold with its numbers, and the most frequent "
     "errors with the files that hold their tracebacks. Start here."),
    ("job_progress_overview.*.txt",
     "Progress written while the step runs (at most once a second): mini-batches scheduled, "
     "processed and failed, items, rate and ETA. One file per UTC hour (yyyymmddhh)."),
    (_(LAYOUT.master_role),
     "The driver's log (time|LEVEL|pid|thread|message, UTC): scheduling, workers starting, dying "
     "and being replaced, failed attempts, thresholds, the end of the step. Its level is the "
     "step's logging_level."),
    (_(LAYOUT.processed),
     "One row per attempt at a mini-batch, in the order they finished: Mini-batch Id, Picked Count "
     "(1 = first attempt), Process (<node>/<process>), Process Start Time (UTC), Total, Succeeded, "
     "Failed items, Elapsed / Process (CPU) / Run Method Seconds, Status, Error Category, "
     "Error Message and the mini-batch as JSON."),
    (_(LAYOUT.process_summary),
     "processed_mini-batches.csv summed per worker process: attempts, failed attempts, items, "
     "busy seconds and utilization (busy seconds / step wall time)."),
    (_(LAYOUT.runs),
     "mlpipe's record of each run of the step (a resume or rerun adds one): its start and end, "
     "settings, workers' start-up, the sums of its attempts (time in dispatch, load, run() and "
     "result handling, CPU, items, bytes, durations) and its error groups as job_result.txt "
     "counts them. report.html and mlpipe job advise read it."),
    (_(LAYOUT.node_summary),
     "processed_mini-batches.csv summed per node; utilization is busy seconds / (wall time x "
     "processes of the node)."),
    ("sys/perf/*/node_resource_usage.csv",
     "Machine resource usage sampled every resource_monitor_interval seconds and at the start and "
     "end of the step: CPU, memory, disk and network I/O since the step started, TCP and UDP "
     "connections (empty when the OS does not tell). Every node of a local run is this machine."),
    ("sys/perf/*/processes_resource_usage.csv",
     "Each worker process of the node, sampled with node_resource_usage.csv: CPU percent, RSS and "
     "virtual memory, memory percent, threads, status."),
    ("sys/perf/*/*", "Other resource usage reports of the node."),
    (_(LAYOUT.error_summary),
     "Every distinct error of the step, most frequent first, with how many attempts and "
     "mini-batches it hit and the files with its tracebacks."),
    ("user/error/*/*.txt",
     "Full tracebacks of the failed attempts (and failed worker starts) of one worker process, "
     "in the order they happened."),
    ("user/stdout/*/*.stdout.txt",
     "What the entry script printed to stdout in that worker process."),
    ("user/stderr/*/*.stderr.txt", "What the entry script wrote to stderr in that worker process."),
    ("user/entry_script_log/*/*.log.txt",
     "The entry script's own log (EntryScript().logger) in that worker process."),
    ("sys/profile/*/*.prof",
     "Profiles of the run() calls of each worker process (--profiling_module cProfile or "
     "profile), in pstats format: python -c \"import pstats; pstats.Stats('process000.prof')"
     ".sort_stats('cumulative').print_stats(20)\", or a viewer such as snakeviz. A replacement "
     "worker adds its numbers to the file of the process it replaces."),
    (_(LAYOUT.samples),
     "CPU % and memory (MB) of the machine and of each worker process, sampled by the driver "
     "ten times a second (Seconds from the start of the step's run; drawn in the job's "
     "report.html)."),
    (_(LAYOUT.task_stream),
     "A task-stream chart of processed_mini-batches.csv: one bar per attempt, one row per worker "
     "(above 500 attempts, shaded runs of time buckets per worker)."),
)
MAX_LISTED = 8


def render_readme(logs: StepLogs, step_name: str) -> str:
    """The readme text for the files now under ``logs`` (plus readme.txt itself)."""
    files = sorted(
        logs.relative(path)
        for path in logs.root.rglob("*")
        if path.is_file() and not path.name.endswith(".tmp")
    )
    if logs.relative(logs.readme) not in files:
        files.append(logs.relative(logs.readme))
    matched: dict[str, list[str]] = {pattern: [] for pattern, _ in DESCRIPTIONS}
    others: list[str] = []
    for name in files:
        for pattern, _ in DESCRIPTIONS:
            if fnmatchcase(name, pattern):
                matched[pattern].append(name)
                break
        else:
            others.append(name)
    lines = [
        f"Logs of the parallel step '{step_name}', written by mlpipe in the layout of Azure ML's",
        "parallel job runtime. Start with job_result.txt; paths below are relative to this folder.",
        "",
        "../../report.html",
        "    The job's report (run by `mlpipe job create`; `mlpipe job report NAME` rewrites it):",
        "    each step's status and wall time, and per parallel step its task stream, throughput,",
        "    slowest attempts and errors grouped with counts.",
        "",
    ]
    for pattern, description in DESCRIPTIONS:
        names = matched[pattern]
        if not names:
            continue
        shown = names[:MAX_LISTED]
        lines.extend(shown)
        if len(names) > MAX_LISTED:
            lines.append(f"... and {len(names) - MAX_LISTED} more like {pattern}")
        lines.append(f"    {description}")
        lines.append("")
    if others:
        lines.append("Other files:")
        lines.extend(f"{name}" for name in others)
        lines.append("")
    return "\n".join(lines)


def write_readme(logs: StepLogs, step_name: str) -> Path:
    write_text(logs.readme, render_readme(logs, step_name))
    return logs.readme
