"""pipeline_job.outputs.x.type / .mode / .path set on the built job (azureml-examples 1g)."""
from azure.ai.ml import Input, Output, dsl
from azure.ai.ml.constants import AssetTypes
from azure.ai.ml.parallel import RunFunction, parallel_run_function

score = parallel_run_function(
    name="score", inputs=dict(data=Input(type="uri_folder")),
    outputs=dict(out=Output(type=AssetTypes.MLTABLE), rows=Output(type="uri_folder")),
    input_data="${{inputs.data}}", mini_batch_size="5",
    task=RunFunction(code="./src", entry_script="score.py", environment="azureml:batch-env:1",
                     append_row_to="${{outputs.rows}}"))


@dsl.pipeline(default_compute="cpu-cluster")
def pipeline_outputs(data):
    step = score(data=data)
    return {"table": step.outputs.out, "rows": step.outputs.rows}


job = pipeline_outputs(data=Input(type="uri_folder", path="./src"))
job.outputs.rows.type = AssetTypes.URI_FILE
job.outputs["rows"].path = "azureml://datastores/workspaceblobstore/paths/rows.csv"
job.outputs.table.mode = "upload"
