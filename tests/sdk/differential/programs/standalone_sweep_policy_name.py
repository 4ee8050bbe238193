"""A standalone sweep given its policy by name and its limits in sweep(): the job's
policy is the named policy with its defaults, as azure-ai-ml's SweepJob makes it."""
from azure.ai.ml import command
from azure.ai.ml.sweep import Choice, LogUniform

job_command = command(
    inputs=dict(batch_size=50, learning_rate=0.001),
    compute="gpu-cluster", environment="keras-env:1", code="./src",
    command="python score.py --batch-size ${{inputs.batch_size}} "
            "--learning-rate ${{inputs.learning_rate}}",
    experiment_name="keras-dnn-image-classify",
)
job = job_command(batch_size=Choice(values=[25, 50, 100]),
                  learning_rate=LogUniform(min_value=-6, max_value=-1)).sweep(
    compute="gpu-cluster", sampling_algorithm="random", primary_metric="Accuracy",
    goal="Maximize", max_total_trials=20, max_concurrent_trials=4, trial_timeout=30,
    early_termination_policy="bandit")
