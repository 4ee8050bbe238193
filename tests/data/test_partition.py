"""partition_keys: one mini-batch per distinct key combination."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from mlpipe.data import DataError, load_mini_batch, read_mltable
from tests.data.support import OJ_EXAMPLE, batches, delimited, write_mltable


@pytest.fixture(scope="module")
def oj_partitioned(corpus: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The partition MLTable P01's partition_data.py writes at run time."""
    out = tmp_path_factory.mktemp("oj") / "tabular_output_data"
    example = corpus / OJ_EXAMPLE
    subprocess.run(
        [sys.executable, str(example / "src/partition_data/partition_data.py"),
         "--data_source", str(example / "oj_sales_data/oj_sales_data.csv"),
         "--partition_keys", "Store,Brand", "--tabular_output_data", str(out)],
        check=True, capture_output=True, text=True,
    )
    return out


def test_oj_sales_partition_mltable_reads_11979_rows_by_7_columns(oj_partitioned: Path) -> None:
    table = read_mltable(oj_partitioned)
    assert table.shape == (11_979, 7)
    assert list(table.columns) == ["WeekStarting", "Quantity", "Advert", "Price", "Revenue",
                                   "Store", "Brand"]
    assert all(isinstance(v, str) for v in table["Store"].head())


def test_oj_sales_partition_keys_give_99_batches_of_121_rows(oj_partitioned: Path) -> None:
    notes: list = []
    mbs = batches(oj_partitioned, keys=("Store", "Brand"), notes=notes)
    assert notes == []
    assert len(mbs) == 99 and [mb.index for mb in mbs] == list(range(99))
    first = mbs[0]
    assert dict(first.partition_key_value) == {"Store": "1000", "Brand": "dominicks"}
    assert list(first.partition_key_value) == ["Store", "Brand"]  # partition_keys order
    assert first.detail["partition_key_value"] == {"Store": "1000", "Brand": "dominicks"}
    pairs = {tuple(mb.partition_key_value.values()) for mb in mbs}
    assert len(pairs) == 99 and len({s for s, _ in pairs}) == 33 and len({b for _, b in pairs}) == 3
    frames = [load_mini_batch(mb) for mb in mbs]
    assert {len(f) for f in frames} == {121}
    for mb, frame in zip(mbs[:5], frames, strict=False):
        assert list(frame.columns)[-2:] == ["Store", "Brand"]  # key columns kept
        assert set(frame["Store"]) == {mb.partition_key_value["Store"]}
        assert set(frame["Brand"]) == {mb.partition_key_value["Brand"]}
    assert sum(len(f) for f in frames) == 11_979


def test_the_data_layer_follows_the_plans_partition_keys_without_a_warning(
        oj_partitioned: Path) -> None:
    # partition_keys winning over mini_batch_size is the compiler's rule (it warns once and
    # leaves the size out of the plan); a plan with both still gets one batch per key
    notes: list = []
    mbs = batches(oj_partitioned, size="10kb", keys=("Store", "Brand"), notes=notes)
    assert len(mbs) == 99
    assert notes == []


def test_partition_ids_are_stable(oj_partitioned: Path) -> None:
    first = [mb.id for mb in batches(oj_partitioned, keys=("Store", "Brand"))]
    assert first == [mb.id for mb in batches(oj_partitioned, keys=("Store", "Brand"))]
    assert len(set(first)) == 99


def test_missing_partition_keys_name_the_available_columns(oj_partitioned: Path) -> None:
    with pytest.raises(DataError) as err:
        batches(oj_partitioned, keys=("Store", "Brnd"))
    message = err.value.diagnostic.format()
    assert "['Brnd']" in message
    assert "WeekStarting, Quantity, Advert, Price, Revenue, Store, Brand" in message
    assert "did you mean 'Brand'" in message
    assert err.value.diagnostic.location.file == str(oj_partitioned / "MLTable")


def test_partition_keys_from_data_columns(corpus: Path, tmp_path: Path) -> None:
    source = corpus / OJ_EXAMPLE / "oj_sales_data/oj_sales_data.csv"
    mlt = write_mltable(tmp_path, delimited(f"  - file: {source}\n"))
    mbs = batches(mlt, keys=("Brand",))
    assert [mb.partition_key_value["Brand"] for mb in mbs] == ["dominicks", "minute_maid", "tropicana"]
    frames = [load_mini_batch(mb) for mb in mbs]
    assert [len(f) for f in frames] == [3993, 3993, 3993]
    assert all(set(f["Brand"]) == {mb.partition_key_value["Brand"]} for mb, f in zip(mbs, frames, strict=True))
    by_store = batches(mlt, keys=("Store", "Brand"))
    assert len(by_store) == 99
    assert by_store[0].partition_key_value == {"Store": 1000, "Brand": "dominicks"}
    assert len(load_mini_batch(by_store[5])) == 121


