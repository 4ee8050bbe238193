"""Every step type of azure-ai-ml's pipeline job: an accepted step, and a single mistake in it
rejected with its message, key path and line (the models of mlpipe/schema)."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from mlpipe.schema import load_component_data, load_pipeline, load_yaml_text
from mlpipe.schema.automl import ClassificationNode, ImageObjectDetectionNode, TextNerNode
from mlpipe.schema.data_transfer import (
    DataTransferCopyNode,
    DataTransferExportNode,
    DataTransferImportNode,
)
from mlpipe.schema.import_job import ImportNode
from mlpipe.schema.spark import SparkNode
from mlpipe.schema.sweep import SweepNode

HEAD = """\
$schema: https://azuremlschemas.azureedge.net/latest/pipelineJob.schema.json
type: pipeline
settings:
  default_compute: azureml:cpu-cluster
jobs:
  step:
"""

SWEEP = """\
type: sweep
trial: ./train.yml
sampling_algorithm: random
search_space:
  c_value: {type: uniform, min_value: 0.5, max_value: 0.9}
  kernel: {type: choice, values: [rbf, linear, poly]}
  coef0: {type: loguniform, min_value: -3, max_value: 0}
  degree: {type: randint, upper: 5}
  tol: {type: qnormal, mu: 1, sigma: 0.2, q: 0.1}
