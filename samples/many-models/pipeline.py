"""The many-models sample built with the Python SDK (the twin of pipeline.yml).

A command step partitions the sales data; a parallel step with ``partition_keys``
trains one model per (region, product). Run: ``python samples/many-models/pipeline.py``.
"""

import sys

from mlpipe import Input, Output, command, pipeline
from mlpipe.entities import Environment
from mlpipe.parallel import RetrySettings, RunFunction, parallel_run_function

environment = Environment(
    image="mcr.microsoft.com/azureml/openmpi4.1.0-ubuntu22.04",
    conda_file="./environment/conda.yml",
)

partition_data = command(
    code="./src/partition",
    command="python partition.py --data ${{inputs.sales}} "
            "--partition_keys ${{inputs.keys}} --output ${{outputs.partitioned}}",
    inputs=dict(sales=Input(type="uri_file"), keys="region,product"),
    outputs=dict(partitioned=Output(type="mltable")),
    environment=environment,
)

train_models = parallel_run_function(
    inputs=dict(partitions=Input(type="mltable", mode="direct")),
    outputs=dict(model_folder=Output(type="uri_folder"), fitted_units=Output(type="uri_file")),
    input_data="${{inputs.partitions}}",
    partition_keys=["region", "product"],
    instance_count=1,
    max_concurrency_per_instance=2,
    mini_batch_error_threshold=0,
    retry_settings=RetrySettings(max_retries=1, timeout=60),
    environment_variables={"MANY_MODELS_TAG": "sample"},
    task=RunFunction(
        code="./src/train",
        entry_script="train.py",
        environment=environment,
        program_arguments="--model_folder ${{outputs.model_folder}}",
        append_row_to="${{outputs.fitted_units}}",
    ),
)


@pipeline(
    display_name="many-models",
    description="Partition sales by region and product with a command step, then train one "
                "model per partition with a parallel step using partition_keys.",
    default_compute="azureml:cpu-cluster",
)
def many_models(sales):
    partition = partition_data(sales=sales)
    train = train_models(partitions=partition.outputs.partitioned)
    return {"models": train.outputs.model_folder, "fitted": train.outputs.fitted_units}


pipeline_job = many_models(sales=Input(type="uri_file", path="./data/sales.csv"))

if __name__ == "__main__":
    if sys.argv[1:2] == ["--dump"]:
        pipeline_job.dump(sys.argv[2])
    else:
        result = pipeline_job.run()
        print(result.status, result.outputs)
