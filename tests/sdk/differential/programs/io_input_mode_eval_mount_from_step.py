"""node.inputs.x.mode = EVAL_MOUNT on a step output (azureml-examples 1g)."""
from azure.ai.ml import Input, Output, dsl
from azure.ai.ml.constants import AssetTypes, InputOutputModes
from azure.ai.ml.parallel import RunFunction, parallel_run_function

first = parallel_run_function(
    name="first", inputs=dict(data=Input(type=AssetTypes.URI_FOLDER)),
    outputs=dict(out=Output(type=AssetTypes.MLTABLE)), input_data="${{inputs.data}}",
    mini_batch_size="5",
    task=RunFunction(code="./src", entry_script="score.py", environment="azureml:batch-env:1"))
second = parallel_run_function(
    name="second", inputs=dict(files=Input(type=AssetTypes.MLTABLE)),
    outputs=dict(out=Output(type=AssetTypes.URI_FOLDER)), input_data="${{inputs.files}}",
    mini_batch_size="1",
    task=RunFunction(code="./src", entry_script="score.py", environment="azureml:batch-env:1"))


@dsl.pipeline(default_compute="cpu-cluster")
def eval_mount(data):
    a = first(data=data)
    b = second(files=a.outputs.out)
    b.inputs.files.mode = InputOutputModes.EVAL_MOUNT
    b.outputs.out.type = AssetTypes.MLTABLE
    return {"scored": b.outputs.out}


job = eval_mount(data=Input(type="uri_folder", path="./src"))
