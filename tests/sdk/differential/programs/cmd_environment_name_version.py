"""A bare "name:version" environment string, and an Environment object."""
from azure.ai.ml import Input, command, dsl
from azure.ai.ml.entities import Environment

bare = command(name="bare", command="ls ${{inputs.data}}", environment="train-env:4",
               inputs={"data": Input(type="uri_folder")})
built = command(name="built", command="ls ${{inputs.data}}",
                environment=Environment(image="mcr.microsoft.com/azureml/openmpi4.1.0-ubuntu20.04",
                                        conda_file="./components/conda.yml"),
                inputs={"data": Input(type="uri_folder")})


@dsl.pipeline(default_compute="cpu-cluster")
def environments(data):
    bare(data=data)
    built(data=data)


job = environments(data=Input(type="uri_folder", path="./src"))
