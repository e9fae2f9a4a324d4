"""How each chapter reads its samples: one module per experiment of
:mod:`gillab.measure.experiments`, with the same name, holding ``ANALYSIS`` (an
:class:`~gillab.judge.analysis.Analysis`: summary, claims, figures, explorer, checked sentences).

A chapter module reads measuring (the experiment's constants), judging (claims, statistics) and,
inside its figure functions, presenting (plots, widgets); judging and presenting reach a chapter
only through this package's registry, :func:`of` (by name), never by importing a chapter module:
the layer test (``tests/test_protocol.py``) draws the registry's edges to every chapter it names.  No chapter
imports another: what several share is a family module here (``over_threads`` for countdown and sha256,
``echo`` for the echo server's chapters, ``doc002`` and ``doc003`` for those documents' chapters).
"""
from __future__ import annotations

import importlib


def of(name: str):
    """How the chapter ``name`` reads its samples: the ``ANALYSIS`` (an
    :class:`~gillab.judge.analysis.Analysis`) of this package's module of that name, one of
    :data:`gillab.measure.experiments.NAMES`, imported when first asked."""
    from ..measure.experiments import known

    return importlib.import_module(f"{__name__}.{known(name)}").ANALYSIS
