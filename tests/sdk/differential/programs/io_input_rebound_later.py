"""node.inputs.x = ... after the call: a pipeline input, then a literal."""
from azure.ai.ml import Input, Output, dsl
from azure.ai.ml.parallel import RunFunction, parallel_run_function

score = parallel_run_function(
    name="score", inputs=dict(data=Input(type="uri_folder"), label=Input(type="string")),
    outputs=dict(out=Output(type="uri_folder")), input_data="${{inputs.data}}",
    mini_batch_size="5",
    task=RunFunction(code="./src", entry_script="score.py", environment="azureml:batch-env:1",
                     program_arguments="--label ${{inputs.label}}"))


@dsl.pipeline(default_compute="cpu-cluster")
def rebound(data, other):
    step = score(data=data, label="first")
    step.inputs.data = other
    step.inputs.label = "second"
    return {"scored": step.outputs.out}


job = rebound(data=Input(type="uri_folder", path="./src"),
              other=Input(type="uri_folder", path="./components"))
