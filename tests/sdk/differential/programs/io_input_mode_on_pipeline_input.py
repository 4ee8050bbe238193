"""node.inputs.x.mode set on an input bound to a pipeline input."""
from azure.ai.ml import Input, Output, dsl
from azure.ai.ml.constants import InputOutputModes
from azure.ai.ml.parallel import RunFunction, parallel_run_function

score = parallel_run_function(
    name="score", inputs=dict(data=Input(type="uri_folder")),
    outputs=dict(out=Output(type="uri_folder")), input_data="${{inputs.data}}",
    mini_batch_size="5",
    task=RunFunction(code="./src", entry_script="score.py", environment="azureml:batch-env:1"))


@dsl.pipeline(default_compute="cpu-cluster")
def mode_on_pipeline_input(data):
    step = score(data=data)
    step.inputs.data.mode = InputOutputModes.DOWNLOAD
    return {"scored": step.outputs.out}


job = mode_on_pipeline_input(data=Input(type="uri_folder", path="./src", mode="ro_mount"))
