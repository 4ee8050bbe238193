"""Optional: compare read_mltable with Azure's own ``mltable`` library.

mltable is never a dependency. The test runs when ``import mltable`` works, or
when ``MLPIPE_MLTABLE_PYTHON`` names a Python that has it (for example a scratch
venv: ``python -m venv /tmp/mlt && /tmp/mlt/bin/pip install mltable "pandas<3"``);
otherwise it is skipped. mltable runs in a subprocess.
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import mlpipe
from mlpipe.data import read_mltable
from tests.data.support import CORPUS_IRIS, OJ_EXAMPLE, delimited, write_mltable

MLPIPE_DIR = Path(mlpipe.__file__).resolve().parent

PROBE = """
import json, sys, mltable
out = []
for path in sys.argv[1:]:
    df = mltable.load(path).to_pandas_dataframe()
    out.append({"shape": list(df.shape), "columns": [str(c) for c in df.columns],
                "first": [str(v) for v in df.iloc[:, 0].tolist()[:50]]})
print(json.dumps(out))
"""


def mltable_python() -> str:
    spec = importlib.util.find_spec("mltable")  # the library itself, not mlpipe's mirror
    if spec is not None and spec.origin and MLPIPE_DIR not in Path(spec.origin).parents:
        return sys.executable
    candidate = os.environ.get("MLPIPE_MLTABLE_PYTHON")
    if candidate and Path(candidate).exists():
        return candidate
    pytest.skip("the mltable library is not available (set MLPIPE_MLTABLE_PYTHON)")


def same_text(a: str, b: str) -> bool:
    try:
        return float(a) == float(b)
    except ValueError:
        return a == b or a.split(" ")[0] == b.split(" ")[0]


def test_results_match_the_mltable_library(corpus: Path, tmp_path: Path) -> None:
    python = mltable_python()
    (tmp_path / "a.csv").write_text("x,y,s\n1,2,foo\n3,,\n7,8,baz\n")
    (tmp_path / "b.csv").write_text("x,y,s\n5,6,bar\n")
    paths = "  - file: ../a.csv\n  - file: ../b.csv\n"
    cases = [corpus / CORPUS_IRIS,
             corpus / "azure-sdk-for-python/test_configs/dsl_pipeline/parallel_component_with_tabular_input/dataset/iris-mltable"]
    for name, extra in [("same", {}), ("first", {"header": "from_first_file"}),
                        ("none", {"header": "no_header"}), ("path", {"include_path_column": True})]:
        cases.append(write_mltable(tmp_path / name, delimited(paths, **extra)))
    cases.append(write_mltable(tmp_path / "ops", delimited(paths) + "  - skip: 1\n  - take: 2\n"
                               "  - filter: 'x > 2'\n  - drop_columns: [y]\n"))
    out = tmp_path / "oj"
    example = corpus / OJ_EXAMPLE
    subprocess.run([sys.executable, str(example / "src/partition_data/partition_data.py"),
                    "--data_source", str(example / "oj_sales_data/oj_sales_data.csv"),
                    "--partition_keys", "Store,Brand", "--tabular_output_data", str(out)],
                   check=True, capture_output=True)
    cases.append(out)
    result = subprocess.run([python, "-c", PROBE, *map(str, cases)], capture_output=True,
                            text=True, timeout=600)
    assert result.returncode == 0, result.stderr[-2000:]
    expected = json.loads(result.stdout.strip().splitlines()[-1])
    for case, want in zip(cases, expected, strict=True):
        table = read_mltable(case)
        assert list(table.shape) == want["shape"], case
        assert [str(c) for c in table.columns] == want["columns"], case
        got = [str(v) for v in table.iloc[:, 0].tolist()[:50]]
        assert all(same_text(a, b) for a, b in zip(got, want["first"], strict=False)), (case, got, want["first"])
