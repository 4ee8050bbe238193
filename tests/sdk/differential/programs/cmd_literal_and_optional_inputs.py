"""command(): literal inputs with defaults and an optional input left unbound."""
from azure.ai.ml import Input, command, dsl

train = command(
    name="train",
    command="python score.py --lr ${{inputs.lr}} $[[--seed ${{inputs.seed}}]]",
    code="./src", environment="azureml:train-env:2",
    inputs={"lr": Input(type="number", default=0.1), "seed": Input(type="integer", optional=True),
            "epochs": 3})


@dsl.pipeline(default_compute="cpu-cluster")
def literal_inputs(lr: float = 0.01):
    train(lr=lr)


job = literal_inputs()
