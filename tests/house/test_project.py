"""The project itself: its licence, its version and its changelog agree."""

from __future__ import annotations

import re
import tomllib

from conftest import ROOT


def project() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]


def test_the_licence_file_is_the_one_pyproject_declares() -> None:
    assert project()["license"] == "MIT"
    text = (ROOT / "LICENSE").read_text()
    assert text.startswith("MIT License\n") and "WITHOUT WARRANTY OF ANY KIND" in text


def test_the_changelogs_newest_entry_is_the_version_reported() -> None:
    headings = re.findall(r"^## (\S+)", (ROOT / "CHANGELOG.md").read_text(), flags=re.MULTILINE)
    assert headings and headings[0] == project()["version"]


def test_the_installed_version_is_the_declared_one() -> None:
    from failres import version

    assert version() == project()["version"]
