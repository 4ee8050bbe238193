"""``az ml job download`` / ``ml_client.jobs.download``: a finished job's files copied as
azure-ai-ml lays them out.

- ``--output-name X``: the pipeline output ``X`` to ``<download_path>/named-outputs/X``;
- ``--all``: every pipeline output, and the job's logs;
- neither: the job's logs (Azure's default artifacts) to ``<download_path>/artifacts``
  (here: the job's run folder).

A job that has not ended cannot be downloaded (as in Azure).
"""

from __future__ import annotations

import shutil
from pathlib import Path

from mlpipe.errors import MlpipeError
from mlpipe.jobs.azure_view import azure_status
from mlpipe.jobs.store import JobStore
from mlpipe.runtime.faults import describe_fault

ARTIFACTS = "artifacts"
NAMED_OUTPUTS = "named-outputs"


class DownloadError(MlpipeError, LookupError):
    """A download that cannot be made: the job runs, or it has no such output."""


def copy_into(source: Path, target: Path) -> None:
    """A folder's files into ``target``, or a file into the folder ``target`` (nothing when
    ``source`` does not exist)."""
    if source.is_dir():
        shutil.copytree(source, target, dirs_exist_ok=True)
    elif source.is_file():
        target.mkdir(parents=True, exist_ok=True)
        shutil.copy2(source, target / source.name)


def download_job(store: JobStore, name: str, download_path: str | Path = ".",
                 output_name: str | None = None, all: bool = False) -> list[Path]:
    """Copy job ``name``'s files (see the module doc); returns the folders written."""
    record = store.load(name)
    if not record.ended:
        raise DownloadError(
            f"job {name!r} is {azure_status(record.status)}; download is allowed once it "
            "has ended (Completed, Failed or Canceled)")
    outputs = record.outputs
    target = Path(download_path)
    _check_target(target, record.run_dir)
    if output_name is not None and output_name not in outputs:
        steps = ", ".join(f"{step}.{out}" for step, entry in record.steps.items()
                          for out in entry.outputs)
        raise DownloadError(
            f"job {name!r} has no output {output_name!r} (pipeline outputs: "
            f"{', '.join(outputs) or 'none'}; step outputs, shown by mlpipe job show: "
            f"{steps or 'none'})")
    copies = [(Path(str(outputs[output].path)), target / NAMED_OUTPUTS / output)
              for output in ([output_name] if output_name else list(outputs) if all else [])]
    if output_name is None and record.run_dir:
        copies.append((Path(record.run_dir), target / ARTIFACTS))
    for source, folder in copies:
        try:
            copy_into(source, folder)
        except (OSError, shutil.Error) as error:
            raise DownloadError(f"cannot copy {source} to {folder}: "
                                f"{describe_fault(error)}") from None
    return [folder for _, folder in copies]


def _check_target(target: Path, run_dir: str | None) -> None:
    """A download path is a folder (made when missing), never inside the job's own folder
    (copying the folder into itself would never end)."""
    if target.exists() and not target.is_dir():
        raise DownloadError(f"--download-path {target} is a file, not a folder")
    if run_dir and target.resolve().is_relative_to(Path(run_dir).resolve()):
        raise DownloadError(f"--download-path {target} is inside the job's own folder "
                            f"{run_dir}: give a folder outside it")


__all__ = ["ARTIFACTS", "NAMED_OUTPUTS", "DownloadError", "copy_into", "download_job"]
