"""``type: sweep``: a hyperparameter sweep over a command component (the ``trial``), as
azure-ai-ml's ``SweepSchema`` declares it (``_schema/_sweep``): the search space, the sampling
algorithm, the objective, the limits and the early-termination policy."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import Field, Tag

from mlpipe.schema.command import CommandComponent
from mlpipe.schema.common import COMPONENT_DESCRIPTION, NodeBase, component_kind
from mlpipe.schema.compute import QueueSettings, Resources
from mlpipe.schema.fields import (
    Identifier,
    Int,
    StrictModel,
    Text,
    chosen_by,
    int_in,
    number_in,
    one_of,
)

SAMPLING_ALGORITHMS = ("random", "grid", "bayesian")
POLICIES = ("bandit", "median_stopping", "truncation_selection")
SEARCH_SPACE_TYPES = ("choice", "uniform", "loguniform", "quniform", "qloguniform", "normal",
                      "lognormal", "qnormal", "qlognormal", "randint")

Bound = Annotated[int | float | str, number_in()]


class Choice(StrictModel):
    """``{type: choice, values: [...]}``: one of the values (a value may be a mapping of
    nested search-space entries)."""

    type: Annotated[str, one_of("choice", bindable=False)]
    values: list[Any] = Field(min_length=1, description="The values to choose from.")


class Uniform(StrictModel):
    """``uniform``/``loguniform``: a value in [min_value, max_value] (``loguniform``: its
    logarithm is uniform, ``exp(uniform(min_value, max_value))``)."""

    type: Annotated[str, one_of("uniform", "loguniform", bindable=False)]
    min_value: Bound
    max_value: Bound


class QUniform(Uniform):
    """``quniform``/``qloguniform``: as ``uniform``/``loguniform``, rounded to a multiple of q."""

    type: Annotated[str, one_of("quniform", "qloguniform", bindable=False)]
    q: Bound


class Normal(StrictModel):
    """``normal``/``lognormal``: a value drawn from a normal distribution (``lognormal``:
    ``exp(normal(mu, sigma))``)."""

    type: Annotated[str, one_of("normal", "lognormal", bindable=False)]
    mu: Bound
    sigma: Bound


class QNormal(Normal):
    """``qnormal``/``qlognormal``: as ``normal``/``lognormal``, rounded to a multiple of q."""

    type: Annotated[str, one_of("qnormal", "qlognormal", bindable=False)]
    q: Bound


class Randint(StrictModel):
    """``{type: randint, upper: n}``: an integer in [0, n)."""

    type: Annotated[str, one_of("randint", bindable=False)]
    upper: Annotated[int | str, int_in(1)]


SearchSpaceEntry = Annotated[
    Annotated[Choice, Tag("choice")] | Annotated[Uniform, Tag("uniform")]
    | Annotated[QUniform, Tag("quniform")] | Annotated[Normal, Tag("normal")]
    | Annotated[QNormal, Tag("qnormal")] | Annotated[Randint, Tag("randint")],
    chosen_by(SEARCH_SPACE_TYPES, what="search space",
              aliases={"loguniform": "uniform", "qloguniform": "quniform",
                       "lognormal": "normal", "qlognormal": "qnormal"}),
]
"""One entry of ``search_space:``, chosen by its ``type``."""


class RandomSampling(StrictModel):
    """``sampling_algorithm: {type: random, seed, rule, logbase}``."""

    type: Annotated[str, one_of("random", snake=True, bindable=False)]
    seed: Int | None = None
    rule: Annotated[str, one_of("random", "sobol", snake=True)] | None = None
    logbase: Annotated[int | float | str, number_in(0)] | Annotated[str, one_of("e")] | None = (
        Field(None, union_mode="left_to_right",
              description="A positive number, or e (RandomSamplingAlgorithm(logbase='e'))."))


class GridSampling(StrictModel):
    """``sampling_algorithm: {type: grid}``."""

    type: Annotated[str, one_of("grid", snake=True, bindable=False)]


class BayesianSampling(StrictModel):
    """``sampling_algorithm: {type: bayesian}``."""

    type: Annotated[str, one_of("bayesian", snake=True, bindable=False)]


SamplingAlgorithm = Annotated[
    Annotated[Annotated[str, one_of(*SAMPLING_ALGORITHMS)], Tag("name")]
    | Annotated[RandomSampling, Tag("random")] | Annotated[GridSampling, Tag("grid")]
    | Annotated[BayesianSampling, Tag("bayesian")],
    chosen_by(SAMPLING_ALGORITHMS, what="sampling algorithm", snake=True, text="name"),
]
"""``random``, ``grid``, ``bayesian``, or a mapping with that ``type``."""


class Objective(StrictModel):
    """``objective:``: the metric the trials log and whether lower or higher is better."""

    goal: Annotated[str, one_of("minimize", "maximize", snake=True)]
    primary_metric: Text = Field(description="The metric each trial logs (mlflow.log_metric).")


class Policy(StrictModel):
    """The keys every early-termination policy has."""

    evaluation_interval: Annotated[int | str, int_in(0)] | None = Field(
        None, description="Apply the policy every this many reports of the primary metric "
                          "(0, azure-ai-ml's default for bandit and truncation_selection, "
                          "applies it at every report, as 1 does).")
    delay_evaluation: Annotated[int | str, int_in(0)] | None = Field(
        None, description="Reports of the primary metric before the first evaluation.")


class BanditPolicy(Policy):
    """``bandit``: stop a trial whose metric is not within the slack of the best trial's."""

    type: Annotated[str, one_of("bandit", snake=True, bindable=False)]
    slack_factor: Annotated[int | float | str, number_in(0)] | None = None
    slack_amount: Annotated[int | float | str, number_in(0)] | None = None


