"""Drawing trials from a search space: each distribution as Azure ML defines it, grid order,
repeatable random draws, nested choices."""

from __future__ import annotations

import math
import random

from mlpipe.jobs.sweep.sampling import draw, grid, suggest
from mlpipe.plan import SearchParam


def test_each_distribution_draws_in_its_range() -> None:
    rng = random.Random(1)
    for _ in range(200):
        assert 0.5 <= draw(SearchParam("u", "uniform", low=0.5, high=0.9), rng) <= 0.9
        assert math.exp(-3) <= draw(SearchParam("l", "loguniform", low=-3, high=0), rng) <= 1
        q = draw(SearchParam("q", "quniform", low=1, high=10, q=2), rng)
        assert isinstance(q, int) and q % 2 == 0 and 0 <= q <= 10
        assert draw(SearchParam("r", "randint", upper=3), rng) in (0, 1, 2)
        assert draw(SearchParam("n", "lognormal", mu=0, sigma=1), rng) > 0
        assert draw(SearchParam("c", "choice", values=("a", "b")), rng) in ("a", "b")
    qn = draw(SearchParam("qn", "qnormal", mu=1, sigma=0.2, q=0.5), rng)
    assert abs(qn / 0.5 - round(qn / 0.5)) < 1e-9


def test_grid_walks_every_combination_first_entry_slowest() -> None:
    space = (SearchParam("a", "choice", values=(1, 2)),
             SearchParam("b", "choice", values=("x", "y", "z")))
    assert list(grid(space)) == [{"a": 1, "b": "x"}, {"a": 1, "b": "y"}, {"a": 1, "b": "z"},
                                 {"a": 2, "b": "x"}, {"a": 2, "b": "y"}, {"a": 2, "b": "z"}]
    assert len(list(suggest(space, "grid", None, 4))) == 4


def test_random_draws_repeat_with_a_seed() -> None:
    space = (SearchParam("u", "uniform", low=0, high=1),)
    assert list(suggest(space, "random", 7, 5)) == list(suggest(space, "random", 7, 5))
    assert list(suggest(space, "random", 7, 5)) != list(suggest(space, "random", 8, 5))


def test_a_chosen_mapping_gives_its_own_inputs() -> None:
    nested = {"model": "sgd", "lr": {"type": "uniform", "min_value": 0.1, "max_value": 0.2}}
    space = (SearchParam("config", "choice", values=(nested,)),)
    [params] = list(suggest(space, "random", 0, 1))
    assert params["model"] == "sgd" and 0.1 <= params["lr"] <= 0.2 and "config" not in params
