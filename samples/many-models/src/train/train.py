"""Parallel entry script: one demand model per (region, product) partition.

run(mini_batch, mini_batch_context) gets every row of one partition as a DataFrame
and the partition's key values; it fits units = intercept + slope * price by least
squares, saves <model_folder>/<region>/<product>/model.json and returns the rows
with their fitted units (one output line per input row). numpy and pandas only.
"""

import argparse
import json
import os

import numpy as np
import pandas as pd

MODEL_FOLDER = ""


def init():
    global MODEL_FOLDER
    parser = argparse.ArgumentParser(allow_abbrev=False)
    parser.add_argument("--model_folder", required=True)
    args, _unknown = parser.parse_known_args()
    MODEL_FOLDER = args.model_folder


def run(mini_batch, mini_batch_context):
    keys = dict(mini_batch_context.partition_key_value)
    price = pd.to_numeric(mini_batch["price"]).to_numpy(dtype=float)
    units = pd.to_numeric(mini_batch["units"]).to_numpy(dtype=float)
    design = np.column_stack([np.ones_like(price), price])
    (intercept, slope), *_ = np.linalg.lstsq(design, units, rcond=None)

    folder = os.path.join(MODEL_FOLDER, *(str(v) for v in keys.values()))
    os.makedirs(folder, exist_ok=True)
    model = {"keys": keys, "rows": len(mini_batch),
             "intercept": round(float(intercept), 6), "slope": round(float(slope), 6),
             "tag": os.environ.get("MANY_MODELS_TAG")}
    with open(os.path.join(folder, "model.json"), "w", encoding="utf-8") as fh:
        json.dump(model, fh, indent=2)

    fitted = np.round(intercept + slope * price, 3)
    return pd.DataFrame({
        "region": [keys["region"]] * len(mini_batch),
        "product": [keys["product"]] * len(mini_batch),
        "week": pd.to_numeric(mini_batch["week"]).astype(int).to_numpy(),
        "fitted_units": fitted,
    })
