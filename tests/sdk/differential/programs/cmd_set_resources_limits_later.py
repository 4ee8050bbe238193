"""set_resources / set_limits / set_queue_settings on a command node after the call."""
from azure.ai.ml import Input, command, dsl

train = command(name="train", command="python score.py --data ${{inputs.data}}", code="./src",
                environment="azureml:train-env:2", inputs={"data": Input(type="uri_folder")},
                instance_count=1, timeout=60)


@dsl.pipeline(default_compute="cpu-cluster")
def command_settings(data):
    step = train(data=data)
    step.set_resources(instance_count=4, instance_type="Standard_D4_v2")
    step.set_limits(timeout=7200)
    step.set_queue_settings(job_tier="Spot", priority="Medium")


job = command_settings(data=Input(type="uri_folder", path="./src"))
