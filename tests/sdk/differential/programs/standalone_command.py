"""A standalone command job (what a notebook submits before it sweeps): inputs of each kind,
an output, variables, resources, a distribution and limits."""
from azure.ai.ml import Input, MpiDistribution, Output, command

job = command(
    code="./src",
    command="python score.py --data ${{inputs.data}} --lr ${{inputs.lr}} --flag ${{inputs.flag}} "
            "--out ${{outputs.model}}",
    environment="azureml:train-env:1",
    inputs={"data": Input(type="uri_folder", path="./src"), "lr": 0.9, "flag": True,
            "name": "x"},
    outputs={"model": Output(type="uri_folder")},
    environment_variables={"EPOCHS": "3"}, instance_count=2,
    distribution=MpiDistribution(process_count_per_instance=2), timeout=600,
    compute="cpu-cluster", display_name="train", experiment_name="exp", tags={"a": "b"},
)
