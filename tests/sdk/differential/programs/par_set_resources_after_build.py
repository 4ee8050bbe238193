"""node.set_resources(...) after build time, over instance_count= given at build time."""
from azure.ai.ml import Input, Output, dsl
from azure.ai.ml.parallel import RunFunction, parallel_run_function

score = parallel_run_function(
    name="score", inputs=dict(data=Input(type="uri_folder")),
    outputs=dict(out=Output(type="uri_folder")), input_data="${{inputs.data}}",
    mini_batch_size="5", instance_count=2, instance_type="Standard_D2_v2",
    task=RunFunction(code="./src", entry_script="score.py", environment="azureml:batch-env:1"))
score.set_resources(instance_count=5, docker_args="--privileged")


@dsl.pipeline(default_compute="cpu-cluster")
def set_resources_later(data):
    step = score(data=data)
    step.set_resources(instance_type="Standard_F4s_v2", shm_size="8g")
    return {"scored": step.outputs.out}


job = set_resources_later(data=Input(type="uri_folder", path="./src"))
