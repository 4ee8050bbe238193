"""A standalone sweep job (azureml-examples' lightgbm-iris-sweep): a command job called with
distributions, swept, limits and a median-stopping policy set after; what
ml_client.jobs.create_or_update(sweep_job) submits."""
from azure.ai.ml import Input, Output, command
from azure.ai.ml.sweep import Choice, MedianStoppingPolicy, Uniform

command_job = command(
    code="./src",
    command="python score.py --iris-csv ${{inputs.iris_csv}} --learning-rate "
            "${{inputs.learning_rate}} --boosting ${{inputs.boosting}} --out ${{outputs.model}}",
    environment="AzureML-lightgbm-3.2-ubuntu18.04-py37-cpu@latest",
    inputs={"iris_csv": Input(type="uri_file", path="./src/score.py"), "learning_rate": 0.9,
            "boosting": "gbdt", "verbose": False},
    outputs={"model": Output(type="uri_folder")},
    environment_variables={"LOG_LEVEL": "info"},
    compute="cpu-cluster", display_name="lightgbm-iris", experiment_name="iris",
)
trial = command_job(learning_rate=Uniform(min_value=0.01, max_value=0.9),
                    boosting=Choice(values=["gbdt", "dart"]))
job = trial.sweep(compute="cpu-cluster", sampling_algorithm="random",
                  primary_metric="test-multi_logloss", goal="Minimize")
job.display_name = "lightgbm-iris-sweep-example"
job.experiment_name = "lightgbm-iris-sweep-example"
job.set_limits(max_total_trials=20, max_concurrent_trials=10, timeout=7200)
job.early_termination = MedianStoppingPolicy(delay_evaluation=5, evaluation_interval=2)
