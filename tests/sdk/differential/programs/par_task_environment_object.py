"""RunFunction(environment=Environment(image, conda_file)) (azureml-examples 2a/3a)."""
from azure.ai.ml import Input, Output, dsl
from azure.ai.ml.entities import Environment
from azure.ai.ml.parallel import RunFunction, parallel_run_function

score = parallel_run_function(
    name="score", inputs=dict(data=Input(type="uri_folder")),
    outputs=dict(out=Output(type="uri_folder")), input_data="${{inputs.data}}",
    mini_batch_size="5",
    task=RunFunction(code="./src", entry_script="score.py",
                     environment=Environment(
                         image="mcr.microsoft.com/azureml/openmpi4.1.0-ubuntu20.04",
                         conda_file="./components/conda.yml")))


@dsl.pipeline(default_compute="cpu-cluster")
def environment_object(data):
    step = score(data=data)
    return {"scored": step.outputs.out}


job = environment_object(data=Input(type="uri_folder", path="./src"))
