"""Whole-table reads of an MLTable (for tests, tools and small inputs)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from mlpipe.data.division import whole_file_segments
from mlpipe.data.mltable_spec import load_spec
from mlpipe.data.payloads import PATH_COLUMN
from mlpipe.data.segments import read_segment
from mlpipe.data.sources import iter_mltable_files
from mlpipe.data.transform_apply import RowPositions, apply_transforms
from mlpipe.data.transforms import SOURCE_COLUMN


def read_mltable(path: str) -> pd.DataFrame:
    """The whole table an MLTable (file or folder) stands for, transformations applied.

    An MLTable without a read_* transformation gives one ``Path`` column, one row per
    item, as mltable does. take/skip/filter act on the whole table here.
    """
    spec = load_spec(str(path))
    if spec.read is None:
        return pd.DataFrame({PATH_COLUMN: [p for p, _ in iter_mltable_files(spec, tabular=False)]})
    frames = []
    for segment in whole_file_segments(spec):
        frame = read_segment(spec.read, segment)
        frame[SOURCE_COLUMN] = segment.path
        frames.append(frame)
    if not frames:
        return pd.DataFrame()
    table = pd.concat(frames, ignore_index=True) if len(frames) > 1 else frames[0]
    raw = np.arange(len(table), dtype=np.int64)
    rows = RowPositions(raw=raw, current=raw.copy(), whole_table=True)
    table = apply_transforms(table, spec.transforms, source_path=None, rows=rows)
    return table.drop(columns=[SOURCE_COLUMN]).reset_index(drop=True)
