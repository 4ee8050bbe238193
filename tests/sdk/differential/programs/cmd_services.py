"""command(services=...): interactive services of a command step (azureml-examples 1d)."""
from azure.ai.ml import Input, command, dsl
from azure.ai.ml.entities import (
    JobService,
    JupyterLabJobService,
    SshJobService,
    TensorBoardJobService,
    VsCodeJobService,
)

train = command(
    name="train", command="ls ${{inputs.data}}", environment="azureml:env:1",
    inputs={"data": Input(type="uri_folder")},
    services={"Jupyterlab endpoint": JobService(type="jupyter_lab"),
              "Vscode endpoint": JobService(type="vs_code")})


@dsl.pipeline(default_compute="cpu-cluster")
def services(data):
    step = train(data=data)
    step.services = {"lab": JupyterLabJobService(), "code": VsCodeJobService(),
                     "board": TensorBoardJobService(log_dir="outputs/tblogs"),
                     "ssh": SshJobService(ssh_public_keys="ssh-rsa AAA", nodes="all")}
    train(data=data)


job = services(data=Input(type="uri_folder", path="./src"))
