"""Node projects as people have them: `calc` is a package of the project itself, and
`node_modules/calc` links to it in the person's checkout — made by `npm install` for npm
workspaces and for a `file:` dependency (a relative link), or by path (an absolute one, as
`npm link` leaves it). Each has a bug a fix must repair, and a test that requires `calc`
through node_modules, the way the person runs it. `npm` runs offline, with its cache, logs and
update check kept out of the person's home and off the network.
"""

from __future__ import annotations

import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest

from conftest import git

JS_BROKEN = "exports.add = (a, b) => a - b;\n"
JS_FIXED = "exports.add = (a, b) => a + b;\n"
JS_WRONG = "exports.add = (a, b) => a + b + 1;\n"
CALC_TEST = ("const { add } = require('calc');\n"
             "if (add(2, 3) !== 5) { console.log('FAIL add(2, 3) = ' + add(2, 3)); process.exit(1); }\n")
JS_TEST = CALC_TEST + "const pad = require('leftpad');\nconsole.log(pad('ok'));\n"
CALC_PACKAGE = '{"name": "calc", "version": "1.0.0", "main": "index.js"}\n'
# What every npm of a test is told: no registry, no update check, no audit; its cache in the test's home.
NPM_OFFLINE = {"npm_config_offline": "true", "npm_config_update_notifier": "false", "npm_config_audit": "false",
               "npm_config_fund": "false"}


@dataclass(frozen=True)
class NodeApp:
    """A node project's checkout and the package of its own that node_modules/calc links to."""

    top: Path
    package: str  # repository-relative, as failres names it ("node_modules/calc links to <package>")

    @property
    def file(self) -> str:
        """The file a fix of the bug edits."""
        return f"{self.package}/index.js"


def offline_npm(monkeypatch: pytest.MonkeyPatch, home: Path) -> None:
    """Every npm this test starts, failres's gates and setups too, stays offline and in `home`."""
    for name, value in NPM_OFFLINE.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("npm_config_cache", str(home / ".npm"))


def node_app(tmp_path: Path, shape, monkeypatch: pytest.MonkeyPatch) -> NodeApp:
    """`shape` built at tmp_path/app, its installs by npm offline; skipped without node (or npm)."""
    if shutil.which("node") is None:
        pytest.skip("node is not installed")
    offline_npm(monkeypatch, tmp_path)
    top = tmp_path / "app"
    top.mkdir()
    return NodeApp(top, shape(top))


def _npm_install(top: Path) -> None:
    if shutil.which("npm") is None:
        pytest.skip("npm is not installed")
    subprocess.run(["npm", "install", "--offline", "--no-audit", "--no-fund"], cwd=top, check=True,
                   capture_output=True)


def _commit(top: Path, message: str) -> None:
    git(top, "add", ".")
    git(top, "commit", "-q", "-m", message)


def workspaces_project(top: Path) -> str:
    """npm workspaces: `packages/calc` is a workspace; `npm install` links node_modules/calc to it."""
    (top / "packages" / "calc").mkdir(parents=True)
    git(top, "init", "-q", "-b", "main")
    (top / "package.json").write_text('{"name": "app", "private": true, "workspaces": ["packages/*"], '
                                      '"scripts": {"test": "node test.js"}}\n')
    (top / "packages" / "calc" / "package.json").write_text(CALC_PACKAGE)
    (top / "packages" / "calc" / "index.js").write_text(JS_BROKEN)
    (top / "test.js").write_text(CALC_TEST)
    (top / ".gitignore").write_text("node_modules/\n")
    _npm_install(top)
    _commit(top, "a workspace package with a bug")  # package-lock.json with it, as `npm ci` needs
    assert (top / "node_modules" / "calc").is_symlink()
    return "packages/calc"


def file_dependency_project(top: Path) -> str:
    """No workspaces: package.json names `"calc": "file:lib/calc"`, a directory of the repository,
    and `npm install` links node_modules/calc to it."""
    (top / "lib" / "calc").mkdir(parents=True)
    git(top, "init", "-q", "-b", "main")
    (top / "package.json").write_text('{"name": "app", "private": true, "dependencies": {"calc": "file:lib/calc"}, '
                                      '"scripts": {"test": "node test.js"}}\n')
    (top / "lib" / "calc" / "package.json").write_text(CALC_PACKAGE)
    (top / "lib" / "calc" / "index.js").write_text(JS_BROKEN)
    (top / "test.js").write_text(CALC_TEST)
    (top / ".gitignore").write_text("node_modules/\n")
    _npm_install(top)
    _commit(top, "an app with a file: dependency with a bug")
    assert (top / "node_modules" / "calc").is_symlink()
    return "lib/calc"


def linked_by_path_project(top: Path) -> str:
    """`lib/calc` linked from node_modules/ by absolute path into the checkout (as `npm link`
    leaves it), beside a package installed for real; nothing needs npm."""
    (top / "lib" / "calc").mkdir(parents=True)
    git(top, "init", "-q", "-b", "main")
    (top / "lib" / "calc" / "index.js").write_text(JS_BROKEN)
    (top / "lib" / "calc" / "package.json").write_text('{"name": "calc", "main": "index.js"}\n')
    (top / "test.js").write_text(JS_TEST)
    (top / "package.json").write_text('{"name": "app", "scripts": {"test": "node test.js"}}\n')
    (top / ".gitignore").write_text("node_modules/\n")
    _commit(top, "an app with a bug")
    modules = top / "node_modules"
    (modules / "leftpad").mkdir(parents=True)
    (modules / "leftpad" / "index.js").write_text("module.exports = (s) => '  ' + s;\n")
    (modules / "calc").symlink_to(top / "lib" / "calc")
    return "lib/calc"


def node_gate() -> str:
    return "\n".join(["[gates.tests]", 'command = ["node", "test.js"]', 'cwd = "worktree"', 'timeout = "60s"', ""])


NPM_GATE = "\n".join(["[gates.tests]", 'command = ["npm", "test"]', 'cwd = "worktree"', 'timeout = "60s"', ""])
