"""Published notebooks (code cells only, in tests/notebooks) and the small stand-in files
they read: the data, models and entry scripts that sit beside them in their repositories."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

NOTEBOOKS = Path(__file__).resolve().parent / "notebooks"


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def copy_notebook(name: str, folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    return Path(shutil.copy(NOTEBOOKS / name, folder / name))


def notebook_code(path: Path) -> str:
    """The notebook's code cells joined into one script (as ``jupyter nbconvert`` would)."""
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    return "\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "code") + "\n"


# Each published import line, switched to mlpipe (the migration the docs describe).
SWITCHED_IMPORTS = {
    r"^from azure\.identity import": "from mlpipe.identity import",
    r"^from azure\.ai\.ml import": "from mlpipe import",
    r"^from azure\.ai\.ml\.dsl import": "from mlpipe.dsl import",
    r"^from azure\.ai\.ml\.entities import": "from mlpipe.entities import",
    r"^from azure\.ai\.ml\.constants import": "from mlpipe.constants import",
    r"^from azure\.ai\.ml\.parallel import": "from mlpipe.parallel import",
}


def switch_imports(code: str) -> str:
    for pattern, replacement in SWITCHED_IMPORTS.items():
        code = re.sub(pattern, replacement, code, flags=re.M)
    return code


# -- azureml-examples sdk/python/jobs/parallel/2a_iris_batch_prediction -------------------------

IRIS_V2_SCRIPT = """\
import argparse
import json
import os


def init():
    global threshold
    parser = argparse.ArgumentParser()
    parser.add_argument("--model")
    args, _ = parser.parse_known_args()
    with open(os.path.join(args.model, "model.json")) as f:
        threshold = json.load(f)["petal_length_threshold"]


def run(input_data):
    result = input_data.iloc[:, :4].copy()
    result["variety"] = ["Setosa" if x < threshold else "Versicolor" for x in input_data.iloc[:, 2]]
    return result
"""

IRIS_ROWS = 30


def iris_csv(rows: int = IRIS_ROWS, header: bool = True, sep: str = ",") -> str:
    lines = [sep.join(["sepal.length", "sepal.width", "petal.length", "petal.width"])] if header \
        else []
    lines += [sep.join(str(v) for v in (5 + i % 3 * 0.5, 3.0, 1.4 + i % 4, 0.2))
              for i in range(rows)]
    return "\n".join(lines) + "\n"


def make_iris_v2(folder: Path) -> Path:
    """The 2a notebook's folder: script/, neural-iris-mltable/, iris-model/, environment/."""
    notebook = copy_notebook("azureml_examples_2a_iris_batch_prediction.ipynb", folder)
    write(folder / "script" / "iris_prediction.py", IRIS_V2_SCRIPT)
    write(folder / "neural-iris-mltable" / "MLTable",
          "paths:\n  - file: ./iris.csv\ntransformations:\n  - read_delimited:\n"
          "      delimiter: \",\"\n      encoding: utf8\n      header: all_files_same_headers\n")
    write(folder / "neural-iris-mltable" / "iris.csv", iris_csv())
    write(folder / "iris-model" / "model.json", '{"petal_length_threshold": 2.5}\n')
    write(folder / "environment" / "environment_parallel.yml", "dependencies:\n  - python=3.10\n")
    return notebook


# -- azureml-examples sdk/python/jobs/parallel/1a_oj_sales_prediction ---------------------------

PARTITION_COMPONENT = """\
$schema: https://azuremlschemas.azureedge.net/latest/commandComponent.schema.json
type: command
name: partition_data
display_name: Partition input data by keys
version: 1
inputs:
  data_source:
    type: uri_file
  partition_keys:
    type: string
outputs:
  tabular_output_data:
    type: mltable
code: ./
environment:
  image: mcr.microsoft.com/azureml/openmpi4.1.0-ubuntu20.04
  conda_file: ./conda.yaml
command: >-
  python partition_data.py
  --data_source ${{inputs.data_source}}
  --partition_keys ${{inputs.partition_keys}}
  --tabular_output_data ${{outputs.tabular_output_data}}
"""

