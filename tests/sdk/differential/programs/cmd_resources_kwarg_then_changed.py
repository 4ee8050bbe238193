"""command(resources=...) then node.resources.shm_size and instance_count bound to an input."""
from azure.ai.ml import Input, Output, command, dsl
from azure.ai.ml.entities import JobResourceConfiguration

train = command(
    name="train", command="python score.py --data ${{inputs.data}}", code="./src",
    environment="azureml:train-env:2", inputs={"data": Input(type="uri_folder")},
    outputs={"model": Output(type="uri_folder")},
    resources=JobResourceConfiguration(instance_count=2, shm_size="1g"))


@dsl.pipeline(default_compute="cpu-cluster")
def command_resources(data, nodes: int = 3):
    step = train(data=data)
    step.resources.shm_size = "8g"
    step.resources.instance_count = nodes
    return {"model": step.outputs.model}


job = command_resources(data=Input(type="uri_folder", path="./src"))
