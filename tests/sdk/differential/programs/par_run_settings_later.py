"""Run settings changed on the node: mini_batch_size, thresholds, concurrency, logging."""
from azure.ai.ml import Input, Output, dsl
from azure.ai.ml.parallel import RunFunction, parallel_run_function

score = parallel_run_function(
    name="score", inputs=dict(data=Input(type="uri_folder")),
    outputs=dict(out=Output(type="uri_folder")), input_data="${{inputs.data}}",
    mini_batch_size="5", max_concurrency_per_instance=1, error_threshold=1,
    task=RunFunction(code="./src", entry_script="score.py", environment="azureml:batch-env:1"))


@dsl.pipeline(default_compute="cpu-cluster")
def run_settings(data, failures: int = 3):
    step = score(data=data)
    step.mini_batch_size = "20"
    step.max_concurrency_per_instance = 4
    step.error_threshold = 12
    step.mini_batch_error_threshold = failures
    step.logging_level = "WARNING"
    return {"scored": step.outputs.out}


job = run_settings(data=Input(type="uri_folder", path="./src"))