def test_partition_with_filter_keeps_only_matching_rows(tmp_path: Path) -> None:
    (tmp_path / "d.csv").write_text("k,v\na,1\nb,2\na,3\nb,4\nc,5\n")
    mlt = write_mltable(tmp_path / "t", delimited("  - file: ../d.csv\n") + "  - filter: 'v > 1'\n")
    mbs = batches(mlt, keys=("k",))
    assert [mb.partition_key_value["k"] for mb in mbs] == ["a", "b", "c"]
    assert [load_mini_batch(mb)["v"].tolist() for mb in mbs] == [[3], [2, 4], [5]]


def test_partition_key_dropped_by_a_transformation_is_missing(tmp_path: Path) -> None:
    (tmp_path / "d.csv").write_text("k,v\na,1\n")
    mlt = write_mltable(tmp_path / "t", delimited("  - file: ../d.csv\n") + "  - drop_columns: k\n")
    with pytest.raises(DataError, match="available columns: v"):
        batches(mlt, keys=("k",))
    assert isinstance(read_mltable(mlt), pd.DataFrame)


def _audio_files(root: Path) -> Path:
    """users/seasons/genre.wav, as v1's file-dataset-partition-per-folder notebook lays out."""
    for user, season, genre in [("user1", "winter", "disco"), ("user1", "fall", "orchestra"),
                                ("user2", "summer", "piano"), ("user3", "fall", "spirituality"),
                                ("user4", "spring", "piano"), ("user4", "fall", "piano")]:
        folder = root / "data" / user / season
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"{genre}.wav").write_bytes(b"x" * len(genre))
    return root


def _by_folder(tmp_path: Path, paths_entry: str) -> Path:
    """An MLTable of the files at ``paths_entry`` whose folders are user and season."""
    return write_mltable(tmp_path / "table", (
        f"paths:\n  - {paths_entry}\n"
        "transformations:\n  - extract_columns_from_partition_format:\n"
        "      partition_format: 'data/{user}/{season}/{genres}.wav'\n"))


def test_partition_keys_over_files_group_them_by_the_values_in_their_paths(tmp_path: Path) -> None:
    root = _audio_files(tmp_path)
    table = _by_folder(tmp_path, f"pattern: {str(root / 'data' / '*' / '*' / '*.wav')!r}")
    got = batches(table, keys=("user", "genres"))
    assert [dict(mb.partition_key_value) for mb in got] == [  # first appearance, as tables
        {"user": "user1", "genres": "orchestra"}, {"user": "user1", "genres": "disco"},
        {"user": "user2", "genres": "piano"}, {"user": "user3", "genres": "spirituality"},
        {"user": "user4", "genres": "piano"}]
    assert [mb.kind for mb in got] == ["files"] * 5
    assert [len(load_mini_batch(mb)) for mb in got] == [1, 1, 1, 1, 2]
    assert all(Path(p).is_file() for mb in got for p in load_mini_batch(mb))
    assert got[-1].items == 2 and got[-1].size_bytes == 10
    again = batches(table, keys=("user", "genres"))
    assert [mb.id for mb in again] == [mb.id for mb in got]  # stable ids: a resume skips them


def test_partition_keys_over_files_name_the_format_columns(tmp_path: Path) -> None:
    root = _audio_files(tmp_path)
    table = _by_folder(tmp_path, f"folder: {str(root / 'data')!r}")
    with pytest.raises(DataError, match=r"\['genre'\] not found in the input's columns; available columns: user, season, genres") as err:
        batches(table, keys=("user", "genre"))
    assert err.value.diagnostic.hint == "did you mean 'genres'?"
    plain = write_mltable(tmp_path / "plain", f"paths:\n  - folder: {str(root / 'data')!r}\n")
    with pytest.raises(DataError, match="need a tabular input .* or an MLTable of files with "
                                        "extract_columns_from_partition_format"):
        batches(plain, keys=("user",))
