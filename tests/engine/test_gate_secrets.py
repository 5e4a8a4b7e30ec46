"""An agent's API key reaches its seat and nothing the seat's code runs in; a CI job's own
credentials and failres's push token reach neither the seat nor the gate."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from project import FIXED, Project

CANARIES = {
    "ANTHROPIC_API_KEY": "canary-agent-key-5b1f",
    "FAILRES_PUSH_TOKEN": "canary-push-token-90ce",
    "CI_JOB_TOKEN": "canary-job-token-3d27",
    "GITHUB_TOKEN": "canary-actions-token-e4a8",
}
VISIBLE = ("PLAIN_CANARY", "canary-plain-visible-11aa")  # the control: a variable every process sees

# The test the agent writes, which the gate runs: it looks for each canary wherever it can
# read (its environment, every /proc/*/environ it may open), says what it found, and goes
# red on any secret; red too if it cannot see the control, so a scan that reads nothing fails.
HOSTILE_CHECK = '''\
import glob, os, sys
canaries = json_canaries = {canaries}
places = [("environ", "\\0".join(f"{{k}}={{v}}" for k, v in os.environ.items()))]
for path in glob.glob("/proc/[0-9]*/environ"):
    try:
        places.append((path, open(path, "rb").read().decode("utf-8", "replace")))
    except OSError:
        pass
found = sorted({{name for name, value in canaries.items() for _, text in places if value in text}})
print("gate found:", found)
if "{visible}" not in os.environ.get("{visible_name}", ""):
    print("the gate's scan sees nothing"); sys.exit(1)
if found:
    sys.exit(1)
sys.path.insert(0, "src")
from calc import add
sys.exit(0 if add(2, 3) == 5 else 1)
'''


@pytest.mark.usefixtures("seat_world")
def test_the_gate_running_the_agents_test_sees_no_key_and_the_seat_sees_only_its_own(
        tmp_path: Path, cli, monkeypatch: pytest.MonkeyPatch):
    for name, value in {**CANARIES, VISIBLE[0]: VISIBLE[1]}.items():
        monkeypatch.setenv(name, value)
    project = Project.create(tmp_path)
    seat_env = project.agents / "seat-env"
    check = HOSTILE_CHECK.format(canaries=json.dumps(CANARIES), visible=VISIBLE[1], visible_name=VISIBLE[0])
    dump = f"env -0 > '{seat_env}'"
    project.configure(implementer=[{"write": {"src/calc.py": FIXED, "tests/check.py": check}, "shell": [dump]}])
    result = cli(project.top, "run", str(project.plan(files=["src/calc.py", "tests/check.py"])), "--quiet")
    assert result.code == 0, result.err
    # Green: the gate ran the hostile test and it found no secret (and saw its control).
    assert project.branch_file("tests/check.py") == check
    assert "task-committed" in project.types()
    seen = dict(line.split("=", 1) for line in seat_env.read_text().split("\0") if "=" in line)
    assert seen.get("ANTHROPIC_API_KEY") == CANARIES["ANTHROPIC_API_KEY"]
    assert VISIBLE[1] in seen.values()
    for name in ("FAILRES_PUSH_TOKEN", "CI_JOB_TOKEN", "GITHUB_TOKEN"):
        assert CANARIES[name] not in seen.values(), name


def test_a_gate_that_names_a_key_in_its_own_env_gets_that_one(monkeypatch: pytest.MonkeyPatch):
    """The person may give their gate a key on purpose; the agent's ambient one still stays out."""
    from failres.engine.gates import gate_env

    monkeypatch.setenv("ANTHROPIC_API_KEY", CANARIES["ANTHROPIC_API_KEY"])
    monkeypatch.setenv("OPENAI_API_KEY", "canary-openai-77")
    values = {"slug": "s", "task": "t", "mode": "implement", "attempt": "1", "worktree": "/w",
              "prompt_file": "/p", "repo": "/r"}
    env = gate_env(values, {"OPENAI_API_KEY": "the-gates-own"})
    assert "ANTHROPIC_API_KEY" not in env
    assert env["OPENAI_API_KEY"] == "the-gates-own"
    assert env["FAILRES_REPO"] == "/r"
