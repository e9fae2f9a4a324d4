"""How the primes chapter reads its samples: its summary, claims, figures, explorer
and checked sentences (what it measures: :mod:`gillab.measure.experiments.primes`)."""
from __future__ import annotations

from ..judge.analysis import ModuleAnalysis
from ..judge.prose import words as chapter_words
from . import doc002


def prose(df) -> list:
    """The chapter's sentences about why ours differ, each checked against ``df``."""
    from ..judge.prose import Check, cores_of, gil_by_condition, ok_rows

    said = chapter_words("primes")     # the words cell of its text

    ok = ok_rows(df)
    med = ok.groupby(["condition", "mode"])["seconds"].median()
    gil_on = gil_by_condition(df)
    speed = {c: float(med[(c, "single")] / med[(c, "threads")]) for c in gil_on
             if (c, "single") in med.index and (c, "threads") in med.index}
    out = []
    gil = {c: v for c, v in speed.items() if gil_on[c]}
    if gil:
        out.append(Check("With the GIL, the pool is no faster than one thread, as the document found",
                         all(v <= 1.05 for v in gil.values()),
                         "speedup of the pool over one thread: " + "; ".join(f"{c} {v:.2f}" for c, v in gil.items())))
    free = {c: v for c, v in speed.items() if not gil_on[c]}
    cores = cores_of(df, "primes")
    if free and cores:
        out.append(Check(f"Without the GIL the pool is faster, but its speedup is bounded by the {cores} cores of "
                         "the machine that measured it",
                         all(1.2 <= v <= cores * 1.05 for v in free.values()),
                         "speedup of the pool over one thread: " + "; ".join(f"{c} {v:.2f}" for c, v in free.items()),
                         said["document-machine-had-more"]))
    return out


ANALYSIS = ModuleAnalysis(__name__, shared=doc002, extras=("ratio_figure",))
