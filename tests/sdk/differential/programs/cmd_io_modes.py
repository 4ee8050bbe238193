"""Command node input and output modes set after the call."""
from azure.ai.ml import Input, Output, command, dsl
from azure.ai.ml.constants import InputOutputModes

prep = command(name="prep", command="python score.py --raw ${{inputs.raw}} --out ${{outputs.out}}",
               code="./src", environment="azureml:prep-env:1",
               inputs={"raw": Input(type="uri_folder")},
               outputs={"out": Output(type="uri_folder")})


@dsl.pipeline(default_compute="cpu-cluster")
def command_modes(raw):
    step = prep(raw=raw)
    step.inputs.raw.mode = InputOutputModes.DOWNLOAD
    step.outputs.out.mode = InputOutputModes.UPLOAD
    return {"prepared": step.outputs.out}


job = command_modes(raw=Input(type="uri_folder", path="./src"))
