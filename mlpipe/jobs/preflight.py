"""Checks made before a job starts: remote assets, compute names, environments."""

from __future__ import annotations

import importlib.metadata
import importlib.util
import os
import platform
import re
import sys
from collections.abc import Collection
from pathlib import Path

from packaging.markers import InvalidMarker, Marker
from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.version import InvalidVersion, Version

from mlpipe.diagnostics import Diagnostic, ValidationError, did_you_mean
from mlpipe.errors import MlpipeError
from mlpipe.jobs.record import JobRecord
from mlpipe.plan import (
    EnvironmentInfo,
    ExecutionPlan,
    ExternalStep,
    ParallelStep,
    RemoteAsset,
    SparkStep,
    Step,
)
from mlpipe.runtime.appendrow import append_row_target
from mlpipe.runtime.backends import BackendChoice, BackendError, BackendSpec, backend_spec

REMOTE_MESSAGE = "remote asset not available offline"

# Distribution names whose import name differs.
IMPORT_NAMES = {
    "scikit-learn": "sklearn",
    "sklearn": "sklearn",
    "pillow": "PIL",
    "opencv-python": "cv2",
    "opencv-python-headless": "cv2",
    "pyyaml": "yaml",
    "python-dateutil": "dateutil",
    "beautifulsoup4": "bs4",
    "protobuf": "google.protobuf",
    "pytorch": "torch",
    "tensorflow-gpu": "tensorflow",
    "azureml-core": "azureml.core",
    "azureml-dataset-runtime": "azureml.dataprep",
    "azureml-dataprep": "azureml.dataprep",
    "azureml-mlflow": "azureml.mlflow",
    "azureml-defaults": "azureml",
    "azure-ai-ml": "azure.ai.ml",
}
# Not packages the step imports: the interpreter, installers and conda-only tooling.
NOT_IMPORTED = frozenset({"python", "pip", "setuptools", "wheel", "conda", "nomkl", "mkl",
                          "libgcc", "ca-certificates", "openssl", "cudatoolkit"})
LOCAL_COMPUTE = "local"


class JobRefused(ValidationError):
    """The job cannot start here as it is; ``advice`` says, once, what to do about it."""

    def __init__(self, diagnostics: list[Diagnostic], advice: str = ""):
        super().__init__(diagnostics)
        self.advice = advice

    def __str__(self) -> str:
        return super().__str__() + (f"\n{self.advice}" if self.advice else "")

    def summary(self) -> str:
        return self.advice or "the job was not started"


class RemoteAssetsError(JobRefused):
    """The plan references cloud-only assets; nothing was started.

    ``advice`` says, once, how to map the references to local paths.
    """


def check_remote_assets(plan: ExecutionPlan, skipped: Collection[str] = ()) -> None:
    """Raise :class:`RemoteAssetsError` naming every cloud-only reference, in plan order (but
    those only ``skipped`` steps use)."""
    needed = [asset for asset in plan.remote_assets if _needed(plan, asset, skipped)]
    if not needed:
        return
    diagnostics = [
        Diagnostic(message=f"{REMOTE_MESSAGE}: {asset.kind} {asset.reference}",
                   key_path=asset.key_path, location=asset.location, code="remote-asset",
                   hint=asset.hint or f"map it with --set {asset.key_path}=<local path> or in "
                                     "mlpipe.toml")
        for asset in needed
    ]
    first = needed[0]
    toml_path = Path(plan.base_dir) / "mlpipe.toml"
    register = ("Register the datastore of each cloud URI (mlpipe datastore create --file "
                "datastore.yml, see docs/data.md), or map each reference" if any(
                    asset.hint and "datastore" in asset.hint for asset in needed)
                else "Map each reference")
    advice = (
        f"The job was not started: nothing above can be read offline. {register} to a local "
        f"file or folder, either on the command line (--set {first.key_path}=./local/path) "
        f"or in {toml_path}:\n"
        "    [assets]\n"
        f'    "{first.reference}" = "./local/path"'
    )
    raise RemoteAssetsError(diagnostics, advice)


