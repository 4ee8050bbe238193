"""node.resources replaced by a dict in the pipeline function, no resources at build time."""
from azure.ai.ml import Input, Output, dsl
from azure.ai.ml.parallel import RunFunction, parallel_run_function

score = parallel_run_function(
    name="score", inputs=dict(data=Input(type="uri_folder")),
    outputs=dict(out=Output(type="uri_folder")), input_data="${{inputs.data}}",
    mini_batch_size="5",
    task=RunFunction(code="./src", entry_script="score.py", environment="azureml:batch-env:1"))


@dsl.pipeline(default_compute="cpu-cluster")
def resources_later(data):
    step = score(data=data)
    step.resources = {"instance_count": 3, "shm_size": "4g"}
    return {"scored": step.outputs.out}


job = resources_later(data=Input(type="uri_folder", path="./src"))
