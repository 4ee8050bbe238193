"""node.inputs.x.mode = DIRECT on an input bound to another step's output."""
from azure.ai.ml import Input, Output, dsl
from azure.ai.ml.constants import AssetTypes, InputOutputModes
from azure.ai.ml.parallel import RunFunction, parallel_run_function

first = parallel_run_function(
    name="first", inputs=dict(data=Input(type=AssetTypes.URI_FOLDER)),
    outputs=dict(out=Output(type=AssetTypes.MLTABLE)), input_data="${{inputs.data}}",
    mini_batch_size="5",
    task=RunFunction(code="./src", entry_script="score.py", environment="azureml:batch-env:1"))
second = parallel_run_function(
    name="second", inputs=dict(table=Input(type=AssetTypes.MLTABLE)),
    outputs=dict(out=Output(type=AssetTypes.URI_FOLDER)), input_data="${{inputs.table}}",
    mini_batch_size="10kb",
    task=RunFunction(code="./src", entry_script="score.py", environment="azureml:batch-env:1"))


@dsl.pipeline(default_compute="cpu-cluster")
def direct_mode(data):
    a = first(data=data)
    b = second(table=a.outputs.out)
    b.inputs.table.mode = InputOutputModes.DIRECT
    return {"scored": b.outputs.out}


job = direct_mode(data=Input(type="uri_folder", path="./src"))
