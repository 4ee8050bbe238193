"""A tag set on one node shows on every node of the same function (azure-ai-ml shares them)."""
from azure.ai.ml import Input, command, dsl
from azure.ai.ml.parallel import RunFunction, parallel_run_function

score = parallel_run_function(
    name="score", tags={"t": "1"}, inputs=dict(data=Input(type="uri_folder")),
    input_data="${{inputs.data}}", mini_batch_size="1",
    task=RunFunction(code="./src", entry_script="score.py", environment="azureml:batch-env:1"))
listing = command(name="listing", tags={"t": "1"}, command="ls ${{inputs.data}}",
                  environment="azureml:env:1", inputs={"data": Input(type="uri_folder")})


@dsl.pipeline(default_compute="cpu-cluster")
def shared_tags(data):
    first = score(data=data)
    first.name = "first"
    first.tags["u"] = "2"
    second = score(data=data)
    second.name = "second"
    one = listing(data=data)
    one.tags["v"] = "3"
    listing(data=data)


job = shared_tags(data=Input(type="uri_folder", path="./src"))
