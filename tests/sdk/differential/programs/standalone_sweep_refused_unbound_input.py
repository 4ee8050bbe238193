"""A standalone sweep of a component file's node whose command uses an input it is not given
(seed): azure-ai-ml refuses it (a standalone job's inputs must cover its command; the
component's default does not count)."""
from azure.ai.ml import Input, load_component
from azure.ai.ml.sweep import BanditPolicy, Choice, Uniform

train = load_component(source="./components/sweep_train.yml")
job = train(data=Input(type="uri_folder", path="./src"), lr=Uniform(0.01, 0.5),
            kernel=Choice(["rbf", "linear"]), shrinking=True).sweep(
    primary_metric="f1", goal="maximize", compute="cpu-cluster", max_total_trials=4,
    early_termination_policy=BanditPolicy(slack_amount=0.1, evaluation_interval=1))
