"""Resolve the inputs and outputs of the pipeline and of each step."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from mlpipe.compiler.assets import AssetMap, cloud_location, is_remote, web_url_hint
from mlpipe.compiler.bindings import Reference, references_in, substitute, whole_reference
from mlpipe.compiler.containment import escape_warning, mltable_path_warnings, unusable_path
from mlpipe.compiler.context import Doc, Reporter
from mlpipe.compiler.outputs import (
    STATE_FOLDER,
    OutputPlace,
    filled_template,
    output_path,
    place_problem,
    template_problems,
)
from mlpipe.compiler.scope import Node
from mlpipe.compiler.values import (
    INPUT_MODE_ALIASES,
    OUTPUT_MODE_ALIASES,
    RANGE_RULE,
    coerce_literal,
    default_out_of_range,
    literal_type,
    mode_of,
    remote_kind,
    resolve_data_path,
)
from mlpipe.data.cloud.uris import is_account_uri
from mlpipe.diagnostics import Location, did_you_mean
from mlpipe.io_types import DEFAULT_DATA_TYPE, EVAL_MODES, is_data_type, is_literal_type
from mlpipe.plan import CloudLocation, PlanInput, PlanOutput, RemoteAsset
from mlpipe.schema.parts import INVALID
from mlpipe.schema.submission import REJECTS
from mlpipe.schema.yamlio import KeyPath

# Keys of a step that hold data bound like inputs (an AutoML step has no ``inputs``).
DATA_FIELDS: dict[str, tuple[str, ...]] = {
    "automl": ("training_data", "validation_data", "test_data"),
}
# Keys of a step whose strings may bind pipeline inputs (a data transfer's database query).
PARENT_BINDING_FIELDS: dict[str, tuple[str, ...]] = {
    "data_transfer": ("source", "sink"),
    "import": ("source",),
}


def legacy_message(text: str) -> str:
    """azure-ai-ml's wording for a node binding written without ``parent.``."""
    new = text.replace("{{", "{{parent.", 1) if "{{" in text else text.replace("<<", "<<parent.", 1)
    return f"{text} has changed to {new}, please change to use new format."


