"""azureml-examples' v2 pipelines with parallel nodes (sdk/python/jobs/pipelines/1g and
sdk/python/jobs/parallel/3a), laid out as in their repository: the notebook and the
published component files and entry scripts (tests/sdk/notebooks/), with small stand-ins
for the data, the models and the entry scripts that need mlflow or tensorflow."""

from __future__ import annotations

import shutil
from pathlib import Path

from tests.sdk.notebook_support import NOTEBOOKS, copy_notebook, write

MNIST_1G_FILES = 4
IRIS_1G_ROWS = 9  # rows after the header line of the stand-in iris.csv

# The published tabular_batch_inference.py loads an mlflow sklearn model; this one predicts
# with a petal-length rule and returns the same frame (the first four columns + variety).
TABULAR_1G = """\
import argparse
import os

MODEL_NAME = "iris_model"


def init():
    parser = argparse.ArgumentParser(allow_abbrev=False, description="ParallelRunStep Agent")
    parser.add_argument("--model", type=str, default=0)
    args, _ = parser.parse_known_args()
    global model_path
    model_path = args.model + "/" + MODEL_NAME
    assert os.path.isdir(model_path), model_path


def run(input_data):
    result = input_data.drop(input_data.columns[4:], axis=1)
    result["variety"] = ["Setosa" if v < 2.5 else "Versicolor" for v in input_data.iloc[:, 2]]
    return result
"""


def make_parallel_nodes_1g(folder: Path) -> Path:
    """The 1g notebook's folder: src/ (published component and file scorer), dataset/, model/."""
    notebook = copy_notebook("azureml_examples_1g_pipeline_with_parallel_nodes.ipynb", folder)
    shutil.copytree(NOTEBOOKS / "azureml_examples_1g_src", folder / "src")
    write(folder / "src" / "tabular_batch_inference.py", TABULAR_1G)
    write(folder / "src" / "environment_parallel.yml", "dependencies:\n  - python=3.10\n")
    mnist = folder / "dataset" / "mnist-data"
    for i in range(MNIST_1G_FILES):
        write(mnist / f"{i}.png", f"image {i}\n")
    write(mnist / "MLTable", "paths:\n" + "".join(f"  - file: ./{i}.png\n"
                                                  for i in range(MNIST_1G_FILES)))
    rows = [f"{5 + i / 10:.1f},3.0,{1.0 + i / 2:.1f},0.2,0.5,0.7" for i in range(IRIS_1G_ROWS)]
    write(folder / "dataset" / "iris-mltable" / "iris.csv",
          "sepal_length,sepal_width,petal_length,petal_width,x1,x2\n" + "\n".join(rows) + "\n")
    write(folder / "dataset" / "iris-mltable" / "MLTable",
          "paths:\n  - file: ./iris.csv\ntransformations:\n  - read_delimited:\n"
          "      delimiter: \",\"\n      encoding: utf8\n      header: all_files_same_headers\n")
    write(folder / "model" / "iris_model" / "MLmodel", "flavors: {}\n")
    return notebook


MNIST_3A_IMAGES = 12

# The published prepare_data.py downloads MNIST and writes PNGs with PIL; this one writes
# small stand-in files whose content is the digit.
PREPARE_3A = """\
import argparse
import os

parser = argparse.ArgumentParser(allow_abbrev=False, description="parse user arguments")
parser.add_argument("--output_folder", type=str, default=0)
args, _ = parser.parse_known_args()
data_folder = os.path.join(args.output_folder, "mnist")
os.makedirs(data_folder, exist_ok=True)
for i in range(%d):
    with open(os.path.join(data_folder, f"{i}.png"), "w") as image:
        image.write(str(i %% 10))
""" % MNIST_3A_IMAGES

# The published digit_identification.py runs a tensorflow graph; this one reads the digit.
IDENTIFY_3A = """\
import argparse
import os


def init():
    parser = argparse.ArgumentParser(allow_abbrev=False, description="ParallelRunStep Agent")
    parser.add_argument("--model", type=str, default=0)
    args, _ = parser.parse_known_args()
    assert os.path.isfile(os.path.join(args.model, "saved_model.pb"))
    assert os.environ["AZUREML_PARALLEL_EXAMPLE"] == "3a_sdk"


def run(mini_batch):
    return ["{}: {}".format(os.path.basename(path), open(path).read()) for path in mini_batch]
"""


def make_mnist_3a(folder: Path) -> Path:
    """The 3a notebook's folder: script/ (published component, stand-in scripts), models."""
    notebook = copy_notebook("azureml_examples_3a_mnist_batch_prediction.ipynb", folder)
    shutil.copytree(NOTEBOOKS / "azureml_examples_3a_script", folder / "script")
    write(folder / "script" / "prepare_data.py", PREPARE_3A)
    write(folder / "script" / "digit_identification.py", IDENTIFY_3A)
    for name in ("environment_parallel.yml", "environment_prepare.yml"):
        write(folder / "script" / name, "dependencies:\n  - python=3.10\n")
    write(folder / "mnist_models" / "saved_model.pb", "stand-in model\n")
    return notebook
