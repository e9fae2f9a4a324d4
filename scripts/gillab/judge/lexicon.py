"""The documents' words, read once: ``data/reference/lexicon.csv``.

Every claims row that is compared names the phrase it rests on (claims.csv ``phrase``), and its
comparison, value and band are the phrase's, fixed here before any sample is read and the same
for every row that uses the phrase:

- *about* a value within a band: the band is the entry's, or, for *a printed number*, the rule
  from the digits the document prints (:func:`digits_band`, over the numbers claims.csv's
  ``printed`` names);
- a *bound*: an *at least* row's threshold is the entry's ``at_least``, an *at most* row's its
  ``at_most`` (a change is at least 1.1 where it rises and at most 0.9 where it falls); a row whose
  statistic is the share of a rate lost (unit *share lost*) reads a fall as losing at least
  1 - ``at_most``;
- *stated*: the document states the threshold itself, and the row's value is that number.

Where the document's own numbers fall outside what its own word means, that is a finding about
the document (:func:`gillab.judge.claims.own_misses`), never a reason to change the entry.
"""
from __future__ import annotations

import functools
import math
import re

import pandas as pd

from . import results


READINGS = ("about", "bound", "stated")
COLUMNS = ("phrase", "words", "reading", "value", "band", "at_least", "at_most", "document_numbers", "reason")
DIGITS = "digits"
# the unit of a row whose statistic is the share of a rate lost (1 - kept): its fall reads as 1 - at_most
SHARE_LOST = "share lost"
# one printed number: digits with thousands commas and a decimal part; a sign, a tilde, a k for
# thousands (12k), units and percent signs around it are read past (none moves the relative unit)
_NUMBER = re.compile(r"(?P<int>\d[\d,]*)(?:\.(?P<dec>\d+))?")


@functools.lru_cache(maxsize=None)
def table() -> pd.DataFrame:
    """lexicon.csv, one row a phrase, indexed by it; refused with the reason where an entry
    does not say how its phrase reads."""
    t = results.keyed("lexicon.csv", COLUMNS, "phrase")
    for _, e in t.iterrows():
        why = entry_problem(e)
        if why:
            raise ValueError(f"lexicon.csv, {e['phrase']!r}: {why}")
    return t.set_index("phrase", drop=False)


def entry_problem(e) -> str:
    """What is wrong with one lexicon entry ('' where nothing is)."""
    if e["reading"] not in READINGS:
        return f"reading {e['reading']!r} is not one of {READINGS}"
    if not e["reason"].strip() or not e["words"].strip():
        return "an entry names its words and gives its reason"
    if e["reading"] == "about" and not e["band"].strip():
        return "an about reading has a band (a number, or 'digits' for the printed number's rule)"
    if e["reading"] == "bound" and not (e["at_least"].strip() or e["at_most"].strip()):
        return "a bound gives at least one threshold"
    if e["reading"] != "about" and e["band"].strip():
        return "only an about reading has a band"
    return ""


def relative_half_unit(text: str) -> float:
    """Half a unit of a printed number's last significant digit, relative to the number:
    ``6.57`` 0.00076, ``12k`` 0.042, ``30,000`` and ``100`` (one significant digit) 0.167 and
    0.5; NaN for a number that is zero."""
    m = _NUMBER.search(text)
    if not m:
        raise ValueError(f"no printed number in {text!r}")
    whole = m["int"].replace(",", "")
    if m["dec"]:
        unit = 10.0 ** -len(m["dec"])
        value = float(f"{whole}.{m['dec']}")
    else:
        zeros = len(whole) - len(whole.rstrip("0")) if whole.strip("0") else 0
        unit = 10.0 ** zeros
        value = float(whole)
    return unit / 2 / value if value else math.nan


def digits_band(printed: str) -> float:
    """The band the printed number's rule gives ``printed`` (numbers a ratio divides are
    separated by `` / ``): the relative half units summed, never under the same's band."""
    floor = float(table().loc["the same", "band"])
    parts = [p for p in printed.split(" / ") if p.strip()]
    if not parts:
        raise ValueError("a printed number's row names the numbers it reads (claims.csv printed)")
    total = sum(relative_half_unit(p) for p in parts)
    if math.isnan(total):
        return math.nan
    return round(max(floor, total), 2)


