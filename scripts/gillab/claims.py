"""Every published claim of the five documents, as data: ``data/reference/claims.csv``.

One row per claim: its id (the verdicts' ``claim_id``), document, experiment, the section and
words it was published in, what kind of statement it is, the statistic and point of ours that
answers it, how it is compared (*about* a value with a band, *at least*, *at most*, or *not
testable* here, with the reason), the value and where it comes from, the band and why, and the
document's interpreter and machine as far as it says.

A claim's value is either typed in the ``value`` column (a number the document states in words:
"about 95%", "stays about the same") or derived from the document's own tables by ``derive``:
``table[selector].column``, optionally divided by a second such cell, where the selector is
``column=value`` (``;``-separated, matched on the cell as written) or ``#n`` (the table's n-th
data row).  ``rests_on`` names the other rows a claim rests on, so that every row of every table
in ``data/reference`` is either part of a claim or listed in ``context.csv`` with the reason it is
not one.  The verdict code reads the value, band and comparison from here: no published number
is typed into Python.
"""
from __future__ import annotations

import functools
import math
import re

import pandas as pd

from . import stats
from .paths import reference_dir

COMPARISONS = ("about", "at least", "at most", "not testable")
KINDS = ("absolute", "ratio", "ordering", "shape", "qualitative")
COLUMNS = ("claim_id", "document", "experiment", "section", "quote", "kind", "statistic", "point", "comparison",
           "value", "unit", "derive", "value_source", "band", "band_reason", "interpreter", "machine", "rests_on")
_CELL = re.compile(r"^\s*(?P<table>[\w]+)\[(?P<sel>[^\]]*)\](?:\.(?P<col>[\w]+))?\s*$")


@functools.lru_cache(maxsize=None)
def _raw(table: str) -> pd.DataFrame:
    path = reference_dir() / f"{table}.csv"
    if not path.exists():
        raise KeyError(f"claims.csv names a table data/reference/{table}.csv that does not exist")
    return pd.read_csv(path, dtype=str, keep_default_na=False)


def select(ref: str) -> tuple[str, list[int], str | None]:
    """``table[selector]`` or ``table[selector].column`` -> (table, matching row positions, column).
    ``[*]`` selects every row."""
    m = _CELL.match(ref)
    if not m:
        raise ValueError(f"not a reference to a table's rows: {ref!r} (want table[column=value].column)")
    table, sel, col = m["table"], m["sel"].strip(), m["col"]
    t = _raw(table)
    if sel == "*":
        rows = list(range(len(t)))
    elif sel.startswith("#"):
        n = int(sel[1:])
        if not 1 <= n <= len(t):
            raise KeyError(f"{ref}: {table}.csv has {len(t)} rows")
        rows = [n - 1]
    else:
        keep = pd.Series(True, index=t.index)
        for part in sel.split(";"):
            k, _, v = part.partition("=")
            if k.strip() not in t.columns:
                raise KeyError(f"{ref}: {table}.csv has no column {k.strip()!r}")
            keep &= t[k.strip()] == v.strip()
        rows = [int(i) for i in t.index[keep]]
    if not rows:
        raise KeyError(f"{ref}: no row of {table}.csv matches")
    if col is not None and col not in t.columns:
        raise KeyError(f"{ref}: {table}.csv has no column {col!r}")
    return table, rows, col


def cell(ref: str) -> float:
    """The number in one cell, ``table[selector].column``."""
    table, rows, col = select(ref)
    if col is None or len(rows) != 1:
        raise KeyError(f"{ref}: names {len(rows)} rows{'' if col else ' and no column'}; a value needs one cell")
    return float(_raw(table).iloc[rows[0]][col])


def derived(expr: str) -> float:
    """``cell`` or ``cell / cell``."""
    parts = expr.split(" / ")
    if len(parts) == 1:
        return cell(parts[0])
    if len(parts) == 2:
        return cell(parts[0]) / cell(parts[1])
    raise ValueError(f"derive: one cell or one cell / another, got {expr!r}")


def _refs(c) -> list[str]:
    out = [p for p in str(c["derive"]).split(" / ") if p.strip()] if c["derive"] else []
    return out + re.findall(r"\w+\[[^\]]*\]", str(c["rests_on"]))


@functools.lru_cache(maxsize=None)
def _table() -> pd.DataFrame:
    path = reference_dir() / "claims.csv"
    t = pd.read_csv(path, dtype=str, keep_default_na=False)
    missing = set(COLUMNS) - set(t.columns)
    if missing:
        raise KeyError(f"claims.csv lacks the columns {sorted(missing)}")
    dup = t["claim_id"][t["claim_id"].duplicated()]
    if len(dup):
        raise ValueError(f"claims.csv: claim ids used twice: {sorted(set(dup))}")
    published = []
    for _, c in t.iterrows():
        if c["comparison"] not in COMPARISONS:
            raise ValueError(f"claims.csv, {c['claim_id']}: comparison {c['comparison']!r} is not one of {COMPARISONS}")
        if c["value"] and c["derive"]:
            raise ValueError(f"claims.csv, {c['claim_id']}: both a typed value and a derivation")
        published.append(float(c["value"]) if c["value"] else derived(c["derive"]) if c["derive"] else math.nan)
    t["published"] = published
    t["band"] = pd.to_numeric(t["band"].replace("", math.nan))
    return t.set_index("claim_id", drop=False)


