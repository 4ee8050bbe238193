"""Run settings, code folders and environments of a step.

Settings bound to a literal (``mini_batch_error_threshold: ${{parent.inputs.n}}``)
are resolved here and checked against the same documented ranges the schema
layer applies to values written directly (:mod:`mlpipe.schema.ranges`).
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Any

import yaml

from mlpipe.compiler.assets import AssetMap, is_remote
from mlpipe.compiler.bindings import Reference, substitute, whole_reference
from mlpipe.compiler.containment import entry_script_escape, escape_warning, unusable_path
from mlpipe.compiler.context import SAFE_LOADER, Reporter
from mlpipe.compiler.scope import Node, Source
from mlpipe.diagnostics import did_you_mean
from mlpipe.limits import InputLimitError, check_file_size, check_yaml_text
from mlpipe.plan import CodeInclude, EnvironmentInfo, PlanInput
from mlpipe.schema.ranges import SettingError, check_setting
from mlpipe.sizes import MiniBatchSize, parse_mini_batch_size

_MISSING = object()


def resolve_setting(node: Node, key: str, pipeline_inputs: dict[str, PlanInput],
                    reporter: Reporter, default: Any = None) -> Any:
    """The checked value of setting ``key`` (dotted, e.g. ``retry_settings.timeout``)."""
    src = node.lookup(*key.split("."))
    if src is None or src.value is None:
        return default
    value, origin = _bound_value(node, src, pipeline_inputs, reporter)
    if value is _MISSING:
        return default
    if origin and key == "mini_batch_size" and isinstance(value, int) \
            and not isinstance(value, bool):
        value = str(value)  # an integer input passed on as the setting's text, as Azure does
    try:
        checked = check_setting(key, value)
    except SettingError as exc:
        if origin or not reporter.has_error_at(src.doc, src.path):
            suffix = f" (from {origin})" if origin else ""
            reporter.error(src.doc, src.path, exc.message + suffix, code=exc.code, hint=exc.hint)
        return default
    return checked


def resolve_mini_batch_size(node: Node, pipeline_inputs: dict[str, PlanInput],
                            reporter: Reporter) -> MiniBatchSize | None:
    """``mini_batch_size`` read once into the plan's typed value (``None``: unset, or
    ``"0"``, azure-ai-ml's "unset")."""
    checked = resolve_setting(node, "mini_batch_size", pipeline_inputs, reporter)
    if not isinstance(checked, str) or checked.strip() == "0":
        return None
    return parse_mini_batch_size(checked)  # the schema's pattern is readable


def _bound_value(node: Node, src: Source, pipeline_inputs: dict[str, PlanInput],
                 reporter: Reporter) -> tuple[Any, str | None]:
    """A setting's value with a binding resolved to the literal it names."""
    ref = whole_reference(src.value)
    if ref is None:
        return src.value, None
    if ref.scope == "parent_input" and src.doc is node.doc:
        found = pipeline_inputs.get(ref.name)
        names = list(pipeline_inputs)
        kind = "pipeline input"
    elif ref.scope == "input":
        found = node.inputs.get(ref.name)
        names = list(node.inputs)
        kind = "input of this step"
    else:
        reporter.error(src.doc, src.path, f"{ref.text} cannot be used here; bind a literal with "
                       "${{parent.inputs.<name>}} (in a pipeline) or ${{inputs.<name>}}",
                       code="binding")
        return _MISSING, None
    if found is None:
        reporter.error(src.doc, src.path, f"{ref.text} names no {kind}", code="binding",
                       hint=did_you_mean(ref.name, names))
        return _MISSING, None
    if found.value is None:
        what = "is not set" if not found.is_set else f"is a {found.type} input, not a literal"
        reporter.error(src.doc, src.path, f"{ref.text} {what}", code="binding")
        return _MISSING, None
    return found.value, ref.text


def parent_literals(text: str, pipeline_inputs: dict[str, PlanInput], src: Source,
                    reporter: Reporter) -> str:
    """``text`` with each ``${{parent.inputs.x}}`` replaced by the literal pipeline input ``x``
    (an error when ``x`` is not a literal, and the binding is dropped)."""

    def render(ref: Reference) -> str:
        if ref.scope != "parent_input":
            return ref.text
        found = pipeline_inputs.get(ref.name)
        if found is None:
            reporter.error(src.doc, src.path, f"{ref.text} names no pipeline input (declared "
                           f"inputs: {', '.join(pipeline_inputs) or 'none'})", code="binding",
                           hint=did_you_mean(ref.name, list(pipeline_inputs)))
        elif found.value is None:
            what = "is not set" if not found.is_set else f"is a {found.type} input, not a literal"
            reporter.error(src.doc, src.path, f"{ref.text} {what}", code="binding")
        else:
            return str(found.as_argument())
        return ""  # reported once here

    return substitute(text, render) if "parent.inputs" in text else text


