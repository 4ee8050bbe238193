"""Registering an asset refuses what Azure refuses, and a broken asset file is named."""

from __future__ import annotations

from pathlib import Path

import pytest

from mlpipe.diagnostics import ValidationError
from mlpipe.sdk.assets import Data, asset_fields
from mlpipe.sdk.operations.assets import DataOperations


def test_a_broken_asset_file_is_named_never_read_as_empty(tmp_path: Path) -> None:
    (tmp_path / "data.yml").write_text("name: x\nversion: [1\n")
    with pytest.raises(ValidationError) as error:
        asset_fields(tmp_path / "data.yml")
    assert "data.yml:3:1: invalid YAML" in str(error.value)


def test_a_data_asset_of_another_type_or_without_a_text_name_is_refused(tmp_path: Path) -> None:
    (tmp_path / "d").mkdir()
    data = DataOperations(tmp_path / "runs", base_dir=tmp_path)
    with pytest.raises(ValueError, match="type 'nonsense' is not one of uri_file, uri_folder, "
                                         "mltable"):
        data.create_or_update(Data(name="x", path="./d", type="nonsense"))
    with pytest.raises(ValueError, match=r"needs an asset with a name \(text\)"):
        data.create_or_update(Data(name=5, path="./d"))  # type: ignore[arg-type]
    made = data.create_or_update(Data(name="x", path="./d", type="uri_folder"))
    assert (made.name, made.version, made.path) == ("x", "1", str((tmp_path / "d").resolve()))
