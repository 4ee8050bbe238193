"""The execution plan: the contract between the compiler and everything that runs.

The compiler (``mlpipe.compiler``) turns a loaded pipeline into an
:class:`ExecutionPlan`; the data layer, the runtime, the CLI and the SDK only
ever read plans. Everything here is immutable, picklable and fully resolved:
no ``${{...}}`` binding is left, every path is absolute, every number is an
``int`` of the documented range, and a setting written as text (``mini_batch_size``) is
read once, by the compiler, into a typed value. Nothing in this module touches the file
system.

Run-folder layout (all paths are filled in by the compiler)::

    <run_dir>/                       one job run (<runs-dir>/<job name>)
      <step>/                        ParallelStep.step_dir / CommandStep.step_dir
        code/                        snapshot of the step's code folder (made by the runner)
        outputs/<name>/              default place of each output
        logs/                        Azure's logs tree (job_result.txt, readme.txt, sys/, user/)
        .mlpipe/                     private runtime state (the journal of finished mini-batches)
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, fields, is_dataclass
from pathlib import Path
from typing import Any, Literal

from mlpipe.diagnostics import Diagnostic, Location
from mlpipe.frozen import FrozenDict, freeze
from mlpipe.io_types import DEFAULT_DATA_TYPE, is_data_type, is_literal_type
from mlpipe.sizes import MiniBatchSize

Literal_ = str | int | float | bool


@dataclass(frozen=True)
class StepOutputRef:
    """``${{parent.jobs.<step>.outputs.<output>}}``: the output ``output`` of step ``step``."""

    step: str
    output: str


@dataclass(frozen=True)
class CloudLocation:
    """A blob or blob folder a step reads or a step's output is uploaded to, resolved by the
    compiler through a registered datastore (or an ``mlpipe.toml`` ``[datastores]`` entry),
    or (``public``) an account's container that no datastore names, read anonymously as
    Azure reads a public container.

    It names where the secret is (an environment variable, or the runs folder's credentials
    file) but never holds one: plans are printed and recorded. ``path`` is the blob name
    (a file) or prefix (a folder) inside ``container``; ``""`` is the whole container.
    """

    uri: str  # as the job wrote it (output templates filled in)
    account_name: str
    account_url: str  # the blob endpoint: https://<account>.blob.core.windows.net, an emulator
    container: str
    path: str = ""
    datastore: str | None = None
    secret_env: tuple[str, str] | None = None  # (account_key | sas_token, VARIABLE)
    credentials_file: str | None = None  # holds the datastore's registered secret
    public: bool = False  # no datastore: read without a credential (checked before the job)

    @property
    def where(self) -> str:
        """``container/path`` at the account, for messages."""
        return f"{self.account_url.rstrip('/')}/{self.container}/{self.path}".rstrip("/")


@dataclass(frozen=True)
class PlanInput:
    """One resolved input of a step (or of the pipeline).

    Exactly one of these describes where the value comes from:
    ``path`` (a local file or folder, absolute; for an input bound to an upstream
    step's output it is that output's path and ``source`` names the producer),
    ``value`` (a literal), ``remote`` (an ``azureml:``/``azureml://``/``http(s)://``
    reference that cannot be read offline: the runner refuses the job before it
    starts), or none of them for an optional input left unset.
    """

    name: str
    type: str
    mode: str | None = None
    path: str | None = None
    value: Literal_ | None = None
    source: StepOutputRef | None = None
    remote: str | None = None
    optional: bool = False
    location: Location | None = None
    # read from cloud storage: ``path`` is then the local folder (or file) the step sees,
    # filled before the step starts (download) or a mini-batch at a time (ro_mount)
    cloud: CloudLocation | None = None

    @property
    def is_data(self) -> bool:
        return is_data_type(self.type)

    @property
    def is_set(self) -> bool:
        return self.path is not None or self.value is not None or self.remote is not None

    @property
    def reads_upstream_value(self) -> bool:
        """A literal input bound to an upstream step's primitive output (an mldesigner
        function's return value): its value is that output's text, known only once the
        upstream step has run (:func:`primitive_output_file`)."""
        return is_literal_type(self.type) and self.source is not None and self.path is not None

    def as_argument(self) -> str | None:
        """The text ``${{inputs.<name>}}`` stands for: the local path or the literal's text."""
        if self.path is not None:
            return self.path
        if self.value is None:
            return None
        return str(self.value)  # a boolean reads True / False


