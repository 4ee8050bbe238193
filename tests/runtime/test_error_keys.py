"""signature: failures that differ only by the numbers, paths, names or object addresses
their message mentions are one error; another exception type or another line of the
user's code is another."""

from __future__ import annotations

from mlpipe.runtime.error_keys import mask, signature, user_frame

TRACEBACK = '''Traceback (most recent call last):
  File "/home/me/project/score.py", line 12, in run
    score(path)
  File "/home/me/project/helpers.py", line 4, in score
    raise ValueError(f"cannot score {path}")
ValueError: cannot score rec_007.txt'''


def test_numbers_paths_quoted_names_and_addresses_are_masked() -> None:
    assert mask("cannot score rec_007.txt after 3 tries") == "cannot score rec_<n>.txt after <n> tries"
    assert mask("No such file: /data/in/x1.csv") == "No such file: <path>"
    assert mask("KeyError 'user_17'") == "KeyError '…'"
    assert mask("output '<generator object run at 0x7f3a1c2b4e40>'") == "output '…'"
    assert mask("<Foo object at 0x7f3a1c2b4e40> broke") == "<Foo object at <address>> broke"


def test_one_signature_for_the_same_error_on_different_items() -> None:
    first = signature("UserError", "ValueError: cannot score rec_007.txt", TRACEBACK)
    second = signature("UserError", "ValueError: cannot score rec_017.txt",
                       TRACEBACK.replace("007", "017"))
    assert first == second
    assert (first.exception, first.pattern, first.frame) == (
        "ValueError", "cannot score rec_<n>.txt", "helpers.py:4 in score")
    assert first.text == "ValueError: cannot score rec_<n>.txt"
    assert signature("UserError", "ValueError: bad image 7") == \
        signature("UserError", "ValueError: bad image 8")


def test_another_type_category_or_line_is_another_error() -> None:
    base = signature("UserError", "ValueError: cannot score a.txt", TRACEBACK)
    assert signature("UserError", "TypeError: cannot score a.txt", TRACEBACK) != base
    assert signature("DataError", "ValueError: cannot score a.txt", TRACEBACK) != base
    moved = TRACEBACK.replace('helpers.py", line 4', 'helpers.py", line 9')
    assert signature("UserError", "ValueError: cannot score a.txt", moved) != base


def test_the_users_frame_skips_libraries() -> None:
    text = TRACEBACK.replace(
        "ValueError: cannot",
        '  File "/usr/lib/python3.11/site-packages/pandas/io.py", line 88, in read\n'
        "ValueError: cannot")
    assert user_frame(text) == "helpers.py:4 in score"
    assert user_frame("no traceback here") == ""
    whole = signature("Timeout", "Traceback (most recent call last):\n  ...\nTimeout: 5 s")
    assert (whole.exception, whole.pattern) == ("Timeout", "<n> s")
