"""The book's first screen: one figure of what holds, what fails and what cannot be judged here,
by document and build family, and a handful of findings, each a sentence a chapter checks
against its data (:mod:`gillab.judge.prose`), computed when the book builds from the campaign shown
(the reader's where there is one, else the reference) and linking to its chapter.

Nothing here is typed: the figure counts the verdict rows (:func:`gillab.judge.report.flat`), and a
finding is the chapter's own :class:`~gillab.judge.prose.Check`, picked by the words it starts with.
"""
from __future__ import annotations

import math
from typing import NamedTuple

import pandas as pd

from ..judge import report
from ..judge.across import DEFINITE
from ..judge.report import family_group, profile_config

# the findings of the first screen: (chapter, the words its sentence starts with), in the order
# a reader meets the story: the GIL's cost, what a build without it changes, what it breaks
FINDINGS = (
    ("countdown", "**The old GIL of"),
    ("countdown", "**The builds without a GIL** run the threads in parallel"),
    ("convoy", "**The GIL builds show the convoy.**"),
    ("ccbench", "Next to a regex thread the old GIL"),
    ("data_race", "**CPython 3.9, the document's interpreter, does lose updates**"),
    ("data_race", "**With the GIL, CPython 3.13 loses no update here**"),
    ("data_race", "**Without the GIL the race is real**"),
    ("stall", "Without a GIL the heartbeat thread is not silenced"),
    ("b2_download", "On loopback and 2 cores"),
)
# what a verdict row's outcome says about the claim, for the figure
CLASSES = {"agrees": "holds", "higher": "does not hold", "lower": "does not hold", "inconclusive": "cannot be judged here",
           "not testable here": "not testable here", "not measured": "not measured in this run"}
COLOURS = {"holds": "#1b9e77", "does not hold": "#d95f02", "cannot be judged here": "#bdbdbd",
           "not testable here": "#eeeeee", "not measured in this run": "#ffffff"}


def counts(flat: pd.DataFrame) -> pd.DataFrame:
    """Per document and build family: how many claims x builds hold, do not hold or cannot be
    judged here, over the claims judged on the builds they speak of (the headline), and per
    document the claims not testable here or not measured in this run."""
    cols = ["document", "family", *COLOURS]
    if flat.empty:
        return pd.DataFrame(columns=cols)
    judged = report.judged(flat)
    rows = []
    for (doc, fam), g in judged.groupby(["document", judged["family"].map(family_group)], sort=True):
        c = g["outcome"].map(CLASSES).value_counts()
        rows.append({"document": doc, "family": fam, **{k: int(c.get(k, 0)) for k in COLOURS}})
    missing = flat[flat["condition"] == "-"]
    for doc, g in missing.groupby("document", sort=True):
        c = g["outcome"].map(CLASSES).value_counts()
        rows.append({"document": doc, "family": "no build", **{k: int(c.get(k, 0)) for k in COLOURS}})
    return pd.DataFrame(rows, columns=cols).sort_values(["document", "family"], kind="stable").reset_index(drop=True)


def figure(panels: dict[str, pd.DataFrame], titles: dict[str, str] | None = None):
    """Horizontal stacked bars, one per document and build family: claims x builds that hold, do
    not hold, cannot be judged here; one panel per campaign (``panels``: label -> flat rows)."""
    import matplotlib.pyplot as plt

    tables = {k: counts(v) for k, v in panels.items()}
    keys = sorted({(d, f) for t in tables.values() for d, f in zip(t["document"], t["family"])})
    if not keys:
        return None
    fig, axes = plt.subplots(1, len(tables), figsize=(8.0 if len(tables) == 1 else 5.2 * len(tables),
                                                      0.2 * len(keys) + 1.3), sharey=True, squeeze=False)
    y = {k: i for i, k in enumerate(reversed(keys))}
    for ax, (label, t) in zip(axes[0], tables.items()):
        left = pd.Series(0.0, index=range(len(t)))
        for cls, colour in COLOURS.items():
            ax.barh([y[(d, f)] for d, f in zip(t["document"], t["family"])], t[cls], left=left, color=colour,
                    edgecolor="#999999", linewidth=0.4, label=cls)
            left = left + t[cls]
        ax.set_title((titles or {}).get(label, label), fontsize=9, loc="left")
        ax.set_xlabel("claims x builds", fontsize=8)
        ax.tick_params(labelsize=8)
        ax.grid(axis="y", visible=False)
    axes[0, 0].set_yticks(list(y.values()), [f"doc {d}: {f}" for d, f in y])
    handles, labels = axes[0, 0].get_legend_handles_labels()
    fig.legend(handles, labels, fontsize=8, loc="upper center", ncol=len(COLOURS), frameon=False,
               bbox_to_anchor=(0.5, 1.0))
    fig.tight_layout(rect=(0, 0, 1, 0.93))
    return fig


