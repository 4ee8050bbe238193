"""A policy given by name: azure-ai-ml's sweep node keeps the text and refuses it when the job
is dumped (only a policy object or its mapping is a policy)."""
from azure.ai.ml import command, dsl
from azure.ai.ml.sweep import Choice

train = command(command="python score.py --k ${{inputs.k}}", code="./src",
                environment="azureml:train-env:1", inputs={"k": "a"})


@dsl.pipeline(default_compute="cpu-cluster")
def refused():
    tune = train(k=Choice(["a", "b"])).sweep(primary_metric="acc", goal="maximize",
                                             max_total_trials=2,
                                             early_termination_policy="bandit")


job = refused()
