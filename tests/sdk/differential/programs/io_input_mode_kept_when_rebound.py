"""An input's mode stays when another value is bound to the input afterwards."""
from azure.ai.ml import Input, Output, command, dsl

make = command(name="make", command="echo ${{outputs.out}}", environment="azureml:env:1",
               outputs={"out": Output(type="uri_folder")})
use = command(name="use", command="ls ${{inputs.src}}", environment="azureml:env:1",
              inputs={"src": Input(type="uri_folder")})


@dsl.pipeline(default_compute="cpu-cluster")
def mode_kept(data):
    a = make()
    b = use(src=data)
    b.inputs.src.mode = "download"
    b.inputs.src = a.outputs.out


job = mode_kept(data=Input(type="uri_folder", path="./src"))
