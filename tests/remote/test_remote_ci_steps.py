"""The generated workflows' own scripts, run as a CI machine runs them, up to the agent's API.

A detached clone of a local bare "server", an empty home, no git identity, the variables
the CI service sets, failres installed by the workflow's install step (from a copy of this
checkout, in a fresh virtualenv), a scripted agent on PATH in the place of the real one.
The secrets are canaries: the seat, hostile, looks for the push token and the gate (the
test the seat wrote) looks for the API key and the push token, everywhere they can read;
the test asserts on the values found, the checkout's `.git/config`, and what reached the
server.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

from conftest import ROOT, git
from failres.initialise import init_repository
from failres.sandbox.probe import machine_sandbox

yaml = pytest.importorskip("yaml")

PUSH_TOKEN = "canary-push-token-6c0f2e"
API_KEY = "canary-api-key-a41d77"
JOB_TOKEN = "canary-job-token-19b3c5"
CONTROL = "canary-control-visible-5e8a"  # a plain CI variable: every scan must see it, or it scans nothing

# Looks for each canary in the environment, every /proc/*/environ it can open,
# the home, /tmp, the checkout's git config by its absolute path, and what git's credential
# helpers answer; prints one `name where...` line per canary.
SCAN = r'''
scan() {
  name=$1; value="$2$3"; where=""
  env | grep -qF "$value" && where="$where env"
  cat /proc/[0-9]*/environ 2>/dev/null | grep -qaF "$value" && where="$where proc"
  grep -rqaF "$value" "$HOME" /tmp "$CHECKOUT/.git/config" .git/config 2>/dev/null && where="$where files"
  printf 'protocol=https\nhost=github.com\npath=o/p.git\n\n' | GIT_TERMINAL_PROMPT=0 git credential fill 2>/dev/null \
    | grep -qF "$value" && where="$where credential"
  echo "$name${where:- nowhere}"
}
'''



def _halves(value: str) -> str:
    """A canary as two words the scan joins: the scripts never hold the value they look for."""
    middle = len(value) // 2
    return f"{value[:middle]} {value[middle:]}"


SCANS = (f"{{ scan push {_halves(PUSH_TOKEN)}; scan key {_halves(API_KEY)}; scan job {_halves(JOB_TOKEN)}; "
         f"scan control {_halves(CONTROL)}; }}")
# The agent: it reads its prompt, looks for the canaries, and writes the test the gate runs,
# which looks again from the gate's place and goes red on any secret (or on a blind scan).
SEAT = ("#!/bin/sh\ncat > /dev/null\nCHECKOUT=@CHECKOUT@\n" + SCAN + SCANS + " > findings-seat.txt\n"
        "cat > tests/check.sh <<'EOF'\nCHECKOUT=@CHECKOUT@\n" + SCAN + SCANS + " > /tmp/found\n"
        "cat /tmp/found\n"
        'grep -q "^control nowhere" /tmp/found && exit 1\n'
        'grep -v "^control" /tmp/found | grep -qv nowhere && exit 1\n'
        "exit 0\nEOF\n")

STEP_SKIPPED = ("The seat world", "Install claude")  # apt-get and npm: the machine has bwrap, PATH the agent


def _toolchain(tmp_path: Path) -> Path:
    """This run's site-packages (pip, setuptools, failres's dependencies) without failres itself:
    what setup-python and the runner image would provide; nothing is downloaded."""
    here = Path(sysconfig.get_paths()["purelib"])
    tools = tmp_path / "toolchain"
    tools.mkdir()
    for entry in here.iterdir():
        if "failres" in entry.name.lower() or entry.suffix == ".pth":
            continue
        (tools / entry.name).symlink_to(entry)
    return tools


def _python(tmp_path: Path) -> Path:
    """A fresh virtualenv, the job's `python` (actions/setup-python's, the image's)."""
    venv = tmp_path / "ci-python"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    site = subprocess.run([str(venv / "bin" / "python"), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                          check=True, capture_output=True, text=True).stdout.strip()
    Path(site, "toolchain.pth").write_text(f"{_toolchain(tmp_path)}\n")
    return venv / "bin"


def _source(tmp_path: Path) -> Path:
    """This checkout's tracked files as they are now: the source the install step installs."""
    source = tmp_path / "failres-source"
    for name in git(ROOT, "ls-files", "-z").split("\0"):
        if name and (ROOT / name).is_file():
            (source / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / name, source / name)
    return source


def _server(tmp_path: Path, kind: str) -> tuple[Path, Path]:
    """(the bare repository the CI service serves, the person's clone that wrote the workflow)."""
    bare = tmp_path / "server" / "group" / "project.git"
    bare.parent.mkdir(parents=True)
    git(tmp_path, "init", "-q", "--bare", "-b", "main", str(bare))
    person = tmp_path / "person"
    git(tmp_path, "init", "-q", "-b", "main", str(person))
    (person / "tests").mkdir()
    (person / "tests" / "check.sh").write_text("exit 1\n")  # red: the task is to make it green
    (person / "plans").mkdir()
    (person / "plans" / "ci.toml").write_text(
        'slug = "ci"\n[[tasks]]\nid = "t1"\nprompt = "Make tests/check.sh pass."\n'
        'files = ["tests/check.sh", "findings-seat.txt"]\n')
    (person / ".failres.toml").write_text(
        '[gates.check]\ncommand = ["sh", "tests/check.sh"]\ncwd = "worktree"\ntimeout = "60s"\n'
        '[bindings.claude]\ncommand = ["claude", "-p"]\ntimeout = "60s"\n[seats]\nimplementer = "claude"\n')
    git(person, "add", ".")
    git(person, "commit", "-q", "-m", "a project")
    init_repository(person, hooks=False)
    git(person, "remote", "add", "origin", str(bare))
    git(person, "push", "-q", "origin", "main", "refs/failres/store:refs/failres/store")
    return bare, person


def _ci_env(tmp_path: Path, kind: str, bin_dirs: list[Path], checkout: Path, bare: Path) -> dict[str, str]:
    home = tmp_path / "ci-home"
    home.mkdir()
    env = {
        "PATH": os.pathsep.join([*(str(d) for d in bin_dirs), "/usr/local/bin", "/usr/bin", "/bin"]),
        "HOME": str(home), "LANG": "C.UTF-8", "CI": "true", "PIP_DISABLE_PIP_VERSION_CHECK": "1",
        "GIT_CONFIG_NOSYSTEM": "1", "CONTROL_VARIABLE": CONTROL,
    }
    if kind == "github":
        env.update({"GITHUB_ACTIONS": "true", "GITHUB_WORKSPACE": str(checkout), "GITHUB_REPOSITORY": "group/project",
                    "GITHUB_SERVER_URL": f"file://{bare.parents[1]}", "GITHUB_REF": "refs/heads/main",
                    "GITHUB_RUN_ID": "1", "RUNNER_TEMP": str(tmp_path / "runner-temp")})
    else:
        env.update({"GITLAB_CI": "true", "CI_PROJECT_DIR": str(checkout), "CI_PROJECT_PATH": "group/project",
                    "CI_SERVER_URL": f"file://{bare.parents[1]}", "CI_JOB_TOKEN": JOB_TOKEN,
                    "CI_PIPELINE_SOURCE": "web", "CI_NODE_INDEX": "1", "CI_NODE_TOTAL": "1",
                    "FAILRES_PUSH_TOKEN": PUSH_TOKEN, "ANTHROPIC_API_KEY": API_KEY})
    return env


def _github_scripts(document: dict) -> list[tuple[str, str, dict[str, str]]]:
    """(name, script, env) of each `run:` step, the `${{ }}` expressions filled in as Actions would."""
    values = {"${{ github.token }}": PUSH_TOKEN, "${{ secrets.ANTHROPIC_API_KEY }}": API_KEY}
    out = []
    for step in document["jobs"]["runner"]["steps"]:
        if "run" not in step or step["name"] in STEP_SKIPPED:
            continue
        env = {name: values.get(value, value) for name, value in step.get("env", {}).items()}
        assert "${{" not in json.dumps(env) and "${{" not in step["run"]
        out.append((step["name"], step["run"], env))
    return out


@pytest.mark.parametrize("kind", ["github", "gitlab"])
def test_the_workflows_steps_run_in_a_clean_ci_machine_and_no_seat_or_gate_reads_a_secret(
        tmp_path: Path, cli, kind: str):
    found = machine_sandbox()
    if not found.available:
        pytest.skip(f"no seat world on this machine: {found.why}")
    bare, person = _server(tmp_path, kind)
    install = (f"python -m pip install -q --no-deps --no-build-isolation --no-index "
               f"{shlex.quote(str(_source(tmp_path)))}")
    result = cli(person, "ci", kind, "plans/ci.toml", "--runners", "1", "--install", install,
                 "--output", str(tmp_path / "workflow.yml"))
    assert result.code == 0, result.err
    document = yaml.safe_load((tmp_path / "workflow.yml").read_text())

    # The checkout: a detached HEAD, with no credential left behind (persist-credentials: false;
    # on GitLab the runner's URL carries the job token until the script replaces it).
    checkout = tmp_path / "ci" / "project"
    git(tmp_path, "clone", "-q", "--no-checkout", str(bare), str(checkout))
    git(checkout, "checkout", "-q", "--detach", git(checkout, "rev-parse", "origin/main").strip())
    if kind == "gitlab":
        git(checkout, "remote", "set-url", "origin", f"https://gitlab-ci-token:{JOB_TOKEN}@gitlab.invalid/group/project.git")
    agent_bin = tmp_path / "agent-bin"
    agent_bin.mkdir()
    (agent_bin / "claude").write_text(SEAT.replace("@CHECKOUT@", shlex.quote(str(checkout))))
    (agent_bin / "claude").chmod(0o755)
    python_bin = _python(tmp_path)
    env = _ci_env(tmp_path, kind, [python_bin, agent_bin], checkout, bare)

    if kind == "github":
        scripts = _github_scripts(document)
        assert [name for name, _, _ in scripts] == ["Install failres", "The integration branch", "Work the plan"]
    else:
        lines = [line for line in document["failres-ci"]["script"]
                 if not line.startswith(("apt-get ", "npm install"))]
        scripts = [("script", "\n".join(lines), {**{k: str(v) for k, v in document["failres-ci"]["variables"].items()
                                                    if not k.startswith("GIT_")}})]
    for name, script, step_env in scripts:
        done = subprocess.run(["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", script], cwd=checkout,
                              env={**env, **step_env}, capture_output=True, text=True, timeout=600)
        if done.returncode != 0:  # what the seat and the gate said, to read why
            logs = subprocess.run(["git", "failres", "logs", "ci", "t1"], cwd=checkout, env=env, capture_output=True,
                                  text=True)
            pytest.fail(f"{name}: {done.stdout[-2000:]}{done.stderr[-2000:]}\n{logs.stdout[-4000:]}")
        assert PUSH_TOKEN not in (checkout / ".git" / "config").read_text()
    assert (python_bin / "git-failres").is_file()  # the install step installed it
    config = (checkout / ".git" / "config").read_text()
    assert PUSH_TOKEN not in config and JOB_TOKEN not in config and API_KEY not in config

    # The task ran to green and its branch reached the server: the gate (the seat's own test)
    # saw its control and no secret; the seat's findings are in its commit.
    findings = git(bare, "show", "failres/ci/t1:findings-seat.txt").splitlines()
    assert findings == ["push nowhere", "key env proc", "job nowhere", "control env proc"]
    assert git(bare, "rev-parse", "main") == git(person, "rev-parse", "main")
