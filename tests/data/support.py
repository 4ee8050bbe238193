"""Helpers for the data-layer tests: a ParallelStep over one input, MLTable files."""

from __future__ import annotations

from pathlib import Path

from mlpipe.data import MiniBatch, iter_mini_batches, load_mini_batch
from mlpipe.diagnostics import Diagnostic
from mlpipe.frozen import freeze
from mlpipe.plan import ParallelStep, PlanInput
from mlpipe.sizes import parse_mini_batch_size

CORPUS_IRIS = "azureml-examples/cli/jobs/parallel/2a_iris_batch_prediction/neural-iris-mltable"
OJ_EXAMPLE = "azureml-examples/cli/jobs/parallel/1a_oj_sales_prediction"


def step_for(path: str | Path, type_: str = "mltable", size: str | None = None,
             keys: tuple[str, ...] | None = None) -> ParallelStep:
    """A hand-made plan step; ``size`` is read as the compiler reads ``mini_batch_size``."""
    return ParallelStep(
        name="score", step_dir="/unused", input_data="data",
        inputs=freeze({"data": PlanInput(name="data", type=type_, path=str(path))}),
        mini_batch_size=None if size is None else parse_mini_batch_size(size),
        partition_keys=keys,
    )


def batches(path: str | Path, type_: str = "mltable", size: str | None = None,
            keys: tuple[str, ...] | None = None,
            notes: list[Diagnostic] | None = None) -> list[MiniBatch]:
    sink = notes.append if notes is not None else None
    return list(iter_mini_batches(step_for(path, type_, size, keys), on_warning=sink))


def loaded(path: str | Path, type_: str = "mltable", size: str | None = None,
           keys: tuple[str, ...] | None = None) -> list:
    return [load_mini_batch(mb) for mb in batches(path, type_, size, keys)]


def write_mltable(folder: Path, text: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "MLTable").write_text(text)
    return folder


def delimited(paths: str, **options: object) -> str:
    """MLTable text: ``paths`` block + read_delimited with ``options``."""
    lines = ["paths:", paths.rstrip(), "transformations:", "  - read_delimited:"]
    opts = {"delimiter": "','"} | options
    lines += [f"      {k}: {str(v).lower() if isinstance(v, bool) else v}" for k, v in opts.items()]
    return "\n".join(lines) + "\n"
