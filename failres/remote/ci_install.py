"""How a CI job installs failres: a pinned source a CI machine can reach, or a refusal.

`pip install failres` installs whatever a package index calls failres, and no index
holds this project under that name: the job would fail, or install a stranger's package
into a job that holds a write token and an API key. So the install is the person's
(`git failres ci --install COMMAND`), or the source this failres was installed from when
that is one a CI machine can fetch by itself, pinned: a git URL at the commit pip
recorded, or an archive URL with its hash (pip's `direct_url.json`, PEP 610). An install
from a local path (editable or not), from an index, or from a URL carrying a password is
refused with the option to use instead: failres cannot tell what the job should fetch.
"""

from __future__ import annotations

import json
import re
import shlex
from urllib.parse import urlsplit

from failres.errors import UsageError

_REACHABLE = ("https", "http", "ssh", "git")
_HINT = ("name the install: --install 'python -m pip install \"failres @ git+https://HOST/OWNER/failres@COMMIT\"' "
         "(or a wheel's URL)")
# A requirement naming failres from an index (failres, failres==0.2, failres[test]>=1): see the docstring.
_BY_NAME = re.compile(r"^failres(\[[^\]]*\])?\s*([<>=!~]=?.*)?$", re.IGNORECASE)
# A requirement given where a command belongs: "failres @ URL", "failres[test] @ URL".
_REQUIREMENT = re.compile(r"^failres(\[[^\]]*\])?\s*@\s*\S+$", re.IGNORECASE)


def install_command(given: str | None) -> str:
    """The install a workflow runs: `given` (`--install`), unless it names failres from an
    index; else the pinned source this failres came from."""
    if given is None:
        return install_from_direct_url(installed_direct_url())
    refuse_install_by_name(given)
    return given


def installed_direct_url() -> str | None:
    """The text of this failres's `direct_url.json`; None when pip recorded none.

    Run from a source checkout, its `failres.egg-info` (which records no URL) may come
    first on the path: the installed distribution that recorded one is the answer.
    """
    from importlib.metadata import distributions

    for found in distributions(name="failres"):
        text = found.read_text("direct_url.json")
        if text is not None:
            return text
    return None


def install_from_direct_url(text: str | None) -> str:
    """The pinned install command for the source `text` (a `direct_url.json`) names; UsageError if none."""
    record = _record(text)
    url = record.get("url") if isinstance(record.get("url"), str) else ""
    parts = urlsplit(url)
    if not url or parts.scheme == "file" or parts.scheme not in _REACHABLE:
        where = f" from {url}" if url else ""
        msg = f"this failres was installed{where}, which a CI machine cannot fetch: say how a job installs it"
        raise UsageError(msg, hint=_HINT)
    if parts.password or (parts.username and parts.scheme in ("http", "https")):
        msg = "this failres was installed from a URL with credentials in it: they are not written into a workflow"
        raise UsageError(msg, hint=_HINT)
    vcs = record.get("vcs_info")
    subdirectory = record.get("subdirectory")
    fragment = f"#subdirectory={subdirectory}" if isinstance(subdirectory, str) and subdirectory else ""
    if isinstance(vcs, dict):
        commit = vcs.get("commit_id")
        if vcs.get("vcs") != "git" or not isinstance(commit, str) or not re.fullmatch(r"[0-9a-f]{40}|[0-9a-f]{64}", commit):
            msg = f"this failres was installed from {url} with no git commit recorded: it cannot be pinned"
            raise UsageError(msg, hint=_HINT)
        return _pip(f"failres @ git+{url}@{commit}{fragment}")
    archive = record.get("archive_info")
    hashes = archive.get("hashes") if isinstance(archive, dict) else None
    if isinstance(hashes, dict) and isinstance(hashes.get("sha256"), str):
        return _pip(f"failres @ {url}#sha256={hashes['sha256']}")
    msg = f"this failres was installed from {url} with no hash recorded: it cannot be pinned"
    raise UsageError(msg, hint=_HINT)


def _record(text: str | None) -> dict:
    if text is None:
        msg = "this failres was installed from a package index or is run from a checkout: failres cannot tell where a CI job gets it"
        raise UsageError(msg, hint=_HINT)
    try:
        record = json.loads(text)
    except ValueError:
        record = None
    if not isinstance(record, dict):
        msg = "this failres's direct_url.json is not a JSON object: failres cannot tell where a CI job gets it"
        raise UsageError(msg, hint=_HINT)
    return record


def _pip(requirement: str) -> str:
    return f"python -m pip install {shlex.quote(requirement)}"


def refuse_install_by_name(command: str) -> None:
    """UsageError when `--install` names failres from a package index (the name is no one's here)."""
    try:
        words = shlex.split(command)
    except ValueError as error:
        msg = f"--install {command!r} is no shell command: {error}"
        raise UsageError(msg) from None
    if not words:
        msg = "--install is empty: name the command a job installs failres with"
        raise UsageError(msg, hint=_HINT)
    if _REQUIREMENT.match(command.strip()):
        # A requirement is what pip reads, not what a job's shell runs: as a step it fails at once.
        msg = (f"--install {command!r} is a requirement, not a command: a job runs it in a shell; "
               f"write --install {shlex.quote(_pip(command.strip()))}")
        raise UsageError(msg)
    after_install = words[words.index("install") + 1:] if "install" in words else []
    if any(_BY_NAME.match(word) for word in after_install):
        msg = (f"--install {command!r} installs failres by name from a package index, which holds no failres "
               "of this project: name a pinned source")
        raise UsageError(msg, hint=_HINT)
