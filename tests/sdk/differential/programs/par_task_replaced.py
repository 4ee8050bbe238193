"""node.task replaced by another RunFunction after the call."""
from azure.ai.ml import Input, Output, dsl
from azure.ai.ml.parallel import RunFunction, parallel_run_function

score = parallel_run_function(
    name="score", inputs=dict(data=Input(type="uri_folder")),
    outputs=dict(out=Output(type="uri_folder")), input_data="${{inputs.data}}",
    mini_batch_size="5",
    task=RunFunction(code="./src", entry_script="score.py", environment="azureml:batch-env:1"))


@dsl.pipeline(default_compute="cpu-cluster")
def task_replaced(data):
    step = score(data=data)
    step.task = RunFunction(code="./src", entry_script="score.py",
                            environment="azureml:other-env:2", program_arguments="--fast")
    return {"scored": step.outputs.out}


job = task_replaced(data=Input(type="uri_folder", path="./src"))
