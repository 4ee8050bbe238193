"""Limits: given to sweep(), set and set again, replaced; timeouts under a minute."""
from azure.ai.ml import command, dsl
from azure.ai.ml.sweep import Choice, SweepJobLimits

train = command(command="python score.py --k ${{inputs.k}}", code="./src",
                environment="azureml:train-env:1", inputs={"k": "a"})


@dsl.pipeline(default_compute="cpu-cluster")
def limits():
    given = train(k=Choice(["a", "b"])).sweep(
        primary_metric="acc", goal="maximize", max_total_trials=5, max_concurrent_trials=2,
        timeout=30, trial_timeout=90)
    twice = train(k=Choice(["a", "b"])).sweep(primary_metric="acc", goal="maximize")
    twice.set_limits(max_total_trials=4, timeout=7200)
    twice.set_limits(max_concurrent_trials=1, trial_timeout=10)
    replaced = train(k=Choice(["a", "b"])).sweep(primary_metric="acc", goal="maximize",
                                                 max_total_trials=9)
    replaced.limits = SweepJobLimits(max_total_trials=2, timeout=60)
    changed = train(k=Choice(["a", "b"])).sweep(primary_metric="acc", goal="maximize",
                                                max_total_trials=3)
    changed.limits.timeout = 120


job = limits()
