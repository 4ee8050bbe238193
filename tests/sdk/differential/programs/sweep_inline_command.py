"""A sweep of a command() node: declared and literal inputs, the bandit policy set after,
its output returned from the pipeline and read by another step."""
from azure.ai.ml import Input, Output, command, dsl
from azure.ai.ml.sweep import BanditPolicy, Choice, Uniform

train = command(
    name="train", display_name="Train", tags={"stage": "tune"},
    command="python score.py --lr ${{inputs.lr}} --kernel ${{inputs.kernel}} --n ${{inputs.n}} "
            "--data ${{inputs.data}} --out ${{outputs.model}}",
    code="./src", environment="azureml:train-env:1",
    inputs={"lr": Input(type="number"), "kernel": Input(type="string"), "n": 3,
            "data": Input(type="uri_folder")},
    outputs={"model": Output(type="uri_folder")},
)


@dsl.pipeline(default_compute="cpu-cluster")
def sweep_inline(data):
    trial = train(lr=Uniform(min_value=0.01, max_value=0.1),
                  kernel=Choice(values=["rbf", "linear"]), data=data)
    tune = trial.sweep(primary_metric="accuracy", goal="Maximize")
    tune.set_limits(max_total_trials=4, max_concurrent_trials=2)
    tune.early_termination = BanditPolicy(slack_factor=0.1, evaluation_interval=2)
    check = train(lr=0.05, kernel="rbf", data=tune.outputs.model)
    return {"best": tune.outputs.model}


job = sweep_inline(data=Input(type="uri_folder", path="./src"))
