"""A job's cloud data: checked before any step starts, downloaded before a step reads it,
uploaded when a step ends.

* :func:`check_cloud_data` (a pre-run check of the front door): every cloud input and
  output of the steps that run is reachable, with working credentials, its container there
  and (an input) its blob or folder there; else :class:`CloudDataError`, one line per URI
  naming it and the fix, and nothing starts.
* :func:`stage_inputs`: a step's cloud inputs that are not streamed (``download``, MLTable,
  a step's other inputs, a command step's) are copied into the local path the step reads,
  through the runs folder's etag cache (``<runs-dir>/assets/blob_cache``).
* :func:`upload_outputs`: a completed step's outputs on a datastore are uploaded; a file
  that cannot be uploaded fails the step, naming its blob.
"""

from __future__ import annotations

from collections.abc import Callable, Collection
from pathlib import Path

from mlpipe.data.cloud import streams
from mlpipe.data.errors import DataError
from mlpipe.diagnostics import Diagnostic
from mlpipe.jobs.preflight import JobRefused
from mlpipe.plan import CloudLocation, ExecutionPlan, ParallelStep, Step
from mlpipe.runs import ASSETS_DIR
from mlpipe.wording import plural

Say = Callable[[str], None]
CACHE_DIR = Path(ASSETS_DIR) / "blob_cache"


class CloudDataError(JobRefused):
    """Cloud inputs or outputs of the job cannot be used; nothing was started."""


def _uses(step: Step) -> list[tuple[str, CloudLocation, str, object]]:
    """``(key path, location, want, where)`` of each cloud input and output of ``step``."""
    found: list[tuple[str, CloudLocation, str, object]] = []
    for item in step.inputs.values():
        if item.cloud is not None:
            want = "file" if item.type == "uri_file" else "folder"
            found.append((f"jobs.{step.name}.inputs.{item.name}", item.cloud, want,
                          item.location))
    for output in step.outputs.values():
        if output.cloud is not None:
            found.append((f"jobs.{step.name}.outputs.{output.name}", output.cloud,
                          "container", output.location))
    return found


def check_cloud_data(plan: ExecutionPlan, skipped: Collection[str] = ()) -> None:
    """Raise :class:`CloudDataError` naming each cloud URI the running steps cannot use."""
    uses = [use for step in plan.steps if step.name not in skipped for use in _uses(step)]
    if not uses:
        return
    from mlpipe.data.cloud.access import access_for  # noqa: PLC0415 - azure on demand
    from mlpipe.data.cloud.blobs import probe  # noqa: PLC0415

    diagnostics: list[Diagnostic] = []
    seen: set[str] = set()
    for key_path, location, want, where in uses:
        if location.uri in seen:
            continue
        seen.add(location.uri)
        try:
            problem = probe(location, access_for(location), want)
        except DataError as error:  # a variable mlpipe.toml names is not set
            diagnostics.append(Diagnostic(error.diagnostic.message, key_path=key_path,
                                          location=where, code="cloud-data",  # type: ignore[arg-type]
                                          hint=error.diagnostic.hint))
            continue
        if problem is not None:
            diagnostics.append(Diagnostic(f"{location.uri}: {problem.message}", key_path=key_path,
                                          location=where, code="cloud-data",  # type: ignore[arg-type]
                                          hint=problem.fix))
    if diagnostics:
        raise CloudDataError(diagnostics, "The job was not started: the cloud data above "
                                          "cannot be used.")


def cache_root(plan_run_dir: str) -> Path:
    """The runs folder's blob cache (shared by its jobs)."""
    return Path(plan_run_dir).parent / CACHE_DIR


def stage_inputs(step: Step, run_dir: str, say: Say) -> str | None:
    """Copy ``step``'s downloaded cloud inputs into their local paths; the reason it
    cannot, or ``None``."""
    from mlpipe.data.cloud.access import access_for  # noqa: PLC0415
    from mlpipe.data.cloud.blobs import describe_error  # noqa: PLC0415
    from mlpipe.data.cloud.cache import materialize  # noqa: PLC0415

    major = step.input_data if isinstance(step, ParallelStep) else None
    for item in step.inputs.values():
        if item.cloud is None or item.path is None:
            continue
        if streams(item, major=item.name == major):  # the mount point, filled as it reads
            Path(item.path if item.type != "uri_file" else Path(item.path).parent).mkdir(
                parents=True, exist_ok=True)
            continue
        label = f"step {step.name}: input {item.name}"

        def progress(done: int, size: int, finished: bool, label: str = label) -> None:
            state = "downloaded" if finished else "downloading"
            say(f"{label}: {state} {plural(done, 'blob')} ({size / 1e6:.1f} MB)")

        access = None
        try:
            access = access_for(item.cloud)
            fetched = materialize(item.cloud, access, Path(item.path), cache_root(run_dir),
                                  single_file=item.type == "uri_file", progress=progress)
        except DataError as error:
            return f"{item.cloud.uri}: {error.diagnostic.message}"
        except Exception as error:  # noqa: BLE001 - storage errors, worded without secrets
            text = describe_error(error, item.cloud, access).message if access is not None \
                else type(error).__name__
            return f"input {item.name}: cannot download {item.cloud.uri}: {text}"
        if fetched == 0:
            say(f"{label}: every blob was in the cache")
    return None


def release_inputs(step: Step) -> None:
    """Remove the local files a step's streamed inputs left (a worker keeps its last
    mini-batch's blobs until it ends)."""
    import shutil  # noqa: PLC0415

    major = step.input_data if isinstance(step, ParallelStep) else None
    for item in step.inputs.values():
        if item.path is not None and streams(item, major=item.name == major):
            target = Path(item.path) if item.type != "uri_file" else Path(item.path).parent
            shutil.rmtree(target, ignore_errors=True)


def upload_outputs(step: Step, say: Say) -> str | None:
    """Upload ``step``'s outputs that live on a datastore; the reason one failed, or
    ``None``."""
    from mlpipe.data.cloud.access import access_for  # noqa: PLC0415
    from mlpipe.data.cloud.upload import UploadError, upload_output  # noqa: PLC0415

    for output in step.outputs.values():
        if output.cloud is None:
            continue
        local = Path(output.path)
        if not local.exists():
            continue
        manifest = Path(step.state_dir) / "uploads" / f"{output.name}.jsonl"
        try:
            count = upload_output(local, output.cloud, access_for(output.cloud), manifest)
        except UploadError as error:
            return f"output {output.name}: {error} ({output.cloud.uri}); resume the job to " \
                   "upload again"
        except DataError as error:
            return f"output {output.name}: {error.diagnostic.message}"
        kept = f", {count.unchanged} already there" if count.unchanged else ""
        say(f"step {step.name}: output {output.name}: uploaded "
            f"{plural(count.uploaded, 'file')} to {output.cloud.uri}{kept}")
    return None


__all__ = ["CloudDataError", "cache_root", "check_cloud_data", "release_inputs",
           "stage_inputs", "upload_outputs"]
