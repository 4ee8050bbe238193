"""ProgressDisplay: plain lines when not a terminal, a rich bar on a (recorded) terminal."""

from __future__ import annotations

import io
import time
from pathlib import Path

from rich.console import Console

from mlpipe.runtime.reports.progress_bar import ProgressDisplay
from tests.runtime.reports.support import T0, W0, W1, attempt, make_step, summary


def drive(display: ProgressDisplay, step) -> None:
    display.step_started(step, [W0, W1], T0)
    display.mini_batches_scheduled(2, False)
    display.attempt_finished(attempt(0))
    display.mini_batches_scheduled(3, True)
    display.attempt_finished(attempt(1, status="Failed", final=False, category="UserError",
                                     message="ValueError: boom"))
    display.worker_event(W1, "died", "Worker exited with code 1")
    display.attempt_finished(attempt(1, picked=2))
    display.attempt_finished(attempt(2, status="Failed", category="UserError",
                                     message="ValueError: boom"))
    display.step_finished(summary(mini_batches_total=3, mini_batches_succeeded=2,
                                  mini_batches_failed=1, items_total=6, items_succeeded=4,
                                  items_failed=2))


def test_plain_lines_when_not_a_terminal(tmp_path: Path) -> None:
    out = io.StringIO()
    display = ProgressDisplay(make_step(tmp_path), out, interval=0)
    assert not display.live
    drive(display, display.step)
    lines = out.getvalue().splitlines()
    assert lines[0] == "[mlpipe] score: started with 2 worker process(es)"
    assert lines[1].startswith("[mlpipe] score: 0/? mini-batches (0 failed), 0 items, ")
    assert lines[2].startswith("[mlpipe] score: 1/? mini-batches (0 failed), 2 items, ")
    assert lines[3].startswith("[mlpipe] score: 1/3 mini-batches (33%, 0 failed), 2 items, ")
    assert "[mlpipe] score: worker 0/process001 died: Worker exited with code 1" in lines
    assert lines[-2].startswith("[mlpipe] score: 3/3 mini-batches (100%, 1 failed), 6 items, ")
    assert " items/s, ETA " in lines[-2] and ", elapsed " in lines[-2]
    assert lines[-1] == ("[mlpipe] score Completed in 10.0s: 2 of 3 mini-batches succeeded, "
                         "1 failed; 4 of 6 items succeeded, 2 failed")


def test_plain_lines_are_throttled(tmp_path: Path) -> None:
    out = io.StringIO()
    display = ProgressDisplay(make_step(tmp_path), out, interval=3600)
    drive(display, display.step)
    lines = out.getvalue().splitlines()
    # start, the listing being complete (always shown), the first error (once), the worker
    # death, the end
    assert len(lines) == 5, lines
    assert lines[1].startswith("[mlpipe] score: 1/3 mini-batches")
    assert lines[2] == ("[mlpipe] score: mini-batch mb-1 attempt 1 on 0/process000: "
                        "[UserError] ValueError: boom (will be retried)")


def test_only_the_first_distinct_errors_are_shown(tmp_path: Path) -> None:
    """Distinct as the reports group them: by signature (a number in the message does not
    make another kind of error)."""
    out = io.StringIO()
    display = ProgressDisplay(make_step(tmp_path), out, interval=3600)
    display.step_started(display.step, [W0], T0)
    kinds = ["KeyError", "ValueError", "TypeError", "OSError", "IndexError", "NameError"]
    for mb in range(12):
        display.attempt_finished(attempt(mb, status="Failed", category="UserError",
                                         message=f"Traceback ...\n{kinds[mb // 2]}: {mb}"))
    errors = [line for line in out.getvalue().splitlines() if "[UserError]" in line]
    assert [line.split("[UserError] ")[1].split(";")[0] for line in errors] == [
        f"{kinds[mb // 2]}: {mb}" for mb in range(0, 10, 2)]
    assert errors[-1].endswith("; further kinds of error in " + display.step.logs_dir
                               + "/user/error.txt")


def test_rich_bar_on_a_terminal(tmp_path: Path) -> None:
    console = Console(file=io.StringIO(), record=True, force_terminal=True, width=150,
                      color_system=None)
    display = ProgressDisplay(make_step(tmp_path), console=console)
    assert display.live
    drive(display, display.step)
    text = console.export_text()
    assert "score" in text
    assert "3/3 mini-batches" in text and "1 failed" in text and "items/s" in text
    assert "score: worker 0/process001 died: Worker exited with code 1" in text
    assert ("score Completed in 10.0s: 2 of 3 mini-batches succeeded, 1 failed; 4 of 6 items "
            "succeeded, 2 failed") in text


def test_rich_bar_shows_unknown_total_until_listing_done(tmp_path: Path) -> None:
    console = Console(file=io.StringIO(), record=True, force_terminal=True, width=150,
                      color_system=None)
    display = ProgressDisplay(make_step(tmp_path), console=console)
    step = display.step
    display.step_started(step, [W0], T0)
    display.mini_batches_scheduled(4, False)
    display.attempt_finished(attempt(0))
    display._push()
    assert display._progress is not None
    display._progress.refresh()
    assert "1/? mini-batches" in console.export_text()
    display.close()
    display.close()


def test_plain_line_every_interval_while_nothing_finishes(tmp_path: Path) -> None:
    out = io.StringIO()
    display = ProgressDisplay(make_step(tmp_path), out, interval=0.5)
    display.step_started(display.step, [W0], T0)
    display.mini_batches_scheduled(1, True)
    deadline = time.monotonic() + 60  # a long run(): the timer keeps the log alive
    while out.getvalue().count("[mlpipe] score: 0/1 mini-batches") < 2:
        assert time.monotonic() < deadline, out.getvalue()
        time.sleep(0.05)
    display.attempt_finished(attempt(0))
    display.step_finished(summary(mini_batches_total=1, mini_batches_succeeded=1))
    lines = out.getvalue().splitlines()
    waiting = [line for line in lines if line.startswith("[mlpipe] score: 0/1 mini-batches")]
    assert len(waiting) >= 2, lines
    assert lines[-1].startswith("[mlpipe] score Completed in 10.0s: 1 of 1 mini-batch succeeded")
    assert not display._ticker


def test_final_line_keeps_brackets_and_only_the_first_reason_line(tmp_path: Path) -> None:
    console = Console(file=io.StringIO(), record=True, force_terminal=True, width=200,
                      color_system=None)
    display = ProgressDisplay(make_step(tmp_path), console=console)
    display.step_started(display.step, [W0], T0)
    display.step_finished(summary(status="Failed", reason="init() failed: [Errno 2] no model\n"
                                  "Traceback (most recent call last): ..."))
    text = console.export_text()
    assert "score Failed (init() failed: [Errno 2] no model) in 10.0s: 0 of 0 mini-batches" in text
    assert "Traceback" not in text
