"""An upstream output with a declared mode, read downstream with no mode of its own."""
from azure.ai.ml import Input, Output, command, dsl

make = command(name="make", command="echo ${{outputs.out}}", environment="azureml:env:1",
               outputs={"out": Output(type="uri_folder", mode="upload")})
use = command(name="use", command="ls ${{inputs.src}}", environment="azureml:env:1",
              inputs={"src": Input(type="uri_folder")})


@dsl.pipeline(default_compute="cpu-cluster")
def upstream_mode():
    a = make()
    b = use(src=a.outputs.out)
    b.inputs.src.mode = "download"


job = upstream_mode()
