"""Naming: parallel_run_function without a name, called twice into variables."""
from azure.ai.ml import Input, Output, dsl
from azure.ai.ml.parallel import RunFunction, parallel_run_function

score = parallel_run_function(
    inputs=dict(data=Input(type="uri_folder")),
    outputs=dict(out=Output(type="uri_folder")), input_data="${{inputs.data}}",
    mini_batch_size="1",
    task=RunFunction(code="./src", entry_script="score.py", environment="azureml:batch-env:1"))


@dsl.pipeline(default_compute="cpu-cluster")
def unnamed_function(data):
    left = score(data=data)
    right = score(data=left.outputs.out)
    return {"out": right.outputs.out}


job = unnamed_function(data=Input(type="uri_folder", path="./src"))
