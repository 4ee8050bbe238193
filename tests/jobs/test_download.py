"""`job download` copies what the job wrote: links as links (never followed out of the job,
so a link loop or /etc/shadow copies nothing), a step's output by `step.output`, a child
job by the name `job list --parent-job-name` gives, never job.lock, never over a file of
the download folder."""

from __future__ import annotations

import json
import os
import textwrap
from pathlib import Path

import pytest

from tests.conftest import run_cli
from tests.jobs.support import create
from tests.jobs.user_files_support import HEADER

COMMAND = """\
echo scored > ${{outputs.scored}}/result.txt
mkdir ${{outputs.scored}}/sub && echo deep > ${{outputs.scored}}/sub/deep.txt
ln -s .. ${{outputs.scored}}/up
ln -s .. ${{outputs.scored}}/up2
ln -s /etc/shadow ${{outputs.scored}}/shadow
ln -s result.txt ${{outputs.scored}}/same.txt
"""


def _job(tmp_path: Path, name: str = "rev1") -> Path:
    project = tmp_path / "proj"
    project.mkdir(exist_ok=True)
    yaml = project / "pipeline.yml"
    yaml.write_text(HEADER + "jobs:\n  score:\n    type: command\n    environment: azureml:env:1\n"
                    "    outputs:\n      scored: {type: uri_folder}\n    command: |\n"
                    + textwrap.indent(COMMAND, " " * 6))
    ran = create(yaml, tmp_path / "runs", name)
    assert ran.proc.returncode == 0, ran.proc.stdout + ran.proc.stderr
    return tmp_path / "runs"


def _download(runs: Path, *args: str) -> tuple[int, str]:
    proc = run_cli("job", "download", *args, "--runs-dir", str(runs))
    assert "Traceback" not in proc.stderr, proc.stderr
    return proc.returncode, proc.stdout + proc.stderr


def test_links_are_copied_as_links_and_never_followed(tmp_path: Path) -> None:
    runs = _job(tmp_path)
    code, said = _download(runs, "-n", "rev1", "--all", "--download-path", str(tmp_path / "d"))
    assert code == 0, said
    files = [Path(folder, name) for folder, dirs, names in os.walk(tmp_path / "d")
             for name in names + dirs]
    assert len(files) < 200, len(files)  # the links were not followed (97,000 files before)
    scored = tmp_path / "d" / "artifacts" / "score" / "outputs" / "scored"
    assert os.readlink(scored / "shadow") == "/etc/shadow" and os.readlink(scored / "up") == ".."
    assert os.readlink(scored / "same.txt") == "result.txt"
    assert (scored / "sub" / "deep.txt").read_text() == "deep\n"
    assert not (tmp_path / "d" / "artifacts" / "job.lock").exists()
    assert (tmp_path / "d" / "artifacts" / "job.json").is_file()


def test_a_step_output_downloads_by_the_name_the_error_suggests(tmp_path: Path) -> None:
    runs = _job(tmp_path)
    code, said = _download(runs, "-n", "rev1", "--output-name", "nope")
    assert code == 1 and "step outputs: score.scored" in said
    code, said = _download(runs, "-n", "rev1", "--output-name", "score.scored",
                           "--download-path", str(tmp_path / "d"))
    assert code == 0, said
    copied = tmp_path / "d" / "named-outputs" / "score.scored"
    assert (copied / "result.txt").read_text() == "scored\n" and (copied / "shadow").is_symlink()


def test_a_child_job_downloads_by_the_name_job_list_gives(tmp_path: Path) -> None:
    runs = _job(tmp_path)
    listed = run_cli("job", "list", "--parent-job-name", "rev1", "-o", "json",
                     "--runs-dir", str(runs))
    [child] = json.loads(listed.stdout)
    assert child["name"] == "rev1_score" and child["display_name"] == "score"
    for name in ("rev1_score", "score"):  # the step's name too, while one job has it
        target = tmp_path / f"d-{name}"
        code, said = _download(runs, "-n", name, "--output-name", "scored",
                               "--download-path", str(target))
        assert code == 0, said
        assert (target / "named-outputs" / "scored" / "result.txt").read_text() == "scored\n"
    code, said = _download(runs, "-n", "rev1_score", "--download-path", str(tmp_path / "logs"))
    assert code == 0 and (tmp_path / "logs" / "artifacts" / "logs" / "user").is_dir(), said
    _job(tmp_path, "rev2")
    code, said = _download(runs, "-n", "score", "--download-path", str(tmp_path / "x"))
    assert code == 1 and "name the child job: rev1_score, rev2_score" in said


def test_a_download_never_replaces_a_file_of_the_download_folder(tmp_path: Path) -> None:
    runs = _job(tmp_path)
    target = tmp_path / "d" / "named-outputs" / "score.scored"
    target.mkdir(parents=True)
    (target / "result.txt").write_text("my own\n")
    code, said = _download(runs, "-n", "rev1", "--output-name", "score.scored",
                           "--download-path", str(tmp_path / "d"))
    assert code == 1 and f"{target / 'result.txt'} already exist" in said
    assert (target / "result.txt").read_text() == "my own\n"
    assert not (target / "sub").exists()  # nothing was copied
    (target / "result.txt").unlink()
    for _ in range(2):  # the same files again: nothing to refuse
        code, said = _download(runs, "-n", "rev1", "--output-name", "score.scored",
                               "--download-path", str(tmp_path / "d"))
        assert code == 0, said


@pytest.mark.parametrize("planted", ["output", "root"])
def test_an_output_that_is_itself_a_link_is_refused(tmp_path: Path, planted: str) -> None:
    runs = _job(tmp_path)
    scored = runs / "rev1" / "score" / "outputs" / "scored"
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("not the job's\n")
    for child in scored.iterdir():
        if child.is_dir() and not child.is_symlink():
            for inner in child.iterdir():
                inner.unlink()
            child.rmdir()
        else:
            child.unlink()
    scored.rmdir()
    scored.symlink_to(outside, target_is_directory=True)
    args = ("--output-name", "score.scored") if planted == "output" else ("--all",)
    code, said = _download(runs, "-n", "rev1", *args, "--download-path", str(tmp_path / "d"))
    if planted == "output":
        assert code == 1 and f"{scored} is a link to {outside}" in said
    else:  # inside the job's folder it is copied as the link it is
        assert code == 1 or os.readlink(tmp_path / "d" / "artifacts" / "score" / "outputs"
                                        / "scored") == str(outside)
    assert not list((tmp_path / "d").rglob("secret.txt"))
