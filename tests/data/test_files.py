"""File inputs: uri_folder / uri_file / MLTable without read_*: lists of absolute paths."""

from __future__ import annotations

import math
import os
from dataclasses import replace
from pathlib import Path

import pytest

from mlpipe.data import DataError, input_kind, iter_mini_batches, load_mini_batch
from mlpipe.data.listing import iter_files
from mlpipe.sizes import MiniBatchSize
from tests.data.support import batches, loaded, step_for, write_mltable


def make_tree(root: Path, count: int) -> list[str]:
    files = []
    for i in range(count):
        sub = root / f"d{i % 3}"
        sub.mkdir(parents=True, exist_ok=True)
        path = sub / f"f{i:03d}.bin"
        path.write_bytes(b"x" * i)
        files.append(str(path))
    return sorted(files)


@pytest.mark.parametrize("count,k", [(10, 1), (10, 3), (10, 5), (10, 10), (10, 25), (7, 2)])
def test_folder_of_n_files_gives_ceil_n_over_k_batches_each_file_once(
        tmp_path: Path, count: int, k: int) -> None:
    expected = make_tree(tmp_path / "in", count)
    mbs = batches(tmp_path / "in", "uri_folder", str(k))
    assert len(mbs) == math.ceil(count / k)
    assert [mb.index for mb in mbs] == list(range(len(mbs)))
    got = [p for mb in mbs for p in load_mini_batch(mb)]
    assert got == expected  # every file once, sorted within each folder, depth-first
    assert all(os.path.isabs(p) for p in got)
    assert all(mb.items == len(mb.payload) and mb.kind == "files" for mb in mbs)
    assert sum(mb.size_bytes for mb in mbs) == sum(range(count))
    assert mbs[0].detail["files"] == load_mini_batch(mbs[0])


def test_listing_is_recursive_sorted_and_skips_hidden_and_root_mltable(tmp_path: Path) -> None:
    root = tmp_path / "in"
    (root / "b" / "c").mkdir(parents=True)
    (root / ".git").mkdir()
    for rel in ["b/c/2.txt", "b/1.txt", "a.txt", "z.txt", ".hidden", ".git/config",
                "MLTable", "b/MLTable"]:
        (root / rel).write_text(rel)
    names = [os.path.relpath(p, root) for p, _ in iter_files(str(root))]
    assert names == ["a.txt", "b/1.txt", "b/MLTable", "b/c/2.txt", "z.txt"]


def test_folders_above_the_sort_limit_stream_in_stable_directory_order(tmp_path: Path) -> None:
    root = tmp_path / "big"
    (root / "sub").mkdir(parents=True)
    for i in range(20):
        (root / f"f{i:02d}").write_text(str(i))
    (root / "sub" / "b").write_text("b")
    (root / "sub" / "a").write_text("a")
    first = [os.path.relpath(p, root) for p, _ in iter_files(str(root), sort_limit=5)]
    again = [os.path.relpath(p, root) for p, _ in iter_files(str(root), sort_limit=5)]
    assert first == again  # stable for an unchanged folder
    order = [e.name for e in os.scandir(root)]
    expected = []
    for name in order:
        expected += ["sub/a", "sub/b"] if name == "sub" else [name]  # small sub-folder: sorted
    assert first == expected
    assert sorted(first) == sorted(os.path.relpath(p, root) for p, _ in iter_files(str(root)))


@pytest.mark.parametrize("sort_limit", [3, 100])
def test_counting_without_sizes_lists_the_same_files(tmp_path: Path, sort_limit: int) -> None:
    """The counting pass skips the stat of what the folder says is a regular file; links,
    dangling links, a FIFO and the root MLTable are judged as the listing judges them."""
    root = tmp_path / "in"
    (root / "sub").mkdir(parents=True)
    for rel in ["a.txt", "sub/b.txt", "MLTable", "sub/MLTable", "z.bin"]:
        (root / rel).write_text(rel)
    (root / "to-file").symlink_to(root / "a.txt")
    (root / "to-dir").symlink_to(root / "sub")
    (root / "dangling").symlink_to(root / "nowhere")
    os.mkfifo(root / "fifo")
    listed = list(iter_files(str(root), sort_limit=sort_limit))
    counted = list(iter_files(str(root), sort_limit=sort_limit, sizes=False))
    assert [path for path, _ in counted] == [path for path, _ in listed]
    assert {os.path.relpath(path, root) for path, _ in listed} == {  # to-dir: seen as sub
        "a.txt", "sub/b.txt", "sub/MLTable", "z.bin", "to-file"}


def test_a_files_mini_batch_id_is_the_digest_of_its_json(tmp_path: Path) -> None:
    """The id is joined by hand for speed: the same as hashing json.dumps of the parts."""
    from mlpipe.data.batches import _digest, _files_digest

    odd = ["/a/\\é", os.fsdecode(b"caf\xe9.txt"), "\n\t\"", "\U0001f600", ""]
    for root, files in [("/r", ["/r/x"]), ('/a"b', odd), ("", [])]:
        assert _files_digest(root, files) == _digest("files", root, files)


