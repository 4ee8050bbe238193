"""MLTable files: parsing errors, header modes and the read_* options, pinned."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from mlpipe.data import DataError, input_kind, read_mltable
from tests.data.support import CORPUS_IRIS, delimited, loaded, step_for, write_mltable

IRIS_COPIES = [
    CORPUS_IRIS,  # utf8
    "azureml-examples/cli/jobs/pipelines/iris-batch-prediction-using-parallel/neural-iris-mltable",
    "azure-sdk-for-python/test_configs/dataset/neural-iris-mltable",
    "azure-sdk-for-python/test_configs/dsl_pipeline/parallel_component/dataset/iris-mltable",  # ascii
    # ascii, no final newline (84,031 bytes)
    "azure-sdk-for-python/test_configs/dsl_pipeline/parallel_component_with_tabular_input/dataset/iris-mltable",
]


@pytest.mark.parametrize("rel", IRIS_COPIES)
def test_all_files_same_headers_on_headerless_iris_takes_first_row_as_header(
        corpus: Path, rel: str) -> None:
    table = read_mltable(corpus / rel)
    assert table.shape == (74, 44)
    assert table.columns[0] == "5.099999999999999645e+00"
    assert input_kind(step_for(corpus / rel)) == "table"


def two_files(tmp_path: Path) -> Path:
    (tmp_path / "a.csv").write_text("x,y,s\n1,2,foo\n3,,\n")
    (tmp_path / "b.csv").write_text("x,y,s\n5,6,bar\n")
    return tmp_path


PATHS = "  - file: ../a.csv\n  - file: ../b.csv\n"


def test_header_all_files_same_headers_skips_first_line_of_every_file(tmp_path: Path) -> None:
    two_files(tmp_path)
    table = read_mltable(write_mltable(tmp_path / "t", delimited(PATHS, header="all_files_same_headers")))
    assert list(table.columns) == ["x", "y", "s"]
    assert table["x"].tolist() == [1, 3, 5]
    assert table["s"].isna().tolist() == [False, True, False]  # empty -> null by default


def test_header_from_first_file_reads_later_first_lines_as_data(tmp_path: Path) -> None:
    two_files(tmp_path)
    table = read_mltable(write_mltable(tmp_path / "t", delimited(PATHS, header="from_first_file")))
    assert list(table.columns) == ["x", "y", "s"]
    assert table["x"].astype(str).tolist() == ["1", "3", "x", "5"]


def test_header_no_header_names_columns_column1_to_n(tmp_path: Path) -> None:
    two_files(tmp_path)
    table = read_mltable(write_mltable(tmp_path / "t", delimited(PATHS, header="no_header")))
    assert list(table.columns) == ["Column1", "Column2", "Column3"]
    assert len(table) == 5 and table["Column1"].tolist() == ["x", "1", "3", "x", "5"]


def test_header_all_files_different_headers_unions_columns(tmp_path: Path) -> None:
    (tmp_path / "a.csv").write_text("x,y\n1,2\n")
    (tmp_path / "b.csv").write_text("y,z\n7,8\n")
    mlt = write_mltable(tmp_path / "t", delimited(PATHS.replace("b.csv", "b.csv"),
                                                   header="all_files_different_headers"))
    table = read_mltable(mlt)
    assert list(table.columns) == ["x", "y", "z"]
    assert table["y"].tolist() == [2, 7]
    # a mini-batch holds one file's rows with that file's own header
    frames = loaded(mlt, size="1kb")
    assert [list(f.columns) for f in frames] == [["x", "y"], ["y", "z"]]


def test_empty_as_string_keeps_empty_strings(tmp_path: Path) -> None:
    two_files(tmp_path)
    table = read_mltable(write_mltable(tmp_path / "t", delimited(PATHS, empty_as_string=True)))
    assert table["s"].tolist() == ["foo", "", "bar"]


def test_include_path_column_puts_absolute_path_first(tmp_path: Path) -> None:
    two_files(tmp_path)
    table = read_mltable(write_mltable(tmp_path / "t", delimited(PATHS, include_path_column=True)))
    assert table.columns[0] == "Path"
    assert table["Path"].tolist() == [str(tmp_path / "a.csv")] * 2 + [str(tmp_path / "b.csv")]


def test_delimiter_and_latin1_encoding(tmp_path: Path) -> None:
    (tmp_path / "a.csv").write_bytes("name;city\nJosé;Zürich\n".encode("latin-1"))
    mlt = write_mltable(tmp_path / "t", delimited("  - file: ../a.csv\n", delimiter="';'",
                                                  encoding="latin1"))
    assert read_mltable(mlt).to_dict("records") == [{"name": "José", "city": "Zürich"}]


def test_support_multi_line_keeps_quoted_newlines_in_one_row(tmp_path: Path) -> None:
    (tmp_path / "a.csv").write_text('id,text\n1,"line one\nline two"\n2,plain\n')
    mlt = write_mltable(tmp_path / "t", delimited("  - file: ../a.csv\n", support_multi_line=True))
    assert read_mltable(mlt)["text"].tolist() == ["line one\nline two", "plain"]
    # divided one record per mini-batch, the quoted newline does not end a record
    frames = loaded(mlt, size="1")
    assert [f["text"].tolist() for f in frames] == [["line one\nline two"], ["plain"]]
    # without support_multi_line the cut falls inside the quotes: a clear error
    without = write_mltable(tmp_path / "u", delimited("  - file: ../a.csv\n"))
    with pytest.raises(DataError) as err:
        loaded(without, size="1")
    assert err.value.diagnostic.location.file == str(tmp_path / "a.csv")


def test_read_parquet(tmp_path: Path) -> None:
    pq.write_table(pa.table({"a": [1, 2, 3], "b": ["x", "y", "z"]}), tmp_path / "p.parquet")
    mlt = write_mltable(tmp_path / "t", "paths:\n  - file: ../p.parquet\ntransformations:\n"
                                        "  - read_parquet:\n      include_path_column: true\n")
    table = read_mltable(mlt)
    assert list(table.columns) == ["Path", "a", "b"] and table["a"].tolist() == [1, 2, 3]


def test_read_json_lines_and_invalid_lines(tmp_path: Path) -> None:
    (tmp_path / "a.jsonl").write_text('{"a": 1, "b": "x"}\n{"a": 2, "b": "y"}\nnot json\n')
    bad = write_mltable(tmp_path / "t", "paths:\n  - file: ../a.jsonl\ntransformations:\n"
                                        "  - read_json_lines:\n      encoding: utf8\n")
    with pytest.raises(DataError) as err:
        read_mltable(bad)
    assert err.value.diagnostic.location.line == 3
    assert err.value.diagnostic.location.file == str(tmp_path / "a.jsonl")
    drop = write_mltable(tmp_path / "u", "paths:\n  - file: ../a.jsonl\ntransformations:\n"
                                         "  - read_json_lines:\n      invalid_lines: drop\n")
    assert read_mltable(drop)["a"].tolist() == [1, 2]


def test_wrong_field_count_names_file_and_line(tmp_path: Path) -> None:
    (tmp_path / "a.csv").write_text("x,y\n1,2\n3,4\n5\n6,7\n")
    mlt = write_mltable(tmp_path / "t", delimited("  - file: ../a.csv\n"))
    with pytest.raises(DataError) as err:
        loaded(mlt, size="6")
    diag = err.value.diagnostic
    assert diag.location.file == str(tmp_path / "a.csv") and diag.location.line == 4
    assert "expected 2 fields, got 1" in diag.message


def test_read_delta_lake_is_a_clear_out_of_scope_error(tmp_path: Path) -> None:
    mlt = write_mltable(tmp_path / "t", "paths:\n  - folder: ./d\ntransformations:\n"
                                        "  - read_delta_lake:\n      timestamp_as_of: 2022-08-26\n")
    with pytest.raises(DataError) as err:
        read_mltable(mlt)
    assert "read_delta_lake is not supported" in str(err.value)
    assert err.value.diagnostic.location.line == 4


@pytest.mark.parametrize("text,line,needle", [
    ("paths:\n  - file: ./a.csv\n transformations: [\n", 3, "malformed MLTable YAML"),
    ("path:\n  - file: ./a.csv\n", 1, "did you mean 'paths'"),
    ("paths: []\n", 1, "non-empty list"),
    ("paths:\n  - files: ./a.csv\n", 2, "did you mean 'file'"),
    ("paths:\n  - file: ./a.csv\ntransformations:\n  - read_delimited:\n      header: first_row\n",
     5, "unknown header mode"),
    ("paths:\n  - file: ./a.csv\ntransformations:\n  - read_delimited:\n      delimeter: ','\n",
     5, "did you mean 'delimiter'"),
    ("paths:\n  - file: ./a.csv\ntransformations:\n  - read_delimited: {}\n  - take_sample: 3\n",
     5, "unknown transformation"),
    ("paths:\n  - file: ./a.csv\ntransformations:\n  - take: 3\n", 3, "needs a read_delimited"),
    ("paths:\n  - file: ./a.csv\ntransformations:\n  - read_delimited: {}\n  - take: -1\n",
     5, "non-negative"),
    ("paths:\n  - file: ./a.csv\ntransformations:\n  - read_delimited: {}\n"
     "  - filter: '__import__(\"os\").system(\"true\")'\n", 5, "col(\"column name\")"),
])
def test_bad_mltable_files_name_file_line_and_problem(tmp_path: Path, text: str, line: int,
                                                      needle: str) -> None:
    (tmp_path / "a.csv").write_text("x\n1\n")
    write_mltable(tmp_path, text)
    with pytest.raises(DataError) as err:
        read_mltable(tmp_path)
    diag = err.value.diagnostic
    assert diag.location.file == str(tmp_path / "MLTable")
    assert diag.location.line == line, diag.format()
    assert needle in diag.format()


def test_mltable_file_path_itself_is_accepted(tmp_path: Path) -> None:
    (tmp_path / "a.csv").write_text("x\n1\n2\n")
    write_mltable(tmp_path, delimited("  - file: ./a.csv\n"))
    assert read_mltable(tmp_path / "MLTable")["x"].tolist() == [1, 2]


def test_file_mltable_reads_as_path_table(corpus: Path) -> None:
    table = read_mltable(corpus / "azure-sdk-for-python/test_configs/dataset/mnist-data")
    assert list(table.columns) == ["Path"] and len(table) == 4


def test_data_error_pickles_with_its_diagnostic(tmp_path: Path) -> None:
    import pickle

    error = DataError("bad", file="f.csv", line=3, code="bad-row")
    copy = pickle.loads(pickle.dumps(error))
    assert copy.diagnostic == error.diagnostic and str(copy) == "f.csv:3: bad"
    assert json.loads(json.dumps(copy.diagnostic.to_dict()))["line"] == 3