PARTITION_SCRIPT = """\
import argparse
import os

import pandas as pd

parser = argparse.ArgumentParser()
parser.add_argument("--data_source")
parser.add_argument("--partition_keys")
parser.add_argument("--tabular_output_data")
args, _ = parser.parse_known_args()

keys = args.partition_keys.split(",")
data = pd.read_csv(args.data_source)
for values, group in data.groupby(keys):
    folder = os.path.join(args.tabular_output_data, *[str(v) for v in values])
    os.makedirs(folder, exist_ok=True)
    group.drop(columns=keys).to_csv(os.path.join(folder, "partitioned_data.csv"), index=False)
fmt = "".join("{%s}/" % k for k in keys) + "{file_name}.{extension}"
with open(os.path.join(args.tabular_output_data, "MLTable"), "w") as f:
    f.write("type: mltable\\npaths:\\n  - pattern: ./**/*.csv\\ntransformations:\\n"
            "  - read_delimited:\\n      delimiter: ','\\n      encoding: ascii\\n"
            "      header: all_files_same_headers\\n"
            "  - extract_columns_from_partition_format:\\n"
            f"      partition_format: '{fmt}'\\n")
"""

TRAIN_SCRIPT = """\
import argparse
import os


def init():
    global args
    parser = argparse.ArgumentParser()
    for name in ("--drop_cols", "--target_col", "--date_col", "--lagging_orders",
                 "--model_folder"):
        parser.add_argument(name)
    args, _ = parser.parse_known_args()


def run(input_data, mini_batch_context):
    key = mini_batch_context.partition_key_value
    name = f"{key['Store']}_{key['Brand']}.txt"
    with open(os.path.join(args.model_folder, name), "w") as f:
        f.write(f"{input_data[args.target_col].mean()} {len(input_data)}\\n")
    return [name]
"""

OJ_STORES = (1000, 1001)
OJ_BRANDS = ("dominicks", "tropicana")
OJ_WEEKS = 8


def make_oj_sales(folder: Path) -> Path:
    """The 1a notebook's folder: src/partition_data, src/parallel_train, oj_sales_data/."""
    notebook = copy_notebook("azureml_examples_1a_oj_sales_prediction.ipynb", folder)
    write(folder / "src" / "partition_data" / "partition_data.yml", PARTITION_COMPONENT)
    write(folder / "src" / "partition_data" / "partition_data.py", PARTITION_SCRIPT)
    write(folder / "src" / "partition_data" / "conda.yaml", "dependencies:\n  - python=3.10\n")
    write(folder / "src" / "parallel_train" / "parallel_train.py", TRAIN_SCRIPT)
    write(folder / "src" / "parallel_train" / "conda.yaml", "dependencies:\n  - python=3.10\n")
    rows = ["WeekStarting,Store,Brand,Quantity,Advert,Price,Revenue"]
    rows += [f"1990-06-{10 + w},{s},{b},{1000 + w * 10},1,2.5,{2500 + w}"
             for s in OJ_STORES for b in OJ_BRANDS for w in range(OJ_WEEKS)]
    write(folder / "oj_sales_data" / "oj_sales_data.csv", "\n".join(rows) + "\n")
    return notebook


# -- MachineLearningNotebooks how-to-use-azureml/machine-learning-pipelines/parallel-run --------
# Both notebooks register blob containers of the account "pipelinedata"; an mlpipe.toml beside
# the notebook maps the account's URL to a local folder holding the containers.

BLOB_STAND_IN = '[assets]\n"https://pipelinedata.blob.core.windows.net" = "./blob"\n'

MNIST_SCRIPT = """\
import json
import os

from azureml.core import Model


def init():
    global digits
    model_path = Model.get_model_path("mnist-prs")
    with open(os.path.join(model_path, "model.json")) as f:
        digits = json.load(f)["digits"]


def run(mini_batch):
    results = []
    for image in mini_batch:
        with open(image, "rb") as f:
            value = f.read()[0]
        results.append("{}: {}".format(os.path.basename(image), digits[value % 10]))
    return results
"""

MNIST_IMAGES = 12