objective: {goal: minimize, primary_metric: training_f1_score}
limits: {max_total_trials: 5, max_concurrent_trials: 3, timeout: 7200, trial_timeout: 600}
early_termination: {type: bandit, evaluation_interval: 2, delay_evaluation: 1, slack_factor: 0.1}
"""

SPARK = """\
type: spark
component: ./spark-job-component.yml
inputs:
  titanic_data: {type: uri_file, path: azureml://datastores/workspaceblobstore/paths/t.csv, mode: direct}
identity: {type: user_identity}
resources: {instance_type: Standard_E8S_V3, runtime_version: "3.4"}
conf:
  spark.driver.cores: 1
  spark.executor.instances: 2
"""

AUTOML = """\
type: automl
task: classification
primary_metric: accuracy
limits: {max_trials: 1, max_concurrent_trials: 1}
target_column_name: y
training_data: ${{parent.jobs.prep.outputs.train}}
featurization: {mode: auto}
training: {enable_stack_ensemble: false, enable_vote_ensemble: false}
outputs:
  best_model: {type: mlflow_model}
"""

COPY = """\
type: data_transfer
task: copy_data
component: ./copy_files.yaml
data_copy_mode: merge_with_overwrite
inputs:
  folder1: ${{parent.inputs.cosmos_folder}}
"""

IMPORT_DATA = """\
type: data_transfer
task: import_data
source:
  type: database
  query: select * from TPCH_SF1000.PARTSUPP limit 10
  connection: azureml:my_snowflake_connection
outputs:
  sink: {type: mltable, path: azureml://datastores/workspaceblobstore/paths/out/}
"""

EXPORT_DATA = """\
type: data_transfer
task: export_data
inputs:
  source: {type: uri_file, path: ./data/a.parquet}
sink:
  type: database
  table_name: dbo.Persons
  connection: azureml:my_export_connection
"""

IMPORT = """\
type: import
source: {type: azuresqldb, connection: azureml:my_sql, query: select * from region}
output: {type: mltable, path: azureml://datastores/workspaceblobstore/paths/region/}
"""

COMMAND = """\
type: Command
command: python train.py
code: ./src
environment: azureml:env:1
distribution: {type: pytorch, process_count_per_instance: 2}
limits: {timeout: 3600}
queue_settings: {job_tier: standard, priority: high}
services:
  my_jupyter: {type: jupyter_lab, port: 8888, nodes: all}
identity: {type: managed, client_id: abc}
resources: {instance_count: 2, instance_type: Standard_NC6, shm_size: 2g, docker_args: [--ipc=host]}
"""

VALID = {"sweep": (SWEEP, SweepNode), "spark": (SPARK, SparkNode),
         "automl": (AUTOML, ClassificationNode), "copy_data": (COPY, DataTransferCopyNode),
         "import_data": (IMPORT_DATA, DataTransferImportNode),
         "export_data": (EXPORT_DATA, DataTransferExportNode), "import": (IMPORT, ImportNode)}


def _load(tmp_path: Path, step: str):  # noqa: ANN202
    path = tmp_path / "pipeline.yml"
    path.write_text(HEAD + textwrap.indent(step, "    "))
    return path, load_pipeline(path)


def _line(path: Path, needle: str) -> int:
    return next(n for n, line in enumerate(path.read_text().splitlines(), 1) if needle in line)


@pytest.mark.parametrize("kind", sorted(VALID))
def test_a_published_step_of_each_type_is_accepted(tmp_path: Path, kind: str) -> None:
    text, model = VALID[kind]
    _path, loaded = _load(tmp_path, text)
    assert loaded.errors == [], [d.format() for d in loaded.errors]
    assert isinstance(loaded.model.jobs["step"], model)


def test_command_fields_and_a_capitalised_type_are_accepted(tmp_path: Path) -> None:
    _path, loaded = _load(tmp_path, COMMAND)
    assert loaded.errors == [], [d.format() for d in loaded.errors]
    step = loaded.model.jobs["step"]
    assert step.type == "command" and step.distribution.process_count_per_instance == 2


# (step text, old, new, key path, message, hint, line needle)
MISTAKES = {
    "sweep sampling algorithm": (SWEEP, "sampling_algorithm: random", "sampling_algorithm: randm",
                                 "jobs.step.sampling_algorithm",
                                 "must be one of random, grid, bayesian, got string 'randm'",
                                 "did you mean 'random'?", "sampling_algorithm"),
    "sweep search space type": (SWEEP, "type: randint", "type: randnt",
                                "jobs.step.search_space.degree.type",
                                "unknown search space type 'randnt': must be one of choice, "
                                "uniform, loguniform, quniform, qloguniform, normal, lognormal, "
                                "qnormal, qlognormal, randint", "did you mean 'randint'?",
                                "degree:"),
    "sweep goal": (SWEEP, "goal: minimize", "goal: lowest", "jobs.step.objective.goal",
                   "must be one of minimize, maximize, got string 'lowest'", None, "objective"),
    "sweep limits": (SWEEP, "max_total_trials: 5", "max_total_trial: 5",
                     "jobs.step.limits.max_total_trial", "unknown key 'max_total_trial'",
                     "did you mean 'max_total_trials'?", "limits"),
    "sweep policy": (SWEEP, "type: bandit", "type: bandits", "jobs.step.early_termination.type",
                     "unknown early termination policy type 'bandits': must be one of bandit, "
                     "median_stopping, truncation_selection", "did you mean 'bandit'?",
                     "early_termination"),
    "sweep without objective": (SWEEP, "objective: {goal: minimize, primary_metric: "
                                       "training_f1_score}\n", "", "jobs.step.objective",
                                "required key 'objective' is missing", None, "  step:"),
    "spark instance type": (SPARK, "Standard_E8S_V3", "Standard_E9S_V3",
                            "jobs.step.resources.instance_type",
                            "must be one of standard_e4s_v3, standard_e8s_v3, standard_e16s_v3, "
                            "standard_e32s_v3, standard_e64s_v3, got string 'Standard_E9S_V3'",
                            "did you mean 'standard_e8s_v3'?", "resources"),
    "spark identity": (SPARK, "user_identity", "user", "jobs.step.identity.type",
                       "unknown identity type 'user': must be one of managed, aml_token, "
                       "user_identity, managed_identity", None, "identity"),
    "automl task": (AUTOML, "task: classification", "task: clasification", "jobs.step.task",
                    "unknown AutoML task 'clasification': must be one of classification, "
                    "regression, forecasting, image_classification, "
                    "image_classification_multilabel, image_object_detection, "
                    "image_instance_segmentation, text_classification, "
                    "text_classification_multilabel, text_ner", "did you mean 'classification'?",
                    "task:"),
    "automl primary metric": (AUTOML, "primary_metric: accuracy", "primary_metric: acuracy",
                              "jobs.step.primary_metric",
                              "must be one of auc_weighted, accuracy, norm_macro_recall, "
                              "average_precision_score_weighted, precision_score_weighted, got "
                              "string 'acuracy'", "did you mean 'accuracy'?", "primary_metric"),
    "automl without target": (AUTOML, "target_column_name: y\n", "",
                              "jobs.step.target_column_name",
                              "required key 'target_column_name' is missing", None, "  step:"),
    "copy mode": (COPY, "merge_with_overwrite", "merge", "jobs.step.data_copy_mode",
                  "must be one of merge_with_overwrite, fail_if_conflict, got string 'merge'",
                  None, "data_copy_mode"),
    "data transfer task": (COPY, "task: copy_data", "task: copy", "jobs.step.task",
                           "unknown data transfer task 'copy': must be one of copy_data, "
                           "import_data, export_data", "did you mean 'copy_data'?", "task:"),
    "import_data output": (IMPORT_DATA, "  sink:", "  sunk:", "jobs.step",
                           "outputs of task type import_data must be exactly one output called "
                           "sink, got sunk", None, "  step:"),
    "export_data source": (EXPORT_DATA, "type: database", "type: db", "jobs.step.sink.type",
                           "unknown data store type 'db': must be one of database, file_system",
                           None, "type: db"),
    "import source": (IMPORT, "type: azuresqldb", "type: azuresql", "jobs.step.source.type",
                      "unknown import source type 'azuresql': must be one of azuresqldb, "
                      "azuresynapseanalytics, snowflake, s3", "did you mean 'azuresqldb'?",
                      "source:"),
    "command distribution": (COMMAND, "type: pytorch", "type: pytorh",
                             "jobs.step.distribution.type",
                             "unknown distribution type 'pytorh': must be one of pytorch, mpi, "
                             "tensorflow, ray", "did you mean 'pytorch'?", "distribution"),
    "command process count": (COMMAND, "process_count_per_instance: 2",
                              "process_count_per_instance: two",
                              "jobs.step.distribution.process_count_per_instance",
                              "must be an integer, got string 'two'", None, "distribution"),
    "command limits": (COMMAND, "timeout: 3600", "timeout: 0", "jobs.step.limits.timeout",
                       "must be in [1, int.max], got 0", None, "limits"),
    "command queue": (COMMAND, "job_tier: standard", "job_tier: standart",
                      "jobs.step.queue_settings.job_tier",
                      "must be one of spot, basic, standard, premium, null, got string "
                      "'standart'", "did you mean 'standard'?", "queue_settings"),
    "command service": (COMMAND, "type: jupyter_lab", "type: jupyter",
                        "jobs.step.services.my_jupyter.type",
                        "must be one of jupyter_lab, ssh, tensor_board, vs_code, got string "
                        "'jupyter'", "did you mean 'jupyter_lab'?", "my_jupyter"),
    "command resources": (COMMAND, "instance_count: 2", "instance_count: 0",
                          "jobs.step.resources.instance_count", "must be in [1, int.max], got 0",
                          None, "resources"),
}


@pytest.mark.parametrize("case", sorted(MISTAKES))
def test_a_single_mistake_is_rejected_at_its_key_and_line(tmp_path: Path, case: str) -> None:
    text, old, new, key_path, message, hint, needle = MISTAKES[case]
    assert old in text
    path, loaded = _load(tmp_path, text.replace(old, new, 1))
    errors = [(d.key_path, d.message, d.hint) for d in loaded.errors]
    assert (key_path, message, hint) in errors, errors
    [error] = [d for d in loaded.errors if d.key_path == key_path and d.message == message]
    assert error.location is not None and error.location.line == _line(path, needle)


@pytest.mark.parametrize(("kind", "cls"), [("image_object_detection", ImageObjectDetectionNode),
                                           ("text_ner", TextNerNode)])
def test_automl_tasks_are_chosen_by_task(tmp_path: Path, kind: str, cls: type) -> None:
    text = AUTOML.replace("task: classification", f"task: {kind}") \
        .replace("primary_metric: accuracy\n", "").replace("featurization: {mode: auto}\n", "") \
        .replace("training: {enable_stack_ensemble: false, enable_vote_ensemble: false}\n", "") \
        .replace("limits: {max_trials: 1, max_concurrent_trials: 1}\n", "")
    _path, loaded = _load(tmp_path, text)
    assert loaded.errors == [], [d.format() for d in loaded.errors]
    assert isinstance(loaded.model.jobs["step"], cls)


def test_component_files_of_the_new_types_are_components() -> None:
    spark = load_yaml_text(textwrap.dedent("""\
        $schema: https://azuremlschemas.azureedge.net/latest/sparkComponent.schema.json
        name: titanic_spark_component
        type: spark
        code: ./src
        entry: {file: titanic.py}
        py_files: [a.py, a.py]
        args: --titanic_data ${{inputs.titanic_data}}
        inputs: {titanic_data: {type: uri_file, mode: direct}}
        """), "spark.yml")
    [error] = load_component_data(spark.data, "spark.yml", spark.positions).errors
    assert error.key_path == "py_files" and error.location.line == 6
    assert error.message == "py_files must not contain duplicate entries, got 'a.py' more than once"
    copy = {"type": "data_transfer", "task": "copy_data", "name": "copy_files",
            "inputs": {"folder1": {"type": "uri_folder"}},
            "outputs": {"output_folder": {"type": "uri_folder"}}}
    assert load_component_data(copy, "copy.yml").errors == []
