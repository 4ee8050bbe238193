"""azureml-examples sdk/python/jobs/pipelines/1g_pipeline_with_parallel_nodes, its job built."""
from azure.ai.ml import Input, Output, load_component
from azure.ai.ml.constants import AssetTypes, InputOutputModes
from azure.ai.ml.dsl import pipeline
from azure.ai.ml.entities import Environment
from azure.ai.ml.parallel import RunFunction, parallel_run_function

prepare_data = load_component(source="./components/prepare_data.yml")

file_batch_inference = parallel_run_function(
    name="file_batch_score",
    display_name="Batch Score with File Dataset",
    description="parallel component for batch score",
    inputs=dict(job_data_path=Input(type=AssetTypes.MLTABLE,
                                    description="The data to be split and scored in parallel")),
    outputs=dict(job_output_path=Output(type=AssetTypes.MLTABLE)),
    input_data="${{inputs.job_data_path}}",
    instance_count=2,
    max_concurrency_per_instance=1,
    mini_batch_size="1",
    mini_batch_error_threshold=1,
    retry_settings=dict(max_retries=2, timeout=60),
    logging_level="DEBUG",
    task=RunFunction(
        code="./src",
        entry_script="score.py",
        program_arguments="--job_output_path ${{outputs.job_output_path}}",
        environment="azureml://registries/azureml/environments/sklearn-1.5/labels/latest",
    ),
)

tabular_batch_inference = parallel_run_function(
    name="batch_score_with_tabular_input",
    display_name="Batch Score with Tabular Dataset",
    description="parallel component for batch score",
    inputs=dict(
        job_data_path=Input(type=AssetTypes.MLTABLE,
                            description="The data to be split and scored in parallel"),
        score_model=Input(type=AssetTypes.URI_FOLDER, description="The model for batch score."),
    ),
    outputs=dict(job_output_path=Output(type=AssetTypes.MLTABLE)),
    input_data="${{inputs.job_data_path}}",
    instance_count=2,
    max_concurrency_per_instance=2,
    mini_batch_size="100",
    mini_batch_error_threshold=5,
    logging_level="DEBUG",
    retry_settings=dict(max_retries=2, timeout=60),
    task=RunFunction(
        code="./src",
        entry_script="score.py",
        environment=Environment(image="mcr.microsoft.com/azureml/openmpi4.1.0-ubuntu22.04",
                                conda_file="./components/conda.yml"),
        program_arguments="--model ${{inputs.score_model}} "
        "--job_output_path ${{outputs.job_output_path}} "
        "--error_threshold 5 "
        "--allowed_failed_percent 30 "
        "--task_overhead_timeout 1200 "
        "--progress_update_timeout 600 "
        "--first_task_creation_timeout 600 "
        "--copy_logs_to_parent True "
        "--resource_monitor_interva 20 ",
        append_row_to="${{outputs.job_output_path}}",
    ),
)


@pipeline()
def parallel_in_pipeline(pipeline_job_data_path, pipeline_score_model):
    prepare_file_tabular_data = prepare_data(input_data=pipeline_job_data_path)
    prepare_file_tabular_data.outputs.file_output_data.type = AssetTypes.MLTABLE
    prepare_file_tabular_data.outputs.tabular_output_data.type = AssetTypes.MLTABLE

    batch_inference_with_file_data = file_batch_inference(
        job_data_path=prepare_file_tabular_data.outputs.file_output_data)
    batch_inference_with_file_data.inputs.job_data_path.mode = InputOutputModes.EVAL_MOUNT
    batch_inference_with_file_data.outputs.job_output_path.type = AssetTypes.MLTABLE

    batch_inference_with_tabular_data = tabular_batch_inference(
        job_data_path=prepare_file_tabular_data.outputs.tabular_output_data,
        score_model=pipeline_score_model)
    batch_inference_with_tabular_data.inputs.job_data_path.mode = InputOutputModes.DIRECT

    return {
        "pipeline_job_out_file": batch_inference_with_file_data.outputs.job_output_path,
        "pipeline_job_out_tabular": batch_inference_with_tabular_data.outputs.job_output_path,
    }


pipeline_job_data_path = Input(path="./src", type=AssetTypes.MLTABLE,
                               mode=InputOutputModes.RO_MOUNT)
pipeline_score_model = Input(path="./src", type=AssetTypes.URI_FOLDER,
                             mode=InputOutputModes.DOWNLOAD)
job = parallel_in_pipeline(pipeline_job_data_path=pipeline_job_data_path,
                           pipeline_score_model=pipeline_score_model)
job.outputs.pipeline_job_out_tabular.type = AssetTypes.URI_FILE
job.settings.default_compute = "cpu-cluster"
