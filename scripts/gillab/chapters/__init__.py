"""How each chapter reads its samples: one module per experiment of
:mod:`gillab.measure.experiments`, with the same name, holding ``ANALYSIS`` (an
:class:`~gillab.judge.analysis.Analysis`: summary, claims, figures, explorer, checked sentences).

A chapter module reads measuring (the experiment's constants), judging (claims, statistics) and,
inside its figure functions, presenting (plots, widgets); judging and presenting reach a chapter
only by its name, through :func:`gillab.judge.analysis.of`, never by importing it.  No chapter
imports another: what several share is a family module here (``over_threads`` for countdown and sha256,
``echo`` for the echo server's chapters, ``doc002`` and ``doc003`` for those documents' chapters).
"""
