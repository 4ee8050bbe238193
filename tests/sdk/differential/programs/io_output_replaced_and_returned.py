"""step.outputs.x = Output(...) then returned from the pipeline."""
from azure.ai.ml import Input, Output, dsl
from azure.ai.ml.parallel import RunFunction, parallel_run_function

score = parallel_run_function(
    name="score", inputs=dict(data=Input(type="uri_folder")),
    outputs=dict(out=Output(type="uri_folder")), input_data="${{inputs.data}}",
    mini_batch_size="5",
    task=RunFunction(code="./src", entry_script="score.py", environment="azureml:batch-env:1"))


@dsl.pipeline(default_compute="cpu-cluster")
def replaced_output(data):
    step = score(data=data)
    step.outputs.out = Output(type="uri_folder", mode="upload",
                              path="azureml://datastores/workspaceblobstore/paths/scores/")
    return {"final": step.outputs.out}


job = replaced_output(data=Input(type="uri_folder", path="./src"))
