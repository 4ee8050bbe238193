"""Sweep, Spark, AutoML, data transfer and import steps compiled: small copies of published
examples of each (azureml-examples, azure-ai-ml's test configurations) compile into their
plan steps, and the rules Azure applies to them reject a single mistake at its line."""

from __future__ import annotations

from pathlib import Path

import pytest

from mlpipe.compiler import check_pipeline
from mlpipe.plan import ExternalStep, SparkStep, SweepStep
from tests.compiler.support import line_of, write

TRAIN = """\
$schema: https://azuremlschemas.azureedge.net/latest/commandComponent.schema.json
type: command
name: train_model
inputs:
  data: {type: uri_folder}
  c_value: {type: number, default: 1.0}
  kernel: {type: string, default: rbf}
  degree: {type: integer, default: 3}
outputs:
  model_output: {type: mlflow_model}
code: ./src
environment: azureml://registries/azureml/environments/sklearn-1.5/labels/latest
command: >-
  python train.py --data ${{inputs.data}} --C ${{inputs.c_value}} --kernel ${{inputs.kernel}}
  --degree ${{inputs.degree}} --model_output ${{outputs.model_output}}
"""

# azureml-examples cli/jobs/pipelines-with-components/pipeline_with_hyperparameter_sweep
SWEEP = """\
$schema: https://azuremlschemas.azureedge.net/latest/pipelineJob.schema.json
type: pipeline
settings:
  default_compute: azureml:cpu-cluster
jobs:
  sweep_step:
    type: sweep
    inputs:
      data: {type: uri_file, path: wasbs://datasets@azuremlexamples.blob.core.windows.net/iris.csv}
      degree: 3
    outputs:
      model_output:
    sampling_algorithm: random
    trial: ./train.yml
    search_space:
      c_value: {type: uniform, min_value: 0.5, max_value: 0.9}
      kernel: {type: choice, values: ["rbf", "linear", "poly"]}
    objective: {goal: minimize, primary_metric: training_f1_score}
    limits: {max_total_trials: 5, max_concurrent_trials: 3, timeout: 7200}
"""

SPARK_COMPONENT = """\
$schema: https://azuremlschemas.azureedge.net/latest/sparkComponent.schema.json
name: titanic_spark_component
type: spark
version: 1
code: ./src
entry:
  file: titanic.py
inputs:
  titanic_data: {type: uri_file, mode: direct}
outputs:
  wrangled_data: {type: uri_folder, mode: direct}
args: >-
  --titanic_data ${{inputs.titanic_data}}
  --wrangled_data ${{outputs.wrangled_data}}
conf:
  spark.driver.cores: 1
  spark.driver.memory: 2g
  spark.executor.cores: 2
  spark.executor.memory: 2g
  spark.dynamicAllocation.enabled: True
  spark.dynamicAllocation.minExecutors: 1
  spark.dynamicAllocation.maxExecutors: 4
"""

# azureml-examples cli/jobs/spark/serverless-spark-pipeline-user-identity.yml
SPARK = """\
$schema: https://azuremlschemas.azureedge.net/latest/pipelineJob.schema.json
type: pipeline
jobs:
  spark_job:
    type: spark
    component: ./spark-job-component.yml
    inputs:
      titanic_data:
        type: uri_file
        path: azureml://datastores/workspaceblobstore/paths/data/titanic.csv
        mode: direct
    outputs:
      wrangled_data:
        type: uri_folder
        path: azureml://datastores/workspaceblobstore/paths/data/wrangled/
        mode: direct
    identity:
      type: user_identity
    resources:
      instance_type: standard_e8s_v3
      runtime_version: "3.4"
"""

# azureml-examples cli/jobs/pipelines/automl/cli-automl-classification-task-bankmarketing-pipeline
AUTOML = """\
$schema: https://azuremlschemas.azureedge.net/latest/pipelineJob.schema.json
type: pipeline
inputs:
  classification_train_data: {type: mltable, path: azureml:bank_train:1}
settings:
  default_compute: azureml:cpu-cluster
jobs:
  classification_node:
    type: automl
    task: classification
    primary_metric: accuracy
    limits: {max_trials: 1, max_concurrent_trials: 1}
    target_column_name: "y"
    training_data: ${{parent.inputs.classification_train_data}}
    featurization: {mode: "auto"}
    outputs:
      best_model: {type: mlflow_model}
  register_model_node:
    type: command
    code: ./src
    environment: azureml:env:1
    inputs:
      model_input_path: ${{parent.jobs.classification_node.outputs.best_model}}
    command: python register.py --model ${{inputs.model_input_path}}
"""