def code_dir(src: Source | None, assets: AssetMap, reporter: Reporter) -> tuple[str | None,
                                                                                str | None]:
    """``(absolute code path, remote reference)``; a local folder, or a single file (azure-ai-ml
    uploads a file given as ``code`` as a snapshot of that one file), must exist."""
    if src is None or not isinstance(src.value, str) or not src.value.strip():
        return None, None
    raw = src.value.strip()
    unusable = unusable_path(raw)
    if unusable:
        reporter.error(src.doc, src.path, f"code folder '{raw[:80]}' is not a usable path: "
                       f"{unusable}", code="path")
        return None, None
    folder, remote = assets.locate(raw, src.doc.base_dir)
    if folder is None:
        return None, remote
    if not folder.is_dir() and not folder.is_file():
        reporter.error(src.doc, src.path, f"code folder '{raw}' not found (looked for {folder})",
                       code="missing-path")
        return str(folder), None
    escape = None if is_remote(raw) else escape_warning(folder, src.doc.base_dir, "code folder",
                                                         raw)
    if escape:
        reporter.warn(src.doc, src.path, escape, code="path-escape")
    return str(folder), None


def check_additional_includes(src: Source | None, code: str | None,
                              reporter: Reporter) -> tuple[CodeInclude, ...]:
    """A component's local ``additional_includes`` as azure-ai-ml checks them when it builds the
    snapshot: each exists (a ``<name>.zip`` that does not may be made from the folder
    ``<name>``), is not the root folder, and does not collide with an entry of the code folder
    of the same name. Returns the ones that pass, in order, for the step's code snapshot.
    Artifact mappings (``type: artifact``) are remote and not checked."""
    if src is None or not isinstance(src.value, list):
        return ()
    found: list[CodeInclude] = []
    for index, item in enumerate(src.value):
        if not isinstance(item, str) or not item.strip():
            continue
        where = src.path + (index,)
        raw = item.strip()
        # resolved as azure-ai-ml resolves it: the entry is named after a link's target
        path = (Path(raw) if Path(raw).is_absolute() else src.doc.base_dir / raw).resolve()
        if path == Path(path.anchor):
            reporter.error(src.doc, where, f"additional include '{raw}' is the root folder: "
                           "azure-ai-ml does not take it", code="additional-include")
            continue
        zipped = path.suffix == ".zip" and not path.exists() and path.with_suffix("").is_dir()
        if not path.exists() and not zipped:
            reporter.error(src.doc, where, f"additional include '{raw}' not found (looked for "
                           f"{path})", code="missing-path",
                           hint="azure-ai-ml refuses the component: fix the path or remove it")
            continue
        if code is not None and Path(code).is_dir() and (Path(code) / path.name).exists():
            reporter.error(src.doc, where, f"additional include '{raw}' would overwrite "
                           f"'{path.name}' of the code folder {code}", code="additional-include",
                           hint="rename one of them: azure-ai-ml refuses the component")
            continue
        found.append(CodeInclude(str(path.with_suffix("")) if zipped else str(path), zipped))
    return tuple(found)


def check_entry_script(folder: str | None, src: Source | None, reporter: Reporter) -> str:
    """The entry script as written, after checking it exists in the code folder."""
    if src is None or not isinstance(src.value, str) or not src.value.strip():
        return ""
    entry = src.value.strip()
    escape = entry_script_escape(entry) or unusable_path(entry)
    if escape:
        reporter.error(src.doc, src.path, f"entry script '{entry}' must be inside the code "
                       f"folder: {escape}", code="entry-script",
                       hint="Azure uploads only the code folder: give the script's path "
                            "relative to it")
        return entry
    if Path(entry).suffix != ".py":
        reporter.error(src.doc, src.path, f"entry script '{entry}' must be a Python file (.py): "
                       "the parallel runtime imports it and calls its init() and run()",
                       code="entry-script")
        return entry
    if folder is not None and Path(folder).is_file() and entry != Path(folder).name:
        reporter.error(src.doc, src.path, f"entry script '{entry}' is not in the code: the code is "
                       f"the single file {folder}", code="missing-path",
                       hint=f"write entry_script: {Path(folder).name}")
    elif folder is not None and Path(folder).is_dir():
        target = Path(folder) / entry
        if not target.is_file():
            candidates = [p.name for p in Path(folder).glob("*.py")]
            reporter.error(src.doc, src.path,
                           f"entry script '{entry}' not found in code folder {folder}",
                           code="missing-path", hint=did_you_mean(Path(entry).name, candidates))
    return entry


