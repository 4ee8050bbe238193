"""A step runs against a copy of its code folder."""

from __future__ import annotations

from pathlib import Path

from mlpipe.runtime.snapshot import snapshot_code


def test_snapshot_copies_code_and_leaves_out_caches(tmp_path: Path) -> None:
    src = tmp_path / "src"
    (src / "pkg" / "__pycache__").mkdir(parents=True)
    (src / "score.py").write_text("def run(b):\n    return b\n")
    (src / "pkg" / "util.py").write_text("X = 1\n")
    (src / "pkg" / "__pycache__" / "util.cpython-311.pyc").write_bytes(b"\0")
    dest = snapshot_code(src, tmp_path / "step" / "code")
    assert (dest / "score.py").read_text() == (src / "score.py").read_text()
    assert (dest / "pkg" / "util.py").is_file()
    assert not (dest / "pkg" / "__pycache__").exists()
    (src / "score.py").write_text("changed")
    assert "def run" in (dest / "score.py").read_text()
    (dest / "stale.txt").write_text("old")
    snapshot_code(src, dest)
    assert not (dest / "stale.txt").exists() and (dest / "score.py").read_text() == "changed"


def test_snapshot_without_code_is_an_empty_folder(tmp_path: Path) -> None:
    dest = snapshot_code(None, tmp_path / "code")
    assert dest.is_dir() and not any(dest.iterdir())


def test_snapshot_of_a_single_file_holds_only_that_file(tmp_path: Path) -> None:
    # `code: ./src/train.py`: Azure ML uploads the one file, so its siblings are not there
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "train.py").write_text("print(1)\n")
    (tmp_path / "src" / "other.py").write_text("")
    dest = snapshot_code(tmp_path / "src" / "train.py", tmp_path / "step" / "code")
    assert sorted(p.name for p in dest.iterdir()) == ["train.py"]
    assert (dest / "train.py").read_text() == "print(1)\n"
