"""`git failres doctor` exits 1 when anything configured cannot be used here, says on a line of its
own whether each gate's program is found, and words its fixes by the rule `run` and `init` use."""

from __future__ import annotations

import json
import os
from pathlib import Path

from conftest import run_failres
from failres.agents.program_path import WHERE_PROGRAMS_ARE


def doctor(repo: Path, *args: str, **extra: str):
    env = {**{k: v for k, v in os.environ.items() if not k.startswith("FAILRES_")}, **extra}
    return run_failres(repo, "doctor", *args, env=env)


def executable(path: Path, text: str = "#!/bin/sh\nexit 0\n") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    path.chmod(0o755)
    return path


def configure(repo: Path, *, agent: str = "tools/agent", gate: str = "tools/check", health: str = "",
              extra: str = "") -> None:
    (repo / ".failres.toml").write_text(
        f'[bindings.impl]\ncommand = ["{agent}"]\n{health}\n[gates.tests]\ncommand = ["{gate}", "-q"]\n'
        f'[seats]\nimplementer = "impl"\n{extra}')


def lines(proc) -> dict[str, str]:
    return {line[4:].split()[0] + " " + line[4:].split()[1]: line for line in proc.stdout.splitlines()
            if line[:3] in ("ok ", "no ") and line[4:].startswith(("agent ", "gate "))}


def test_everything_configured_found_by_a_path_from_the_repository_top_exits_0(repo: Path) -> None:
    executable(repo / "tools" / "agent")
    executable(repo / "tools" / "check")
    configure(repo)
    proc = doctor(repo, FAILRES_BWRAP="/nonexistent/bwrap")  # no world, but none is required
    assert proc.returncode == 0, proc.stdout + proc.stderr
    found = lines(proc)
    assert found["agent impl"].startswith("ok ") and found["gate tests"].startswith("ok ")
    assert f"found: {repo / 'tools' / 'check'}" in found["gate tests"]


def test_a_bindings_program_that_is_missing_makes_doctor_exit_1_with_the_shared_fix(repo: Path) -> None:
    executable(repo / "tools" / "check")
    configure(repo, agent="no-such-agent-xyz")
    proc = doctor(repo)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert lines(proc)["agent impl"].startswith("no ")
    assert f"fix: name it in the command as {WHERE_PROGRAMS_ARE}" in proc.stdout
    document = json.loads(doctor(repo, "--json").stdout)
    assert document["usable"] is False and document["agents"][0]["usable"] is False


def test_a_gate_whose_program_is_missing_has_its_own_no_line_and_exit_1(repo: Path) -> None:
    executable(repo / "tools" / "agent")
    configure(repo, gate=".venv/bin/python")
    proc = doctor(repo)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    line = lines(proc)["gate tests"]
    assert line.startswith("no ") and '".venv/bin/python" is not an executable file' in line
    assert f"fix: in [gates.tests]: name it in the command as {WHERE_PROGRAMS_ARE}" in proc.stdout
    executable(repo / ".venv" / "bin" / "python")
    assert doctor(repo).returncode == 0
    gates = json.loads(doctor(repo, "--json").stdout)["gates"]
    assert gates == [{"gate": "tests", "program": ".venv/bin/python", "path": str(repo / ".venv/bin/python"),
                      "runs": True, "problem": None, "instead": None}]


def test_a_failing_health_command_makes_doctor_exit_1_and_a_passing_one_0(repo: Path, tmp_path: Path) -> None:
    executable(repo / "tools" / "agent")
    executable(repo / "tools" / "check")
    verdict = tmp_path / "verdict"
    verdict.write_text("3")
    health = executable(tmp_path / "health", f'#!/bin/sh\necho "not logged in" >&2\nexit $(cat {verdict})\n')
    configure(repo, health=f'health = ["{health}"]')
    proc = doctor(repo)
    assert proc.returncode == 1, proc.stdout
    assert "failed (exit 3): not logged in" in lines(proc)["agent impl"]
    verdict.write_text("0")
    proc = doctor(repo)
    assert proc.returncode == 0, proc.stdout
    assert "passed" in lines(proc)["agent impl"]


def test_a_seat_world_required_and_not_there_makes_doctor_exit_1_and_auto_does_not(repo: Path) -> None:
    executable(repo / "tools" / "agent")
    executable(repo / "tools" / "check")
    configure(repo, extra='[sandbox]\nmode = "required"\n')
    proc = doctor(repo, FAILRES_BWRAP="/nonexistent/bwrap")
    assert proc.returncode == 1, proc.stdout
    assert '[sandbox] mode = "required"' in proc.stdout
    configure(repo, extra='[sandbox]\nmode = "auto"\n')
    assert doctor(repo, FAILRES_BWRAP="/nonexistent/bwrap").returncode == 0


def test_doctor_and_init_say_the_same_fix_for_an_agent_that_is_not_here(plain_repo: Path) -> None:
    bare = os.pathsep.join([str(Path(os.sys.executable).parent), "/usr/bin", "/bin"])
    init = run_failres(plain_repo, "init", "--agent", "claude", "--no-hooks", env={**os.environ, "PATH": bare})
    assert init.returncode == 0, init.stderr
    hint = next(line for line in init.stderr.splitlines() if line.startswith("hint: "))[len("hint: "):]
    proc = doctor(plain_repo, PATH=bare)
    assert proc.returncode == 1
    fix = next(agent for agent in json.loads(doctor(plain_repo, "--json", PATH=bare).stdout)["agents"]
               if agent["binding"] == "claude")["fix"]
    assert WHERE_PROGRAMS_ARE in fix and hint.startswith(fix), (fix, hint)
