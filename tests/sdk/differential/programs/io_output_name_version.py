"""Outputs registered as data assets: node.outputs.x.name / .version, and on the job."""
from azure.ai.ml import Output, command, dsl

make = command(name="make", command="echo ${{outputs.out}} ${{outputs.other}}",
               environment="azureml:env:1",
               outputs={"out": Output(type="uri_folder"), "other": Output(type="uri_file")})


@dsl.pipeline(default_compute="cpu-cluster")
def named_outputs():
    a = make()
    a.outputs.out.name = "scored_files"
    a.outputs.out.version = "3"
    return {"other": a.outputs.other}


job = named_outputs()
job.outputs.other.name = "other_file"
