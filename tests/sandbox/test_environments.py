"""Real-shaped projects: a gate checked at the integration head before any seat is paid,
workspaces that carry what a project needs (a .env, a setup's virtualenv, a port of their
own, a git identity), and a task that needed no change making no empty commit."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from conftest import git
from project import FIXED, Project

NOTHING = {"print": "nothing to do"}
FIX = {"write": {"src/calc.py": FIXED}}


@pytest.fixture
def project(tmp_path: Path) -> Project:
    return Project.create(tmp_path)


def gate_section(command: list[str], extra: str = "") -> str:
    return f'[gates.env]\ncommand = {json.dumps(command)}\ncwd = "worktree"\ntimeout = "60s"\n{extra}'


def plan_with_gate(project: Project, files: list[str] | None = None) -> Path:
    plan = project.plan(files)
    plan.write_text(plan.read_text() + 'gate = "env"\n')
    return plan


def dispatches(project: Project) -> list[dict]:
    return [e for e in project.events() if e["type"] == "seat-dispatched"]


def quarantined(project: Project) -> dict:
    return [e for e in project.events() if e["type"] == "quarantined"][-1]


# ── a src-layout package ─────────────────────────────────────────────


def make_src_layout(project: Project) -> None:
    (project.top / "src" / "pkg").mkdir()
    (project.top / "src" / "pkg" / "__init__.py").write_text("")
    (project.top / "src" / "pkg" / "core.py").write_text("def double(x):\n    return x + x + 1\n")
    (project.top / "tests" / "test_core.py").write_text(
        "from pkg.core import double\n\n\ndef test_double():\n    assert double(2) == 4\n")
    git(project.top, "add", ".")
    git(project.top, "commit", "-q", "-m", "a src-layout package")


PYTEST = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests/test_core.py"]


def test_a_src_layout_gate_that_cannot_import_the_package_dispatches_no_seat(project: Project, cli):
    make_src_layout(project)
    project.configure(implementer=[FIX], extra=gate_section(PYTEST))
    result = cli(project.top, "run", str(plan_with_gate(project, ["src/pkg/core.py"])), "--quiet")
    assert result.code == 1
    assert dispatches(project) == [] and project.calls("impl") == 0
    event = quarantined(project)
    assert event["failClass"] == "gate-unavailable"
    assert "'pkg'" in event["message"] and "PYTHONPATH=src" in event["message"]
    preflight = [e for e in project.events() if e["type"] == "gate-result"]
    assert [(e["preflight"], e["verdict"]) for e in preflight] == [(True, "unavailable")]


def test_the_same_gate_with_pythonpath_src_is_red_and_the_fixer_hears_what_it_said_at_the_head(project, cli):
    make_src_layout(project)
    fixed = {"write": {"src/pkg/core.py": "def double(x):\n    return x + x\n"}}
    project.configure(implementer=[NOTHING], fixer=[fixed],
                      extra=gate_section(PYTEST, 'env = { PYTHONPATH = "src" }\n'))
    result = cli(project.top, "run", str(plan_with_gate(project, ["src/pkg/core.py"])), "--quiet")
    assert result.code == 0, result.err
    assert [d["seat"] for d in dispatches(project)] == ["implementer", "fixer"]
    assert "At the integration head, before any change, the gate said" in project.prompt(2)
    assert "1 failed" in project.prompt(2)


def test_a_gate_whose_program_is_missing_dispatches_no_seat(project: Project, cli):
    project.configure(implementer=[FIX], extra=gate_section(["bash", "-c", "no-such-checker --all"]))
    assert cli(project.top, "run", str(plan_with_gate(project)), "--quiet").code == 1
    assert project.calls("impl") == 0
    event = quarantined(project)
    assert event["failClass"] == "gate-unavailable" and '"no-such-checker" was not found' in event["message"]


def test_a_python_m_gate_whose_interpreter_lacks_the_module_dispatches_no_seat(project: Project, cli):
    # The gate `init` guesses, `python3 -m pytest`, on a machine whose python3 has no pytest:
    # Python says "No module named pytest" itself, before any test could be judged.
    project.configure(implementer=[FIX], extra=gate_section([sys.executable, "-m", "no_such_runner_module", "-q"]))
    assert cli(project.top, "run", str(plan_with_gate(project)), "--quiet").code == 1
    assert project.calls("impl") == 0
    event = quarantined(project)
    assert event["failClass"] == "gate-unavailable" and "no module 'no_such_runner_module'" in event["message"]


def test_an_ordinary_gate_that_exits_2_is_red_not_unavailable(project: Project, cli):
    # `make` and many checkers exit 2 for "failed": only pytest's 2 means "did not run".
    gate = [sys.executable, "-c", "import sys; sys.path.insert(0, 'src'); from calc import add; "
                                  "sys.exit(0 if add(2, 3) == 5 else 2)"]
    project.configure(implementer=[FIX], extra=gate_section(gate))
    assert cli(project.top, "run", str(plan_with_gate(project)), "--quiet").code == 0
    assert project.calls("impl") == 1
    assert [e.get("verdict") for e in project.events() if e["type"] == "gate-result"][0] == "red"


def test_a_pytest_gate_on_a_test_file_the_task_writes_is_the_tasks_job(project: Project, cli):
    gate = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests/test_new.py"]
    # The test the task writes: it exercises the project's code, and is green once it exists.
    new_test = "import sys\nsys.path.insert(0, 'src')\nfrom calc import add\n\n\ndef test_add_of_zeros():\n" \
               "    assert add(0, 0) == 0\n"
    project.configure(implementer=[{"write": {"tests/test_new.py": new_test}}], extra=gate_section(gate))
    assert cli(project.top, "run", str(plan_with_gate(project, ["tests/test_new.py"])), "--quiet").code == 0
    assert project.calls("impl") == 1
    head = [e for e in project.events() if e["type"] == "gate-result" and e.get("preflight")]
    assert [e["verdict"] for e in head] == ["red"]  # missing at the head is the task's job, not "unavailable"


def test_a_failing_setup_dispatches_no_seat_and_says_what_to_do(project: Project, cli):
    setup = [sys.executable, "-c", "import sys; print('resolution failed'); sys.exit(3)"]
    project.configure(implementer=[FIX], extra=gate_section([sys.executable, "tests/check.py"],
                                                            f"setup = {json.dumps(setup)}\n"))
    assert cli(project.top, "run", str(plan_with_gate(project)), "--quiet").code == 1
    assert project.calls("impl") == 0
    event = quarantined(project)
    assert event["failClass"] == "gate-unavailable"
    assert "setup exited 3: resolution failed" in event["message"] and "likely fix" in event["message"]


def test_a_dry_run_preflight_finds_the_unrunnable_gate_and_writes_nothing(project: Project, cli):
    make_src_layout(project)
    project.configure(implementer=[FIX], extra=gate_section(PYTEST))
    store_before = git(project.top, "rev-parse", "refs/failres/store")
    result = cli(project.top, "run", str(plan_with_gate(project, ["src/pkg/core.py"])), "--dry-run", "--preflight",
                 "--json")
    assert result.code == 2
    doc = json.loads(result.out)
    assert [(p["task"], p["verdict"]) for p in doc["preflight"]] == [("t1", "unavailable")]
    assert any("PYTHONPATH=src" in p["message"] for p in doc["problems"])
    assert project.calls("impl") == 0
    assert git(project.top, "rev-parse", "refs/failres/store") == store_before
    assert git(project.top, "branch", "--list", "failres/*").strip() == ""
    assert not (project.workspace().parent / "t1.preflight").exists()


# ── no change, no commit ─────────────────────────────────────────────


def test_a_task_green_at_the_head_with_no_change_makes_no_commit_and_lands_nothing(project: Project, cli):
    project.configure(implementer=[NOTHING], extra=gate_section([sys.executable, "-c", "pass"]))
    main_before = git(project.top, "rev-parse", "main").strip()
    result = cli(project.top, "run", str(plan_with_gate(project)))
    assert result.code == 0, result.err
    assert "no change was needed" in result.out
    assert "already passes at the integration head" in project.prompt(1)
    committed = [e for e in project.events() if e["type"] == "task-committed"][-1]
    assert committed["empty"] is True and committed["commit"] == main_before
    assert git(project.top, "rev-parse", "failres/rr/t1").strip() == main_before  # no empty commit
    status = json.loads(cli(project.top, "status", "--json").out)
    assert status[0]["state"] == "committed" and status[0]["empty"] is True
    assert "no change was needed" in cli(project.top, "status").out
    landed = cli(project.top, "land", "rr", "t1")
    assert landed.code == 0, landed.err
    assert "nothing was merged" in landed.out
    assert git(project.top, "rev-parse", "main").strip() == main_before
    assert project.types()[-1] == "landed"


# ── workspaces that carry what the project needs ─────────────────────

TOKEN = "s3cr3t-local-value-42"
CHECK_ENV = (
    "import sys\nsys.path.insert(0, 'src')\n"
    "env = dict(line.split('=', 1) for line in open('.env').read().split())\n"
    "print('token is', env['API_TOKEN'])\n"
    "from calc import add\nsys.exit(0 if add(2, 3) == 5 else 1)\n"
)


def test_a_dot_env_the_tests_read_is_carried_never_committed_and_redacted(project: Project, cli):
    (project.top / "tests" / "check_env.py").write_text(CHECK_ENV)
    git(project.top, "add", ".")
    git(project.top, "commit", "-q", "-m", "a check that reads .env")
    (project.top / ".env").write_text(f"API_TOKEN={TOKEN}\n")  # untracked, not even ignored
    # A seat that also rewrites the .env: its copy is never the task's.
    edit = {"write": {"src/calc.py": FIXED, ".env": "API_TOKEN=forged-by-the-seat\n"}}
    project.configure(implementer=[edit], extra=gate_section([sys.executable, "tests/check_env.py"])
                      + '[workspace]\ninclude = [".env"]\n')
    result = cli(project.top, "run", str(plan_with_gate(project)), "--quiet")
    assert result.code == 0, result.err
    assert [e for e in project.events() if e["type"] == "scope-violation"] == []
    tree = git(project.top, "ls-tree", "-r", "--name-only", "failres/rr/t1").split()
    assert ".env" not in tree
    gate_log = (project.dispatch_logs()[0] / "gate.log").read_text()
    assert "token is" in gate_log and TOKEN not in gate_log  # the gate read the person's file, redacted
    assert "forged-by-the-seat" not in gate_log
    assert (project.top / ".env").read_text() == f"API_TOKEN={TOKEN}\n"


SETUP_VENV = (
    "import pathlib, os\n"
    "runs = pathlib.Path('.venv/setup-runs')\n"
    "runs.parent.mkdir(parents=True, exist_ok=True)\n"
    "with runs.open('a') as out:\n"
    "    out.write('ran\\n')\n"
    "for i in range(60):\n"
    "    p = pathlib.Path('.venv/lib/site-packages/dep%d/__init__.py' % i)\n"
    "    p.parent.mkdir(parents=True, exist_ok=True)\n"
    "    p.write_text('')\n"
    "pathlib.Path('.venv/marker').write_text('ready')\n"
)


def test_a_setup_making_a_venv_gitignore_does_not_name_is_never_a_violation(project: Project, cli, monkeypatch):
    # The setup counts its runs in what it makes (what it writes elsewhere the seat world would
    # not keep): a gate that finds a second run is red, and the task would not be committed.
    gate = [sys.executable, "-c", "import os, sys; sys.path.insert(0, 'src'); from calc import add; "
                                  "once = open('.venv/setup-runs').read() == 'ran\\n'; "
                                  "sys.exit(0 if once and os.path.exists('.venv/marker') and add(2, 3) == 5 else 1)"]
    extra = gate_section(gate, f"setup = {json.dumps([sys.executable, '-c', SETUP_VENV])}\nkeep = [\".venv/\"]\n")
    project.configure(implementer=[NOTHING], fixer=[FIX], extra=extra)
    assert not (project.top / ".gitignore").exists()
    result = cli(project.top, "run", str(plan_with_gate(project)), "--quiet")
    assert result.code == 0, result.err
    assert [e for e in project.events() if e["type"] in ("scope-violation", "decision-requested")] == []
    assert [d["seat"] for d in dispatches(project)] == ["implementer", "fixer"]
    gates = [e for e in project.events() if e["type"] == "gate-result" and not e.get("preflight")]
    assert [g["passed"] for g in gates] == [False, True]  # the setup ran once: the fixer's gate saw one run
    tree = git(project.top, "ls-tree", "-r", "--name-only", "failres/rr/t1").split()
    assert not any(path.startswith(".venv/") for path in tree)


DEV_SERVER = (
    "import os, pathlib, socket, sys, time\n"
    "out = pathlib.Path(sys.argv[1])\n"
    "port = int(os.environ['FAILRES_PORT'])\n"
    "server = socket.socket()\n"
    "server.bind(('127.0.0.1', port))\n"
    "server.listen()\n"
    "(out / os.environ['FAILRES_TASK']).write_text(str(port))\n"
    "deadline = time.monotonic() + 30\n"
    "while len(list(out.iterdir())) < 2 and time.monotonic() < deadline:\n"
    "    time.sleep(0.05)\n"
    "pathlib.Path('DONE-' + os.environ['FAILRES_TASK']).write_text('up on %d\\n' % port)\n"
)


def test_two_dev_servers_under_jobs_2_each_get_their_own_port(project: Project, cli):
    ports = project.agents / "ports"
    ports.mkdir()
    server = project.agents / "server.py"
    server.write_text(DEV_SERVER)
    gate = [sys.executable, "-c", "import os, sys; t = os.environ['FAILRES_TASK']; "
                                  "sys.exit(0 if open('DONE-' + t).read() == 'up on %s\\n' % os.environ['FAILRES_PORT'] "
                                  "else 1)"]
    seat = {"shell": [f"{sys.executable} {server} {ports}"]}
    project.configure(implementer=[seat], extra=gate_section(gate))
    plan = project.agents.parent / "plan.toml"
    plan.write_text('slug = "rr"\n' + "".join(
        f'[[tasks]]\nid = "{t}"\ntitle = "serve"\nprompt = "serve"\nfiles = ["DONE-{t}"]\ngate = "env"\n'
        for t in ("t1", "t2")))
    result = cli(project.top, "run", str(plan), "--quiet", "--jobs", "2", "--json")
    assert result.code == 0, result.err
    seen = {path.name: int(path.read_text()) for path in ports.iterdir()}
    assert sorted(seen) == ["t1", "t2"] and seen["t1"] != seen["t2"]  # both bound, at the same time
    for task in ("t1", "t2"):  # the gate got the seat's port
        assert git(project.top, "show", f"failres/rr/{task}:DONE-{task}") == f"up on {seen[task]}\n"


def test_an_agent_that_commits_in_its_workspace_needs_no_identity_of_its_own(project: Project, cli, monkeypatch,
                                                                            isolated_home):
    # A fresh machine: no identity anywhere, and git told not to guess one.
    for name in ("GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL", "GIT_COMMITTER_NAME", "GIT_COMMITTER_EMAIL", "EMAIL"):
        monkeypatch.delenv(name, raising=False)
    (isolated_home / ".gitconfig").write_text("[user]\n\tuseConfigOnly = true\n")
    who = project.agents / "who"
    commit = {"write": {"src/calc.py": FIXED},
              "shell": [f"git commit -qam 'the agent commits' && git log -1 --format='%an <%ae>' > {who}"]}
    project.configure(implementer=[commit])
    result = cli(project.top, "run", str(project.plan()), "--quiet")
    assert result.code == 0, result.err
    assert who.read_text().strip() == "failres seat <seat@failres.invalid>"
    assert project.branch_file("src/calc.py") == FIXED
    assert git(project.top, "config", "--get", "user.name", check=False).strip() != "failres seat"


# ── hints that a test applies ─────────────────────────────────────────


def make_generated_version(project: Project, imports: str = "from ._version import version") -> None:
    """A src layout whose package imports a generated, ignored `_version.py` (hatch-vcs, setuptools-scm)."""
    make_src_layout(project)
    (project.top / "src" / "pkg" / "__init__.py").write_text(imports + "\n")
    (project.top / ".gitignore").write_text("src/pkg/_version.py\n")
    git(project.top, "add", ".")
    git(project.top, "commit", "-q", "-m", "the version comes from the build")
    (project.top / "src" / "pkg" / "_version.py").write_text("version = '1.0'\n")  # as the build wrote it


def fixed_core() -> dict:
    return {"write": {"src/pkg/core.py": "def double(x):\n    return x + x\n"}}


# `from pkg import _version` in pkg/__init__.py (em-keyboard's, hatch-vcs) fails as "cannot import
# name '_version' from partially initialized module 'pkg'": no module is named missing, and the
# hint was once only to run the gate by hand.
@pytest.mark.parametrize("imports", ["from ._version import version", "from pkg import _version"],
                         ids=["relative", "from-package"])
def test_a_generated_ignored_module_is_named_with_the_include_that_brings_it_and_that_include_works(
        project: Project, cli, imports: str):
    make_generated_version(project, imports)
    gate = gate_section(PYTEST, 'env = { PYTHONPATH = "src" }\n')
    project.configure(implementer=[fixed_core()], extra=gate)
    plan = plan_with_gate(project, ["src/pkg/core.py"])
    assert cli(project.top, "run", str(plan), "--quiet").code == 1
    message = quarantined(project)["message"]
    assert quarantined(project)["failClass"] == "gate-unavailable"
    assert 'add [workspace] include = ["src/pkg/_version.py"] to .failres.toml' in message
    assert "PYTHONPATH=src" not in message  # already set: saying it again fixes nothing
    # The hint, applied as it says.
    project.configure(implementer=[fixed_core()], extra=gate + '[workspace]\ninclude = ["src/pkg/_version.py"]\n')
    config = project.top / ".failres.toml"
    config.write_text(config.read_text() + '[stop_loss]\nmode = "off"\n')
    assert cli(project.top, "run", str(plan), "--quiet").code == 0
    assert git(project.top, "show", "failres/rr/t1:src/pkg/core.py") == "def double(x):\n    return x + x\n"


@pytest.mark.parametrize("table", ["tool.pytest", "tool.pytest.ini_options"])
def test_the_import_path_hint_names_the_pytest_table_the_project_uses_and_that_line_works(project: Project, cli,
                                                                                      table: str):
    make_src_layout(project)
    addopts = '["-q"]' if table == "tool.pytest" else '"-q"'  # pytest 9's own table takes a list
    (project.top / "pyproject.toml").write_text(f'[{table}]\naddopts = {addopts}\n')
    git(project.top, "add", ".")
    git(project.top, "commit", "-q", "-m", "pytest settings")
    project.configure(implementer=[fixed_core()], extra=gate_section(PYTEST))
    plan = plan_with_gate(project, ["src/pkg/core.py"])
    assert cli(project.top, "run", str(plan), "--quiet").code == 1
    message = quarantined(project)["message"]
    assert f'set pythonpath = ["src"] under [{table}] in pyproject.toml' in message
    pytest_version = tuple(int(p) for p in pytest.__version__.split(".")[:1])
    if table == "tool.pytest" and pytest_version < (9,):
        return  # this pytest reads only ini_options: the line is right for the project's own pytest
    (project.top / "pyproject.toml").write_text(f'[{table}]\naddopts = {addopts}\npythonpath = ["src"]\n')
    git(project.top, "commit", "-q", "-am", "the hint, applied")
    config = project.top / ".failres.toml"
    config.write_text(config.read_text() + '[stop_loss]\nmode = "off"\n')
    assert cli(project.top, "run", str(plan), "--quiet").code == 0


# ── included files: every value redacted, a refused copy said ──────────

ECHO_INCLUDED = (
    "import json, pathlib, sys\n"
    "sys.path.insert(0, 'src')\n"
    "print('env is', pathlib.Path('.env').read_text())\n"
    "print('settings are', json.dumps(json.loads(pathlib.Path('settings.json').read_text())))\n"
    "from calc import add\nsys.exit(0 if add(2, 3) == 5 else 1)\n"
)


def test_every_value_of_an_included_file_is_redacted_whatever_its_form(project: Project, cli):
    """Measured before: a value with a trailing comment, a 7-character password, a value with a
    zero-width joiner and a password in an included JSON file reached the gate's log in clear."""
    (project.top / "tests" / "check_included.py").write_text(ECHO_INCLUDED)
    git(project.top, "add", ".")
    git(project.top, "commit", "-q", "-m", "a check that reads local files")
    secrets = {"commented": "k3y-with-comment", "short": "s3v3n!x", "joined": "zwj\u200dsecret\u200dvalue",
               "json": "hunter2-json"}
    (project.top / ".env").write_text(f"API_KEY={secrets['commented']} # the staging key\n"
                                      f"DB_PASSWORD='{secrets['short']}'\nSESSION_TOKEN=\"{secrets['joined']}\"\n"
                                      "DEBUG=true\nPORT=8000\n")
    (project.top / "settings.json").write_text(json.dumps({"db": {"password": secrets["json"], "port": 5432}}))
    # The seat prints the values too, one with a zero-width joiner put between its letters.
    spread = "\u200b".join(secrets["json"])
    seat = {"write": {"src/calc.py": FIXED}, "print": f"{secrets['short']} {spread} {secrets['commented']}"}
    project.configure(implementer=[seat], extra=gate_section([sys.executable, "tests/check_included.py"])
                      + '[workspace]\ninclude = [".env", "settings.json"]\n')
    result = cli(project.top, "run", str(plan_with_gate(project)), "--quiet")
    assert result.code == 0, result.err
    logs = project.dispatch_logs()[0]
    kept = (logs / "gate.log").read_text() + (logs / "seat.log").read_text()
    assert "env is" in kept and "settings are" in kept  # the gate read the person's files
    plain = kept.replace("\u200b", "").replace("\u200d", "")
    for value in secrets.values():
        assert value.replace("\u200d", "") not in plain, value
    assert "DEBUG=true" in kept and "PORT=8000" in kept  # plain words are not secrets


