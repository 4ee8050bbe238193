"""The import hook (mlpipe/import_mirrors.py): Azure's module names resolve to mlpipe's
mirrors in every process mlpipe starts when the real packages are absent, a real package
is left alone (unless run-script forces the mirrors), ``MLPIPE_IMPORT_MIRRORS=0`` turns it
off; a command step's Python gets the hook and still runs the user's own sitecustomize."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from mlpipe.import_mirrors import ENV_FLAG, STARTUP_DIR, child_environment, mirror_of
from tests.conftest import REPO, run_cli


def _python(code: str, *, flag: str | None = None, path: tuple[Path, ...] = ()
            ) -> subprocess.CompletedProcess[str]:
    """``python -c code`` in a fresh process (``flag``: its MLPIPE_IMPORT_MIRRORS)."""
    env = {k: v for k, v in os.environ.items() if k != ENV_FLAG}
    if flag is not None:
        env[ENV_FLAG] = flag
    env["PYTHONPATH"] = os.pathsep.join([*map(str, path), str(REPO)])
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env,
                          timeout=120)


@pytest.fixture(scope="module")
def azure_absent() -> None:
    # the mirrored families' real packages (azure-core, azure-identity and azure-storage-blob,
    # which the azure extra installs, leave azure.ai.ml and azureml mirrored)
    probe = _python("import importlib.util as u, sys\n"
                    "def real(name):\n"
                    "    try:\n"
                    "        return u.find_spec(name) is not None\n"
                    "    except ModuleNotFoundError:\n"
                    "        return False\n"
                    "sys.exit(any(real(n) for n in ('azureml', 'azure.ai.ml')))")
    if probe.returncode != 0:
        pytest.skip("a real azureml / azure package is installed here")


V1_AND_V2 = """\
import mlpipe
from azureml.core import Model, Run
from azureml.core.compute_target import ComputeTargetException
from azureml.exceptions import UserErrorException
from azureml.data import OutputFileDatasetConfig
from azureml.data.datapath import DataPath, DataPathComputeBinding
from azureml.pipeline.core import Pipeline, PipelineData
from azureml.pipeline.steps import ParallelRunStep, PythonScriptStep
from azure.ai.ml import Input, MLClient
from azure.ai.ml.dsl import pipeline
print(Run.__module__, Input.__module__, PythonScriptStep.__module__)
"""


def test_names_resolve_wherever_mlpipe_is_imported(azure_absent: None) -> None:
    proc = _python(V1_AND_V2)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["mlpipe.sdk.v1.run_context", "mlpipe.sdk.io",
                                   "mlpipe.sdk.v1.steps"]
    off = _python(V1_AND_V2, flag="0")
    assert off.returncode == 1 and "No module named 'azureml'" in off.stderr


def test_version_strings_scripts_print_resolve(azure_absent: None) -> None:
    """Published notebooks start with ``print(azure.ai.ml.__version__)`` or
    ``from azure.ai.ml._version import VERSION`` (v1: ``azureml.core.VERSION``)."""
    proc = _python("import mlpipe, azure.ai.ml, azureml.core\n"
                   "from azure.ai.ml._version import VERSION\n"
                   "print(azure.ai.ml.__version__, VERSION, azureml.core.VERSION)")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["1.35.2+mlpipe.local"] * 2 + ["1.0.0+mlpipe.local"]


def test_dataset_factories_are_dataset_file_and_tabular(azure_absent: None) -> None:
    """AutoML and many-models notebooks import azureml's factory classes by name
    (``from azureml.data.dataset_factory import TabularDatasetFactory``): they are the
    mirror's ``Dataset.Tabular`` / ``Dataset.File``, as in azureml."""
    proc = _python("import mlpipe\n"
                   "from azureml.core import Dataset\n"
                   "from azureml.data.dataset_factory import FileDatasetFactory, "
                   "TabularDatasetFactory\n"
                   "print(TabularDatasetFactory is Dataset.Tabular, FileDatasetFactory is "
                   "Dataset.File)")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["True", "True"]


def test_a_real_package_is_left_alone_unless_forced(tmp_path: Path) -> None:
    fake = tmp_path / "site" / "azureml" / "core"
    fake.mkdir(parents=True)
    (fake / "__init__.py").write_text("REAL = True\n")
    code = "import mlpipe, azureml.core as c; print(getattr(c, 'REAL', False), c.__name__)"
    assert _python(code, path=(tmp_path / "site",)).stdout.split() == ["True", "azureml.core"]
    forced = _python(code + "; from azureml.core import Run; print(Run.__module__)",
                     flag="1", path=(tmp_path / "site",))
    assert forced.stdout.split() == ["False", "azureml.core", "mlpipe.sdk.v1.run_context"]


def test_unmirrored_submodule_is_named(azure_absent: None) -> None:
    proc = _python("import mlpipe, azure.ai.ml.data_transfer")
    assert proc.returncode == 1
    assert "azure.ai.ml.data_transfer has no local mirror in mlpipe (mirrored: azure.ai.ml, " \
        in proc.stderr
    assert mirror_of("azureml.pipeline.core.graph") == "mlpipe.v1"
    assert mirror_of("azureml.train.automl") is None
    # a class the mirror lacks is "cannot import name", not a module of that name
    assert mirror_of("azureml.core.NoSuchClass") is None
    missing = _python("import mlpipe\nfrom azureml.core import NoSuchClass")
    assert "ImportError: cannot import name 'NoSuchClass' from 'azureml.core'" in missing.stderr


