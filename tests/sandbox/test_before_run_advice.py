"""Where a run has no seat world and the checkout's environment points into it, the advice names
what gives this machine the world: bubblewrap where it is missing, the kernel setting where
bubblewrap runs but user namespaces are refused (Ubuntu 24.04's AppArmor), `mode = "auto"` where
the person turned the world off. Never "install bubblewrap" to a machine that has it."""

from __future__ import annotations

from pathlib import Path

import pytest

from sandbox_machines import refusing_user_namespaces, without_bubblewrap
from failres.config.loading import parse_config
from failres.sandbox import probe
from failres.sandbox.before_run import notices_before_run


def checkout(tmp_path: Path) -> Path:
    """A checkout whose `.venv` has an editable install of its own `src/`."""
    top = tmp_path / "project"
    (top / "src" / "pkg").mkdir(parents=True)
    (top / "src" / "pkg" / "__init__.py").write_text("")
    site = top / ".venv" / "lib" / "python3.11" / "site-packages"
    site.mkdir(parents=True)
    (site / "pkg.pth").write_text(f"{top / 'src'}\n")
    return top


def advice(top: Path, mode: str) -> str:
    config = parse_config(f'[sandbox]\nmode = "{mode}"\n', "cfg.toml")
    lines = [line for line in notices_before_run(config, top) if line.startswith("the environment points")]
    assert len(lines) == 1, lines
    assert "pkg.pth puts" in lines[0]
    return lines[0]


def test_without_bubblewrap_the_advice_is_to_install_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    without_bubblewrap(monkeypatch)
    said = advice(checkout(tmp_path), "auto")
    assert said.endswith("to run the gate in the seat world instead: install it: apt-get install bubblewrap "
                         "(dnf install bubblewrap, pacman -S bubblewrap)")


def test_where_user_namespaces_are_refused_the_advice_is_the_kernel_setting(tmp_path: Path,
                                                                           monkeypatch: pytest.MonkeyPatch):
    refusing_user_namespaces(tmp_path / "bin", monkeypatch)
    fix = advice(checkout(tmp_path), "auto").split("to run the gate in the seat world instead: ")[1]
    assert fix == probe.namespace_cause(probe._userns_sysctls())[1]
    assert "sysctl" in fix and "install" not in fix


def test_with_the_world_turned_off_the_advice_is_to_turn_it_on(tmp_path: Path):
    said = advice(checkout(tmp_path), "off")
    assert said.endswith('to run the gate in the seat world instead: set [sandbox] mode = "auto"')
