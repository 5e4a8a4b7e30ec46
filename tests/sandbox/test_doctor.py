"""`git failres doctor`: the seat world, git, Python and each configured agent, one line each."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

from conftest import run_failres
from failres.sandbox import probe


def doctor(cwd: Path, *args: str, **extra: str):
    env = {**{k: v for k, v in os.environ.items() if not k.startswith("FAILRES_")}, **extra}
    return run_failres(cwd, "doctor", *args, env=env)


def test_doctor_says_whether_this_machine_gives_a_seat_world(tmp_path: Path) -> None:
    proc = doctor(tmp_path, "--json")
    assert proc.returncode == 0, proc.stderr
    found = json.loads(proc.stdout)
    expected = probe.described(probe.machine_sandbox())  # doctor names bubblewrap's version too
    assert found["sandbox"] == {"available": expected.available, "kind": expected.kind or None,
                                "why": expected.why}
    assert found["python"]["version"].startswith("3.")
    assert found["git"]["version"][0].isdigit()
    assert found["agents"] == []


def test_without_bubblewrap_doctor_says_why_and_how_to_fix_it(tmp_path: Path) -> None:
    proc = doctor(tmp_path, FAILRES_BWRAP="/nonexistent/bwrap")
    line = next(line for line in proc.stdout.splitlines() if line.split()[1:2] == ["sandbox"])
    assert line.startswith("no ") and "bubblewrap (/nonexistent/bwrap) is not installed" in line
    assert "fix: install it: apt-get install bubblewrap" in proc.stdout
    assert json.loads(doctor(tmp_path, "--json", FAILRES_BWRAP="/nonexistent/bwrap").stdout)["sandbox"][
        "available"] is False


def test_doctor_checks_each_configured_agent_on_path_and_its_login(repo: Path, tmp_path: Path,
                                                                   isolated_home: Path) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    claude = bin_dir / "claude"
    claude.write_text("#!/bin/sh\n")
    claude.chmod(claude.stat().st_mode | stat.S_IEXEC)
    (repo / ".failres.toml").write_text(
        '[bindings.claude]\ncommand = ["claude", "-p"]\n[bindings.codex]\ncommand = ["codex", "exec"]\n')
    path = f"{bin_dir}{os.pathsep}{os.environ['PATH']}"
    env = {k: v for k, v in os.environ.items() if k not in ("ANTHROPIC_API_KEY", "OPENAI_API_KEY")}
    env["PATH"] = path
    found = json.loads(run_failres(repo, "doctor", "--json", env=env).stdout)
    agents = {a["binding"]: a for a in found["agents"]}
    assert agents["claude"]["onPath"] is True and agents["claude"]["loggedIn"] is False
    assert "/login" in agents["claude"]["fix"]
    assert agents["codex"]["onPath"] is False and "npm install -g @openai/codex" in agents["codex"]["fix"]
    (isolated_home / ".claude").mkdir()
    (isolated_home / ".claude" / ".credentials.json").write_text("{}")
    found = json.loads(run_failres(repo, "doctor", "--json", env=env).stdout)
    assert {a["binding"]: a for a in found["agents"]}["claude"]["loggedIn"] is True
    text = run_failres(repo, "doctor", env=env).stdout
    assert any(line.startswith("no ") and "agent codex" in line for line in text.splitlines())


def test_doctor_in_a_repository_with_a_broken_configuration_names_it(repo: Path) -> None:
    (repo / ".failres.toml").write_text("[sandbox]\nmode = 3\n")
    proc = doctor(repo)
    assert proc.returncode == 2 and proc.stderr.startswith("error: ") and "sandbox.mode" in proc.stderr


def test_where_user_namespaces_are_refused_doctor_names_the_kernel_settings_and_the_fix(tmp_path: Path) -> None:
    fake = tmp_path / "bwrap"
    fake.write_text("#!/bin/sh\nfor word in \"$@\"; do [ \"$word\" = --unshare-user ] && "
                    "{ echo 'bwrap: setting up uid map: Permission denied' >&2; exit 1; }; done\nexec bwrap \"$@\"\n")
    fake.chmod(0o755)
    proc = doctor(tmp_path, FAILRES_BWRAP=str(fake))
    assert "no seat world: bubblewrap cannot make a world here: bwrap: setting up uid map" in proc.stdout
    for setting in probe.USERNS_SYSCTLS:
        assert setting in proc.stdout


def test_the_kernel_setting_that_refuses_user_namespaces_is_named_with_its_fix() -> None:
    apparmor = probe.namespace_cause({"kernel.apparmor_restrict_unprivileged_userns": "1",
                                      "user.max_user_namespaces": "15000"})
    assert "apparmor_restrict_unprivileged_userns = 1" in apparmor[0]
    assert apparmor[1].startswith("sudo sysctl kernel.apparmor_restrict_unprivileged_userns=0")
    assert probe.namespace_cause({"kernel.unprivileged_userns_clone": "0"})[1] == (
        "sudo sysctl kernel.unprivileged_userns_clone=1")
    assert "user.max_user_namespaces = 0" in probe.namespace_cause({"user.max_user_namespaces": "0"})[0]
    unknown = probe.namespace_cause({"user.max_user_namespaces": "15000"})
    assert unknown[0] == "" and all(name.split(".", 1)[1] in unknown[1] for name in probe.USERNS_SYSCTLS)
