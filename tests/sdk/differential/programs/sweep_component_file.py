"""A sweep of a component file's node: distributions, literals of each type, limits, outputs
read downstream."""
from azure.ai.ml import Input, dsl, load_component
from azure.ai.ml.sweep import Choice, Uniform

train = load_component(source="./components/sweep_train.yml")
use = load_component(source="./components/sweep_use.yml")


@dsl.pipeline(default_compute="cpu-cluster")
def sweep_file(data):
    trial = train(data=data, lr=Uniform(min_value=0.01, max_value=0.5),
                  kernel=Choice(["rbf", "linear"]), shrinking=False, seed=7)
    tune = trial.sweep(primary_metric="f1", goal="maximize", sampling_algorithm="random",
                       compute="gpu-cluster")
    tune.set_limits(max_total_trials=6, max_concurrent_trials=2, timeout=3600)
    use(model=tune.outputs.model, scores=tune.outputs.scores)


job = sweep_file(data=Input(type="uri_folder", path="./src"))
