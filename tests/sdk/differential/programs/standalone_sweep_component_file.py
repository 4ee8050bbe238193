"""A standalone sweep of a component file's node: the trial is the file's command, code and
environment; every input it uses is given or swept."""
from azure.ai.ml import Input, load_component
from azure.ai.ml.sweep import BanditPolicy, Choice, Uniform

train = load_component(source="./components/sweep_train.yml")
job = train(data=Input(type="uri_folder", path="./src"), lr=Uniform(0.01, 0.5),
            kernel=Choice(["rbf", "linear"]), shrinking=True, seed=3).sweep(
    primary_metric="f1", goal="maximize", compute="cpu-cluster", max_total_trials=4,
    early_termination_policy=BanditPolicy(slack_amount=0.1, evaluation_interval=1))
