"""A dispatch's agent transcripts, found without following a link, and what they are worth.

Where each CLI leaves its transcript is `agents.homes.transcript_places` (pure): under
the dispatch's moved config dir, or at the file aider's command line names. All of it
is the seat's to write. A seat once planted `projects/x -> ~/.claude/projects/<another
project>` in its config dir; collection went through the link, the person's sessions of
that other project were kept as this dispatch's transcripts, and `reflect` put that
project's words into this store. So every directory is listed, and every file opened,
from the dispatch's trusted root without following a link at any component
(`files.files_beneath`), and what is found is read the same way when it is kept.

What is found is never a person's evidence: the seat wrote it, whatever it says it is (a
seat-written "interactive" transcript once became `clean` evidence and a proposed rule).
`lessons` reads every transcript kept from a dispatch as `derived` (see
`knowledge.learning`).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path, PurePath

from failres.agents.homes import TranscriptPlace
from failres.hostside import files

# An agent's transcript can be long; what the dispatch log keeps of one file is bounded too.
MAX_TRANSCRIPT_BYTES = 8 * 1024 * 1024


def find_transcripts(places: Sequence[TranscriptPlace], *, root: Path | None = None) -> tuple[tuple[str, Path], ...]:
    """(agent, path) of every transcript file present at `places`, in a stable order.

    A place below `root` (where failres made the task's dispatches) is walked from
    `root`; one elsewhere (a config dir the person's binding names) from the place itself.
    Either way no link below the starting point is followed.
    """
    found = []
    for place in places:
        start = files.relative_below(place.directory, root)
        base = root if start is not None else place.directory
        found += [(place.agent, Path(base, relative)) for relative in files.files_beneath(base, start, place.pattern)]
    return tuple(found)


def read_transcript(path: Path, *, root: Path | None = None) -> bytes:
    """A found transcript's bytes (bounded), read again without a link on the way (`beneath.Planted`)."""
    relative = files.relative_below(path, root)
    if relative is None:
        return files.read_beneath(path.parent, PurePath(path.name), MAX_TRANSCRIPT_BYTES)
    return files.read_beneath(root, relative, MAX_TRANSCRIPT_BYTES)
