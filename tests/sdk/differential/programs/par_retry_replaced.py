"""node.retry_settings replaced by a dict after the call."""
from azure.ai.ml import Input, Output, dsl
from azure.ai.ml.parallel import RunFunction, parallel_run_function

score = parallel_run_function(
    name="score", inputs=dict(data=Input(type="uri_folder")),
    outputs=dict(out=Output(type="uri_folder")), input_data="${{inputs.data}}",
    mini_batch_size="5", retry_settings=dict(max_retries=1, timeout=30),
    task=RunFunction(code="./src", entry_script="score.py", environment="azureml:batch-env:1"))


@dsl.pipeline(default_compute="cpu-cluster")
def retries_replaced(data):
    step = score(data=data)
    step.retry_settings = dict(max_retries=6, timeout=120)
    return {"scored": step.outputs.out}


job = retries_replaced(data=Input(type="uri_folder", path="./src"))
