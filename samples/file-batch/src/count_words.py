"""Counts lines, words and characters of each text file (standard library only).

The parallel runtime calls init() once per worker, then run() once per mini-batch
with a list of file paths; each returned string becomes one line of the output file.
"""

import argparse
import os

MIN_LENGTH = 1


def init():
    global MIN_LENGTH
    parser = argparse.ArgumentParser(allow_abbrev=False)
    parser.add_argument("--min_word_length", type=int, default=1)
    args, _unknown = parser.parse_known_args()
    MIN_LENGTH = args.min_word_length


def run(mini_batch):
    results = []
    for path in mini_batch:
        with open(path, encoding="utf-8") as fh:
            text = fh.read()
        words = [w for w in text.split() if len(w) >= MIN_LENGTH]
        name = os.path.basename(path)
        results.append(f"{name} {len(text.splitlines())} {len(words)} {len(text)}")
    return results
