"""The installed evalframe version: one fact, read by the audit (provenance) and the writers (manifests)."""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version


def evalframe_version() -> str:
    """The installed evalframe version (``0+unknown`` when not installed).

    Examples
    --------
    >>> evalframe_version() != ""
    True
    """
    try:
        return version("evalframe")
    except PackageNotFoundError:
        return "0+unknown"
