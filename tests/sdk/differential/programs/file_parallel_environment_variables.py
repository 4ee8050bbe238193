"""A parallel component FILE with environment_variables (azure-ai-ml drops them)."""
from azure.ai.ml import Input, dsl, load_component

score = load_component(source="./components/parallel_env.yml")


@dsl.pipeline(default_compute="cpu-cluster")
def component_env(data):
    step = score(data=data)
    return {"scored": step.outputs.scores}


job = component_env(data=Input(type="uri_folder", path="./src"))
