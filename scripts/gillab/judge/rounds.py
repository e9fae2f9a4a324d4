"""After the planned runs, where the time left goes: the chapters whose judged rows still straddle an
edge of their band, and how many runs would decide them (:func:`gillab.reproduce.more_rounds` asks;
:mod:`gillab.judge.budget`'s words say the rule).
"""
from __future__ import annotations

from typing import NamedTuple

from .. import stats
from .budget import SEQUENTIAL, fewest_runs


def round_size(name: str) -> int:
    """The runs one more round adds: a trial (3) where the chapter's claims are a best of 3."""
    from . import claims

    t = claims.table()
    ids = t.index[t["experiment"] == name]
    return max([claims.trial_size(cid) for cid in ids] or [1])


def runs_to_decide(row, most: int | None = None) -> int | None:
    """How many more runs (pairs, trials) an inconclusive row's interval would need, at its current
    spread, to lie wholly inside or outside its band (:func:`fewest_runs` beyond the runs it has);
    None where even ``most`` (the confidence sequence's 20) would not, or the row has no such
    interval."""
    try:
        n = int(row["n"])
    except (KeyError, TypeError, ValueError):
        return None
    later = fewest_runs(row, most, n + 1)
    return None if later is None else later - n


class Open(NamedTuple):
    """A chapter's judged rows still open in a campaign: how many straddle an edge of their band
    with enough runs, how many of those its spread projects to decide within the runs a point may
    get (:func:`runs_to_decide`), and whether every row's interval may be read at a data-chosen
    stop (:data:`SEQUENTIAL`)."""
    rows: int
    decidable: int
    sequential: bool


def straddling(name: str, campaign: str) -> Open:
    """``name``'s judged rows in ``campaign`` still open (:class:`Open`)."""
    from . import verdicts

    flat = verdicts.flat(verdicts.verdicts(campaign, experiments=[name]))
    if flat.empty:
        return Open(0, 0, True)
    j = verdicts.judged(flat)
    open_ = verdicts.straddling(j)
    open_ = open_[open_["estimand"] != ""]
    decidable = sum(runs_to_decide(r) is not None for _, r in open_.iterrows())
    return Open(len(open_), decidable, bool(j["estimand"].isin([*SEQUENTIAL, ""]).all()))


def most_repeats(name: str) -> int:
    """The most runs a point of ``name`` may get from the rounds after the plan: the confidence
    sequence's limit, counted in trials where a round is a trial."""
    return stats.ADAPTIVE_MAX * round_size(name)