def test_a_directory_where_an_included_file_goes_is_refused_loudly_and_nothing_is_judged(project: Project, cli):
    (project.top / "tests" / "check_env.py").write_text(CHECK_ENV)
    git(project.top, "add", ".")
    git(project.top, "commit", "-q", "-m", "a check that reads .env")
    (project.top / ".env").write_text(f"API_TOKEN={TOKEN}\n")
    # The implementer replaces the included file with a directory: the copy before the gate cannot go there.
    seat = {"write": {"src/calc.py": FIXED}, "delete": [".env"], "mkdir": [".env"]}
    project.configure(implementer=[seat], extra=gate_section([sys.executable, "tests/check_env.py"])
                      + '[workspace]\ninclude = [".env"]\n')
    result = cli(project.top, "run", str(plan_with_gate(project)), "--quiet")
    assert result.code == 1
    event = quarantined(project)
    assert event["failClass"] == "include-refused" and ".env" in event["message"]
    assert git(project.top, "rev-parse", "failres/rr/t1") == git(project.top, "rev-parse", "main")
    gates = [e for e in project.events() if e["type"] == "gate-result" and not e.get("preflight")]
    assert gates == []  # no gate ran without the person's file


# ── a node project's tools, where no world runs ───────────────────────

# What `npm test` does: node_modules/.bin first on PATH, then the project's own tool (dequal's
# pretest runs `bundt` so), which judges the code.
NPM_LIKE = ["bash", "-c", "PATH=node_modules/.bin:$PATH check-calc"]
CHECK_TOOL = f"#!/bin/sh\nexec {sys.executable} tests/check.py\n"


