"""Command node attributes set after the call: environment, variables, distribution, compute."""
from azure.ai.ml import Input, PyTorchDistribution, command, dsl

train = command(name="train", command="python score.py --data ${{inputs.data}}", code="./src",
                environment="azureml:train-env:2", inputs={"data": Input(type="uri_folder")},
                environment_variables={"A": "1"})


@dsl.pipeline(default_compute="cpu-cluster")
def command_attributes(data):
    step = train(data=data)
    step.environment = "azureml:train-env:5"
    step.environment_variables["B"] = "2"
    step.distribution = PyTorchDistribution(process_count_per_instance=4)
    step.compute = "gpu-cluster"
    step.display_name = "train on gpu"
    step.tags["run"] = "nightly"
    step.description = "changed later"


job = command_attributes(data=Input(type="uri_folder", path="./src"))
