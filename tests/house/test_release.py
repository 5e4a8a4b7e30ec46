"""The wheel a release publishes: its metadata, one version everywhere, and a demo that runs from it.

Built as pip builds it, without the isolated build environment (the test venv's setuptools),
and installed with no index: nothing here needs the network. CI also builds both artifacts
with `python -m build` and checks them with `twine check` (`.ci/release-check`).
"""

from __future__ import annotations

import os
import re
import subprocess
import tomllib
import zipfile
from email.parser import Parser
from pathlib import Path

import pytest

from conftest import ROOT
from wheels import build_wheel, install_in_fresh_venv

PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
VERSION = PROJECT["version"]


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_wheel(tmp_path_factory.mktemp("release") / "wheels")


def metadata(wheel: Path) -> tuple[dict[str, list[str]], str]:
    with zipfile.ZipFile(wheel) as archive:
        [meta] = [n for n in archive.namelist() if n.endswith(".dist-info/METADATA")]
        [points] = [n for n in archive.namelist() if n.endswith(".dist-info/entry_points.txt")]
        message = Parser().parsestr(archive.read(meta).decode())
        fields: dict[str, list[str]] = {}
        for key, value in message.items():
            fields.setdefault(key, []).append(value)
        return fields, archive.read(points).decode()


def test_the_wheel_is_named_and_described_from_pyproject(wheel: Path) -> None:
    assert wheel.name == f"failres-{VERSION}-py3-none-any.whl"
    fields, points = metadata(wheel)
    assert fields["Name"] == ["failres"] and fields["Version"] == [VERSION]
    assert fields["Requires-Python"] == [PROJECT["requires-python"]]
    assert fields["Summary"] == [PROJECT["description"]]
    assert fields["License-Expression"] == [PROJECT["license"]]
    assert sorted(r for r in fields["Requires-Dist"] if "extra ==" not in r) == sorted(PROJECT["dependencies"])
    assert fields["Description-Content-Type"] == ["text/markdown"]
    assert "[console_scripts]" in points
    for script, target in PROJECT["scripts"].items():
        assert f"{script} = {target}" in points


def test_the_version_is_written_in_one_place(wheel: Path) -> None:
    """pyproject's `version` is the one the manual page, the changelog's newest release and the
    package's own `version()` (read from the installed metadata) give; no module spells it."""
    with zipfile.ZipFile(wheel) as archive:
        [page] = [n for n in archive.namelist() if n.endswith("/data/share/man/man1/git-failres.1")]
        assert f'"failres {VERSION}"' in archive.read(page).decode()
        sources = [archive.read(n).decode() for n in archive.namelist() if n.endswith(".py")]
    assert not [text for text in sources if re.search(rf"""["']{re.escape(VERSION)}["']""", text)]
    releases = [line.split()[1] for line in (ROOT / "CHANGELOG.md").read_text(encoding="utf-8").splitlines()
                if re.match(r"^## [0-9]", line)]
    assert releases[0] == VERSION  # an "Unreleased" section may sit above the newest release


def test_the_demo_runs_from_the_wheel_in_a_fresh_venv(wheel: Path, tmp_path: Path) -> None:
    venv = tmp_path / "venv"
    site = install_in_fresh_venv(wheel, venv)
    env = {k: v for k, v in os.environ.items() if not k.startswith("FAILRES_")}
    env["PATH"] = f"{venv / 'bin'}:{env['PATH']}"
    found = subprocess.run(["git", "failres", "--version"], capture_output=True, text=True, env=env, cwd=tmp_path)
    assert (found.returncode, found.stdout) == (0, f"git failres version {VERSION}\n")
    # Not this checkout: the program runs from the venv's own copy.
    where = subprocess.run([str(venv / "bin" / "python"), "-c", "import failres; print(failres.__file__)"],
                           capture_output=True, text=True, env=env, cwd=tmp_path)
    assert where.stdout.startswith(str(site)), where.stdout
    demo = tmp_path / "demo"
    ran = subprocess.run(["git", "failres", "demo", "--keep", str(demo)], capture_output=True, text=True, env=env,
                         cwd=tmp_path, timeout=300)
    assert ran.returncode == 0, ran.stdout[-2000:] + ran.stderr[-2000:]
    states = subprocess.run(["git", "failres", "status", "--json"], capture_output=True, text=True, env=env,
                            cwd=demo)
    assert states.returncode == 0, states.stderr
    assert "landed" in states.stdout
