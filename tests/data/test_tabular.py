"""Tabular inputs divided by size: every row exactly once, in order, batches near the target."""

from __future__ import annotations

import pickle
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from mlpipe.data import DataError, byte_size, iter_mini_batches, load_mini_batch
from mlpipe.schema.ranges import SettingError, check_setting
from mlpipe.sizes import parse_mini_batch_size
from tests.data.support import CORPUS_IRIS, batches, delimited, loaded, step_for, write_mltable


@pytest.mark.parametrize("text,expected", [
    ("100", 100), ("10kb", 10 * 1024), ("10KB", 10 * 1024), ("1MB", 1 << 20), ("1mb", 1 << 20),
    ("1gb", 1 << 30), ("2k", 2048), ("10485760", 10485760), (None, 1 << 20),
])
def test_byte_sizes_use_1024_and_plain_numbers_are_bytes(text: str | None, expected: int) -> None:
    assert byte_size(None if text is None else parse_mini_batch_size(text)) == expected


def test_a_zero_byte_size_is_rejected() -> None:
    with pytest.raises(DataError, match="positive size"):
        byte_size(parse_mini_batch_size("0"))


@pytest.mark.parametrize("text", ["ten", "10 rows", "1.5mb", "-3"])
def test_unreadable_sizes_are_rejected_before_the_data_layer(text: str) -> None:
    # the schema refuses them; the data layer only ever gets a read MiniBatchSize
    assert parse_mini_batch_size(text) is None
    with pytest.raises(SettingError):
        check_setting("mini_batch_size", text)


@pytest.mark.parametrize("size,count,first_rows", [
    ("10kb", 9, [9] * 8 + [2]), ("100kb", 1, [74]), ("100", 74, [1] * 74), ("10000", 10, [8] * 9 + [2]),
])
def test_corpus_iris_division_matches_manifest(corpus: Path, size: str, count: int,
                                               first_rows: list[int]) -> None:
    frames = loaded(corpus / CORPUS_IRIS, size=size)
    assert len(frames) == count
    assert [len(f) for f in frames] == first_rows
    whole = pd.concat(frames, ignore_index=True)
    assert whole.shape == (74, 44)


