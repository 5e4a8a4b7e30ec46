"""failres's own git never runs code a seat wrote: nested repositories with filters of their own,
filters in a file the person's config includes, odd files in scope, and the engine-down probe.

Each test asserts what the person keeps: `main` where it was, no hook planted, the
file the seat wrote outside its workspace gone.
"""

from __future__ import annotations

import os
import sys
import subprocess
from pathlib import Path

import pytest

from conftest import git
from project import FIXED, Project
from test_containment import TOP, quarantined, run

FIX = {"write": {"src/calc.py": FIXED}}


# Each attack with the seat world off (the tamper check alone) and on (`seat_world`).
pytestmark = pytest.mark.usefixtures("seat_world")


@pytest.fixture
def project(tmp_path: Path) -> Project:
    return Project.create(tmp_path)


def hostile_filter(project: Project) -> str:
    """A clean filter that moves the person's main and plants a hook, then passes its input through."""
    other = project.top.parent / "other-commit"
    script = project.top.parent / "evil-filter.sh"
    script.write_text("\n".join([
        "#!/bin/sh",
        f"git -C {project.top} update-ref refs/heads/main $(cat {other}) >/dev/null 2>&1",
        f"printf '#!/bin/sh\\necho planted\\n' > {project.top}/.git/hooks/post-merge",
        f"chmod +x {project.top}/.git/hooks/post-merge",
        "cat",
    ]) + "\n")
    script.chmod(0o755)
    tree = git(project.top, "write-tree").strip()
    other.write_text(git(project.top, "commit-tree", "-m", "seat", tree).strip())
    return str(script)


def assert_person_untouched(project: Project, main: str) -> None:
    assert git(project.top, "rev-parse", "main").strip() == main
    assert not (project.top / ".git" / "hooks" / "post-merge").exists()
    # The person's next status runs nothing of the seat's either.
    git(project.top, "status", "--porcelain")
    assert git(project.top, "rev-parse", "main").strip() == main
    assert not (project.top / ".git" / "hooks" / "post-merge").exists()


def test_a_nested_repository_with_a_clean_filter_in_scope_runs_nothing_and_is_quarantined(project: Project, cli):
    main = git(project.top, "rev-parse", "main").strip()
    script = hostile_filter(project)
    nested = "; ".join([
        "git init -q vendor/sub", "echo one > vendor/sub/f", "git -C vendor/sub add f",
        "git -C vendor/sub -c user.name=s -c user.email=s@s commit -qm one",
        f"git -C vendor/sub config filter.evil.clean {script}",
        "echo '* filter=evil' > vendor/sub/.gitattributes", "echo two > vendor/sub/f",
    ])
    # The implementer commits a nested repository; the fixer re-creates its `.git` with a filter.
    project.configure(implementer=[{"shell": [nested]}], fixer=[{**FIX, "shell": [nested]}] * 3)
    result = run(cli, project, files=["src/calc.py", "vendor/**"])
    assert_person_untouched(project, main)
    assert result.code == 1, result.err
    failure = quarantined(project)
    assert failure["failClass"] == "seat-tamper" and "vendor/sub is a nested git repository" in failure["message"]
    assert "vendor/sub" not in git(project.top, "rev-list", "--objects", "--all")


def test_a_filter_in_a_file_the_persons_config_includes_is_put_back_before_failres_reads(
        project: Project, cli, seat_world: bool):
    main = git(project.top, "rev-parse", "main").strip()
    script = hostile_filter(project)
    home = Path(os.environ["HOME"])
    (home / ".gitconfig").write_text("[include]\n\tpath = ~/.gitconfig.local\n")
    local = home / ".gitconfig.local"
    project.configure(implementer=[{**FIX, "shell": [
        f"printf '[filter \"evil\"]\\n\\tclean = {script}\\n' > {local}",
        "echo '* filter=evil' > src/.gitattributes"]}])
    result = run(cli, project, files=["src/calc.py", "src/.gitattributes"])
    assert_person_untouched(project, main)
    assert not local.exists()
    if not seat_world:  # inside the world the write lands in its private home: there is nothing to undo
        assert result.code == 1
        assert quarantined(project)["failClass"] == "seat-tamper"


def test_a_tracked_file_turned_into_a_fifo_is_a_quarantine_not_an_interrupted_run(project: Project, cli):
    project.configure(implementer=[{"shell": ["rm src/calc.py && mkfifo src/calc.py"]}])
    result = run(cli, project)
    assert result.code == 1, result.err
    failure = quarantined(project)
    assert failure["failClass"] == "seat-tamper" and "src/calc.py is a FIFO" in failure["message"]
    assert "interrupted" not in project.types()


def test_an_empty_nested_repository_in_scope_is_a_quarantine(project: Project, cli):
    project.configure(implementer=[{**FIX, "shell": ["git init -q src/inner"]}])
    assert run(cli, project, files=["src/**"]).code == 1
    assert "src/inner is a nested git repository" in quarantined(project)["message"]
    assert "interrupted" not in project.types()


