"""Naming: command(name=...) nodes take their variable's name; anonymous ones the component's."""
from azure.ai.ml import Input, command, dsl

echo = command(name="echo", command="ls ${{inputs.data}}", environment="azureml:env:1",
               inputs={"data": Input(type="uri_folder")})


@dsl.pipeline(default_compute="cpu-cluster")
def command_names(data):
    listing = echo(data=data)
    echo(data=data)
    echo(data=data)
    return None if listing is None else None


job = command_names(data=Input(type="uri_folder", path="./src"))
