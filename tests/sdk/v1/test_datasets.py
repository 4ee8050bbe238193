"""v1 datasets made from data in code, as the AutoML many-models notebooks make them
(``TabularDatasetFactory.register_pandas_dataframe``), run unchanged through run-script."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from mlpipe import ValidationError
from mlpipe.v1 import TabularDatasetFactory
from tests.conftest import run_cli
from tests.sdk.v1.support import write

# auto-ml-forecasting-backtest-many-models.ipynb's upload cell, with a small frame
REGISTER = """\
import json
import pandas as pd
from azureml.core import Dataset, Workspace
from azureml.data.dataset_factory import TabularDatasetFactory

ws = Workspace.from_config()
X = pd.DataFrame({"date": pd.date_range(start="2018-01-01", periods=4),
                  "value": [1.5, 2.5, 3.5, 4.5], "ts_id": ["a", "a", "b", "b"]})
ds = ws.get_default_datastore()
# Upload saved data to the default data store.
train_data = TabularDatasetFactory.register_pandas_dataframe(
    X, target=(ds, "data_mm"), name="data_train"
)
again = TabularDatasetFactory.register_pandas_dataframe(
    X.head(2), target=ds.path("data_mm"), name="data_train", tags={"rows": "2"}
)
latest = Dataset.get_by_name(ws, "data_train")
first = Dataset.get_by_name(ws, "data_train", version=1)
print(json.dumps({
    "versions": [train_data.version, again.version, latest.version],
    "frame_equal": bool(train_data.to_pandas_dataframe().equals(X)),
    "dtypes": [t.kind for t in first.to_pandas_dataframe().dtypes],
    "latest_rows": len(latest.to_pandas_dataframe()),
}))
"""


def test_register_pandas_dataframe_as_azureml_does(tmp_path: Path) -> None:
    """The frame is written as Parquet to the datastore in a new ``<uuid>/`` folder below the
    target, read back as a table with its types, and registered as a new version each time."""
    script = write(tmp_path / "register.py", REGISTER)
    runs = tmp_path / "runs"
    proc = run_cli("run-script", str(script), cwd=tmp_path, env={"MLPIPE_RUNS_DIR": str(runs)})
    assert proc.returncode == 0, proc.stdout + proc.stderr
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    assert result["versions"] == [1, 2, 2]
    assert result["frame_equal"] is True
    assert result["dtypes"] == ["M", "f", "O"]  # dates, floats and text kept as such
    assert result["latest_rows"] == 2
    written = sorted((runs / "datastores" / "workspaceblobstore" / "data_mm").glob(
        "*/dataframe.parquet"))
    assert len(written) == 2  # one unique folder per call, nothing overwritten
    assert pd.read_parquet(written[0]).shape[1] == 3


def test_register_pandas_dataframe_without_a_unique_folder(tmp_path: Path,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MLPIPE_RUNS_DIR", str(tmp_path / "runs"))
    from mlpipe.v1 import Datastore

    frame = pd.DataFrame({"a": [1, 2]})
    dataset = TabularDatasetFactory.register_pandas_dataframe(
        frame, Datastore(None, "workspaceblobstore"), "plain", make_target_path_unique=False,
        show_progress=False)
    assert (tmp_path / "runs" / "datastores" / "workspaceblobstore" / "dataframe.parquet").is_file()
    assert dataset.to_pandas_dataframe().a.tolist() == [1, 2]


def test_register_pandas_dataframe_names_a_wrong_target(tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MLPIPE_RUNS_DIR", str(tmp_path / "runs"))
    with pytest.raises(ValidationError) as caught:
        TabularDatasetFactory.register_pandas_dataframe(pd.DataFrame({"a": [1]}), "data_mm", "x")
    [problem] = caught.value.diagnostics
    assert problem.key_path == "register_pandas_dataframe.target"
    assert problem.location is not None and problem.location.file == __file__
