"""Naming: node.name set in the pipeline function wins over the function's name."""
from azure.ai.ml import Input, Output, dsl
from azure.ai.ml.parallel import RunFunction, parallel_run_function

score = parallel_run_function(
    name="score", inputs=dict(data=Input(type="uri_folder")),
    outputs=dict(out=Output(type="uri_folder")), input_data="${{inputs.data}}",
    mini_batch_size="1",
    task=RunFunction(code="./src", entry_script="score.py", environment="azureml:batch-env:1"))


@dsl.pipeline(default_compute="cpu-cluster")
def explicit_names(data):
    a = score(data=data)
    a.name = "score_first"
    b = score(data=a.outputs.out)
    b.name = "score_second"
    return {"out": b.outputs.out}


job = explicit_names(data=Input(type="uri_folder", path="./src"))