def table() -> pd.DataFrame:
    """claims.csv with ``published``: the value, typed or derived (NaN where the document's
    listings give it and the chapter computes it, or where there is none)."""
    return _table().copy()


def get(claim_id: str) -> pd.Series:
    t = _table()
    if claim_id not in t.index:
        raise KeyError(f"no claim {claim_id!r} in data/reference/claims.csv")
    return t.loc[claim_id]


def of(experiment: str) -> pd.DataFrame:
    """The claims ``experiment`` answers, in the table's order."""
    t = _table()
    return t[t["experiment"] == experiment].reset_index(drop=True)


def value(claim_id: str) -> float:
    v = get(claim_id)["published"]
    if math.isnan(v):
        raise KeyError(f"claims.csv, {claim_id}: no value (neither typed nor derived)")
    return float(v)


def band(claim_id: str) -> float | None:
    c = get(claim_id)
    return float(c["band"]) if c["comparison"] == "about" else None


def compare(comparison: str, value: float, band: float | None, lo: float, hi: float, n: int | None) -> str:
    """The outcome of a measured 95% interval [lo, hi] over ``n`` samples (runs, pairs):
    *about*: agrees when the whole interval lies in value x (1 +- band), higher / lower when
    wholly outside, inconclusive otherwise; *at least* / *at most*: agrees when the whole interval
    is on the claimed side, lower / higher when wholly on the other; *not testable*: said so.
    Fewer than :data:`stats.MIN_N` samples: inconclusive (``n`` None: no minimum applies)."""
    if comparison == "not testable":
        return "not testable here"
    if lo is None or hi is None or math.isnan(lo) or math.isnan(hi):
        return "not measured"
    if comparison == "about":
        return stats.verdict(value, lo, hi, float(band), n=n)
    if comparison == "at least":
        out = "agrees" if lo >= value else "lower" if hi < value else "inconclusive"
    elif comparison == "at most":
        out = "agrees" if hi <= value else "higher" if lo > value else "inconclusive"
    else:
        raise ValueError(f"comparison {comparison!r} is not one of {COMPARISONS}")
    return out if n is None or n >= stats.MIN_N else "inconclusive"


def judge(claim_id: str, lo: float, hi: float, n: int | None, published: float | None = None) -> str:
    """:func:`compare` with the claim's comparison, value and band.  ``published`` stands for
    the value where the chapter computes it from the document's listings."""
    c = get(claim_id)
    if c["comparison"] == "not testable":
        return "not testable here"
    v = float(published) if published is not None else value(claim_id)
    return compare(c["comparison"], v, c["band"], lo, hi, n)


def context() -> pd.DataFrame:
    """``context.csv``: rows of the reference tables that are no claim, and why."""
    return pd.read_csv(reference_dir() / "context.csv", dtype=str, keep_default_na=False)


def tables() -> list[str]:
    """Every table of published numbers (claims.csv and context.csv aside)."""
    return sorted(p.stem for p in reference_dir().glob("*.csv") if p.stem not in ("claims", "context"))


def coverage() -> dict[str, dict[int, list[str]]]:
    """Per table, per row position: the claims that rest on it and the context entries that
    explain it (``context: <reason>``)."""
    out = {name: {i: [] for i in range(len(_raw(name)))} for name in tables()}
    for _, c in _table().iterrows():
        for ref in _refs(c):
            table, rows, _ = select(ref)
            for i in rows:
                out.setdefault(table, {}).setdefault(i, []).append(c["claim_id"])
    for _, x in context().iterrows():
        table, rows, _ = select(x["rows"])
        for i in rows:
            out.setdefault(table, {}).setdefault(i, []).append(f"context: {x['reason']}")
    return out


def unanswered(experiment: str, answered: set[str]) -> list[dict]:
    """The claims of ``experiment`` its verdicts did not answer, as verdict rows without a
    measurement: not testable here (with the reason) or not measured (with the reason)."""
    out = []
    for _, c in of(experiment).iterrows():
        if c["claim_id"] in answered:
            continue
        out.append({"experiment": experiment, "table": "claims", "claim_id": c["claim_id"], "claim": c["quote"],
                    "published": c["published"], "unit": c["unit"], "band": band(c["claim_id"]),
                    "published_as": c["quote"], "measured": {},
                    "unmeasured": "not testable here" if c["comparison"] == "not testable" else "not measured",
                    "note": c["band_reason"]})
    return out


def summary() -> pd.DataFrame:
    """Per document: its claims, how many are compared *about* a value, *at least* / *at most*
    one, and how many cannot be tested here."""
    t = _table()
    out = t.groupby("document").agg(claims=("claim_id", "size")).reset_index()
    for comp in COMPARISONS:
        out[comp] = [int(((t["document"] == d) & (t["comparison"] == comp)).sum()) for d in out["document"]]
    return out


def bands() -> pd.DataFrame:
    """The bands of the *about* claims: each band, how many claims use it, in which documents,
    and the reasons given for it (each once)."""
    t = _table()
    t = t[t["comparison"] == "about"]
    rows = []
    for b, g in t.groupby("band", sort=True):
        reasons = list(dict.fromkeys(g["band_reason"]))
        rows.append({"band": f"+-{b:.0%}", "claims": len(g), "documents": ", ".join(sorted(set(g["document"]))),
                     "reasons": "; ".join(reasons[:4]) + (f"; and {len(reasons) - 4} more" if len(reasons) > 4 else "")})
    return pd.DataFrame(rows)
