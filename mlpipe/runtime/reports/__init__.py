"""What a parallel step leaves for a person to read, one module per report.

``observer`` (:class:`StepReports`, the observer that writes them all), ``job_result``
(``logs/job_result.txt``), ``job_report`` (the ``sys/job_report`` CSVs), ``overview``
(the progress overview), ``perf`` (resource usage), ``task_stream`` (the task-stream
page), ``readme`` (``logs/readme.txt``), ``driver_log`` (``master_role.txt``),
``progress_bar`` (the console bar), ``html`` (the job's ``report.html``), ``files`` (the
report paths a run result lists) and ``resource_samples`` (CPU and memory over time).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from mlpipe.exports import exports_on_first_use

if TYPE_CHECKING:
    from mlpipe.runtime.reports.observer import StepReports, parent_logs_dir

# Imported on first use: importing one module of the package must not build the others.
_EXPORTS = {
    "StepReports": "mlpipe.runtime.reports.observer",
    "parent_logs_dir": "mlpipe.runtime.reports.observer",
}

__getattr__ = exports_on_first_use(__name__, _EXPORTS)


__all__ = ["StepReports", "parent_logs_dir"]
