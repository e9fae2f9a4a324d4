"""Where the project's files are: the repository, ``data/``, the notebooks and the book."""
from __future__ import annotations

import os
from pathlib import Path


def repo_root() -> Path:
    """The checkout this package lives in (``scripts/gillab`` -> top level)."""
    return Path(__file__).resolve().parents[2]


def data_dir() -> Path:
    """``$GILLAB_DATA`` if set (tests point it at a temporary directory), else ``data/``."""
    env = os.environ.get("GILLAB_DATA")
    return Path(env).expanduser() if env else repo_root() / "data"


def results_dir() -> Path:
    return data_dir() / "results"


def reference_dir() -> Path:
    """Published numbers live with the repository, whatever ``$GILLAB_DATA`` says."""
    return repo_root() / "data" / "reference"


def notebooks_dir() -> Path:
    return repo_root() / "notebooks"


# what the book serves at its root (Sphinx's html_extra_path, book/_extra): the CSV of each figure,
# and a copy of data/ under files/ (Sphinx leaves a top-level "data" out)
BOOK_FIGURES = Path("book") / "_extra" / "figures"
BOOK_FILES = Path("book") / "_extra" / "files"


def generated_dir() -> Path:
    """Where papermill writes the executed notebooks that the book renders."""
    return repo_root() / "book" / "generated"


def portable(obj):
    """The same data with this machine's home folder written ``~`` and the checkout ``<repo>``:
    stored files name builds by where they live relative to those, not by one machine's paths."""
    if isinstance(obj, str):
        root, home = str(repo_root()), os.path.expanduser("~")
        out = obj.replace(root, "<repo>")
        return out.replace(home + "/", "~/") if home not in ("/", "") else out
    if isinstance(obj, dict):
        return {k: portable(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [portable(v) for v in obj]
    return obj