# Why each step type that Azure ML alone runs cannot run here.
CLOUD_ONLY = {
    "automl": "AutoML trains its models in Azure ML only",
    "data_transfer": "a data transfer moves data between Azure stores and databases",
    "import": "an import reads a database or S3 into an Azure ML data asset",
    "spark": "Spark is not installed here (pip install pyspark runs it with local Spark)",
}


class StepsNotRunnableError(JobRefused):
    """Steps of the plan cannot run here (AutoML, data transfer, import, Spark without
    pyspark) and were not skipped; nothing was started."""


def spark_available() -> bool:
    """Whether ``pyspark`` (local Spark) can be imported here."""
    try:
        return importlib.util.find_spec("pyspark") is not None
    except (ImportError, ValueError):
        return False


def runs_here(step: Step) -> bool:
    """Whether mlpipe can run ``step`` on this machine."""
    if isinstance(step, ExternalStep):
        return False
    return not isinstance(step, SparkStep) or spark_available()


def check_runnable(plan: ExecutionPlan, skipped: Collection[str] = ()) -> None:
    """Raise :class:`StepsNotRunnableError` naming each step that cannot run here and is not
    in ``skipped``, and each skipped step whose outputs are not given as local paths that
    exist; a ``skipped`` name that is no step of the plan is a :class:`ValueError`."""
    names = [step.name for step in plan.steps]
    for name in skipped:
        if name not in names:
            hint = did_you_mean(name, names)
            raise ValueError(f"--skip-step {name}: no step of that name (steps: "
                             f"{', '.join(names)})" + (f"; {hint}" if hint else ""))
    diagnostics = []
    for step in plan.steps:
        if step.name in skipped:
            diagnostics.extend(_outputs_not_given(step))
        elif not runs_here(step):
            diagnostics.append(_not_runnable(step))
    if diagnostics:
        raise StepsNotRunnableError(diagnostics, "The job was not started: run it in Azure ML, "
                                    "or skip the steps above and give their outputs as local "
                                    "paths (--skip-step NAME --set "
                                    "jobs.NAME.outputs.OUTPUT.path=./local).")


def _not_runnable(step: Step) -> Diagnostic:
    task = f", task {step.task}" if isinstance(step, ExternalStep) and step.task else ""
    sets = " ".join(f"--set jobs.{step.name}.outputs.{name}.path=./local/{name}"
                    for name in step.outputs)
    return Diagnostic(f"step '{step.name}' (type {step.kind}{task}) cannot run here: "
                      f"{CLOUD_ONLY[step.kind]}", key_path=f"jobs.{step.name}",
                      location=step.location, code="not-runnable",
                      hint=f"run the job in Azure ML, or: --skip-step {step.name} {sets}".rstrip())


def _outputs_not_given(step: Step) -> list[Diagnostic]:
    """A skipped step's outputs must be local paths that exist (what its consumers read)."""
    out = []
    for output in step.outputs.values():
        declared = output.declared_path
        if declared is None or "://" in declared or declared.startswith("azureml:"):
            problem = "has no local path"
        elif not Path(output.path).exists():
            problem = f"is not there ({output.path} does not exist)"
        else:
            continue
        out.append(Diagnostic(f"--skip-step {step.name}: output '{output.name}' {problem}",
                              key_path=f"jobs.{step.name}.outputs.{output.name}",
                              location=output.location or step.location, code="not-runnable",
                              hint=f"give it: --set jobs.{step.name}.outputs.{output.name}."
                                   "path=./local/path"))
    return out


def _needed(plan: ExecutionPlan, asset: RemoteAsset, skipped: Collection[str]) -> bool:
    """Whether a step that runs uses ``asset`` (a step's own, or a pipeline input it binds)."""
    if not skipped:
        return True
    if asset.key_path.startswith("jobs."):
        return not any(asset.key_path.startswith(f"jobs.{name}.") for name in skipped)
    return any(item.remote == asset.reference for step in plan.steps
               if step.name not in skipped for item in step.inputs.values())


class BackendUnavailableError(MlpipeError, ValueError):
    """The backend asked for is unknown or not installed; nothing was started."""


