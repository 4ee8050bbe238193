"""Command step: split one CSV into one file per key combination, plus an MLTable.

Writes <out>/<key1>/<key2>/part.csv (without the key columns: the MLTable takes
them back from the folder names) and <out>/MLTable. pandas only.
"""

import argparse
import os

import pandas as pd


def main():
    parser = argparse.ArgumentParser(allow_abbrev=False)
    parser.add_argument("--data", required=True)
    parser.add_argument("--partition_keys", required=True)
    parser.add_argument("--output", required=True)
    args = parser.parse_args()
    keys = [k.strip() for k in args.partition_keys.split(",") if k.strip()]

    table = pd.read_csv(args.data)
    for values, rows in table.groupby(keys, sort=True):
        folder = os.path.join(args.output, *(str(v) for v in values))
        os.makedirs(folder, exist_ok=True)
        rows.drop(columns=keys).to_csv(os.path.join(folder, "part.csv"), index=False)

    partition_format = "/".join("{%s}" % k for k in keys) + "/{file_name}.{extension}"
    with open(os.path.join(args.output, "MLTable"), "w", encoding="utf-8") as fh:
        fh.write(
            "paths:\n"
            "  - pattern: ./**/*.csv\n"
            "transformations:\n"
            "  - read_delimited:\n"
            "      delimiter: ','\n"
            "      encoding: utf8\n"
            "      header: all_files_same_headers\n"
            "      include_path_column: true\n"
            "  - extract_columns_from_partition_format:\n"
            f"      partition_format: '{partition_format}'\n"
            "  - drop_columns:\n"
            "      - Path\n"
            "      - file_name\n"
            "      - extension\n"
        )
    print(f"{len(table)} rows -> {table.groupby(keys).ngroups} partitions in {args.output}")


if __name__ == "__main__":
    main()
