"""Build the plan's :class:`SweepStep`, :class:`SparkStep` and :class:`ExternalStep` for one
node, with the rules Azure ML applies to them beyond the shape the models check: a sweep's
search space names trial inputs and fits its sampling algorithm, a Spark step has either
``resources`` or a ``compute``, reads and writes its data in ``direct`` mode and has a
complete ``conf``."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from mlpipe.compiler.context import Reporter
from mlpipe.compiler.scope import Node, Source, StepValues, check_own_bindings
from mlpipe.diagnostics import did_you_mean
from mlpipe.frozen import freeze
from mlpipe.plan import (
    EarlyTermination,
    ExternalStep,
    SearchParam,
    SparkStep,
    SweepLimits,
    SweepObjective,
    SweepStep,
)
from mlpipe.schema.submission import REJECTS

GRID_KINDS = ("choice",)
BAYESIAN_KINDS = ("choice", "uniform", "quniform")


def build_sweep(node: Node, reporter: Reporter, values: StepValues, common: dict[str, Any],
                unset_used: Any) -> SweepStep:
    """The plan step of a ``type: sweep`` node (its trial's inputs and outputs resolved)."""
    data = node.data
    space = _search_space(node, reporter)
    sampling, seed = _sampling(data.get("sampling_algorithm"))
    policy = _policy(data.get("early_termination"))
    _check_sampling(node, reporter, sampling, space, policy)
    command = ""
    src = node.lookup("command")
    if src is not None and isinstance(src.value, str) and not node.is_opaque:
        names = list(node.inputs) + [p.name for p in space if p.name not in node.inputs]
        check_own_bindings(src.value, names, node.outputs, src, reporter, "command")
        unset_used(src.value, {p.name for p in space})
        command = src.value
    objective, limits = _mapping(data.get("objective")), _mapping(data.get("limits"))
    return SweepStep(
        **common,
        trial_command=command,
        distribution=node.distribution(),
        search_space=tuple(space),
        sampling_algorithm=sampling,
        seed=seed,
        objective=SweepObjective(
            goal="minimize" if objective.get("goal") == "minimize" else "maximize",
            primary_metric=_text(objective.get("primary_metric"), "")),
        limits=SweepLimits(max_total_trials=_int(limits.get("max_total_trials"), 1) or 1,
                           max_concurrent_trials=_int(limits.get("max_concurrent_trials")),
                           timeout=_int(limits.get("timeout")),
                           trial_timeout=_int(limits.get("trial_timeout"))),
        early_termination=policy,
    )


def _search_space(node: Node, reporter: Reporter) -> list[SearchParam]:
    declared = node.declared_inputs()
    params = []
    for name, entry in node.search_space().items():
        path = node.path + ("search_space", name)
        if declared is not None and name not in declared:
            names = list(map(str, declared))
            reporter.error(node.doc, path, f"search space entry '{name}' names no input of the "
                           f"trial (declared inputs: {', '.join(names) or 'none'})",
                           code="unknown-input", hint=did_you_mean(str(name), names))
        if isinstance(entry, dict):
            params.append(search_param(str(name), entry))
    return params


def search_param(name: str, entry: dict[str, Any]) -> SearchParam:
    """A validated ``search_space`` entry as the plan's :class:`SearchParam`."""
    kind = str(entry.get("type", "choice")).lower()
    if kind == "choice":
        return SearchParam(name, kind, values=tuple(_frozen(v) for v in entry.get("values") or ()))
    return SearchParam(name, kind, low=_num(entry.get("min_value")),
                       high=_num(entry.get("max_value")), q=_num(entry.get("q")),
                       mu=_num(entry.get("mu")), sigma=_num(entry.get("sigma")),
                       upper=_int(entry.get("upper")))


def _sampling(value: Any) -> tuple[Literal["random", "grid", "bayesian"], int | None]:
    """The (validated, lower-cased) sampling algorithm and its seed; random by default."""
    seed = _int(value.get("seed")) if isinstance(value, dict) else None
    name = value.get("type") if isinstance(value, dict) else value
    if name == "grid":
        return "grid", seed
    return ("bayesian" if name == "bayesian" else "random"), seed


def _policy(value: Any) -> EarlyTermination | None:
    if not isinstance(value, dict) or not isinstance(value.get("type"), str):
        return None
    return EarlyTermination(
        policy=value["type"].lower(),
        evaluation_interval=_int(value.get("evaluation_interval")) or 1,
        delay_evaluation=_int(value.get("delay_evaluation")) or 0,
        # a slack of 0 is no slack (azure-ai-ml's sweep node writes 0 as none, its
        # BanditPolicy() by name writes both as 0)
        slack_factor=_num(value.get("slack_factor")) or None,
        slack_amount=_num(value.get("slack_amount")) or None,
        truncation_percentage=_int(value.get("truncation_percentage")))


def _check_sampling(node: Node, reporter: Reporter, sampling: str, space: list[SearchParam],
                    policy: EarlyTermination | None) -> None:
    """What the sweep service accepts for each sampling algorithm."""
    allowed = {"grid": GRID_KINDS, "bayesian": BAYESIAN_KINDS}.get(sampling)
    for param in space:
        if allowed is not None and param.kind not in allowed:
            reporter.error(node.doc, node.path + ("search_space", param.name, "type"),
                           f"{sampling} sampling supports only {', '.join(allowed)}, got "
                           f"'{param.kind}': {REJECTS}", code="azure-sweep",
                           hint="use random sampling, or a choice of values")
    if sampling == "bayesian" and policy is not None:
        reporter.error(node.doc, node.path + ("early_termination",),
                       f"bayesian sampling does not support early termination: {REJECTS}",
                       code="azure-sweep", hint="remove early_termination or use random sampling")
    if policy is not None and policy.policy == "bandit" \
            and policy.slack_factor is not None and policy.slack_amount is not None:
        reporter.error(node.doc, node.path + ("early_termination",),
                       "a bandit policy takes slack_factor or slack_amount, not both (the sweep "
                       f"service's BanditPolicy needs exactly one): {REJECTS}",
                       code="azure-sweep",
                       hint="keep slack_factor (a ratio of the best value) or slack_amount (an "
                            "absolute distance from it)")
    for param in space:
        if param.low is not None and param.high is not None and param.low > param.high:
            reporter.error(node.doc, node.path + ("search_space", param.name),
                           f"min_value {param.low:g} is greater than max_value {param.high:g}: "
                           f"{REJECTS}", code="azure-sweep")


def build_spark(node: Node, reporter: Reporter, values: StepValues, common: dict[str, Any],
                arguments: Any) -> SparkStep:
    """The plan step of a ``type: spark`` node."""
    entry = node.lookup("entry")
    entry_value = _mapping(entry.value if entry is not None else None)
    entry_file = entry_value.get("file") if isinstance(entry_value.get("file"), str) else None
    if entry_file and entry is not None and common["code_dir"] and not node.is_opaque:
        target = Path(common["code_dir"]) / entry_file
        if Path(common["code_dir"]).is_dir() and not target.is_file():
            reporter.error(entry.doc, entry.path + ("file",),
                           f"entry file '{entry_file}' not found in code folder "
                           f"{common['code_dir']}", code="missing-path",
                           hint=did_you_mean(Path(entry_file).name,
                                             [p.name for p in Path(common["code_dir"]).glob("*")]))
    args: tuple[str, ...] = ()
    src = node.lookup("args")
    if src is not None and not node.is_opaque:
        args = tuple(arguments(src, "args"))
    conf = _spark_conf(node, reporter)
    if not node.is_component_file:
        _check_spark_compute(node, reporter)
        _check_direct_modes(node, reporter)
        _check_conf(node, reporter, conf)
    return SparkStep(
        **common,
        entry_file=entry_file,
        entry_class=(entry_value.get("class_name")
                     if isinstance(entry_value.get("class_name"), str) else None),
        py_files=_strings(node, "py_files"), jars=_strings(node, "jars"),
        files=_strings(node, "files"), archives=_strings(node, "archives"),
        conf=freeze({str(k): _conf_text(v) for k, v in conf.items()}),
        args=args,
    )


def _check_spark_compute(node: Node, reporter: Reporter) -> None:
    compute = node.data.get("compute")
    resources = node.data.get("resources")
    if compute and resources:
        reporter.error(node.doc, node.path + ("resources",),
                       "a Spark step takes either resources (serverless Spark) or a compute (an "
                       "attached Spark pool), not both", code="spark-compute")
    elif not compute and not resources:
        reporter.error(node.doc, node.path,
                       "a Spark step needs resources (serverless Spark: instance_type and "
                       "runtime_version) or a compute (an attached Spark pool)",
                       code="spark-compute")


def _check_direct_modes(node: Node, reporter: Reporter) -> None:
    """Spark reads and writes its data in ``direct`` mode only (as azure-ai-ml checks: data
    given on the step, unless the component declares ``direct``)."""
    for key in ("inputs", "outputs"):
        decls = (node.declared_inputs() if key == "inputs" else node.declared_outputs()) or {}
        for name, value in node.given(key).items():
            if not isinstance(value, dict) or "${{" in str(value.get("path", "")):
                continue
            decl = _mapping(decls.get(name))
            mode = value.get("mode") or decl.get("mode")
            if mode != "direct" and decl.get("mode") != "direct":
                what = "Input" if key == "inputs" else "Output"
                reporter.error(node.doc, node.path + (key, name),
                               f"{what} '{name}' is using '{mode}' mode, only 'direct' is "
                               "supported for Spark job", code="spark-mode",
                               hint="add mode: direct")


def _spark_conf(node: Node, reporter: Reporter) -> dict[str, Any]:
    """The step's ``conf`` over its component's."""
    conf: dict[str, Any] = {}
    comp = node.comp_doc
    for doc, path in ((comp, ("conf",)), (node.doc, node.path + ("conf",))):
        found = doc.get(*path) if doc is not None else None
        conf.update(found if isinstance(found, dict) else {})
    return conf


def _check_conf(node: Node, reporter: Reporter, conf: dict[str, Any]) -> None:
    """azure-ai-ml's rules on the driver and executor settings of a step's ``conf``."""
    if node.is_opaque:
        return
    from mlpipe.schema.spark import CONF_KEYS  # noqa: PLC0415 - loaded with a Spark step

    problem = conf_problem({key: conf.get(name) for key, name in CONF_KEYS.items()})
    if problem:
        where = node.path + ("conf",) if node.doc.has(*node.path, "conf") else node.path
        reporter.error(node.doc, where, problem, code="spark-conf")


def conf_problem(conf: dict[str, Any]) -> str | None:
    """azure-ai-ml's rule on a Spark job's driver/executor settings (by their short names)."""
    dynamic = str(conf.get("dynamic_allocation_enabled")).lower() == "true"
    needed = ["driver_cores", "driver_memory", "executor_cores", "executor_memory"]
    if not dynamic:
        needed.append("executor_instances")
    from mlpipe.schema.spark import CONF_KEYS  # noqa: PLC0415 - loaded with a Spark step

    missing = [CONF_KEYS[key] for key in needed if conf.get(key) is None]
    if missing:
        return f"{', '.join(missing)} must be set in conf"
    low, high = conf.get("dynamic_allocation_min_executors"), conf.get(
        "dynamic_allocation_max_executors")
    if not dynamic:
        if low is not None or high is not None:
            return ("spark.dynamicAllocation.minExecutors and maxExecutors must not be set when "
                    "dynamic allocation is disabled")
        return None
    if low is None or high is None:
        return ("spark.dynamicAllocation.minExecutors and spark.dynamicAllocation.maxExecutors "
                "are required when dynamic allocation is enabled")
    low_n, high_n = _num(low), _num(high)
    if low_n is None or high_n is None or not 0 < low_n <= high_n:
        return ("spark.dynamicAllocation.minExecutors must be greater than 0 and at most "
                "spark.dynamicAllocation.maxExecutors")
    count = _num(conf.get("executor_instances"))
    if count and not low_n <= count <= high_n:
        return ("spark.executor.instances must be between spark.dynamicAllocation.minExecutors "
                "and spark.dynamicAllocation.maxExecutors")
    return None


def build_external(node: Node, common: dict[str, Any]) -> ExternalStep:
    """The plan step of an ``automl``, ``data_transfer`` or ``import`` node."""
    task = node.data.get("task")
    kind: Literal["automl", "data_transfer", "import"] = (
        "automl" if node.kind == "automl" else
        "data_transfer" if node.kind == "data_transfer" else "import")
    return ExternalStep(**common, kind=kind, task=task.lower() if isinstance(task, str) else None)


def _mapping(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _frozen(value: Any) -> Any:
    """A choice value for the plan: mappings (nested search spaces) read-only, all the way."""
    if isinstance(value, dict):
        return freeze({k: _frozen(v) for k, v in value.items()})
    if isinstance(value, list):
        return tuple(_frozen(v) for v in value)
    return value


def _strings(node: Node, key: str) -> tuple[str, ...]:
    src: Source | None = node.lookup(key)
    value = src.value if src is not None else None
    return tuple(str(v) for v in value) if isinstance(value, list) else ()


def _conf_text(value: Any) -> str:
    return ("true" if value else "false") if isinstance(value, bool) else str(value)


def _num(value: Any) -> float | None:
    if isinstance(value, bool) or value is None:
        return None
    try:
        return float(value)
    except (TypeError, ValueError):
        return None


def _int(value: Any, default: int | None = None) -> int | None:
    number = _num(value)
    return int(number) if number is not None else default


def _text(value: Any, default: str) -> str:
    return value if isinstance(value, str) else default


__all__ = ["build_external", "build_spark", "build_sweep", "conf_problem", "search_param"]
