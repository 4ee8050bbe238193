"""A parallel component file used as written (its defaults only)."""
from azure.ai.ml import Input, dsl, load_component

score = load_component(source="./components/parallel_score.yml")


@dsl.pipeline(default_compute="cpu-cluster")
def component_as_is(data):
    step = score(data=data)
    return {"scored": step.outputs.scores}


job = component_as_is(data=Input(type="uri_folder", path="./src"))
