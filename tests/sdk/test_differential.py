"""The same azure-ai-ml programs built by azure-ai-ml and by mlpipe give the same job.

Each program in ``tests/sdk/differential/programs/`` sets settings in code (at build time,
on the node later, on the component, on the job: resources, inputs and their modes,
outputs and their modes, retry settings, task fields, environment variables, tags, node
names, ...). ``fixtures/`` holds what azure-ai-ml's ``job._to_dict()`` wrote for each
(made once by ``make_fixtures.py`` in a scratch environment with azure-ai-ml); here the
programs run unchanged on mlpipe's mirrors and ``job.dump()`` must describe the same job
(``effective_job`` in differential_support.py says what "the same" means). A program
azure-ai-ml refuses must be refused here too.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.sdk.differential_support import (
    differences,
    effective_job,
    fixture,
    mlpipe_results,
    program_names,
)

PROGRAMS = program_names()


@pytest.fixture(scope="module")
def built() -> dict[str, dict[str, Any]]:
    return mlpipe_results()


def test_there_is_a_fixture_for_every_program_and_enough_programs() -> None:
    assert len(PROGRAMS) >= 35
    for name in PROGRAMS:
        assert "job" in fixture(name) or "error" in fixture(name), name


@pytest.mark.parametrize("name", PROGRAMS)
def test_mlpipe_dumps_the_job_azure_ai_ml_dumps(built: dict[str, dict[str, Any]],
                                                 name: str) -> None:
    expected, actual = fixture(name), built[name]
    if "error" in expected:
        assert "error" in actual, f"azure-ai-ml refuses {name}.py ({expected['error']}); " \
                                  f"mlpipe built a job"
        return
    assert "error" not in actual, f"{name}.py: {actual.get('error')}"
    found = differences(effective_job(expected["job"]), effective_job(actual["job"]))
    assert not found, f"{name}.py:\n  " + "\n  ".join(sorted(found))
