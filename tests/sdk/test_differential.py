"""The same azure-ai-ml programs built by azure-ai-ml and by mlpipe give the same job.

Each program in ``tests/sdk/differential/programs/`` sets settings in code (at build time,
on the node later, on the component, on the job: resources, inputs and their modes,
outputs and their modes, retry settings, task fields, environment variables, tags, node
names, ...). ``fixtures/`` holds what azure-ai-ml's ``job._to_dict()`` wrote for each
(made once by ``make_fixtures.py`` in a scratch environment with azure-ai-ml); here the
programs run unchanged on mlpipe's mirrors and ``job.dump()`` must describe the same job
(``effective_job`` in differential_support.py says what "the same" means), and mlpipe
must accept the job it dumped. A program azure-ai-ml refuses must be refused here too.

Before the fixes of issue 19, 53 of these 62 programs gave a different job (32 with the node
names matched up), among them both silent differences it reports:
``par_resources_kwarg_then_bound`` (``resources=`` then a bound ``instance_count``) and
``io_input_mode_direct_from_step`` / ``io_input_mode_eval_mount_from_step`` (an input's mode
written to the upstream step's output).
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
    if "error" in expected:  # refused when it is built, or when it is validated
        assert "error" in actual or actual["problems"], \
            f"azure-ai-ml refuses {name}.py ({expected['error']}); mlpipe built a valid job"
        return
    assert "error" not in actual, f"{name}.py: {actual.get('error')}"
    found = differences(effective_job(expected["job"]), effective_job(actual["job"]))
    assert not found, f"{name}.py:\n  " + "\n  ".join(sorted(found))
    assert actual["problems"] == [], f"mlpipe refuses the job it dumped for {name}.py"


@pytest.mark.parametrize(("name", "variable", "kind"), [
    ("file_parallel_environment_variables", "SCORE_MODE", "parallel"),
    ("file_command_environment_variables", "EPOCHS", "command"),
])
def test_a_component_files_environment_variables_are_dropped_with_a_warning(
        built: dict[str, dict[str, Any]], name: str, variable: str, kind: str) -> None:
    # azure-ai-ml drops them: the REST body it sends has none (its _to_dict() still shows a
    # command component's); mlpipe follows and says where to put them
    assert variable not in str(effective_job(fixture(name)["job"]))
    assert variable not in str(effective_job(built[name]["job"]))
    (warning,) = [w for w in built[name]["warnings"] if variable in w]
    assert f"environment_variables ({variable}) of a {kind} component are not applied" in warning
    assert "jobs.step.environment_variables" in warning and "node.environment_variables" in warning
