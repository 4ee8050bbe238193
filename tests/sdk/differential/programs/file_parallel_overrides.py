"""A parallel component file, with settings overridden on the node."""
from azure.ai.ml import Input, dsl, load_component

score = load_component(source="./components/parallel_score.yml")


@dsl.pipeline(default_compute="cpu-cluster")
def component_overrides(data, nodes: int = 3):
    step = score(data=data, threshold=5)
    step.resources.instance_count = nodes
    step.retry_settings.timeout = 120
    step.mini_batch_size = "8"
    step.max_concurrency_per_instance = 4
    step.environment_variables = {"LEVEL": "high"}
    return {"scored": step.outputs.scores}


job = component_overrides(data=Input(type="uri_folder", path="./src"))
