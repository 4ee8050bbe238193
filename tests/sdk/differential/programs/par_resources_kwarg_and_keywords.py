"""resources= and instance_count=/shm_size= together: the keywords win over the dict."""
from azure.ai.ml import Input, Output, dsl
from azure.ai.ml.entities import JobResourceConfiguration
from azure.ai.ml.parallel import RunFunction, parallel_run_function

score = parallel_run_function(
    name="score", inputs=dict(data=Input(type="uri_folder")),
    outputs=dict(out=Output(type="uri_folder")), input_data="${{inputs.data}}",
    mini_batch_size="5", instance_count=3, shm_size="1g",
    resources=JobResourceConfiguration(instance_count=2, instance_type="Standard_D2_v2"),
    task=RunFunction(code="./src", entry_script="score.py", environment="azureml:batch-env:1"))


@dsl.pipeline(default_compute="cpu-cluster")
def resources_merge(data):
    step = score(data=data)
    return {"scored": step.outputs.out}


job = resources_merge(data=Input(type="uri_folder", path="./src"))
