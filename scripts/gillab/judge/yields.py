"""What a run's samples decide and what more runs would: the numbers behind the method chapter's
tables of decided rows (:mod:`gillab.present.decided` formats them).  Reads verdict rows and the
forecast; measures nothing.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

from .. import stats
from ..measure import experiments


@dataclass
class Straddling:
    """The judged rows left inconclusive with enough runs: per chapter, the runs each would need at
    its spread (None: not within the runs a point may get), and the rows no spread projects."""
    chapters: list          # (chapter, [runs to decide or None, per row])
    apart: object           # a DataFrame of the rows whose interval is no median's or ratio's
    machine: dict           # chapter -> its rows a control wider than its band guards (the machine's pace)


def by_chapter(judged):
    """(chapter, its judged rows) in the report's order, for the chapters that have any."""
    for name in experiments.names():
        g = judged[judged["experiment"] == name]
        if not g.empty:
            yield name, g


def straddling(flat) -> Straddling:
    """The judged rows of ``flat`` whose interval straddles an edge of their band, the runs each
    would need at its current spread to decide (:func:`gillab.judge.rounds.runs_to_decide`), and how
    many a control wider than its band guards (:func:`gillab.judge.claims.explain_by_controls`)."""
    from . import verdicts
    from .rounds import runs_to_decide

    from .claims import MACHINE_PACE

    every = verdicts.straddling(verdicts.judged(flat))
    open_ = every[every["estimand"].isin([*stats.ORDER, stats.RATIO])]
    chapters, machine = [], {}
    for name, g in by_chapter(open_):
        chapters.append((name, [runs_to_decide(r) for _, r in g.iterrows()]))
        machine[name] = int(g["why"].fillna("").str.startswith(MACHINE_PACE).sum())
    return Straddling(chapters, every[~every.index.isin(open_.index)], machine)


def run_flat(campaign: str, profile: str = "default"):
    """A campaign's verdict rows of ``profile`` (flat), as its chapters judge them."""
    from . import verdicts

    return verdicts.flat(verdicts.verdicts(campaign, profile=profile))


def too_few(judged):
    """The mask of ``judged``'s rows inconclusive for too few runs."""
    return judged["why"].map(stats.too_few_runs)


def verdicts_adds(names) -> dict[str, float]:
    """Per chapter, the minutes `verdicts` adds to `default`'s (forecast on the reference's times;
    NaN where a forecast cannot be made)."""
    from . import budget

    out = {}
    for name in names:
        try:
            v = budget.forecast_chapter(name, "verdicts", None, [], new_campaign=True).seconds
            d = budget.forecast_chapter(name, "default", None, [], new_campaign=True).seconds
            out[name] = max(0.0, v - d) / 60
        except Exception:   # noqa: BLE001 - a forecast that cannot be made is shown as unknown
            out[name] = math.nan
    return out


def needs(g) -> list[str]:
    """What the judged rows ``g`` of one chapter need for a 95% interval, in words, one per estimand
    and claim (:func:`gillab.stats.runs_needed`; a best of 3 counts trials of 3 runs)."""
    from . import claims

    out = []
    for (estimand, cid), _ in g.groupby(["estimand", "claim_id"]):
        need = stats.runs_needed(estimand)
        size = claims.trial_size(cid) if cid in claims.table().index else 1
        out.append(f"{estimand}: " + ("no interval (no runs are enough)" if need is None else
                                      f"{need * size} runs ({need} trials of {size})" if size > 1 else
                                      f"{need} run{'s' if need != 1 else ''}"
                                      f"{' a side' if estimand == stats.RATIO else ''}"))
    return list(dict.fromkeys(out))