STREAMED_TYPES = frozenset({"uri_folder", "uri_file", "path"})
STREAMED_MODES = frozenset({None, "ro_mount", "mount"})


def streams(item: PlanInput, *, major: bool) -> bool:
    """Whether a cloud input is read a mini-batch at a time on the workers (the major
    input of a parallel step, a ``uri_folder``/``uri_file`` in ``ro_mount``, Azure's
    default mode) rather than downloaded before its step starts (``download``, an MLTable,
    a step's other inputs, a command step's)."""
    return item.cloud is not None and major and item.type in STREAMED_TYPES \
        and item.mode in STREAMED_MODES


def primitive_output_file(path: str | Path) -> Path:
    """The file holding a primitive output's value: the output's path, or ``output`` inside
    it when it is a folder (where mldesigner writes a function's return value)."""
    found = Path(path)
    return found / "output" if found.is_dir() else found


@dataclass(frozen=True)
class PlanOutput:
    """One output of a step with its concrete local ``path``.

    For ``uri_file`` outputs ``path`` is the file itself (its folder exists before
    the step starts); for every other type it is a folder.
    """

    name: str
    type: str = DEFAULT_DATA_TYPE
    mode: str | None = None
    path: str = ""
    declared_path: str | None = None
    location: Location | None = None
    # uploaded there from ``path`` when the step ends
    cloud: CloudLocation | None = None

    @property
    def is_file(self) -> bool:
        return self.type == "uri_file"

    @property
    def folder(self) -> str:
        """The folder that must exist before the step starts."""
        return str(Path(self.path).parent) if self.is_file else self.path


@dataclass(frozen=True)
class RetrySettings:
    """``retry_settings``: attempts after the first, and the per-run() timeout in seconds."""

    max_retries: int = 2
    timeout: int = 60


@dataclass(frozen=True)
class PrsOptions:
    """The ParallelRunStep program arguments mlpipe itself understands (seed 001's table).

    The compiler reads them out of ``program_arguments`` (the arguments stay in
    ``ParallelStep.program_arguments`` too: the entry script still sees them).
    ``--error_threshold`` is not here: the compiler folds it into
    ``ParallelStep.error_threshold``.
    """

    allowed_failed_percent: int = 100
    task_overhead_timeout: int = 600
    progress_update_timeout: int | None = None
    first_task_creation_timeout: int = 600
    resource_monitor_interval: int = 600
    copy_logs_to_parent: bool = False
    profiling_module: str | None = None
    append_row_dataframe_header: bool = False
    append_row_file_name: str | None = None  # the append_row file in a uri_folder output


@dataclass(frozen=True)
class CodeInclude:
    """One of a component's local ``additional_includes``: a file or folder put at the top of
    the step's code snapshot under its own name, or (``zipped``) a folder put there zipped as
    ``<name>.zip``, as azure-ai-ml builds the code it uploads."""

    path: str  # absolute, links resolved (azure-ai-ml names the entry after the target)
    zipped: bool = False

    @property
    def name(self) -> str:
        return Path(self.path).name + (".zip" if self.zipped else "")


@dataclass(frozen=True)
class EnvironmentInfo:
    """What the YAML says about the step's environment. It is never built locally."""

    reference: str | None = None  # azureml:name:version or azureml://registries/...
    image: str | None = None
    conda_file: str | None = None  # absolute path, may not exist
    conda_dependencies: tuple[str, ...] = ()  # pip/conda package names, when known


@dataclass(frozen=True)
class _StepBase:
    name: str
    step_dir: str
    display_name: str | None = None
    depends_on: tuple[str, ...] = ()
    inputs: FrozenDict[str, PlanInput] = field(default_factory=freeze)
    outputs: FrozenDict[str, PlanOutput] = field(default_factory=freeze)
    environment_variables: FrozenDict[str, str] = field(default_factory=freeze)
    environment: EnvironmentInfo = field(default_factory=EnvironmentInfo)
    code_dir: str | None = None  # absolute path of the code folder as written (not the snapshot)
    additional_includes: tuple[CodeInclude, ...] = ()  # added to the snapshot
    compute: str | None = None
    location: Location | None = None
    # the folder of the job's mlpipe.toml: downloads in the step's processes read its URL
    # stand-ins (None: there is none)
    stand_ins: str | None = None

    @property
    def logs_dir(self) -> str:
        return str(Path(self.step_dir) / "logs")

    @property
    def state_dir(self) -> str:
        return str(Path(self.step_dir) / ".mlpipe")

    @property
    def snapshot_dir(self) -> str:
        return str(Path(self.step_dir) / "code")


