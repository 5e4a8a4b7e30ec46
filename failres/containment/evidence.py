"""Where the versions a seat left are kept when its tamper is undone.

Undoing tamper copies what the seat wrote (a changed config, a planted file in the
checkout) under `<git dir>/failres/tamper/<slug>-<task>-<time>-<random>/` before
putting the person's version back. That directory's name must not be guessable: a
seat that knew it could make it in advance, with a link inside pointing at the
person's `.git`, and the copy would land there. So the name ends in random bytes,
the directory is made with `mkdir` (which fails on anything already there), and
every copy into it goes through `beneath`, as a new file, a symlink copied as a
symlink.
"""

from __future__ import annotations

import logging
import secrets
import time
from pathlib import Path, PurePath

from failres import beneath

log = logging.getLogger("failres.tamper")

TAMPER_DIR = PurePath("failres", "tamper")


class Evidence:
    """One undo's evidence directory, made the first time something is kept in it."""

    def __init__(self, git_dir: Path, slug: str, task: str) -> None:
        self.git_dir = git_dir
        self.prefix = f"{slug}-{task}-{time.strftime('%Y%m%dT%H%M%S')}"
        self.relative: PurePath | None = None

    @property
    def path(self) -> Path:
        """Where the evidence is (or would be): for messages."""
        return self.git_dir / (self.relative or TAMPER_DIR / self.prefix)

    def keep(self, source: Path, inside: str | PurePath) -> str | None:
        """Copy what is at `source` to `inside` the evidence; a problem to report, or None.

        Nothing at `source` is fine (there is nothing to keep).
        """
        try:
            directory = self._directory()
            beneath.copy_in(source, self.git_dir, directory / inside)
        except FileNotFoundError:
            return None
        except (OSError, ValueError) as error:
            log.warning("failres: the seat's version of %s was not kept: %s", source, error)
            return f"the seat's version of {source} could not be kept as evidence: {error}"
        return None

    def _directory(self) -> PurePath:
        if self.relative is None:
            for _ in range(8):
                candidate = TAMPER_DIR / f"{self.prefix}-{secrets.token_hex(4)}"
                try:
                    beneath.make_new_dir(self.git_dir, candidate)
                except FileExistsError:
                    continue
                self.relative = candidate
                break
            else:
                msg = "no fresh evidence directory could be made"
                raise beneath.Planted(msg)
        return self.relative
