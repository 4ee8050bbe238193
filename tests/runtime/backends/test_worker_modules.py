"""Each backend's worker side stays apart from its driver side.

What runs inside a worker process (``backends/<name>_worker.py``) must not import the
driver side of any backend, nor the driver: a worker starts by importing its module
(``python -c "from ...local_worker import main"``, Dask task functions pickled by
reference), and pulling the driver in would slow every start and replacement.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

BACKENDS = Path(__file__).resolve().parents[3] / "mlpipe" / "runtime" / "backends"
DRIVER_SIDE = {
    "mlpipe.runtime.driver",
    "mlpipe.runtime.parallel_step",
    "mlpipe.runtime.backends.local",
    "mlpipe.runtime.backends.dask",
    "mlpipe.runtime.backends.dask_cluster",
    "mlpipe.runtime.backends.dask_share",
    "mlpipe.runtime.backends.queueing",
}


def _imports(path: Path) -> set[str]:
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
            found.update(f"{node.module}.{alias.name}" for alias in node.names)
    return found


@pytest.mark.parametrize("name", ["local_worker", "dask_worker"])
def test_worker_side_imports_no_driver_side(name: str) -> None:
    assert not _imports(BACKENDS / f"{name}.py") & DRIVER_SIDE