@dataclass(frozen=True)
class ParallelStep(_StepBase):
    """A ``type: parallel`` step, fully resolved."""

    kind: Literal["parallel"] = "parallel"
    input_data: str = ""  # name of the major input in ``inputs``
    # read once by the compiler ("5": 5 files or 5 bytes, "10kb": 10240 bytes; .text as
    # written); None: the data layer's default, and always None when partition_keys is set
    # (the compiler decides that partition_keys wins)
    mini_batch_size: MiniBatchSize | None = None
    partition_keys: tuple[str, ...] | None = None
    instance_count: int = 1
    max_concurrency_per_instance: int | None = None  # None: number of cores
    retry: RetrySettings = field(default_factory=RetrySettings)
    error_threshold: int = -1  # failed items; the attribute, else --error_threshold (compiler)
    mini_batch_error_threshold: int = -1
    logging_level: str = "INFO"
    entry_script: str = ""  # relative to code_dir
    program_arguments: tuple[str, ...] = ()  # shell-split, every binding substituted
    append_row_to: str | None = None  # name of an output in ``outputs``
    # append_row's pandas.DataFrame.to_csv options from the code folder's
    # parallel_run_step.settings.json, read by the compiler (None: no file / no options)
    append_row_csv: FrozenDict[str, Any] | None = None
    prs: PrsOptions = field(default_factory=PrsOptions)

    @property
    def major_input(self) -> PlanInput:
        return self.inputs[self.input_data]


@dataclass(frozen=True)
class CommandStep(_StepBase):
    """A ``type: command`` step; ``command`` has every binding substituted (shell-quoted)."""

    kind: Literal["command"] = "command"
    command: str = ""
    # ``distribution.type`` (pytorch, tensorflow, mpi, ray): run as rank 0 of a world of one,
    # with the launcher's environment variables (``jobs/distribution.py``)
    distribution: str | None = None


@dataclass(frozen=True)
class SearchParam:
    """One entry of a sweep's search space: a trial input and how its values are drawn.

    ``kind`` is choice, uniform, loguniform, quniform, qloguniform, normal, lognormal,
    qnormal, qlognormal or randint; the fields that kind uses are set (``low``/``high`` are
    ``min_value``/``max_value``). A choice value may be a mapping of nested entries.
    """

    name: str
    kind: str
    values: tuple[Any, ...] = ()
    low: float | None = None
    high: float | None = None
    q: float | None = None
    mu: float | None = None
    sigma: float | None = None
    upper: int | None = None


@dataclass(frozen=True)
class SweepObjective:
    goal: Literal["minimize", "maximize"] = "maximize"
    primary_metric: str = ""


@dataclass(frozen=True)
class SweepLimits:
    max_total_trials: int = 1
    max_concurrent_trials: int | None = None  # None: max_total_trials
    timeout: int | None = None  # seconds, the whole sweep
    trial_timeout: int | None = None  # seconds, one trial


@dataclass(frozen=True)
class EarlyTermination:
    """An early-termination policy: bandit, median_stopping or truncation_selection."""

    policy: str
    evaluation_interval: int = 1
    delay_evaluation: int = 0
    slack_factor: float | None = None
    slack_amount: float | None = None
    truncation_percentage: int | None = None


@dataclass(frozen=True)
class SweepStep(_StepBase):
    """A ``type: sweep`` step: trials of a command component over a search space.

    ``trial_command`` is the trial's command with its bindings (the runner substitutes
    each trial's values); ``inputs`` are the trial's fixed inputs, ``outputs`` the step's
    (the best trial's outputs are copied there).
    """

    kind: Literal["sweep"] = "sweep"
    trial_command: str = ""
    # the trial's ``distribution.type``: each trial runs as a distributed command step does
    distribution: str | None = None
    search_space: tuple[SearchParam, ...] = ()
    sampling_algorithm: Literal["random", "grid", "bayesian"] = "random"
    seed: int | None = None
    objective: SweepObjective = field(default_factory=SweepObjective)
    limits: SweepLimits = field(default_factory=SweepLimits)
    early_termination: EarlyTermination | None = None


