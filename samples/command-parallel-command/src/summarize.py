"""Command step 3: add up the parallel step's lines into summary.json and print it."""

import argparse
import json
import os

parser = argparse.ArgumentParser(allow_abbrev=False)
parser.add_argument("--results", required=True, help="the parallel step's append_row file")
parser.add_argument("--output", required=True)
args = parser.parse_args()

files = numbers = total = squares = 0
with open(args.results, encoding="utf-8") as fh:
    for line in fh:
        if not line.strip():
            continue
        _name, count, line_sum, line_squares = line.split()
        files += 1
        numbers += int(count)
        total += int(line_sum)
        squares += int(line_squares)
summary = {"files": files, "numbers": numbers, "total": total, "sum_of_squares": squares}
with open(os.path.join(args.output, "summary.json"), "w", encoding="utf-8") as fh:
    json.dump(summary, fh, indent=2)
print(json.dumps(summary))
