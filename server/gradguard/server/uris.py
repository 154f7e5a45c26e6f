"""Document URIs to file system paths."""

from __future__ import annotations

from pygls.uris import to_fs_path


def path_of(uri: str) -> str | None:
    """The file system path of a document (a notebook cell's: its notebook's), if any."""
    if uri.startswith("vscode-notebook-cell:"):
        uri = "file:" + uri.split(":", 1)[1].split("#", 1)[0]
    try:
        return to_fs_path(uri) if uri.startswith("file:") else None
    except Exception:  # a malformed URI: no path, no pyproject
        return None
