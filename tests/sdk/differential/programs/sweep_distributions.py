"""Every search-space distribution, positional and keyword, and a choice of mappings."""
from azure.ai.ml import Output, command, dsl
from azure.ai.ml.sweep import (
    Choice,
    LogNormal,
    LogUniform,
    Normal,
    QLogNormal,
    QLogUniform,
    QNormal,
    QUniform,
    Randint,
    Uniform,
)

train = command(
    command="python score.py --a ${{inputs.a}} --b ${{inputs.b}} --c ${{inputs.c}} "
            "--d ${{inputs.d}} --e ${{inputs.e}} --f ${{inputs.f}} --g ${{inputs.g}} "
            "--h ${{inputs.h}} --i ${{inputs.i}} --j ${{inputs.j}} --out ${{outputs.out}}",
    code="./src", environment="azureml:train-env:1",
    inputs={"a": 1.0, "b": 1.0, "c": 1.0, "d": 1.0, "e": 1.0, "f": 1.0, "g": 1, "h": 1.0,
            "i": 1.0, "j": "x"},
    outputs={"out": Output(type="uri_folder")},
)


@dsl.pipeline(default_compute="cpu-cluster")
def distributions():
    trial = train(a=Uniform(0.1, 0.9), b=LogUniform(min_value=-6, max_value=-1),
                  c=QUniform(1, 9, 2), d=QLogUniform(min_value=1, max_value=3, q=1),
                  e=Normal(0, 1), f=LogNormal(mu=0.5, sigma=0.2), g=Randint(upper=5),
                  h=QNormal(10, 3, 2), i=QLogNormal(mu=1, sigma=0.5, q=1),
                  j=Choice([1, 2.5, "x", {"k": Uniform(0, 1), "m": 2}]))
    tune = trial.sweep(primary_metric="loss", goal="minimize")
    tune.set_limits(max_total_trials=10)


job = distributions()
