"""A command component file: output types, resources, variables and compute on the node."""
from azure.ai.ml import Input, dsl, load_component
from azure.ai.ml.constants import AssetTypes

prepare = load_component(source="./components/prepare.yml")


@dsl.pipeline(default_compute="cpu-cluster")
def command_file(raw):
    prep = prepare(raw=raw)
    prep.outputs.files.type = AssetTypes.MLTABLE
    prep.outputs.table.type = AssetTypes.MLTABLE
    prep.resources.instance_count = 2
    prep.environment_variables = {"ROWS": "all"}
    prep.compute = "big-cluster"
    return {"files": prep.outputs.files}


job = command_file(raw=Input(type="uri_folder", path="./src"))
