"""Configuration that cannot hurt: the store ref stays in failres's namespace, workspaces stay
out of the working tree and out of git directories, and impossible values are refused by key."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from conftest import git
from failres.config.checks import store_ref_problem, workspace_dir_problem
from project import FIXED, Project

TOP = Path("/home/me/project")
GIT = TOP / ".git"


# ── the pure checks ─────────────────────────────────────────────────────────


@pytest.mark.parametrize("path", [
    "/home/me/failres-workspaces",  # beside the repository
    "/tmp/ws",
    "/home/me/project/.git/failres/worktrees",  # failres's own part of the git directory (the default)
    "/home/me/project/.git/failres",
    "/home/me",  # an ancestor: workspaces would be siblings of the repository, not inside it
])
def test_a_workspace_dir_outside_the_tree_and_outside_git_dirs_is_accepted(path: str) -> None:
    assert workspace_dir_problem(Path(path), TOP, GIT) is None


@pytest.mark.parametrize(("path", "problem"), [
    ("/", "is the root directory"),
    ("/home/me/project", "inside the repository's working tree"),
    ("/home/me/project/build/ws", "inside the repository's working tree"),
    ("/home/me/project/src/../ws", "inside the repository's working tree"),
    ("/home/me/project/.git", "inside the repository's git directory"),
    ("/home/me/project/.git/objects/ws", "inside the repository's git directory"),
    ("/home/me/other/.git/ws", "inside another repository's git directory"),
    ("/srv/mirror.git/ws", "inside another repository's git directory"),
    ("relative/ws", "not an absolute path"),
])
def test_a_workspace_dir_that_could_hurt_a_repository_is_refused(path: str, problem: str) -> None:
    found = workspace_dir_problem(Path(path), TOP, GIT)
    assert found is not None and problem in found


def test_a_separate_git_dir_is_judged_where_it_really_is() -> None:
    elsewhere = Path("/var/git/project")
    assert workspace_dir_problem(elsewhere / "failres" / "ws", TOP, elsewhere) is None
    assert "git directory" in workspace_dir_problem(elsewhere / "hooks", TOP, elsewhere)


@pytest.mark.parametrize("ref", ["refs/heads/main", "refs/tags/v1", "refs/notes/commits", "refs/failres/",
                                 "refs/failres/snapshots/mine", "refs/remotes/origin/failres/store"])
def test_a_store_ref_outside_failres_s_namespace_is_refused(ref: str) -> None:
    assert store_ref_problem(ref) is not None


@pytest.mark.parametrize("ref", ["refs/failres/store", "refs/failres/team/store"])
def test_a_store_ref_in_failres_s_namespace_is_accepted(ref: str) -> None:
    assert store_ref_problem(ref) is None


# ── through the real commands ───────────────────────────────────────────────


@pytest.fixture
def project(tmp_path: Path) -> Project:
    project = Project.create(tmp_path)
    project.configure(implementer=[{"write": {"src/calc.py": FIXED}}])
    return project


def refused(cli, project: Project, extra: str, *args: str, key: str) -> str:
    """Run a command under a configuration with `extra` appended: exit 2, one line naming the key."""
    config = project.top / ".failres.toml"
    config.write_text(config.read_text() + extra)
    before = git(project.top, "for-each-ref")
    result = cli(project.top, *(args or ("run", str(project.plan()))))
    lines = result.err.splitlines()
    assert result.code == 2, result.err
    assert lines[0].startswith("error: ") and key in lines[0] and len(lines) <= 2, result.err
    assert git(project.top, "for-each-ref") == before  # nothing written
    assert project.calls("impl") == 0
    return result.err


@pytest.mark.parametrize("ref", ["refs/heads/main", "refs/tags/v1"])
def test_a_store_ref_on_a_branch_or_tag_is_refused_before_anything_is_committed(
        project: Project, cli, ref: str) -> None:
    main = git(project.top, "rev-parse", "main")
    refused(cli, project, f'[store]\nref = "{ref}"\n', key="store.ref")
    assert git(project.top, "rev-parse", "main") == main


@pytest.mark.parametrize("value", ["/", ".", "src/work", ".git/objects/ws", ".git"])
def test_a_workspace_dir_that_could_hurt_the_repository_is_refused_by_key(project: Project, cli, value: str) -> None:
    refused(cli, project, f'[worktrees]\ndir = "{value}"\n', key="worktrees.dir")


def test_a_workspace_dir_inside_another_repository_s_git_dir_is_refused(project: Project, cli,
                                                                        tmp_path: Path) -> None:
    other = tmp_path / "other"
    git(tmp_path, "init", "-q", str(other))
    refused(cli, project, f'[worktrees]\ndir = "{other / ".git" / "ws"}"\n', key="worktrees.dir")


def test_a_workspace_dir_beside_the_repository_runs_the_task_there(project: Project, cli, tmp_path: Path) -> None:
    config = project.top / ".failres.toml"
    config.write_text(config.read_text() + f'[worktrees]\ndir = "{tmp_path / "ws"}"\n')
    result = cli(project.top, "run", str(project.plan()), "--quiet")
    assert result.code == 0, result.err


@pytest.mark.parametrize(("extra", "key"), [
    ('[gates.nul]\ncommand = ["python", "-c", "print(1)\\u0000"]\n', "gates.nul.command[2]"),
    ('[bindings.nul]\ncommand = ["agent\\u0000"]\n', "bindings.nul.command[0]"),
    ('[bindings.nul]\ncommand = ["agent"]\nenv = { TOKEN = "a\\u0000b" }\n', "bindings.nul.env.TOKEN"),
    ('[scope]\nprotected = ["secrets/\\u0000**"]\n', "scope.protected[0]"),
    ('[integration]\nremote = "origin\\u0000"\n', "integration.remote"),
    ('[worktrees]\ndir = "ws\\u0000"\n', "worktrees.dir"),
    ('[learning]\ncommand = ["llm\\u0000"]\n', "learning.command[0]"),
    ('[bindings.slow]\ncommand = ["x"]\ntimeout = "99999999999999999999999999999999999999999d"\n',
     "bindings.slow.timeout"),
    ('[gates.slow]\ncommand = ["true"]\ntimeout = "400d"\n', "gates.slow.timeout"),
])
def test_a_nul_byte_or_an_impossible_value_anywhere_is_refused_naming_the_key(
        project: Project, cli, extra: str, key: str) -> None:
    refused(cli, project, extra, key=key)


@pytest.mark.parametrize(("field", "key"), [
    ('prompt = "Fix\\u0000it"', "tasks[0].prompt"),
    ('title = "Fix\\u0000it"', "tasks[0].title"),
])
def test_a_nul_byte_in_a_plan_is_refused_naming_the_key(project: Project, cli, field: str, key: str) -> None:
    plan = project.top.parent / "nul-plan.toml"
    plan.write_text(f'slug = "rr"\n[[tasks]]\nid = "t1"\n{field}\nfiles = ["src/calc.py"]\n'
                    + ('prompt = "p"\n' if "prompt" not in field else ""))
    result = cli(project.top, "run", str(plan))
    assert result.code == 2 and key in result.err.splitlines()[0], result.err
    assert project.calls("impl") == 0


def test_init_refuses_a_store_ref_on_a_branch_and_writes_nothing(plain_repo: Path, cli) -> None:
    (plain_repo / ".failres.toml").write_text('[store]\nref = "refs/heads/main"\n')
    result = cli(plain_repo, "init", "--no-hooks")
    assert result.code == 2 and "store.ref" in result.err
    assert git(plain_repo, "for-each-ref", "refs/failres") == ""
    assert json.loads(json.dumps(git(plain_repo, "log", "--format=%s", "main").splitlines())) == ["initial"]
    assert os.listdir(plain_repo / ".git" / "refs" / "heads") == ["main"]
