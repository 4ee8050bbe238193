"""Literal inputs: defaults, values at the call, pipeline parameters of each type."""
from azure.ai.ml import Input, Output, dsl
from azure.ai.ml.parallel import RunFunction, parallel_run_function

score = parallel_run_function(
    name="score",
    inputs=dict(data=Input(type="uri_folder"), count=Input(type="integer", default=2, min=1),
                ratio=Input(type="number", optional=True), flag=Input(type="boolean"),
                label=Input(type="string", default="x")),
    outputs=dict(out=Output(type="uri_folder")), input_data="${{inputs.data}}",
    mini_batch_size="5",
    task=RunFunction(code="./src", entry_script="score.py", environment="azureml:batch-env:1",
                     program_arguments="--count ${{inputs.count}} --flag ${{inputs.flag}} "
                                       "$[[--ratio ${{inputs.ratio}}]]"))


@dsl.pipeline(default_compute="cpu-cluster")
def literals(data, ratio: float = 0.5, flag: bool = True, label: str = "run"):
    step = score(data=data, ratio=ratio, flag=flag, count=5)
    step.inputs.label = label
    return {"scored": step.outputs.out}


job = literals(data=Input(type="uri_folder", path="./src"))