def make_mnist_v1(folder: Path) -> Path:
    """Code/digit_identification.py; blob/sampledata/mnist/*.png; blob/mnist-model/*.tar.gz
    (the notebook downloads the model with urllib from the mnist-model container)."""
    import io
    import tarfile

    notebook = copy_notebook("mlnotebooks_file_dataset_image_inference_mnist.ipynb", folder)
    write(folder / "mlpipe.toml", BLOB_STAND_IN)
    write(folder / "Code" / "digit_identification.py", MNIST_SCRIPT)
    images = folder / "blob" / "sampledata" / "mnist"
    images.mkdir(parents=True)
    for i in range(MNIST_IMAGES):
        (images / f"{i}.png").write_bytes(bytes([i]) * 16)
    archive = folder / "blob" / "mnist-model" / "mnist-tf.tar.gz"
    archive.parent.mkdir(parents=True)
    model = json.dumps({"digits": [9 - d for d in range(10)]}).encode()
    with tarfile.open(archive, "w:gz") as tar:
        info = tarfile.TarInfo("model.json")
        info.size = len(model)
        tar.addfile(info, io.BytesIO(model))
    return notebook


# The same notebook as published with SDK 1.0.76 (MachineLearningNotebooks 2214ea8,
# contrib/batch_inferencing, 2019): azureml.contrib.pipeline.steps, ParallelRunStep(models=[model],
# output=...), the model registered as "mnist" from the folder the tarball was extracted into,
# next(pipeline_run.get_children()).get_output_data("inferences"). Its Code/digit_identification.py
# with TensorFlow 1.13 replaced: the same init()/run() shape, the model read through
# Model.get_model_path("mnist") in the worker.
MNIST_CONTRIB_SCRIPT = """\
import os
from azureml.core import Model


def init():
    global digits

    # pull down model from workspace
    model_path = Model.get_model_path("mnist")
    with open(os.path.join(model_path, "model.json")) as f:
        digits = __import__("json").load(f)["digits"]


def run(mini_batch):
    print(f'run method start: {__file__}, run({mini_batch})')
    resultList = []
    for image in mini_batch:
        with open(image, "rb") as f:
            value = f.read()[0]
        resultList.append("{}: {}".format(os.path.basename(image), digits[value % 10]))
    return resultList
"""


def make_mnist_contrib(folder: Path) -> Path:
    """The 2019 contrib notebook over the stand-ins :func:`make_mnist_v1` writes."""
    make_mnist_v1(folder).unlink()
    write(folder / "Code" / "digit_identification.py", MNIST_CONTRIB_SCRIPT)
    return copy_notebook("mlnotebooks_contrib_file_dataset_image_inference_mnist.ipynb", folder)


# The published entry script of the tabular notebook (Code/iris_score.py), unchanged: it imports
# azureml.core.model.Model and azureml_user.parallel_run.EntryScript inside the step's workers.
IRIS_SCORE_SCRIPT = """\
import pickle
import argparse

from azureml.core.model import Model

from azureml_user.parallel_run import EntryScript


def init():
    global iris_model

    logger = EntryScript().logger
    logger.info("init() is called.")

    parser = argparse.ArgumentParser(description="Iris model serving")
    parser.add_argument('--model_name', dest="model_name", required=True)
    args, unknown_args = parser.parse_known_args()

    model_path = Model.get_model_path(args.model_name)
    with open(model_path, 'rb') as model_file:
        iris_model = pickle.load(model_file)


def run(input_data):
    logger = EntryScript().logger
    logger.info("run() is called with: {}.".format(input_data))

    # make inference
    num_rows, num_cols = input_data.shape
    pred = iris_model.predict(input_data).reshape((num_rows, 1))

    # cleanup output
    result = input_data.drop(input_data.columns[4:], axis=1)
    result['variety'] = pred

    return result
"""

# A pickled stand-in for the published scikit-learn model: class 1 above a petal length.
STANDIN_MODEL = """\
import numpy as np


class ThresholdModel:
    def __init__(self, petal_length):
        self.petal_length = petal_length

    def predict(self, data):
        return np.where(data.iloc[:, 2] < self.petal_length, 0, 1)
"""

PICKLE_MODEL = """\
import pickle
import sys

sys.path.insert(0, "Code")
import standin_model

with open(sys.argv[1], "wb") as f:
    pickle.dump(standin_model.ThresholdModel(2.5), f)
"""


