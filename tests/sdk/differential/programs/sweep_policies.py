"""Early termination: each policy with its defaults, given to sweep() or set after, a slack
amount, and a policy given as a mapping."""
from azure.ai.ml import command, dsl
from azure.ai.ml.sweep import (
    BanditPolicy,
    Choice,
    MedianStoppingPolicy,
    TruncationSelectionPolicy,
    Uniform,
)

train = command(command="python score.py --lr ${{inputs.lr}} --k ${{inputs.k}}",
                code="./src", environment="azureml:train-env:1",
                inputs={"lr": 0.1, "k": "a"})


@dsl.pipeline(default_compute="cpu-cluster")
def policies():
    trial = train(lr=Uniform(0.01, 0.1), k=Choice(["a", "b"]))
    bandit = trial.sweep(primary_metric="acc", goal="maximize", max_total_trials=8,
                         early_termination_policy=BanditPolicy(slack_factor=0.1))
    amount = trial.sweep(primary_metric="acc", goal="maximize", max_total_trials=8,
                         early_termination_policy=BanditPolicy(
                             slack_amount=0.2, delay_evaluation=1, evaluation_interval=3))
    as_mapping = trial.sweep(primary_metric="acc", goal="maximize", max_total_trials=8)
    as_mapping.early_termination = {"type": "bandit", "slack_amount": 0.5,
                                    "evaluation_interval": 1}
    median = trial.sweep(primary_metric="acc", goal="minimize", max_total_trials=8)
    median.early_termination = MedianStoppingPolicy(delay_evaluation=5, evaluation_interval=2)
    median_defaults = trial.sweep(primary_metric="acc", goal="minimize", max_total_trials=8,
                                  early_termination_policy=MedianStoppingPolicy())
    truncation = trial.sweep(primary_metric="acc", goal="maximize", max_total_trials=8)
    truncation.early_termination = TruncationSelectionPolicy(
        truncation_percentage=20, evaluation_interval=1, delay_evaluation=2)


job = policies()
