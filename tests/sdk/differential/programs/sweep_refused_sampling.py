"""An unknown sampling algorithm: azure-ai-ml refuses it when the sweep is made."""
from azure.ai.ml import command, dsl
from azure.ai.ml.sweep import Choice

train = command(command="python score.py --k ${{inputs.k}}", code="./src",
                environment="azureml:train-env:1", inputs={"k": "a"})


@dsl.pipeline(default_compute="cpu-cluster")
def refused():
    tune = train(k=Choice(["a", "b"])).sweep(primary_metric="acc", goal="maximize",
                                             sampling_algorithm="hyperband")
    tune.set_limits(max_total_trials=2)


job = refused()
