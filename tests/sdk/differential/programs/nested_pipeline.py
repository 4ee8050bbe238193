"""A @pipeline called inside another: a pipeline component step."""
from azure.ai.ml import Input, Output, command, dsl

score = command(name="score", command="ls ${{inputs.data}} > ${{outputs.scored}}/files.txt",
                environment="azureml:env:1", inputs=dict(data=Input(type="uri_folder")),
                outputs=dict(scored=Output(type="uri_folder")))
report = command(name="report", command="cat ${{inputs.rows}}/files.txt",
                 environment="azureml:env:1", inputs=dict(rows=Input(type="uri_folder")))


@dsl.pipeline()
def scoring(data):
    step = score(data=data)
    return {"scored": step.outputs.scored}


@dsl.pipeline(default_compute="cpu-cluster")
def outer(folder):
    inner = scoring(data=folder)
    report(rows=inner.outputs.scored)


job = outer(folder=Input(type="uri_folder", path="./src"))