class MedianStoppingPolicy(Policy):
    """``median_stopping``: stop a trial whose best metric is worse than the median of the
    running averages of all trials."""

    type: Annotated[str, one_of("median_stopping", snake=True, bindable=False)]


class TruncationSelectionPolicy(Policy):
    """``truncation_selection``: stop the given percentage of worst trials at each evaluation."""

    type: Annotated[str, one_of("truncation_selection", snake=True, bindable=False)]
    truncation_percentage: Annotated[int | str, int_in(1, 99)]


EarlyTermination = Annotated[
    Annotated[BanditPolicy, Tag("bandit")]
    | Annotated[MedianStoppingPolicy, Tag("median_stopping")]
    | Annotated[TruncationSelectionPolicy, Tag("truncation_selection")],
    chosen_by(POLICIES, what="early termination policy", snake=True),
]


class SweepLimits(StrictModel):
    """``limits:`` of a sweep."""

    max_total_trials: Annotated[int | str, int_in(1)] = Field(
        description="Trials to run in all (required).")
    max_concurrent_trials: Annotated[int | str, int_in(1)] | None = Field(
        None, description="Trials running at once (default: max_total_trials).")
    timeout: Annotated[int | str, int_in(1)] | None = Field(
        None, description="Seconds the whole sweep may run.")
    trial_timeout: Annotated[int | str, int_in(1)] | None = Field(
        None, description="Seconds one trial may run.")


class SweepNode(NodeBase):
    """A ``type: sweep`` step: trials of a command component over a search space."""

    type: Annotated[str, one_of("sweep", bindable=False)]
    trial: Annotated[Annotated[Text, Tag("reference")]
                     | Annotated[CommandComponent, Tag("inline")],
                     component_kind(CommandComponent)] = Field(
        description="The command component each trial runs: " + COMPONENT_DESCRIPTION)
    search_space: dict[Identifier, SearchSpaceEntry] | None = Field(
        None, description="Trial input -> the values to sweep over.")
    sampling_algorithm: SamplingAlgorithm | None = Field(
        None, description="random (default), grid or bayesian.")
    objective: Objective
    limits: SweepLimits
    early_termination: EarlyTermination | None = None
    queue_settings: QueueSettings | None = None
    resources: Resources | None = None


__all__ = ["BanditPolicy", "BayesianSampling", "Choice", "GridSampling",
           "MedianStoppingPolicy", "Normal", "Objective", "QNormal", "QUniform", "RandomSampling",
           "Randint", "SweepLimits", "SweepNode", "TruncationSelectionPolicy", "Uniform"]
