"""How the primes chapter reads its samples: its summary, claims, figures, explorer
and checked sentences (what it measures: :mod:`gillab.measure.experiments.primes`)."""
from __future__ import annotations

from ..judge.analysis import ModuleAnalysis
from ..judge.prose import words as chapter_words
from . import doc002


def prose(df) -> list:
    """The chapter's sentences about why ours differ, each checked against ``df``: the speed-up of
    the pool over one thread is the inverse of the verdicts' time ratio (the conclusions of
    claims.csv, ``primes/conclusion/...``: pool / one thread, same build), and a sentence holds only
    where its whole 95% interval says it."""
    from ..judge.prose import cores_of, gil_by_condition, inverted, listed, settle

    said = chapter_words("primes")     # the words cell of its text

    rows = {r["claim_id"]: r["measured"] for r in ANALYSIS.claims(df)}
    gil_on = gil_by_condition(df)
    speed = {c: inverted(m) for c, m in rows.get("primes/conclusion/gil_threads_no_gain", {}).items() if c in gil_on}
    out = []

    def shown(got):
        return listed(said["pool-speedup-evidence"], got.items())
    gil = {c: m for c, m in speed.items() if gil_on[c]}
    if gil:
        out.append(said.check("gil-pool-no-faster",
                              settle(gil.values(), lambda lo, hi: hi <= 1.05, lambda lo, hi: lo > 1.05),
                              shown(gil)))
    free = {c: m for c, m in speed.items() if not gil_on[c]}
    cores = cores_of(df, "primes")
    if free and cores:
        out.append(said.check("free-threaded-pool-bounded-by-cores",
                              settle(free.values(), lambda lo, hi: 1.2 <= lo and hi <= cores * 1.05,
                                     lambda lo, hi: hi < 1.2 or lo > cores * 1.05),
                              shown(free), why=said["why-the-documents-speedup-is-out-of-reach"], cores=cores))
    return out


ANALYSIS = ModuleAnalysis(__name__, shared=doc002, extras=("ratio_figure",))
