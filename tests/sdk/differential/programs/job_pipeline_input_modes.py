"""Pipeline inputs with modes (azureml-examples 1g): ro_mount data, download model."""
from azure.ai.ml import Input, Output, dsl
from azure.ai.ml.constants import AssetTypes, InputOutputModes
from azure.ai.ml.parallel import RunFunction, parallel_run_function

score = parallel_run_function(
    name="score",
    inputs=dict(data=Input(type=AssetTypes.MLTABLE), model=Input(type=AssetTypes.URI_FOLDER)),
    outputs=dict(out=Output(type=AssetTypes.MLTABLE)), input_data="${{inputs.data}}",
    mini_batch_size="100",
    task=RunFunction(code="./src", entry_script="score.py", environment="azureml:batch-env:1",
                     program_arguments="--model ${{inputs.model}}"))


@dsl.pipeline()
def input_modes(pipeline_data, pipeline_model):
    step = score(data=pipeline_data, model=pipeline_model)
    return {"out": step.outputs.out}


job = input_modes(
    pipeline_data=Input(path="./src", type=AssetTypes.MLTABLE, mode=InputOutputModes.RO_MOUNT),
    pipeline_model=Input(path="./src", type=AssetTypes.URI_FOLDER,
                         mode=InputOutputModes.DOWNLOAD))
job.settings.default_compute = "cpu-cluster"
