"""The build step pyproject.toml cannot declare: files generated from the command line.

`git failres --help` is `git help failres` to git, which opens the manual page
`git-failres(1)`; `git failres <TAB>` needs the completion scripts. Both are made
from the installed commands themselves while the package is built (see
failres/cli/manpage_build.py), so they describe exactly the version installed, and are
installed as data under the prefix: `share/man/man1`, where man finds them next
to a venv's or pipx's `bin`, and the shells' completion directories.
"""

from __future__ import annotations

import sys
from pathlib import Path

from setuptools import Command, setup
from setuptools.command.build import build
from setuptools.command.editable_wheel import editable_wheel

HERE = Path(__file__).resolve().parent
GENERATED = Path("build") / "generated"  # relative: data_files are named from the project root


class build_generated(Command):
    description = "generate the manual page and completion scripts from the command line"
    user_options: list = []

    def initialize_options(self) -> None:
        pass

    def finalize_options(self) -> None:
        pass

    def run(self) -> None:
        sys.path.insert(0, str(HERE))  # the package being built, not one installed elsewhere
        from failres.cli.manpage_build import write_generated

        for path in write_generated(HERE / GENERATED, self.distribution.get_version()):
            print(f"generated {path.relative_to(HERE)}")


class build_with_generated(build):
    sub_commands = [("build_generated", None), *build.sub_commands]


class editable_wheel_with_data(editable_wheel):
    """`pip install -e .` installs the manual page too.

    setuptools' editable wheel means to install data files "as non editable", but
    asks the distribution for `has_data`, which does not exist (`has_data_files`
    does), so it never does; this asks the right question.
    """

    def _run_install(self, category: str) -> None:
        if category == "data" and self.distribution.has_data_files():
            self.run_command("install_data")
            return
        super()._run_install(category)


def _data_files() -> list[tuple[str, list[str]]]:
    sys.path.insert(0, str(HERE))
    from failres.cli.manpage_build import installed

    return [(where, [str(GENERATED / name)]) for where, name in installed()]


setup(
    cmdclass={"build": build_with_generated, "build_generated": build_generated,
              "editable_wheel": editable_wheel_with_data},
    data_files=_data_files(),
)