# azure-ai-ml tests/test_configs/pipeline_jobs/data_transfer (import and export)
DATA_TRANSFER = """\
$schema: http://azureml/sdk-2-0/PipelineJob.json
type: pipeline
settings:
  default_compute: azureml:serverless
inputs:
  query_source_snowflake: select * from TPCH_SF1000.PARTSUPP limit 10
  table_name: dbo.Persons
jobs:
  snowflake_blob:
    type: data_transfer
    task: import_data
    source:
      type: database
      query: ${{parent.inputs.query_source_snowflake}}
      connection: azureml:my_snowflake_connection
    outputs:
      sink:
        type: mltable
        path: azureml://datastores/workspaceblobstore_sas/paths/importjob/${{name}}/snowflake/
  blob_azuresql:
    type: data_transfer
    task: export_data
    inputs:
      source: ${{parent.jobs.snowflake_blob.outputs.sink}}
    sink:
      type: database
      table_name: ${{parent.inputs.table_name}}
      connection: azureml:my_export_azuresqldb_connection
"""

IMPORT = """\
$schema: https://azuremlschemas.azureedge.net/latest/pipelineJob.schema.json
type: pipeline
settings:
  default_compute: azureml:cpu-cluster
jobs:
  import_region:
    type: import
    source: {type: azuresqldb, connection: azureml:my_sql, query: select * from region}
    output: {type: mltable, path: azureml://datastores/workspaceblobstore/paths/region/}
  count:
    type: command
    code: ./src
    environment: azureml:env:1
    inputs:
      table: ${{parent.jobs.import_region.outputs.output}}
    command: python count.py ${{inputs.table}}
"""


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "proj"
    (root / "src").mkdir(parents=True)
    for name in ("train.py", "titanic.py", "register.py", "count.py"):
        (root / "src" / name).write_text("print('hi')\n")
    write(root, "train.yml", TRAIN)
    write(root, "spark-job-component.yml", SPARK_COMPONENT)
    return root


def _check(root: Path, text: str, tmp_path: Path):  # noqa: ANN202
    path = write(root, "pipeline.yml", text)
    return path, check_pipeline(path, runs_dir=tmp_path / "runs", submission=True)


def test_a_published_sweep_compiles_into_a_sweep_step(project: Path, tmp_path: Path) -> None:
    _path, result = _check(project, SWEEP, tmp_path)
    assert result.errors == [], [d.format() for d in result.errors]
    step = result.plan.step("sweep_step")
    assert isinstance(step, SweepStep)
    assert [(p.name, p.kind) for p in step.search_space] == [("c_value", "uniform"),
                                                             ("kernel", "choice")]
    assert step.limits.max_total_trials == 5 and step.objective.goal == "minimize"
    assert "${{inputs.c_value}}" in step.trial_command
    assert step.inputs["degree"].value == 3 and step.code_dir.endswith("src")


def test_a_published_spark_step_compiles_into_a_spark_step(project: Path, tmp_path: Path) -> None:
    _path, result = _check(project, SPARK, tmp_path)
    assert result.errors == [], [d.format() for d in result.errors]
    step = result.plan.step("spark_job")
    assert isinstance(step, SparkStep) and step.entry_file == "titanic.py"
    assert step.args[0] == "--titanic_data" and step.conf["spark.executor.cores"] == "2"


def test_published_automl_data_transfer_and_import_steps_compile(project: Path,
                                                                 tmp_path: Path) -> None:
    for text, name, kind, task in ((AUTOML, "classification_node", "automl", "classification"),
                                   (DATA_TRANSFER, "snowflake_blob", "data_transfer",
                                    "import_data"),
                                   (IMPORT, "import_region", "import", None)):
        _path, result = _check(project, text, tmp_path)
        assert result.errors == [], [d.format() for d in result.errors]
        step = result.plan.step(name)
        assert isinstance(step, ExternalStep) and (step.kind, step.task) == (kind, task)
    _path, result = _check(project, AUTOML, tmp_path)
    assert result.plan.step("classification_node").inputs["training_data"].remote == \
        "azureml:bank_train:1"
    assert result.plan.step("register_model_node").depends_on == ("classification_node",)


