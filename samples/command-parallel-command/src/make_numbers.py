"""Command step 1: write --count text files; file k holds the integers 10k+1 ... 10k+10."""

import argparse
import os

parser = argparse.ArgumentParser(allow_abbrev=False)
parser.add_argument("--count", type=int, required=True)
parser.add_argument("--output", required=True)
args = parser.parse_args()

for k in range(args.count):
    path = os.path.join(args.output, f"numbers_{k:02d}.txt")
    with open(path, "w", encoding="utf-8") as fh:
        fh.write("\n".join(str(10 * k + i) for i in range(1, 11)) + "\n")
print(f"wrote {args.count} files to {args.output}")
