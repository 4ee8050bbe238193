"""An azure-ai-ml script with only its imports changed runs locally, as a real script."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.conftest import REPO
from tests.sdk.support import make_file_project, write

# The azure-ai-ml version of these lines, for the record:
#   from azure.ai.ml import Input, MLClient, Output, dsl, load_component
#   from azure.ai.ml.constants import AssetTypes, InputOutputModes
#   from azure.ai.ml.entities import Environment, JobResourceConfiguration
#   from azure.ai.ml.parallel import RunFunction, parallel_run_function
#   from azure.identity import DefaultAzureCredential
IMPORTS = """\
from mlpipe import Input, MLClient, Output, dsl, load_component
from mlpipe.constants import AssetTypes, InputOutputModes
from mlpipe.entities import Environment, JobResourceConfiguration
from mlpipe.parallel import RunFunction, parallel_run_function
from mlpipe.identity import DefaultAzureCredential
"""

BODY = """\
credential = DefaultAzureCredential()
ml_client = MLClient(credential, "<SUBSCRIPTION_ID>", "<RESOURCE_GROUP>", "<AML_WORKSPACE_NAME>")

prepare_data = load_component(source="./components/prepare.yml")

file_batch_inference = parallel_run_function(
    name="file_batch_score",
    display_name="Batch Score with File Dataset",
    description="parallel component for batch score",
    inputs=dict(
        job_data_path=Input(
            type=AssetTypes.URI_FOLDER,
            description="The data to be split and scored in parallel",
        ),
        tag="azure",
    ),
    outputs=dict(job_output_path=Output(type=AssetTypes.URI_FILE, mode=InputOutputModes.RW_MOUNT)),
    input_data="${{inputs.job_data_path}}",
    instance_count=2,
    instance_type="Standard_D2_v2",
    max_concurrency_per_instance=1,
    mini_batch_size="1",
    mini_batch_error_threshold=1,
    retry_settings=dict(max_retries=2, timeout=60),
    logging_level="DEBUG",
    environment_variables={"FOO": "bar"},
    task=RunFunction(
        code="./src",
        entry_script="echo.py",
        program_arguments="--tag ${{inputs.tag}} --error_threshold 5 "
                          "--allowed_failed_percent 30 --task_overhead_timeout 1200",
        append_row_to="${{outputs.job_output_path}}",
        environment=Environment(
            image="mcr.microsoft.com/azureml/openmpi4.1.0-ubuntu20.04",
            conda_file="./src/environment_parallel.yml",
        ),
    ),
    is_deterministic=False,
)


@dsl.pipeline(
    default_compute="cpu-cluster",
    description="E2E parallel pipeline in the azure-ai-ml style",
)
def parallel_in_pipeline(pipeline_job_data_path, file_count: int = 4):
    prepare = prepare_data(raw=pipeline_job_data_path, count=file_count)
    batch_inference = file_batch_inference(job_data_path=prepare.outputs.prepared)
    batch_inference.resources = JobResourceConfiguration(instance_count=1)
    batch_inference.mini_batch_size = "2"
    batch_inference.compute = "cpu-cluster"
    return {"pipeline_job_out": batch_inference.outputs.job_output_path}


pipeline_job = parallel_in_pipeline(
    pipeline_job_data_path=Input(type=AssetTypes.URI_FOLDER, path="./data/"),
)
pipeline_job.settings.default_compute = "cpu-cluster"
pipeline_job.dump("./dumped_pipeline.yml")

returned_job = ml_client.jobs.create_or_update(pipeline_job, experiment_name="pipeline_samples")
ml_client.jobs.stream(returned_job.name)
print("STATUS", returned_job.status)
print("OUTPUT", returned_job.outputs["pipeline_job_out"])
"""

PREPARE_COMPONENT = """\
$schema: https://azuremlschemas.azureedge.net/latest/commandComponent.schema.json
type: command
name: prepare
inputs:
  raw: {type: uri_folder}
  count: {type: integer}
outputs:
  prepared: {type: uri_folder}
code: ../src
command: python prepare.py ${{inputs.raw}} ${{inputs.count}} ${{outputs.prepared}}
environment: azureml:AzureML-sklearn-1.0-ubuntu20.04-py38-cpu:1
"""

PREPARE_SCRIPT = """\
import os, shutil, sys
raw, count, out = sys.argv[1], int(sys.argv[2]), sys.argv[3]
for name in sorted(os.listdir(raw))[:count]:
    shutil.copy(os.path.join(raw, name), os.path.join(out, name))
"""


def test_azure_ai_ml_script_runs_with_only_imports_changed(tmp_path: Path) -> None:
    root = make_file_project(tmp_path / "proj", files=6)
    write(root / "components" / "prepare.yml", PREPARE_COMPONENT)
    write(root / "src" / "prepare.py", PREPARE_SCRIPT)
    script = write(root / "pipeline.py", IMPORTS + "\n" + BODY)
    env = {**os.environ, "PYTHONPATH": str(REPO), "MLPIPE_RUNS_DIR": str(tmp_path / "runs")}
    proc = subprocess.run([sys.executable, str(script)], cwd=root, env=env,
                          capture_output=True, text=True, timeout=240)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "STATUS completed" in proc.stdout
    output = Path(proc.stdout.split("OUTPUT ", 1)[1].strip())
    lines = sorted(output.read_text().splitlines())
    assert lines == [f"f{i:02d}.txt bar azure" for i in range(4)]
    record = json.loads(next((tmp_path / "runs").glob("*/job.json")).read_text())
    assert record["status"] == "completed"
    dumped = (root / "dumped_pipeline.yml").read_text()
    assert "instance_type: Standard_D2_v2" not in dumped  # replaced by the new resources
    assert "is_deterministic: false" in dumped and "component: file:./components/prepare.yml" \
        in dumped
    assert "mlpipe" not in BODY and "import" not in BODY  # only the imports are mlpipe's
