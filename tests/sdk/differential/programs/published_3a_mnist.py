"""azureml-examples sdk/python/jobs/parallel/3a_mnist_batch_identification, its job built."""
from azure.ai.ml import Input, Output, load_component
from azure.ai.ml.constants import AssetTypes, InputOutputModes
from azure.ai.ml.dsl import pipeline
from azure.ai.ml.entities import Environment
from azure.ai.ml.parallel import RunFunction, parallel_run_function

prepare_data_component = load_component(source="./components/prepare_mnist.yml")

batch_inferencing_with_mini_batch_size = parallel_run_function(
    name="batch_inferencing_with_mini_batch_size",
    display_name="Batch Inferencing with mini_batch_size",
    description="parallel job to do batch inferencing with mini_batch_size",
    tags={"azureml_parallel_example": "3a_sdk"},
    inputs=dict(
        job_data_path=Input(type=AssetTypes.URI_FOLDER, description="Input tabular mltable data.",
                            mode=InputOutputModes.RO_MOUNT),
        score_model=Input(type=AssetTypes.URI_FOLDER,
                          description="Folder contains the model file.",
                          mode=InputOutputModes.DOWNLOAD),
    ),
    outputs=dict(job_output_file=Output(type=AssetTypes.URI_FILE,
                                        mode=InputOutputModes.RW_MOUNT)),
    input_data="${{inputs.job_data_path}}",
    mini_batch_size="5",
    instance_count=2,
    max_concurrency_per_instance=2,
    error_threshold=5,
    mini_batch_error_threshold=5,
    retry_settings=dict(max_retries=2, timeout=60),
    logging_level="DEBUG",
    environment_variables={"AZUREML_PARALLEL_EXAMPLE": "3a_sdk"},
    task=RunFunction(
        code="./src",
        entry_script="score.py",
        environment=Environment(image="mcr.microsoft.com/azureml/openmpi4.1.0-ubuntu20.04",
                                conda_file="./components/conda.yml"),
        program_arguments="--model ${{inputs.score_model}} ",
        append_row_to="${{outputs.job_output_file}}",
    ),
)

input_model_folder = Input(path="./src", type=AssetTypes.URI_FOLDER,
                           mode=InputOutputModes.DOWNLOAD)


@pipeline(display_name="parallel job for iris batch inferencing")
def parallel_job_in_pipeline():
    prepare_data = prepare_data_component()
    predict_digits_mnist = batch_inferencing_with_mini_batch_size(
        job_data_path=prepare_data.outputs.mnist_png, score_model=input_model_folder)
    predict_digits_mnist.resources.instance_count = 2
    predict_digits_mnist.max_concurrency_per_instance = 2
    predict_digits_mnist.mini_batch_error_threshold = 10
    predict_digits_mnist.outputs.job_output_file.path = (
        "azureml://datastores/${{default_datastore}}/paths/${{name}}/aggregated_returns.csv")


job = parallel_job_in_pipeline()
job.settings.default_compute = "cpu-cluster"
