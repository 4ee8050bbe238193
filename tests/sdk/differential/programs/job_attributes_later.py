"""Pipeline job attributes set after building: tags, display name, description, experiment."""
from azure.ai.ml import Input, command, dsl

echo = command(name="echo", command="ls ${{inputs.data}}", environment="azureml:env:1",
               inputs={"data": Input(type="uri_folder")})


@dsl.pipeline()
def job_attributes(data):
    echo(data=data)


job = job_attributes(data=Input(type="uri_folder", path="./src"))
job.display_name = "renamed"
job.description = "set later"
job.experiment_name = "later-exp"
job.tags["owner"] = "ml-team"
job.properties["origin"] = "script"
job.settings.default_compute = "cpu-cluster"
