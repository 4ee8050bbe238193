"""The tabular-scoring sample built with the Python SDK (the twin of pipeline.yml).

Run: ``python samples/tabular-scoring/pipeline.py``.
"""

import sys

from mlpipe import Input, Output, pipeline
from mlpipe.entities import Environment
from mlpipe.parallel import RetrySettings, RunFunction, parallel_run_function

batch_score = parallel_run_function(
    inputs=dict(houses=Input(type="mltable"), price_model=Input(type="uri_folder")),
    outputs=dict(scored=Output(type="uri_file")),
    input_data="${{inputs.houses}}",
    mini_batch_size="1kb",
    instance_count=1,
    max_concurrency_per_instance=2,
    error_threshold=0,
    mini_batch_error_threshold=0,
    retry_settings=RetrySettings(max_retries=1, timeout=60),
    task=RunFunction(
        code="./src",
        entry_script="score.py",
        environment=Environment(
            image="mcr.microsoft.com/azureml/openmpi4.1.0-ubuntu22.04",
            conda_file="./environment/conda.yml",
        ),
        program_arguments="--model ${{inputs.price_model}}",
        append_row_to="${{outputs.scored}}",
    ),
)


@pipeline(
    display_name="tabular-scoring",
    description="Score 120 houses from an MLTable of three CSV files; one output line per house.",
    default_compute="azureml:cpu-cluster",
)
def tabular_scoring(houses, price_model):
    score_houses = batch_score(houses=houses, price_model=price_model)
    return {"scores": score_houses.outputs.scored}


pipeline_job = tabular_scoring(
    houses=Input(type="mltable", path="./data", mode="direct"),
    price_model=Input(type="uri_folder", path="./model"),
)

if __name__ == "__main__":
    if sys.argv[1:2] == ["--dump"]:
        pipeline_job.dump(sys.argv[2])
    else:
        result = pipeline_job.run()
        print(result.status, result.outputs)
