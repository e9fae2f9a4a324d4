"""The experiments, in the book's order: read from the chapters' notebooks, imported on demand.

Each name is a module of this package that holds ``EXPERIMENT`` (an
:class:`~gillab.measure.protocol.Experiment`): what a sample is, its parameters and points, how
one is taken.  How its chapter reads the samples is the module of the same name in
:mod:`gillab.chapters`; nothing here imports it.  Families share a module: ``echo`` (the echo
server and its client, for convoy, switch_interval, affinity, data_race and fib_server).

The registry is not typed anywhere: :data:`NAMES` is every text notebook ``notebooks/NN_<name>.md``
with ``NN`` below :data:`APPENDIX_FROM` whose ``<name>`` is a module of this package, in the order of
their ``NN`` (:func:`chapter_notebooks`).  Every list of chapters is made from it: the table of
contents, the README's chapter table and the introduction's list (written by ``gillab notebooks`` and
``gillab book``, :mod:`gillab.present.book`; the tests check the committed files are what they
write), the book's pages, the plan and the verdicts.

Adding a chapter = five files:

1. a workload, ``measure/workloads/<name>.py`` (stdlib only, one fresh process a sample);
2. its experiment, a module here, ``<name>.py``, holding ``EXPERIMENT`` and, where ``profiles.toml``
   gets no ``[<name>.<profile>]`` tables, ``PROFILES``: the smoke, default, verdicts and seed tables
   it falls back to, as literal data beside the class (:func:`gillab.measure.profiles.tables`);
3. how its chapter reads the samples, ``gillab/chapters/<name>.py``, holding ``ANALYSIS``;
4. its text notebook, ``notebooks/NN_<name>.md``: ``NN`` is its place in the book, and its front
   matter's ``gillab: tagline:`` is the line the README and the introduction give it;
5. its claims: rows of ``data/reference/claims.csv`` (and the table of published numbers they
   derive from, where they read one).
"""
from __future__ import annotations

import importlib
import math
from pathlib import Path

from ...paths import notebooks_dir
from ..profiles import ParameterError

# notebooks numbered from here on are the appendix (98_machines, 99_verdicts), no experiment's
APPENDIX_FROM = 90


def chapter_notebooks(folder: Path | None = None) -> dict[str, str]:
    """Every chapter -> its text notebook's file name, in the book's order: each
    ``NN_<name>.md`` of ``folder`` (the notebooks) with ``NN`` below :data:`APPENDIX_FROM` whose
    ``<name>`` is a module of this package, ordered by ``NN`` (two notebooks of one number: by name;
    the tests refuse it)."""
    here = Path(__file__).resolve().parent
    found = []
    for path in (folder or notebooks_dir()).glob("[0-9][0-9]_*.md"):
        number, name = int(path.name[:2]), path.stem[3:]
        if number < APPENDIX_FROM and not name.startswith("_") and (here / f"{name}.py").is_file():
            found.append((number, name, path.name))
    return {name: notebook for _, name, notebook in sorted(found)}


NOTEBOOKS = chapter_notebooks()
NAMES = tuple(NOTEBOOKS)

# the book's parts: a document's number -> its caption
DOCUMENTS = {
    "000": "Document 000: Python behind the scenes #13",
    "001": "Document 001: Reworking the GIL (Pitrou, 2009)",
    "002": "Document 002: Goodbye GIL (free-threaded Python)",
    "003": "Document 003: A Tale of Two Concurrencies (Beazley)",
    "004": "Document 004: Backblaze, GIL vs nogil downloads",
}


def known(name: str) -> str:
    """``name``, checked: one of :data:`NAMES`."""
    if name not in NAMES:
        raise ParameterError(f"unknown experiment {name!r}; known: {', '.join(NAMES)}")
    return name


def get(name: str):
    """The experiment ``name``: what it measures (an :class:`~gillab.measure.protocol.Experiment`)."""
    return importlib.import_module(f"{__name__}.{known(name)}").EXPERIMENT


def names() -> list[str]:
    return list(NAMES)


def notebook(name: str) -> str:
    """The file name of ``name``'s text notebook in ``notebooks/`` (``01_countdown.md``): where
    the registry found the chapter.  An experiment that names its ``notebook`` names this one
    (the tests check it)."""
    return NOTEBOOKS[known(name)]


def waits(name: str, p: dict, point: dict) -> float:
    """The seconds a sample of ``name`` at ``point`` spends waiting out its protocol (a counting
    window, a warm-up, a load tool's duration), which a slower machine does not lengthen: its
    module's ``waits(p, point)``, 0 for a chapter whose samples last as long as their work.

    Only the forecast of a run reads it (:mod:`gillab.judge.budget`): it lives beside the
    experiment, outside the class, so that the code key (:mod:`gillab.measure.codekey`) never
    reads it."""
    fn = getattr(importlib.import_module(f"{__name__}.{known(name)}"), "waits", None)
    return float(fn(p, point)) if fn is not None else 0.0


def _numbers(row: dict) -> dict:
    """A stored row with each value that reads as a number read so (a row's values are text)."""
    out = {}
    for k, v in row.items():
        try:
            out[k] = float(v) if isinstance(v, str) and v.strip() else v
        except ValueError:
            out[k] = v
    return out


def waits_done(name: str, row: dict) -> float | None:
    """What a stored sample's row waited out (:func:`waits` of its own parameters and point); None
    where they do not say (a row of a chapter that changed its parameters since)."""
    typed = _numbers(row)
    try:
        v = waits(name, typed, typed)
    except (KeyError, TypeError, ValueError):
        return None
    return v if math.isfinite(v) and v >= 0 else None


def work(name: str, p: dict, point: dict) -> float | None:
    """A number a sample of ``name`` at ``point`` takes time in proportion to (the decrements it
    counts, the bytes it hashes): its module's ``work(p, point)``; None where the chapter declares
    none or ``p`` lacks what it reads.  A stored sample's row carries its parameters and its point,
    so ``work(name, row, row)`` is what that sample did.  The forecast reads it to time a point at
    sizes no campaign measured from samples at other sizes (:func:`gillab.judge.budget.timing`);
    outside the class, as :func:`waits`, so that the code key never reads it."""
    fn = getattr(importlib.import_module(f"{__name__}.{known(name)}"), "work", None)
    if fn is None:
        return None
    try:
        v = float(fn(p, point))
    except (KeyError, TypeError, ValueError):
        return None
    return v if math.isfinite(v) and v > 0 else None
