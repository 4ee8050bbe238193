"""error_key: failures that differ only by an object address are grouped together."""

from __future__ import annotations

from mlpipe.runtime.error_keys import error_key


def test_object_addresses_do_not_split_an_error() -> None:
    first = "output '<generator object run at 0x7f3a1c2b4e40>' is generator."
    second = "output '<generator object run at 0x7f3a1c2b5f80>' is generator."
    assert error_key(first) == error_key(second) == "output '<generator object run at 0x...>' is generator."


def test_other_hex_numbers_and_texts_stay_distinct() -> None:
    assert error_key("ValueError: invalid start byte 0xff") == "ValueError: invalid start byte 0xff"
    assert error_key("ValueError: bad image 7") != error_key("ValueError: bad image 8")
