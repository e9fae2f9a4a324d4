"""Chapters as text.

Each chapter is a MyST Markdown notebook, ``notebooks/<NN>_<name>.md`` (jupytext's ``md:myst``
format: prose as Markdown, code in ``{code-cell}`` blocks, the parameters cell tagged
``parameters`` as papermill expects), numbered in the book's order and named as the registry
names the chapter.  A diff of a chapter shows the lines that changed, not JSON.

Papermill and JupyterLab open ``.ipynb`` files, so each text notebook has an ``.ipynb`` beside it
(ignored by git), written from the text by :func:`ipynb_of` where it is missing or older than the
text, never the other way round: a reader's edits in JupyterLab stay in the ``.ipynb`` until the
text changes.  ``gillab notebooks`` (any ``make`` target) writes them all; the book reads the text
itself.
"""
from __future__ import annotations

import os
from pathlib import Path

from ..paths import notebooks_dir

FORMAT = "md:myst"


def read(path: Path | str):
    """The text notebook at ``path`` as an nbformat notebook."""
    import jupytext

    return jupytext.read(Path(path), fmt=FORMAT)


def for_papermill(path: Path | str):
    """The text notebook at ``path`` as papermill's ``load_notebook_node`` loads an ``.ipynb``:
    upgraded, with its ``papermill`` metadata and every cell's ``tags``."""
    import nbformat
    from papermill.version import version

    nb = nbformat.v4.upgrade(read(path))
    nb.metadata.setdefault("papermill", {"default_parameters": {}, "parameters": {},
                                         "environment_variables": {}, "version": version})
    for cell in nb.cells:
        cell.metadata.setdefault("tags", [])
        cell.metadata.setdefault("papermill", {})
    return nb


def write_ipynb(nb, out: Path) -> Path:
    """Write ``nb`` to ``out`` through a temporary file and an atomic replace."""
    import nbformat

    tmp = out.with_name(f".{out.name}.tmp")
    nbformat.write(nb, tmp)
    os.replace(tmp, out)
    return out


def ipynb_name(notebook: str) -> str:
    """The file name of the ``.ipynb`` of text notebook ``notebook`` (beside it, or executed in
    book/generated/)."""
    return Path(notebook).stem + ".ipynb"


def ipynb_of(path: Path | str) -> Path:
    """The ``.ipynb`` beside the text notebook ``path``, written from it where missing or older
    than the text."""
    src = Path(path)
    out = src.with_name(ipynb_name(src.name))
    if not out.exists() or out.stat().st_mtime_ns < src.stat().st_mtime_ns:
        write_ipynb(read(src), out)
    return out


def sources() -> list[Path]:
    """Every text notebook, chapters and appendix and the live explorer."""
    return sorted(notebooks_dir().glob("*.md"))


def write_all() -> list[Path]:
    return [ipynb_of(p) for p in sources()]