def make_iris_v1(folder: Path) -> Path:
    """Code/iris_score.py (+ the model's class); blob/sampledata/iris/iris.csv;
    blob/iris-model/iris_model.pkl."""
    import subprocess
    import sys

    notebook = copy_notebook("mlnotebooks_tabular_dataset_inference_iris.ipynb", folder)
    write(folder / "mlpipe.toml", BLOB_STAND_IN)
    write(folder / "Code" / "iris_score.py", IRIS_SCORE_SCRIPT)
    write(folder / "Code" / "standin_model.py", STANDIN_MODEL)
    write(folder / "blob" / "sampledata" / "iris" / "iris.csv", iris_csv())
    model = folder / "blob" / "iris-model" / "iris_model.pkl"
    model.parent.mkdir(parents=True)
    subprocess.run([sys.executable, "-c", PICKLE_MODEL, str(model)], cwd=folder, check=True)
    return notebook


# The same notebook as it was published with SDK 1.0.76 (MachineLearningNotebooks 2214ea8,
# contrib/batch_inferencing, 2019): azureml.contrib.pipeline.steps, ParallelRunStep(models=[...],
# output=...), next(pipeline_run.get_children()); its Code/iris_score.py without the unused
# scikit-learn import (the stand-in model is pickled from Code/standin_model.py).
IRIS_CONTRIB_SCORE_SCRIPT = """\
import io
import pickle
import argparse
import numpy as np

from azureml.core.model import Model


def init():
    global iris_model

    parser = argparse.ArgumentParser(description="Iris model serving")
    parser.add_argument('--model_name', dest="model_name", required=True)
    args, unknown_args = parser.parse_known_args()

    model_path = Model.get_model_path(args.model_name)
    with open(model_path, 'rb') as model_file:
        iris_model = pickle.load(model_file)


def run(input_data):
    # make inference
    num_rows, num_cols = input_data.shape
    pred = iris_model.predict(input_data).reshape((num_rows, 1))

    # cleanup output
    result = input_data.drop(input_data.columns[4:], axis=1)
    result['variety'] = pred

    return result
"""


def make_iris_contrib(folder: Path) -> Path:
    """The 2019 contrib notebook over the stand-ins :func:`make_iris_v1` writes."""
    make_iris_v1(folder).unlink()
    write(folder / "Code" / "iris_score.py", IRIS_CONTRIB_SCORE_SCRIPT)
    return copy_notebook("mlnotebooks_contrib_tabular_dataset_inference_iris.ipynb", folder)


# -- MachineLearningNotebooks machine-learning-pipelines/pipeline-style-transfer ----------------
# pipeline-style-transfer-parallel-run.ipynb as published with SDK 1.56 (8373b938, the last
# release before the sample was retired), its code cells up to download_video() (the rest
# publishes the pipeline and calls its REST endpoint). Its three scripts keep their arguments
# and files; ffmpeg and the PyTorch model are replaced: a "video" is a text file of frames,
# a style model a JSON shift.

STYLE_FRAMES = 5

STYLE_PROCESS_VIDEO = """\
import argparse
import os

parser = argparse.ArgumentParser(description="Process input video")
parser.add_argument('--input_video', required=True)
parser.add_argument('--output_audio', required=True)
parser.add_argument('--output_images', required=True)

args = parser.parse_args()

os.makedirs(args.output_audio, exist_ok=True)
os.makedirs(args.output_images, exist_ok=True)

# ffmpeg -i {input_video} {output_audio}/video.aac; ffmpeg -i ... {output_images}/%05d_video.jpg
with open(args.input_video) as video:
    frames = int(video.read().split()[1])
with open("{}/video.aac".format(args.output_audio), "w") as audio:
    audio.write("audio of {} frames\\n".format(frames))
for frame in range(1, frames + 1):
    with open("{}/{:05d}_video.jpg".format(args.output_images, frame), "w") as image:
        image.write(str(frame))
"""

STYLE_TRANSFORM = """\
import argparse
import json
import os

from azureml.core.model import Model

style_model = None


def init():
    global output_path, args
    global style_model
    output_path = os.environ['AZUREML_BI_OUTPUT_PATH']
    print(f'output path: {output_path}')

    arg_parser = argparse.ArgumentParser(description="parser for fast-neural-style")
    arg_parser.add_argument("--style", type=str, help="style name")
    args, unknown_args = arg_parser.parse_known_args()
    model_path = Model.get_model_path(args.style)
    with open(os.path.join(model_path)) as f:
        style_model = json.load(f)
    print(f'Model loaded successfully. Path: {model_path}')


def run(mini_batch):
    result = []
    for image_file_path in mini_batch:
        with open(image_file_path) as f:
            pixel = int(f.read())
        output_file_path = os.path.join(output_path, os.path.basename(image_file_path))
        with open(output_file_path, "w") as f:
            f.write("{}:{}".format(style_model["style"], pixel + style_model["shift"]))
        result.append(output_file_path)
    return result
"""

