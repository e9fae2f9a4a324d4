"""What decides a judged row whose outcome differs between two CPU groups: the causes found so far.

A row definite on two kinds of CPU that contradicts is not yet a result: something other than the
GIL decided it, and the report says what.  ``data/results/CAUSES.toml`` lists the causes found
from the data, each for the claims it explains (``fnmatch`` patterns of claim ids), in words
without numbers (every number is computed): what decides the row, and optionally a *witness*, a
function of this module that reads a campaign's own samples and returns the quantity that decides
it (label -> its estimate in words), so that the machines page sets that quantity of each CPU group
side by side.  A contradiction no entry explains is listed as such, never explained away.

Entries::

    [[cause]]
    claims = ["primes/ft_single_slower", "primes/3_cpu_bound_single_thread"]
    decided_by = "the CPU: ..."          # what decides the row, in a phrase
    why = "..."                          # how it decides it, in words
    witness = "ft_single_cost"           # optional: a function of gillab.judge.causes

``make test`` checks every entry: its patterns match claims of claims.csv, its witness exists.
"""
from __future__ import annotations

import fnmatch
import math
import tomllib
from dataclasses import dataclass
from functools import lru_cache

import pandas as pd

from .. import stats
from ..measure.profiles import ParameterError
from ..paths import results_dir

CAUSES_FILE = "CAUSES.toml"
FIELDS = {"claims", "decided_by", "why", "witness"}


@dataclass(frozen=True)
class Cause:
    claims: tuple[str, ...]
    decided_by: str
    why: str
    witness: str = ""

    def explains(self, claim_id: str) -> bool:
        return any(fnmatch.fnmatchcase(claim_id, p) for p in self.claims)


def path():
    return results_dir() / CAUSES_FILE


@lru_cache(maxsize=4)
def _parse(text: str) -> tuple[Cause, ...]:
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ParameterError(f"{CAUSES_FILE} is not valid TOML ({exc})") from None
    out = []
    for i, e in enumerate(data.get("cause", []), 1):
        extra, lacking = set(e) - FIELDS, {"claims", "decided_by", "why"} - set(e)
        if extra or lacking:
            raise ParameterError(f"{CAUSES_FILE}, cause {i}: " + "; ".join(
                p for p in (f"unknown fields {sorted(extra)}" if extra else "",
                            f"lacks {sorted(lacking)}" if lacking else "") if p))
        claims = e["claims"]
        if not (isinstance(claims, list) and claims and all(isinstance(c, str) and c for c in claims)):
            raise ParameterError(f"{CAUSES_FILE}, cause {i}: claims is a list of claim ids or patterns")
        witness = e.get("witness", "")
        if witness and witness not in WITNESSES:
            raise ParameterError(f"{CAUSES_FILE}, cause {i}: no witness {witness!r} (known: {sorted(WITNESSES)})")
        out.append(Cause(tuple(claims), " ".join(e["decided_by"].split()), " ".join(e["why"].split()), witness))
    return tuple(out)


def load() -> tuple[Cause, ...]:
    """The causes of CAUSES.toml (none where the file is absent)."""
    p = path()
    return _parse(p.read_text()) if p.is_file() else ()


def of(claim_id: str, causes: tuple[Cause, ...] | None = None) -> Cause | None:
    """The first cause that explains ``claim_id``, or None."""
    return next((c for c in (load() if causes is None else causes) if c.explains(claim_id)), None)


# -- witnesses: a campaign's own samples, read for the quantity that decides a row -------------------
def estimate_text(r: dict) -> str:
    """A paired median in words: 'x [lo, hi]', 'x (n=k: too few runs)', or 'not measured'."""
    if not r["n"]:
        return "not measured"
    if not stats.conclusive(stats.PAIRED, r["n"]):
        return f"{r['ratio']:.2f} (n={r['n']}: too few runs)"
    return f"{r['ratio']:.2f} [{r['ci_lo']:.2f}, {r['ci_hi']:.2f}]"


