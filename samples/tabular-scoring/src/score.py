"""Scores houses with a linear price model (pandas only).

init() reads --model (a folder holding model.json); run() gets a pandas.DataFrame of
rows and returns one row per input row: house_id and the predicted price.
"""

import argparse
import json
import os

import pandas as pd

MODEL = {}


def init():
    parser = argparse.ArgumentParser(allow_abbrev=False)
    parser.add_argument("--model", required=True)
    args, _unknown = parser.parse_known_args()
    with open(os.path.join(args.model, "model.json"), encoding="utf-8") as fh:
        MODEL.update(json.load(fh))


def run(mini_batch):
    price = pd.Series(float(MODEL["intercept"]), index=mini_batch.index)
    for column, weight in MODEL["weights"].items():
        price += weight * pd.to_numeric(mini_batch[column])
    return pd.DataFrame({
        "house_id": pd.to_numeric(mini_batch["house_id"]).astype(int),
        "price": price.round().astype(int),
    })
