"""What the build installs beside the package: the manual page and the completion scripts.

Called by setup.py while a wheel (or an editable install) is built, so the manual
page always describes the commands of the very version being installed.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

# (where under the installation prefix, file name): man finds `share/man` next to
# the `bin` of a venv; bash-completion looks in `share/bash-completion/completions`
# of every prefix on PATH (2.12 and later; 2.11 reads $XDG_DATA_DIRS, which a `pip install
# --user` prefix is under); zsh reads `share/zsh/site-functions` when it is on $fpath;
# fish reads `share/fish/vendor_conf.d` under $XDG_DATA_DIRS and the person's data directory.
INSTALLED = (
    ("share/man/man1", "git-failres.1"),
    ("share/bash-completion/completions", "git-failres"),
    ("share/zsh/site-functions", "_git-failres"),
    ("share/fish/vendor_conf.d", "git-failres.fish"),
)


def command_pages() -> tuple[str, ...]:
    """The file name of each command's own page (`git-failres-run.1`): `man git-failres-lessons`
    opens one command's page, as git-lfs ships its own."""
    from failres.cli.help_cmds import description
    from failres.clidoc.roff import page_name

    return tuple(f"{page_name(c)}.1" for c in description().visible_subcommands())


def installed() -> tuple[tuple[str, str], ...]:
    """Everything the build installs: `INSTALLED` and the command pages beside the main one."""
    return (*INSTALLED, *(("share/man/man1", name) for name in command_pages()))


def build_date(environ: dict[str, str] | None = None) -> str:
    """The page's date: SOURCE_DATE_EPOCH's when set (reproducible builds), else today's (UTC)."""
    env = os.environ if environ is None else environ
    epoch = env.get("SOURCE_DATE_EPOCH")
    seconds = int(epoch) if epoch and epoch.isdigit() else int(time.time())
    return time.strftime("%Y-%m-%d", time.gmtime(seconds))


def generated_files(version: str, date: str) -> dict[str, str]:
    """File name -> content of everything `installed` lists."""
    from failres.cli.help_cmds import description
    from failres.clidoc.completion import bash_script, fish_script, zsh_script
    from failres.clidoc.roff import page_name, render_command_page, render_manpage

    root = description()
    pages = {f"{page_name(c)}.1": render_command_page(c, version=version, date=date)
             for c in root.visible_subcommands()}
    return {
        "git-failres.1": render_manpage(root, version=version, date=date),
        **pages,
        "git-failres": bash_script(),
        "_git-failres": zsh_script(),
        "git-failres.fish": fish_script(),
    }


def write_generated(directory: Path, version: str) -> list[Path]:
    directory.mkdir(parents=True, exist_ok=True)
    written = []
    for name, text in generated_files(version, build_date()).items():
        path = directory / name
        path.write_text(text, encoding="utf-8")
        written.append(path)
    return written