def problem(c) -> str:
    """How a claims row ``c`` differs from its phrase's entry ('' where it does not): an unknown
    phrase, another comparison, value, band or threshold."""
    if c["comparison"] == "not testable":
        return "" if not c["phrase"].strip() else "a row that is not testable reads no phrase"
    t = table()
    if c["phrase"] not in t.index:
        return f"phrase {c['phrase']!r} is not in lexicon.csv"
    e = t.loc[c["phrase"]]
    if e["reading"] == "about":
        if c["comparison"] != "about":
            return f"{c['phrase']!r} reads about a value, not {c['comparison']}"
        want = digits_band(c["printed"]) if e["band"] == DIGITS else float(e["band"])
        have = math.nan if _blank(c["band"]) else float(c["band"])
        if math.isnan(want):
            return "" if math.isnan(have) or have > 0 else "a band around 0"
        if math.isnan(have) or abs(have - want) > 1e-9:
            return f"band {c['band']!r} is not {c['phrase']!r}'s {want:g}"
        if e["value"].strip() and c["value"].strip() and abs(float(c["value"]) - float(e["value"])) > 1e-9:
            return f"value {c['value']} is not {c['phrase']!r}'s {e['value']}"
        return ""
    if not _blank(c["band"]):
        return f"{c['phrase']!r} is a bound: no band"
    if e["reading"] == "stated":
        return "" if c["comparison"] in ("at least", "at most") else f"{c['phrase']!r} is a bound, not {c['comparison']}"
    if c["unit"] == SHARE_LOST and c["comparison"] == "at least" and e["at_most"].strip():
        want = 1 - float(e["at_most"])      # losing at least half is keeping at most half
    else:
        side = {"at least": "at_least", "at most": "at_most"}.get(c["comparison"])
        if side is None or not e[side].strip():
            return f"{c['phrase']!r} has no {c['comparison']} threshold"
        want = float(e[side])
    if abs(float(c["value"]) - want) > 1e-9:
        return f"{c['comparison']} {c['value']} is not {c['phrase']!r}'s {want:g}"
    return ""


def _blank(x) -> bool:
    """An empty cell, as claims.csv has it (text) or as its loaded table does (NaN)."""
    return x is None or (isinstance(x, float) and math.isnan(x)) or str(x).strip() in ("", "nan")


def unused(phrases) -> list[str]:
    """The entries no claims row names."""
    return sorted(set(table().index) - set(phrases))


def reading_words(e) -> str:
    """An entry's reading as a reader reads it: 'about 1 +-10%', 'at least 2 / at most 0.5'."""
    if e["reading"] == "about":
        around = f"about {e['value']}" if e["value"].strip() else "about the number"
        band = "by its digits (at least +-10%)" if e["band"] == DIGITS else f"+-{float(e['band']):.0%}"
        return f"{around} {band}"
    if e["reading"] == "stated":
        return "the threshold the words state"
    sides = [f"at least {e['at_least']}" if e["at_least"].strip() else "",
             f"at most {e['at_most']}" if e["at_most"].strip() else ""]
    return " / ".join(s for s in sides if s)


def _entry(phrase: str, column: str) -> float:
    e = table().loc[phrase] if phrase in table().index else None
    if e is None or _blank(e[column]) or e[column] == DIGITS:
        raise KeyError(f"lexicon.csv: {phrase!r} has no {column}")
    return float(e[column])


def rises(phrase: str) -> float:
    """The ratio a rise must reach for ``phrase`` to say it (a bound's ``at_least``: "a change",
    the documents' "faster" or "more", 1.1): the line a chapter's own sentence in the same words
    is checked at too."""
    return _entry(phrase, "at_least")


def falls(phrase: str) -> float:
    """The ratio a fall must reach for ``phrase`` to say it (a bound's ``at_most``: "a change",
    "slower" as a speed or "fewer", 0.9)."""
    return _entry(phrase, "at_most")


def about(phrase: str) -> float:
    """The relative band of an *about* phrase ("the same": 0.10): within value x (1 +- band)."""
    return _entry(phrase, "band")


def summary(claims_table: pd.DataFrame) -> pd.DataFrame:
    """One line a phrase: its words, how it reads, the rows (and controls) that use it, and the
    documents'; what the documents themselves attach to it."""
    rows = []
    for phrase, e in table().iterrows():
        g = claims_table[claims_table["phrase"] == phrase]
        rows.append({"phrase": phrase, "the documents' words": e["words"], "reading": reading_words(e),
                     "rows": int((g["role"] != "control").sum()), "controls": int((g["role"] == "control").sum()),
                     "documents": ", ".join(sorted(set(g["document"]))),
                     "numbers the documents attach": e["document_numbers"]})
    return pd.DataFrame(rows)
