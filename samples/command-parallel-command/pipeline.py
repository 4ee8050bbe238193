"""The command-parallel-command sample built with the Python SDK (the twin of pipeline.yml).

Run: ``python samples/command-parallel-command/pipeline.py``.
"""

import sys

from mlpipe import Input, Output, command, pipeline
from mlpipe.entities import Environment
from mlpipe.parallel import RunFunction, parallel_run_function

environment = Environment(
    image="mcr.microsoft.com/azureml/openmpi4.1.0-ubuntu22.04",
    conda_file="./environment/conda.yml",
)

write_files = command(
    code="./src",
    command="python make_numbers.py --count ${{inputs.file_count}} --output ${{outputs.numbers}}",
    inputs=dict(file_count=Input(type="integer")),
    outputs=dict(numbers=Output(type="uri_folder")),
    environment=environment,
)

sum_files = parallel_run_function(
    inputs=dict(numbers=Input(type="uri_folder")),
    outputs=dict(sums=Output(type="uri_file")),
    input_data="${{inputs.numbers}}",
    mini_batch_size="3",
    instance_count=1,
    max_concurrency_per_instance=2,
    mini_batch_error_threshold=0,
    task=RunFunction(
        code="./src",
        entry_script="sum_numbers.py",
        environment=environment,
        append_row_to="${{outputs.sums}}",
    ),
)

add_up = command(
    code="./src",
    command="python summarize.py --results ${{inputs.sums}} --output ${{outputs.summary}}",
    inputs=dict(sums=Input(type="uri_file")),
    outputs=dict(summary=Output(type="uri_folder")),
    environment=environment,
)


@pipeline(
    display_name="command-parallel-command",
    description="A command step writes 12 number files, a parallel step sums each file, and a "
                "second command step adds the per-file sums up into summary.json.",
    default_compute="azureml:cpu-cluster",
    continue_on_step_failure=False,
)
def command_parallel_command(file_count: int = 12):
    make_numbers = write_files(file_count=file_count)
    sum_numbers = sum_files(numbers=make_numbers.outputs.numbers)
    summarize = add_up(sums=sum_numbers.outputs.sums)
    return {"summary": summarize.outputs.summary}


pipeline_job = command_parallel_command()

if __name__ == "__main__":
    if sys.argv[1:2] == ["--dump"]:
        pipeline_job.dump(sys.argv[2])
    else:
        result = pipeline_job.run()
        print(result.status, result.outputs)
