"""v1's file-dataset-partition-per-folder notebook (MachineLearningNotebooks, parallel-run) as a
script, its cells unchanged but for the compute set-up: a FileDataset with a partition_format,
ParallelRunConfig(partition_keys=['user', 'genres']), append_row."""
import os
from azureml.core.workspace import Workspace
ws = Workspace.from_config()
datastore = ws.get_default_datastore()
import azureml.core
print(azureml.core.VERSION)
from azureml.core import Dataset
datastore.upload('test_files/disco', 'dataset_partition_test/user1/winter', overwrite=True, show_progress=False)
datastore.upload('test_files/orchestra', 'dataset_partition_test/user1/fall', overwrite=True, show_progress=False)
datastore.upload('test_files/piano', 'dataset_partition_test/user2/summer', overwrite=True, show_progress=False)
datastore.upload('test_files/spirituality', 'dataset_partition_test/user3/fall', overwrite=True, show_progress=False)
datastore.upload('test_files/piano', 'dataset_partition_test/user4/spring', overwrite=True, show_progress=False)
datastore.upload('test_files/piano', 'dataset_partition_test/user4/fall', overwrite=True, show_progress=False)
partitioned_file_dataset = Dataset.File.from_files(path=(datastore, 'dataset_partition_test/*/*/*.wav'),
                                                   partition_format="dataset_partition_test/{user}/{season}/{genres}.wav",
                                                   validate=False)
print(partitioned_file_dataset.partition_keys)
from azureml.core.compute import AmlCompute, ComputeTarget
compute_name = os.environ.get("AML_COMPUTE_CLUSTER_NAME", "cpu-cluster")
if compute_name in ws.compute_targets:
    compute_target = ws.compute_targets[compute_name]
else:
    provisioning_config = AmlCompute.provisioning_configuration(vm_size="STANDARD_D2_V2", min_nodes=0, max_nodes=2)
    compute_target = ComputeTarget.create(ws, compute_name, provisioning_config)
    compute_target.wait_for_completion(show_output=True, min_node_count=None, timeout_in_minutes=20)
    print(compute_target.get_status().serialize())
from azureml.pipeline.core import Pipeline, PipelineData
output_dir = PipelineData(name="file_dataset_inferences", datastore=datastore)
scripts_folder = "Code"
script_file = "total_file_size.py"
from azureml.core import Environment
from azureml.core.runconfig import CondaDependencies, DEFAULT_CPU_IMAGE
batch_conda_deps = CondaDependencies.create(pip_packages=["azureml-core", "azureml-dataset-runtime[fuse]"])
batch_env = Environment(name="batch_environment")
batch_env.python.conda_dependencies = batch_conda_deps
batch_env.docker.base_image = DEFAULT_CPU_IMAGE
from azureml.pipeline.steps import ParallelRunStep, ParallelRunConfig
parallel_run_config = ParallelRunConfig(
    source_directory=scripts_folder, entry_script=script_file, partition_keys=['user', 'genres'],
    error_threshold=5, output_action='append_row', append_row_file_name="file_size_outputs.txt",
    environment=batch_env, compute_target=compute_target, node_count=2, run_invocation_timeout=600)
parallel_run_step = ParallelRunStep(name='summarize-file-size',
    inputs=[partitioned_file_dataset.as_named_input("partitioned_file_input")],
    output=output_dir, parallel_run_config=parallel_run_config, allow_reuse=False)
from azureml.core import Experiment
pipeline = Pipeline(workspace=ws, steps=[parallel_run_step])
pipeline_run = Experiment(ws, 'file-dataset-partition').submit(pipeline)
pipeline_run.wait_for_completion(show_output=True)
import pandas as pd
import tempfile
batch_run = pipeline_run.find_step_run(parallel_run_step.name)[0]
batch_output = batch_run.get_output_data(output_dir.name)
target_dir = tempfile.mkdtemp()
batch_output.download(local_path=target_dir)
result_file = os.path.join(target_dir, batch_output.path_on_datastore, parallel_run_config.append_row_file_name)
df = pd.read_csv(result_file, delimiter=",", header=None)
df.columns = ["File Name", "File Size", "Ratio of Size in Partition", "user", "genres", "Total File Size of Partition"]
print("Prediction has", df.shape[0], "rows")
print(df.head(10))
