"""How the file_io chapter reads its samples: its summary, claims, figures, explorer
and checked sentences (what it measures: :mod:`gillab.measure.experiments.file_io`)."""
from __future__ import annotations

from ..judge.analysis import ModuleAnalysis
from ..judge.prose import words as chapter_words
from . import doc002


def prose(df) -> list:
    """The chapter's sentences about why ours differ, each checked against ``df``: each ratio is
    the verdicts' (:func:`doc002.claims`: free-threaded / GIL time, paired by interleaved repeat),
    and the sentence holds only where every whole 95% interval says it."""
    from ..judge.prose import Check, listed, settle

    said = chapter_words("file_io")     # the words cell of its text

    rows = doc002.claims(df, "file_io")
    got = {f"{r['claim_id'].split('/')[-1]}, {pair}": m for r in rows if r["table"] == "pyconjp2025_observations"
           for pair, m in r["measured"].items()}
    if not got:
        return []
    return [Check("The builds differ little, as the document found: every ratio free-threaded / GIL lies between "
                  "0.8 and 1.25",
                  **settle(got.values(), lambda lo, hi: 0.8 <= lo and hi <= 1.25, lambda lo, hi: hi < 0.8 or lo > 1.25),
                  evidence=listed("free-threaded / GIL time, median of per-repeat ratios [95% interval]", got.items()),
                  why=said["fsyncs-dominate-kernel-does"])]


ANALYSIS = ModuleAnalysis(__name__, shared=doc002, extras=("ratio_figure",))