@pytest.fixture(scope="module")
def big_csv(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("big")
    rng = np.random.default_rng(1)
    n = 40_000
    frame = pd.DataFrame({"row": np.arange(n), "value": rng.normal(size=n).round(6),
                          "label": rng.choice(["alpha", "beta", "gamma,delta"], size=n)})
    frame.to_csv(folder / "big.csv", index=False)
    write_mltable(folder, delimited("  - file: ./big.csv\n"))
    return folder


def test_large_csv_every_row_once_in_order_and_sizes_near_target(big_csv: Path) -> None:
    target = 64 * 1024
    mbs = batches(big_csv, size="64kb")
    file_bytes = (big_csv / "big.csv").stat().st_size
    assert len(mbs) == pytest.approx(file_bytes / target, rel=0.05, abs=2)
    assert all(mb.size_bytes <= target for mb in mbs)
    assert all(mb.size_bytes > target - 200 for mb in mbs[:-1])  # whole rows packed up to it
    assert all(mb.items is None and mb.kind == "table" for mb in mbs)  # counted by the worker
    rows = pd.concat([load_mini_batch(mb) for mb in mbs], ignore_index=True)
    assert rows["row"].tolist() == list(range(40_000))
    assert set(rows["label"]) == {"alpha", "beta", "gamma,delta"}


def test_descriptors_are_small_picklable_and_stable(big_csv: Path) -> None:
    first = batches(big_csv, size="64kb")
    again = batches(big_csv, size="64kb")
    assert [mb.id for mb in first] == [mb.id for mb in again] and first == again
    assert len({mb.id for mb in first}) == len(first)
    assert len(pickle.dumps(first[3])) < 2000
    detail = first[1].detail
    assert detail["file"] == str(big_csv / "big.csv") and detail["bytes"][0] > 0
    other = batches(big_csv, size="32kb")
    assert other[0].id != first[0].id


def test_driver_streams_without_parsing(big_csv: Path) -> None:
    stream = iter_mini_batches(step_for(big_csv, size="1kb"))
    first = next(stream)
    assert first.index == 0 and first.payload.segments[0].start > 0  # after the header line


def test_csv_without_final_newline_and_header_only_file(tmp_path: Path) -> None:
    (tmp_path / "a.csv").write_text("x\n1\n2\n3")
    (tmp_path / "b.csv").write_text("x\n")
    mlt = write_mltable(tmp_path / "t", delimited("  - file: ../a.csv\n  - file: ../b.csv\n"))
    frames = loaded(mlt, size="2")
    assert [f["x"].tolist() for f in frames] == [[1], [2], [3]]


def test_multi_line_csv_divided_on_record_boundaries(tmp_path: Path) -> None:
    lines = ["id,text"] + [f'{i},"first {i}\nsecond ""{i}"""' for i in range(500)]
    (tmp_path / "m.csv").write_text("\n".join(lines) + "\n")
    mlt = write_mltable(tmp_path / "t", delimited("  - file: ../m.csv\n", support_multi_line=True))
    mbs = batches(mlt, size="1kb")
    assert len(mbs) > 10
    rows = pd.concat([load_mini_batch(mb) for mb in mbs], ignore_index=True)
    assert rows["id"].tolist() == list(range(500))
    assert rows["text"].iloc[7] == 'first 7\nsecond "7"'
    assert all(mb.payload.segments[0].rows for mb in mbs)
    assert sum(mb.payload.segments[0].rows for mb in mbs) == 500


@pytest.fixture(scope="module")
def parquet_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("pq")
    rng = np.random.default_rng(2)
    table = pa.table({"row": np.arange(20_000), "x": rng.normal(size=20_000)})
    pq.write_table(table.slice(0, 12_000), folder / "a.parquet", row_group_size=3_000)  # 4 groups
    pq.write_table(table.slice(12_000), folder / "b.parquet", row_group_size=8_000)  # 1 group
    write_mltable(folder, "paths:\n  - pattern: ./*.parquet\ntransformations:\n  - read_parquet: {}\n")
    return folder


def row_group_bytes(path: Path) -> list[int]:
    meta = pq.ParquetFile(path).metadata
    return [sum(meta.row_group(i).column(c).total_compressed_size
                for c in range(meta.row_group(i).num_columns)) for i in range(meta.num_row_groups)]


def test_parquet_divided_by_row_groups_and_inside_large_groups(parquet_dir: Path) -> None:
    group = row_group_bytes(parquet_dir / "a.parquet")[0]
    big_group = row_group_bytes(parquet_dir / "b.parquet")[0]
    mbs = batches(parquet_dir, size=str(2 * group + 100))
    a_batches = [mb for mb in mbs if mb.detail["file"].endswith("a.parquet")]
    assert [mb.detail["row_groups"] for mb in a_batches] == [[0, 1], [2, 3]]
    b_batches = [mb for mb in mbs if mb.detail["file"].endswith("b.parquet")]
    assert len(b_batches) == -(-big_group // (2 * group + 100))  # a large group is cut in row ranges
    assert all("rows" in mb.detail for mb in b_batches)
    frames = [load_mini_batch(mb) for mb in mbs]
    assert [len(f) for f in frames] == [mb.items for mb in mbs]
    assert pd.concat(frames)["row"].tolist() == list(range(20_000))


def test_parquet_tiny_target_gives_row_slices_of_at_least_one_row(parquet_dir: Path) -> None:
    mbs = batches(parquet_dir, size="1")
    assert len(mbs) == 20_000 and {mb.items for mb in mbs} == {1}


def test_json_lines_divided_by_lines(tmp_path: Path) -> None:
    (tmp_path / "a.jsonl").write_text("".join(f'{{"i": {i}, "s": "v{i}"}}\n' for i in range(300)))
    mlt = write_mltable(tmp_path / "t", "paths:\n  - file: ../a.jsonl\ntransformations:\n"
                                        "  - read_json_lines: {}\n")
    frames = loaded(mlt, size="1kb")
    assert len(frames) > 5
    assert pd.concat(frames)["i"].tolist() == list(range(300))


def test_batches_never_cross_files(tmp_path: Path) -> None:
    for name in "abc":
        (tmp_path / f"{name}.csv").write_text("x\n" + "".join(f"{name}{i}\n" for i in range(3)))
    mlt = write_mltable(tmp_path / "t", "paths:\n  - pattern: ../*.csv\ntransformations:\n"
                                        "  - read_delimited: {}\n")
    frames = loaded(mlt, size="1mb")
    assert [f["x"].tolist() for f in frames] == [[f"{n}{i}" for i in range(3)] for n in "abc"]


def test_empty_table_gives_zero_batches_and_a_note(tmp_path: Path) -> None:
    mlt = write_mltable(tmp_path / "t", "paths:\n  - pattern: ./*.csv\ntransformations:\n"
                                        "  - read_delimited: {}\n")
    notes: list = []
    assert batches(mlt, size="1kb", notes=notes) == [] and notes[0].code == "empty-input"


def test_utf16_file_is_one_batch_per_file(tmp_path: Path) -> None:
    (tmp_path / "u.csv").write_bytes("x,y\n1,é\n2,ü\n".encode("utf-16"))
    mlt = write_mltable(tmp_path / "t", delimited("  - file: ../u.csv\n", encoding="utf16"))
    frames = loaded(mlt, size="1")
    assert len(frames) == 1 and frames[0]["y"].tolist() == ["é", "ü"]


def test_utf16_header_skipped_in_every_file_and_row_numbers_kept(tmp_path: Path) -> None:
    (tmp_path / "a.csv").write_bytes("x,y\n1,a\n2,b\n".encode("utf-16"))
    (tmp_path / "b.csv").write_bytes("x,y\n3,c\n".encode("utf-16"))
    mlt = write_mltable(tmp_path / "t", delimited("  - file: ../a.csv\n  - file: ../b.csv\n",
                                                  encoding="utf16") + "  - skip: 1\n")
    assert [f["x"].tolist() for f in loaded(mlt, size="1kb")] == [[2], [3]]


def test_every_detail_is_json(tmp_path: Path, big_csv: Path, parquet_dir: Path) -> None:
    import json

    (tmp_path / "d.csv").write_text("k,when\na,2024-01-01\nb,2024-01-02\n")
    mlt = write_mltable(tmp_path / "t", delimited("  - file: ../d.csv\n"))
    details = [mb.detail for mb in batches(big_csv, size="1mb")]
    details += [mb.detail for mb in batches(parquet_dir, size="100kb")]
    by_day = batches(mlt, keys=("when",))
    assert [load_mini_batch(mb)["k"].tolist() for mb in by_day] == [["a"], ["b"]]
    partitions = [mb.detail for mb in by_day]
    details += partitions + [mb.detail for mb in batches(big_csv.parent, "uri_folder", "2")]
    for detail in details:
        assert json.loads(json.dumps(detail)) == json.loads(json.dumps(dict(detail)))
    assert partitions[0]["partition_key_value"] == {"when": "2024-01-01 00:00:00"}
