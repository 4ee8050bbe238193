"""Build the plan step of one node: a :class:`ParallelStep` or :class:`CommandStep` here, the
other step types in :mod:`mlpipe.compiler.cloud_steps`.

Inputs and outputs of the node are already resolved (:mod:`mlpipe.compiler.pipeline`);
here the task, the run settings, ``program_arguments`` and ``command`` are.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mlpipe.compiler.assets import AssetMap
from mlpipe.compiler.bindings import whole_reference
from mlpipe.compiler.cloud_steps import build_external, build_spark, build_sweep
from mlpipe.compiler.context import Reporter
from mlpipe.compiler.prs_args import parse_prs_arguments
from mlpipe.compiler.scope import Node, Source, StepValues, check_own_bindings
from mlpipe.compiler.settings import (
    check_additional_includes,
    check_entry_script,
    code_dir,
    environment_info,
    parent_literals,
    resolve_mini_batch_size,
    resolve_setting,
)
from mlpipe.diagnostics import did_you_mean
from mlpipe.frozen import FrozenDict, freeze
from mlpipe.plan import (
    CodeInclude,
    CommandStep,
    ParallelStep,
    PlanInput,
    PrsOptions,
    RemoteAsset,
    RetrySettings,
    Step,
)
from mlpipe.schema.submission import DROPPED_COMPONENT_KEYS, Dropped
from mlpipe.settings_file import SETTINGS_FILE, SettingsFileError, append_row_csv_options
from mlpipe.sizes import MiniBatchSize

EXTERNAL_KINDS = ("automl", "data_transfer", "import")


@dataclass
class BuildContext:
    """What every step build needs from the pipeline."""

    reporter: Reporter
    assets: AssetMap
    pipeline_inputs: dict[str, PlanInput]
    run_dir: Path
    default_compute: str | None = None
    remote: list[RemoteAsset] = field(default_factory=list)


def build_step(node: Node, ctx: BuildContext) -> Step:
    """The plan step for ``node``."""
    values = StepValues(node.inputs, node.outputs)
    common = _common(node, ctx, values)
    kind = node.kind
    if kind == "parallel":
        return _parallel(node, ctx, values, common)
    if kind == "sweep":
        return build_sweep(node, ctx.reporter, values, common,
                           lambda text, spared: _unset_used(node, values, ctx.reporter,
                                                            node.lookup("command"), text, spared))
    if kind == "spark":
        return build_spark(node, ctx.reporter, values, common,
                           lambda src, what: _split(node, values, ctx.reporter, src, what))
    if kind in EXTERNAL_KINDS:
        return build_external(node, common)
    return _command(node, ctx, values, common)


def _common(node: Node, ctx: BuildContext, values: StepValues) -> dict[str, Any]:
    compute = node.lookup("compute")
    display = node.lookup("display_name")
    code_key = ("task", "code") if node.kind == "parallel" else ("code",)
    external = node.kind in EXTERNAL_KINDS
    env_key = ("task", "environment") if node.kind == "parallel" else ("environment",)
    env_src = node.lookup(*env_key) or (node.lookup("environment") if node.kind == "parallel"
                                        else None)
    folder = None
    includes: tuple[CodeInclude, ...] = ()
    if not node.is_opaque and not external:
        code_src = node.lookup(*code_key)
        folder, remote = code_dir(code_src, ctx.assets, ctx.reporter)
        if not _dropped(node, ("additional_includes",)):
            includes = check_additional_includes(node.lookup("additional_includes"), folder,
                                                 ctx.reporter)
        if remote is not None and code_src is not None:
            ctx.remote.append(RemoteAsset(code_src.doc.key_path(code_src.path), remote, "code",
                                          code_src.doc.locate(code_src.path)))
        if folder is None and node.kind == "parallel":
            entry_src = node.lookup("task", "entry_script")
            folder = (str(entry_src.doc.base_dir) if entry_src is not None and remote is None
                      else None)
    return dict(
        name=node.name,
        step_dir=str(ctx.run_dir / node.name),
        display_name=display.value if display and isinstance(display.value, str) else None,
        depends_on=tuple(dict.fromkeys(node.deps)),
        inputs=freeze(node.inputs),
        outputs=freeze(node.outputs),
        environment_variables=freeze(_environment_variables(node, values, ctx)),
        environment=environment_info(None if node.is_opaque or external else env_src,
                                     ctx.reporter),
        code_dir=folder,
        additional_includes=includes,
        compute=compute.value
        if compute and isinstance(compute.value, str)
        else ctx.default_compute,
        location=node.doc.locate(node.path),
        stand_ins=str(ctx.assets.file.parent) if ctx.assets.file is not None else None,
    )


def _environment_variables(node: Node, values: StepValues,
                           ctx: BuildContext) -> dict[str, str]:
    """The step's own variables, with bindings substituted (they may also bind pipeline
    literals: ``${{parent.inputs.x}}``). A component's ``environment_variables`` are not
    applied, as in the cloud (:func:`_warn_dropped`)."""
    reporter = ctx.reporter
    _warn_dropped(node, reporter)
    if node.is_component_file:
        return {}
    # a standalone sweep job's are its trial's (azure-ai-ml sends them with the trial)
    path = ("trial", "environment_variables") if node.job and node.kind == "sweep" \
        else node.path + ("environment_variables",)
    mapping = node.doc.get(*path)
    out: dict[str, str] = {}
    if not isinstance(mapping, dict):
        return out
    for key, value in mapping.items():
        if value is None:
            continue
        src = Source(value, node.doc, path + (key,))
        text = ("True" if value else "False") if isinstance(value, bool) else str(value)
        text = parent_literals(text, ctx.pipeline_inputs, src, reporter)
        check_own_bindings(text, node.inputs, node.outputs, src, reporter, "environment_variables")
        out[str(key)] = values.text(text)
    return out


def _warn_dropped(node: Node, reporter: Reporter) -> None:
    """One warning for each key of the step's component (or of a component file validated on
    its own) that azure-ai-ml drops from the job it submits (``DROPPED_COMPONENT_KEYS``):
    the cloud runs the step without it, so it is not applied here either; a legacy spelling
    mlpipe still reads (``applied``) is warned where the step reads it."""
    comp = node.doc if node.is_component_file else node.comp_doc
    if comp is None:
        return
    kind = comp.part("type")
    kind = kind.lower() if isinstance(kind, str) else "command"
    for dropped in DROPPED_COMPONENT_KEYS:
        value = comp.get(*dropped.path)
        if kind not in dropped.kinds or dropped.applied or value is None or value == {}:
            continue
        names = f" ({', '.join(str(k) for k in value)})" if isinstance(value, dict) else ""
        reporter.warn(comp, dropped.path,
                      f"{'.'.join(map(str, dropped.path))}{names} of a {kind} component are not "
                      "applied: azure-ai-ml drops them (its component schema has no such key), "
                      "so the cloud runs the step without them", code="dropped-key",
                      hint=_dropped_hint(node, dropped))


def _dropped(node: Node, path: tuple[str, ...]) -> bool:
    """True when the step's component is of a kind whose ``path`` azure-ai-ml drops."""
    comp = node.doc if node.is_component_file else node.comp_doc
    kind = comp.part("type") if comp is not None else None
    kind = kind.lower() if isinstance(kind, str) else "command"
    return comp is not None and any(d.path == path and kind in d.kinds and not d.applied
                                    for d in DROPPED_COMPONENT_KEYS)


