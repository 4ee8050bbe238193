"""Parallel node attributes set after the call: variables, tags, compute, names, identity."""
from azure.ai.ml import Input, Output, dsl
from azure.ai.ml.entities import ManagedIdentityConfiguration
from azure.ai.ml.parallel import RunFunction, parallel_run_function

score = parallel_run_function(
    name="score", inputs=dict(data=Input(type="uri_folder")),
    outputs=dict(out=Output(type="uri_folder")), input_data="${{inputs.data}}",
    mini_batch_size="5", environment_variables={"A": "1"}, tags={"t": "1"},
    task=RunFunction(code="./src", entry_script="score.py", environment="azureml:batch-env:1"))


@dsl.pipeline(default_compute="cpu-cluster")
def node_attributes(data):
    step = score(data=data)
    step.environment_variables["B"] = "2"
    step.tags["u"] = "2"
    step.compute = "gpu-cluster"
    step.display_name = "scoring"
    step.description = "set later"
    step.identity = ManagedIdentityConfiguration()
    return {"scored": step.outputs.out}


job = node_attributes(data=Input(type="uri_folder", path="./src"))
