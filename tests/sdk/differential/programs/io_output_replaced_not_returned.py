"""step.outputs.x = Output(...) on an output nobody returns; a second step reads it."""
from azure.ai.ml import Input, Output, command, dsl

make = command(name="make", command="echo ${{outputs.out}}", environment="azureml:env:1",
               outputs={"out": Output(type="uri_folder")})
use = command(name="use", command="ls ${{inputs.src}}", environment="azureml:env:1",
              inputs={"src": Input(type="uri_folder")})


@dsl.pipeline(default_compute="cpu-cluster")
def replaced_not_returned():
    a = make()
    a.outputs.out = Output(type="uri_folder", mode="rw_mount",
                           path="azureml://datastores/workspaceblobstore/paths/made/")
    use(src=a.outputs.out)


job = replaced_not_returned()
