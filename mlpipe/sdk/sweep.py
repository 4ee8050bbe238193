"""The settings of a sweep built in code, as ``azure.ai.ml.sweep`` defines them: search-space
distributions, sampling algorithms, early-termination policies, the objective and the limits.

Each has azure-ai-ml's constructor (names, order, defaults) and is written to the YAML as
azure-ai-ml's ``job._to_dict()`` writes it: ``Choice([...])`` is ``{type: choice, values:
[...]}``, ``BanditPolicy(slack_factor=0.1)`` is ``{type: bandit, slack_factor: 0.1,
evaluation_interval: 0, delay_evaluation: 0}``, ``goal="Maximize"`` is ``maximize``, and a
timeout under a minute is a minute (azure-ai-ml floors ``timeout`` and ``trial_timeout`` to
60 seconds: the service rounds shorter durations badly). The sweep node that holds them is
:class:`~mlpipe.sdk.nodes.SweepNode`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, ClassVar

from mlpipe.diagnostics import Diagnostic, ValidationError, did_you_mean
from mlpipe.sdk.callsite import call_site
from mlpipe.sdk.tracking import Record

SAMPLING_ALGORITHMS = ("random", "grid", "bayesian")
POLICIES = ("bandit", "median_stopping", "truncation_selection")


def _refuse(message: str, hint: str | None = None) -> ValidationError:
    return ValidationError([Diagnostic(message, location=call_site(), code="type", hint=hint)])


def _from_mapping(cls: type[Record], fields: Mapping[str, Any]) -> Any:
    """``cls(**fields)`` for a setting given as a mapping; a key it does not take is refused
    at the user's line (azure-ai-ml refuses it too), not a ``TypeError`` from inside mlpipe."""
    keys = cls._keys
    unknown = [str(key) for key in fields if key not in keys]
    if unknown:
        raise _refuse(f"{cls.__name__} takes no key {unknown[0]!r} (azure-ai-ml refuses it)",
                      hint=did_you_mean(unknown[0], keys) or f"its keys: {', '.join(keys)}")
    return cls(**fields)


# -- search space -------------------------------------------------------------------------------

class SweepDistribution(Record):
    """Base of the search-space distributions (``node(lr=Uniform(0.01, 0.1))``)."""

    _kind: ClassVar[str] = ""

    def _start(self, kwargs: dict[str, Any]) -> None:
        """``type`` (azure-ai-ml's keyword; the class's own by default); any other keyword is
        the ``TypeError`` azure-ai-ml raises."""
        self.type = kwargs.pop("type", self._kind)
        if kwargs:
            name = next(iter(kwargs))
            raise TypeError(f"{type(self).__name__}() got an unexpected keyword argument {name!r}")
        self._finish({})

    def _yaml_value(self, key: str) -> Any:
        return yaml_value(getattr(self, key))


