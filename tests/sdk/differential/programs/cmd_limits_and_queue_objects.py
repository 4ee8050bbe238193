"""limits and queue_settings assigned as objects on a command node."""
from azure.ai.ml import Input, command, dsl
from azure.ai.ml.entities import CommandJobLimits, QueueSettings

train = command(name="train", command="ls ${{inputs.data}}", environment="azureml:env:1",
                inputs={"data": Input(type="uri_folder")}, display_name="train")


@dsl.pipeline(default_compute="cpu-cluster")
def limits_objects(data):
    step = train(data=data)
    step.limits = CommandJobLimits(timeout=600)
    step.queue_settings = QueueSettings(job_tier="standard")


job = limits_objects(data=Input(type="uri_folder", path="./src"))