@dataclass(frozen=True)
class SparkStep(_StepBase):
    """A ``type: spark`` step; ``args`` are split with every binding substituted. It runs
    where ``pyspark`` is installed (``spark-submit --master local[*]``)."""

    kind: Literal["spark"] = "spark"
    entry_file: str | None = None  # relative to code_dir
    entry_class: str | None = None
    py_files: tuple[str, ...] = ()
    jars: tuple[str, ...] = ()
    files: tuple[str, ...] = ()
    archives: tuple[str, ...] = ()
    conf: FrozenDict[str, str] = field(default_factory=freeze)
    args: tuple[str, ...] = ()


@dataclass(frozen=True)
class ExternalStep(_StepBase):
    """A step only Azure ML can run (``automl``, ``data_transfer``, ``import``): checked,
    never run here; a job with one stops before it starts unless the step is skipped with
    its outputs given (``--skip-step``)."""

    kind: Literal["automl", "data_transfer", "import"] = "automl"
    task: str | None = None  # the AutoML or data transfer task


Step = ParallelStep | CommandStep | SweepStep | SparkStep | ExternalStep


@dataclass(frozen=True)
class PipelineOutput:
    """A pipeline-level output and the step output it is bound to."""

    name: str
    path: str
    type: str = DEFAULT_DATA_TYPE
    source: StepOutputRef | None = None


@dataclass(frozen=True)
class RemoteAsset:
    """Something the YAML references that exists only in the cloud."""

    key_path: str
    reference: str
    kind: Literal["component", "data", "model", "code", "flow", "environment"] = "data"
    location: Location | None = None
    hint: str | None = None  # how to make it readable (default: map it in mlpipe.toml)


@dataclass(frozen=True)
class JobSettings:
    default_compute: str | None = None
    default_datastore: str | None = None
    continue_on_step_failure: bool = False
    force_rerun: bool = False


@dataclass(frozen=True)
class ExecutionPlan:
    """A validated pipeline, ready to run. Steps are in dependency order."""

    source: str  # absolute path of the pipeline YAML
    run_dir: str  # <runs-dir>/<job name>
    steps: tuple[Step, ...] = ()
    name: str | None = None
    display_name: str | None = None
    description: str | None = None
    experiment_name: str | None = None
    tags: FrozenDict[str, str] = field(default_factory=freeze)
    inputs: FrozenDict[str, PlanInput] = field(default_factory=freeze)
    outputs: FrozenDict[str, PipelineOutput] = field(default_factory=freeze)
    settings: JobSettings = field(default_factory=JobSettings)
    remote_assets: tuple[RemoteAsset, ...] = ()
    warnings: tuple[Diagnostic, ...] = ()
    external_outputs: bool = False  # declared output paths may lie outside the runs folder
    kind: str = "pipeline"  # or a standalone job's type (command, sweep): its one step

    @property
    def base_dir(self) -> str:
        return str(Path(self.source).parent)

    def step(self, name: str) -> Step:
        for step in self.steps:
            if step.name == name:
                return step
        raise KeyError(name)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready view (``mlpipe job validate --show-plan``)."""
        view: dict[str, Any] = _jsonable(self)
        return view


def _jsonable(value: Any) -> Any:
    if isinstance(value, MiniBatchSize):
        return value.text  # shown as written
    if is_dataclass(value) and not isinstance(value, type):
        out = {f.name: _jsonable(getattr(value, f.name)) for f in fields(value)}
        for prop in ("logs_dir",):
            if hasattr(value, prop):
                out[prop] = getattr(value, prop)
        return out
    if isinstance(value, Mapping):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    return value


__all__ = [
    "STREAMED_MODES",
    "STREAMED_TYPES",
    "CloudLocation",
    "CodeInclude",
    "CommandStep",
    "EarlyTermination",
    "ExternalStep",
    "SearchParam",
    "SparkStep",
    "SweepLimits",
    "SweepObjective",
    "SweepStep",
    "EnvironmentInfo",
    "ExecutionPlan",
    "JobSettings",
    "ParallelStep",
    "PipelineOutput",
    "PlanInput",
    "PlanOutput",
    "PrsOptions",
    "RemoteAsset",
    "RetrySettings",
    "Step",
    "StepOutputRef",
    "primitive_output_file",
    "streams",
]
