"""Settings changed on the parallel function object before it is called."""
from azure.ai.ml import Input, Output, dsl
from azure.ai.ml.parallel import RunFunction, parallel_run_function

score = parallel_run_function(
    name="score", inputs=dict(data=Input(type="uri_folder")),
    outputs=dict(out=Output(type="uri_folder")), input_data="${{inputs.data}}",
    mini_batch_size="5", instance_count=1, retry_settings=dict(timeout=30),
    mini_batch_error_threshold=2,
    task=RunFunction(code="./src", entry_script="score.py", environment="azureml:batch-env:1"))
score.resources.instance_count = 3
score.mini_batch_size = "9"
score.retry_settings.max_retries = 5
score.mini_batch_error_threshold = 9  # azure-ai-ml's call does not copy this one
score.tags["stage"] = "scoring"
score.display_name = "scores"


@dsl.pipeline(default_compute="cpu-cluster")
def template_changed(data):
    step = score(data=data)
    return {"scored": step.outputs.out}


job = template_changed(data=Input(type="uri_folder", path="./src"))
