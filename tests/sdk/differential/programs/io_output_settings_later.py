"""node.outputs.x.mode / .path / .type set after the call (azureml-examples 3a)."""
from azure.ai.ml import Input, Output, dsl
from azure.ai.ml.constants import AssetTypes, InputOutputModes
from azure.ai.ml.parallel import RunFunction, parallel_run_function

score = parallel_run_function(
    name="score", inputs=dict(data=Input(type="uri_folder")),
    outputs=dict(out=Output(type=AssetTypes.URI_FOLDER), extra=Output(type="uri_folder")),
    input_data="${{inputs.data}}", mini_batch_size="5",
    task=RunFunction(code="./src", entry_script="score.py", environment="azureml:batch-env:1",
                     append_row_to="${{outputs.out}}"))


@dsl.pipeline(default_compute="cpu-cluster")
def outputs_later(data):
    step = score(data=data)
    step.outputs.out.type = AssetTypes.URI_FILE
    step.outputs.out.path = "azureml://datastores/${{default_datastore}}/paths/${{name}}/rows.csv"
    step.outputs.extra.mode = InputOutputModes.UPLOAD


job = outputs_later(data=Input(type="uri_folder", path="./src"))
