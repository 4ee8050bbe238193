"""Run settings bound to pipeline inputs at build of the node."""
from azure.ai.ml import Input, Output, dsl
from azure.ai.ml.parallel import RunFunction, parallel_run_function

score = parallel_run_function(
    name="score", inputs=dict(data=Input(type="uri_folder")),
    outputs=dict(out=Output(type="uri_folder")), input_data="${{inputs.data}}",
    mini_batch_size="5",
    task=RunFunction(code="./src", entry_script="score.py", environment="azureml:batch-env:1"))


@dsl.pipeline(default_compute="cpu-cluster")
def bound_settings(data, workers: int = 2, failures: int = 5, batch: str = "7"):
    step = score(data=data)
    step.max_concurrency_per_instance = workers
    step.mini_batch_error_threshold = failures
    step.mini_batch_size = batch
    return {"scored": step.outputs.out}


job = bound_settings(data=Input(type="uri_folder", path="./src"))