def environment_info(src: Source | None, reporter: Reporter) -> EnvironmentInfo:
    """What the YAML says about an environment; a missing ``conda_file`` is a warning."""
    if src is None or src.value is None:
        return EnvironmentInfo()
    value = src.value
    if isinstance(value, str) and value.strip().startswith("file:"):
        local = value.strip()[len("file:"):]
        path = Path(local).expanduser()
        path = path if path.is_absolute() else src.doc.base_dir / path
        if not unusable_path(local) and not path.is_file():
            reporter.warn(src.doc, src.path, f"environment file '{local}' not found; it is not "
                          "needed locally (mlpipe runs steps with its own Python)",
                          code="missing-conda-file")
        return EnvironmentInfo(reference=value.strip())
    if isinstance(value, str):
        return EnvironmentInfo(reference=value.strip())
    if not isinstance(value, dict):
        return EnvironmentInfo()
    image = value.get("image") if isinstance(value.get("image"), str) else None
    _check_build_context(src, reporter)
    conda = value.get("conda_file")
    if isinstance(conda, dict):
        return EnvironmentInfo(image=image, conda_dependencies=_dependencies(conda))
    if isinstance(conda, str) and conda.strip() and unusable_path(conda):
        reporter.error(src.doc, src.path + ("conda_file",), f"conda_file '{conda[:80]}' is not "
                       f"a usable path: {unusable_path(conda)}", code="path")
    elif isinstance(conda, str) and conda.strip():
        path = Path(conda.strip()).expanduser()
        path = (path if path.is_absolute() else src.doc.base_dir / path).resolve()
        if not path.is_file():
            reporter.warn(src.doc, src.path + ("conda_file",),
                          f"conda_file '{conda}' not found; it is not needed locally (mlpipe runs "
                          "steps with its own Python)", code="missing-conda-file")
            return EnvironmentInfo(image=image, conda_file=str(path))
        return EnvironmentInfo(image=image, conda_file=str(path),
                               conda_dependencies=_conda_file(str(path)))
    return EnvironmentInfo(image=image)


def _check_build_context(src: Source, reporter: Reporter) -> None:
    """An environment's local ``build.path`` (a Docker build context) that is not there is a
    warning, as a missing ``conda_file`` is: an environment never changes a verdict (a local
    run does not build it)."""
    build = src.value.get("build")
    context = build.get("path") if isinstance(build, dict) else None
    if not isinstance(context, str) or not context.strip() or is_remote(context) \
            or unusable_path(context):
        return
    path = Path(context.strip()).expanduser()
    path = path if path.is_absolute() else src.doc.base_dir / path
    if not path.exists():
        reporter.warn(src.doc, src.path + ("build", "path"),
                      f"build context '{context}' not found (looked for {path}); it is not "
                      "needed locally (mlpipe runs steps with its own Python)",
                      code="missing-build-context")


@lru_cache(maxsize=256)
def _conda_file(path: str) -> tuple[str, ...]:
    try:
        check_file_size(path)
        text = Path(path).read_text(encoding="utf-8")
        check_yaml_text(text)
        data = yaml.load(text, Loader=SAFE_LOADER)
    except (OSError, UnicodeDecodeError, yaml.YAMLError, InputLimitError):
        return ()
    return _dependencies(data) if isinstance(data, dict) else ()


def _dependencies(conda: dict[str, Any]) -> tuple[str, ...]:
    names: list[str] = []
    for dep in conda.get("dependencies") or []:
        if isinstance(dep, str):
            names.append(dep)
        elif isinstance(dep, dict):
            names.extend(str(p) for p in dep.get("pip") or [] if isinstance(p, (str, int, float)))
    return tuple(names)


__all__ = ["check_entry_script", "code_dir", "environment_info", "resolve_mini_batch_size",
           "resolve_setting"]
