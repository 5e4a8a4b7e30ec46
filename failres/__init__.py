"""failres: failure resolution and learning for automated code changes, kept in git."""

from __future__ import annotations


def version() -> str:
    """The installed distribution's version (pyproject.toml's), as `--version` reports it.

    Read from the package metadata when asked rather than at import time: hooks import
    `failres` on every merge and should not pay for it.
    """
    from importlib import metadata

    try:
        return metadata.version("failres")
    except metadata.PackageNotFoundError:  # run from a source tree that was never installed
        return "0+unknown"


def __getattr__(name: str) -> str:
    if name == "__version__":
        return version()
    raise AttributeError(name)
