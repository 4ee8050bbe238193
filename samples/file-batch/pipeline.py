"""The file-batch sample built with the Python SDK (the twin of pipeline.yml).

Run it with ``python samples/file-batch/pipeline.py`` (add ``--dump out.yml`` to
write the YAML instead). Written like azure-ai-ml code: only the imports differ.
"""

import sys

from mlpipe import Input, Output, pipeline
from mlpipe.entities import Environment
from mlpipe.parallel import RetrySettings, RunFunction, parallel_run_function

environment = Environment(
    image="mcr.microsoft.com/azureml/openmpi4.1.0-ubuntu22.04",
    conda_file="./environment/conda.yml",
)

count_words = parallel_run_function(
    name="count_words",
    inputs=dict(documents=Input(type="uri_folder"), min_word_length=2),
    outputs=dict(counts=Output(type="uri_file", mode="rw_mount")),
    input_data="${{inputs.documents}}",
    mini_batch_size="5",
    instance_count=1,
    max_concurrency_per_instance=2,
    mini_batch_error_threshold=0,
    retry_settings=RetrySettings(max_retries=1, timeout=30),
    logging_level="INFO",
    task=RunFunction(
        code="./src",
        entry_script="count_words.py",
        environment=environment,
        program_arguments="--min_word_length ${{inputs.min_word_length}}",
        append_row_to="${{outputs.counts}}",
    ),
)


@pipeline(
    display_name="file-batch-word-count",
    description="Count lines, words and characters of 20 text files with a parallel step.",
    default_compute="azureml:cpu-cluster",
)
def file_batch(documents):
    count_words(documents=documents, min_word_length=2)


pipeline_job = file_batch(documents=Input(type="uri_folder", path="./data"))

if __name__ == "__main__":
    if sys.argv[1:2] == ["--dump"]:
        pipeline_job.dump(sys.argv[2])
    else:
        result = pipeline_job.run()
        print(result.status, result.step_outputs)
