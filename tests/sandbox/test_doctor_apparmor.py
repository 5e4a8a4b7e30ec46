"""`git failres doctor` names AppArmor's user-namespace restriction (Ubuntu 24.04, its CI
runners) and its fix when that is why bubblewrap cannot make a seat world."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sandbox_machines import refusing_user_namespaces, without_bubblewrap
from failres.sandbox import doctor


@pytest.fixture
def refused_bwrap(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    return refusing_user_namespaces(tmp_path / "bin", monkeypatch)


def restriction(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, value: str) -> None:
    switch = tmp_path / "apparmor_restrict_unprivileged_userns"
    switch.write_text(value + "\n")
    monkeypatch.setattr(doctor, "APPARMOR_USERNS", switch)


def test_a_refused_bubblewrap_under_the_restriction_gets_the_sysctl_fix(tmp_path: Path, cli, refused_bwrap,
                                                                        monkeypatch: pytest.MonkeyPatch):
    restriction(tmp_path, monkeypatch, "1")
    result = cli(tmp_path, "doctor", "--json")
    assert result.code == 0, result.err
    checks = {check["name"]: check for check in json.loads(result.out)["checks"]}
    assert checks["sandbox"]["ok"] is False and "setting up uid map" in checks["sandbox"]["detail"]
    assert checks["apparmor"]["ok"] is False
    assert checks["apparmor"]["detail"].startswith("kernel.apparmor_restrict_unprivileged_userns = 1")
    assert checks["apparmor"]["fix"].startswith("sudo sysctl -w kernel.apparmor_restrict_unprivileged_userns=0")
    text = cli(tmp_path, "doctor").out
    assert "fix: sudo sysctl -w kernel.apparmor_restrict_unprivileged_userns=0" in text


@pytest.mark.parametrize("value", ["0", None], ids=["lifted", "no-such-switch"])
def test_without_the_restriction_doctor_does_not_blame_apparmor(tmp_path: Path, cli, refused_bwrap,
                                                               monkeypatch: pytest.MonkeyPatch, value: str | None):
    if value is None:
        monkeypatch.setattr(doctor, "APPARMOR_USERNS", tmp_path / "absent")
    else:
        restriction(tmp_path, monkeypatch, value)
    result = cli(tmp_path, "doctor", "--json")
    names = [check["name"] for check in json.loads(result.out)["checks"]]
    assert "sandbox" in names and "apparmor" not in names


def test_a_bubblewrap_that_is_not_installed_is_not_blamed_on_apparmor(tmp_path: Path, cli,
                                                                     monkeypatch: pytest.MonkeyPatch):
    without_bubblewrap(monkeypatch)
    restriction(tmp_path, monkeypatch, "1")
    names = [check["name"] for check in json.loads(cli(tmp_path, "doctor", "--json").out)["checks"]]
    assert "apparmor" not in names
