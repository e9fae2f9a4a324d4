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
    where its whole 95% interval says it.  "With the GIL the pool takes one thread's time, as the
    document found" says what primes/conclusion/gil_threads_no_gain says and reads its line (its
    time ratio within the row's band, printed as a speedup); "faster" reads the lexicon's a change
    and "bounded by the cores" the cores within the same's band, never a line of its own."""
    from ..judge import claims, lexicon
    from ..judge.prose import cores_of, gil_by_condition, inverted, listed, within

    said = chapter_words("primes")     # the words cell of its text

    rows = {r["claim_id"]: r["measured"] for r in ANALYSIS.claims(df)}
    gil_on = gil_by_condition(df)
    times = {c: m for c, m in rows.get("primes/conclusion/gil_threads_no_gain", {}).items() if c in gil_on}
    speed = {c: inverted(m) for c, m in times.items()}
    out = []

    def shown(got):
        return listed(said["pool-speedup-evidence"], got.items())
    gil = {c: m for c, m in speed.items() if gil_on[c]}
    if gil:
        # the claim's line is on the time ratio (pool / one thread); the words print it as a speedup
        low, high = claims.line("primes/conclusion/gil_threads_no_gain")
        out.append(said.check("gil-pool-no-faster",
                              within([times[c] for c in gil], low, high),
                              shown(gil), low=f"{1 / high:.2f}", high=f"{1 / low:.2f}"))
    free = {c: m for c, m in speed.items() if not gil_on[c]}
    cores = cores_of(df, "primes")
    if free and cores:
        faster = lexicon.rises("a change")                   # "faster": a speedup of at least 1.1
        bound = cores * (1 + lexicon.about("the same"))      # "bounded by the cores": give or take the same's band
        out.append(said.check("free-threaded-pool-bounded-by-cores",
                              within(free.values(), faster, bound),
                              shown(free), why=said["why-the-documents-speedup-is-out-of-reach"], cores=cores,
                              faster=f"{faster:g}", bound=f"{bound:g}"))
    return out


ANALYSIS = ModuleAnalysis(__name__, shared=doc002, extras=("ratio_figure",))
