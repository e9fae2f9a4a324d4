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
    from ..judge.prose import listed, settle

    said = chapter_words("file_io")     # the words cell of its text

    rows = doc002.claims(df, "file_io")
    pairs = doc002.pairs(df["condition"].unique())      # the order of each row's ratios
    got = [(said.fill("row-and-pair", row=r["claim_id"].split("/")[-1], gil=gil, free=free),
            r["measured"][doc002.pair_label((gil, free))])
           for r in rows if r["table"] == "pyconjp2025_observations"
           for gil, free in pairs if doc002.pair_label((gil, free)) in r["measured"]]
    if not got:
        return []
    return [said.check("builds-differ-little",
                       settle([m for _, m in got], lambda lo, hi: 0.8 <= lo and hi <= 1.25,
                              lambda lo, hi: hi < 0.8 or lo > 1.25),
                       listed(said["free-over-gil-evidence"], got),
                       why=said["why-the-kernel-does-the-work"])]


ANALYSIS = ModuleAnalysis(__name__, shared=doc002, extras=("ratio_figure",))