STYLE_STITCH_VIDEO = """\
import argparse
import glob
import os

parser = argparse.ArgumentParser(description="Process input video")
parser.add_argument('--images_dir', required=True)
parser.add_argument('--input_audio', required=True)
parser.add_argument('--output_dir', required=True)

args = parser.parse_args()

os.makedirs(args.output_dir, exist_ok=True)

# ffmpeg -framerate 30 -i {images_dir}/%05d_video.jpg ... {output_dir}/video_without_audio.mp4,
# then ... -i {input_audio}/video.aac ... {output_dir}/video_with_audio.mp4
frames = []
for image in sorted(glob.glob("{}/*_video.jpg".format(args.images_dir))):
    with open(image) as f:
        frames.append(f.read())
with open("{}/video.aac".format(args.input_audio)) as f:
    audio = f.read()
with open("{}/video_with_audio.mp4".format(args.output_dir), "w") as f:
    f.write(" ".join(frames) + "\\n" + audio)
"""


def make_style_transfer(folder: Path) -> Path:
    """scripts/{process_video,transform,stitch_video}.py; blob/sample-videos/orangutan.mp4;
    blob/styletransfer/saved_models/{mosaic,candy}.pth (downloaded with urllib)."""
    notebook = copy_notebook("mlnotebooks_pipeline_style_transfer_parallel_run.ipynb", folder)
    write(folder / "mlpipe.toml", BLOB_STAND_IN)
    write(folder / "scripts" / "process_video.py", STYLE_PROCESS_VIDEO)
    write(folder / "scripts" / "transform.py", STYLE_TRANSFORM)
    write(folder / "scripts" / "stitch_video.py", STYLE_STITCH_VIDEO)
    write(folder / "blob" / "sample-videos" / "orangutan.mp4", f"FRAMES {STYLE_FRAMES}\n")
    for shift, style in enumerate(("mosaic", "candy"), start=1):
        write(folder / "blob" / "styletransfer" / "saved_models" / f"{style}.pth",
              json.dumps({"style": style, "shift": shift}))
    return notebook


# -- microsoft/solution-accelerator-many-models, Custom_Script -----------------------------------
# 02_CustomScript_Training_Pipeline.ipynb's code cells up to its seaborn plots; the dataset it
# reads is registered the way 01_Data_Preparation.ipynb registers it (REGISTER_DATASET).

MANY_MODELS_STAND_IN = ('[assets]\n"https://automlsamplenotebookdata.blob.core.windows.net" = '
                        '"./blob"\n')

REGISTER_DATASET = """\
from azureml.core import Datastore
from azureml.core.dataset import Dataset
from azureml.core.workspace import Workspace

ws = Workspace.from_config()
datastore = Datastore.register_azure_blob_container(
    workspace=ws, datastore_name="automl_many_models",
    container_name="automl-sample-notebook-data", account_name="automlsamplenotebookdata",
    create_if_not_exists=True)
ds_train = Dataset.File.from_files(path=datastore.path("oj_data_small/"), validate=False)
ds_train.register(ws, "oj_data_small_train", create_new_version=True)
"""

# The accelerator's scripts/utilities.py, unchanged: it tags runs through azureml's private REST
# client, which run-script resolves to inert stand-ins.
MANY_MODELS_UTILITIES = """\
from azureml._restclient.models.run_type_v2 import RunTypeV2
from azureml._restclient.models.create_run_dto import CreateRunDto
from azureml._restclient.experiment_client import ExperimentClient


def set_telemetry_scenario(run, scenario_type):
    try:
        # Update step run with the right traits to denote it is training or inference
        run_id = run.id
        create_run_dto = CreateRunDto(run_id=run_id, run_type_v2=RunTypeV2(traits=[scenario_type]))

        experiment_client = ExperimentClient(run.experiment.workspace.service_context,
                                             run.experiment.name,
                                             experiment_id=run.experiment.id)
        experiment_client.create_run(run_id=run_id, create_run_dto=create_run_dto)

    except Exception as e:
        print('exception happened during updating telemetry {}'.format(e))
        pass
"""

