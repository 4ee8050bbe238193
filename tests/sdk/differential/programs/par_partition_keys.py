"""partition_keys over a tabular input (no mini_batch_size)."""
from azure.ai.ml import Input, Output, dsl
from azure.ai.ml.constants import AssetTypes
from azure.ai.ml.parallel import RunFunction, parallel_run_function

train = parallel_run_function(
    name="train", inputs=dict(table=Input(type=AssetTypes.MLTABLE)),
    outputs=dict(models=Output(type=AssetTypes.URI_FOLDER)), input_data="${{inputs.table}}",
    partition_keys=["store", "brand"], instance_count=2,
    task=RunFunction(code="./src", entry_script="score.py", environment="azureml:batch-env:1",
                     program_arguments="--models ${{outputs.models}}"))


@dsl.pipeline(default_compute="cpu-cluster")
def partitioned(table):
    step = train(table=table)
    return {"models": step.outputs.models}


job = partitioned(table=Input(type=AssetTypes.MLTABLE, path="./src"))
