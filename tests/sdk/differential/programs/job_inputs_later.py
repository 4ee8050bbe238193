"""Pipeline inputs changed on the built job: a path, a mode, a literal."""
from azure.ai.ml import Input, command, dsl

echo = command(name="echo", command="ls ${{inputs.data}} ${{inputs.count}}",
               environment="azureml:env:1",
               inputs={"data": Input(type="uri_folder"), "count": Input(type="integer")})


@dsl.pipeline(default_compute="cpu-cluster")
def job_inputs(data, count: int = 1):
    echo(data=data, count=count)


job = job_inputs(data=Input(type="uri_folder", path="./src"))
job.inputs.data = Input(type="uri_folder", path="./components", mode="download")
job.inputs.count = 7
