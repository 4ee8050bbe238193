"""Pipeline nodes: parallel steps (inline or from a component file) and command steps.

A node holds what its YAML mapping under ``jobs.<name>`` holds. Settings may be
changed after the node is made (``node.mini_batch_size = "20"``,
``node.resources.instance_count = 3``); each change remembers its call site.

Every setting of a node has one owner, :meth:`Node._setting`, which merges in
azure-ai-ml's order: the component's value (a component file's, or the keywords
``parallel_run_function``/``command`` give their inline component) is the default; the
node's own attribute, set by a build-time keyword, copied from the component when the
node is made (as azure-ai-ml's ``Parallel`` copies ``resources``, ``retry_settings``,
``task``, ...) or set later, wins whenever it is set. ``node.task = None`` therefore
runs the component's task again, and ``resources=`` given at build time is just the
first value of ``node.resources``.
"""

from __future__ import annotations

import copy
import inspect
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from mlpipe.compiler.values import literal_type
from mlpipe.diagnostics import Diagnostic, ValidationError, did_you_mean
from mlpipe.sdk.bindings import NodeInput, NodeOutput, Ports, value_to_yaml
from mlpipe.sdk.building import current_builder
from mlpipe.sdk.callsite import call_site
from mlpipe.sdk.entities import (
    CommandJobLimits,
    JobResourceConfiguration,
    QueueSettings,
    RetrySettings,
    RunFunction,
    azureml_reference,
    environment_reference,
    environment_value,
)
from mlpipe.sdk.identities import distribution_of
from mlpipe.sdk.io import Input, Output, PipelineInput
from mlpipe.sdk.paths import is_local, relative_to
from mlpipe.sdk.resources import ResourceConfiguration
from mlpipe.sdk.running import Job
from mlpipe.sdk.sweep import (
    BanditPolicy,
    Objective,
    SweepDistribution,
    SweepJobLimits,
    distribution,
    node_policy,
    policy_value,
    sampling_value,
    yaml_value,
)
from mlpipe.sdk.tracking import Emitter, KeyPath, Record, Tracked, from_file
from mlpipe.sdk.yamlio import dump_text

ANONYMOUS = "azureml_anonymous"  # azure-ai-ml's name of a component made without one


def _task(value: Any) -> Any:
    return RunFunction.from_dict(value) if isinstance(value, Mapping) else value


# Values assigned to these attributes are converted as azure-ai-ml's setters convert them.
def _resources(value: Any) -> Any:
    """``node.resources = ResourceConfiguration(instance_count=2)`` (azure-ai-ml's base class
    of ``JobResourceConfiguration``, which it accepts there) as a JobResourceConfiguration."""
    if isinstance(value, ResourceConfiguration):
        value = value._to_dict()
    return JobResourceConfiguration.coerce(value)


_COERCE: dict[str, Callable[[Any], Any]] = {
    "resources": _resources,
    "retry_settings": RetrySettings.coerce,
    "task": _task,
    "limits": CommandJobLimits.coerce,
    "queue_settings": QueueSettings.coerce,
    "distribution": distribution_of,
    "environment": environment_reference,
    "compute": lambda value: azureml_reference(value, "local"),
}


def _unset(value: Any) -> bool:
    """No value of the node's own: ``None``, or a settings object with nothing set."""
    return value is None or (isinstance(value, Record) and not value.to_dict())


def _yaml(value: Any) -> Any:
    return value.to_dict() if isinstance(value, Record) else environment_value(value)