def check_backend(backend: str | BackendSpec | BackendChoice) -> BackendSpec:
    """The table's spec of ``backend`` with the options a :class:`BackendChoice` gives bound
    to it, once it is known, its packages are installed and it takes those options; else
    :class:`BackendUnavailableError` (a "did you mean" for a typo, the missing packages and
    how to install them, the options it takes)."""
    try:
        if isinstance(backend, BackendSpec):
            spec = backend
        elif isinstance(backend, BackendChoice):
            spec = backend_spec(backend.name).configured(backend.options)
        else:
            spec = backend_spec(backend)
    except ValueError as error:
        raise BackendUnavailableError(str(error)) from None
    except BackendError as error:
        raise BackendUnavailableError(str(error)) from None
    problem = spec.unavailable()
    if problem:
        raise BackendUnavailableError(problem)
    return spec


def compute_notice(plan: ExecutionPlan, backend: str = "local") -> str | None:
    """One informational line naming the compute targets, which all run here."""
    names: list[str] = []
    for name in [plan.settings.default_compute, *(s.compute for s in plan.steps)]:
        if name and name not in names:
            names.append(name)
    if not names:
        return None
    where = "on this machine" if backend == "local" else f"on the {backend} backend"
    return f"compute {', '.join(names)}: every step runs {where}"


def _wanted(environment: EnvironmentInfo) -> list[str]:
    """The package specs an environment lists (inline, else its conda file's)."""
    wanted = list(environment.conda_dependencies)
    if not wanted and environment.conda_file:
        wanted = conda_file_packages(Path(environment.conda_file))
    return wanted


def missing_packages(environment: EnvironmentInfo) -> list[str]:
    """Packages an environment lists that this interpreter cannot import."""
    missing = []
    for spec in _wanted(environment):
        name = package_name(spec)
        if name and name not in NOT_IMPORTED and not is_installed(name) and name not in missing:
            missing.append(name)
    return missing


def outputs_found(plan: ExecutionPlan, previous: JobRecord | None) -> list[str]:
    """Declared output paths outside the job's own folder (datastore or external paths) that
    exist before the job first ran: files it did not create. Found at the job's first
    attempt and kept in its record (``outputs_found``): a later attempt finds the job's own
    outputs there."""
    if previous is not None and "outputs_found" in previous.model_fields_set:
        return list(previous.outputs_found)
    run_dir = Path(plan.run_dir)
    found = []
    for step in plan.steps:
        for output in step.outputs.values():
            path = Path(output.path)
            if output.declared_path is None or path == run_dir or run_dir in path.parents:
                continue
            if path.is_file() or path.is_symlink() or (path.is_dir() and any(path.iterdir())):
                found.append(str(path))
    return found


def overwrite_warnings(found: list[str]) -> list[str]:
    """What the console says, before the first step, of :func:`outputs_found`."""
    return [f"{path} exists and was not written by this job: "
            + ("mlpipe writes beside its files, never over them (the step's own code may "
               "change them)" if Path(path).is_dir()
               else "the step's own code may overwrite it") for path in found]


def read_only_warnings(plan: ExecutionPlan) -> list[str]:
    """What the console says, before the first step, when this machine cannot make a step's
    inputs read-only (:func:`mlpipe.runtime.read_only.support`): the steps that read data in
    place can change it."""
    steps = [step.name for step in plan.steps
             if any(data.is_data and data.path and data.source is None
                    for data in step.inputs.values())]
    if not steps:
        return []
    from mlpipe.runtime.read_only import support  # noqa: PLC0415 - a check in a child process

    why = support()
    if why is None:
        return []
    return [f"the inputs of {', '.join(steps)} are NOT read-only on this machine ({why}): "
            "a step can change, move or delete their files, ro_mount and download alike; "
            "run as root or where user namespaces are allowed to protect them"]


class OutputsInTheWayError(MlpipeError):
    """mlpipe itself would write over a file the job did not write, or through a link
    planted in the job's folder; nothing was started."""


