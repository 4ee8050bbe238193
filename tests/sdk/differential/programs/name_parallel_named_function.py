"""Naming: a node of parallel_run_function(name=...) assigned to a variable."""
from azure.ai.ml import Input, Output, dsl
from azure.ai.ml.parallel import RunFunction, parallel_run_function

file_batch_inference = parallel_run_function(
    name="file_batch_score", inputs=dict(data=Input(type="uri_folder")),
    outputs=dict(out=Output(type="uri_folder")), input_data="${{inputs.data}}",
    mini_batch_size="1",
    task=RunFunction(code="./src", entry_script="score.py", environment="azureml:batch-env:1"))


@dsl.pipeline(default_compute="cpu-cluster")
def named_function(data):
    batch_inference_with_file_data = file_batch_inference(data=data)
    return {"out": batch_inference_with_file_data.outputs.out}


job = named_function(data=Input(type="uri_folder", path="./src"))
