"""A command component FILE with environment_variables, plus the node's own."""
from azure.ai.ml import Input, dsl, load_component

train = load_component(source="./components/train_env.yml")


@dsl.pipeline(default_compute="cpu-cluster")
def command_env(data):
    step = train(data=data)
    step.environment_variables = {"SEED": "1"}


job = command_env(data=Input(type="uri_folder", path="./src"))
