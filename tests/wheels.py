"""This project's wheel, built and installed the way a person's pip does, without the network.

Built without the isolated build environment (the test venv's setuptools) and installed
with no index into a fresh venv whose dependencies come from the test run's own
site-packages: failres itself is the wheel's copy, never this checkout.
"""

from __future__ import annotations

import os
import subprocess
import sys
import sysconfig
from pathlib import Path

from conftest import ROOT


def build_wheel(wheels: Path) -> Path:
    """The wheel of this checkout, written into `wheels`."""
    proc = subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation",
                           "--no-index", "-w", str(wheels), str(ROOT)], capture_output=True, text=True, timeout=300,
                          env={**os.environ, "SOURCE_DATE_EPOCH": "1764460800"})
    assert proc.returncode == 0, proc.stderr[-3000:]
    [wheel] = wheels.glob("failres-*.whl")
    return wheel


def install_in_fresh_venv(wheel: Path, venv: Path) -> Path:
    """A new venv at `venv` with `wheel` installed; returns its site-packages."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
    site = venv / "lib" / f"python{sys.version_info.major}.{sys.version_info.minor}" / "site-packages"
    (site / "deps.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    proc = subprocess.run([sys.executable, "-m", "pip", "--python", str(venv / "bin" / "python"), "install", "-q",
                           "--no-deps", "--no-index", str(wheel)], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return site