@dataclass
class IOResolver:
    """Resolves inputs and outputs; collects the remote references it meets."""

    doc: Doc
    reporter: Reporter
    assets: AssetMap
    place: OutputPlace
    check_paths: bool = True
    pipeline_inputs: dict[str, PlanInput] = field(default_factory=dict)
    nodes: dict[str, Node] = field(default_factory=dict)
    remote: dict[str, list[RemoteAsset]] = field(default_factory=dict)  # "" = pipeline level
    # pipeline output -> (step, output)
    bound_outputs: dict[str, tuple[str, str]] = field(default_factory=dict)
    # inside a pipeline component: the outputs of the step that uses it (their paths win)
    parent_outputs: dict[str, PlanOutput] = field(default_factory=dict)
    standalone: bool = False  # a standalone job: no pipeline to bind to

    def _no_pipeline(self, path: KeyPath, text: str) -> None:
        """A ``${{parent...}}`` binding in a standalone job, which has no pipeline."""
        self.reporter.error(self.doc, path, f"{text} binds nothing: a standalone job has no "
                            "pipeline", code="binding",
                            hint="write the value here, or make the job a step of a pipeline job")

    def _names_nothing(self, path: KeyPath, text: str, what: str, label: str, wanted: str,
                       names: list[str], hint: str | None = None) -> None:
        """``${{...}} names no <what> (<label>: a, b) (did you mean ...?)``."""
        self.reporter.error(self.doc, path,
                            f"{text} names no {what} ({label}: {', '.join(names) or 'none'})",
                            code="binding", hint=did_you_mean(wanted, names) or hint)

    # -- pipeline inputs ------------------------------------------------------------------

    def resolve_pipeline_inputs(self) -> dict[str, PlanInput]:
        raw = self.doc.get("inputs")
        for name, value in raw.items() if isinstance(raw, dict) else []:
            self.pipeline_inputs[str(name)] = self._value(str(name), value, None, ("inputs", name),
                                                          "")
        return self.pipeline_inputs

    # -- step outputs ---------------------------------------------------------------------

    def resolve_outputs(self, node: Node, append_target: str | None) -> None:
        decls = node.declared_outputs()
        given = node.given("outputs")
        names = list(decls or {}) + [n for n in given if decls is None or n not in decls]
        for name in names:
            path = node.path + ("outputs", name)
            if not self._declared(node, path, name, "output", decls):
                continue
            decl = decls.get(name) if decls else None
            value = given.get(name)  # INVALID: reported by the schema layer, taken as empty
            node.outputs[name] = self._output(node, name, None if value is INVALID else value,
                                              decl, path, name == append_target)

    def _output(self, node: Node, name: str, value: Any, decl: Any, path: KeyPath,
                append: bool) -> PlanOutput:
        type_ = mode = template = bound = None
        binding = value
        if isinstance(value, dict):
            type_, mode = value.get("type"), value.get("mode")
            binding = value.get("path")
            if whole_reference(binding) is None:
                template, binding = binding, None
        if binding is not None and self.standalone:
            self._no_pipeline(path, str(binding).strip())
        elif binding is not None:
            ref = whole_reference(binding)
            if ref is not None and ref.scope == "parent_output":
                declared = self.doc.get("outputs")
                declared = declared if isinstance(declared, dict) else {}
                if ref.name not in declared:
                    self._names_nothing(path, ref.text, "pipeline output", "declared outputs",
                                        ref.name, list(map(str, declared)))
                else:
                    bound = ref.name
            elif ref is not None and ref.scope in ("input", "output"):
                self.reporter.error(self.doc, path, legacy_message(ref.text), code="legacy-binding")
            else:
                self.reporter.error(self.doc, path,
                                    "an output must be empty, a mapping with type/mode/path, "
                                    f"or ${{{{parent.outputs.<name>}}}}, got {binding!r}",
                                    code="binding")
        pipeline_out = self.doc.get("outputs", bound) if bound else None
        pipeline_out = pipeline_out if isinstance(pipeline_out, dict) else {}
        decl = decl if isinstance(decl, dict) else {}
        type_ = type_ or decl.get("type") or pipeline_out.get("type") or DEFAULT_DATA_TYPE
        mode = mode_of(mode or pipeline_out.get("mode") or decl.get("mode"), OUTPUT_MODE_ALIASES)
        template_at = path + ("path",) if isinstance(value, dict) and "path" in value else path
        if template is None and isinstance(pipeline_out.get("path"), str):
            template = pipeline_out["path"]
            template_at = ("outputs", str(bound), "path")
        if isinstance(template, str) and unusable_path(template):
            self.reporter.error(self.doc, template_at, f"output path '{template[:80]}' is not a "
                                f"usable path: {unusable_path(template)}", code="path")
            template = None
        if isinstance(template, str):
            at = path + ("path",) if isinstance(value, dict) and "path" in value else path
            for bad in template_problems(template):
                self.reporter.error(self.doc, at,
                                    f"an output path may use only ${{{{name}}}}, "
                                    f"${{{{output_name}}}} and ${{{{default_datastore}}}}, got "
                                    f"{bad}", code="binding")
        else:
            template = None
        if bound is not None:
            if bound in self.bound_outputs:
                other = self.bound_outputs[bound]
                self.reporter.error(self.doc, path,
                                    f"pipeline output '{bound}' is already bound to "
                                    f"jobs.{other[0]}.outputs.{other[1]}", code="binding")
            else:
                self.bound_outputs[bound] = (node.local, name)
        given_out = self.parent_outputs.get(bound) if bound else None
        if given_out is not None and given_out.declared_path is not None:
            return replace(given_out, name=name, type=str(type_), mode=mode,
                           location=self.doc.locate(path))
        written = output_path(self.place, node.name, name, str(type_), template, append)
        if node.name not in self.place.given_steps:  # a default place too (a planted link)
            self.check_place(name, template or "", written, template_at)
        cloud = None
        if template and node.name not in self.place.given_steps:
            # a registered datastore's output is written here, then uploaded
            filled = filled_template(self.place, node.name, name, template)
            cloud, _ = cloud_location(filled, self.assets, anonymous=False)
            if cloud is None and is_account_uri(filled):
                self.reporter.warn(self.doc, template_at, f"output '{name}' names {filled}, "
                                   f"which no datastore holds: it is written to {written} "
                                   "only (nothing is uploaded without a credential)",
                                   code="cloud-output", hint="register a datastore of its "
                                   "account and container with a credential (mlpipe "
                                   "datastore create --file datastore.yml) to upload it")
            if cloud is not None and type_ == "uri_file" and cloud.uri.endswith("/"):
                cloud = dataclasses.replace(cloud, path=f"{cloud.path}/{Path(written).name}"
                                            .lstrip("/"))
        return PlanOutput(name=name, type=str(type_), mode=mode, path=written,
                          declared_path=template, location=self.doc.locate(path), cloud=cloud)

    def check_place(self, name: str, template: str, written: str, at: KeyPath) -> None:
        """Report where output ``name`` (declared as ``template`` at ``at``) may not be
        written (:func:`~mlpipe.compiler.outputs.place_problem`)."""
        problem = place_problem(self.place, name, template, written)
        if problem is not None and problem.external and self.place.allow_external:
            self.reporter.warn(self.doc, at, problem.message, code="output-outside-runs",
                               hint=problem.hint)
        elif problem is not None:
            self.reporter.error(self.doc, at, problem.message,
                                code="output-outside-runs" if problem.external
                                else "output-place", hint=problem.hint)

    # -- step inputs ----------------------------------------------------------------------

    def dependencies(self, node: Node) -> list[tuple[str, KeyPath]]:
        """``(upstream step, key path)`` of each ``parent.jobs`` binding in the node's inputs
        (and an AutoML step's data)."""
        found: list[tuple[str, KeyPath]] = []
        sources: list[tuple[KeyPath, Any]] = [
            (("inputs", name), value) for name, value in node.given("inputs").items()]
        sources += [((key,), node.data[key]) for key in DATA_FIELDS.get(node.kind, ())
                    if key in node.data]
        for path, value in sources:
            text = value.get("path") if isinstance(value, dict) else value
            for ref in references_in(text):
                if ref.scope == "step_output" and ref.step is not None:
                    found.append((ref.step, node.path + path))
        return found

    def resolve_inputs(self, node: Node) -> None:
        decls = node.declared_inputs()
        given = node.given("inputs")
        for key in DATA_FIELDS.get(node.kind, ()):
            value = node.data.get(key)
            if value is not None:
                data = ({"type": "mltable", "path": value}
                        if isinstance(value, str) and whole_reference(value) is None else value)
                node.inputs[key] = self._value(key, data, None, node.path + (key,), node.name)
        for key in PARENT_BINDING_FIELDS.get(node.kind, ()):
            self._parent_literals(node.data.get(key), node.path + (key,))
        for name, value in given.items():
            path = node.path + ("inputs", name)
            if not self._declared(node, path, str(name), "input", decls):
                continue
            decl = decls.get(name) if decls else None
            node.inputs[str(name)] = self._value(str(name), value, decl, path, node.name)
        for name, decl in (decls or {}).items():
            if name not in given:
                node.inputs[str(name)] = self._default(node, str(name), decl)
        for name, value in given.items():
            item = node.inputs.get(str(name))
            path = node.path + ("inputs", name)
            if isinstance(value, dict) and value.get("mode") and item is not None \
                    and item.mode in EVAL_MODES and item.type != "mltable" \
                    and not self.reporter.has_error_at(self.doc, path):
                self.reporter.error(self.doc, path, f"mode '{item.mode}' applies only to mltable "
                                    f"inputs, not {item.type}: {REJECTS}", code="azure-eval-mode",
                                    hint="use ro_mount or download, or make the input an mltable")

    def _default(self, node: Node, name: str, decl: Any) -> PlanInput:
        decl = decl if isinstance(decl, dict) else {}
        comp = node.comp_doc
        assert comp is not None
        type_ = str(decl.get("type") or "string")
        optional = decl.get("optional") is True
        if decl.get("default") is INVALID:  # reported by the schema layer
            return PlanInput(name, type_, optional=optional, location=comp.locate(("inputs", name)))
        if decl.get("default") is not None:
            if is_data_type(type_) and isinstance(decl["default"], str):
                return self._data(name, type_, decl.get("mode"), decl["default"], comp,
                                  ("inputs", name, "default"), node.name, optional)
            value, problem = coerce_literal(decl["default"], decl, bounds=False)
            if problem:
                self.reporter.error(comp, ("inputs", name, "default"), problem, code="type")
            elif (outside := default_out_of_range(decl, value)) is not None:
                self.reporter.error(comp, ("inputs", name, "default"),
                                    f"{outside}: step '{node.name}' leaves '{name}' unset, so it "
                                    f"would run with it, and {RANGE_RULE}", code="default-range",
                                    hint=f"set jobs.{node.name}.inputs.{name}, or fix the default")
            return PlanInput(name, type_, value=value, optional=optional,
                             location=comp.locate(("inputs", name)))
        if not optional and not node.is_opaque and name not in node.search_space():
            self.reporter.error(self.doc, node.path + ("inputs",),
                                f"required input '{name}' of component "
                                f"'{comp.get('name') or comp.file.name}' "
                                "is not provided", code="required")
        return PlanInput(name, type_, mode=mode_of(decl.get("mode"), INPUT_MODE_ALIASES),
                         optional=optional, location=comp.locate(("inputs", name)))

    def _declared(self, node: Node, path: KeyPath, name: str, kind: str,
                  decls: dict[str, Any] | None) -> bool:
        """Whether the step sets ``name``. One its component does not declare is dropped with a
        warning, as azure-ai-ml drops it when the job is submitted (the cloud step runs
        without it)."""
        if decls is None or name in decls:
            return True
        declared = list(map(str, decls))
        comp = node.comp_doc
        label = (comp.get("name") if comp is not None else None) or (node.component.reference
                                                                     if node.component else "")
        self.reporter.warn(self.doc, path,
                           f"component '{label}' has no {kind} '{name}' (declared {kind}s: "
                           f"{', '.join(declared) or 'none'}): azure-ai-ml drops it when the job "
                           "is submitted, so the step runs without it", code="unknown-" + kind,
                           hint=did_you_mean(name, declared))
        return False

    def _value(self, name: str, value: Any, decl: Any, path: KeyPath, step: str) -> PlanInput:
        """One input value: a literal, a data mapping, or a binding."""
        decl = decl if isinstance(decl, dict) else None
        decl_type = decl.get("type") if decl else None
        optional = bool(decl and decl.get("optional") is True)
        loc = self.doc.locate(path)
        if value is INVALID:  # reported by the schema layer
            return _unresolved(name, decl_type, optional, loc)
        if isinstance(value, dict):
            type_ = value.get("type") or decl_type
            mode = value.get("mode") or (decl.get("mode") if decl else None)
            raw = value.get("path")
            if whole_reference(raw) is not None:
                return self._bound(name, whole_reference(raw), type_, mode, decl, path + ("path",),
                                   step)
            if isinstance(raw, str) and step and references_in(raw):
                raw = self._data_path(raw, path + ("path",))
            if isinstance(raw, str):
                return self._data(name, str(type_ or DEFAULT_DATA_TYPE), mode, raw, self.doc,
                                  path + ("path",), step, optional)
            for key in ("value", "default"):
                if key in value and value[key] is not None:
                    return self._literal(name, value[key], decl
                                         or ({"type": type_} if type_ else None), path + (key,),
                                         str(type_ or literal_type(value[key])))
            return PlanInput(name, str(type_ or DEFAULT_DATA_TYPE),
                             mode=mode_of(mode, INPUT_MODE_ALIASES), optional=optional,
                             location=loc)
        ref = whole_reference(value)
        if ref is not None and not step:
            self.reporter.error(self.doc, path, "a pipeline input is a value or a path, not a "
                                f"binding ({ref.text})", code="binding")
            return PlanInput(name, "string", location=loc)
        if ref is not None:
            mode = decl.get("mode") if decl else None
            return self._bound(name, ref, decl_type, mode, decl, path, step)
        if value is None:
            return PlanInput(name, str(decl_type or "string"), optional=optional, location=loc)
        if isinstance(value, str) and references_in(value) and step and is_data_type(decl_type):
            # azure-ai-ml submits it as a literal the service reads as the data input's path:
            # the same path as written under `path:`
            return self._data(name, str(decl_type), decl.get("mode") if decl else None,
                              self._data_path(value, path), self.doc, path, step, optional)
        if isinstance(value, str) and references_in(value):
            value = self._interpolate(value, path, step)
        return self._literal(name, value, decl, path, str(decl_type or literal_type(value)))

    def _parent_literals(self, value: Any, path: KeyPath) -> None:
        """Every binding inside ``value`` (a data transfer ``source``/``sink``) must name a
        pipeline input."""
        if isinstance(value, dict):
            for key, item in value.items():
                self._parent_literals(item, path + (key,))
        elif isinstance(value, list):
            for index, item in enumerate(value):
                self._parent_literals(item, path + (index,))
        for ref in references_in(value):
            if ref.scope != "parent_input":
                self.reporter.error(self.doc, path, f"{ref.text} cannot be used here; bind a "
                                    "pipeline input with ${{parent.inputs.<name>}}",
                                    code="binding")
            elif ref.name not in self.pipeline_inputs:
                self._names_nothing(path, ref.text, "pipeline input", "declared inputs",
                                    ref.name, list(self.pipeline_inputs))

    def _literal(self, name: str, value: Any, decl: dict[str, Any] | None, path: KeyPath,
                 type_: str, origin: str | None = None) -> PlanInput:
        if isinstance(value, (dict, list)):
            self.reporter.error(self.doc, path,
                                "an input value must be a scalar, a mapping with type/path/mode, "
                                "or a binding", code="type")
            value = None
        else:
            value, problem = coerce_literal(value, decl)
            if problem and origin and problem.startswith("must be a whole number"):
                # a bound value is not checked by azure-ai-ml: the step gets it as written
                self.reporter.warn(self.doc, path, f"{problem} (from {origin}): the step gets "
                                   "it as written", code="type")
            elif problem:
                suffix = f" (from {origin})" if origin else ""
                self.reporter.error(self.doc, path, problem + suffix, code="type")
        return PlanInput(name, type_, value=value, location=self.doc.locate(path))

    def _interpolate(self, text: str, path: KeyPath, step: str) -> str:
        """``"prefix-${{parent.inputs.x}}"`` with pipeline literals substituted."""

        def render(ref: Reference) -> str:
            if ref.expression.strip() == "parent.name":
                return self.place.job_name
            found = self.pipeline_inputs.get(ref.name) if ref.scope == "parent_input" else None
            if found is not None and found.value is not None:
                return str(found.as_argument())
            self.reporter.error(self.doc, path,
                                f"{ref.text} inside a longer string must name a literal pipeline "
                                f"input or the job's name (${{{{parent.name}}}})", code="binding")
            return ref.text

        return substitute(text, render) if step else text

    def _data_path(self, text: str, path: KeyPath) -> str:
        """A step input's data path built from bindings, as azure-ai-ml submits it:
        ``${{parent.inputs.folder}}/sample1.csv`` (the pipeline input's path or value) and
        ``${{parent.name}}`` (the pipeline job's name) are filled in."""

        def render(ref: Reference) -> str:
            if ref.expression.strip() == "parent.name":
                return self.place.job_name
            found = self.pipeline_inputs.get(ref.name) if ref.scope == "parent_input" else None
            if found is not None and (found.path or found.remote or found.value is not None):
                return str(found.path or found.remote or found.as_argument())
            if found is None and ref.scope == "parent_input":
                self._names_nothing(path, ref.text, "pipeline input", "declared inputs",
                                    ref.name, list(self.pipeline_inputs))
            else:
                self.reporter.error(self.doc, path, f"{ref.text} cannot be used in a data path: "
                                    "bind a pipeline input (${{parent.inputs.<name>}}) or the "
                                    "job's name (${{parent.name}})", code="binding")
            return ref.text

        return substitute(text, render)

    def _data(self, name: str, type_: str, mode: Any, raw: str, doc: Doc, path: KeyPath, step: str,
              optional: bool) -> PlanInput:
        loc = doc.locate(path)
        mode = mode_of(mode, INPUT_MODE_ALIASES)
        unusable = unusable_path(raw)
        if unusable:
            self.reporter.error(doc, path, f"input path '{raw[:80]}' is not a usable path: "
                                f"{unusable}", code="path")
            return PlanInput(name, type_, mode=mode, optional=optional, location=loc)
        local, remote = resolve_data_path(raw, type_, doc.base_dir, self.assets)
        if remote is not None:
            cloud, hint = cloud_location(remote, self.assets)
            if cloud is not None:
                return PlanInput(name, type_, mode=mode, path=self._cloud_path(step, name, type_,
                                                                               cloud),
                                 optional=optional, location=loc, cloud=cloud)
            self.remote.setdefault(step, []).append(
                RemoteAsset(doc.key_path(path), remote, remote_kind(type_), loc,
                            hint or web_url_hint(remote))
            )
            return PlanInput(name, type_, mode=mode, remote=remote, optional=optional, location=loc)
        if type_ == "mltable" and local is not None and not is_remote(raw) \
                and Path(local).exists():
            escapes = [escape_warning(Path(local), doc.base_dir, "mltable input", raw),
                       *mltable_path_warnings(Path(local))]
            for escape in filter(None, escapes):
                self.reporter.warn(doc, path, escape, code="path-escape")
        if self.check_paths and local is not None:
            self._check_local(Path(local), raw, type_, doc, path)
        return PlanInput(name, type_, mode=mode, path=local, optional=optional, location=loc)

    def _cloud_path(self, step: str, name: str, type_: str, cloud: CloudLocation) -> str:
        """The local folder (a ``uri_file``: the file in it, named as the blob) a step sees a
        cloud input at: ``<step>/.mlpipe/cloud/<input>`` (a pipeline input's:
        ``<run>/.mlpipe/cloud/<input>``), filled when the step starts or as it reads."""
        folder = self.place.run_dir / step if step else self.place.run_dir
        folder = folder / STATE_FOLDER / "cloud" / name
        if type_ == "uri_file" and cloud.path:
            folder = folder / cloud.path.rsplit("/", 1)[-1]
        return str(folder)

    def _check_local(self, local: Path, raw: str, type_: str, doc: Doc, path: KeyPath) -> None:
        if not local.exists():
            self.reporter.error(doc, path, f"input path '{raw}' not found (looked for {local})",
                                code="missing-path",
                                hint="use --no-path-checks if the data is not checked in")
        elif type_ == "mltable" and local.is_dir() and not (local / "MLTable").is_file():
            self.reporter.warn(doc, path,
                               f"mltable input '{raw}' has no MLTable file; its files are read as "
                               f"a uri_folder", code="mltable")

    def _bound(self, name: str, ref: Reference | None, type_: Any, mode: Any,
               decl: dict[str, Any] | None, path: KeyPath, step: str) -> PlanInput:
        assert ref is not None
        loc = self.doc.locate(path)
        optional = bool(decl and decl.get("optional") is True)
        mode = mode_of(mode, INPUT_MODE_ALIASES)
        if self.standalone and ref.scope in ("parent_input", "parent_output", "step_output"):
            self._no_pipeline(path, ref.text)
            return _unresolved(name, type_, optional, loc)
        if ref.scope == "parent_input":
            found = self.pipeline_inputs.get(ref.name)
            if found is None:
                self._names_nothing(path, ref.text, "pipeline input", "declared inputs", ref.name,
                                    list(self.pipeline_inputs))
                return _unresolved(name, type_, optional, loc)
            if found.value is not None:
                literal = self._literal(name, found.value, decl, path, str(type_ or found.type),
                                        ref.text)
                return PlanInput(name, literal.type, value=literal.value, optional=optional,
                                 location=loc)
            if decl and is_literal_type(decl.get("type")) and found.is_set:
                self.reporter.error(self.doc, path,
                                    f"input '{name}' is declared {decl.get('type')} but {ref.text} "
                                    f"is a {found.type} input", code="type")
            path_ = found.path if found.cloud is None else self._cloud_path(
                step, name, str(type_ or found.type), found.cloud)  # each step its own copy
            return PlanInput(name, str(type_ or found.type), mode=mode or found.mode,
                             path=path_, remote=found.remote, source=found.source,
                             optional=optional or found.optional, location=loc,
                             cloud=found.cloud)
        if ref.scope == "step_output":
            return self._upstream(name, ref, type_, mode, optional, path, step)
        if ref.expression.strip() == "parent.name" and not self.standalone:
            # the pipeline job's name, as the service substitutes it
            literal = self._literal(name, self.place.job_name, decl, path,
                                    str(type_ or "string"), ref.text)
            return PlanInput(name, literal.type, value=literal.value, optional=optional,
                             location=loc)
        if ref.scope in ("input", "output"):
            self.reporter.error(self.doc, path, legacy_message(ref.text), code="legacy-binding")
        elif ref.scope == "parent_output":
            self.reporter.error(self.doc, path,
                                f"a step input cannot read a pipeline output ({ref.text}); "
                                "bind the producing step's output with "
                                "${{parent.jobs.<step>.outputs.<name>}}", code="binding")
        else:
            self.reporter.error(self.doc, path, f"unknown binding {ref.text}", code="binding",
                                hint="expected ${{parent.inputs.<name>}} or "
                                     "${{parent.jobs.<step>.outputs.<name>}}")
        return _unresolved(name, type_, optional, loc)

    def _upstream(self, name: str, ref: Reference, type_: Any, mode: Any, optional: bool,
                  path: KeyPath, step: str) -> PlanInput:
        loc = self.doc.locate(path)
        producer = self.nodes.get(str(ref.step))
        if producer is None:
            self._names_nothing(path, ref.text, "step", "steps", str(ref.step), list(self.nodes))
            return _unresolved(name, type_, optional, loc)
        if producer.name == step:
            self.reporter.error(self.doc, path,
                                f"step '{step}' reads its own output '{ref.name}' ({ref.text})",
                                code="cycle")
            return _unresolved(name, type_, optional, loc)
        out = producer.outputs.get(ref.name)
        if out is None and producer.is_opaque:
            out = PlanOutput(ref.name, DEFAULT_DATA_TYPE,
                             path=output_path(self.place, producer.name, ref.name,
                                              DEFAULT_DATA_TYPE, None, False))
            producer.outputs[ref.name] = out
        if out is None:
            hint = (f"declare it under jobs.{producer.local}.outputs (an AutoML step's outputs "
                    "can be bound only when declared)" if producer.kind == "automl" else None)
            self._names_nothing(path, ref.text, f"output of step '{producer.name}'",
                                "declared outputs", ref.name, list(producer.outputs), hint)
            return _unresolved(name, type_, optional, loc)
        return PlanInput(name, str(type_ or out.type), mode=mode, path=out.path,
                         source=producer.source_of(out.name), optional=optional,
                         location=loc)


def _unresolved(name: str, type_: Any, optional: bool, loc: Location | None) -> PlanInput:
    """An input whose binding names nothing usable (the error is already reported)."""
    return PlanInput(name, str(type_ or DEFAULT_DATA_TYPE), optional=optional, location=loc)


__all__ = ["IOResolver", "legacy_message"]