def test_listing_streams_first_batch_before_the_listing_ends(tmp_path: Path) -> None:
    root = tmp_path / "in"
    (root / "a").mkdir(parents=True)
    (root / "z").mkdir()
    (root / "a" / "1.txt").write_text("1")
    stream = iter_mini_batches(step_for(root, "uri_folder", "1"))
    first = next(stream)
    assert load_mini_batch(first) == [str(root / "a" / "1.txt")]
    # "z" has not been read yet: a file created now is still listed
    (root / "z" / "late.txt").write_text("late")
    assert [load_mini_batch(mb) for mb in stream] == [[str(root / "z" / "late.txt")]]


def test_default_mini_batch_size_for_files_is_one(tmp_path: Path) -> None:
    make_tree(tmp_path / "in", 4)
    assert [mb.items for mb in batches(tmp_path / "in", "uri_folder", None)] == [1, 1, 1, 1]


def test_the_data_layer_reads_the_plans_typed_size_not_its_text(tmp_path: Path) -> None:
    # the compiler read mini_batch_size once; the text is for display only
    make_tree(tmp_path / "in", 6)
    step = replace(step_for(tmp_path / "in", "uri_folder"),
                   mini_batch_size=MiniBatchSize(count=3, bytes=3, text="shown as written"))
    assert [mb.items for mb in iter_mini_batches(step)] == [3, 3]


def test_ids_are_stable_and_distinct(tmp_path: Path) -> None:
    make_tree(tmp_path / "in", 6)
    first = batches(tmp_path / "in", "uri_folder", "2")
    again = batches(tmp_path / "in", "uri_folder", "2")
    assert [mb.id for mb in first] == [mb.id for mb in again]
    assert first == again
    assert len({mb.id for mb in first}) == 3


def test_uri_file_is_one_batch_of_one_file(tmp_path: Path) -> None:
    file = tmp_path / "one.csv"
    file.write_text("a\n")
    assert loaded(file, "uri_file", "5") == [[str(file)]]
    assert input_kind(step_for(file, "uri_file")) == "files"


