"""How the file_io chapter reads its samples: its summary, claims, figures, explorer
and checked sentences (what it measures: :mod:`gillab.measure.experiments.file_io`)."""
from __future__ import annotations

from ..judge.analysis import ModuleAnalysis
from ..judge.prose import words as chapter_words
from . import doc002


def prose(df) -> list:
    """The chapter's sentences about why ours differ, each checked against ``df``: each ratio is
    the verdicts' (:func:`doc002.claims`: free-threaded / GIL time, paired by interleaved repeat),
    and the sentence holds only where every whole 95% interval says it.  "The builds differ
    little, as the document found" says what its rows say (file_io/2_io_bound_single_thread and
    file_io/2_io_bound_multithread: ~2.9 s and ~2.4 s under both builds), so each ratio reads its
    row's line (claims.csv), never a line of its own."""
    from ..judge import claims
    from ..judge.prose import listed, together, within

    said = chapter_words("file_io")     # the words cell of its text

    rows = doc002.claims(df, "file_io")
    pairs = doc002.pairs(df["condition"].unique())      # the order of each row's ratios
    got = [(r["claim_id"], said.fill("row-and-pair", row=r["claim_id"].split("/")[-1], gil=gil, free=free),
            r["measured"][doc002.pair_label((gil, free))])
           for r in rows if r["table"] == "pyconjp2025_observations"
           for gil, free in pairs if doc002.pair_label((gil, free)) in r["measured"]]
    if not got:
        return []
    line = {cid: claims.line(cid) for cid, _, _ in got}

    def between(low, high):
        return f"between {low:.2f} and {high:.2f}"
    if len(set(line.values())) == 1:
        where = between(*next(iter(line.values())))
    else:
        where = "; ".join(f"{cid.split('/')[-1]} {between(*lh)}" for cid, lh in line.items())
    return [said.check("builds-differ-little",
                       together(*(within([m], *line[cid]) for cid, _, m in got)),
                       listed(said["free-over-gil-evidence"], [(label, m) for _, label, m in got]),
                       why=said["why-the-kernel-does-the-work"], line=where)]


ANALYSIS = ModuleAnalysis(__name__, shared=doc002, extras=("ratio_figure",))
