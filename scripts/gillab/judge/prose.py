"""Sentences about results that the data must bear out.

A chapter's prose about its own results is a list of :class:`Check`: the sentence, whether the
data shown bear it out, and the evidence (numbers computed from the same data).  A sentence the
data still bear out is printed with its evidence; one they no longer bear out (a reader's rerun
on another machine, or new reference data) is struck through and marked "no longer true on this
run", with the evidence; one whose interval reaches across it (or with too few runs for an interval)
is marked "not shown by this run", never struck and never stated as found.  Missing data is not
a contradiction: a sentence that does not hold because a number it rests on was not measured in
this run (a point or build the profile's grid leaves out: a NaN in its evidence) is marked "not
measured in this run", with how to measure it, never struck.  The test suite runs every chapter's
checks on the committed reference data and fails if any of them is false there.
"""
from __future__ import annotations

import functools
import math
import re
import string
from dataclasses import dataclass


@dataclass(frozen=True)
class Check:
    text: str          # the sentence, Markdown
    holds: bool        # whether the data bear it out
    evidence: str      # the numbers behind it, computed from the data
    why: str = ""      # what explains it (not a measurement: the mechanism, the setup)
    open: bool = False  # neither borne out nor contradicted: an interval reaches across the sentence's
                        # boundary, or too few runs for one (never struck; ``holds`` is then False)
    key: str = ""      # its words' key in the chapter's text (:class:`Words`): what names the sentence,
                       # however it is worded (the first screen picks its findings by it)
    open_why: str = ""  # why it is open where more runs cannot settle it (a setting not in force), in
                        # place of :data:`WHY_NOT_SHOWN`


# The words of a chapter's checked sentences live in its text (notebooks/NN_<name>.md), in one
# cell hidden from the book that starts with WORDS_MARK: a definition list, each term a key in
# backticks, each definition the words (wrapped lines, joined with single spaces).  Words may hold
# named slots, ``{name}``, that the chapter's code fills with what it computed (:meth:`Words.fill`);
# ``{{`` and ``}}`` are a brace.
WORDS_MARK = "**Words of the checked sentences**"
_TERM = re.compile(r"^`([a-z0-9-]+)`$")
_CELL_END = re.compile(r"^(\+\+\+|```\{code-cell\}|#)")


class Words(dict):
    """A chapter's words by key; a key its text lacks is an error naming the text."""

    def __init__(self, where: str, entries: dict[str, str]):
        super().__init__(entries)
        self.where = where

    def __missing__(self, key: str) -> str:
        raise KeyError(f"{self.where} has no words for `{key}` in its cell starting {WORDS_MARK}")

    def slots(self, key: str) -> set[str]:
        """The named slots of ``key``'s words."""
        return {name for _, name, _, _ in string.Formatter().parse(self[key]) if name is not None}

    def fill(self, key: str, **values) -> str:
        """``key``'s words with each named slot filled from ``values`` (already formatted: the
        code computes, the text words).  A slot without a value, or a value without a slot, is an
        error naming the text and the key: a reworded sentence cannot silently drop a number."""
        named = self.slots(key)
        if named != set(values):
            lacking, extra = sorted(named - set(values)), sorted(set(values) - named)
            raise KeyError(f"{self.where}: the words of `{key}` " + "; ".join(
                part for part in (f"have slots no value fills: {lacking}" if lacking else "",
                                  f"lack slots for: {extra}" if extra else "") if part))
        return self[key].format(**{k: str(v) for k, v in values.items()})

    def check(self, key: str, outcome: dict, evidence: str, why: str = "", **values) -> Check:
        """The :class:`Check` of the sentence ``key``: its words filled (:meth:`fill`), its
        ``outcome`` (``holds`` and ``open``: :func:`settle`, :func:`together`), its evidence and the
        words of what explains it (``why``, already filled)."""
        return Check(self.fill(key, **values), evidence=evidence, why=why, key=key, **outcome)


def words(experiment: str) -> Words:
    """The words of ``experiment``'s checked sentences, read from its chapter's text when asked (an
    edit of the text shows in the next run, no Python changed): ``{key: words}``."""
    from ..measure import experiments
    from ..paths import notebooks_dir

    path = notebooks_dir() / experiments.notebook(experiment)
    return Words(f"notebooks/{path.name}", parse_words(path.read_text(), f"notebooks/{path.name}"))


@functools.lru_cache(maxsize=64)
def parse_words(text: str, where: str = "the text") -> dict[str, str]:
    """The definition list of the cell that starts with :data:`WORDS_MARK` (none: empty)."""
    lines = text.split("\n")
    try:
        start = next(i for i, line in enumerate(lines) if line.startswith(WORDS_MARK))
    except StopIteration:
        return {}
    out: dict[str, str] = {}
    key = None
    for line in lines[start + 1:]:
        if _CELL_END.match(line):
            break
        term = _TERM.match(line)
        if term:
            key = term.group(1)
            if key in out:
                raise ValueError(f"{where}: `{key}` has words twice")
            out[key] = ""
        elif key is not None and line.startswith((": ", "  ")) and line.strip():
            out[key] = (out[key] + " " + line[2:].strip()).strip()
        elif not line.strip():
            key = None if key is None or out[key] else key
    empty = [k for k, v in out.items() if not v]
    if empty:
        raise ValueError(f"{where}: no words for " + ", ".join(f"`{k}`" for k in empty))
    return out