# (document, old, new, key path, message start, line needle)
MISTAKES = {
    "sweep: a search space entry the trial does not declare": (
        SWEEP, "      kernel:", "      kernal:", "jobs.sweep_step.search_space.kernal",
        "search space entry 'kernal' names no input of the trial", "kernal:"),
    "sweep: grid over a uniform": (
        SWEEP, "sampling_algorithm: random", "sampling_algorithm: grid",
        "jobs.sweep_step.search_space.c_value.type",
        "grid sampling supports only choice, got 'uniform'", "c_value:"),
    "sweep: bayesian with early termination": (
        SWEEP, "sampling_algorithm: random",
        "sampling_algorithm: bayesian\n    early_termination: {type: median_stopping}",
        "jobs.sweep_step.early_termination",
        "bayesian sampling does not support early termination", "early_termination"),
    "sweep: a bandit policy with both slacks (HyperDrive's BanditPolicy wants exactly one)": (
        SWEEP, "sampling_algorithm: random",
        "sampling_algorithm: random\n    early_termination: {type: bandit, slack_factor: 40, "
        "slack_amount: 3, evaluation_interval: 100}",
        "jobs.sweep_step.early_termination",
        "a bandit policy takes slack_factor or slack_amount, not both", "early_termination"),
    "sweep: min above max": (
        SWEEP, "min_value: 0.5, max_value: 0.9", "min_value: 0.9, max_value: 0.5",
        "jobs.sweep_step.search_space.c_value", "min_value 0.9 is greater than max_value 0.5",
        "c_value:"),
    "sweep: a trial that is not a command component": (
        SWEEP, "trial: ./train.yml", "trial: ./spark-job-component.yml",
        "jobs.sweep_step.trial", "its trial must be a command component", "trial:"),
    "spark: neither resources nor compute": (
        SPARK, "    resources:\n      instance_type: standard_e8s_v3\n      runtime_version: "
               "\"3.4\"\n", "", "jobs.spark_job",
        "a Spark step needs resources (serverless Spark", "  spark_job:"),
    "spark: resources and a compute": (
        SPARK, "    identity:", "    compute: azureml:my-pool\n    identity:",
        "jobs.spark_job.resources", "a Spark step takes either resources", "resources:"),
    "spark: an incomplete conf": (
        SPARK, "    identity:", "    conf: {spark.dynamicAllocation.enabled: False}\n    identity:",
        "jobs.spark_job.conf", "spark.executor.instances must be set in conf", "conf:"),
    "automl: a binding to no pipeline input": (
        AUTOML, "${{parent.inputs.classification_train_data}}", "${{parent.inputs.train}}",
        "jobs.classification_node.training_data",
        "${{parent.inputs.train}} names no pipeline input", "training_data"),
    "automl: an output it does not declare": (
        AUTOML, "outputs.best_model}}", "outputs.model}}",
        "jobs.register_model_node.inputs.model_input_path",
        "${{parent.jobs.classification_node.outputs.model}} names no output", "model_input_path"),
    "automl: no compute": (
        AUTOML, "settings:\n  default_compute: azureml:cpu-cluster\n", "",
        "jobs.classification_node.compute", "step 'classification_node' has no compute",
        "  classification_node:"),
    "data transfer: a query bound to no input": (
        DATA_TRANSFER, "${{parent.inputs.query_source_snowflake}}", "${{parent.inputs.query}}",
        "jobs.snowflake_blob.source.query", "${{parent.inputs.query}} names no pipeline input",
        "query:"),
    "import: an output read that it does not have": (
        IMPORT, "outputs.output}}", "outputs.data}}", "jobs.count.inputs.table",
        "${{parent.jobs.import_region.outputs.data}} names no output", "table:"),
}


@pytest.mark.parametrize("case", sorted(MISTAKES))
def test_a_single_mistake_is_rejected(project: Path, tmp_path: Path, case: str) -> None:
    text, old, new, key_path, message, needle = MISTAKES[case]
    assert old in text
    path, result = _check(project, text.replace(old, new, 1), tmp_path)
    found = [d for d in result.errors if d.key_path == key_path and d.message.startswith(message)]
    assert found, [d.format() for d in result.errors]
    assert found[0].location.line == line_of(path, needle)


def test_spark_data_must_be_direct_unless_the_component_declares_it(project: Path,
                                                                   tmp_path: Path) -> None:
    (project / "spark-job-component.yml").write_text(
        SPARK_COMPONENT.replace("titanic_data: {type: uri_file, mode: direct}",
                                "titanic_data: {type: uri_file}"))
    _path, result = _check(project, SPARK, tmp_path)
    assert result.errors == []  # the step gives mode: direct
    path, result = _check(project, SPARK.replace("        mode: direct\n    outputs:",
                                                 "        mode: ro_mount\n    outputs:"), tmp_path)
    [error] = result.errors
    assert error.message == ("Input 'titanic_data' is using 'ro_mount' mode, only 'direct' is "
                             "supported for Spark job")
    assert error.key_path == "jobs.spark_job.inputs.titanic_data"
    assert error.location.line == line_of(path, "titanic_data:")


def test_a_spark_component_checked_on_its_own_needs_its_entry_file(project: Path) -> None:
    from mlpipe.compiler.component_check import validate_component

    path = project / "spark-job-component.yml"
    assert [d for d in validate_component(path) if d.severity == "error"] == []
    path.write_text(SPARK_COMPONENT.replace("file: titanic.py", "file: titanc.py"))
    [error] = [d for d in validate_component(path) if d.severity == "error"]
    assert error.message.startswith("entry file 'titanc.py' not found in code folder")
    assert error.hint == "did you mean 'titanic.py'?" and error.location.line == 7


def test_a_sweep_output_its_trial_does_not_declare_is_dropped_with_a_warning(
        project: Path, tmp_path: Path) -> None:
    """As azure-ai-ml drops it when the job is submitted."""
    _, result = _check(project, SWEEP.replace("      model_output:", "      model:", 1), tmp_path)
    assert not result.errors, [d.format() for d in result.errors]
    (warning,) = [d for d in result.warnings if d.key_path == "jobs.sweep_step.outputs.model"]
    assert warning.message.startswith("component 'train_model' has no output 'model'")
    assert "declared outputs: model_output" in warning.message