def test_a_node_bin_tool_the_workspace_lacks_without_a_world_is_named_with_the_setup_that_brings_it(
        project: Project, cli):
    """Once told to fix the gate's command, which names no such program; the setup it says instead works."""
    project.sandbox_mode = "off"
    (project.top / ".gitignore").write_text("node_modules/\n")
    git(project.top, "add", ".gitignore")
    git(project.top, "commit", "-q", "-m", "ignore node_modules")
    tool = project.top / "node_modules" / ".bin" / "check-calc"
    tool.parent.mkdir(parents=True)
    tool.write_text(CHECK_TOOL)
    tool.chmod(0o755)
    project.configure(implementer=[FIX], extra=gate_section(NPM_LIKE))
    plan = plan_with_gate(project)
    assert cli(project.top, "run", str(plan), "--quiet").code == 1
    assert project.calls("impl") == 0
    event = quarantined(project)
    assert event["failClass"] == "gate-unavailable"
    assert "it is in your checkout's node_modules/.bin" in event["message"]
    assert 'setup = ["npm", "ci"]' in event["message"] and 'keep = ["node_modules/"]' in event["message"]
    assert ".venv/bin" not in event["message"]  # the command fix, which cannot help here
    # The hint, applied as it says (the project's own install: here, a copy of the tool).
    install = f"mkdir -p node_modules/.bin && cp {tool} node_modules/.bin/check-calc"
    project.configure(implementer=[FIX], extra=gate_section(NPM_LIKE, f'setup = {json.dumps(["bash", "-c", install])}\n'
                                                            'keep = ["node_modules/"]\n')
                      + '[workspace]\nenvironment = []\n[stop_loss]\nmode = "off"\n')
    assert cli(project.top, "run", str(plan), "--quiet").code == 0
    assert git(project.top, "show", f"failres/{project.slug}/t1:src/calc.py") == FIXED