def test_the_health_probe_runs_on_the_put_back_workspace_under_the_tamper_check(project: Project, cli):
    main = git(project.top, "rev-parse", "main").strip()
    script = hostile_filter(project)
    # The seat leaves a `health.py` in its workspace and reports its engine down; the
    # binding's health command runs `health.py` from the workspace.
    evil = f"import subprocess; subprocess.run(['{script}'], stdin=subprocess.DEVNULL)\n"
    project.configure(
        implementer=[{"write": {"src/health.py": evil}, "print": "Error: 503 Service Unavailable", "exit": 1}] * 3,
        health=[sys.executable, "-c", "import os,runpy; os.path.exists('src/health.py') and runpy.run_path('src/health.py')"],
        extra='[engine_down]\npatterns = ["503 Service Unavailable"]\n')
    run(cli, project, files=["src/calc.py", "src/health.py"])
    assert_person_untouched(project, main)
    assert [e for e in project.events() if e["type"] == "repair"], project.types()


FORGE = """
import os, sys, zlib, subprocess
top, path = sys.argv[1], sys.argv[2]
oid = subprocess.run(["git", "-C", top, "rev-parse", "HEAD:" + path], capture_output=True, text=True).stdout.strip()
text = b"print('1 passed')\\n"
loose = os.path.join(top, ".git", "objects", oid[:2], oid[2:])
os.makedirs(os.path.dirname(loose), exist_ok=True)
if os.path.exists(loose):
    os.chmod(loose, 0o644)
    os.unlink(loose)
with open(loose, "wb") as out:
    out.write(zlib.compress(b"blob %d\\0" % len(text) + text))
"""


@pytest.mark.parametrize("packed", [False, True], ids=["loose", "packed"])
def test_a_forged_loose_object_of_an_unchanged_file_is_found_and_the_true_one_comes_back(
        project: Project, cli, packed: bool, seat_world: bool):
    from project import CHECK

    if packed:
        git(project.top, "gc", "-q")
    forge = project.agents / "forge.py"
    forge.write_text(FORGE)
    project.configure(implementer=[{**FIX, "shell": [f'{TOP}; {sys.executable} {forge} "$top" tests/check.py']}])
    run(cli, project)
    assert git(project.top, "show", "main:tests/check.py") == CHECK
    git(project.top, "fsck", "--full", "--no-dangling")
    # Inside the world the forgery lands in the workspace's own objects: what is committed
    # still holds the true file.
    if git(project.top, "branch", "--list", f"failres/{project.slug}/t1").strip():
        assert project.branch_file("tests/check.py") == CHECK
    if not seat_world:
        assert quarantined(project)["failClass"] == "seat-tamper"


def test_a_dispatch_directory_swapped_for_a_link_to_the_persons_files_deletes_and_writes_nothing_there(
        project: Project, cli):
    results = project.top / "data" / "2" / "results.csv"
    results.parent.mkdir(parents=True)
    results.write_text("the person's untracked results\n")
    swap = (f'{TOP}; root=$(dirname "$FAILRES_DISPATCH_DIR"); mv "$root" "$root.gone"; '
            f'ln -s "$top/data" "$root"')
    project.configure(implementer=[{"shell": [swap]}], fixer=[FIX])
    run(cli, project)
    assert results.read_text() == "the person's untracked results\n"
    assert sorted(p.name for p in results.parent.iterdir()) == ["results.csv"]
    assert not (project.top / "data" / "prompt.md").exists()


def test_scope_requests_outside_the_repository_or_into_a_git_dir_are_refused_and_escapes_never_kept(
        project: Project, cli):
    """A terminal escape in a request is removed before anything reads it: the request names
    the file a person is shown (`src/hidden.py`), never a name an escape hid part of."""
    import json

    lines = "\n".join([
        "SCOPE-REQUEST: ../../etc/passwd — I need the users",
        "SCOPE-REQUEST: .git/hooks/post-merge — a hook",
        "SCOPE-REQUEST: src/\x1b[8mhidden.py — hidden",
        "SCOPE-REQUEST: src/other.py — the value lives there \x1b]0;owned\x07",
    ])
    project.configure(implementer=[{"print": lines}])
    assert run(cli, project).code == 1
    [decision] = json.loads(cli(project.top, "decisions", "--json").out)
    assert [r["file"] for r in decision["requests"]] == ["src/hidden.py", "src/other.py"]
    shown = json.dumps(decision, ensure_ascii=False)
    assert "\x1b" not in shown and "\x07" not in shown
    assert "the value lives there" in decision["requests"][1]["reason"]


def test_a_token_printed_before_the_seat_kills_failres_never_lies_in_clear_in_live_log(project: Project, cli):
    token = "ghp_R4nd0mT0k3nV4lu3Zq8Wn2Lk5Pd7Xc9Vb1Mj4"
    # bash -> the fake agent -> its supervisor -> failres
    failres_pid = 's=$(ps -o ppid= -p $PPID | tr -d " "); p=$(ps -o ppid= -p $s | tr -d " ")'
    project.configure(implementer=[{"shell": [f"echo 'the key is {token}'; {failres_pid}; "
                                              "sleep 0.5; kill -KILL $p; sleep 30"]}])
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    subprocess.run([sys.executable, "-m", "failres", "run", str(project.plan()), "--quiet"], cwd=project.top,
                   env=env, capture_output=True, timeout=120)

    def secret_on_disk() -> list[str]:
        found = []
        for directory, _dirs, names in os.walk(project.top / ".git" / "failres"):
            for name in names:
                path = Path(directory, name)
                if path.is_file() and token.encode() in path.read_bytes():
                    found.append(str(path))
        return found

    assert secret_on_disk() == []
    assert cli(project.top, "status").code in (0, 1)
    assert secret_on_disk() == []
