"""Naming: two variables holding nodes of one named parallel function (azure-ai-ml refuses)."""
from azure.ai.ml import Input, Output, dsl
from azure.ai.ml.parallel import RunFunction, parallel_run_function

score = parallel_run_function(
    name="score", inputs=dict(data=Input(type="uri_folder")),
    outputs=dict(out=Output(type="uri_folder")), input_data="${{inputs.data}}",
    mini_batch_size="1",
    task=RunFunction(code="./src", entry_script="score.py", environment="azureml:batch-env:1"))


@dsl.pipeline(default_compute="cpu-cluster")
def duplicate_names(data):
    first = score(data=data)
    second = score(data=first.outputs.out)
    return {"out": second.outputs.out}


job = duplicate_names(data=Input(type="uri_folder", path="./src"))
