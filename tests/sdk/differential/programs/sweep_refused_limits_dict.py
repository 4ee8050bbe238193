"""limits set to a dict: azure-ai-ml refuses it (a SweepJobLimits is needed)."""
from azure.ai.ml import command, dsl
from azure.ai.ml.sweep import Choice

train = command(command="python score.py --k ${{inputs.k}}", code="./src",
                environment="azureml:train-env:1", inputs={"k": "a"})


@dsl.pipeline(default_compute="cpu-cluster")
def refused():
    tune = train(k=Choice(["a", "b"])).sweep(primary_metric="acc", goal="maximize")
    tune.limits = {"max_total_trials": 2}


job = refused()
