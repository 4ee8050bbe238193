"""A command function changed before it is called: environment, variables, resources."""
from azure.ai.ml import Input, command, dsl

train = command(name="train", command="ls ${{inputs.data}}", environment="azureml:env:1",
                inputs={"data": Input(type="uri_folder")}, environment_variables={"A": "1"})
train.environment = "azureml:env:2"
train.environment_variables["B"] = "2"
train.set_resources(instance_count=3)
train.compute = "gpu-cluster"


@dsl.pipeline(default_compute="cpu-cluster")
def template_changed(data):
    first = train(data=data)
    first.environment_variables["C"] = "3"
    train(data=data)


job = template_changed(data=Input(type="uri_folder", path="./src"))
