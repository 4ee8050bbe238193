"""RetrySettings at build time, node.retry_settings.* changed later (one bound to an input)."""
from azure.ai.ml import Input, Output, dsl
from azure.ai.ml.entities import RetrySettings
from azure.ai.ml.parallel import RunFunction, parallel_run_function

score = parallel_run_function(
    name="score", inputs=dict(data=Input(type="uri_folder")),
    outputs=dict(out=Output(type="uri_folder")), input_data="${{inputs.data}}",
    mini_batch_size="5", retry_settings=RetrySettings(max_retries=1, timeout=30),
    task=RunFunction(code="./src", entry_script="score.py", environment="azureml:batch-env:1"))


@dsl.pipeline(default_compute="cpu-cluster")
def retries(data, timeout: int = 90):
    step = score(data=data)
    step.retry_settings.timeout = timeout
    step.retry_settings.max_retries = 4
    return {"scored": step.outputs.out}


job = retries(data=Input(type="uri_folder", path="./src"))