def by_group(name: str, groups: dict[str, list[str]]) -> dict[str, str]:
    """A witness over CPU groups (group -> its campaign ids): per group, in words, each quantity's
    estimate where one campaign read it, else the range of its campaigns' medians and how many
    campaigns; a group none of whose campaigns it reads is left out."""
    out = {}
    for g, ids in groups.items():
        got = [w for c in ids if (w := witness(name, c))]
        parts = []
        for label in dict.fromkeys(k for w in got for k in w):
            read = [w[label] for w in got if w.get(label, {}).get("n")]
            if not read:
                continue
            if len(read) == 1:
                parts.append(f"{label} {estimate_text(read[0])} (one campaign)")
                continue
            medians = sorted(r["ratio"] for r in read)
            parts.append(f"{label} {medians[0]:.2f} to {medians[-1]:.2f} (medians of {len(read)} campaigns)")
        if parts:
            out[g] = ", ".join(parts)
    return out


# the single-thread workloads that run on both builds of one source: chapter -> the samples that
# are one thread
FT_SINGLE = {"primes": {"mode": "single"}, "st_loop": {}, "countdown": {"threads": 1}}
FT_PAIR = ("3.13.5t", "3.13.5")


def _by_round(df: pd.DataFrame, level: str, num, den) -> dict | None:
    """The time at ``level`` = ``num`` over the time at ``level`` = ``den``, per interleaved round (a
    configuration, run and repeat), median over rounds with its interval
    (:func:`gillab.stats.paired_ratio`); None where ``df`` holds no time at one of them."""
    t = df.groupby([level, "config", "run_id", "repeat"])["seconds"].median().unstack(0)
    return stats.paired_ratio(t[num], t[den]) if {num, den} <= set(t.columns) else None


def ft_single_cost(campaign: str) -> dict[str, dict]:
    """The free-threaded build's time over its GIL twin's (3.13.5t / 3.13.5), one thread, on every
    single-thread workload the campaign measured both on: per interleaved round, the median over
    rounds with its 95% interval (a :func:`gillab.stats.paired_ratio` result).  Whether the cost
    follows the workload on one CPU and not on another is what tells the CPU's part from the
    build's."""
    from . import results

    out = {}
    for exp, sel in FT_SINGLE.items():
        try:
            df = results.samples(exp, campaign)
        except (results.NoData, FileNotFoundError, KeyError):
            continue
        for k, v in sel.items():
            df = df[df[k].astype(str) == str(v)] if k in df else df.iloc[0:0]
        r = _by_round(df[df["condition"].isin(FT_PAIR)], "condition", *FT_PAIR)
        if r is not None:
            out[exp] = r
    return out


def two_thread_speedup(campaign: str) -> dict[str, dict]:
    """How much of two CPUs two threads hashing SHA-256 used: per build with a GIL, the time of one
    thread over the time of two (same total work), per interleaved round, the median over rounds
    with its 95% interval.  2 is both CPUs busy; under it, a CPU stood idle at the GIL's hand-offs,
    which more threads can fill."""
    from . import results

    try:
        df = results.samples("sha256", campaign)
    except (results.NoData, FileNotFoundError, KeyError):
        return {}
    if "gil_enabled" in df:
        df = df[df["gil_enabled"].fillna(True).astype(bool)]
    out = {}
    for cond, g in df[df["threads"].isin([1, 2])].groupby("condition", sort=True):
        r = _by_round(g, "threads", 1, 2)
        if r is not None:
            out[cond] = r
    return out


def witness(name: str, campaign: str) -> dict[str, dict]:
    """:data:`WITNESSES`'s ``name`` on ``campaign``: label -> its estimate; {} where it reads
    nothing (a campaign without the samples it reads)."""
    try:
        return WITNESSES[name](campaign)
    except (ValueError, KeyError, OSError):
        return {}


WITNESSES = {"ft_single_cost": ft_single_cost, "two_thread_speedup": two_thread_speedup}


def share(k: int, n: int) -> str:
    """k of n as words with its share: '1 of 107 (0.9%)'."""
    return f"{k} of {n}" + (f" ({100 * k / n:.1f}%)" if n else "")


def _finite(x) -> bool:
    try:
        return math.isfinite(float(x))
    except (TypeError, ValueError):
        return False


def values_text(g: pd.DataFrame) -> str:
    """A group's campaigns' values of one row: 'x [lo, hi] (campaign)', one each."""
    return "; ".join(
        (f"{r.measured:.3g} [{r.ci_low:.3g}, {r.ci_high:.3g}]" if _finite(r.ci_low) else f"{r.measured:.3g}")
        + f" {r.outcome} (`{r.campaign}`)" for r in g.itertuples() if _finite(r.measured))
