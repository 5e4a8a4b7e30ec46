"""A first run that guides: init's next steps, a .failres.toml that stands on its own."""

from __future__ import annotations

import json
from importlib.resources import files
from pathlib import Path

from conftest import ROOT, git, run_failres
from failres.config.loading import load_config, parse_config


def test_init_prints_three_next_steps_in_order(repo: Path) -> None:
    proc = run_failres(repo, "init")
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    steps = lines[lines.index("next:") + 1:-1]
    assert [line.split(".", 1)[0].strip() for line in steps] == ["1", "2", "3"]
    # and it ends by offering the one command that shows whether the gate runs, before any seat is paid
    assert lines[-1].endswith(": git failres run plan.toml --dry-run --preflight")
    # the gate is guessed and written already (`init --agent` writes the same one): the agent is what is left
    assert "[bindings.NAME]" in steps[0] and "[gates.tests]" in steps[0]
    assert "git failres run plan.toml --dry-run" in steps[1]
    assert "git failres run plan.toml" in steps[2] and "git failres status" in steps[2]


def test_init_json_carries_the_next_steps(repo: Path) -> None:
    doc = json.loads(run_failres(repo, "init", "--json").stdout)
    assert len(doc["nextSteps"]) == 3 and doc["schemaVersion"] == 1


def test_the_written_configuration_names_no_file_failres_does_not_install(repo: Path) -> None:
    assert run_failres(repo, "init").returncode == 0
    text = (repo / ".failres.toml").read_text()
    assert ".failres.toml.example" not in text
    assert "git failres config show" in text and "git failres init --full" in text


def test_init_full_writes_every_key_documented_with_the_detected_branch(tmp_path: Path) -> None:
    top = tmp_path / "r"
    top.mkdir()
    git(top, "init", "-q", "-b", "trunk")
    proc = run_failres(top, "init", "--full", "--no-hooks")
    assert proc.returncode == 0, proc.stderr
    written = (top / ".failres.toml").read_text()
    example = (ROOT / ".failres.toml.example").read_text()
    assert written == example.replace('# branch = "main"', 'branch = "trunk"', 1)
    assert load_config(top).integration.branch == "trunk"


def test_the_example_ships_inside_the_package_and_loads() -> None:
    packaged = files("failres").joinpath("data/failres.toml.example").read_text(encoding="utf-8")
    # The repository's top-level example is the packaged one (a link), so they cannot drift.
    assert (ROOT / ".failres.toml.example").read_text() == packaged
    parse_config(packaged, "failres.toml.example")
