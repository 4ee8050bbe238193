"""Pipeline settings from the decorator, then changed on the built job."""
from azure.ai.ml import Input, command, dsl

echo = command(name="echo", command="ls ${{inputs.data}}", environment="azureml:env:1",
               inputs={"data": Input(type="uri_folder")})


@dsl.pipeline(default_compute="cpu-cluster", continue_on_step_failure=True,
              default_datastore="workspaceblobstore", description="settings", tags={"a": "1"},
              display_name="settings job", experiment_name="exp")
def job_settings(data):
    echo(data=data)


job = job_settings(data=Input(type="uri_folder", path="./src"))
job.settings.default_compute = "other-cluster"
job.settings.force_rerun = True
job.settings.continue_on_step_failure = False
