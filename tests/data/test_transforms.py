"""MLTable transformations, on the whole table and across mini-batches."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from mlpipe.data import DataError, read_mltable
from tests.data.support import batches, delimited, loaded, write_mltable

ROWS = 200


@pytest.fixture
def table_dir(tmp_path: Path) -> Path:
    lines = ["id,price,name,flag,day"]
    for i in range(ROWS):
        name = "" if i % 10 == 0 else f"n{i % 7}"
        lines.append(f"{i},{i * 0.5},{name},{'yes' if i % 2 else 'no'},2024-01-{1 + i % 28:02d}")
    (tmp_path / "data.csv").write_text("\n".join(lines) + "\n")
    return tmp_path


def mltable(table_dir: Path, *transforms: str) -> Path:
    text = delimited("  - file: ../data.csv\n") + "".join(f"  - {t}\n" for t in transforms)
    return write_mltable(table_dir / "t", text)


def divided(path: Path, size: str = "500") -> pd.DataFrame:
    frames = loaded(path, size=size)
    assert len(frames) > 5
    return pd.concat(frames, ignore_index=True)


def test_take_and_skip_on_whole_table_and_across_mini_batches(table_dir: Path) -> None:
    path = mltable(table_dir, "skip: 15", "take: 30")
    whole = read_mltable(path)
    assert whole["id"].tolist() == list(range(15, 45))
    assert divided(path)["id"].tolist() == list(range(15, 45))
    numbered = batches(path, size="500")
    assert all(mb.payload.segments[0].first_row is not None for mb in numbered)
    assert all(mb.items is None for mb in numbered)  # take/skip: the worker's rows count


def test_take_random_sample_is_seeded_and_independent_of_division(table_dir: Path) -> None:
    path = mltable(table_dir, "take_random_sample:\n      probability: 0.3\n      seed: 7")
    whole = read_mltable(path)["id"].tolist()
    assert 30 < len(whole) < 90
    assert read_mltable(path)["id"].tolist() == whole
    assert divided(path)["id"].tolist() == whole
    other = mltable(table_dir, "take_random_sample:\n      probability: 0.3\n      seed: 8")
    assert read_mltable(other)["id"].tolist() != whole


def test_drop_and_keep_columns(table_dir: Path) -> None:
    assert list(read_mltable(mltable(table_dir, "drop_columns: [flag, day]")).columns) == \
        ["id", "price", "name"]
    assert list(read_mltable(mltable(table_dir, "keep_columns:\n      - day\n      - id")).columns) \
        == ["id", "day"]


def test_missing_column_lists_available_columns(table_dir: Path) -> None:
    with pytest.raises(DataError) as err:
        read_mltable(mltable(table_dir, "drop_columns: [prize]"))
    message = err.value.diagnostic.format()
    assert "available columns: id, price, name, flag, day" in message
    assert "did you mean 'price'" in message
    assert err.value.diagnostic.location.line == 6
    assert err.value.diagnostic.key_path == "transformations.drop_columns"


@pytest.mark.parametrize("expression,expected", [
    ("id < 5", [0, 1, 2, 3, 4]),
    ('col("id") >= 195', [195, 196, 197, 198, 199]),
    ('price > "98.5"', [198, 199]),
    ("id in (3, 4, 150) and flag == 'no'", [4, 150]),
    ("not (id > 2) or id == 199", [0, 1, 2, 199]),
    ("id % 50 == 0 and name is None", [0, 50, 100, 150]),
    ("name == 'n3' and id < 30", [3, 17, 24]),
    ("id * 2 + 1 == 9", [4]),
    ("3 < id <= 5", [4, 5]),
])
def test_filter_expressions(table_dir: Path, expression: str, expected: list[int]) -> None:
    path = mltable(table_dir, f"filter: {expression!r}".replace("\\'", "''"))
    assert read_mltable(path)["id"].tolist() == expected
    assert divided(path, "300")["id"].tolist() == expected


@pytest.mark.parametrize("expression", [
    "__import__('os')", "id.__class__", "[x for x in id]", "lambda: 1", "id if id else 0",
    "open('/etc/passwd')", "id[0]",
])
def test_filter_rejects_anything_outside_the_safe_subset(table_dir: Path, expression: str) -> None:
    with pytest.raises(DataError, match="filter"):
        read_mltable(mltable(table_dir, f"filter: {expression!r}".replace("\\'", "''")))


def test_filter_on_unknown_column_names_columns(table_dir: Path) -> None:
    with pytest.raises(DataError, match="available columns"):
        read_mltable(mltable(table_dir, "filter: 'prce > 3'"))


def test_filter_comparing_text_with_a_number_is_a_data_error(table_dir: Path) -> None:
    path = mltable(table_dir, "filter: 'col(\"name\") > 3'")
    with pytest.raises(DataError, match="cannot evaluate filter .*convert_column_types") as info:
        read_mltable(path)
    assert "MLTable:" in str(info.value) and "transformations.filter" in str(info.value)


def test_take_after_filter_cannot_be_divided_but_reads_whole(table_dir: Path) -> None:
    path = mltable(table_dir, "filter: 'id > 100'", "take: 3")
    assert read_mltable(path)["id"].tolist() == [101, 102, 103]
    with pytest.raises(DataError, match="move take before filter"):
        batches(path, size="500")


def test_convert_column_types(table_dir: Path) -> None:
    path = mltable(table_dir, """convert_column_types:
      - columns: id
        column_type: float
      - columns: [price]
        column_type: int
      - columns: flag
        column_type:
          boolean:
            true_values: ['yes']
            false_values: ['no']
            mismatch_as: error
      - columns: day
        column_type:
          datetime:
            formats: ['%Y-%m-%d']
      - columns: name
        column_type: string""")
    table = read_mltable(path)
    assert table["id"].dtype == "float64"
    assert table["price"].tolist()[:4] == [0, pd.NA, 1, pd.NA]  # 0.5 is not an integer
    assert table["flag"].tolist()[:3] == [False, True, False]
    assert table["day"].iloc[1] == pd.Timestamp("2024-01-02")
    assert table["name"].iloc[0] is None and table["name"].iloc[1] == "n1"


def test_convert_column_types_rejects_unknown_type(table_dir: Path) -> None:
    with pytest.raises(DataError, match="did you mean 'float'"):
        read_mltable(mltable(table_dir, "convert_column_types:\n      - columns: id\n"
                                        "        column_type: flaot"))


@pytest.mark.parametrize(("column_type", "message"), [
    ("{datetime: {formats: 5}}", "'formats' must be a format string or a list"),
    ("{datetime: 5}", "options of column_type 'datetime' must be a mapping"),
    ("{int: x}", "options of column_type 'int' must be a mapping"),
    ("{boolean: {true_values: [{a: 1}]}}", "'true_values' must be a value or a list"),
])
def test_convert_column_types_rejects_malformed_options(table_dir: Path, column_type: str,
                                                        message: str) -> None:
    path = mltable(table_dir, "convert_column_types:\n      - columns: id\n"
                              f"        column_type: {column_type}")
    with pytest.raises(DataError, match=message) as info:
        read_mltable(path)
    assert "MLTable:" in str(info.value) and "convert_column_types" in str(info.value)


def test_convert_column_types_takes_single_boolean_value(table_dir: Path) -> None:
    path = mltable(table_dir, "convert_column_types:\n      - columns: flag\n"
                              "        column_type: {boolean: {true_values: 'yes', "
                              "false_values: 'no', mismatch_as: 'false'}}")
    flags = read_mltable(path)["flag"].tolist()
    assert set(flags) <= {True, False} and True in flags


def test_extract_columns_from_partition_format(tmp_path: Path) -> None:
    for store, day in [("s1", "2024/01/02"), ("s2", "2024/03/04")]:
        folder = tmp_path / store / day
        folder.mkdir(parents=True)
        (folder / "part.csv").write_text("v\n1\n2\n")
    text = ("paths:\n  - pattern: ./**/*.csv\ntransformations:\n  - read_delimited:\n"
            "      delimiter: ','\n  - extract_columns_from_partition_format:\n"
            "      partition_format: '{Store}/{Day:yyyy/MM/dd}/{file_name}.{extension}'\n")
    table = read_mltable(write_mltable(tmp_path, text))
    assert table["Store"].tolist() == ["s1", "s1", "s2", "s2"]
    assert table["Day"].tolist()[2] == pd.Timestamp("2024-03-04")
    assert set(table["extension"]) == {"csv"} and set(table["file_name"]) == {"part"}
    frames = loaded(tmp_path, size="1")
    assert [f["Store"].tolist() for f in frames] == [["s1"], ["s1"], ["s2"], ["s2"]]


def test_extract_format_not_matching_path_is_an_error(tmp_path: Path) -> None:
    (tmp_path / "flat.csv").write_text("v\n1\n")
    text = ("paths:\n  - file: ./flat.csv\ntransformations:\n  - read_delimited: {}\n"
            "  - extract_columns_from_partition_format: '{A}/{file_name}.parquet'\n")
    with pytest.raises(DataError, match="does not match partition format"):
        read_mltable(write_mltable(tmp_path, text))
