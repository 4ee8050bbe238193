"""command(resources=...) then node.set_resources(...) on the called node."""
from azure.ai.ml import Input, command, dsl
from azure.ai.ml.entities import JobResourceConfiguration

train = command(
    name="train", command="ls ${{inputs.data}}", environment="azureml:env:1",
    inputs={"data": Input(type="uri_folder")},
    resources=JobResourceConfiguration(instance_count=2, instance_type="Standard_NC6"))


@dsl.pipeline(default_compute="cpu-cluster")
def command_set_after_kwarg(data):
    step = train(data=data)
    step.set_resources(instance_count=5, docker_args="--ipc=host")


job = command_set_after_kwarg(data=Input(type="uri_folder", path="./src"))