class Node(Tracked, Job, ABC):
    """A step of a pipeline (base of :class:`ParallelNode` and :class:`CommandNode`)."""

    kind = "command"

    def __init__(self, *, component: Any = None, name: str | None = None,
                 display_name: str | None = None, description: str | None = None,
                 tags: dict[str, str] | None = None, properties: dict[str, Any] | None = None,
                 experiment_name: str | None = None, compute: str | None = None,
                 environment_variables: dict[str, str] | None = None,
                 resources: Any = None, identity: Any = None,
                 is_deterministic: bool | None = None,
                 inputs: Mapping[str, Any] | None = None,
                 input_declarations: Mapping[str, Input] | None = None,
                 outputs: Mapping[str, Output | None] | None = None,
                 defaults: Mapping[str, Any] | None = None,
                 extra: Mapping[str, Any] | None = None) -> None:
        self.component = component
        self.name = name
        self.display_name = display_name
        self.description = description
        self.tags = dict(tags or {})  # azure-ai-ml's defaults: {} rather than None
        self.properties = dict(properties or {})
        self.experiment_name = experiment_name
        self.compute = compute
        self.environment_variables = environment_variables
        self.resources = JobResourceConfiguration.coerce(resources) or JobResourceConfiguration()
        self.identity = identity
        self.is_deterministic = is_deterministic
        self._defaults: dict[str, Any] = dict(defaults or {})
        self._input_decls: dict[str, Input] = dict(input_declarations or {})
        names = self._port_names("input")
        self._inputs = Ports("input", dict(inputs or {}), names, owner=self,
                             types={k: d.type for k, d in self._input_decls.items()})
        self._outputs = Ports("output", {
            key: NodeOutput(self, key, decl) for key, decl in (outputs or {}).items()
        }, owner=self)
        self._extra: dict[str, Any] = dict(extra or {})
        self._start_tracking()

    def __setattr__(self, name: str, value: Any) -> None:
        convert = _COERCE.get(name)
        super().__setattr__(name, convert(value) if convert is not None else value)

    # -- settings: one owner ----------------------------------------------------------------
    @property
    def _from_file(self) -> bool:
        """Whether the component is a file the YAML refers to (its settings stay in it)."""
        return isinstance(self.component, Component)

    def _setting(self, key: str) -> Any:
        """The value of setting ``key`` to write: the node's own when set, else the
        component's; for a component file, only a value that differs from the file's."""
        own = getattr(self, key, None)
        default = self._defaults.get(key)
        if _unset(own):
            return None if self._from_file else default
        if self._from_file and _yaml(own) == _yaml(default):
            return None
        return own

    def _naming_stem(self) -> str:
        """The name azure-ai-ml gives this node's component (names anonymous nodes)."""
        component = self.component
        if isinstance(component, Component) and component.name:
            return str(component.name)
        return str(self.__dict__.get("_template_name") or ANONYMOUS)

    # -- what azure-ai-ml's node also shows ---------------------------------------------------
    @property
    def type(self) -> str:
        """The step type (``parallel``, ``command``, ...)."""
        return self.kind

    @property
    def base_path(self) -> Path:
        """The folder a component file's relative paths start at (else the working folder)."""
        component = self.component
        return component.path.parent if isinstance(component, Component) else Path.cwd()

    # A node that is not a submitted job has no id, status, link or logs (azure-ai-ml: None).
    id = status = studio_url = creation_context = log_files = None

    def dump(self, dest: Any, **kwargs: Any) -> None:
        """Write this step's YAML mapping to a path or an open text stream."""
        _write(dest, dump_text(self.to_dict(Path.cwd())))

    # -- a job of its own (``ml_client.jobs.create_or_update(node)``): command and sweep ------
    @property
    def source(self) -> Path:
        """The file this node was made in; a standalone job's relative paths start at its
        folder (the working folder when there is none)."""
        site = self.__dict__.get("_definition_site") or self._origin
        if site is not None and site.file and Path(site.file).parent.is_dir():
            return Path(site.file)
        return Path.cwd() / "<job>"

    def _job_base(self) -> Path:
        return self.source.parent.resolve()

    # -- ports -----------------------------------------------------------------------------
    def _port_names(self, kind: str) -> list[str] | None:
        component = self.component
        if isinstance(component, Component):
            return list(component.input_names if kind == "input" else component.output_names)
        declared = self.__dict__.get("_declared_inputs")
        if kind == "input" and declared is not None:
            return list(declared)
        return None

    @property
    def inputs(self) -> Ports:
        return self._inputs

    @property
    def outputs(self) -> Ports:
        return self._outputs

    def set_resources(self, *, instance_type: str | None = None, instance_count: int | None = None,
                      locations: list[str] | None = None, properties: dict[str, Any] | None = None,
                      docker_args: str | None = None, shm_size: str | None = None,
                      **kwargs: Any) -> None:
        """Set ``resources`` like azure-ai-ml's ``node.set_resources(...)``: the given fields
        change, the others keep their value."""
        site = call_site()
        if self.resources is None:
            self.resources = JobResourceConfiguration()
        given = dict(instance_type=instance_type, instance_count=instance_count,
                     locations=locations, properties=properties, docker_args=docker_args,
                     shm_size=shm_size, **kwargs)
        for key, value in given.items():
            if value is None:
                continue
            if key in self.resources._keys:
                setattr(self.resources, key, value)
            else:
                self.resources._extra[key] = value
            self.resources._sites[key] = site

    # -- YAML --------------------------------------------------------------------------------
    def _component_value(self, base: Path) -> Any:
        component = self.component
        if isinstance(component, Component):
            return component.reference(base)
        return component

    def _inputs_yaml(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        values, modes = self._inputs._values, self._inputs._modes
        if self.component is None:
            for key, decl in self._input_decls.items():
                out[key] = inline_input(decl, values.get(key), modes.get(key))
        for key, value in values.items():
            if key not in out:
                out[key] = bound_input(value, modes.get(key))
        for key, mode in modes.items():  # a mode set on an input nothing is bound to
            if key not in out and mode is not None:
                out[key] = {"mode": mode}
        return out

    def _outputs_yaml(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for key, port in self._outputs.items():
            if not isinstance(port, NodeOutput):  # a value kept as written
                out[key] = value_to_yaml(port)
            elif port._raw is not None:
                out[key] = port._raw
            elif port._pipeline_output is not None:
                out[key] = "${{parent.outputs.%s}}" % port._pipeline_output
            else:
                settings = port.settings()
                if settings or port._declared:
                    out[key] = settings or None
        return out

    @abstractmethod
    def _settings(self, base: Path) -> dict[str, Any]:
        """The node-kind specific keys, in the order they are written (``None``: left out)."""

    def _body(self, base: Path) -> dict[str, Any]:
        body = {"inputs": self._inputs_yaml() or None, "outputs": self._outputs_yaml() or None,
                **self._settings(base)}
        return {key: plain(value) for key, value in body.items() if value is not None}

    def to_dict(self, base: Path, emitter: Emitter | None = None,
                path: KeyPath = ()) -> dict[str, Any]:
        """This node's YAML mapping; relative paths are kept relative to ``base``."""
        head = {
            "type": self.kind if self.__dict__.get("_emit_type", True) else None,
            "display_name": self.display_name,
            "description": self.description, "tags": self.tags or None,
            "properties": self.properties or None,
            "experiment_name": self.experiment_name, "compute": self.compute,
            "component": self._component_value(base),
        }
        data = {key: plain(value) for key, value in head.items() if value not in (None, {})}
        data.update(self._body(base))
        for key, value in self._extra.items():  # unknown keys never replace a known one
            data.setdefault(key, plain(value))
        if emitter is not None:
            self._mark(emitter, path, list(data))
        return data

    def _mark(self, emitter: Emitter, path: KeyPath, keys: list[str]) -> None:
        """Record where each part of this node's YAML was written in Python.

        The node call marks the node and its inputs; settings given to
        ``parallel_run_function``/``command`` point at that call; objects
        (``RetrySettings(...)``, ``RunFunction(...)``, ``Output(...)``) at their own
        construction; every attribute changed afterwards at the line that changed it.
        """
        emitter.mark(path, self._origin)
        definition = self.__dict__.get("_definition_site")
        for key in keys:
            if key not in ("inputs", "outputs"):
                emitter.mark(path + (key,), definition)
        for key, decl in self._input_decls.items():
            emitter.mark(path + ("inputs", key), decl._origin)
        for key in self._inputs._values:
            emitter.mark(path + ("inputs", key), self.__dict__.get("_call_site") or definition)
        for key, port in self._outputs.items():
            emitter.mark_object(path + ("outputs", key), port)
        for attr in ("resources", "retry_settings", "task", "limits", "queue_settings"):
            value = getattr(self, attr, None)
            if isinstance(value, Tracked):
                emitter.mark_object(path + (attr,), value)
        for attr, site in self._sites.items():
            key = {"_inputs": "inputs"}.get(attr, attr)
            emitter.mark(path + tuple(key.split(".")), site)

    # -- calling ---------------------------------------------------------------------------
    def _check_input_names(self, given: Mapping[str, Any]) -> None:
        names = self._port_names("input")
        if names is None:
            return
        problems = []
        for key in given:
            if key not in names:
                problems.append(Diagnostic(
                    message=f"unknown input {key!r}; declared inputs: {', '.join(names) or 'none'}",
                    key_path=f"inputs.{key}", location=call_site(), code="unknown-key",
                    hint=did_you_mean(key, names)))
        if problems:
            raise ValidationError(problems)

    # Attributes a called node takes from the node it was called on (deep copies), as
    # azure-ai-ml's ``Parallel.__call__`` / ``Command.__call__`` copy them; every other
    # setting comes from the component (``_defaults``).
    _CALL_COPIES: tuple[str, ...] = ()

    def _copy_for_call(self) -> Node:
        new = copy.copy(self)
        object.__setattr__(new, "_sites", dict(self._sites))
        # ``tags`` stay shared with the called node, as azure-ai-ml shares them (a tag set on
        # one node shows on every node of the same function).
        for attr in ("properties", "environment_variables", "identity", *self._CALL_COPIES):
            object.__setattr__(new, attr, copy.deepcopy(getattr(self, attr, None)))
        for attr in ("resources", "retry_settings", "task", "limits", "queue_settings"):
            value = getattr(new, attr, None)
            if isinstance(value, Tracked):
                object.__setattr__(new, attr, clone_tracked(value))
        object.__setattr__(new, "_inputs", Ports(
            "input", dict(self._inputs._values), self._port_names("input"), owner=new,
            modes=self._inputs._modes, types=self._inputs._types))
        self._outputs_to(new)
        object.__setattr__(new, "_extra", copy.deepcopy(self._extra))
        return new

    def _outputs_to(self, node: Node) -> None:
        """Give ``node`` copies of this node's output ports (their settings, its own)."""
        outputs = {}
        for key, port in self._outputs.items():
            clone = clone_tracked(port)
            object.__setattr__(clone, "_node", node)
            outputs[key] = clone
        object.__setattr__(node, "_outputs", Ports("output", outputs, owner=node))

    def _called_name(self) -> str | None:
        """The name a called node starts with (``None``: named by the pipeline)."""
        return None

    def __call__(self, *args: Any, **inputs: Any) -> Node:
        """A new node with ``inputs`` bound; inside ``@pipeline`` it joins the pipeline."""

        _keywords_only(self, args)
        self._check_input_names(inputs)
        node = self._copy_for_call()
        object.__setattr__(node, "_origin", call_site())
        object.__setattr__(node, "_call_site", node._origin)
        object.__setattr__(node, "_template_name",
                           self.__dict__.get("_template_name") or self.name)
        object.__setattr__(node, "_definition_site", self._origin)
        object.__setattr__(node, "name", self._called_name())
        node._sites.pop("name", None)
        node._inputs._values.update(unwrap(inputs))
        builder = current_builder()
        if builder is not None:
            builder.discard(self)  # a step made in the pipeline and then called is a template
            builder.add(node)
        return node


class OwnJob(ABC):
    """A node that is also a job of its own (``ml_client.jobs.create_or_update(node)``): the
    standalone job azure-ai-ml submits for it, :meth:`job_document`."""

    source: Path

    @abstractmethod
    def job_document(self, emitter: Emitter | None = None) -> dict[str, Any]:
        """The standalone job's YAML-equivalent document."""

    def job_positions(self) -> tuple[dict[str, Any], Any]:
        """The standalone job document and where each of its keys was written in Python."""
        return job_positions(self.job_document, self.source)

    def dump_job(self, dest: Any) -> None:
        """Write the standalone job document to a path or an open text stream."""
        _write(dest, dump_text(self.job_document()))


class ParallelNode(Node):
    """A ``type: parallel`` step (azure-ai-ml's ``Parallel``)."""

    kind = "parallel"
    _CALL_COPIES = ("retry_settings", "task", "resources")

    def __init__(self, *, input_data: str | None = None, mini_batch_size: Any = None,
                 partition_keys: list[str] | str | None = None,
                 max_concurrency_per_instance: Any = None, error_threshold: Any = None,
                 mini_batch_error_threshold: Any = None, logging_level: str | None = None,
                 retry_settings: Any = None, task: RunFunction | Mapping[str, Any] | None = None,
                 environment: Any = None, **common: Any) -> None:
        self.input_data = input_data
        self.mini_batch_size = None if mini_batch_size is None else (
            mini_batch_size if isinstance(mini_batch_size, str) else str(mini_batch_size))
        self.partition_keys = partition_keys
        self.max_concurrency_per_instance = max_concurrency_per_instance
        self.error_threshold = error_threshold
        self.mini_batch_error_threshold = mini_batch_error_threshold
        self.logging_level = logging_level
        self.retry_settings = RetrySettings.coerce(retry_settings) or RetrySettings()
        self.task = task
        self.environment = environment
        super().__init__(**common)

    def _copy_for_call(self) -> Node:
        new = super()._copy_for_call()
        # azure-ai-ml's Parallel.__call__ does not copy it: the component's value applies.
        object.__setattr__(new, "mini_batch_error_threshold",
                           self._defaults.get("mini_batch_error_threshold") if self._defaults
                           else self.mini_batch_error_threshold)
        return new

    def _called_name(self) -> str | None:
        return self.name  # azure-ai-ml's Parallel.__call__ keeps the function's name

    def _settings(self, base: Path) -> dict[str, Any]:
        get = self._setting
        size = get("mini_batch_size")
        task = get("task")
        return {
            "input_data": get("input_data"),
            "mini_batch_size": str(size) if isinstance(size, int) else size,
            "partition_keys": get("partition_keys"),
            "resources": _settings_dict(get("resources")),
            "max_concurrency_per_instance": get("max_concurrency_per_instance"),
            "mini_batch_error_threshold": get("mini_batch_error_threshold"),
            "error_threshold": get("error_threshold"),
            "logging_level": get("logging_level"),
            "retry_settings": _settings_dict(get("retry_settings")),
            "environment_variables": self.environment_variables or None,
            "environment": environment_value(get("environment")),
            "identity": self.identity,
            "is_deterministic": get("is_deterministic"),
            "task": rebased_task(task, base),
        }


class CommandNode(OwnJob, Node):
    """A ``type: command`` step, usually from a component file."""

    kind = "command"
    _CALL_COPIES = ("environment", "limits", "distribution", "resources", "queue_settings",
                    "services")

    def __init__(self, *, command: str | None = None, code: str | None = None,
                 environment: Any = None, distribution: Any = None, limits: Any = None,
                 queue_settings: Any = None, services: Any = None, **common: Any) -> None:
        self.command = command
        self.code = code
        self.environment = environment
        self.distribution = distribution
        self.limits = limits
        self.queue_settings = queue_settings
        self.services = services
        super().__init__(**common)

    def _called_name(self) -> str | None:
        return None  # azure-ai-ml's Command.__call__: the variable names the node

    def _copy_for_call(self) -> Node:
        new = super()._copy_for_call()
        if self.display_name == self.name:  # azure-ai-ml passes only a display name of its own
            object.__setattr__(new, "display_name", None)
        # azure-ai-ml's Command.__call__ does not copy these: the called node has none
        object.__setattr__(new, "experiment_name", None)
        object.__setattr__(new, "description", None)
        object.__setattr__(new, "properties", {})
        return new

    def sweep(self, *, primary_metric: str, goal: str, sampling_algorithm: Any = "random",
              compute: str | None = None, max_concurrent_trials: int | None = None,
              max_total_trials: int | None = None, timeout: int | None = None,
              trial_timeout: int | None = None, early_termination_policy: Any = None,
              search_space: Mapping[str, Any] | None = None, identity: Any = None,
              queue_settings: Any = None, job_tier: str | None = None,
              priority: str | None = None) -> SweepNode:
        """azure-ai-ml's ``command_node.sweep(...)``: a sweep node whose trial is this node's
        component. Inputs bound to a distribution (``Choice``, ``Uniform``, ...) are its
        search space (``search_space=`` adds to it), the others its inputs; inside
        ``@pipeline`` the sweep node replaces this node (which no longer runs)."""
        given = {**{key: decl for key, decl in self._input_decls.items()
                    if decl.path is not None},  # command(inputs={"x": Input(path=...)})
                 **self._inputs._values}
        inputs = {key: value for key, value in given.items()
                  if not isinstance(value, SweepDistribution)}
        space = {key: value for key, value in given.items()
                 if isinstance(value, SweepDistribution)}
        space.update(search_space or {})
        # a mapping given here takes job_tier and priority too (azure-ai-ml would crash on it)
        queue_settings = QueueSettings.coerce(queue_settings or self.queue_settings)
        if isinstance(queue_settings, QueueSettings):  # changed in place, as azure-ai-ml does
            if job_tier is not None:
                queue_settings.job_tier = job_tier
            if priority is not None:
                queue_settings.priority = priority
        node = SweepNode(
            trial=self._trial(), compute=self.compute if compute is None else compute,
            objective=Objective(goal=goal, primary_metric=primary_metric),
            sampling_algorithm=sampling_algorithm, search_space=space,
            early_termination=early_termination_policy, name=self.name,
            description=self.description, display_name=self.display_name, tags=self.tags,
            properties=self.properties, experiment_name=self.experiment_name,
            identity=identity or self.identity, queue_settings=queue_settings)
        node._inputs._values.update(inputs)
        node._inputs._modes.update(self._inputs._modes)
        self._outputs_to(node)
        object.__setattr__(node, "_definition_site", self.__dict__.get("_definition_site"))
        object.__setattr__(node, "_template_name", self.__dict__.get("_template_name"))
        node.set_limits(max_total_trials=max_total_trials,
                        max_concurrent_trials=max_concurrent_trials, timeout=timeout,
                        trial_timeout=trial_timeout)
        node._sites.clear()
        builder = current_builder()
        if builder is not None:  # the swept node is not a step (azure-ai-ml leaves it out)
            builder.discard(self)
            builder.add(node)
        return node

    def _trial(self) -> Component | dict[str, Any]:
        """The trial of a sweep of this node: its component file, or a copy of its inline
        component as azure-ai-ml makes it (the declarations, the literal inputs ``command()``
        was given as typed inputs, the settings given to ``command()``)."""
        if isinstance(self.component, Component):
            return self.component
        defaults = self._defaults
        inputs = {key: decl.to_dict() for key, decl in self._input_decls.items()}
        for key, value in self.__dict__.get("_literal_inputs", {}).items():
            inputs.setdefault(key, {"type": literal_type(value), "default": value})
        outputs = {}
        for key, port in self._outputs.items():
            if isinstance(port, NodeOutput):
                outputs[key] = {"type": port.type or "uri_folder"}
        trial = {
            "type": "command", "name": self.__dict__.get("_template_name"),
            "command": defaults.get("command"), "code": defaults.get("code"),
            "environment": environment_value(defaults.get("environment")),
            "environment_variables": defaults.get("environment_variables"),
            "resources": _settings_dict(defaults.get("resources")),
            "distribution": defaults.get("distribution"),
            "inputs": inputs or None, "outputs": outputs or None,
        }
        return {key: plain(value) for key, value in trial.items() if value is not None}

    def set_limits(self, *, timeout: int, **kwargs: Any) -> None:
        """``limits.timeout`` in seconds, like azure-ai-ml's ``node.set_limits(timeout=...)``."""
        if isinstance(self.limits, CommandJobLimits):
            self.limits.timeout = timeout
        else:
            self.limits = CommandJobLimits(timeout=timeout)

    def set_queue_settings(self, *, job_tier: str | None = None,
                           priority: str | None = None) -> None:
        """``queue_settings`` (recorded for the cloud), like azure-ai-ml's method."""
        if isinstance(self.queue_settings, QueueSettings):
            self.queue_settings.job_tier = job_tier
            self.queue_settings.priority = priority
        else:
            self.queue_settings = QueueSettings(job_tier=job_tier, priority=priority)

    def job_document(self, emitter: Emitter | None = None) -> dict[str, Any]:
        """The standalone command job azure-ai-ml submits for this node
        (``ml_client.jobs.create_or_update(node)``), paths relative to :attr:`source`'s folder."""
        data = self.to_dict(self._job_base(), emitter, ())
        return {"$schema": COMMAND_JOB_SCHEMA, **data, "type": "command"}

    def _settings(self, base: Path) -> dict[str, Any]:
        get = self._setting
        return {
            "code": get("code"),
            "command": get("command"),
            "environment": environment_value(get("environment")),
            "environment_variables": self.environment_variables or None,
            "resources": _settings_dict(get("resources")),
            "distribution": get("distribution"),
            "limits": _settings_dict(get("limits")),
            "queue_settings": _settings_dict(get("queue_settings")),
            "services": self.services,
            "identity": self.identity,
            "is_deterministic": get("is_deterministic"),
        }


class SweepNode(OwnJob, Node):
    """A ``type: sweep`` step (azure-ai-ml's ``Sweep``), made by ``command_node.sweep(...)``:
    trials of ``trial`` (a command component) over ``search_space``, judged by ``objective``.

    Written as azure-ai-ml writes it: ``trial`` is the component (a file reference, or the
    inline component of ``command(...)``), ``inputs`` the values that are not swept; the
    command node's own later settings (``resources``, ``environment_variables``, ``limits``,
    ``identity``) are not part of it, as in azure-ai-ml.
    """

    kind = "sweep"

    def __init__(self, *, trial: Component | Mapping[str, Any] | None = None,
                 compute: str | None = None, limits: SweepJobLimits | None = None,
                 sampling_algorithm: Any = None, objective: Objective | Mapping[str, Any] | None
                 = None, early_termination: Any = None,
                 search_space: Mapping[str, Any] | None = None,
                 inputs: Mapping[str, Any] | None = None,
                 outputs: Mapping[str, Output | None] | None = None, identity: Any = None,
                 queue_settings: Any = None, resources: Any = None, **common: Any) -> None:
        self.trial = trial
        self.sampling_algorithm = sampling_algorithm
        self.early_termination = early_termination
        self._limits = limits
        self.search_space = search_space
        self.queue_settings = queue_settings
        self.objective = (Objective(**dict(objective)) if isinstance(objective, Mapping)
                          else objective)
        super().__init__(compute=compute, inputs=inputs, outputs=outputs, identity=identity,
                         resources=resources, **common)

    def __setattr__(self, name: str, value: Any) -> None:
        if name == "sampling_algorithm":
            value = sampling_value(value)
        elif name == "early_termination":
            value = node_policy(value)
            if isinstance(value, BanditPolicy):  # azure-ai-ml's Sweep: a slack of 0 is none
                if value.slack_amount == 0:
                    value.slack_amount = None
                if value.slack_factor == 0:
                    value.slack_factor = None
        elif name == "search_space" and value is not None:
            value = {key: distribution(entry) for key, entry in value.items()}
        elif name == "limits":
            if not isinstance(value, SweepJobLimits):
                raise ValidationError([Diagnostic(
                    f"limits must be SweepJobLimits, got {type(value).__name__} (azure-ai-ml "
                    "refuses it)", location=call_site(), code="type",
                    hint="sweep_node.set_limits(max_total_trials=...), or "
                         "sweep_node.limits = SweepJobLimits(...)")])
            name = "_limits"
            self._sites["limits"] = call_site()
        super().__setattr__(name, value)

    @property
    def limits(self) -> SweepJobLimits | None:
        """``max_total_trials``, ``max_concurrent_trials``, ``timeout``, ``trial_timeout``."""
        return self._limits

    def set_limits(self, *, max_concurrent_trials: int | None = None,
                   max_total_trials: int | None = None, timeout: int | None = None,
                   trial_timeout: int | None = None) -> None:
        """Set the given limits (azure-ai-ml's ``set_limits``: ``None`` leaves one as it is)."""
        given = {"max_concurrent_trials": max_concurrent_trials,
                 "max_total_trials": max_total_trials, "timeout": timeout,
                 "trial_timeout": trial_timeout}
        if self._limits is None:
            object.__setattr__(self, "_limits", SweepJobLimits(**given))
        else:
            for key, value in given.items():
                if value is not None:
                    setattr(self._limits, key, value)
        self._sites["limits"] = call_site()

    def set_objective(self, *, goal: str | None = None,
                      primary_metric: str | None = None) -> None:
        """Set the objective's ``goal`` and/or ``primary_metric`` (the others stay)."""
        if self.objective is None:
            self.objective = Objective(goal=goal, primary_metric=primary_metric)
            return
        if goal:
            self.objective.goal = goal
        if primary_metric:
            self.objective.primary_metric = primary_metric

    def _port_names(self, kind: str) -> list[str] | None:
        trial = self.__dict__.get("trial")
        if isinstance(trial, Component):
            return list(trial.input_names if kind == "input" else trial.output_names)
        if isinstance(trial, Mapping) and kind == "input":
            return list(trial.get("inputs") or {})
        return None

    def _trial_value(self, base: Path) -> Any:
        trial = self.trial
        return trial.reference(base) if isinstance(trial, Component) else trial

    def _settings(self, base: Path) -> dict[str, Any]:
        sampling = self.sampling_algorithm
        return {
            "trial": self._trial_value(base),
            "search_space": None if self.search_space is None else {
                key: yaml_value(entry) for key, entry in self.search_space.items()},
            "sampling_algorithm": sampling.lower() if isinstance(sampling, str) else sampling,
            "objective": self.objective,
            "limits": self.limits,
            "early_termination": self.early_termination,
            "queue_settings": _settings_dict(self.queue_settings),
            "resources": _settings_dict(self.resources),
        }

    def _inputs_yaml(self) -> dict[str, Any]:
        values, modes = self._inputs._values, self._inputs._modes
        return {key: bound_input(value, modes.get(key)) for key, value in values.items()
                if value is not None and not isinstance(value, SweepDistribution)}

    def job_document(self, emitter: Emitter | None = None) -> dict[str, Any]:
        """The standalone sweep job azure-ai-ml submits for this node (its ``_to_job()``):
        the trial is the component's command (each swept ``${{inputs.x}}`` written
        ``${{search_space.x}}``), code, environment, variables, resources and distribution;
        a policy given by name is that policy with its defaults."""
        base = self._job_base()
        data = self.to_dict(base, emitter, ())
        data["trial"] = self._job_trial(base)
        outputs = {key: None for key in self._outputs}  # every output, set or not
        outputs.update(data.get("outputs") or {})
        if outputs:
            data["outputs"] = outputs
        if isinstance(self.early_termination, str):
            data["early_termination"] = plain(policy_value(self.early_termination))
        if self.identity is not None:
            data["identity"] = plain(self.identity)
        return {"$schema": SWEEP_JOB_SCHEMA, **data, "type": "sweep"}

    def _job_trial(self, base: Path) -> dict[str, Any]:
        trial = self.trial
        if isinstance(trial, Component):
            found = dict(trial.data)
            code = found.get("code")
            if isinstance(code, str) and is_local(code) and not Path(code).is_absolute():
                found["code"] = relative_to(trial.path.parent / code, base)
        else:
            found = dict(trial or {})
        out = {key: found[key] for key in TRIAL_KEYS if found.get(key) is not None}
        command = out.get("command")
        for key in self.search_space or {}:  # as azure-ai-ml's _to_job() writes it
            if isinstance(command, str):
                command = command.replace("${{inputs.%s}}" % key, "${{search_space.%s}}" % key)
        if command is not None:
            out["command"] = command
        return out


COMMAND_JOB_SCHEMA = "https://azuremlschemas.azureedge.net/latest/commandJob.schema.json"
SWEEP_JOB_SCHEMA = "https://azuremlschemas.azureedge.net/latest/sweepJob.schema.json"
# What a standalone sweep job's trial takes from its component (azure-ai-ml's
# ParameterizedCommand).
TRIAL_KEYS = ("command", "code", "environment", "environment_variables", "resources",
              "distribution")


def job_positions(document: Callable[[Emitter], dict[str, Any]], source: Path,
                  loaded: Any = None) -> tuple[dict[str, Any], Any]:
    """A job ``document`` and a schema ``PositionMap`` of its Python lines; a job loaded from
    YAML gives its ``loaded`` positions, and Python lines only where code changed it."""
    from mlpipe.schema.yamlio import PositionMap

    emitter = Emitter()
    data = document(emitter)
    positions = PositionMap(str(source))
    if loaded is not None:
        positions.merge(loaded)
        found = emitter.marks
    else:
        found = emitter.positions(data)
    positions.keys.update(found)
    positions.values.update(found)
    return data, positions


def _write(dest: Any, text: str) -> None:
    if hasattr(dest, "write"):
        dest.write(text)
    else:
        Path(dest).write_text(text, encoding="utf-8")


def unwrap(inputs: Mapping[str, Any]) -> dict[str, Any]:
    """Values bound at a call: another node's ``node.inputs.x`` binds what it is bound to."""
    return {key: value._data if isinstance(value, NodeInput) else value
            for key, value in inputs.items()}


def rebased_task(task: Any, base: Path) -> Any:
    """A task's YAML, with an absolute ``code`` (a component file's copy) relative to ``base``."""
    if not isinstance(task, RunFunction):
        return task
    data = task.to_dict()
    code = data.get("code")
    if isinstance(code, str) and is_local(code) and Path(code).is_absolute():
        data["code"] = relative_to(code, base)
    return data


def plain(value: Any) -> Any:
    """``value`` with SDK objects (pipeline parameters, node outputs, Input/Output) as YAML."""
    if isinstance(value, Mapping):
        return {key: plain(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(item) for item in value]
    return value_to_yaml(value)


def _settings_dict(value: Any) -> Any:
    """A settings object's mapping, ``None`` when nothing is set (so the key is left out)."""
    if isinstance(value, Record):
        return value.to_dict() or None
    return value


def clone_tracked(value: Tracked) -> Any:
    """A shallow copy of ``value`` with its own change records and extra keys."""
    clone = copy.copy(value)
    object.__setattr__(clone, "_sites", dict(value.__dict__.get("_sites", {})))
    extra = value.__dict__.get("_extra")
    if isinstance(extra, dict):
        object.__setattr__(clone, "_extra", dict(extra))
    return clone


def inline_input(decl: Input, value: Any, mode: str | None = None) -> Any:
    """The YAML of an inline step's input: its declaration merged with the bound value; the
    input's own ``mode`` (``node.inputs.x.mode``) over the value's over the declaration's."""
    if value is None:
        if decl.default is not None and decl.is_literal:
            return decl.default  # the value the cloud takes from the declaration
        return {**decl.to_dict(), **({"mode": mode} if mode else {})}
    if isinstance(value, (PipelineInput, NodeOutput)):
        chosen = mode or decl.mode
        if chosen is None:
            return value.binding()
        return {"type": decl.type, "path": value.binding(), "mode": chosen}
    if isinstance(value, Input):
        merged = decl.to_dict()
        merged.update(value.to_dict())
        chosen = mode or value.mode or decl.mode
        if chosen:
            merged["mode"] = chosen
        return merged
    return value_to_yaml(value)


def bound_input(value: Any, mode: str | None) -> Any:
    """The YAML of an input of a component step: the value, with the input's own mode."""
    written = value_to_yaml(value)
    if mode is None:
        return written
    if isinstance(written, Mapping):
        return {**written, "mode": mode}
    if isinstance(written, str) and "${{" in written:
        return {"path": written, "mode": mode}
    return written  # a literal has no mode


class Component:
    """A component loaded from a YAML file; call it inside ``@pipeline`` to add a step."""

    def __init__(self, path: Path, data: Mapping[str, Any]) -> None:
        self.path = path.resolve()
        self.data = dict(data)
        self.type = str(self.data.get("type") or "command")
        self.name = self.data.get("name")
        self.display_name = self.data.get("display_name")
        inputs = self.data.get("inputs") or {}
        outputs = self.data.get("outputs") or {}
        self.input_names = list(inputs) if isinstance(inputs, Mapping) else []
        self.output_names = list(outputs) if isinstance(outputs, Mapping) else []

    def reference(self, base: Path) -> str:
        """``file:<path>`` relative to ``base`` when possible."""
        return "file:" + relative_to(self.path, base)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Component) and other.path == self.path

    def __repr__(self) -> str:
        return f"Component({str(self.path)!r}, type={self.type!r})"

    def __str__(self) -> str:
        """The component's YAML, as azure-ai-ml prints a component."""
        return dump_text(self.data)

    @property
    def _func(self) -> Callable[..., Node]:
        """azure-ai-ml's component function (``help(component._func)``): this component's
        call, with its inputs as keyword parameters and its description as the docstring."""
        found = self.data.get("inputs")
        inputs: Mapping[str, Any] = found if isinstance(found, Mapping) else {}

        def call(**values: Any) -> Node:
            return self(**values)

        call.__name__ = str(self.name or "component").replace("-", "_")
        call.__doc__ = "\n".join(filter(None, [
            str(self.data.get("description") or self.display_name or self.name or ""),
            *(f"{name}: {decl.get('type') if isinstance(decl, Mapping) else decl}"
              + (f" - {decl.get('description')}" if isinstance(decl, Mapping)
                 and decl.get("description") else "")
              for name, decl in inputs.items())]))
        call.__signature__ = inspect.Signature([  # type: ignore[attr-defined]
            inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY,
                              default=decl.get("default") if isinstance(decl, Mapping) else None)
            for name, decl in inputs.items() if name.isidentifier()])
        return call

    # The settings azure-ai-ml copies from a component onto each node made from it (its
    # Parallel and Command constructors), and the others a node of this kind may override.
    _COPIED = {"parallel": ("resources", "retry_settings", "input_data",
                            "max_concurrency_per_instance", "mini_batch_error_threshold",
                            "mini_batch_size", "partition_keys", "task"),
               "command": ("resources", "distribution")}
    _DEFAULTS = {"parallel": ("error_threshold", "logging_level", "environment",
                              "is_deterministic"),
                 "command": ("command", "code", "environment", "limits", "is_deterministic")}

    def settings(self) -> dict[str, Any]:
        """This file's step settings as SDK objects (a task's ``code`` and ``conda_file``
        absolute, so that a node's copy may be written into another folder's YAML)."""
        kind = self.type
        out: dict[str, Any] = {}
        with from_file():
            for key in (*self._COPIED.get(kind, ()), *self._DEFAULTS.get(kind, ())):
                value = self.data.get(key)
                convert = _COERCE.get(key)
                if isinstance(value, Mapping) and convert is not None:
                    value = convert(dict(value))
                if key == "mini_batch_size" and isinstance(value, int):
                    value = str(value)
                if isinstance(value, RunFunction):
                    self._absolute_paths(value)
                if value is not None:
                    out[key] = value
        return out

    def _absolute_paths(self, task: RunFunction) -> None:
        folder = self.path.parent
        if is_local(task.code) and not Path(str(task.code)).is_absolute():
            object.__setattr__(task, "code", str((folder / str(task.code)).resolve()))
        env = task.environment
        if isinstance(env, Mapping) and is_local(env.get("conda_file")):
            conda = Path(str(env["conda_file"]))
            object.__setattr__(task, "environment", {
                **env, "conda_file": str(conda if conda.is_absolute() else folder / conda)})

    def __call__(self, *args: Any, **inputs: Any) -> Node:
        """A new step using this component with ``inputs`` bound; the node starts with
        copies of the settings azure-ai-ml copies (``node.task.program_arguments = ...``
        changes this node's copy)."""

        _keywords_only(self, args)
        node_cls = ParallelNode if self.type == "parallel" else CommandNode
        node = node_cls(component=self, defaults=self.settings())
        for key, value in self.settings().items():
            if key in self._COPIED.get(self.type, ()):
                object.__setattr__(node, key, value)
        if self.type not in ("parallel", "command"):
            object.__setattr__(node, "kind", self.type)  # written as is; the compiler judges it
        object.__setattr__(node, "_origin", call_site())
        node._check_input_names(inputs)
        object.__setattr__(node, "_call_site", node._origin)
        object.__setattr__(node, "_template_name", self.name)
        found = self.data.get("outputs")
        declared: Mapping[str, Any] = found if isinstance(found, Mapping) else {}
        outputs = {key: NodeOutput(node, key) for key in self.output_names}
        for key, port in outputs.items():
            object.__setattr__(port, "_origin", node._origin)
            decl = declared.get(key)
            object.__setattr__(port, "_declared_type",
                               decl.get("type") if isinstance(decl, Mapping) else None)
        object.__setattr__(node, "_outputs", Ports("output", outputs, owner=node))
        node._inputs._values.update(unwrap(inputs))
        builder = current_builder()
        if builder is not None:
            builder.add(node)
        return node


def _keywords_only(callee: Any, args: tuple[Any, ...]) -> None:
    """Inputs are bound by name, as in azure-ai-ml: a clear error at the call otherwise."""
    if not args:
        return
    names = list(getattr(callee, "_declared_inputs", None)
                 or getattr(callee, "input_names", None) or [])
    example = ", ".join(f"{name}=..." for name in names[:3]) or "name=value"
    raise ValidationError([Diagnostic(
        f"{getattr(callee, 'name', None) or 'the step'}() takes its inputs as keyword arguments "
        f"({example}), got {len(args)} positional argument{'s' if len(args) != 1 else ''}",
        location=call_site(), code="type")])