def _dropped_hint(node: Node, dropped: Dropped) -> str:
    """Where a dropped key's value belongs."""
    if dropped.path == ("additional_includes",):
        return f"put the files in the task's code folder ({dropped.instead})"
    if dropped.path == ("environment_variables",) and not node.is_component_file:
        if node.kind == "sweep":  # a sweep step has no variables of its own
            return ("a sweep step has no environment_variables: set them in the trial's "
                    "command (`NAME=value python train.py ...`)")
        return (f"set them on the step: jobs.{node.name}.environment_variables in the "
                "pipeline YAML, or node.environment_variables = {...} in code")
    return f"set them on {dropped.instead}"


def _legacy_args(src: Source, reporter: Reporter) -> None:
    """``task.args``: read here as ``program_arguments`` (the legacy spelling's meaning), but
    azure-ai-ml drops it from the task it submits, in a step and in a component alike."""
    reporter.warn(src.doc, src.path,
                  "the legacy task.args is applied here as program_arguments, but azure-ai-ml "
                  "drops it from the job it submits (its task schema has no such key), so the "
                  "cloud runs the entry script without these arguments", code="dropped-key",
                  hint="rename it to program_arguments")


def _arguments(node: Node, values: StepValues, reporter: Reporter, src: Source,
               what: str) -> str | None:
    """Check a command line's bindings, and that each input it uses outside ``$[[...]]`` is set."""
    if not isinstance(src.value, str):
        return None
    check_own_bindings(src.value, node.inputs, node.outputs, src, reporter, what)
    _unset_used(node, values, reporter, src, src.value, set(), what)
    return src.value