def yaml_value(value: Any) -> Any:
    """A search-space value as YAML: a nested distribution (inside a ``Choice`` of mappings)
    as its mapping."""
    if isinstance(value, Record):
        return value.to_dict()
    if isinstance(value, Mapping):
        return {key: yaml_value(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [yaml_value(item) for item in value]
    return value


class Choice(SweepDistribution):
    """One of ``values`` (a value may be a mapping of further distributions)."""

    _kind = "choice"
    _keys = ("type", "values")

    def __init__(self, values: list[Any] | None = None, **kwargs: Any) -> None:
        self.values = values
        self._start(kwargs)


class Normal(SweepDistribution):
    """A normal distribution of mean ``mu`` and deviation ``sigma``."""

    _kind = "normal"
    _keys: ClassVar[tuple[str, ...]] = ("type", "mu", "sigma")

    def __init__(self, mu: float | None = None, sigma: float | None = None,
                 **kwargs: Any) -> None:
        self.mu = mu
        self.sigma = sigma
        self._start(kwargs)


class LogNormal(Normal):
    """``exp(normal(mu, sigma))``."""

    _kind = "lognormal"


class QNormal(Normal):
    """``normal(mu, sigma)`` rounded to a multiple of ``q``."""

    _kind = "qnormal"
    _keys = ("type", "mu", "sigma", "q")

    def __init__(self, mu: float | None = None, sigma: float | None = None,
                 q: int | None = None, **kwargs: Any) -> None:
        self.q = q
        super().__init__(mu=mu, sigma=sigma, **kwargs)


class QLogNormal(QNormal):
    """``exp(normal(mu, sigma))`` rounded to a multiple of ``q``."""

    _kind = "qlognormal"


class Randint(SweepDistribution):
    """An integer in ``[0, upper)``."""

    _kind = "randint"
    _keys = ("type", "upper")

    def __init__(self, upper: int | None = None, **kwargs: Any) -> None:
        self.upper = upper
        self._start(kwargs)


class Uniform(SweepDistribution):
    """A value in ``[min_value, max_value]``."""

    _kind = "uniform"
    _keys: ClassVar[tuple[str, ...]] = ("type", "min_value", "max_value")

    def __init__(self, min_value: float | None = None, max_value: float | None = None,
                 **kwargs: Any) -> None:
        self.min_value = min_value
        self.max_value = max_value
        self._start(kwargs)


class LogUniform(Uniform):
    """``exp(uniform(min_value, max_value))``."""

    _kind = "loguniform"


class QUniform(Uniform):
    """``uniform(min_value, max_value)`` rounded to a multiple of ``q``."""

    _kind = "quniform"
    _keys = ("type", "min_value", "max_value", "q")

    def __init__(self, min_value: float | None = None, max_value: float | None = None,
                 q: int | None = None, **kwargs: Any) -> None:
        self.q = q
        super().__init__(min_value=min_value, max_value=max_value, **kwargs)


class QLogUniform(QUniform):
    """``exp(uniform(min_value, max_value))`` rounded to a multiple of ``q``."""

    _kind = "qloguniform"


DISTRIBUTIONS: dict[str, type[SweepDistribution]] = {
    cls._kind: cls for cls in (Choice, Normal, LogNormal, QNormal, QLogNormal, Randint, Uniform,
                               LogUniform, QUniform, QLogUniform)}


def distribution(value: Any) -> Any:
    """A search-space entry given as a mapping (``{"type": "choice", "values": [...]}``, as
    azure-ai-ml's ``search_space`` setter takes it) as its distribution; anything else as is."""
    if isinstance(value, Mapping) and value.get("type") in DISTRIBUTIONS:
        return _from_mapping(DISTRIBUTIONS[str(value["type"])], value)
    return value


# -- sampling ---------------------------------------------------------------------------------

class SamplingAlgorithm(Record):
    """Base of the sampling algorithms (``sampling_algorithm=RandomSamplingAlgorithm(seed=1)``)."""

    _keys: ClassVar[tuple[str, ...]] = ("type",)


class RandomSamplingAlgorithm(SamplingAlgorithm):
    """Random draws (``seed`` repeats them; ``rule`` ``random`` or ``sobol``; ``logbase``)."""

    _keys = ("type", "seed", "rule", "logbase")

    def __init__(self, *, rule: str | None = None, seed: int | None = None,
                 logbase: float | str | None = None) -> None:
        self.type = "random"
        self.rule = rule
        self.seed = seed
        self.logbase = logbase
        self._finish({})


class GridSamplingAlgorithm(SamplingAlgorithm):
    """Every combination of the ``Choice`` values."""

    def __init__(self) -> None:
        self.type = "grid"
        self._finish({})


class BayesianSamplingAlgorithm(SamplingAlgorithm):
    """Bayesian optimisation (drawn at random here, with a note)."""

    def __init__(self) -> None:
        self.type = "bayesian"
        self._finish({})


def sampling_value(value: Any) -> Any:
    """``sampling_algorithm=`` as azure-ai-ml takes it: an algorithm object, or its name in
    any case (written in lower case); anything else is refused at the call."""
    if value is None or isinstance(value, SamplingAlgorithm):
        return value
    if isinstance(value, str) and value.lower() in SAMPLING_ALGORITHMS:
        return value
    raise _refuse(f"unsupported sampling algorithm: {value!r} (azure-ai-ml refuses it)",
                  hint=did_you_mean(str(value).lower(), SAMPLING_ALGORITHMS)
                  or f"one of {', '.join(SAMPLING_ALGORITHMS)}, or RandomSamplingAlgorithm(...)")


# -- early termination ------------------------------------------------------------------------

class EarlyTerminationPolicy(Record):
    """Base of the early-termination policies: ``delay_evaluation`` reports before the first
    evaluation, then one every ``evaluation_interval`` reports."""

    _keys: ClassVar[tuple[str, ...]] = ("type", "evaluation_interval", "delay_evaluation")

    def __init__(self, *, delay_evaluation: int, evaluation_interval: int) -> None:
        self.delay_evaluation = delay_evaluation
        self.evaluation_interval = evaluation_interval


class BanditPolicy(EarlyTerminationPolicy):
    """Stop a trial not within ``slack_factor`` (a ratio) or ``slack_amount`` of the best.

    As in azure-ai-ml, a slack of 0 is no slack setting once the policy is given to a sweep
    (the sweep node sets it to ``None``)."""

    _keys = ("type", "evaluation_interval", "delay_evaluation", "slack_factor", "slack_amount")

    def __init__(self, *, delay_evaluation: int = 0, evaluation_interval: int = 0,
                 slack_amount: float = 0, slack_factor: float = 0) -> None:
        super().__init__(delay_evaluation=delay_evaluation, evaluation_interval=evaluation_interval)
        self.type = "bandit"
        self.slack_factor: float | None = slack_factor
        self.slack_amount: float | None = slack_amount
        self._finish({})


class MedianStoppingPolicy(EarlyTerminationPolicy):
    """Stop a trial whose best value is worse than the median of the running averages."""

    def __init__(self, *, delay_evaluation: int = 0, evaluation_interval: int = 1) -> None:
        super().__init__(delay_evaluation=delay_evaluation, evaluation_interval=evaluation_interval)
        self.type = "median_stopping"
        self._finish({})


class TruncationSelectionPolicy(EarlyTerminationPolicy):
    """Stop the worst ``truncation_percentage`` percent of trials at each evaluation."""

    _keys = ("type", "evaluation_interval", "delay_evaluation", "truncation_percentage")

    def __init__(self, *, delay_evaluation: int = 0, evaluation_interval: int = 0,
                 truncation_percentage: int = 0) -> None:
        super().__init__(delay_evaluation=delay_evaluation, evaluation_interval=evaluation_interval)
        self.type = "truncation_selection"
        self.truncation_percentage = truncation_percentage
        self._finish({})


_POLICY_NAMES: dict[str, Callable[[], EarlyTerminationPolicy]] = {
    "Bandit": BanditPolicy, "Medianstopping": MedianStoppingPolicy,
    "Truncationselection": TruncationSelectionPolicy}
_POLICY_TYPES: dict[str, type[EarlyTerminationPolicy]] = {
    "bandit": BanditPolicy, "median_stopping": MedianStoppingPolicy,
    "truncation_selection": TruncationSelectionPolicy}


def node_policy(value: Any) -> Any:
    """``sweep_node.early_termination = ...`` as azure-ai-ml's sweep node takes it: a policy,
    or its mapping (``{"type": "bandit", "slack_factor": 0.1}``); anything else is kept as
    given, for validation to refuse (azure-ai-ml refuses it when the job is dumped)."""
    if isinstance(value, Mapping) and str(value.get("type", "")).lower() in _POLICY_TYPES:
        fields = {key: item for key, item in value.items() if key != "type"}
        return _from_mapping(_POLICY_TYPES[str(value["type"]).lower()], fields)
    return value


def policy_value(value: Any) -> Any:
    """The policy of a standalone sweep job, as azure-ai-ml's ``SweepJob`` takes it: a policy,
    or a name it maps to that policy's defaults (it compares ``name.lower().capitalize()``, so
    ``bandit``, ``MedianStopping``, ``truncationselection`` match, ``median_stopping`` does not);
    anything else is kept for validation to refuse."""
    if isinstance(value, str) and value.lower().capitalize() in _POLICY_NAMES:
        return _POLICY_NAMES[value.lower().capitalize()]()
    return node_policy(value)


# -- objective and limits ---------------------------------------------------------------------

class Objective(Record):
    """The metric the trials log and whether to ``minimize`` or ``maximize`` it (lower-cased,
    as azure-ai-ml keeps it)."""

    _keys = ("goal", "primary_metric")

    def __init__(self, goal: str | None, primary_metric: str | None = None) -> None:
        self.goal = goal
        self.primary_metric = primary_metric
        self._finish({})

    def __setattr__(self, name: str, value: Any) -> None:
        if name == "goal" and isinstance(value, str):
            value = value.lower()
        super().__setattr__(name, value)


def floored_timeout(value: Any) -> Any:
    """azure-ai-ml's ``_get_floored_timeout``: an integer timeout under a minute is a minute
    (0 stays 0); anything that is not an integer is no timeout."""
    if isinstance(value, int) and not isinstance(value, bool):
        return value if not value or value > 60 else 60
    return None


class SweepJobLimits(Record):
    """``limits`` of a sweep: ``max_total_trials``, ``max_concurrent_trials``, ``timeout`` (the
    whole sweep) and ``trial_timeout`` (one trial), in seconds, floored to a minute."""

    _keys = ("max_concurrent_trials", "max_total_trials", "timeout", "trial_timeout")

    def __init__(self, *, max_concurrent_trials: int | None = None,
                 max_total_trials: int | None = None, timeout: int | None = None,
                 trial_timeout: int | str | None = None) -> None:
        self.type = "sweep"
        self.max_concurrent_trials = max_concurrent_trials
        self.max_total_trials = max_total_trials
        self.timeout = timeout
        self.trial_timeout = trial_timeout
        self._finish({})

    def __setattr__(self, name: str, value: Any) -> None:
        if name in ("timeout", "trial_timeout"):
            value = floored_timeout(value)
        super().__setattr__(name, value)


__all__ = ["BanditPolicy", "BayesianSamplingAlgorithm", "Choice", "DISTRIBUTIONS",
           "EarlyTerminationPolicy", "GridSamplingAlgorithm", "LogNormal", "LogUniform",
           "MedianStoppingPolicy", "Normal", "Objective", "QLogNormal", "QLogUniform", "QNormal",
           "QUniform", "RandomSamplingAlgorithm", "Randint", "SamplingAlgorithm",
           "SweepDistribution", "SweepJobLimits", "TruncationSelectionPolicy", "Uniform",
           "distribution", "floored_timeout", "node_policy", "policy_value", "sampling_value",
           "yaml_value"]
