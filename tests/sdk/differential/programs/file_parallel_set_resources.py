"""set_resources and a task change on a node of a parallel component file."""
from azure.ai.ml import Input, dsl, load_component

score = load_component(source="./components/parallel_score.yml")


@dsl.pipeline(default_compute="cpu-cluster")
def component_set_resources(data):
    step = score(data=data)
    step.set_resources(instance_count=6)
    step.task.program_arguments = "--threshold 9"
    step.inputs.data.mode = "download"
    return {"scored": step.outputs.scores}


job = component_set_resources(data=Input(type="uri_folder", path="./src"))
