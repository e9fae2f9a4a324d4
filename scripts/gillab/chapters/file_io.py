"""How the file_io chapter reads its samples: its summary, claims, figures, explorer
and checked sentences (what it measures: :mod:`gillab.measure.experiments.file_io`)."""
from __future__ import annotations

from ..judge.analysis import ModuleAnalysis
from ..judge.prose import words as chapter_words
from . import doc002


def prose(df) -> list:
    """The chapter's sentences about why ours differ, each checked against ``df``."""
    from ..judge.prose import Check

    said = chapter_words("file_io")     # the words cell of its text

    rows = doc002.claims(df, "file_io")
    got = {f"{r['claim_id'].split('/')[-1]}, {pair}": m["median"] for r in rows for pair, m in r["measured"].items()}
    if not got:
        return []
    return [Check("The builds differ little, as the document found: every ratio free-threaded / GIL lies between "
                  "0.8 and 1.25",
                  all(0.8 <= v <= 1.25 for v in got.values()),
                  "; ".join(f"{k} {v:.2f}" for k, v in got.items()),
                  said["fsyncs-dominate-kernel-does"])]


ANALYSIS = ModuleAnalysis(__name__, shared=doc002, extras=("ratio_figure",))
