"""Parallel step: for each file, one line "<file> <count> <sum> <sum of squares>"."""

import os


def init():
    pass


def run(mini_batch):
    results = []
    for path in mini_batch:
        with open(path, encoding="utf-8") as fh:
            numbers = [int(line) for line in fh if line.strip()]
        squares = sum(n * n for n in numbers)
        results.append(f"{os.path.basename(path)} {len(numbers)} {sum(numbers)} {squares}")
    return results