def _unset_used(node: Node, values: StepValues, reporter: Reporter, src: Source | None,
                text: str, spared: set[str], what: str = "command") -> None:
    """An error for each input ``text`` uses outside ``$[[...]]`` that has no value (inputs in
    ``spared``, a sweep's search space, get theirs when the step runs)."""
    if src is None:
        return
    for name in dict.fromkeys(values.unset_used(text)):
        if name in spared:
            continue
        if node.is_component_file:  # no input has a value yet: a step that sets none fails
            reporter.warn(src.doc, src.path,
                          f"optional input '{name}' is used outside $[[...]]: a step that "
                          f"leaves it unset has no value for its {what}", code="binding",
                          hint="wrap its argument in $[[...]]")
            continue
        reporter.error(src.doc, src.path,
                       f"input '{name}' has no value but {what} uses it outside $[[...]]",
                       code="binding",
                       hint=f"give '{name}' a value or wrap its argument in $[[...]]")


def _split(node: Node, values: StepValues, reporter: Reporter, src: Source,
           what: str) -> list[str]:
    """A command line checked and split like ``program_arguments`` (a Spark step's ``args``)."""
    text = _arguments(node, values, reporter, src, what)
    if not text:
        return []
    try:
        return values.arguments(text)
    except ValueError as exc:
        reporter.error(src.doc, src.path, f"cannot split {what}: {exc}", code="syntax")
        return []


def _parallel(node: Node, ctx: BuildContext, values: StepValues,
              common: dict[str, Any]) -> ParallelStep:
    rep = ctx.reporter
    task = node.lookup("task")
    program_arguments: tuple[str, ...] = ()
    prs: dict[str, Any] = {}
    entry = ""
    append_row_to = None
    append_row_csv = None
    if not node.is_opaque:
        args_src = node.lookup("task", "program_arguments")
        legacy = node.lookup("task", "args")
        if args_src is not None and legacy is not None:
            rep.warn(legacy.doc, legacy.path,
                     "both program_arguments and the legacy args are given; program_arguments is "
                     "used", code="legacy")
        if legacy is not None:
            _legacy_args(legacy, rep)
        args_src = args_src or legacy
        text = _arguments(node, values, rep, args_src, "program_arguments") if args_src else None
        if args_src is not None and text:
            try:
                program_arguments = tuple(values.arguments(text))
            except ValueError as exc:
                rep.error(args_src.doc, args_src.path, f"cannot split program_arguments: {exc}",
                          code="syntax")
            values_, problems = parse_prs_arguments(program_arguments)
            prs = values_
            for problem in problems:
                rep.report(args_src.doc, args_src.path, problem.message, code=problem.code,
                           hint=problem.hint, severity="error" if problem.severity == "error"
                           else "warning")
        entry = check_entry_script(common["code_dir"], node.lookup("task", "entry_script"), rep)
        if task is None and not entry:
            rep.error(node.doc, node.path, "a parallel step needs a task with an entry_script",
                      code="required")
        append_row_to = _append_row_to(node, rep)
        if append_row_to is not None:
            append_row_csv = _settings_file(common["code_dir"], node, rep)
    input_data = _input_data(node, rep)
    partition_keys = resolve_setting(node, "partition_keys", ctx.pipeline_inputs, rep)
    mini_batch_size = _mini_batch_size(node, ctx, partition_keys is not None)

    def pick(key: str, default: Any) -> Any:
        return resolve_setting(node, key, ctx.pipeline_inputs, rep, default)

    # the failed-items limit: the error_threshold attribute, else --error_threshold
    attr_threshold = pick("error_threshold", None)
    flag_threshold = prs.pop("error_threshold", -1)
    return ParallelStep(
        **common,
        input_data=input_data,
        mini_batch_size=mini_batch_size,
        partition_keys=tuple(partition_keys) if partition_keys is not None else None,
        instance_count=pick("resources.instance_count", 1),
        max_concurrency_per_instance=pick("max_concurrency_per_instance", None),
        retry=RetrySettings(max_retries=pick("retry_settings.max_retries",
                                             RetrySettings.max_retries),
                            timeout=pick("retry_settings.timeout", RetrySettings.timeout)),
        error_threshold=attr_threshold if attr_threshold is not None else flag_threshold,
        mini_batch_error_threshold=pick("mini_batch_error_threshold", -1),
        logging_level=pick("logging_level", "INFO"),
        entry_script=entry,
        program_arguments=program_arguments,
        append_row_to=append_row_to,
        append_row_csv=append_row_csv,
        prs=PrsOptions(**prs),
    )


