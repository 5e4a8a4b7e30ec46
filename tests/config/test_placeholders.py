"""Placeholders in command lists: filled literally, only the known names, braces escaped."""

from __future__ import annotations

import pytest

from failres.config.model import render_command
from failres.config.placeholders import PLACEHOLDERS, placeholders_in

VALUES = {name: f"<{name}>" for name in PLACEHOLDERS}


def test_every_known_placeholder_is_filled():
    argv = tuple("{" + name + "}" for name in PLACEHOLDERS)
    assert render_command(argv, VALUES) == [f"<{name}>" for name in PLACEHOLDERS]


def test_a_placeholder_inside_an_argument_is_filled_in_place():
    assert render_command(("--dir={worktree}/sub", "x"), {"worktree": "/w"}) == ["--dir=/w/sub", "x"]


def test_doubled_braces_are_literal_braces():
    assert render_command(("{{task}}", "{{{task}}}"), {"task": "t1"}) == ["{task}", "{t1}"]


def test_a_value_is_placed_as_is_and_never_expanded_again():
    rendered = render_command(("{slug}", "{task}"), {"slug": "{task}", "task": "a b; rm -rf /"})
    assert rendered == ["{task}", "a b; rm -rf /"]


def test_a_missing_value_names_the_placeholder():
    with pytest.raises(ValueError, match=r"no value for placeholder \{attempt\}"):
        render_command(("run", "{attempt}"), {"task": "t1"})


@pytest.mark.parametrize(
    ("argument", "message"),
    [("{host}", "unknown placeholder {host}"), ("{task!r}", "unknown placeholder {task!r}"),
     ("{0}", "unknown placeholder {0}"), ("{}", "unknown placeholder {}"),
     ("{task", "unclosed '{'"), ("task}", "stray '}'")],
)
def test_an_unknown_or_malformed_placeholder_is_refused(argument, message):
    with pytest.raises(ValueError) as caught:
        placeholders_in((argument,))
    assert message in str(caught.value)


def test_placeholders_are_listed_in_order_of_use():
    assert placeholders_in(("{repo}", "x{mode}-{attempt}", "{{slug}}")) == ("repo", "mode", "attempt")