NOT_TRUE = "No longer true on this run"
NOT_MEASURED = "Not measured in this run"
NOT_SHOWN = "Inconclusive on these runs"  # the verdicts' word for an interval that does not settle
WHY_NOT_SHOWN = ("an interval reaches across what the sentence says, or the runs are too few for a 95% interval: "
                 "more runs (the `verdicts` profile) can settle it")
HOW_TO_MEASURE = ("a number shown as nan was not measured: the profile's grid leaves that build or point out; "
                  "`-p full_grid=all` in the rerun command below measures every build at every point")
_NAN = re.compile(r"(?<![\w.])nan(?!\w)")


def missing(c: Check) -> bool:
    """Whether a number the sentence rests on was not measured (a NaN in its evidence)."""
    return bool(_NAN.search(c.evidence))


_FEW = re.compile(r"\bn = [01]\b")


def too_few(c: Check) -> bool:
    """Whether a number the sentence rests on stands on fewer than two runs (``n = 0`` or
    ``n = 1`` in its evidence): no 95% interval, so not a finding for the first screen."""
    return bool(_FEW.search(c.evidence))


def ok_rows(df):
    """The samples that measured something (a synthetic frame without a status: all of them)."""
    return df[df["status"] == "ok"] if "status" in df else df


def gil_by_condition(df) -> dict:
    """condition -> whether its GIL was on at run time in every sample (as each sample recorded)."""
    return ok_rows(df).groupby("condition")["gil_enabled"].apply(
        lambda v: bool(v.fillna(False).astype(bool).all())).to_dict()


def measured(pairs: dict) -> dict:
    """The entries of ``pairs`` (key -> values) whose every value was measured, not NaN: where a
    profile's small grid leaves a build out at a point, a sentence about "every build" reads the
    builds measured there."""
    import math

    return {k: v for k, v in pairs.items() if not any(map(math.isnan, v))}


def method_n(m: dict) -> tuple[str, object]:
    """An interval's estimand and n, from a :mod:`gillab.stats` result (``method``; a ratio of
    medians' ``n_num`` / ``n_den``) or a verdict row's entry (``estimand``, ``n_each``)."""
    from .. import stats

    method = m.get("method") or m.get("estimand") or stats.MEDIAN
    if method == stats.RATIO and "n_num" in m:
        return method, (m["n_num"], m["n_den"])
    return method, m.get("n_each", m.get("n"))


def interval(m: dict, spec: str = ".2f", unit: str = "", n: bool = True) -> str:
    """An estimate as a sentence's evidence prints it: ``1.25 [1.19, 1.31], n = 7 pairs`` (without
    n when ``n`` is false: :func:`each_n` says it once), or where its runs are too few for a 95%
    interval, ``1.25 (n = 1: too few runs for a 95% interval)`` (:func:`gillab.stats.bracket`).
    ``m``: a :mod:`gillab.stats` result or a verdict row's entry (its ``median``, else its ``ratio``)."""
    from .. import stats

    method, k = method_n(m)
    value = m["median"] if "median" in m else m["ratio"]
    text = f"{value:{spec}}{unit} {stats.bracket(m['ci_lo'], m['ci_hi'], k, method, spec)}"
    return text + (f", n = {stats._n_words(method, k)}" if n and stats.conclusive(method, k) else "")


def each_n(intervals) -> str:
    """``n = 7 pairs each`` where every one of ``intervals`` is a 95% interval of one estimand over
    the same n (the evidence then says it once, and :func:`interval` leaves it out), else ''."""
    from .. import stats

    seen = {(method, tuple(k) if isinstance(k, (list, tuple)) else k) for method, k in map(method_n, intervals)}
    if len(seen) != 1:
        return ""
    method, k = seen.pop()
    return f"n = {stats._n_words(method, k)} each" if stats.conclusive(method, k) else ""


def listed(head: str, items, spec: str = ".2f", unit: str = "") -> str:
    """A sentence's evidence over several estimates: ``head, n = 7 pairs each: a 1.00 [0.82, 1.11];
    b ...`` (n said once where every interval shares it, else with each: :func:`interval`).
    ``items``: (label, estimate) or (label, estimate, words after it)."""
    items = [(it[0], it[1], it[2] if len(it) > 2 else "") for it in items]
    each = each_n([m for _, m, _ in items]) if len(items) > 1 else ""
    return (f"{head}, {each}: " if each else f"{head}: ") + "; ".join(
        f"{label} {interval(m, spec, unit, n=not each)}{after}" for label, m, after in items)


