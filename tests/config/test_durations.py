"""Durations: "30s", "15m", "1h30m", "500ms" read as seconds, anything else refused."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from failres.config.durations import format_duration, parse_duration


@pytest.mark.parametrize(
    ("text", "seconds"),
    [("30s", 30.0), ("15m", 900.0), ("2h", 7200.0), ("1h30m", 5400.0), ("500ms", 0.5),
     ("1d", 86400.0), ("1.5s", 1.5), ("1m30s250ms", 90.25), ("0s", 0.0)],
)
def test_a_duration_is_read_as_seconds(text, seconds):
    assert parse_duration(text) == seconds


@pytest.mark.parametrize("text", ["", "30", "s", "30x", "1h 30m", "-5s", "30m1h", "5s5s", "1.s", "30S", " 30s"])
def test_a_duration_that_is_not_written_as_number_and_unit_is_refused(text):
    with pytest.raises(ValueError, match="duration"):
        parse_duration(text)


def test_a_duration_that_is_not_a_string_is_refused_with_its_type():
    with pytest.raises(ValueError, match="got int"):
        parse_duration(30)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("seconds", "text"), [(0, "0s"), (0.5, "500ms"), (90, "1m30s"), (5400, "1h30m"), (86400, "1d")]
)
def test_a_duration_is_written_in_its_shortest_form(seconds, text):
    assert format_duration(seconds) == text


@given(st.integers(min_value=0, max_value=10**10))
def test_writing_then_reading_whole_milliseconds_gives_them_back(milliseconds):
    assert parse_duration(format_duration(milliseconds / 1000)) == pytest.approx(milliseconds / 1000)