SWEEP_NOTEBOOK = """\
from azure.ai.ml import command
from azure.ai.ml.automl import classification, ClassificationPrimaryMetrics
from azure.ai.ml.sweep import BanditPolicy, Choice, SweepJob, Uniform
print("imported", ClassificationPrimaryMetrics.ACCURACY)
policy = BanditPolicy(slack_factor=0.15, evaluation_interval=1)
print("policy", policy.slack_factor, policy.evaluation_interval, policy.delay_evaluation)
job = SweepJob(trial=command(command="python train.py"))
"""


def test_cloud_only_builders_import_and_stop_at_first_use(tmp_path: Path,
                                                          azure_absent: None) -> None:
    """azure.ai.ml.automl imports as published notebooks write it and the first call is one
    NotAvailableLocally line saying what to do; azure.ai.ml.sweep's classes are real, but a
    SweepJob made by hand stops the same way (sweeps are made with node.sweep(...))."""
    script = tmp_path / "sweep.py"
    script.write_text(SWEEP_NOTEBOOK)
    proc = run_cli("run-script", str(script), cwd=tmp_path)
    assert proc.returncode == 1
    assert proc.stdout.splitlines() == [
        "imported <azure.ai.ml.automl.ClassificationPrimaryMetrics.ACCURACY: not available "
        "locally>", "policy 0.15 1 0"]
    (line,) = proc.stderr.strip().splitlines()
    assert "NotAvailableLocally: azure.ai.ml.sweep.SweepJob() needs an Azure ML workspace" \
        in line and "node(lr=Uniform(0.01, 0.1)).sweep(" in line and "sweep.py:7" in line
    automl = _python("import mlpipe\nfrom azure.ai.ml import automl\nautoml.regression()")
    assert "NotAvailableLocally: azure.ai.ml.automl.regression() needs" in automl.stderr
    assert "--skip-step NAME" in automl.stderr


# the many-models AutoML notebooks' imports (auto-ml-forecasting-backtest-many-models.ipynb)
V1_AUTOML = """\
from azureml.train.automl.runtime._many_models.many_models_parameters import (
    ManyModelsTrainParameters,
)
from azureml.automl.core.forecasting_parameters import ForecastingParameters
from azureml.train.automl.automlconfig import AutoMLConfig
from azureml.contrib.automl.pipeline.steps import AutoMLPipelineBuilder
print("imported")
forecasting_parameters = ForecastingParameters(time_column_name="date", forecast_horizon=6)
"""


def test_v1_automl_imports_and_stops_at_first_use(tmp_path: Path, azure_absent: None) -> None:
    """azureml v1's AutoML packages (every module below them) import as the notebooks write
    them; the first call is one NotAvailableLocally line naming it, at the user's line."""
    script = tmp_path / "automl.py"
    script.write_text(V1_AUTOML)
    proc = run_cli("run-script", str(script), cwd=tmp_path)
    assert proc.returncode == 1 and proc.stdout.splitlines() == ["imported"]
    (line,) = proc.stderr.strip().splitlines()
    assert "NotAvailableLocally: azureml.automl.core.forecasting_parameters." \
        "ForecastingParameters() needs an Azure ML workspace" in line
    assert "AutoML trains its models in Azure ML only" in line and "automl.py:8" in line
    builder = _python("import mlpipe\nfrom azureml.contrib.automl.pipeline.steps import "
                      "AutoMLPipelineBuilder as B\nB.get_many_models_train_steps(node_count=2)")
    assert "NotAvailableLocally: azureml.contrib.automl.pipeline.steps.AutoMLPipelineBuilder." \
        "get_many_models_train_steps() needs" in builder.stderr
    # the other azureml.contrib packages stay unmirrored
    assert mirror_of("azureml.contrib.pipeline.steps") == "mlpipe.v1"
    assert "No module named 'azureml.contrib.nothing'" in _python(
        "import mlpipe, azureml.contrib.nothing").stderr


def test_child_environment_puts_the_startup_folder_first() -> None:
    env = child_environment({"PYTHONPATH": f"/a{os.pathsep}{STARTUP_DIR}"})
    assert env["PYTHONPATH"].split(os.pathsep) == [STARTUP_DIR, "/a"]
    assert "PYTHONPATH" not in child_environment({ENV_FLAG: "0"})


COMMAND_JOB = """\
type: pipeline
settings:
  default_compute: azureml:cpu-cluster
jobs:
  hello:
    type: command
    code: ./src
    command: python hello.py
    environment: azureml:env:1
"""

HELLO = """\
from azureml.core import Run
import os
run = Run.get_context()
print("run", run.id, "parent", run.parent.id,
      "user site", os.environ.get("USER_SITE_PID") == str(os.getpid()))
"""


@pytest.mark.slow
def test_a_command_steps_python_resolves_azureml_and_keeps_its_sitecustomize(
        tmp_path: Path, azure_absent: None) -> None:
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "hello.py").write_text(HELLO)
    (tmp_path / "pipeline.yml").write_text(COMMAND_JOB)
    user_site = tmp_path / "user_site"
    user_site.mkdir()
    (user_site / "sitecustomize.py").write_text(  # ran in this very process, not inherited
        "import os\nos.environ['USER_SITE_PID'] = str(os.getpid())\n")
    proc = run_cli("job", "create", "-f", str(tmp_path / "pipeline.yml"), "-n", "hook",
                   "--runs-dir", str(tmp_path / "runs"), "--no-progress",
                   env={"PYTHONPATH": os.pathsep.join([str(user_site), str(REPO)])})
    assert proc.returncode == 0, proc.stdout + proc.stderr
    log = (tmp_path / "runs" / "hook" / "hello" / "logs" / "user" / "std_log.txt").read_text()
    assert log.strip() == "run hook_hello parent hook user site True"
    record = json.loads((tmp_path / "runs" / "hook" / "job.json").read_text())
    assert record["steps"]["hello"]["status"] == "completed"
