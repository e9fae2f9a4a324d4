"""How the st_loop chapter reads its samples: its summary, claims, figures, explorer
and checked sentences (what it measures: :mod:`gillab.measure.experiments.st_loop`)."""
from __future__ import annotations

from ..judge.analysis import ModuleAnalysis
from ..judge.prose import words as chapter_words
from . import doc002


def prose(df) -> list:
    """The chapter's sentences about why ours differ, each checked against ``df``."""
    from ..measure import interpreters
    from ..judge.prose import Check

    said = chapter_words("st_loop")     # the words cell of its text

    med = df[df["status"] == "ok"].groupby("condition")["seconds"].median()
    out = []
    gil, free = interpreters.today_pair()       # builds.toml [pairs], today's: 3.13.5 and 3.13.5t
    twin = interpreters.twin_of(free)
    if twin and {free, twin} <= set(med.index):
        r = float(med[twin] / med[free])
        out.append(Check(
            f"`{twin}` / `{free}` isolates the GIL on one binary: for a single thread, holding an uncontested "
            "GIL costs almost nothing (within 5%)",
            abs(r - 1) <= 0.05, f"{twin} / {free} = {r:.3f} (medians)"))
    if {gil, free} <= set(med.index):
        r = float(med[free] / med[gil])
        out.append(Check(
            "The free-threaded build pays a single-thread cost on this loop",
            r > 1.0, f"{free} / {gil} = {r:.2f} (medians)",
            said["comes-from-biased-reference"]))
    return out


ANALYSIS = ModuleAnalysis(__name__, shared=doc002, extras=("ratio_figure",))