def alt_text(flat: pd.DataFrame) -> str:
    """The figure in words (its alt text): per document, how many claims x builds hold, do not
    hold and cannot be judged here."""
    t = counts(flat)
    if t.empty:
        return "No verdicts yet."
    parts = []
    for doc, g in t.groupby("document", sort=True):
        s = g[list(COLOURS)].sum()
        parts.append(f"document {doc}: {int(s['holds'])} hold, {int(s['does not hold'])} do not, "
                     f"{int(s['cannot be judged here'])} cannot be judged here")
    return "Claims x builds by outcome. " + "; ".join(parts) + "."


class Finding(NamedTuple):
    """One sentence of the first screen: its chapter, the chapter's checked sentence, and the
    campaign whose samples it was computed on."""
    chapter: str
    check: object
    campaign: str


def findings(campaign: str | None = None, profile: str = "default") -> list[Finding]:
    """A :class:`Finding` for each sentence of :data:`FINDINGS` that can be computed, on the samples
    its chapter reads: ``campaign``'s, or where it holds none of that chapter (a timed run left it
    out), the reference's, as the chapter itself reads them (:func:`findings_markdown` says so)."""
    from ..judge import results
    from ..judge.analysis import of as reading

    out = []
    frames: dict[str, pd.DataFrame | None] = {}
    for name, start in FINDINGS:
        if name not in frames:
            try:
                frames[name] = results.samples_as_chapter(name, campaign, profile_config(name, profile))
            except results.NoData:
                frames[name] = None
        df = frames[name]
        if df is None:
            continue
        hit = [c for c in reading(name).prose(df) if c.text.startswith(start)]
        if hit:
            out.append(Finding(name, hit[0], df.attrs.get("campaign", campaign)))
    return out


def findings_markdown(found: list[Finding], link, shown: str | None = None) -> str:
    """One bullet per finding, linking to its chapter (``link(name)``); a sentence the data no
    longer bear out is struck and marked, as in its chapter; one computed on another campaign's
    samples than ``shown`` (the reader's run did not measure its chapter) names that campaign."""
    from ..judge import prose
    from ..measure.campaigns import reference_id
    from ..measure.experiments import get

    ref = reference_id()
    lines = []
    for f in found:
        bullet = prose.markdown([f.check])[2:]
        which = "the reference campaign" if f.campaign == ref else "campaign"
        other = (f" *(from {which} `{f.campaign}`: your run did not measure this chapter)*"
                 if shown is not None and f.campaign != shown else "")
        lines.append(f"- {bullet}{other} [{get(f.chapter).title}]({link(f.chapter)})")
    return "\n".join(lines)


def share(flat: pd.DataFrame) -> dict[str, float]:
    """Of the headline claims x builds with a definite outcome, the share that holds (for a
    sentence under the figure)."""
    t = counts(flat)
    held, failed = int(t["holds"].sum()), int(t["does not hold"].sum())
    return {"held": held, "failed": failed, "open": int(t["cannot be judged here"].sum()),
            "share": held / (held + failed) if held + failed else math.nan}


def beside_reference(yours: pd.DataFrame, ref: pd.DataFrame) -> dict:
    """The reader's headline rows (claims judged on the builds they speak of) set beside the
    reference's, claim x build by claim x build: how many are judged in both, how many have a
    definite outcome in both, how many of those give the same outcome, and which contradict (a
    definite outcome on each side, not the same)."""
    def headline(flat: pd.DataFrame) -> pd.Series:
        j = report.headline(flat)
        j = j[j["condition"] != "-"]
        return j.drop_duplicates(["claim_id", "condition"]).set_index(["claim_id", "condition"])["outcome"]

    a, b = headline(yours), headline(ref)
    both = a.index.intersection(b.index)
    definite = [k for k in both if a[k] in DEFINITE and b[k] in DEFINITE]
    contradict = [{"claim_id": k[0], "condition": k[1], "yours": a[k], "reference": b[k]}
                  for k in definite if a[k] != b[k]]
    return {"both": len(both), "definite": len(definite), "same": len(definite) - len(contradict),
            "contradict": contradict}


def beside_reference_sentence(yours: pd.DataFrame, ref: pd.DataFrame) -> str:
    """One sentence for the first screen: how much of the reader's run agrees with the reference."""
    r = beside_reference(yours, ref)
    if not r["both"]:
        return "Your campaign and the reference judge no claim x build in common yet."
    n = len(r["contradict"])
    which = "; ".join(f"`{c['claim_id']}` on {c['condition']}: yours {c['yours']}, the reference {c['reference']}"
                      for c in r["contradict"][:3])
    more = f" and {n - 3} more" if n > 3 else ""
    return (f"**Your run beside the reference:** of the {r['both']} claims x builds both judge, {r['definite']} "
            f"have a definite outcome in both; {r['same']} of those are the same"
            + (f", and {n} contradict ({which}{more})." if n else ", and none contradicts.")
            + (" The others are inconclusive in one run or both." if r["definite"] < r["both"] else ""))