def test_empty_folder_gives_zero_batches_and_a_note(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    notes: list = []
    assert batches(tmp_path / "empty", "uri_folder", "1", notes=notes) == []
    assert [n.code for n in notes] == ["empty-input"] and notes[0].severity == "info"


def test_missing_input_path_is_a_clear_error_raised_at_once(tmp_path: Path) -> None:
    with pytest.raises(DataError) as err:
        iter_mini_batches(step_for(tmp_path / "nope", "uri_folder", "1"))  # before any next()
    assert err.value.diagnostic.code == "missing-path"
    assert str(tmp_path / "nope") in str(err.value)


# unreadable sizes ("-1", "five") never reach a plan: the schema refuses them
# (tests/data/test_tabular.py::test_unreadable_sizes_are_rejected_before_the_data_layer)
@pytest.mark.parametrize("size", ["10kb", "0"])
def test_file_inputs_reject_non_count_sizes(tmp_path: Path, size: str) -> None:
    make_tree(tmp_path / "in", 2)
    with pytest.raises(DataError, match="number of files"):
        batches(tmp_path / "in", "uri_folder", size)


def test_mltable_file_entries_list_exactly_those_files(corpus: Path) -> None:
    folder = corpus / "azure-sdk-for-python/test_configs/dataset/mnist-data"
    assert input_kind(step_for(folder)) == "files"
    got = loaded(folder, size="1")
    assert got == [[str(folder / f"{i}.png")] for i in range(4)]


def test_mltable_file_entry_naming_a_folder_is_one_item_the_folder(corpus: Path) -> None:
    folder = corpus / "azure-sdk-for-python/test_configs/dataset/mnist-mltable"
    assert loaded(folder, size="5") == [[str(folder / "mnist")]]


def test_mltable_folder_entry_expands_recursively(tmp_path: Path) -> None:
    make_tree(tmp_path / "t" / "mnist", 10)
    write_mltable(tmp_path / "t", "paths:\n  - folder: ./mnist\n")
    got = loaded(tmp_path / "t", size="5")
    assert [len(b) for b in got] == [5, 5]
    assert sorted(p for b in got for p in b) == make_tree(tmp_path / "t" / "mnist", 10)


def test_mltable_folder_entry_on_its_own_folder_skips_the_mltable_file(tmp_path: Path) -> None:
    (tmp_path / "t").mkdir()
    (tmp_path / "t" / "a.png").write_bytes(b"a")
    write_mltable(tmp_path / "t", "paths:\n  - folder: .\n")
    assert loaded(tmp_path / "t", size="5") == [[str(tmp_path / "t" / "a.png")]]


def test_mltable_pattern_with_double_star(tmp_path: Path) -> None:
    for rel in ["x/1.png", "x/y/2.png", "3.png", "x/4.txt"]:
        (tmp_path / "t" / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / "t" / rel).write_text(rel)
    write_mltable(tmp_path / "t", "paths:\n  - pattern: ./**/*.png\n")
    got = [os.path.relpath(p, tmp_path / "t") for b in loaded(tmp_path / "t", size="10") for p in b]
    assert got == ["3.png", "x/1.png", "x/y/2.png"]


def test_mltable_missing_file_entry_names_mltable_and_line(tmp_path: Path) -> None:
    write_mltable(tmp_path / "t", "paths:\n  - file: ./a.png\n  - file: ./gone.png\n")
    (tmp_path / "t" / "a.png").write_bytes(b"a")
    with pytest.raises(DataError) as err:
        batches(tmp_path / "t", size="1")
    diag = err.value.diagnostic
    assert diag.location.file == str(tmp_path / "t" / "MLTable") and diag.location.line == 3
    assert "gone.png" in diag.message


def test_mltable_input_without_mltable_file_is_an_error(tmp_path: Path) -> None:
    (tmp_path / "plain").mkdir()
    with pytest.raises(DataError, match="no MLTable file"):
        batches(tmp_path / "plain", size="1")


def test_remote_mltable_path_is_refused(tmp_path: Path) -> None:
    write_mltable(tmp_path / "t", "paths:\n  - file: https://example.com/data.csv\n")
    with pytest.raises(DataError, match="not available offline"):
        batches(tmp_path / "t", size="1")


def test_partition_keys_on_a_file_input_is_an_error(tmp_path: Path) -> None:
    make_tree(tmp_path / "in", 2)
    with pytest.raises(DataError, match="need a tabular input"):
        batches(tmp_path / "in", "uri_folder", keys=("a",))


def test_file_listing_does_not_load_pandas_or_pyarrow(tmp_path: Path) -> None:
    import subprocess
    import sys

    make_tree(tmp_path / "in", 3)
    code = (
        "import sys\n"
        "from mlpipe.data import iter_mini_batches, load_mini_batch\n"
        "from tests.data.support import step_for\n"
        f"mbs = list(iter_mini_batches(step_for({str(tmp_path / 'in')!r}, 'uri_folder', '2')))\n"
        "assert [len(load_mini_batch(mb)) for mb in mbs] == [2, 1]\n"
        "print(sorted(m for m in ('pandas', 'pyarrow') if m in sys.modules))\n"
    )
    repo = Path(__file__).resolve().parents[2]
    out = subprocess.run([sys.executable, "-c", code], cwd=repo, capture_output=True, text=True,
                         env={**os.environ, "PYTHONPATH": str(repo)}, check=True)
    assert out.stdout.strip() == "[]"


def test_without_file_sizes_the_mini_batches_are_the_same_but_for_their_size(
        tmp_path: Path) -> None:
    """``file_sizes=False`` (the runtime's listing: files are cut by count) gives the same
    mini-batches, ids and details included, with ``size_bytes`` 0; a symlink to a file and
    a dangling one are treated as with sizes."""
    make_tree(tmp_path / "in", 10)
    os.symlink(tmp_path / "in" / "d0" / "f000.bin", tmp_path / "in" / "link.bin")
    os.symlink(tmp_path / "gone.bin", tmp_path / "in" / "dangling.bin")
    step = step_for(tmp_path / "in", "uri_folder", "3")
    sized = list(iter_mini_batches(step))
    unsized = list(iter_mini_batches(step, file_sizes=False))
    assert [replace(mb, size_bytes=0) for mb in sized] == unsized
    assert sum(mb.size_bytes for mb in sized) == sum(range(10))
    assert [p for mb in unsized for p in mb.payload][-1].endswith("link.bin")


def test_the_count_of_a_folder_is_that_of_its_listing(tmp_path: Path) -> None:
    """count_mini_batches walks in directory order (no sort) with the listing's rules:
    hidden names, the root MLTable file, links to files and folders, a link loop."""
    from mlpipe.data.batches import count_mini_batches  # noqa: PLC0415

    root = tmp_path / "in"
    make_tree(root, 17)
    (root / ".hidden").write_text("x")
    (root / "d1" / ".also").write_text("x")
    (root / "MLTable").write_text("paths: []\n")
    (root / "d2" / "MLTable").write_text("not at the root: a file like any other\n")
    os.symlink(root / "d0", root / "d0-again")
    os.symlink(root, root / "d1" / "loop")
    os.symlink(root / "d0" / "f000.bin", root / "link.bin")
    for size in ("1", "2", "5"):
        step = step_for(root, "uri_folder", size)
        assert count_mini_batches(step) == len(list(iter_mini_batches(step)))
