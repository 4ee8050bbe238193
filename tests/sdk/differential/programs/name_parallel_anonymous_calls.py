"""Naming: one named parallel function called three times, one call assigned to a variable."""
from azure.ai.ml import Input, Output, dsl
from azure.ai.ml.parallel import RunFunction, parallel_run_function

score = parallel_run_function(
    name="score", inputs=dict(data=Input(type="uri_folder")),
    outputs=dict(out=Output(type="uri_folder")), input_data="${{inputs.data}}",
    mini_batch_size="1",
    task=RunFunction(code="./src", entry_script="score.py", environment="azureml:batch-env:1"))


@dsl.pipeline(default_compute="cpu-cluster")
def anonymous_calls(data):
    first = score(data=data)
    score(data=first.outputs.out)
    score(data=first.outputs.out)


job = anonymous_calls(data=Input(type="uri_folder", path="./src"))