# A small train.py with the published one's arguments, run context use and result columns
# (a mean forecast instead of scikit-learn, and no three-minute sleep).
MANY_MODELS_TRAIN = """\
import argparse
import datetime
import os
import pickle

import numpy as np
import pandas as pd
from azureml.core import Run

from utilities import set_telemetry_scenario

parser = argparse.ArgumentParser("split")
parser.add_argument("--target_column", type=str, required=True)
parser.add_argument("--timestamp_column", type=str, required=True)
parser.add_argument("--timeseries_id_columns", type=str, nargs="*", required=True)
parser.add_argument("--drop_columns", type=str, nargs="*", default=[])
parser.add_argument("--model_type", type=str, required=True)
parser.add_argument("--test_size", type=int, required=True)
args, _ = parser.parse_known_args()


def init():
    global current_run
    current_run = Run.get_context()
    set_telemetry_scenario(current_run, "ManyModelsCustomScriptTrain")


def run(input_data):
    os.makedirs("./outputs", exist_ok=True)
    result_list = []
    for idx, csv_file_path in enumerate(input_data):
        start = datetime.datetime.now()
        file_name = os.path.basename(csv_file_path)[:-4]
        model_name = args.model_type + "_" + file_name
        data = (pd.read_csv(csv_file_path, parse_dates=[args.timestamp_column], header=0)
                .set_index(args.timestamp_column).sort_index(ascending=True))
        train, test = data[:-args.test_size], data[-args.test_size:]
        child_run = current_run.child_run(name=model_name)
        forecast = train[args.target_column].mean()
        errors = test[args.target_column] - forecast
        mse = float((errors ** 2).mean())
        mae = float(errors.abs().mean())
        mape = float((errors.abs() / test[args.target_column]).mean() * 100)
        child_run.log(model_name + "_mse", mse)
        with open(os.path.join("./outputs/", model_name), "wb") as f:
            pickle.dump(forecast, f)
        child_run.upload_file(model_name, os.path.join("./outputs/", model_name))
        ts_id_dict = {c: str(data[c].iloc[0]) for c in args.timeseries_id_columns}
        tags = {**ts_id_dict, "ModelType": args.model_type, "RunId": current_run.parent.id}
        child_run.register_model(model_path=model_name, model_name=model_name,
                                 model_framework=args.model_type, tags=tags)
        child_run.complete()
        end = datetime.datetime.now()
        result_list.append({**ts_id_dict, "model_type": args.model_type, "file_name": file_name,
                            "model_name": model_name, "start_date": str(start),
                            "end_date": str(end), "duration": str(end - start), "mse": mse,
                            "rmse": np.sqrt(mse), "mae": mae, "mape": mape, "index": idx,
                            "num_models": len(input_data), "status": child_run.get_status(),
                            "run_id": str(child_run.id)})
    return pd.DataFrame(result_list)
"""

MANY_MODELS_SERIES = (("1000", "dominicks"), ("1000", "tropicana"), ("1001", "minute.maid"))
MANY_MODELS_WEEKS = 30


def make_many_models(folder: Path) -> tuple[Path, Path]:
    """The Custom_Script folder (scripts/, the training notebook) and the registration script."""
    notebook = copy_notebook("many_models_02_custom_script_training.ipynb", folder)
    write(folder / "mlpipe.toml", MANY_MODELS_STAND_IN)
    write(folder / "scripts" / "train.py", MANY_MODELS_TRAIN)
    write(folder / "scripts" / "utilities.py", MANY_MODELS_UTILITIES)
    register = write(folder / "register_data.py", REGISTER_DATASET)
    for store, brand in MANY_MODELS_SERIES:
        rows = ["WeekStarting,Store,Brand,Quantity,Advert,Price,Revenue"]
        rows += [f"1990-{6 + w // 28:02d}-{1 + w % 28:02d},{store},{brand},{10000 + 37 * w},1,"
                 f"2.5,{25000 + w}" for w in range(MANY_MODELS_WEEKS)]
        write(folder / "blob" / "automl-sample-notebook-data" / "oj_data_small" /
              f"Store{store}_{brand}.csv", "\n".join(rows) + "\n")
    return notebook, register