def _mini_batch_size(node: Node, ctx: BuildContext, partitioned: bool) -> MiniBatchSize | None:
    """The plan's typed ``mini_batch_size``; ``None`` when ``partition_keys`` is set
    (partition_keys wins, with a warning). Whether a size in bytes fits the input (files
    or a table) is known when the step runs: ``data/sizes.py`` says so then, as Azure
    accepts such a step at submission."""
    size = resolve_mini_batch_size(node, ctx.pipeline_inputs, ctx.reporter)
    src = node.lookup("mini_batch_size")
    if size is not None and src is not None and partitioned:
        ctx.reporter.warn(src.doc, src.path,
                          "mini_batch_size is ignored because partition_keys is set (one "
                          "mini-batch per partition)", code="partition-keys")
        return None
    return size


def _settings_file(folder: str | None, node: Node,
                   rep: Reporter) -> FrozenDict[str, Any] | None:
    """append_row's ``to_csv`` options from ``parallel_run_step.settings.json`` in the code
    folder, for the plan; a broken file is an error now rather than when the step starts."""
    if folder is None or not Path(folder).is_dir():
        return None
    try:
        return append_row_csv_options(folder)
    except SettingsFileError as exc:
        src = node.lookup("task", "code") or node.lookup("task") or node.lookup("code")
        doc, path = (src.doc, src.path) if src is not None else (node.doc, node.path)
        rep.error(doc, path, str(exc), code="settings-file",
                  hint=f"fix {SETTINGS_FILE} in the code folder, or remove it")
        return None


def append_row_target(node: Node) -> str | None:
    """The output name ``task.append_row_to`` names (unchecked)."""
    src = node.lookup("task", "append_row_to")
    ref = whole_reference(src.value) if src is not None else None
    return ref.name if ref is not None and ref.scope == "output" else None


def _append_row_to(node: Node, rep: Reporter) -> str | None:
    src = node.lookup("task", "append_row_to")
    if src is None or src.value is None or rep.has_error_at(src.doc, src.path):
        return None
    ref = whole_reference(src.value)
    if ref is None or ref.scope != "output":
        rep.error(src.doc, src.path,
                  f"must be ${{{{outputs.<name>}}}} naming one of the step's outputs, got "
                  f"{src.value!r}", code="binding")
        return None
    if ref.name not in node.outputs:
        check_own_bindings(src.value, node.inputs, node.outputs, src, rep, "append_row_to")
        return None
    return ref.name


def _input_data(node: Node, rep: Reporter) -> str:
    src = node.lookup("input_data")
    if src is None or src.value is None:
        if not node.is_opaque:
            rep.error(node.doc, node.path,
                      "a parallel step needs input_data: ${{inputs.<name>}} naming its major input",
                      code="required")
        data_inputs = [name for name, item in node.inputs.items() if item.is_data]
        return data_inputs[0] if data_inputs else ""
    ref = whole_reference(src.value)
    if rep.has_error_at(src.doc, src.path):
        return ""
    if ref is None or ref.scope != "input":
        hint = None
        if ref is not None and ref.scope == "parent_input":
            hint = f"did you mean '${{{{inputs.{ref.name}}}}}'?"
        rep.error(src.doc, src.path,
                  f"must be ${{{{inputs.<name>}}}} naming one of the step's inputs, got "
                  f"{src.value!r}", code="binding", hint=hint)
        return ""
    if ref.name not in node.inputs:
        names = list(node.inputs)
        rep.error(src.doc, src.path,
                  f"{ref.text} names no input of this step (declared inputs: "
                  f"{', '.join(names) or 'none'})", code="binding",
                  hint=did_you_mean(ref.name, names))
        return ""
    item = node.inputs[ref.name]
    if item.value is not None and not item.is_data:
        rep.error(src.doc, src.path,
                  f"input_data must name a data input; '{ref.name}' is a {item.type} literal",
                  code="binding")
    return ref.name


def _command(node: Node, ctx: BuildContext, values: StepValues,
             common: dict[str, Any]) -> CommandStep:
    command = ""
    if not node.is_opaque:
        src = node.lookup("command")
        if src is None or not isinstance(src.value, str) or not src.value.strip():
            if not ctx.reporter.has_error_at(node.doc, node.path + ("command",)):
                ctx.reporter.error(node.doc, node.path, "a command step needs a command",
                                   code="required")
        else:
            text = _arguments(node, values, ctx.reporter, src, "command")
            command = values.command(text) if text else ""
    return CommandStep(**common, command=command, distribution=node.distribution())


__all__ = ["BuildContext", "append_row_target", "build_step"]