def check_overwrites(plan: ExecutionPlan, previous: JobRecord | None) -> None:
    """Refuse, before anything runs, a job whose own writes would replace what is not its
    own: an append_row file (``parallel_run_step.txt``, or a ``uri_file`` output) in a
    declared output place that exists before the job's first attempt (a later attempt
    finds the job's own there)."""
    if previous is not None:
        return
    run_dir = Path(plan.run_dir)
    for step in plan.steps:
        if not isinstance(step, ParallelStep) or step.append_row_to is None \
                or step.append_row_to not in step.outputs:
            continue
        output = step.outputs[step.append_row_to]
        target = append_row_target(output.path, output.is_file, step.prs.append_row_file_name)
        if output.declared_path is None or run_dir in target.parents:
            continue
        if target.exists() or target.is_symlink():
            raise OutputsInTheWayError(
                f"step {step.name} writes its append_row file to {target}, which exists and "
                "was not written by this job; mlpipe never writes over a file it did not "
                f"write: move it away, or give output '{output.name}' a path of its own; "
                "the job was not started")


def check_job_folder(plan: ExecutionPlan) -> None:
    """Refuse a job whose folder holds a link mlpipe did not make (one planted after a
    kill, leading outside): at the top of the job's folder, of a step's folder, or in a
    step's ``logs/``; mlpipe never writes through it. (Output folders are the output rule's,
    :func:`mlpipe.compiler.outputs.place_problem`.)"""
    run_dir = Path(plan.run_dir)
    folders = [run_dir, *(Path(step.step_dir) for step in plan.steps)]
    for folder in folders:
        for entry in _entries(folder):
            if entry.is_symlink():
                _planted(plan, Path(entry.path))
        if folder is not run_dir:
            for root, dirs, files in os.walk(folder / "logs"):
                for name in dirs + files:
                    if (Path(root) / name).is_symlink():
                        _planted(plan, Path(root) / name)


def _entries(folder: Path) -> list[os.DirEntry[str]]:
    try:
        with os.scandir(folder) as entries:
            return list(entries)
    except (FileNotFoundError, NotADirectoryError):
        return []


def _planted(plan: ExecutionPlan, link: Path) -> None:
    raise OutputsInTheWayError(
        f"job {Path(plan.run_dir).name}: {link} is a link to {os.path.realpath(link)}, which "
        "mlpipe did not make; mlpipe never writes through a link in a job's folder: remove "
        "it and run the job again; the job was not started")


def version_mismatches(environment: EnvironmentInfo) -> list[str]:
    """The version pins of an environment (pip's ``==``/``~=``/``<``..., conda's ``=1.2``,
    ``python=3.7``) that this interpreter or its installed packages do not meet, each as
    ``"scikit-learn~=0.20.0 (here 1.5.2)"``; packages that are not installed are
    :func:`missing_packages`' and not repeated here."""
    out = []
    for spec in _wanted(environment):
        name = package_name(spec)
        if not name or (name in NOT_IMPORTED and name != "python"):
            continue
        pins = version_pins(spec)
        here = platform.python_version() if name == "python" else installed_version(name)
        if pins is None or here is None:
            continue
        try:
            met = pins.contains(Version(here), prereleases=True)
        except InvalidVersion:
            continue
        if not met:
            out.append(f"{spec.strip()} (here {here})")
    return out


def version_pins(spec: str) -> SpecifierSet | None:
    """The versions ``spec`` accepts (conda's ``=1.2`` is ``==1.2.*``, a bare version in
    ``name 1.2.*`` is ``==``); ``None`` when it pins none or cannot be read."""
    text, _, marker = spec.strip().split("::")[-1].partition(";")
    if marker.strip() and not _marker_holds(marker):
        return None  # pins for another Python or platform
    match = re.match(r"[A-Za-z0-9][A-Za-z0-9._-]*(\[[^\]]*\])?", text)
    rest = text[match.end():].strip() if match else ""
    if not rest:
        return None
    if rest.startswith("=") and not rest.startswith("=="):  # conda: prefix match, build dropped
        version = rest[1:].split("=")[0].strip()
        rest = f"=={version}" if version.endswith("*") else f"=={version}.*"
    elif rest[0].isdigit():
        rest = f"=={rest}"
    try:
        return SpecifierSet(rest.replace(" ", ""))
    except InvalidSpecifier:
        return None


