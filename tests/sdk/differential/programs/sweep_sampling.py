"""Sampling algorithms: the default, names in any case, and each algorithm object."""
from azure.ai.ml import command, dsl
from azure.ai.ml.sweep import (
    BayesianSamplingAlgorithm,
    Choice,
    GridSamplingAlgorithm,
    RandomSamplingAlgorithm,
    Uniform,
)

train = command(command="python score.py --lr ${{inputs.lr}} --k ${{inputs.k}}",
                code="./src", environment="azureml:train-env:1",
                inputs={"lr": 0.1, "k": "a"})


@dsl.pipeline(default_compute="cpu-cluster")
def sampling():
    default = train(lr=Choice([0.1, 0.2]), k=Choice(["a", "b"])).sweep(
        primary_metric="acc", goal="maximize")
    default.set_limits(max_total_trials=4)
    grid_name = train(lr=Choice([0.1, 0.2]), k=Choice(["a", "b"])).sweep(
        primary_metric="acc", goal="MAXIMIZE", sampling_algorithm="Grid")
    grid_name.set_limits(max_total_trials=4)
    grid = train(lr=Choice([0.1, 0.2]), k="b").sweep(
        primary_metric="acc", goal="minimize", sampling_algorithm=GridSamplingAlgorithm())
    grid.set_limits(max_total_trials=2)
    seeded = train(lr=Uniform(0.1, 0.2), k=Choice(["a", "b"])).sweep(
        primary_metric="acc", goal="maximize",
        sampling_algorithm=RandomSamplingAlgorithm(seed=3, rule="sobol", logbase="e"))
    seeded.set_limits(max_total_trials=3)
    bayes = train(lr=Uniform(0.1, 0.2), k=Choice(["a", "b"])).sweep(
        primary_metric="acc", goal="maximize", sampling_algorithm=BayesianSamplingAlgorithm())
    bayes.set_limits(max_total_trials=3)
    later = train(lr=Uniform(0.1, 0.2), k="a").sweep(primary_metric="acc", goal="maximize")
    later.sampling_algorithm = "bayesian"
    later.set_limits(max_total_trials=3)


job = sampling()
