"""node.task.* changed after the call: program_arguments, append_row_to, entry_script."""
from azure.ai.ml import Input, Output, dsl
from azure.ai.ml.parallel import RunFunction, parallel_run_function

score = parallel_run_function(
    name="score", inputs=dict(data=Input(type="uri_folder"), level=Input(type="integer")),
    outputs=dict(out=Output(type="uri_file")), input_data="${{inputs.data}}",
    mini_batch_size="5",
    task=RunFunction(code="./src", entry_script="score.py", environment="azureml:batch-env:1"))


@dsl.pipeline(default_compute="cpu-cluster")
def task_later(data):
    step = score(data=data, level=3)
    step.task.program_arguments = "--level ${{inputs.level}} --allowed_failed_percent 5"
    step.task.append_row_to = "${{outputs.out}}"
    step.task.entry_script = "score.py"
    return {"scored": step.outputs.out}


job = task_later(data=Input(type="uri_folder", path="./src"))
