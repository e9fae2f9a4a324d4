"""The experiments, in the book's order: one explicit list, imported on demand.

Each name is a module of this package that holds ``EXPERIMENT`` (an
:class:`~gillab.measure.protocol.Experiment`): what a sample is, its parameters and points, how
one is taken.  How its chapter reads the samples is the module of the same name in
:mod:`gillab.chapters`; nothing here imports it.  Families share a module: ``echo`` (the echo
server and its client, for convoy, switch_interval, affinity, data_race and fib_server).

Adding a chapter = a workload (``measure/workloads/<name>.py``), a module here and its name below,
a module in ``gillab/chapters/`` (its ``ANALYSIS``), a text notebook (``notebooks/NN_<name>.md``, NN
its place below), a profile table in ``profiles.toml``, its claims in
``data/reference/claims.csv`` (and the published tables they derive from); the table of contents
is generated from this list and the README and introduction are checked against it.
"""
from __future__ import annotations

import importlib

from ..profiles import ParameterError

NAMES = ("countdown", "sha256", "convoy", "switch_interval", "affinity", "data_race", "ccbench",
         "st_loop", "file_io", "primes", "flask_k6", "fib_server", "thread_memory", "stall",
         "b2_download")

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


def waits(name: str, p: dict, point: dict) -> float:
    """The seconds a sample of ``name`` at ``point`` spends waiting out its protocol (a counting
    window, a warm-up, a load tool's duration), which a slower machine does not lengthen: its
    module's ``waits(p, point)``, 0 for a chapter whose samples last as long as their work.

    Only the forecast of a run reads it (:mod:`gillab.judge.budget`): it lives beside the
    experiment, outside the class, so that the code key (:mod:`gillab.measure.codekey`) never
    reads it."""
    fn = getattr(importlib.import_module(f"{__name__}.{known(name)}"), "waits", None)
    return float(fn(p, point)) if fn is not None else 0.0
