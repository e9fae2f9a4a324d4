"""How the st_loop chapter reads its samples: its summary, claims, figures, explorer
and checked sentences (what it measures: :mod:`gillab.measure.experiments.st_loop`)."""
from __future__ import annotations

from ..judge.analysis import ModuleAnalysis
from ..judge.prose import words as chapter_words
from . import doc002


def prose(df) -> list:
    """The chapter's sentences about why ours differ, each checked against ``df``: each ratio is
    the verdicts' (:func:`doc002.claims`: free-threaded / GIL time, paired by interleaved repeat),
    and a sentence holds only where its whole 95% interval says it.  "Pays a single-thread cost"
    says what claim st_loop/ft_slower says ("worse performance": a change) and reads its line;
    "within 5%" is the words' own number."""
    from ..measure import interpreters
    from ..judge import claims
    from ..judge.prose import at_least, interval, inverted, settle

    said = chapter_words("st_loop")     # the words cell of its text

    rows = doc002.claims(df, "st_loop")
    pair = next((r["measured"] for r in rows if r["table"] == "pyconjp2025_observations"), {})
    out = []
    gil, free = interpreters.today_pair()       # builds.toml [pairs], today's: 3.13.5 and 3.13.5t
    twin = interpreters.twin_of(free)
    if twin and doc002.pair_label((twin, free)) in pair:
        # the verdicts' ratio is free / twin: the sentence's twin / free is its inverse
        m = inverted(pair[doc002.pair_label((twin, free))])
        out.append(said.check(
            "uncontested-gil-costs-almost-nothing",
            settle([m], lambda lo, hi: 0.95 <= lo and hi <= 1.05, lambda lo, hi: hi < 0.95 or lo > 1.05),
            said.fill("twin-over-free-evidence", twin=twin, free=free, ratio=interval(m, ".3f")),
            twin=twin, free=free))
    if doc002.pair_label((gil, free)) in pair:
        m = pair[doc002.pair_label((gil, free))]
        worse, _ = claims.line("st_loop/ft_slower")     # at least 1.1: the claim's "worse performance"
        out.append(said.check(
            "free-threaded-pays-one-thread-cost",
            at_least([m], worse),
            said.fill("free-over-gil-evidence", free=free, gil=gil, ratio=interval(m, ".3f"), line=f"{worse:g}"),
            why=said["why-free-threading-costs"]))
    return out


ANALYSIS = ModuleAnalysis(__name__, shared=doc002, extras=("ratio_figure",))
