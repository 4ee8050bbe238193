"""mlpipe's core count is loky's (which joblib and scikit-learn use), without importing joblib."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

PROBE = ("import json, sys; from mlpipe.cores import core_count; "
         "mine = core_count(); joblib_loaded = 'joblib' in sys.modules; "
         "from joblib.externals.loky import cpu_count; "
         "print(json.dumps([mine, cpu_count(), joblib_loaded]))")


def _probe(env: dict[str, str], affinity: set[int] | None = None) -> list[object]:
    def pin() -> None:
        if affinity is not None:
            os.sched_setaffinity(0, affinity)

    out = subprocess.run([sys.executable, "-c", PROBE], env={**os.environ, **env},
                         preexec_fn=pin, capture_output=True, text=True, check=True)
    import json

    return json.loads(out.stdout)


@pytest.mark.parametrize("env", [{}, {"LOKY_MAX_CPU_COUNT": "1"}, {"LOKY_MAX_CPU_COUNT": "64"}])
def test_core_count_is_lokys_without_importing_joblib(env: dict[str, str]) -> None:
    mine, loky, joblib_loaded = _probe(env)
    assert mine == loky
    assert joblib_loaded is False


@pytest.mark.skipif(not hasattr(os, "sched_setaffinity") or (os.cpu_count() or 1) < 2,
                    reason="needs CPU affinity and two CPUs")
def test_core_count_follows_the_process_affinity_as_loky_does() -> None:
    mine, loky, _ = _probe({}, affinity={0})
    assert mine == loky == 1