# -- MachineLearningNotebooks parallel-run/tabular-dataset-partition-per-column ------------------

OJ_URL = ("https://raw.githubusercontent.com/Azure/azureml-examples/main/sdk/python/jobs/"
          "automl-standalone-jobs/automl-forecasting-orange-juice-sales/data/dominicks_OJ.csv")
OJ_COLUMNS = ("WeekStarting,Store,Brand,Quantity,logQuantity,Advert,Price,Age60,COLLEGE,INCOME,"
              "Hincome150,Large HH,Minorities,WorkingWoman,SSTRDIST,SSTRVOL,CPDIST5,CPWVOL5")
OJ_PARTITIONS = (("2", "dominicks"), ("2", "tropicana"), ("5", "dominicks"))
OJ_PARTITION_WEEKS = 4

# The published entry script Code/total_income.py, unchanged.
TOTAL_INCOME_SCRIPT = """\
import os


def init():
    print("Init")


def run(mini_batch):
    print(f'run method start: {__file__}, run({mini_batch})')
    total_income = mini_batch["INCOME"].sum()
    print(f'total_income = {total_income}')
    mini_batch["total_income"] = total_income

    return mini_batch
"""


def oj_partition_csv() -> str:
    rows = [OJ_COLUMNS]
    for store, brand in OJ_PARTITIONS:
        rows += [f"1990-06-{10 + w},{store},{brand},{100 + w},4.6,1,2.5,0.2,0.2,{10 + w},0.4,0.1,"
                 "0.1,0.3,2.1,1.1,1.9,0.3" for w in range(OJ_PARTITION_WEEKS)]
    return "\n".join(rows) + "\n"


def make_oj_partition(folder: Path) -> Path:
    """Code/total_income.py; the notebook downloads dominicks_OJ.csv with ``requests``: an
    mlpipe.toml maps the URL to a local file (without requests installed, that cell is replaced
    by copying the file, see tests/sdk/test_notebooks.py)."""
    notebook = copy_notebook("mlnotebooks_tabular_dataset_partition_per_column.ipynb", folder)
    write(folder / "Code" / "total_income.py", TOTAL_INCOME_SCRIPT)
    write(folder / "stand-ins" / "dominicks_OJ.csv", oj_partition_csv())
    write(folder / "mlpipe.toml", f'[assets]\n"{OJ_URL}" = "./stand-ins/dominicks_OJ.csv"\n')
    return notebook


# -- azureml-examples sdk/python/jobs/single-step/lightgbm/iris (lightgbm-iris-sweep) ------------
# Its main.py trains LightGBM with mlflow.autolog(); the stand-in logs the metric the sweeps
# optimise, once per boosting round, from the swept learning rate and boosting type.

LIGHTGBM_MAIN = """\
import argparse

import mlflow

parser = argparse.ArgumentParser()
parser.add_argument("--iris-csv")
parser.add_argument("--learning-rate", type=float)
parser.add_argument("--boosting")
args = parser.parse_args()
rows = len(open(args.iris_csv).read().splitlines()) - 1
loss = abs(args.learning_rate - 0.3) + (0.2 if args.boosting == "dart" else 0.0)
for round in range(1, 7):
    mlflow.log_metric("test-multi_logloss", loss + 1.0 / round, step=round)
print("rows", rows)
"""

IRIS_URLS = '''[assets]
"https://azuremlexamples.blob.core.windows.net/datasets/iris.csv" = "./iris.csv"
"wasbs://datasets@azuremlexamples.blob.core.windows.net/iris.csv" = "./iris.csv"
'''


def make_lightgbm_sweep(folder: Path) -> Path:
    """The notebook, its stand-in ``src/main.py``, and the iris data its URLs stand for."""
    notebook = copy_notebook("azureml_examples_lightgbm_iris_sweep.ipynb", folder)
    write(folder / "src" / "main.py", LIGHTGBM_MAIN)
    write(folder / "iris.csv", iris_csv())
    write(folder / "mlpipe.toml", IRIS_URLS)
    return notebook
