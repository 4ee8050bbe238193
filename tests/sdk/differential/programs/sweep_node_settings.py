"""What a sweep node takes from the node it sweeps (compute, display name, tags), what it
does not (the node's own variables, resources, limits), and settings on the sweep node."""
from azure.ai.ml import Output, command, dsl
from azure.ai.ml.entities import QueueSettings
from azure.ai.ml.sweep import Choice, Uniform

train = command(
    name="train", display_name="Train", tags={"team": "a"},
    command="python score.py --lr ${{inputs.lr}} --k ${{inputs.k}} --out ${{outputs.model}}",
    code="./src", environment="azureml:train-env:1", environment_variables={"EPOCHS": "3"},
    instance_count=2, timeout=600, inputs={"lr": 0.5, "k": "rbf"},
    outputs={"model": Output(type="uri_folder")},
)


@dsl.pipeline(default_compute="cpu-cluster")
def node_settings():
    trial = train(lr=Uniform(0.01, 0.1), k=Choice(values=["a", "b"]))
    trial.environment_variables = {"NODE": "1"}
    trial.resources.instance_count = 3
    trial.compute = "gpu-cluster"
    tune = trial.sweep(primary_metric="acc", goal="maximize", max_total_trials=4,
                       search_space={"k": Choice(["c", "d"])})
    tune.display_name = "Tune"
    tune.tags = {"team": "b"}
    tune.set_resources(instance_count=2)
    tune.queue_settings = QueueSettings(job_tier="Spot")
    tune.set_objective(primary_metric="loss", goal="minimize")
    replaced = trial.sweep(primary_metric="acc", goal="maximize", max_total_trials=2,
                           compute="cpu-cluster")
    replaced.search_space = {"lr": {"type": "choice", "values": [0.1, 0.2]}}


job = node_settings()