def inverted(m: dict) -> dict:
    """The same estimate read the other way round (b / a for a / b): its median and interval
    inverted, its n and estimand kept, so that a sentence stated as a speed-up reads the
    verdicts' time ratio."""
    def inv(x):
        return 1 / x if x else math.inf

    out = dict(m)
    for key in ("median", "ratio"):
        if key in m:
            out[key] = inv(m[key])
    out["ci_lo"], out["ci_hi"] = inv(m["ci_hi"]), inv(m["ci_lo"])
    return out


def settle(intervals, says, against) -> dict:
    """Whether a sentence about every one of ``intervals`` holds, is contradicted or is left open,
    as :class:`Check`'s ``holds`` and ``open``: it holds only when every interval is a 95% one
    (enough runs, :func:`gillab.stats.conclusive`) and lies wholly where the sentence says
    (``says(lo, hi)``); it is contradicted when some 95% interval lies wholly on the other side
    (``against(lo, hi)``); otherwise (an interval reaches across, or the runs are too few) it is
    open.  No intervals: neither."""
    from .. import stats

    ms = list(intervals)
    full = [stats.conclusive(*method_n(m)) for m in ms]
    holds = bool(ms) and all(full) and all(says(m["ci_lo"], m["ci_hi"]) for m in ms)
    contradicted = any(f and against(m["ci_lo"], m["ci_hi"]) for f, m in zip(full, ms))
    return {"holds": holds, "open": bool(ms) and not holds and not contradicted}


def at_least(intervals, line: float) -> dict:
    """:func:`settle` for "every one is at least ``line``", read as a claim's *at least* is
    (:func:`gillab.judge.claims.compare`): holds where every interval starts at or above it,
    contradicted where one ends below it."""
    return settle(intervals, lambda lo, hi: lo >= line, lambda lo, hi: hi < line)


def at_most(intervals, line: float) -> dict:
    """:func:`settle` for "every one is at most ``line``" (a claim's *at most*)."""
    return settle(intervals, lambda lo, hi: hi <= line, lambda lo, hi: lo > line)


def within(intervals, low: float, high: float) -> dict:
    """:func:`settle` for "every one lies in [``low``, ``high``]" (a claim's *about*, or
    :func:`gillab.judge.claims.line`'s band): contradicted where one lies wholly outside."""
    return settle(intervals, lambda lo, hi: low <= lo and hi <= high, lambda lo, hi: hi < low or lo > high)


def together(*parts: dict) -> dict:
    """One sentence's :func:`settle` outcome from its parts' (a sentence that says two things):
    it holds when every part holds, is contradicted when one part is, and is open otherwise."""
    holds = all(p["holds"] for p in parts)
    contradicted = any(not p["holds"] and not p["open"] for p in parts)
    return {"holds": holds, "open": not holds and not contradicted}


def state(c: Check) -> str:
    """What the data say of the sentence: ``"holds"``, ``"not measured"`` (a number it rests on
    is NaN), ``"not shown"`` (:attr:`Check.open`) or ``"not true"``."""
    if c.holds:
        return "holds"
    if missing(c):
        return "not measured"
    return "not shown" if c.open else "not true"


def markdown(checks: list[Check]) -> str:
    """One bullet per check: the sentence and its evidence; one the data do not bear out struck
    through (as HTML ``<del>``, which the book's Markdown and Jupyter both render, where ``~~``
    would print as tildes) and marked, unless a number it rests on was not measured or its
    interval does not settle it (then marked so, unstruck)."""
    if not checks:
        return ""

    def ended(text: str) -> str:      # a sentence followed by a bold mark ends first
        return text if text.rstrip("*_ ").endswith((".", ":", "!", "?")) else text + "."

    def begun(text: str) -> str:      # evidence that follows a finished sentence starts one
        return text[:1].upper() + text[1:] if text[:1].islower() else text

    lines = []
    for c in checks:
        tail = f" {c.why}" if c.why else ""
        which = state(c)
        if which == "holds":
            lines.append(f"- {c.text} ({c.evidence}).{tail}")
        elif which == "not measured":
            lines.append(f"- {ended(c.text)} **{NOT_MEASURED}:** {c.evidence} ({HOW_TO_MEASURE}).")
        elif which == "not shown":
            lines.append(f'- **{NOT_SHOWN}:** <span class="gillab-open" style="color: #666">{ended(c.text)}</span> '
                         f"{begun(c.evidence)} ({c.open_why or WHY_NOT_SHOWN}).")
        else:
            lines.append(f'- <del class="gillab-struck">{ended(c.text)}</del> **{NOT_TRUE}:** {begun(c.evidence)}. '
                         "*(Struck: the data shown on this page contradict it.)*")
    return "\n".join(lines)


def cores_of(df, experiment: str) -> int | None:
    """The number of CPUs of the machine that measured ``df`` (its runs' machine record), not of
    the machine reading it."""
    from . import results

    try:
        counts = {r["machine"].get("cpu_count") for r in results.runs(experiment, df.attrs.get("campaign"))}
    except Exception:   # no run files (a synthetic frame): unknown
        return None
    counts.discard(None)
    return counts.pop() if len(counts) == 1 else None
