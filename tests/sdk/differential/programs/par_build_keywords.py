"""parallel_run_function: every build-time keyword."""
from azure.ai.ml import Input, Output, dsl
from azure.ai.ml.parallel import RunFunction, parallel_run_function

score = parallel_run_function(
    name="score", display_name="Score files", description="scores each file",
    tags={"team": "ml"}, properties={"owner": "me"}, compute="cpu-cluster",
    inputs=dict(data=Input(type="uri_folder", description="the files"),
                tag=Input(type="string", default="blue")),
    outputs=dict(out=Output(type="uri_folder")),
    input_data="${{inputs.data}}", mini_batch_size="5",
    retry_settings=dict(max_retries=2, timeout=60), environment_variables={"FOO": "bar"},
    logging_level="DEBUG", max_concurrency_per_instance=3, error_threshold=7,
    mini_batch_error_threshold=4, instance_count=2, instance_type="Standard_D2_v2",
    docker_args="--cpus=2", shm_size="2g", is_deterministic=False,
    task=RunFunction(code="./src", entry_script="score.py",
                     program_arguments="--tag ${{inputs.tag}}",
                     environment="azureml:batch-env:1",
                     append_row_to="${{outputs.out}}"))


@dsl.pipeline(default_compute="cpu-cluster")
def build_keywords(data):
    step = score(data=data)
    return {"scored": step.outputs.out}


job = build_keywords(data=Input(type="uri_folder", path="./src"))
