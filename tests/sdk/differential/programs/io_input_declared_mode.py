"""Input modes declared at build time (azureml-examples 3a) and an Input bound at the call."""
from azure.ai.ml import Input, Output, dsl
from azure.ai.ml.constants import AssetTypes, InputOutputModes
from azure.ai.ml.parallel import RunFunction, parallel_run_function

score = parallel_run_function(
    name="score",
    inputs=dict(data=Input(type=AssetTypes.URI_FOLDER, mode=InputOutputModes.RO_MOUNT),
                model=Input(type=AssetTypes.URI_FOLDER, mode=InputOutputModes.DOWNLOAD)),
    outputs=dict(out=Output(type=AssetTypes.URI_FILE, mode=InputOutputModes.RW_MOUNT)),
    input_data="${{inputs.data}}", mini_batch_size="5",
    task=RunFunction(code="./src", entry_script="score.py", environment="azureml:batch-env:1",
                     program_arguments="--model ${{inputs.model}}",
                     append_row_to="${{outputs.out}}"))

model = Input(type=AssetTypes.URI_FOLDER, path="./src", mode=InputOutputModes.DOWNLOAD)


@dsl.pipeline(default_compute="cpu-cluster")
def declared_modes(data):
    step = score(data=data, model=model)
    return {"scored": step.outputs.out}


job = declared_modes(data=Input(type="uri_folder", path="./src"))
