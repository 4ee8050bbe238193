"""resources= at build time, then node.set_resources(...) in the pipeline function."""
from azure.ai.ml import Input, Output, dsl
from azure.ai.ml.parallel import RunFunction, parallel_run_function

score = parallel_run_function(
    name="score", inputs=dict(data=Input(type="uri_folder")),
    outputs=dict(out=Output(type="uri_folder")), input_data="${{inputs.data}}",
    mini_batch_size="5", resources={"instance_count": 2, "instance_type": "Standard_D2_v2"},
    task=RunFunction(code="./src", entry_script="score.py", environment="azureml:batch-env:1"))


@dsl.pipeline(default_compute="cpu-cluster")
def set_after_kwarg(data):
    step = score(data=data)
    step.set_resources(instance_count=6, shm_size="4g")
    return {"scored": step.outputs.out}


job = set_after_kwarg(data=Input(type="uri_folder", path="./src"))
