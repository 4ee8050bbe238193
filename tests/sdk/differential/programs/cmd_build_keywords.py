"""command(): every build-time keyword."""
from azure.ai.ml import Input, MpiDistribution, Output, command, dsl
from azure.ai.ml.entities import UserIdentityConfiguration

train = command(
    name="train", display_name="Train", description="trains", tags={"stage": "train"},
    properties={"p": "1"}, command="python score.py --data ${{inputs.data}} --out ${{outputs.model}}",
    code="./src", environment="azureml:train-env:2", environment_variables={"EPOCHS": "3"},
    distribution=MpiDistribution(process_count_per_instance=2), compute="gpu-cluster",
    inputs={"data": Input(type="uri_folder")}, outputs={"model": Output(type="uri_folder")},
    instance_count=2, instance_type="Standard_NC6", locations=["westeurope"],
    docker_args="--ipc=host", shm_size="16g", timeout=3600,
    identity=UserIdentityConfiguration(), is_deterministic=False)


@dsl.pipeline(default_compute="cpu-cluster")
def command_keywords(data):
    step = train(data=data)
    return {"model": step.outputs.model}


job = command_keywords(data=Input(type="uri_folder", path="./src"))
