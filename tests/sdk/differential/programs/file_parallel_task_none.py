"""node.task = None on a node of a parallel component file: the file's task runs."""
from azure.ai.ml import Input, dsl, load_component

score = load_component(source="./components/parallel_score.yml")


@dsl.pipeline(default_compute="cpu-cluster")
def component_task_none(data):
    step = score(data=data)
    step.task = None
    step.retry_settings = None
    return {"scored": step.outputs.scores}


job = component_task_none(data=Input(type="uri_folder", path="./src"))