def _marker_holds(marker: str) -> bool:
    try:
        return Marker(marker.strip()).evaluate()
    except InvalidMarker:
        return True


def installed_version(name: str) -> str | None:
    """The installed version of distribution ``name`` (``None`` when it is not installed)."""
    try:
        return importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
        return None


# ``pip install ...`` / ``python -m pip install`` / ``conda install`` / ``mamba install`` in a
# command (after a separator or at the start)
_INSTALLS = re.compile(r"(?:^|[;&|(]\s*|\n\s*)"
                       r"((?:(?:\S*/)?python3?\s+-m\s+)?(?:\S*/)?(?:pip3?|conda|mamba)"
                       r"\s+install\b[^;&|\n]*)")


def package_installs(command: str) -> list[str]:
    """The package installs a step's command runs (``pip install 'mlflow<2.19' -q``)."""
    return [match.group(1).strip() for match in _INSTALLS.finditer(command)]


def environment_warnings(plan: ExecutionPlan) -> list[str]:
    """One warning per step whose environment lists packages that are not importable, and
    one per step whose environment pins versions this Python does not have (the cloud
    builds the environment as pinned: a model pickled by one version may not load, or
    behave the same, in another)."""
    warnings = []
    for step in plan.steps:
        missing = missing_packages(step.environment)
        if missing:
            warnings.append(
                f"step {step.name}: its environment lists {', '.join(missing)}, which "
                "cannot be imported here; the step runs in this Python anyway "
                "(environments are never built locally)"
            )
        command = getattr(step, "command", None) or getattr(step, "trial_command", "") or ""
        installs = package_installs(command)
        if installs:
            warnings.append(
                f"step {step.name}: its command runs {'; '.join(installs)}, which installs "
                f"into this Python ({sys.prefix}) for every later job too; Azure ML installs "
                "into the job's own container (install the packages once yourself, or run "
                "the job in a virtual environment of its own)"
            )
        mismatched = version_mismatches(step.environment)
        if mismatched:
            warnings.append(
                f"step {step.name}: its environment pins {', '.join(mismatched)}; the step "
                "runs with this Python's versions (environments are never built locally), "
                "so it may fail or give other results than in Azure ML"
            )
    return warnings


def package_name(spec: str) -> str | None:
    """``"pandas>=1.5"``, ``"numpy=1.24"``, ``"conda-forge::pyarrow"`` -> the bare name."""
    spec = spec.strip().split("::")[-1]
    if not spec or spec.startswith(("-", "git+", "http:", "https:", "file:", ".", "/")):
        return None
    match = re.match(r"[A-Za-z0-9][A-Za-z0-9._-]*", spec)
    return match.group(0).lower() if match else None


def is_installed(name: str) -> bool:
    """True when a distribution of that name is installed or its module imports."""
    try:
        importlib.metadata.distribution(name)
        return True
    except importlib.metadata.PackageNotFoundError:
        pass
    module = IMPORT_NAMES.get(name, name.replace("-", "_"))
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        return False


def conda_file_packages(path: Path) -> list[str]:
    """The conda and pip package specs of a conda environment file ([] when unreadable)."""
    from ruamel.yaml import YAML

    from mlpipe.limits import check_file_size, check_yaml_text

    try:
        check_file_size(path)
        text = path.read_text(encoding="utf-8")
        check_yaml_text(text)
        data = YAML(typ="safe").load(text)
    except Exception:  # a broken or absent conda file is the compiler's warning, not ours
        return []
    specs: list[str] = []
    deps = data.get("dependencies", []) if isinstance(data, dict) else []
    for dep in deps or []:
        if isinstance(dep, str):
            specs.append(dep)
        elif isinstance(dep, dict):
            specs.extend(str(p) for p in dep.get("pip", []) or [] if isinstance(p, str))
    return specs
